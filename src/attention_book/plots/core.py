"""The pictures layer's shared parts: the chapters' figures and the book's one PNG encoder.

A chapter cell ends with a call returning a :class:`NotebookFigure` (made without pyplot),
which Jupyter and myst-nb show as a sharp PNG, with its alt text. Colour maps are
colour-blind safe (cividis, viridis) with fixed limits; every axes has a title and labels.
Tick labels longer than :data:`MAX_TICK_CHARS` end in an ellipsis.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from PIL import Image
from PIL.PngImagePlugin import PngInfo

__all__ = ["MAX_TICK_CHARS", "tick_label", "tick_fontsize", "token_maps", "TEXT_SIZE_KEY",
           "smallest_text_pt", "figure_png", "text_px", "NotebookFigure", "notebook_figure"]

#: The longest tick label shown in full; longer ones end in an ellipsis.
MAX_TICK_CHARS = 10


def tick_label(text: str, max_chars: int = MAX_TICK_CHARS) -> str:
    """``text`` shortened to at most ``max_chars`` characters (the last one an ellipsis)."""
    text = str(text)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "\u2026"


def tick_fontsize(n: int) -> float:
    """A tick-label font size (points) that lets ``n`` labels fit along a short axis."""
    return 9.0 if n <= 12 else 7.5 if n <= 20 else 6.0


def token_maps(size: tuple[float, float], maps, titles: Sequence[str], tokens: Sequence, *,
               label: str = "attention weight", xlabel: str = "key j",
               ylabel: str = "query i", **subplots):
    """A chapter figure of ``size`` (inches) with n maps (s_k, s_k) side by side (viridis on
    one colour scale [0, 1], plain matplotlib), each with its title and its ``tokens`` along
    both axes at a size that fits (the columns' words rotated). Returns the figure and its
    n axes."""
    fig = notebook_figure(*size)
    axes = np.atleast_1d(fig.subplots(1, len(maps), **subplots))
    for ax, matrix, title, labels in zip(axes, maps, titles, tokens):
        image = ax.imshow(np.asarray(matrix, dtype=float), cmap="viridis", vmin=0.0,
                          vmax=1.0, interpolation="nearest")
        labels = [tick_label(t) for t in labels]
        small, short = tick_fontsize(len(labels)), all(len(t) <= 2 for t in labels)
        ax.set_xticks(range(len(labels)), labels, fontsize=small,
                      rotation=0 if short and len(labels) <= 12 else 90)
        ax.set_yticks(range(len(labels)), labels, fontsize=small)
        ax.set(xlabel=xlabel, ylabel="" if ax is not axes[0] else ylabel)
        ax.set_title(title, fontsize=10)
    fig.colorbar(image, ax=list(axes), label=label, shrink=0.9)
    return fig, axes


#: The tEXt keyword under which every PNG the book stores states the height, in the image's
#: own pixels, of the smallest text drawn in it (tests turn it into CSS pixels on the page).
TEXT_SIZE_KEY = "attention-book text-px"


def smallest_text_pt(figure: Figure) -> float | None:
    """The font size (points) of the smallest text ``figure`` draws (its visible non-empty
    texts), or None if none."""
    sizes: list[float] = []

    def walk(artist) -> None:
        if not artist.get_visible():
            return
        if isinstance(artist, Text):
            sizes.extend([artist.get_fontsize()] if artist.get_text().strip() else [])
        for child in artist.get_children():
            walk(child)

    walk(figure)
    return min(sizes, default=None)


def figure_png(figure: Figure, dpi: float) -> bytes:
    """``figure`` (opaque) drawn on an Agg canvas at ``dpi`` (which stays set) as PNG bytes
    quantised to 255 colours (about a third of the bytes), zlib level 6, with no date or
    software (reproducible): the book's one PNG encoder. (Level 9 made the same pixels 6-8%
    smaller in 4-8 times the encoding time: 0.18 s against 0.02 s for chapter 2's
    positional-encoding figure, issue 24.) A ``TEXT_SIZE_KEY`` text chunk
    states the smallest text's height in pixels (:func:`smallest_text_pt` at this dpi)."""
    canvas = figure.canvas
    if not isinstance(canvas, FigureCanvasAgg):
        canvas = FigureCanvasAgg(figure)
    figure.set_dpi(dpi)  # the layout is in figure fractions: only the pixels change
    canvas.draw()
    rgb = np.ascontiguousarray(np.asarray(canvas.buffer_rgba())[..., :3])  # (height, width, 3)
    image = Image.fromarray(rgb).quantize(colors=255, method=Image.Quantize.FASTOCTREE,
                                          dither=Image.Dither.NONE)
    info = PngInfo()
    points = smallest_text_pt(figure)
    if points is not None:
        info.add_text(TEXT_SIZE_KEY, f"{points * figure.dpi / 72:.1f}")
    with io.BytesIO() as buffer:
        image.save(buffer, format="png", compress_level=6, pnginfo=info)
        return buffer.getvalue()


def text_px(png: bytes) -> float | None:
    """The smallest text's height in pixels that :func:`figure_png` wrote into ``png``."""
    value = Image.open(io.BytesIO(png)).text.get(TEXT_SIZE_KEY)
    return float(value) if value is not None else None


class NotebookFigure(Figure):
    """A Figure that Jupyter and myst-nb show as a PNG (a bare Figure made without pyplot
    has only a text representation), so a chapter cell can end with a call returning it.

    Drawn at twice :attr:`css_dpi` and shown at ``css_dpi`` (the PNG's metadata gives its
    size in CSS pixels), so it is sharp on 2x screens. With :attr:`alt` (plain text) it is
    shown as an ``<img>`` with that alt text."""

    css_dpi = 100.0
    alt = ""

    def _png(self) -> tuple[bytes, dict]:
        png = figure_png(self, dpi=2 * self.css_dpi)
        width, height = self.get_size_inches() * self.css_dpi
        return png, {"width": round(width), "height": round(height)}

    def _repr_png_(self) -> tuple[bytes, dict] | None:
        # with alt text the <img> below is the output: Jupyter asks for every format, and a
        # second PNG would be drawn and stored in the notebook for nothing
        return None if self.alt else self._png()

    def _repr_html_(self) -> str | None:
        if not self.alt:
            return None  # the PNG, with the cell's alt text
        png, size = self._png()
        data = base64.b64encode(png).decode("ascii")
        return (f'<img src="data:image/png;base64,{data}" alt="{html.escape(self.alt)}" '
                f'width="{size["width"]}" height="{size["height"]}" '
                'style="max-width:100%;height:auto">')


def notebook_figure(width: float, height: float) -> NotebookFigure:
    """A new :class:`NotebookFigure` of ``width`` x ``height`` inches, constrained layout."""
    return NotebookFigure(figsize=(width, height), dpi=2 * NotebookFigure.css_dpi,
                          layout="constrained")
