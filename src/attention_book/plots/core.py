"""The pictures layer: matplotlib figure builders that draw once and update in place.

Every builder makes its :class:`~matplotlib.figure.Figure` (without pyplot: no global
figure registry, no current figure) and its artists once, and returns a *view* object that
holds them. A view's ``update(...)`` method only changes existing artists (``set_data``,
``set_extent``, limits, tick and label texts), so a live widget answers a slider without
re-plotting, and the kernel-free explorer renders all of its precomputed states with one
figure.

Colour maps are colour-blind safe (cividis, viridis), every axes has a title and axis
labels, and colour limits are fixed so that colours mean the same thing in every state.

Speed (what a reader feels when moving a slider). Laying out and rasterising text is most
of the cost of a matplotlib draw (about 1 ms per short label here), so:

- a view is laid out once, with worst-case labels in place, and then the layout engine
  is switched off and the axis labels pinned (:func:`freeze_layout`);
- the parts that never change (colour bars, axis labels) are drawn once and then pasted
  as pixels (:class:`StaticLayer`);
- labels that change with the data (tokens, shapes in titles) are drawn from cached
  bitmaps, one per distinct string (:class:`TextStamps`); the axes' own tick labels are
  kept up to date (``ax.get_yticklabels()`` tells the truth) but not drawn.

Tick labels longer than :data:`MAX_TICK_CHARS` characters end in an ellipsis so that they
fit the reserved margin. On vector output (PDF, SVG) everything is drawn as ordinary text.

This module imports the math layer and matplotlib (never ``matplotlib.pyplot``).
"""

from __future__ import annotations

import io
import math
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
from matplotlib.text import Text
from matplotlib.transforms import IdentityTransform
from PIL import Image

__all__ = [
    "MAX_TICK_CHARS",
    "tick_label",
    "tick_fontsize",
    "plain_matplotlib",
    "StaticLayer",
    "TextStamps",
    "freeze_layout",
    "NearestImage",
    "HeatmapPanel",
    "figure_png",
    "NotebookFigure",
    "notebook_figure",
]

#: The longest tick label shown in full; longer ones end in an ellipsis.
MAX_TICK_CHARS = 10
#: The tick label the margins are reserved for: a long word of average-to-wide letters.
_WIDEST_LABEL = "n" * MAX_TICK_CHARS


def tick_label(text: str, max_chars: int = MAX_TICK_CHARS) -> str:
    """``text`` shortened to at most ``max_chars`` characters (the last one an ellipsis)."""
    text = str(text)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "\u2026"


def tick_fontsize(n: int) -> float:
    """A tick-label font size (points) that lets ``n`` labels fit along a short axis."""
    if n <= 12:
        return 9.0
    if n <= 20:
        return 7.5
    return 6.0


#: Whether views are being built as plain matplotlib (see :func:`plain_matplotlib`).
_PLAIN = False


@contextmanager
def plain_matplotlib():
    """Build views inside this block as the plain matplotlib idiom would: the layout engine
    runs on every draw, texts are drawn as ordinary text, nothing is pasted as pixels and
    images are resampled by matplotlib. The same panels and the same ``update``; only the
    speed-ups are off. For the benchmark's baseline, never for the book.
    """
    global _PLAIN
    previous, _PLAIN = _PLAIN, True
    try:
        yield
    finally:
        _PLAIN = previous


# ------------------------------------------------------------------ drawing machinery


