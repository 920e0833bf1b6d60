"""The pictures layer's shared parts: figures built once, views that update in place.

A view makes its figure (without pyplot) and artists once; ``update(...)`` only changes
existing artists (data, extent, limits, texts), so a live lab answers a slider without
re-plotting. Colour maps are
colour-blind safe (cividis, viridis) with fixed limits; every axes has a title and labels.

Speed: laying out and rasterising text is most of a draw's cost (~1 ms a short label), so

- frozen layout (:func:`freeze_layout`): a view is laid out once with worst-case labels in
  place (:meth:`HeatmapPanel.reserve`), then the layout engine is switched off and the
  axis labels pinned;
- static layer (:class:`StaticLayer`): what never changes (colour bars, axis labels,
  legends) is drawn once, then pasted as pixels;
- stamps (:class:`TextStamps`): labels that change with the data (tokens, shapes in titles)
  are pasted from cached bitmaps, one per distinct string; the axes' own tick labels and
  titles are kept up to date (``ax.get_yticklabels()`` tells the truth) but not drawn; axis
  labels (:class:`AxisLabel`) follow the tick labels shown, not the longest possible ones;
- heatmaps are drawn by nearest-neighbour indexing in numpy (:class:`NearestImage`).

Vector output (PDF, SVG) and :func:`plain_matplotlib` (the benchmark's baseline) draw
ordinary matplotlib. Tick labels longer than :data:`MAX_TICK_CHARS` end in an ellipsis.
"""

from __future__ import annotations

import base64
import html
import io
import math
import struct
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import contextmanager

import matplotlib as mpl
import numpy as np
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.text import Text
from matplotlib.transforms import IdentityTransform
from PIL import Image
from PIL.PngImagePlugin import PngInfo

__all__ = ["MAX_TICK_CHARS", "RESERVED_TITLE", "tick_label", "tick_fontsize", "plain_matplotlib",
           "StaticLayer", "TextStamps", "AxisLabel", "Title", "freeze_layout", "NearestImage",
           "LinePanel", "token_maps", "view_factory", "HeatmapPanel", "TEXT_SIZE_KEY",
           "smallest_text_pt", "figure_png", "text_px", "NotebookFigure", "notebook_figure"]

#: The longest tick label shown in full; longer ones end in an ellipsis.
MAX_TICK_CHARS = 10
#: The title the layout reserves room for: one line with the tallest glyphs a title has
#: (parentheses, a bar and a root over a superscript reach above the letters; titles sit on
#: their baseline, as matplotlib's do, so only the height above it counts).
RESERVED_TITLE = r"reserved: (a one-line title) | $\sqrt{d_k^\top}$"
#: The tick label the margins are reserved for: a long word of average-to-wide letters.
_WIDEST_LABEL = "n" * MAX_TICK_CHARS


def tick_label(text: str, max_chars: int = MAX_TICK_CHARS) -> str:
    """``text`` shortened to at most ``max_chars`` characters (the last one an ellipsis)."""
    text = str(text)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "\u2026"


def tick_fontsize(n: int) -> float:
    """A tick-label font size (points) that lets ``n`` labels fit along a short axis."""
    return 9.0 if n <= 12 else 7.5 if n <= 20 else 6.0


_PLAIN = False  # whether views are being built as plain matplotlib


@contextmanager
def plain_matplotlib():
    """Build views inside this block as plain matplotlib would (layout engine on every draw,
    ordinary texts, nothing pasted, matplotlib's resampling): the same panels and
    ``update``, only the speed-ups off. For the benchmark's baseline, never for the book."""
    global _PLAIN
    previous, _PLAIN = _PLAIN, True
    try:
        yield
    finally:
        _PLAIN = previous


