"""The controls layer, static form: kernel-free explorers for the built HTML book.

The built book has no kernel, so a live widget would be inert there. An :class:`Explorer`
has real HTML controls (one per scene preset and per control with several ``explore``
values), an image, a caption, and inline JavaScript that swaps among states precomputed by
the scene's state function and the live lab's view, so the two forms cannot disagree.
Escaped, with ids unique per explorer and no ``eval``; without JavaScript the controls stay
hidden and the first state is shown. Imports neither ipywidgets nor ipympl.

Pictures are drawn at twice the size they are shown (sharp on 2x screens) and stored as
lossless WebP (half the bytes of the same PNG). The first state is the page's image; every
other state is an overlay on it, transparent wherever it equals the first (a third fewer
bytes than whole pictures). In the book (``IMAGES_ENV_VAR`` names a folder) each picture is
a file named by its content, so a page loads only the pictures a reader asks for;
elsewhere they are data: URLs.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import itertools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from ..plots.core import figure_png, text_px
from ..scenes.core import Scene

#: Explorer pictures are shown at 72 CSS px an inch (a point of text is a CSS pixel)...
EXPLORER_CSS_DPI = 72
#: ... and drawn at twice that (a view may set its own ``explorer_dpi``).
EXPLORER_DPI = 2 * EXPLORER_CSS_DPI
#: Set by the book's Sphinx extension: the folder explorer pictures are written to. The
#: pages name them ``IMAGE_PREFIX + file name``; the extension copies them into the site.
IMAGES_ENV_VAR = "ATTENTION_BOOK_IMAGES"
IMAGE_PREFIX = "ab-image:"
#: Overlays show the first picture where a state's pixel is within this many levels (of
#: 255, per channel) of it.
SAME_LEVELS = 6

__all__ = ["EXPLORER_CSS_DPI", "EXPLORER_DPI", "IMAGES_ENV_VAR", "IMAGE_PREFIX", "Axis",
           "Frame", "Explorer", "explorer_axes", "explorer", "overlay"]


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
        # a slider with two stops is a choice between two values: a drop-down says so
        axes.append(Axis(c.name, c.label, labels, tuple({c.name: v} for v in values),
                         slider=c.kind == "slider" and len(values) > 2, default=default,
                         hint=c.hint))
    return axes


def explorer(scene: Scene, view, **explore) -> "Explorer":
    """The kernel-free explorer of ``scene``, each state drawn by ``view`` (``figure``,
    ``show(state)``, optional ``explorer_dpi``, default :data:`EXPLORER_DPI`) as a 255-colour
    PNG at zlib level 9 (a fifth of the bytes of full colour); ``explore[name]`` replaces a
    control's precomputed values."""
    axes = explorer_axes(scene, **explore)
    fixed = {name: values[0] for name, values in explore.items() if len(values) == 1}
    dpi = getattr(view, "explorer_dpi", EXPLORER_DPI)

    def render(values) -> Frame:
        state = scene.compute(values)
        view.show(state)
        active = scene.active(values)
        # a control's own input is disabled where it has no effect; a preset, which sets
        # several values at once, always stays usable
        inactive = tuple(i for i, axis in enumerate(axes)
                         if axis.name in active and not active[axis.name])
        png = figure_png(view.figure, dpi=dpi, palette=True, compress_level=9)
        return Frame(png, scene.alt(state), scene.readout(state), dict(values), inactive)

    return Explorer(axes, render, base={**scene.defaults, **fixed}, title=scene.title,
                    dpi=dpi)


_IDS = itertools.count(1)


def _script_json(obj) -> str:
    """JSON safe inside a <script>: no "<", ">" or "&" (so no "</script" or "<!--")."""
    text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _image_url(image: Image.Image) -> str:
    """``image`` as lossless WebP: a file in the book's picture folder (written once) if
    there is one, else a data URL."""
    with io.BytesIO() as buffer:
        # method 2: half the bytes of the PNG; methods 4-6 save 1 % more, 30x slower
        image.save(buffer, format="webp", lossless=True, method=2, quality=100)
        webp = buffer.getvalue()
    folder = os.environ.get(IMAGES_ENV_VAR)
    if not folder:
        return "data:image/webp;base64," + base64.b64encode(webp).decode("ascii")
    name = hashlib.sha256(webp).hexdigest()[:24] + ".webp"
    path = Path(folder) / name
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(webp)
    return IMAGE_PREFIX + name