class StaticLayer(Artist):
    """The parts of a figure that never change, drawn once and then pasted as pixels.

    Added to a figure (lowest z-order, so it is drawn right after the figure background),
    it draws its ``axes`` and ``texts`` into a renderer of its own and keeps the pixels;
    while the canvas size, dpi and background colour stay the same, later draws paste
    those pixels (a memory copy) instead of laying out and rasterising the text again.
    The axes are marked animated and the texts hidden so that the figure does not draw
    them a second time. On renderers without pixels (PDF, SVG) it simply draws them.

    Parameters
    ----------
    axes : sequence of matplotlib.axes.Axes
        Axes drawn whole (e.g. colour bars with fixed limits).
    texts : sequence of matplotlib.text.Text
        Texts that never change (e.g. axis labels pinned by :func:`freeze_layout`).
    """

    def __init__(self, axes=(), texts=()):
        super().__init__()
        self.set_zorder(-1e9)
        self._axes = list(axes)
        self._texts = list(texts)
        for ax in self._axes:
            ax.set_animated(True)  # the figure skips animated axes
        for text in self._texts:
            text.set_visible(False)  # its axis would draw it otherwise
        self._key = None
        self._pixels = None
        self._plain = _PLAIN

    def add(self, *texts) -> None:
        """Draw these artists (texts, legends) with the static parts from now on."""
        for text in texts:
            text.set_visible(False)
            self._texts.append(text)
        self.invalidate()

    def invalidate(self) -> None:
        """Forget the pixels (call it after changing a static part)."""
        self._key = self._pixels = None

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
            # Render into a renderer of our own, never into the one passed in: a dry-run
            # draw (savefig runs one) has drawing switched off and would cache blank pixels.
            own = RendererAgg(int(renderer.width), int(renderer.height), renderer.dpi)
            figure.patch.draw(own)
            self._draw_static(own)
            self._pixels = own.copy_from_bbox(figure.bbox)
            self._key = key
        renderer.restore_region(self._pixels)
        self.stale = False


class TextStamps(Artist):
    """Short texts along one side of an axes, drawn from cached bitmaps.

    Each distinct (text, font size, rotation, dpi) is rasterised once, with matplotlib's
    own text engine, into a small RGBA bitmap; a draw then only pastes bitmaps, about 20
    times cheaper than drawing the texts. On vector renderers the texts are drawn normally.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes the texts belong to (the artist adds itself to it).
    side : {"left", "bottom", "top", "points"}
        "left": row labels, right-aligned left of the axes, centred on data y positions;
        "bottom": column labels below the axes, centred on data x positions (hanging down
        when rotated 90 degrees); "top": one title centred above the axes; "points":
        labels centred above data points (x, y) inside the axes.
    rotation : float
        Text rotation in degrees.
    pad : float
        Gap between the axes and the texts, in points.
    cache : dict, optional
        Bitmap cache to share between several stamps of one figure.
    """

    _CACHE_SIZE = 2048

    def __init__(self, ax, side: str, *, rotation: float = 0.0, pad: float = 3.5,
                 cache: OrderedDict | None = None):
        if side not in ("left", "bottom", "top", "points"):
            raise ValueError(f"side must be 'left', 'bottom', 'top' or 'points', got {side!r}")
        super().__init__()
        self.ax = ax
        self.side = side
        self.rotation = float(rotation)
        self.pad = float(pad)
        self.texts: tuple[str, ...] = ()
        self.positions: tuple[float, ...] = ()
        self.fontsize = 9.0
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
        box = self.ax.bbox
        pad = renderer.points_to_pixels(self.pad)
        if self.side == "top":
            return [((box.x0 + box.x1) / 2, box.y1 + pad)]
        if self.side == "points":
            if not self.positions:
                return []
            return [(x, y + pad) for x, y in self.ax.transData.transform(self.positions)]
        if self.side == "left":
            ys = self.ax.transData.transform(
                np.column_stack([np.zeros(len(self.positions)), self.positions]))[:, 1]
            return [(box.x0 - pad, y) for y in ys]
        xs = self.ax.transData.transform(
            np.column_stack([self.positions, np.zeros(len(self.positions))]))[:, 0]
        return [(x, box.y0 - pad) for x in xs]

    @property
    def _alignment(self) -> tuple[str, str]:
        return {"left": ("right", "center"), "bottom": ("center", "top"),
                "top": ("center", "bottom"), "points": ("center", "bottom")}[self.side]

    def _text_artist(self, text: str, xy) -> Text:
        ha, va = self._alignment
        art = Text(xy[0], xy[1], text, fontsize=self.fontsize, rotation=self.rotation,
                   ha=ha, va=va, color=self.color, transform=IdentityTransform(),
                   parse_math=False)  # a token like "$x$" is shown as typed
        art.set_figure(self.get_figure(root=True))
        return art

    def _bitmap(self, text: str, dpi: float) -> np.ndarray:
        key = (text, self.fontsize, self.rotation, dpi, self.color)
        bitmap = self._cache.get(key)
        if bitmap is not None:
            self._cache.move_to_end(key)
            return bitmap
        art = self._text_artist(text, (0.0, 0.0))
        art.set_horizontalalignment("left")
        art.set_verticalalignment("bottom")
        bbox = art.get_window_extent(RendererAgg(1, 1, dpi), dpi=dpi)
        width, height = math.ceil(bbox.width) + 2, math.ceil(bbox.height) + 2
        own = RendererAgg(width, height, dpi)
        art.set_position((1 - bbox.x0, 1 - bbox.y0))
        art.draw(own)
        # (height, width, 4); draw_image wants the bottom row first
        bitmap = np.asarray(own.buffer_rgba())[::-1].copy()
        self._cache[key] = bitmap
        if len(self._cache) > self._CACHE_SIZE:
            self._cache.popitem(last=False)
        return bitmap

    def draw(self, renderer) -> None:
        if not self.get_visible() or not self.texts:
            return
        anchors = self._anchors(renderer)
        if self._plain or not isinstance(renderer, RendererAgg):
            for text, xy in zip(self.texts, anchors):
                self._text_artist(text, xy).draw(renderer)
            return
        ha, va = self._alignment
        gc = renderer.new_gc()
        try:
            for text, (x, y) in zip(self.texts, anchors):
                bitmap = self._bitmap(text, renderer.dpi)
                height, width = bitmap.shape[:2]
                x0 = {"left": x, "center": x - width / 2, "right": x - width}[ha]
                y0 = {"bottom": y, "center": y - height / 2, "top": y - height}[va]
                renderer.draw_image(gc, round(x0), round(y0), bitmap)
        finally:
            gc.restore()
        self.stale = False


