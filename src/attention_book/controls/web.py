"""The controls layer, browser form: a lab that computes its state in the reader's browser.

A scene with ``web="<module>"`` has its state function in
``attention_book/web/src/labs/<module>.js`` too: an ES module, checked against the Python
one in ``tests/test_web_*.py`` and bundled by ``web/build.mjs`` with what it imports into
the classic script ``web/<module>.js``. In the built book its lab is a :class:`BrowserLab`:
an element holding the lab's declaration as JSON, derived here from the scene's controls
(name, label, kind, every value the live lab accepts, default, hint, ``active_when`` when it
is a :class:`~attention_book.scenes.core.Condition`), which ``web/lab.js`` turns into HTML
controls and a canvas it draws on. Every control offers the live lab's full range, not a
sample of it.

Without JavaScript the element shows the default state's alt text and readout (no picture,
no controls), as the lab's module presents them: :func:`present` runs its bundle in Node.js
on the Python state (the readout and alt text are written once, in the module). The
scripts the lab needs (the front end ``lab.js``, the data scripts the build writes,
:mod:`attention_book.web_export`, the bundles of the labs it imports, its own: the order
:func:`registry` gives) are named in ``data-ab-scripts``; the
book's Sphinx extension serves them from ``_static/ab-web`` and adds them to the pages that
name them. :func:`standalone_html` inlines them instead, for a page outside the book (tests,
benchmarks).
"""

from __future__ import annotations

import base64
import hashlib
import html
import itertools
import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from ..bundles import WEB_DIR, registry
from ..scenes.core import Condition, Scene, to_js

__all__ = ["WEB_DIR", "BrowserLab", "declaration", "present", "standalone_html"]

_IDS = itertools.count(1)


def _scripts(web: str) -> tuple[str, ...]:
    """The files of ``web/`` (or data scripts) a page loads for lab module ``web``, in order."""
    return tuple(registry()[web]["scripts"])


def _range(values: tuple):
    """``[first, last, step]`` if ``values`` are whole numbers evenly spaced, else None."""
    if len(values) < 3 or not all(isinstance(v, int) and not isinstance(v, bool)
                                  for v in values):
        return None
    step = values[1] - values[0]
    if step <= 0 or any(b - a != step for a, b in zip(values, values[1:])):
        return None
    return [values[0], values[-1], step]


def _control(c, start=None) -> dict:
    """Control ``c`` as data; it starts at ``start`` (default: its default)."""
    if c.active_when is not None and not isinstance(c.active_when, Condition):
        raise ValueError(f"control {c.name!r}: active_when must be a Condition (when(), "
                         "compare()) for the browser to evaluate it")
    out = {"name": c.name, "label": c.label, "kind": c.kind,
           "default": c.default if start is None else start, "hint": c.hint}
    if c.kind == "text":
        out["placeholder"] = c.placeholder
        out["suggestions"] = list(c.suggestions)  # offered as the reader types; any text goes
    else:
        values = list(c.values)
        out["values"] = values
        labels = [label for label, _ in c.options]
        out["labels"] = None if labels == [str(v) for v in values] else labels
        out["range"] = (_range(tuple(values)) if out["labels"] is None and c.kind == "slider"
                        else None)
        if out["range"] is not None:
            del out["values"]  # first, last, step say it all (s: 1..512)
        if c.kind == "multi":
            out["default"] = list(out["default"])
    if c.options_for is not None:
        # the choices follow other controls: the state module's choices(name, values)
        # offers them in the page, as options_for(values) does in the live lab
        out["dependent"] = True
    if isinstance(c.active_when, Condition):
        out["active_when"] = {"name": c.active_when.name, "op": c.active_when.op,
                              "value": c.active_when.value}
    return out


def declaration(scene: Scene, start: Mapping | None = None) -> dict:
    """The lab as data for ``web/lab.js``: its controls (all values) and the state module;
    each control's ``default`` is where it starts, ``start``'s value if given (a chapter's
    ``lab(name, **values)``)."""
    if not scene.web:
        raise ValueError(f"scene {scene.name!r} has no browser state function (Scene.web)")
    start = start or {}
    return {"name": scene.name, "module": scene.web, "title": scene.title,
            "controls": [_control(c, start.get(c.name)) for c in scene.controls]}


def _wire(value):
    """:func:`~attention_book.scenes.core.to_js`'s value as JSON: each binary buffer as base64."""
    if isinstance(value, dict):
        if "$array" in value:
            return {**value, "buffer": base64.b64encode(value["buffer"]).decode()}
        return {k: _wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_wire(v) for v in value]
    return value


