"""The controls layer, static form: kernel-free explorers for the built HTML book.

The built book has no kernel, so a live widget would be an inert control there. Instead a
chapter shows an :class:`Explorer`: real HTML controls (``<select>``, ``<input
type="range">``), an image and a caption, and a few lines of inline JavaScript that swap
the image, its alt text and the caption among states precomputed at build time. The
states come from the same pure state function and the same pictures-layer view as the
live lab (one figure, built once, updated and saved per state), so the two forms cannot
disagree.

A chapter cell picks the form::

    from attention_book.widgets import embedding_widget
    from attention_book.explorer import embedding_explorer, interactive
    interactive(embedding_widget, embedding_explorer)

which returns the explorer while ``jupyter-book build`` runs (the book's Sphinx extension
sets ``ATTENTION_BOOK_STATIC=1``) and the live widget otherwise, so a reader's notebook
never pays for the precomputation.

The HTML is self-contained (PNG images as data: URLs, no external resource, no ``eval``),
every text is escaped, and element ids are unique per explorer, so several explorers can
share a page. Without JavaScript the controls stay hidden and the first state is shown.
"""

from __future__ import annotations

import base64
import hashlib
import html
import itertools
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass


__all__ = [
    "STATIC_ENV_VAR",
    "is_static_build",
    "interactive",
    "Choice",
    "Slider",
    "Frame",
    "Explorer",
]

#: The environment variable the book's Sphinx extension sets to "1" during a build.
STATIC_ENV_VAR = "ATTENTION_BOOK_STATIC"

def is_static_build() -> bool:
    """True while the static HTML book is being built (``ATTENTION_BOOK_STATIC=1``)."""
    return os.environ.get(STATIC_ENV_VAR) == "1"


def interactive(make_widget: Callable, make_explorer: Callable, /, **kwargs):
    """The live widget in a notebook, the kernel-free explorer in the built book.

    Parameters
    ----------
    make_widget : callable
        Called as ``make_widget(**kwargs)`` in a live notebook.
    make_explorer : callable
        Called as ``make_explorer()`` during a static build (:func:`is_static_build`).
    **kwargs
        Passed to ``make_widget``.

    Returns
    -------
    ipywidgets.Widget or Explorer
        Not displayed: make it the last expression of a cell.
    """
    if is_static_build():
        return make_explorer()
    return make_widget(**kwargs)


@dataclass(frozen=True)
class Choice:
    """A drop-down (``<select>``) control.

    Parameters
    ----------
    name : str
        The key of the value in the dict passed to the render function.
    label : str
        The visible label.
    options : sequence of (label, value)
        The choices, in order.
    default : object, optional
        The value selected first (by default the first option's).
    """

    name: str
    label: str
    options: tuple
    default: object = None

    def __post_init__(self):
        object.__setattr__(self, "options", tuple((str(a), b) for a, b in self.options))

    @property
    def values(self) -> tuple:
        return tuple(value for _, value in self.options)

    @property
    def labels(self) -> tuple:
        return tuple(label for label, _ in self.options)


@dataclass(frozen=True)
class Slider:
    """A slider (``<input type="range">`` with an ``<output>`` showing the value) over a
    list of values, which need not be evenly spaced.

    Parameters
    ----------
    name : str
        The key of the value in the dict passed to the render function.
    label : str
        The visible label.
    values : sequence
        The values, in slider order; ``str(value)`` is shown.
    default : object, optional
        The value selected first (by default the first).
    """

    name: str
    label: str
    values: tuple
    default: object = None

    def __post_init__(self):
        object.__setattr__(self, "values", tuple(self.values))

    @property
    def labels(self) -> tuple:
        return tuple(str(v) for v in self.values)


@dataclass(frozen=True)
class Frame:
    """One precomputed state: a PNG, its alt text (plain text) and a caption (HTML whose
    every reader-supplied text is already escaped)."""

    png: bytes
    alt: str
    caption_html: str


_IDS = itertools.count(1)


def _default_index(control) -> int:
    if control.default is None:
        return 0
    try:
        return list(control.values).index(control.default)
    except ValueError:
        raise ValueError(f"{control.name}: default {control.default!r} is not one of "
                         f"{list(control.values)}") from None


def _script_json(obj) -> str:
    """JSON safe inside a <script>: no "<", ">" or "&" (so no "</script" or "<!--")."""
    text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


_SCRIPT = """(function () {
  var id = %(id)s, data = %(data)s;
  var root = document.getElementById(id);
  if (!root) { return; }
  var img = document.getElementById(id + "-img");
  var caption = document.getElementById(id + "-caption");
  var inputs = [];
  for (var i = 0; i < data.labels.length; i++) {
    inputs.push(document.getElementById(id + "-c" + i));
  }
  function show() {
    var key = [];
    for (var i = 0; i < inputs.length; i++) {
      var k = parseInt(inputs[i].value, 10);
      key.push(k);
      var out = document.getElementById(inputs[i].id + "-out");
      if (out) {
        out.textContent = data.labels[i][k];
        inputs[i].setAttribute("aria-valuetext", data.labels[i][k]);
      }
    }
    var frame = data.frames[key.join(",")];
    if (frame) { img.src = frame[0]; img.alt = frame[1]; caption.innerHTML = frame[2]; }
  }
  for (var j = 0; j < inputs.length; j++) {
    inputs[j].addEventListener("input", show);
    inputs[j].addEventListener("change", show);
  }
  document.getElementById(id + "-controls").hidden = false;
  show();
})();"""


