"""The controls layer, static form: kernel-free explorers for the built HTML book.

The built book has no kernel, so a live widget would be inert there. An :class:`Explorer`
has real HTML controls (one per scene preset and per control with several ``explore``
values), an image, a caption, and inline JavaScript that swaps among states precomputed by
the scene's state function and the live lab's view, so the two forms cannot disagree. The
HTML is self-contained (PNGs as data: URLs, each distinct one once, no ``eval``), escaped,
with ids unique per explorer; without JavaScript the controls stay hidden and the first
state is shown. Imports neither ipywidgets nor ipympl.
"""

from __future__ import annotations

import base64
import hashlib
import html
import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass

from ..plots.core import figure_png
from ..scenes.core import Scene

#: The resolution of explorer pictures: 72 dpi keeps nine chapters' states within the site's
#: 15 MB (at 80 dpi they alone were 8.9 MB); a view may set its own ``explorer_dpi``.
EXPLORER_DPI = 72

__all__ = ["EXPLORER_DPI", "Axis", "Frame", "Explorer", "explorer_axes", "explorer"]


@dataclass(frozen=True)
class Axis:
    """One HTML control of an explorer."""

    name: str
    label: str
    labels: tuple  # the visible label of each position
    # what each position sets: a dict of control values, or a function of the values set
    # so far returning one
    setters: tuple
    slider: bool = False  # a range input (else a drop-down)
    default: int = 0      # the position shown first
    hint: str = ""        # shown while the axis has no effect

    def values_for(self, k: int, values: Mapping) -> dict:
        setter = self.setters[k]
        return dict(setter(values) if callable(setter) else setter)


@dataclass(frozen=True)
class Frame:
    """One precomputed state: a PNG, its alt text (plain text), a caption (HTML with every
    reader-supplied text escaped), the values it shows, and the axes without effect."""

    png: bytes
    alt: str
    caption_html: str
    values: dict
    inactive: tuple = ()


def explorer_axes(scene: Scene, **explore) -> list[Axis]:
    """The HTML controls for ``scene``: presets first, then each control with more than one
    value to explore (``explore[name]`` replaces a control's own ``explore`` values)."""
    unknown = set(explore) - {c.name for c in scene.controls}
    if unknown:
        raise ValueError(f"{scene.name} has no control {sorted(unknown)[0]!r}")
    axes, preset_names = [], set()
    for preset in scene.presets:
        preset_names.update(*(preset.values_for(k, scene.defaults)
                              for k in range(len(preset.options))))
        axes.append(Axis(preset.name, preset.label, tuple(l for l, _ in preset.options),
                         tuple(s for _, s in preset.options), default=preset.default))
    for c in scene.controls:
        values = tuple(explore.get(c.name, c.explore))
        if c.name in preset_names or len(values) < 2:
            continue
        labels = tuple(v if c.kind == "text" else c.label_of(v) for v in values)
        default = values.index(c.default) if c.default in values else 0
        axes.append(Axis(c.name, c.label, labels, tuple({c.name: v} for v in values),
                         slider=c.kind == "slider", default=default, hint=c.hint))
    return axes


def explorer(scene: Scene, view, **explore) -> "Explorer":
    """The kernel-free explorer of ``scene``, each state drawn by ``view`` (``figure``,
    ``show(state)``, optional ``explorer_dpi`` (:data:`EXPLORER_DPI`) and ``palette``
    (True: 256-colour PNGs at zlib level 9, a fifth of the bytes of full colour; False
    keeps full colour)); ``explore[name]`` replaces a control's precomputed values."""
    axes = explorer_axes(scene, **explore)
    fixed = {name: values[0] for name, values in explore.items() if len(values) == 1}
    dpi, palette = getattr(view, "explorer_dpi", EXPLORER_DPI), getattr(view, "palette", True)

    def render(values) -> Frame:
        state = scene.compute(values)
        view.show(state)
        active = scene.active(values)
        # a control's own input is disabled where it has no effect; a preset, which sets
        # several values at once, always stays usable
        inactive = tuple(i for i, axis in enumerate(axes)
                         if axis.name in active and not active[axis.name])
        png = figure_png(view.figure, dpi=dpi, palette=palette, compress_level=9)
        return Frame(png, scene.alt(state), scene.readout(state), dict(values), inactive)

    return Explorer(axes, render, base={**scene.defaults, **fixed}, title=scene.title)


_IDS = itertools.count(1)


def _script_json(obj) -> str:
    """JSON safe inside a <script>: no "<", ">" or "&" (so no "</script" or "<!--")."""
    text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


_SCRIPT = """(function () {
  var id = %(id)s, data = %(data)s;
  if (!document.getElementById(id)) { return; }
  var img = document.getElementById(id + "-img");
  data.images[data.first] = img.src;  // the first picture is stored once, in the img
  var caption = document.getElementById(id + "-caption");
  var inputs = data.labels.map(function (_, i) { return document.getElementById(id + "-c" + i); });
  function show() {
    var key = inputs.map(function (input, i) {
      var k = parseInt(input.value, 10), out = document.getElementById(input.id + "-out");
      if (out) {
        out.textContent = data.labels[i][k];
        input.setAttribute("aria-valuetext", data.labels[i][k]);
      }
      return k;
    });
    var frame = data.frames[key.join(",")];
    if (!frame) { return; }
    img.src = data.images[frame[0]]; img.alt = frame[1]; caption.innerHTML = frame[2];
    inputs.forEach(function (input, j) {
      var off = frame[3].indexOf(j) >= 0, hint = document.getElementById(input.id + "-hint");
      input.disabled = off;
      if (hint) { hint.hidden = !off; }
    });
  }
  inputs.forEach(function (input) {
    input.addEventListener("input", show);
    input.addEventListener("change", show);
  });
  document.getElementById(id + "-controls").hidden = false;
  show();
})();"""


