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
no controls). The scripts the lab needs (the front end ``lab.js``, the data scripts the
kernels write, the lab's bundle) are named in ``data-ab-scripts``; the book's Sphinx
extension serves them from ``_static/ab-web`` and adds them to the pages that name them.
:func:`standalone_html` inlines them instead, for a page outside the book (tests,
benchmarks).
"""

from __future__ import annotations

import hashlib
import html
import itertools
import json
import os
from collections.abc import Mapping
from pathlib import Path

from ..scenes.core import _NOTE_STYLE, Condition, Scene

__all__ = ["WEB_DIR", "DATA", "DATA_ENV", "BrowserLab", "declaration",
           "standalone_html", "write_data"]

#: The browser side: lab.js (the front end) and one bundle a lab (``make js`` builds them).
WEB_DIR = Path(__file__).resolve().parents[1] / "web"

_IDS = itertools.count(1)

#: The data scripts (of :data:`DATA`) a lab's page loads before the lab's bundle; the others
#: (MiniLM's weights) the lab loads when the reader asks.
_PAGE_DATA = {"pretrained": ("pretrained-gallery.js",),
              "training": ("training-checkpoints.js",),
              "generation": ("training-checkpoints.js",)}

#: Where the book's build has the kernels write the data scripts of :data:`DATA`
#: (``_build/web-data``; the Sphinx extension sets it and copies the folder beside web/).
DATA_ENV = "ATTENTION_BOOK_WEB_DATA"


def _pretrained_data(folder: Path) -> None:
    """Chapter 9: MiniLM's int8 weights (loaded only when the reader asks) and the preset
    sentences' maps with the tokenizer (the first view, before the model is loaded)."""
    from ..scenes.pretrained import MAX_PRETRAINED_TOKENS, PRETRAINED_PRESETS
    from ..web_export import export_browser_weights, export_pretrained_gallery

    weights = folder / "minilm-weights.js"
    export_browser_weights(weights, "int8")
    export_pretrained_gallery(folder / "pretrained-gallery.js", PRETRAINED_PRESETS,
                              weights_js=weights, max_tokens=MAX_PRETRAINED_TOKENS)


def _training_data(folder: Path) -> None:
    """Chapter 8: both tiny models' 26 checkpoints (5-bit changes from one to the next) and
    the curves the lab draws; the runs are the package's memoised ones, trained once."""
    from ..web_export import write_training_script

    write_training_script(folder / "training-checkpoints.js")


#: Labs whose state modules read data that the package computes (a model's weights, the
#: trained checkpoints): the web name -> (the scripts it writes, a function writing them
#: into a folder). Not in web/: they are made when the book is built.
DATA = {"pretrained": (("minilm-weights.js", "pretrained-gallery.js"), _pretrained_data),
        "training": (("training-checkpoints.js",), _training_data),
        "generation": (("training-checkpoints.js",), _training_data)}


_WRITTEN: set = set()  # (writer, folder) pairs this process has written


def write_data(web: str, folder: Path) -> tuple[Path, ...]:
    """Write the data scripts of state module ``web`` into ``folder``; return their paths.

    Once per process and folder: two labs that read the same scripts (``training`` and
    ``generation``, both in chapter 8) export them once, not twice.
    """
    names, writer = DATA.get(web, ((), None))
    paths = tuple(folder / name for name in names)
    done = (writer, Path(folder).resolve())
    if writer is not None and not (done in _WRITTEN and all(p.is_file() for p in paths)):
        folder.mkdir(parents=True, exist_ok=True)
        writer(folder)
        _WRITTEN.add(done)
    return paths


def _range(values: tuple):
    """``[first, last, step]`` if ``values`` are whole numbers evenly spaced, else None."""
    if len(values) < 3 or not all(isinstance(v, int) and not isinstance(v, bool)
                                  for v in values):
        return None
    step = values[1] - values[0]
    if step <= 0 or any(b - a != step for a, b in zip(values, values[1:])):
        return None
    return [values[0], values[-1], step]


def _control(c) -> dict:
    if c.active_when is not None and not isinstance(c.active_when, Condition):
        raise ValueError(f"control {c.name!r}: active_when must be a Condition (when(), "
                         "compare()) for the browser to evaluate it")
    out = {"name": c.name, "label": c.label, "kind": c.kind, "default": c.default,
           "hint": c.hint}
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
            out["default"] = list(c.default)
    if c.options_for is not None:
        # the choices follow other controls: the state module's choices(name, values)
        # offers them in the page, as options_for(values) does in the live lab
        out["dependent"] = True
    if isinstance(c.active_when, Condition):
        out["active_when"] = {"name": c.active_when.name, "op": c.active_when.op,
                              "value": c.active_when.value}
    return out


def declaration(scene: Scene) -> dict:
    """The lab as data for ``web/lab.js``: its controls (all values), the state module and
    the readout's note styles (as :func:`~attention_book.scenes.core.notes_html` has them)."""
    if not scene.web:
        raise ValueError(f"scene {scene.name!r} has no browser state function (Scene.web)")
    return {"name": scene.name, "module": scene.web, "title": scene.title,
            "controls": [_control(c) for c in scene.controls],
            "note_styles": {level: [html.unescape(style[0]), *style[1:]]
                            for level, style in _NOTE_STYLE.items()}}


def _script_json(obj) -> str:
    """JSON safe inside a <script>: no "<", ">" or "&" (so no "</script" or "<!--")."""
    text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class BrowserLab:
    """A lab computed in the reader's browser. :meth:`_repr_html_` returns its element."""

    def __init__(self, scene: Scene,
                 note: str = "Computed in your browser: every value the live lab offers."):
        self.scene = scene
        self.declaration = declaration(scene)
        self.note = note
        digest = hashlib.sha256(_script_json(self.declaration).encode()).hexdigest()[:10]
        self.id = f"ab-lab-{next(_IDS)}-{digest}"
        self._html: str | None = None

    @property
    def scripts(self) -> tuple[str, ...]:
        """The files of ``web/`` the page loads, in order."""
        web = self.scene.web
        return ("lab.js", *_PAGE_DATA.get(web, ()), f"{web}.js")

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
        if os.environ.get(DATA_ENV):  # the book's build: the data this lab reads, beside it
            write_data(self.scene.web, Path(os.environ[DATA_ENV]))
        state = self.scene.compute(self.scene.values())
        title = html.escape(self.scene.title)
        self._html = (
            f'<div class="ab-lab" id="{self.id}" '
            f'data-ab-lab="{html.escape(self.scene.name)}" '
            f'data-ab-scripts="{" ".join(self.scripts)}">'
            f'<div class="ab-lab-title">{title}</div>'
            f'<div class="ab-lab-note">{html.escape(self.note)}</div>'
            f'<div class="ab-lab-controls" id="{self.id}-controls" hidden>'
            '<div class="ab-lab-inputs"></div></div>'
            # without JavaScript: what the figure would show, in words
            f'<div class="ab-lab-figure"><noscript><p class="ab-lab-alt">'
            f"{html.escape(self.scene.alt(state))}</p></noscript></div>"
            f'<div class="ab-lab-readout" id="{self.id}-caption" aria-live="polite">'
            f"{self.scene.readout(state)}</div>"
            f'<script type="application/json" class="ab-lab-data">'
            f"{_script_json(self.declaration)}</script></div>")
        return self._html


def standalone_html(lab: BrowserLab, title: str = "lab", data: Path | None = None) -> str:
    """A whole page with ``lab`` and its scripts inlined (no file or network to fetch); the
    data scripts a lab reads (:data:`DATA`) are taken from the folder ``data``, where
    :func:`write_data` wrote them (a large one that the page loads on request, such as
    MiniLM's weights, is not inlined)."""
    def source(name: str) -> str:
        path = WEB_DIR / name
        if not path.exists():
            if data is None:
                raise ValueError(f"{lab.scene.name}: {name} is made by write_data(); "
                                 "give its folder as data=")
            path = data / name
        return path.read_text(encoding="utf-8")

    scripts = "".join(f"<script>{source(name)}</script>" for name in lab.scripts)
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title></head><body>"
            f"{lab._repr_html_()}{scripts}</body></html>")