def even_rgb(png: bytes) -> np.ndarray:
    """``png`` as (height, width, 3) pixels, padded with white to an even height and width:
    shown at half size, an odd one would be resampled by the browser, and blurred."""
    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))  # (height, width, 3)
    height, width, _ = rgb.shape
    return np.pad(rgb, ((0, height % 2), (0, width % 2), (0, 0)), constant_values=255)


def overlay(png: bytes, base: np.ndarray) -> Image.Image | None:
    """``png`` (a palette PNG of :func:`figure_png`) as an RGBA overlay on ``base`` (height,
    width, 3; :func:`even_rgb`): transparent wherever the two are equal, None if they are
    equal everywhere."""
    rgb = even_rgb(png)  # (height, width, 3)
    # equal up to the palettes' rounding: each picture has its own 255 colours, so a pixel
    # that did not change may still differ by a few levels (invisible) from the first's
    difference = np.abs(rgb.astype(np.int16) - base)
    same = np.all(difference <= SAME_LEVELS, axis=2)  # (height, width)
    if same.all():
        return None
    alpha = np.where(same, 0, 255).astype(np.uint8)[..., None]
    # (height, width, 3) and (height, width, 1) -> (height, width, 4), transparent pixels black
    return Image.fromarray(np.concatenate([rgb * (alpha > 0), alpha], axis=2), "RGBA")


_SCRIPT = """(function () {
  var id = %(id)s, data = %(data)s;
  if (!document.getElementById(id)) { return; }
  var img = document.getElementById(id + "-img"), over = document.getElementById(id + "-over");
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
    // the first picture stays in img; another state is an overlay on it (-1: none)
    if (frame[0] >= 0) { over.src = data.images[frame[0]]; }
    over.hidden = frame[0] < 0; img.alt = frame[1]; caption.innerHTML = frame[2];
    img.setAttribute("data-text-px", frame[4]);
    inputs.forEach(function (input, j) {
      var off = frame[3].indexOf(j) >= 0, hint = document.getElementById(input.id + "-hint");
      input.disabled = off;
      if (hint) { hint.hidden = !off; }
    });
  }
  // the caption keeps the height of the tallest one, so the page does not jump as it changes
  function reserve() {
    var shown = caption.innerHTML, tallest = 0, seen = {};
    caption.style.minHeight = "";
    Object.keys(data.frames).forEach(function (key) {
      var text = data.frames[key][2];
      if (seen[text]) { return; }
      seen[text] = true;
      caption.innerHTML = text;
      tallest = Math.max(tallest, caption.offsetHeight);
    });
    caption.innerHTML = shown;
    caption.style.minHeight = tallest + "px";
  }
  var resized;
  window.addEventListener("resize", function () {
    clearTimeout(resized);
    resized = setTimeout(reserve, 200);
  });
  inputs.forEach(function (input) {
    input.addEventListener("input", show);
    input.addEventListener("change", show);
  });
  document.getElementById(id + "-controls").hidden = false;
  show();
  reserve();
})();"""