def present(scene: Scene, states) -> list[dict]:
    """How the lab's browser module presents each of ``states`` (the scene's Python states):
    ``{"alt": text, "readout": HTML}``, as the live lab shows them. The module's bundle
    (``web/<scene.web>.js``) runs in Node.js (``web/present.cjs``) on each state as
    :func:`~attention_book.scenes.core.to_js` sends it: the readout and alt text are written
    once, in the module, and the built book's ``<noscript>`` shows them too."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH: a lab's alt text and readout are written by "
                           "its browser module, which the book's build runs in Node.js")
    sent = json.dumps([_wire(to_js(state)) for state in states])
    bundles = [name for name in _scripts(scene.web) if (WEB_DIR / name).exists()]
    # present.cjs reads local files only: no TLS, so not the extra CA certificates Node would
    # read and parse at each start where NODE_EXTRA_CA_CERTS is set (0.14 -> 0.06 s of CPU a
    # call on the CI machines, which set it for npm)
    env = {k: v for k, v in os.environ.items() if k != "NODE_EXTRA_CA_CERTS"}
    out = subprocess.run([node, str(WEB_DIR / "present.cjs"), *bundles], input=sent,
                         capture_output=True, text=True, timeout=600, env=env)
    if out.returncode:
        raise RuntimeError(f"{scene.web}.js could not present a state of {scene.name}:\n"
                           + out.stderr[-2000:])
    return json.loads(out.stdout)


def _script_json(obj) -> str:
    """JSON safe inside a <script>: no "<", ">" or "&" (so no "</script" or "<!--")."""
    text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class BrowserLab:
    """A lab computed in the reader's browser. :meth:`_repr_html_` returns its element."""

    def __init__(self, scene: Scene,
                 note: str = "Computed in your browser: every value the live lab offers.",
                 **values):
        self.scene = scene
        #: where the lab starts: the scene's defaults with ``values`` (checked as the live
        #: lab checks them: a value a control does not offer raises ValueError)
        self.values = scene.values(**values)
        self.declaration = declaration(scene, values and self.values)
        self.note = note
        digest = hashlib.sha256(_script_json(self.declaration).encode()).hexdigest()[:10]
        self.id = f"ab-lab-{next(_IDS)}-{digest}"
        self._html: str | None = None

    @property
    def scripts(self) -> tuple[str, ...]:
        """The files of ``web/`` the page loads, in order."""
        return _scripts(self.scene.web)

    def reachable(self, values: Mapping) -> bool:
        """Whether the lab can show ``values`` (some controls' values): every value the
        scene's controls accept."""
        try:
            self.scene.values(**values)
        except ValueError:
            return False
        return True

    def __repr__(self) -> str:
        return f"<BrowserLab {self.id}: {self.scene.name}, computed by {self.scene.web}.js>"

    def _repr_html_(self) -> str:
        if self._html is not None:
            return self._html
        shown = present(self.scene, [self.scene.compute(self.values)])[0]
        title = html.escape(self.scene.title)
        # the declaration, and for a reader without JavaScript what the figure shows, in
        # words; web/lab.js builds the lab's skeleton (title, note, controls, figure, readout)
        self._html = (
            f'<div class="ab-lab" id="{self.id}" '
            f'data-ab-lab="{html.escape(self.scene.name)}" '
            f'data-ab-scripts="{" ".join(self.scripts)}">'
            f'<noscript><div class="ab-lab-title">{title}</div>'
            f'<div class="ab-lab-figure"><p class="ab-lab-alt">{html.escape(shown["alt"])}</p></div>'
            f'<div class="ab-lab-readout" id="{self.id}-caption">{shown["readout"]}</div></noscript>'
            f'<script type="application/json" class="ab-lab-data">'
            f"{_script_json({**self.declaration, 'note': self.note})}</script></div>")
        return self._html


def standalone_html(lab: BrowserLab, title: str = "lab", data: Path | None = None) -> str:
    """A whole page with ``lab`` and its scripts inlined (no file or network to fetch); the
    data scripts a lab reads (:data:`attention_book.web_export.DATA`) are taken from the
    folder ``data``, where :func:`attention_book.web_export.write_data` wrote them (a large
    one that the page loads on request, such as MiniLM's weights, is not inlined)."""
    def source(name: str) -> str:
        path = WEB_DIR / name
        if not path.exists():
            if data is None:
                raise ValueError(f"{lab.scene.name}: {name} is made by web_export.write_data(); "
                                 "give its folder as data=")
            path = data / name
        return path.read_text(encoding="utf-8")

    scripts = "".join(f"<script>{source(name)}</script>" for name in lab.scripts)
    style = (WEB_DIR / "lab.css").read_text(encoding="utf-8")
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title><style>{style}</style></head><body>"
            f"{lab._repr_html_()}{scripts}</body></html>")