class Explorer:
    """A kernel-free explorer: HTML controls switching among precomputed states.

    Every combination of the controls' values is rendered once, at construction, by
    ``render``; :meth:`_repr_html_` returns self-contained HTML (controls, image, caption,
    inline script) that a notebook or the built book shows.

    Parameters
    ----------
    controls : sequence of Choice or Slider
        The controls, in display order; their names must be distinct.
    render : callable
        ``render(values) -> (png_bytes, alt_text, caption_html)`` (or a :class:`Frame`),
        where ``values`` maps each control's name to a value. ``caption_html`` must
        already be escaped; ``alt_text`` is plain text.
    title : str, optional
        A heading (plain text).
    note : str, optional
        A line under the heading (plain text); by default it says that the states are
        precomputed and the notebook has the live widget.

    Attributes
    ----------
    id : str
        The explorer's element id: unique per explorer in a process, deterministic for a
        given notebook run (a counter and a hash of the content).
    frames : dict of tuple of int to Frame
        The states, keyed by the index of each control's value.
    """

    def __init__(self, controls: Sequence, render: Callable, *, title: str = "",
                 note: str | None = None):
        self.controls = tuple(controls)
        if not self.controls:
            raise ValueError("an explorer needs at least one control")
        names = [c.name for c in self.controls]
        if len(set(names)) != len(names):
            raise ValueError(f"control names must be distinct, got {names}")
        for control in self.controls:
            if not isinstance(control, (Choice, Slider)):
                raise ValueError(f"controls must be Choice or Slider, got {control!r}")
            if not control.values:
                raise ValueError(f"control {control.name!r} has no values")
        self.title = title
        self.note = (note if note is not None else
                     "Precomputed pictures: move a control to switch between them. "
                     "Run this chapter as a notebook for the live widget.")
        self.initial = tuple(_default_index(c) for c in self.controls)
        self.frames: dict[tuple, Frame] = {}
        for index in itertools.product(*(range(len(c.values)) for c in self.controls)):
            values = {c.name: c.values[k] for c, k in zip(self.controls, index)}
            frame = render(values)
            if not isinstance(frame, Frame):
                frame = Frame(*frame)
            self.frames[index] = frame
        digest = hashlib.sha256()
        for index, frame in self.frames.items():
            digest.update(repr(index).encode())
            digest.update(frame.png)
            digest.update(frame.alt.encode())
            digest.update(frame.caption_html.encode())
        self.id = f"ab-explorer-{next(_IDS)}-{digest.hexdigest()[:10]}"
        self._html: str | None = None

    def __len__(self) -> int:
        return len(self.frames)

    def __repr__(self) -> str:
        names = " x ".join(f"{c.name} ({len(c.values)})" for c in self.controls)
        return f"<Explorer {self.id}: {len(self)} precomputed states, {names}>"

    def _control_html(self, i: int, control) -> str:
        cid = f"{self.id}-c{i}"
        label = f'<label for="{cid}" style="margin-right:6px">{html.escape(control.label)}</label>'
        k0 = self.initial[i]
        if isinstance(control, Choice):
            options = "".join(
                f'<option value="{k}"{" selected" if k == k0 else ""}>{html.escape(text)}'
                "</option>" for k, text in enumerate(control.labels))
            return (f"<span style=\"max-width:100%\">{label}<select id=\"{cid}\" "
                    f"name=\"{html.escape(control.name)}\" "
                    f"style=\"width:auto;max-width:100%\">{options}</select></span>")
        text = html.escape(control.labels[k0])
        return (f"<span>{label}<input type=\"range\" id=\"{cid}\" "
                f"name=\"{html.escape(control.name)}\" min=\"0\" "
                f"max=\"{len(control.values) - 1}\" step=\"1\" value=\"{k0}\" "
                f"aria-valuetext=\"{text}\" style=\"vertical-align:middle\"> "
                f"<output id=\"{cid}-out\" for=\"{cid}\" style=\"font-family:monospace\">"
                f"{text}</output></span>")

    def _repr_html_(self) -> str:
        if self._html is not None:
            return self._html
        first = self.frames[self.initial]
        data = {
            "labels": [list(c.labels) for c in self.controls],
            "frames": {",".join(map(str, index)): [_data_url(f.png), f.alt, f.caption_html]
                       for index, f in self.frames.items()},
        }
        controls = "".join(self._control_html(i, c) for i, c in enumerate(self.controls))
        title = (f'<div class="ab-explorer-title" style="font-weight:bold">'
                 f"{html.escape(self.title)}</div>" if self.title else "")
        script = _SCRIPT % {"id": _script_json(self.id), "data": _script_json(data)}
        self._html = (
            f'<div class="ab-explorer" id="{self.id}" style="border:1px solid #bbb;'
            'border-radius:6px;padding:8px 10px;margin:8px 0;max-width:100%">'
            f"{title}"
            f'<div class="ab-explorer-note" style="font-size:90%;color:#444;margin:2px 0 6px">'
            f"{html.escape(self.note)}</div>"
            # hidden until the script runs (a wrapper, as an inline display would
            # override the hidden attribute): without JavaScript no control is inert
            f'<div class="ab-explorer-controls" id="{self.id}-controls" hidden>'
            '<div style="display:flex;flex-wrap:wrap;gap:6px 24px;align-items:center;'
            f'margin-bottom:6px">{controls}</div></div>'
            f'<img id="{self.id}-img" src="{_data_url(first.png)}" '
            f'alt="{html.escape(first.alt)}" style="max-width:100%;height:auto;display:block">'
            f'<div class="ab-explorer-caption" id="{self.id}-caption" aria-live="polite">'
            f"{first.caption_html}</div>"
            f"<script>{script}</script>"
            "</div>"
        )
        return self._html
