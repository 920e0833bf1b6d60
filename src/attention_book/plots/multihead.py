"""Chapter 4's picture: one attention-weight heatmap per head, and what the heads write.

The figure is built once; all h <= :data:`MAX_HEADS` heads are tiles of one RGBA image
whose data is replaced on each change, so changing h, d or the sentence never re-plots.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import matplotlib as mpl
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from .core import HeatmapPanel, NearestImage, TextStamps, freeze_layout

__all__ = [
    "MAX_HEADS",
    "HEADS_OUTPUT_COLOR_LIMITS",
    "mosaic_layout",
    "MultiHeadView",
    "multihead_view",
]

#: The most heads the grid shows (a 4 x 4 grid of axes, built once).
MAX_HEADS = 16
#: Colour limits of the output panels; values beyond them saturate the colour scale.
HEADS_OUTPUT_COLOR_LIMITS = (-3.0, 3.0)
#: Transparency of a head that is switched off (its weights are still computed).
OFF_ALPHA = 0.2


def _nearest_image(ax, data, **kwargs) -> NearestImage:
    """Add a :class:`NearestImage` of ``data`` to ``ax``, filling the axes."""
    image = NearestImage(ax, interpolation="nearest", **kwargs)
    image.set_data(data)
    ax.add_image(image)
    left, right, bottom, top = image.get_extent()
    ax.set_xlim(left, right)  # the image fills the axes (and stays inside for the layout)
    ax.set_ylim(bottom, top)
    return image


class _TileLabels(TextStamps):
    """Texts centred above points given in data coordinates, inside an axes (drawn from
    cached bitmaps, like every :class:`TextStamps`)."""

    def __init__(self, ax, cache):
        super().__init__(ax, "top", pad=1.0, cache=cache)
        self.xy = np.zeros((0, 2))

    def set_labels(self, texts, xy, fontsize: float = 8.0) -> None:
        self.xy = np.asarray(xy, dtype=float).reshape(-1, 2)
        self.set_texts(texts, fontsize=fontsize)

    def _anchors(self, renderer):
        pad = renderer.points_to_pixels(self.pad)
        return [(x, y + pad) for x, y in self.ax.transData.transform(self.xy)]


def mosaic_layout(h: int, s: int) -> tuple[int, int, int, int]:
    """Where the heads go in the mosaic: ``(rows, cols, gap, size)``.

    h tiles of s x s cells in a near-square grid of ``rows x cols`` tiles, separated by
    ``gap`` empty cells (room for a tile's label); ``size`` = s + gap is the tile pitch.
    """
    cols = int(np.ceil(np.sqrt(h)))
    rows = int(np.ceil(h / cols))
    gap = max(1, int(np.ceil(0.3 * s)))
    return rows, cols, gap, s + gap


class MultiHeadView:
    """Chapter 4's picture: a mosaic of per-head weights and two output panels.

    Left, one image holding h small heatmaps side by side, head i's weights (s_q, s_k)
    (viridis, colour limits fixed to [0, 1], rows = queries, columns = keys), in a
    near-square grid; a head that is switched off is drawn faded. The heads are colour-
    mapped into one RGBA mosaic, so h = 16 heads cost one image draw, not sixteen. Right,
    top: the output computed from the heads that are on,
    ``sum_{i on} H_i W^O_i + b_o`` (s, d); bottom: what the heads that are off would add,
    ``sum_{i off} H_i W^O_i`` (s, d). Their sum is the full multi-head output.

    Build it with :func:`multihead_view`; change it with :meth:`update`.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    heads_ax : matplotlib.axes.Axes
    mosaic : matplotlib.image.AxesImage
        Its array is the RGBA mosaic, (rows*(s+gap), cols*(s+gap), 4), see
        :func:`mosaic_layout`.
    weights : numpy.ndarray, shape (h, s, s)
        The weights shown now.
    tile_labels : TextStamps
        ``tile_labels.texts`` is ``("head 0", "head 1 (off)", ...)``.
    on_panel, off_panel : HeatmapPanel
        The output from the heads that are on, and the sum of the others' contributions.
    """

    def __init__(self, figure: Figure):
        self.figure = figure
        engine = figure.get_layout_engine()
        if isinstance(engine, ConstrainedLayoutEngine):
            engine.set(h_pad=0.06)  # room above the titles
        grid = figure.add_gridspec(2, 2, width_ratios=(1.3, 1.0))
        cache: OrderedDict = OrderedDict()
        self.heads_ax = ax = figure.add_subplot(grid[:, 0])
        self._cmap = mpl.colormaps["viridis"]
        self.mosaic = _nearest_image(ax, data=np.full((1, 1, 4), 255, dtype=np.uint8),
                                     extent=(-0.5, 0.5, 0.5, -0.5))
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_aspect("equal", adjustable="box")  # square cells, the box shrinks to fit
        for spine in ax.spines.values():
            spine.set_visible(False)
        ax.set_title("reserved", y=1.0)
        self.tile_labels = _TileLabels(ax, cache)
        self.title = TextStamps(ax, "top", pad=mpl.rcParams["axes.titlepad"], cache=cache)
        mappable = ScalarMappable(Normalize(0.0, 1.0), self._cmap)
        self.weights_colorbar = figure.colorbar(
            mappable, ax=ax, location="bottom", shrink=0.7, aspect=40, ticks=[0, 0.5, 1],
            label="attention weight: row = query i, column = key j")
        ax.set_anchor("N")  # the shrunk box stays under its title (after the colour bar,
        # which sets its parent's anchor)
        lo, hi = HEADS_OUTPUT_COLOR_LIMITS
        self.on_panel = HeatmapPanel(
            figure.add_subplot(grid[0, 1]), cmap="cividis", vmin=lo, vmax=hi,
            xlabel="", ylabel="token", colorbar_label="value", cache=cache,
            empty_text="no tokens")
        self.off_panel = HeatmapPanel(
            figure.add_subplot(grid[1, 1]), cmap="cividis", vmin=lo, vmax=hi,
            xlabel="dimension", ylabel="token", colorbar_label="value", cache=cache,
            empty_text="no tokens")
        for panel in (self.on_panel, self.off_panel):
            panel.reserve(rows=True, cols=False)
        static_axes = [self.weights_colorbar.ax, self.on_panel.colorbar.ax,
                       self.off_panel.colorbar.ax]
        self.static = freeze_layout(figure, static_axes=static_axes)
        for panel in (self.on_panel, self.off_panel):
            panel.finish()
        ax.title.set_visible(False)
        self.weights = np.zeros((0, 0, 0))

    def _mosaic_rgba(self, weights: np.ndarray, on) -> np.ndarray:
        h, s, _ = weights.shape
        rows, cols, gap, size = mosaic_layout(h, s)
        rgba = np.full((rows * size, cols * size, 4), 255, dtype=np.uint8)  # white
        # (h, s, s) -> (h, s, s, 4) uint8: a uint8 image is the cheapest one to draw
        colours = self._cmap(np.clip(weights, 0.0, 1.0), bytes=True)
        off = ~np.asarray(on, dtype=bool)
        # faded towards white
        colours[off] = (OFF_ALPHA * colours[off] + (1.0 - OFF_ALPHA) * 255).astype(np.uint8)
        for i in range(h):
            r, c = divmod(i, cols)
            rgba[r * size + gap: (r + 1) * size, c * size: c * size + s] = colours[i]
        return rgba

    def update(self, tokens: Sequence[str], weights, on: Sequence[bool], on_output,
               off_output) -> None:
        """Show new heads, a new sentence or a new choice of heads.

        Parameters
        ----------
        tokens : sequence of str, length s
            The tokens (row labels of the output panels).
        weights : array_like, shape (h, s, s)
            Each head's attention weights; h <= :data:`MAX_HEADS`.
        on : sequence of bool, length h
            Which heads are switched on (the others are drawn faded).
        on_output : array_like, shape (s, d)
            ``sum_{i on} H_i W^O_i + b_o``.
        off_output : array_like, shape (s, d)
            ``sum_{i off} H_i W^O_i``.
        """
        weights = np.asarray(weights, dtype=float)
        on_output = np.asarray(on_output, dtype=float)
        off_output = np.asarray(off_output, dtype=float)
        s = len(tokens)
        if weights.ndim != 3 or weights.shape[1:] != (s, s):
            raise ValueError(f"weights must have shape (h, s, s) with s={s}, "
                             f"got {weights.shape}")
        h = weights.shape[0]
        if not 1 <= h <= MAX_HEADS:
            raise ValueError(f"the grid shows 1 to {MAX_HEADS} heads, got h={h}")
        if len(on) != h:
            raise ValueError(f"on needs one flag per head ({h}), got {len(on)}")
        if on_output.shape != off_output.shape or on_output.shape[:1] != (s,):
            raise ValueError(f"on_output and off_output must both have shape (s, d) with "
                             f"s={s}, got {on_output.shape} and {off_output.shape}")
        self.weights = weights
        rows, cols, gap, size = mosaic_layout(h, max(s, 1))
        if s:
            self.mosaic.set_data(self._mosaic_rgba(weights, on))
        else:
            self.mosaic.set_data(np.full((rows * size, cols * size, 4), 255, dtype=np.uint8))
        extent = (-0.5, cols * size - 0.5, rows * size - 0.5, -0.5)
        self.mosaic.set_extent(extent)
        self.heads_ax.set_xlim(extent[0], extent[1])
        self.heads_ax.set_ylim(extent[2], extent[3])
        texts, xy = [], []
        for i in range(h):
            r, c = divmod(i, cols)
            texts.append(f"head {i}" if on[i] else f"head {i} (off)")
            xy.append((c * size + (s - 1) / 2, r * size + gap - 0.5))
        self.tile_labels.set_labels(texts, xy, fontsize=8.0 if h <= 9 else 7.0)
        d = on_output.shape[1] if on_output.ndim == 2 else 0
        n_on = int(sum(bool(f) for f in on))
        title = f"weights of h={h} heads : (h, s, s) = ({h}, {s}, {s})"
        self.heads_ax.title.set_text(title)
        self.title.set_texts([title], fontsize=self.heads_ax.title.get_fontsize())
        self.on_panel.update(on_output, row_labels=tokens,
                             title=f"output of {n_on} head(s) on : ({s}, {d})")
        self.off_panel.update(off_output, row_labels=tokens,
                              title=f"added by {h - n_on} head(s) off : ({s}, {d})")


def multihead_view(figure: Figure | None = None) -> MultiHeadView:
    """Build chapter 4's figure once: a mosaic of per-head weights and two outputs.

    Parameters
    ----------
    figure : matplotlib.figure.Figure, optional
        An empty figure; by default a new 9 x 4.4 inch figure (90 dpi) with constrained layout
        (made without pyplot).

    Returns
    -------
    MultiHeadView
        Call its ``update(tokens, weights, on, on_output, off_output)``.
    """
    if figure is None:
        figure = Figure(figsize=(9.0, 4.4), dpi=90, layout="constrained")
    return MultiHeadView(figure)