def freeze_layout(figure: Figure, static_axes=(), *, panels=(), static_artists=()
                  ) -> StaticLayer:
    """Lay ``figure`` out once with its layout engine, then fix every position.

    The steps every view shares, in order: run the layout engine (e.g. constrained layout)
    on the figure as it is now; pin each axis label where the engine put it (in axes
    coordinates, so it stays right at any dpi); switch the layout engine off; put the axis
    labels, ``static_axes``, every panel's colour bar and ``static_artists`` (legends,
    fixed texts) into one :class:`StaticLayer`; and :meth:`HeatmapPanel.finish` each panel
    (its tick labels and title drawn from bitmaps from then on). Later draws skip the
    layout, the label placement and the static text, which are most of a draw's cost.

    Put worst-case tick labels and titles in place before calling this (the panels'
    :meth:`~HeatmapPanel.reserve`) so that the margins fit any later labels, and create
    titles with ``set_title(..., y=1.0)`` so that matplotlib does not re-place them on
    every draw. Inside :func:`plain_matplotlib` the layout engine stays on.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
    static_axes : sequence of matplotlib.axes.Axes
        Axes that never change (colour bars with fixed limits, curves drawn once).
    panels : sequence of HeatmapPanel
        Panels to finish; their colour bars are static.
    static_artists : sequence of matplotlib.artist.Artist
        Other parts that never change (legends, fixed texts).

    Returns
    -------
    StaticLayer
        Already added to the figure.
    """
    static_axes = [*static_axes, *(p.colorbar.ax for p in panels)]
    figure.draw_without_rendering()  # runs the layout engine and places the labels
    labels = []
    for ax in figure.axes:
        box = ax.bbox  # in pixels
        for axis in (ax.xaxis, ax.yaxis):
            if not axis.label.get_text():
                continue
            x, y = axis.label.get_position()  # pixels across the axis, axes units along
            if axis is ax.yaxis:
                axis.set_label_coords((x - box.x0) / box.width, y)
            else:
                axis.set_label_coords(x, (y - box.y0) / box.height)
            if ax not in static_axes:
                labels.append(axis.label)
    if not _PLAIN:
        figure.set_layout_engine("none")
    layer = StaticLayer(axes=static_axes, texts=[*labels, *static_artists])
    figure.add_artist(layer)
    for panel in panels:
        panel.finish()
    return layer


# ------------------------------------------------------------------------- heatmaps