class StaticLayer(Artist):
    """The parts of a figure that never change, drawn first and once, then pasted (while
    canvas size, dpi and background stay the same). Its ``axes`` (drawn whole, e.g. colour
    bars) are marked animated and its ``texts`` hidden, so the figure skips them.

    Static parts that alternate between a few versions (chapter 8's curves, one set per
    task) name each version with :meth:`invalidate`'s ``variant``: the pixels of the last
    :data:`VARIANTS` versions drawn are kept, and coming back to one pastes them again.
    """

    #: How many named versions' pixels are kept.
    VARIANTS = 4

    def __init__(self, axes=(), texts=()):
        super().__init__()
        self.set_zorder(-1e9)
        self._axes, self._texts = list(axes), []
        for ax in self._axes:
            ax.set_animated(True)  # the figure skips animated axes
        self._plain = _PLAIN
        self._variant, self._kept = None, OrderedDict()  # (variant, key) -> pixels
        self.add(*texts)

    @property
    def texts(self) -> tuple:
        """The artists (texts, legends) it draws, hidden from the figure."""
        return tuple(self._texts)

    def add(self, *texts) -> None:
        """Draw these artists (texts, legends) with the static parts from now on."""
        for text in texts:
            text.set_visible(False)  # its axes would draw it otherwise
            self._texts.append(text)
        self.invalidate()

    def invalidate(self, variant=None) -> None:
        """Forget the pixels (call it after changing a static part).

        ``variant``, any hashable, names what the static parts show now: pixels drawn
        before under the same name are pasted instead of drawn again (the caller promises
        the same name means the same static parts). None: always draw anew.
        """
        self._key = self._pixels = None
        self._variant = variant

    def _draw_static(self, renderer) -> None:
        for ax in self._axes:
            ax.draw(renderer)
        for text in self._texts:
            text.set_visible(True)
            try:
                text.draw(renderer)
            finally:
                text.set_visible(False)

    def draw(self, renderer) -> None:
        if not self.get_visible():
            return
        if self._plain or not isinstance(renderer, RendererAgg):
            self._draw_static(renderer)  # a vector renderer (or plain): nothing to paste
            return
        figure = self.get_figure(root=True)
        key = (renderer.width, renderer.height, renderer.dpi,
               tuple(figure.patch.get_facecolor()), figure.patch.get_visible())
        if key != self._key:
            named = None if self._variant is None else (self._variant, key)
            self._pixels = self._kept.get(named) if named else None
            if self._pixels is None:
                # Render into a renderer of our own, never into the one passed in: a dry-run
                # draw (savefig runs one) has drawing switched off and would cache blank
                # pixels.
                own = RendererAgg(int(renderer.width), int(renderer.height), renderer.dpi)
                figure.patch.draw(own)
                self._draw_static(own)
                self._pixels = own.copy_from_bbox(figure.bbox)
            if named:
                self._kept[named] = self._pixels
                self._kept.move_to_end(named)
                while len(self._kept) > self.VARIANTS:
                    self._kept.popitem(last=False)
            self._key = key
        renderer.restore_region(self._pixels)
        self.stale = False