class Explorer:
    """A kernel-free explorer: HTML controls switching among precomputed states.

    Every combination of the ``axes``' positions (distinct names, display order) is
    rendered once by ``render(values) -> Frame``, starting from ``base`` (the axes then set
    their values in order). ``title`` and ``note`` (by default: the pictures are precomputed,
    the notebook has the live lab) are plain text. :meth:`_repr_html_` returns the HTML.

    Attributes
    ----------
    id : str
        The element id: unique per explorer in a process, deterministic for a given
        notebook run (a counter and a hash of the content).
    frames : dict of tuple of int to Frame
        The states, keyed by each axis's position; ``initial`` is shown first.
    """

    def __init__(self, axes, render, *, base: Mapping | None = None, title: str = "",
                 note: str | None = None):
        self.axes = tuple(axes)
        names = [a.name for a in self.axes]
        if len(set(names)) != len(names):
            raise ValueError(f"control names must be distinct, got {names}")
        for axis in self.axes:
            if not axis.labels or len(axis.labels) != len(axis.setters):
                raise ValueError(f"control {axis.name!r} needs one label per value")
        self.title = title
        self.note = note if note is not None else (
            "Precomputed pictures: move a control to switch between them. "
            "Run this chapter as a notebook for the live lab.")
        self.initial = tuple(a.default for a in self.axes)
        self.frames: dict[tuple, Frame] = {}
        digest = hashlib.sha256()
        for index in itertools.product(*(range(len(a.labels)) for a in self.axes)):
            values = dict(base or {})
            for axis, k in zip(self.axes, index):
                values.update(axis.values_for(k, values))
            frame = self.frames[index] = render(values)
            for part in (repr(index).encode(), frame.png, frame.alt.encode(),
                         frame.caption_html.encode()):
                digest.update(part)
        self.id = f"ab-explorer-{next(_IDS)}-{digest.hexdigest()[:10]}"
        self._html: str | None = None

    def __len__(self) -> int:
        return len(self.frames)

    def __repr__(self) -> str:
        names = " x ".join(f"{a.name} ({len(a.labels)})" for a in self.axes)
        return f"<Explorer {self.id}: {len(self)} precomputed states, {names}>"

    def reachable(self, values: Mapping) -> bool:
        """Whether some state shows ``values`` (a dict of some controls' values)."""
        return any(all(f.values.get(k) == v for k, v in values.items())
                   for f in self.frames.values())

    def _control_html(self, i: int, axis: Axis) -> str:
        cid, k0, name = f"{self.id}-c{i}", self.initial[i], html.escape(axis.name)
        label = f'<label for="{cid}" style="margin-right:6px">{html.escape(axis.label)}</label>'
        hint = (f'<span id="{cid}-hint" class="ab-explorer-hint" hidden '
                f'style="font-size:85%;margin-left:6px">({html.escape(axis.hint)})</span>'
                if axis.hint else "")
        if not axis.slider:
            options = "".join(
                f'<option value="{k}"{" selected" if k == k0 else ""}>{html.escape(text)}'
                "</option>" for k, text in enumerate(axis.labels))
            return (f'<span style="max-width:100%">{label}<select id="{cid}" name="{name}" '
                    f'style="width:auto;max-width:100%">{options}</select>{hint}</span>')
        text = html.escape(axis.labels[k0])
        return (f'<span>{label}<input type="range" id="{cid}" name="{name}" min="0" '
                f'max="{len(axis.labels) - 1}" step="1" value="{k0}" aria-valuetext="{text}" '
                f'style="vertical-align:middle"> <output id="{cid}-out" for="{cid}" '
                f'style="font-family:monospace">{text}</output>{hint}</span>')

    def _repr_html_(self) -> str:
        if self._html is not None:
            return self._html
        first = self.frames[self.initial]
        images: dict[bytes, int] = {}  # each distinct picture stored once
        frames = {",".join(map(str, index)): [images.setdefault(f.png, len(images)), f.alt,
                                              f.caption_html, list(f.inactive)]
                  for index, f in self.frames.items()}
        n_first = images[first.png]
        data = {"labels": [list(a.labels) for a in self.axes], "first": n_first,
                # the first picture is in the img element already: not stored twice
                "images": [_data_url(png) if n != n_first else ""
                           for n, png in enumerate(images)], "frames": frames}
        controls = "".join(self._control_html(i, a) for i, a in enumerate(self.axes))
        title = (f'<div class="ab-explorer-title" style="font-weight:bold">'
                 f"{html.escape(self.title)}</div>" if self.title else "")
        script = _SCRIPT % {"id": _script_json(self.id), "data": _script_json(data)}
        self._html = (
            f'<div class="ab-explorer" id="{self.id}" style="border:1px solid #bbb;'
            f'border-radius:6px;padding:8px 10px;margin:8px 0;max-width:100%">{title}'
            f'<div class="ab-explorer-note" style="font-size:90%;margin:2px 0 6px">'
            f"{html.escape(self.note)}</div>"
            # hidden until the script runs (a wrapper, as an inline display would
            # override the hidden attribute): without JavaScript no control is inert
            f'<div class="ab-explorer-controls" id="{self.id}-controls" hidden>'
            '<div style="display:flex;flex-wrap:wrap;gap:6px 24px;align-items:center;'
            f'margin-bottom:6px">{controls}</div></div>'
            f'<img id="{self.id}-img" src="{_data_url(first.png)}" '
            f'alt="{html.escape(first.alt)}" style="max-width:100%;height:auto;display:block">'
            f'<div class="ab-explorer-caption" id="{self.id}-caption" aria-live="polite">'
            f"{first.caption_html}</div><script>{script}</script></div>")
        return self._html