def _index_ticks(n: int) -> tuple[list[int], list[str]]:
    """Tick positions and labels 0..n-1 along an axis of ``n`` cells: every 1, 2, 4, 8...
    cell, at most 8 of them."""
    step = 1
    while -(-n // step) > 8:  # ceil(n / step) ticks
        step *= 2
    positions = list(range(0, n, step))
    return positions, [str(p) for p in positions]


class NearestImage(AxesImage):
    """An image drawn by nearest-neighbour indexing in numpy, like matplotlib's own
    ``NonUniformImage``: several times cheaper than ``AxesImage``'s general resampling
    for a small matrix shown large. For an image on a regular grid whose extent fills
    its axes (as every heatmap here does); it draws the same cells as ``imshow(...,
    interpolation="nearest")`` (a pixel on a border between two cells may take the
    neighbouring cell's colour when cells are a few pixels wide).
    """

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

    The image is created once; :meth:`update` changes its data, extent and labels, so the
    matrix may change shape from one update to the next. An empty matrix hides the image
    and shows ``empty_text`` in the middle of the axes instead.

    Call :meth:`reserve` on every panel, then :func:`freeze_layout`, then :meth:`finish`
    (the view builders do this).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes to draw in.
    cmap : str
        A colour-blind-safe colour map name ("cividis", "viridis").
    vmin, vmax : float
        Fixed colour limits.
    xlabel, ylabel : str
        Axis labels.
    colorbar_label : str
        Label of the colour bar.
    col_rotation : float
        Rotation of the column labels, in degrees (90 for words).
    empty_text : str
        Shown when the matrix is empty.
    cache : dict, optional
        Text bitmap cache shared by the panels of one figure.

    Attributes
    ----------
    ax : matplotlib.axes.Axes
    image : matplotlib.image.AxesImage
        Its array is the matrix shown, (m, n).
    colorbar : matplotlib.colorbar.Colorbar
    row_labels, col_labels, title : TextStamps
        The drawn texts (``.texts``); the axes' tick labels and title hold the same texts.
    """

    def __init__(self, ax, *, cmap: str, vmin: float, vmax: float, xlabel: str,
                 ylabel: str, colorbar_label: str, col_rotation: float = 0.0,
                 empty_text: str = "nothing to show", cache: OrderedDict | None = None):
        self.ax = ax
        # imshow's general resampling is most of a heatmap's draw time; nearest-neighbour
        # indexing in numpy draws the same cells several times faster.
        self.image = NearestImage(ax, cmap=cmap, norm=Normalize(vmin, vmax),
                                  interpolation="nearest", extent=(-0.5, 0.5, 0.5, -0.5))
        self.image.set_data(np.zeros((1, 1)))
        ax.add_image(self.image)
        ax.set_xlim(-0.5, 0.5)
        ax.set_ylim(0.5, -0.5)
        ax.set_aspect("auto")
        self.colorbar = ax.get_figure(root=True).colorbar(
            self.image, ax=ax, label=colorbar_label, ticks=[vmin, (vmin + vmax) / 2, vmax])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title("", y=1.0)  # y given: matplotlib does not re-place it per draw
        self.col_rotation = float(col_rotation)
        cache = cache if cache is not None else OrderedDict()
        self.row_labels = TextStamps(ax, "left", cache=cache)
        self.col_labels = TextStamps(ax, "bottom", rotation=col_rotation, cache=cache)
        self.title = TextStamps(ax, "top", pad=mpl.rcParams["axes.titlepad"], cache=cache)
        self.notice = ax.text(0.5, 0.5, empty_text, transform=ax.transAxes, ha="center",
                              va="center", visible=False)
        self._tick_keys: dict[str, tuple] = {}

    def set_ticks(self, which: str, labels: Sequence[str] | None, n: int) -> None:
        """Label axis ``which`` ("x" or "y") of ``n`` cells with ``labels`` (or indices)."""
        # Labels are rebuilt only when they change: a slider that changes only the data
        # (a seed, a scale) costs no label work at all.
        key = (tuple(labels) if labels is not None else None, n)
        if self._tick_keys.get(which) == key:
            return
        self._tick_keys[which] = key
        if labels is None:
            positions, texts = _index_ticks(n)
            size = 9.0
        else:
            positions, texts = list(range(n)), [tick_label(t) for t in labels]
            size = tick_fontsize(n)
        if which == "x":
            self.ax.set_xticks(positions, texts, rotation=self.col_rotation, fontsize=size)
            self.col_labels.set_texts(texts, positions, size)
        else:
            self.ax.set_yticks(positions, texts, fontsize=size)
            self.row_labels.set_texts(texts, positions, size)

    def _set_title(self, title: str) -> None:
        self.ax.title.set_text(title)
        self.title.set_texts([title], fontsize=self.ax.title.get_fontsize())

    def reserve(self, *, rows: bool, cols: bool, n: int = 64) -> None:
        """Put worst-case tick labels and a title in place, drawn by matplotlib, for the
        layout engine to make room for.

        ``rows`` / ``cols`` say whether that axis shows words (else indices 0..n-1, n the
        largest size it will show).
        """
        self.set_ticks("y", [_WIDEST_LABEL] if rows else None, 1 if rows else n)
        self.set_ticks("x", [_WIDEST_LABEL] if cols else None, 1 if cols else n)
        self.ax.title.set_text("reserved: a one-line title")  # its height is what counts
        self._tick_keys.clear()

    def finish(self) -> None:
        """After the layout is frozen: hide the axes' own tick labels, tick marks and title,
        and draw the labels and title from cached bitmaps instead."""
        self.ax.tick_params(left=False, bottom=False, labelleft=False, labelbottom=False)
        self.ax.title.set_visible(False)

    def update(self, data, *, row_labels: Sequence[str] | None = None,
               col_labels: Sequence[str] | None = None, title: str = "",
               cells: tuple[int, int] | None = None) -> None:
        """Show ``data`` in place of the current matrix (labels are shortened to
        :data:`MAX_TICK_CHARS` characters).

        Parameters
        ----------
        data : array_like, shape (m, n)
            The matrix; m or n may be 0 (the panel then shows its empty text).
        row_labels : sequence of str of length m, optional
            Labels of the rows (y ticks); by default the row indices.
        col_labels : sequence of str of length n, optional
            Labels of the columns (x ticks); by default the column indices.
        title : str
            The axes title.
        cells : (int, int), optional
            The (rows, columns) the axes count when ``data`` shows only every n-th cell of
            a larger matrix (its ticks then number the full matrix); default ``data.shape``.
        """
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
            extent = (-0.5, n - 0.5, m - 0.5, -0.5)  # cell (i, j) centred on (j, i)
            self.image.set_extent(extent)
            self.ax.set_xlim(extent[0], extent[1])
            self.ax.set_ylim(extent[2], extent[3])
        self.image.set_visible(not empty)
        self.notice.set_visible(empty)
        self.set_ticks("y", None if empty else row_labels, 0 if empty else m)
        self.set_ticks("x", None if empty else col_labels, 0 if empty else n)
        self._set_title(title)


def figure_png(figure: Figure, dpi: float | None = None, *, palette: bool = False,
               compress_level: int = 6) -> bytes:
    """Draw ``figure`` on an Agg canvas and encode it as PNG (no metadata: reproducible).

    The one PNG encoder of the book: the live lab sends these bytes to the page, the
    explorer stores them.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
        Opaque (a white background); drawn at ``dpi`` (which then stays set).
    dpi : float, optional
        Resolution; by default the figure's own.
    palette : bool
        Quantise to 256 colours: about a third of the bytes, for explorers with many
        states.
    compress_level : int
        zlib level 0-9; the live lab uses 1 (about twice as fast as 6, frames ~15 % larger).

    Returns
    -------
    bytes
        The PNG file.
    """
    canvas = figure.canvas
    if not isinstance(canvas, FigureCanvasAgg):
        canvas = FigureCanvasAgg(figure)
    if dpi is not None and dpi != figure.dpi:
        figure.set_dpi(dpi)  # the layout is in figure fractions: only the pixels change
    canvas.draw()
    rgb = np.asarray(canvas.buffer_rgba())[..., :3]  # (height, width, 3): opaque figures
    image = Image.fromarray(rgb)
    if palette:
        image = image.quantize(colors=256, method=Image.Quantize.FASTOCTREE,
                               dither=Image.Dither.NONE)
    with io.BytesIO() as buffer:
        image.save(buffer, format="png", compress_level=compress_level)
        return buffer.getvalue()


class NotebookFigure(Figure):
    """A Figure that Jupyter and myst-nb show as a PNG. Made without pyplot, a bare Figure
    has only a text representation; this one adds ``_repr_png_`` (no IPython import), so a
    chapter cell can end with a function call that returns it."""

    def _repr_png_(self) -> bytes:
        return figure_png(self)


def notebook_figure(width: float, height: float, dpi: float = 100) -> NotebookFigure:
    """A new :class:`NotebookFigure` of ``width`` x ``height`` inches, constrained layout."""
    return NotebookFigure(figsize=(width, height), dpi=dpi, layout="constrained")