class TextStamps(Artist):
    """Short texts along one side of ``ax`` (which it adds itself to), pasted from bitmaps.

    ``side`` "left": row labels right-aligned left of the axes at data y positions;
    "bottom": column labels below it at data x positions; "top": one title centred above
    it, on its baseline (as matplotlib places titles); "points": labels centred above data
    points (x, y). ``rotation`` in degrees, ``pad`` (the gap) in points; ``math``: whether
    ``$...$`` is mathtext (never for reader-typed tokens); ``cache`` is shared by the
    stamps of one figure.
    """

    _CACHE_SIZE = 2048
    _ALIGN = {"left": ("right", "center"), "bottom": ("center", "top"),
              "top": ("center", "baseline"), "points": ("center", "bottom")}

    def __init__(self, ax, side: str, *, rotation: float = 0.0, pad: float = 3.5,
                 math: bool = False, cache: OrderedDict | None = None):
        if side not in self._ALIGN:
            raise ValueError(f"side must be 'left', 'bottom', 'top' or 'points', got {side!r}")
        super().__init__()
        self.ax, self.side, self.rotation, self.pad = ax, side, float(rotation), float(pad)
        self.math = math
        self.texts, self.positions, self.fontsize = (), (), 9.0  # set by set_texts
        self.color = mpl.rcParams["text.color"]
        self._cache = cache if cache is not None else OrderedDict()
        self._plain = _PLAIN
        self.set_clip_on(False)
        ax.add_artist(self)

    def set_texts(self, texts: Sequence[str], positions: Sequence[float] = (),
                  fontsize: float = 9.0) -> None:
        """Show ``texts`` at data ``positions``: along the axis (numbers), at points ((x, y)
        pairs) for side "points", none for side "top"."""
        texts = tuple(str(t) for t in texts)
        positions = tuple(tuple(map(float, p)) if self.side == "points" else float(p)
                          for p in positions)
        if self.side != "top" and len(positions) != len(texts):
            raise ValueError(f"{len(texts)} texts need {len(texts)} positions, "
                             f"got {len(positions)}")
        self.texts, self.positions, self.fontsize = texts, positions, float(fontsize)
        self.stale = True

    def _anchors(self, renderer) -> list[tuple[float, float]]:
        """Pixel anchor of each text (the aligned point of its bounding box)."""
        box, pad = self.ax.bbox, renderer.points_to_pixels(self.pad)
        if self.side == "top":
            return [((box.x0 + box.x1) / 2, box.y1 + pad)]
        if self.side == "points":  # (n, 2) data points, n may be 0
            points = self.ax.transData.transform(np.reshape(self.positions, (-1, 2)))
            return [(x, y + pad) for x, y in points]
        along = np.zeros((len(self.positions), 2))  # (n, 2) data points on the axis
        along[:, 1 if self.side == "left" else 0] = self.positions
        pixels = self.ax.transData.transform(along)  # (n, 2)
        if self.side == "left":
            return [(box.x0 - pad, y) for y in pixels[:, 1]]
        return [(x, box.y0 - pad) for x in pixels[:, 0]]

    def _text_artist(self, text: str, xy) -> Text:
        ha, va = self._ALIGN[self.side]
        art = Text(xy[0], xy[1], text, fontsize=self.fontsize, rotation=self.rotation,
                   ha=ha, va=va, color=self.color, transform=IdentityTransform(),
                   parse_math=self.math)  # a token like "$x$" is shown as typed
        art.set_figure(self.get_figure(root=True))
        return art

    def _bitmap(self, text: str, dpi: float) -> tuple[np.ndarray, float, float]:
        """The bitmap of ``text`` and where in it (pixels from its bottom left) its anchor
        is."""
        key = (text, self.fontsize, self.rotation, dpi, self.color, self.side, self.math)
        stamp = self._cache.get(key)
        if stamp is not None:
            self._cache.move_to_end(key)
            return stamp
        art = self._text_artist(text, (0.0, 0.0))  # anchored at (0, 0)
        bbox = art.get_window_extent(RendererAgg(1, 1, dpi), dpi=dpi)
        own = RendererAgg(math.ceil(bbox.width) + 2, math.ceil(bbox.height) + 2, dpi)
        art.set_position((1 - bbox.x0, 1 - bbox.y0))
        art.draw(own)
        # (height, width, 4); draw_image wants the bottom row first
        bitmap = np.asarray(own.buffer_rgba())[::-1].copy()
        stamp = self._cache[key] = (bitmap, 1 - bbox.x0, 1 - bbox.y0)
        if len(self._cache) > self._CACHE_SIZE:
            self._cache.popitem(last=False)
        return stamp

    def draw(self, renderer) -> None:
        if not self.get_visible() or not self.texts:
            return
        anchors = self._anchors(renderer)
        if self._plain or not isinstance(renderer, RendererAgg):
            for text, xy in zip(self.texts, anchors):
                self._text_artist(text, xy).draw(renderer)
            return
        gc = renderer.new_gc()
        try:
            for text, (x, y) in zip(self.texts, anchors):
                bitmap, x_in, y_in = self._bitmap(text, renderer.dpi)
                renderer.draw_image(gc, round(x - x_in), round(y - y_in), bitmap)
        finally:
            gc.restore()
        self.stale = False