class Explorer:
    """A kernel-free explorer: HTML controls switching among precomputed states.

    Every combination of the ``axes``' positions (distinct names, display order) is
    rendered once by ``render(values) -> Frame``, starting from ``base`` (the axes then set
    their values in order). ``title`` and ``note`` (by default: the pictures are precomputed,
    the notebook has the live lab) are plain text; ``dpi`` is the pictures' (shown at
    :data:`EXPLORER_CSS_DPI`). :meth:`_repr_html_` returns the HTML.

    Attributes
    ----------
    id : str
        The element id: unique per explorer in a process, deterministic for a given
        notebook run (a counter and a hash of the content).
    frames : dict of tuple of int to Frame
        The states, keyed by each axis's position; ``initial`` is shown first.
    """

    def __init__(self, axes, render, *, base: Mapping | None = None, title: str = "",
                 note: str | None = None, dpi: float = EXPLORER_DPI):
        self.axes = tuple(axes)
        names = [a.name for a in self.axes]
        if len(set(names)) != len(names):
            raise ValueError(f"control names must be distinct, got {names}")
        for axis in self.axes:
            if not axis.labels or len(axis.labels) != len(axis.setters):
                raise ValueError(f"control {axis.name!r} needs one label per value")
        self.title, self.dpi = title, dpi
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
        label = f'<label for="{cid}">{html.escape(axis.label)}</label>'
        hint = (f'<span id="{cid}-hint" class="ab-explorer-hint" hidden>'
                f"({html.escape(axis.hint)})</span>" if axis.hint else "")
        if not axis.slider:
            options = "".join(
                f'<option value="{k}"{" selected" if k == k0 else ""}>{html.escape(text)}'
                "</option>" for k, text in enumerate(axis.labels))
            return (f'<span class="ab-explorer-control">{label}<select id="{cid}" '
                    f'name="{name}">{options}</select>{hint}</span>')
        text = html.escape(axis.labels[k0])
        return (f'<span class="ab-explorer-control">{label}<input type="range" id="{cid}" '
                f'name="{name}" min="0" max="{len(axis.labels) - 1}" step="1" value="{k0}" '
                f'aria-valuetext="{text}"> <output id="{cid}-out" for="{cid}">{text}</output>'
                f"{hint}</span>")

    def _repr_html_(self) -> str:
        if self._html is not None:
            return self._html
        first = self.frames[self.initial]
        base = even_rgb(first.png)  # (height, width, 3)
        height, width = base.shape[:2]  # pixels, shown at EXPLORER_CSS_DPI
        overlays: dict[bytes, int] = {}  # each distinct picture stored once
        images: list[str] = []

        def overlay_index(png: bytes) -> int:
            if png not in overlays:
                image = overlay(png, base)
                overlays[png] = -1 if image is None else len(images)
                images.extend([_image_url(image)] if image is not None else [])
            return overlays[png]

        # each frame: its overlay (-1: none), alt text, caption, the axes without effect and
        # the smallest text's height in the picture's pixels
        frames = {",".join(map(str, index)): [overlay_index(f.png), f.alt, f.caption_html,
                                              list(f.inactive), text_px(f.png)]
                  for index, f in self.frames.items()}
        data = {"labels": [list(a.labels) for a in self.axes], "images": images,
                "frames": frames}
        controls = "".join(self._control_html(i, a) for i, a in enumerate(self.axes))
        title = (f'<div class="ab-explorer-title">{html.escape(self.title)}</div>'
                 if self.title else "")
        script = _SCRIPT % {"id": _script_json(self.id), "data": _script_json(data)}
        self._html = (
            f'<div class="ab-explorer" id="{self.id}">{title}'
            f'<div class="ab-explorer-note">{html.escape(self.note)}</div>'
            # hidden until the script runs (a wrapper, as an inline display would
            # override the hidden attribute): without JavaScript no control is inert
            f'<div class="ab-explorer-controls" id="{self.id}-controls" hidden>'
            f'<div class="ab-explorer-inputs">{controls}</div></div>'
            f'<div class="ab-explorer-figure" style="position:relative;'
            f'width:{width * EXPLORER_CSS_DPI / self.dpi:g}px;max-width:100%">'
            f'<img id="{self.id}-img" src="{_image_url(Image.fromarray(base))}" '
            f'alt="{html.escape(first.alt)}" width="{width}" height="{height}" '
            f'data-text-px="{text_px(first.png)}" '
            'style="display:block;width:100%;height:auto">'
            f'<img id="{self.id}-over" class="ab-explorer-overlay" alt="" aria-hidden="true" '
            'style="position:absolute;left:0;top:0;width:100%;height:100%" hidden></div>'
            f'<div class="ab-explorer-caption" id="{self.id}-caption" aria-live="polite">'
            f"{first.caption_html}</div><script>{script}</script></div>")
        return self._html