class AxisLabel(TextStamps):
    """The label of ``ax``'s axis ``which`` ("x" below the axes, "y" left of it), drawn
    ``gap`` points outside the tick labels that ``ticks`` (a :class:`TextStamps` on that
    side) shows now: the frozen layout reserves room for the longest possible tick labels,
    and a label pinned outside them would float far from short ones. The axes keep the
    label's text (``ax.get_xlabel()``) but do not draw it (:func:`freeze_layout`)."""

    def __init__(self, ax, which: str, ticks: TextStamps, *, gap: float = 4.0,
                 cache: OrderedDict | None = None):
        label = (ax.xaxis if which == "x" else ax.yaxis).label
        super().__init__(ax, "bottom" if which == "x" else "left",
                         rotation=0.0 if which == "x" else 90.0, pad=gap, cache=cache)
        self.ticks, self.gap = ticks, gap
        self.set_texts([label.get_text()], [0.0], label.get_fontsize())

    @property
    def pad(self) -> float:
        """Points from the axes to the label: past the widest tick label shown, then gap."""
        ticks = self.ticks
        across = 0 if self.side == "bottom" else 1  # the height of what is below, width left
        texts = ticks.texts if ticks.get_visible() else ()
        # a bitmap at 72 dpi is a pixel a point, with a pixel of margin on each side
        extent = max((ticks._bitmap(t, 72)[0].shape[across] - 2 for t in texts), default=0)
        return (ticks.pad + extent if texts else 0.0) + self.gap

    @pad.setter
    def pad(self, value: float) -> None:
        self.gap = float(value)

    def _anchors(self, renderer) -> list[tuple[float, float]]:
        box, pad = self.ax.bbox, renderer.points_to_pixels(self.pad)
        if self.side == "left":
            return [(box.x0 - pad, (box.y0 + box.y1) / 2)]
        return [((box.x0 + box.x1) / 2, box.y0 - pad)]


class Title(TextStamps):
    """``ax``'s title as a stamp on its baseline, ``pad`` points above the axes (clear of a
    top tick label, which reaches above them), mathtext unless ``math`` is False (as for a
    title that quotes tokens). Until the layout is frozen the axes hold
    :data:`RESERVED_TITLE`, so that it makes room for any one-line title; then
    :func:`freeze_layout` hides the axes' own title (:meth:`show` keeps it true)."""

    def __init__(self, ax, *, pad: float = 10.0, math: bool = True,
                 cache: OrderedDict | None = None):
        super().__init__(ax, "top", pad=pad, math=math, cache=cache)
        ax.set_title(RESERVED_TITLE, y=1.0, pad=pad)  # y given: never re-placed per draw

    def show(self, title: str) -> None:
        """Show ``title`` (and make it the axes' title)."""
        self.ax.title.set_text(title)
        self.set_texts([title], fontsize=self.ax.title.get_fontsize())


def freeze_layout(figure: Figure, static_axes=(), *, panels=(), static_artists=()
                  ) -> StaticLayer:
    """Lay ``figure`` out once, pin every axis label, switch the layout engine off, put the
    static parts into one :class:`StaticLayer` (returned, already added) and
    :meth:`~HeatmapPanel.finish` each panel; a :class:`Title` draws the title from then on.

    Call it after putting worst-case labels in place (:meth:`HeatmapPanel.reserve`); create
    titles with ``set_title(..., y=1.0)`` so that matplotlib does not re-place them per draw.
    ``static_axes`` never change (colour bars, curves drawn once), nor do ``static_artists``
    (legends, fixed texts); each of the ``panels`` (HeatmapPanel) adds its colour bar, and
    draws its axis labels itself (:class:`AxisLabel`).
    """
    static_axes = [*static_axes, *(p.colorbar.ax for p in panels if p.colorbar)]
    followed = [p.ax for p in panels]
    figure.draw_without_rendering()  # runs the layout engine and places the labels
    labels = []
    for ax in figure.axes:
        box = ax.bbox  # in pixels
        for axis in (ax.xaxis, ax.yaxis):
            if not axis.label.get_text():
                continue
            # pinned in axes coordinates, so it stays right at any dpi
            x, y = axis.label.get_position()  # pixels across the axis, axes units along
            if axis is ax.yaxis:
                axis.set_label_coords((x - box.x0) / box.width, y)
            else:
                axis.set_label_coords(x, (y - box.y0) / box.height)
            if ax not in static_axes and ax not in followed:
                labels.append(axis.label)
    if not _PLAIN:
        figure.set_layout_engine("none")
    layer = StaticLayer(axes=static_axes, texts=[*labels, *static_artists])
    figure.add_artist(layer)
    for title in figure.findobj(Title):
        title.ax.title.set_visible(False)
    for panel in panels:
        panel.finish()
    return layer


def _index_ticks(n: int) -> tuple[list[int], list[str]]:
    """Ticks 0..n-1 along an axis of ``n`` cells: every 1, 2, 4, 8... cell, at most 8."""
    step = 1
    while -(-n // step) > 8:  # ceil(n / step) ticks
        step *= 2
    positions = list(range(0, n, step))
    return positions, [str(p) for p in positions]


class NearestImage(AxesImage):
    """An image drawn by nearest-neighbour indexing in numpy (like matplotlib's
    ``NonUniformImage``): several times cheaper than ``AxesImage``'s resampling for a small
    matrix shown large. For a regular grid whose extent fills its axes; it draws the cells
    of ``imshow(..., interpolation="nearest")`` (a pixel on a cell border may take the
    neighbour's colour when cells are a few pixels wide)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._plain = _PLAIN  # the benchmark's plain baseline resamples as matplotlib does

    def make_image(self, renderer, magnification=1.0, unsampled=False):
        if self._plain or unsampled or self._A is None:
            return super().make_image(renderer, magnification, unsampled)
        A = self._A  # (m, n) data or (m, n, 4) uint8 RGBA
        rgba = A if (A.ndim == 3 and A.dtype == np.uint8) else self.to_rgba(A, bytes=True)
        m, n = rgba.shape[:2]
        l, b, r, t = (self.axes.bbox.extents * magnification + 0.5).astype(int)
        width, height = max(r - l, 1), max(t - b, 1)
        inverse = self.axes.transData.inverted()
        xs = inverse.transform(np.column_stack(
            [l + (np.arange(width) + 0.5) / magnification, np.full(width, b)]))[:, 0]
        ys = inverse.transform(np.column_stack(
            [np.full(height, l), b + (np.arange(height) + 0.5) / magnification]))[:, 1]
        x_left, x_right, y_bottom, y_top = self.get_extent()
        cols = np.clip(((xs - x_left) / (x_right - x_left) * n).astype(int), 0, n - 1)
        rows = np.clip(((ys - y_top) / (y_bottom - y_top) * m).astype(int), 0, m - 1)
        # (height, width) pixels, bottom row first; one uint32 per RGBA pixel
        im = np.ascontiguousarray(rgba).view(np.uint32).reshape(m, n)[
            rows[:, None], cols[None, :]].view(np.uint8).reshape(height, width, 4)
        return im, l, b, IdentityTransform()


class HeatmapPanel:
    """One axes showing a matrix as an image, with a colour bar, labelled ticks and a title.

    The image is created once; :meth:`update` changes its data, extent and labels (the
    matrix may change shape); an empty matrix hides it and shows ``empty_text``
    (:attr:`notice`). Call :meth:`reserve` on every panel, then :func:`freeze_layout`.
    ``cmap`` is colour-blind safe ("cividis", "viridis"; by default viridis on [0, 1], for
    attention weights), ``vmin``/``vmax`` fixed, ``col_rotation`` in degrees (90 for words;
    index ticks are never rotated), ``cache`` shared by a figure's panels; ``colorbar``:
    keywords of ``Figure.colorbar`` (e.g. ``ax`` several axes, ``location``), True for a
    bar at the right, False for none.
    :attr:`image` (a :class:`NearestImage`) holds the (m, n) matrix shown; the stamps
    :attr:`row_labels`, :attr:`col_labels` and :attr:`title` (a :class:`Title`) draw the
    texts (``.texts``) that the axes' tick labels and title hold, :attr:`x_label` and
    :attr:`y_label` (:class:`AxisLabel`, None without a label) the axis labels.
    """

    def __init__(self, ax, *, xlabel: str, ylabel: str, cmap: str = "viridis",
                 vmin: float = 0.0, vmax: float = 1.0, colorbar_label: str = "",
                 col_rotation: float = 0.0, empty_text: str = "no tokens:\ntype a sentence",
                 cache: OrderedDict | None = None, colorbar: bool | dict = True):
        self.ax = ax
        self.image = NearestImage(ax, cmap=cmap, norm=Normalize(vmin, vmax),
                                  interpolation="nearest", extent=(-0.5, 0.5, 0.5, -0.5))
        self.image.set_data(np.zeros((1, 1)))
        ax.add_image(self.image)
        ax.set(xlim=(-0.5, 0.5), ylim=(0.5, -0.5), aspect="auto", xlabel=xlabel, ylabel=ylabel)
        self.colorbar = None if colorbar is False else ax.get_figure(root=True).colorbar(
            self.image, **{"ax": ax, **(colorbar if isinstance(colorbar, dict) else {})},
            label=colorbar_label, ticks=[vmin, (vmin + vmax) / 2, vmax])
        self.col_rotation = float(col_rotation)
        cache = cache if cache is not None else OrderedDict()
        self.row_labels = TextStamps(ax, "left", cache=cache)
        self.col_labels = TextStamps(ax, "bottom", rotation=col_rotation, cache=cache)
        self.title = Title(ax, cache=cache)
        self.x_label, self.y_label = (
            AxisLabel(ax, which, stamps, cache=cache) if text else None
            for which, stamps, text in (("x", self.col_labels, xlabel),
                                        ("y", self.row_labels, ylabel)))
        self.notice = ax.text(0.5, 0.5, empty_text, transform=ax.transAxes, ha="center",
                              va="center", visible=False)
        self._tick_keys: dict[str, tuple] = {}

    def set_ticks(self, which: str, labels: Sequence[str] | None, n: int) -> None:
        """Label axis ``which`` ("x" or "y") of ``n`` cells with ``labels`` (or indices)."""
        # rebuilt only when they change: a slider that changes only the data costs no label work
        key = (tuple(labels) if labels is not None else None, n)
        if self._tick_keys.get(which) == key:
            return
        self._tick_keys[which] = key
        if labels is None:
            (positions, texts), size = _index_ticks(n), 9.0
        else:
            positions, texts = list(range(n)), [tick_label(t) for t in labels]
            size = tick_fontsize(n)
        # the axes tick only the labels shown (thin_labels blanks some): each tick costs
        # draw time even with its label hidden
        kept = [j for j, t in enumerate(texts) if t]
        shown = ([positions[j] for j in kept], [texts[j] for j in kept])
        if which == "x":
            rotation = self.col_labels.rotation = self.col_rotation if labels else 0.0
            self.ax.set_xticks(*shown, rotation=rotation, fontsize=size)
            self.col_labels.set_texts(texts, positions, size)
        else:
            self.ax.set_yticks(*shown, fontsize=size)
            self.row_labels.set_texts(texts, positions, size)

    def reserve(self, *, rows: bool, cols: bool, n: int = 64) -> None:
        """Put worst-case tick labels and a title in place for the layout engine: words
        where ``rows`` / ``cols`` say so, else indices 0..n-1 (n the largest size shown)."""
        self.set_ticks("y", [_WIDEST_LABEL] if rows else None, 1 if rows else n)
        self.set_ticks("x", [_WIDEST_LABEL] if cols else None, 1 if cols else n)
        self._tick_keys.clear()

    def finish(self) -> None:
        """After the layout is frozen: the stamps draw the tick and axis labels, and the
        axes no axis at all (saves ~0.5 ms each; ``ax.get_xticks()`` stays true)."""
        self.ax.xaxis.set_visible(False)
        self.ax.yaxis.set_visible(False)

    def update(self, data, *, row_labels: Sequence[str] | None = None,
               col_labels: Sequence[str] | None = None, title: str = "",
               cells: tuple[int, int] | None = None) -> None:
        """Show ``data``, an (m, n) matrix (m or n may be 0: the empty text shows instead),
        with ``row_labels`` (m) and ``col_labels`` (n) as ticks (default: indices) and
        ``title``. ``cells``, the (rows, columns) the axes count when ``data`` shows every
        n-th cell of a larger matrix (its ticks then number the full matrix), defaults to
        ``data.shape``."""
        data = np.asarray(data, dtype=float)
        if data.ndim != 2:
            raise ValueError(f"data must be a matrix of shape (m, n), got shape {data.shape}")
        m, n = cells if cells is not None else data.shape
        for name, labels, size in (("row_labels", row_labels, data.shape[0]),
                                   ("col_labels", col_labels, data.shape[1])):
            if labels is not None and len(labels) != size:
                raise ValueError(f"{name} has {len(labels)} labels for {size} cells")
        empty = data.size == 0
        if not empty:
            self.image.set_data(data)
            self.image.set_extent((-0.5, n - 0.5, m - 0.5, -0.5))  # cell (i, j) at (j, i)
            self.ax.set_xlim(-0.5, n - 0.5)
            self.ax.set_ylim(m - 0.5, -0.5)
        self.image.set_visible(not empty)
        self.notice.set_visible(empty)
        self.set_ticks("y", None if empty else row_labels, 0 if empty else m)
        self.set_ticks("x", None if empty else col_labels, 0 if empty else n)
        self.title.show(title)


class LinePanel:
    """An axes of lines whose tick labels and title are stamps (its x range changes with the
    data; the axes' own tick labels are kept true but not drawn). ``yticks`` are fixed,
    labelled as ``f"{y:g}"`` with a true minus; :meth:`finish` it after freeze_layout."""

    def __init__(self, ax, *, xlabel: str, ylabel: str, yticks: Sequence[float],
                 cache: OrderedDict, widest_x: str = "500"):
        self.ax = ax
        ax.set(xlabel=xlabel, ylabel=ylabel)
        ax.spines[["top", "right"]].set_visible(False)
        self.x_labels = TextStamps(ax, "bottom", cache=cache)
        self.y_labels = TextStamps(ax, "left", cache=cache)
        self.title = Title(ax, cache=cache)
        labels = [f"{y:g}".replace("-", "\u2212") for y in yticks]
        ax.set_yticks(yticks, labels)
        self.y_labels.set_texts(labels, yticks)
        ax.set_xticks([0], [widest_x])  # room for the widest labels

    finish = HeatmapPanel.finish  # after freeze_layout: the stamps draw the tick labels

    def set_xticks(self, positions: Sequence[float], labels: Sequence[str]) -> None:
        """Label the x axis at data ``positions`` with ``labels``."""
        self.ax.set_xticks(positions, labels)
        self.x_labels.set_texts(labels, positions)


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


def view_factory(view: type, width: float, height: float, dpi: float = 100, **pads):
    """A function ``build(figure=None)`` that builds ``view`` (a class taking the figure)
    once in ``figure`` (empty), by default a new ``width`` x ``height`` inch figure at
    ``dpi`` with constrained layout (its ``pads``: w_pad, h_pad, wspace, hspace), made
    without pyplot."""
    def build(figure: Figure | None = None):
        if figure is None:
            figure = Figure(figsize=(width, height), dpi=dpi,
                            layout=ConstrainedLayoutEngine(**pads))
        return view(figure)

    build.__doc__ = (f"Build a :class:`{view.__name__}` once in ``figure``, by default a new "
                     f"{width:g} x {height:g} inch figure; then call ``show(state)``.")
    return build


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def _fast_png(rgb: np.ndarray, level: int) -> bytes:
    """``rgb`` (height, width, 3) uint8 as a PNG with unfiltered rows: PIL's search for the
    best row filter is most of its encoding time (5.4 ms for chapter 1's frame, this 1.8 ms,
    the frame 10 % larger), and the live lab pays it on every change."""
    height, width, _ = rgb.shape
    rows = np.empty((height, 3 * width + 1), dtype=np.uint8)  # each row: filter byte 0, pixels
    rows[:, 0] = 0
    rows[:, 1:] = rgb.reshape(height, -1)  # (height, width, 3) -> (height, 3 width)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(rows.tobytes(), level)) + _chunk(b"IEND", b""))


#: The tEXt keyword under which every PNG the book stores states the height, in the image's
#: own pixels, of the smallest text drawn in it (tests turn it into CSS pixels on the page).
TEXT_SIZE_KEY = "attention-book text-px"


def smallest_text_pt(figure: Figure) -> float | None:
    """The font size (points) of the smallest text ``figure`` draws, or None if none: its
    visible non-empty texts, the texts a :class:`StaticLayer` pastes and the stamps."""
    sizes: list[float] = []

    def walk(artist, shown: bool = False) -> None:
        if not (shown or artist.get_visible()):
            return
        if isinstance(artist, TextStamps):
            sizes.extend([artist.fontsize] if artist.texts else [])
        elif isinstance(artist, Text):
            sizes.extend([artist.get_fontsize()] if artist.get_text().strip() else [])
        elif isinstance(artist, StaticLayer):
            for text in artist.texts:  # hidden from the figure, drawn by the layer
                walk(text, shown=True)
        for child in artist.get_children():
            walk(child)

    walk(figure)
    return min(sizes, default=None)


def figure_png(figure: Figure, dpi: float | None = None, *, palette: bool = False,
               compress_level: int = 6) -> bytes:
    """``figure`` (opaque) drawn on an Agg canvas as PNG bytes (no date or software:
    reproducible): the book's one PNG encoder. ``dpi`` (default the figure's own) stays set;
    ``palette`` quantises to 255 colours (about a third of the bytes); ``compress_level``
    is zlib's 0-9 (the live lab uses 1, with unfiltered rows and no metadata: three times
    as fast as level 6, frames ~15 % larger). Otherwise a ``TEXT_SIZE_KEY`` text chunk states the smallest
    text's height in pixels (:func:`smallest_text_pt` at this dpi)."""
    canvas = figure.canvas
    if not isinstance(canvas, FigureCanvasAgg):
        canvas = FigureCanvasAgg(figure)
    if dpi is not None and dpi != figure.dpi:
        figure.set_dpi(dpi)  # the layout is in figure fractions: only the pixels change
    canvas.draw()
    rgb = np.ascontiguousarray(np.asarray(canvas.buffer_rgba())[..., :3])  # (height, width, 3)
    if compress_level <= 1 and not palette:
        return _fast_png(rgb, compress_level)
    image = Image.fromarray(rgb)
    if palette:
        image = image.quantize(colors=255, method=Image.Quantize.FASTOCTREE,
                               dither=Image.Dither.NONE)
    info = PngInfo()
    points = smallest_text_pt(figure)
    if points is not None:
        info.add_text(TEXT_SIZE_KEY, f"{points * figure.dpi / 72:.1f}")
    with io.BytesIO() as buffer:
        image.save(buffer, format="png", compress_level=compress_level, pnginfo=info)
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
        png = figure_png(self, dpi=2 * self.css_dpi, palette=True, compress_level=9)
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
