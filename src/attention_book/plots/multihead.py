"""Chapter 4's picture: one attention-weight heatmap per head, and what the heads write.
All h <= MAX_HEADS heads are tiles of one RGBA image, laid out to fill the panel for any h
(:func:`mosaic_layout`): changing h, d or the sentence never re-plots."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from ..scenes.multihead import MAX_HEADS
from .core import (HeatmapPanel, TextStamps, freeze_layout, tick_fontsize, tick_label,
                   view_factory)

__all__ = ["HEADS_OUTPUT_COLOR_LIMITS", "OFF_ALPHA", "mosaic_layout", "MosaicPanel",
           "MultiHeadView", "multihead_view"]

#: Colour limits of the output panels; values beyond them saturate the colour scale.
HEADS_OUTPUT_COLOR_LIMITS = (-3.0, 3.0)
#: Opacity of a head that is switched off (its weights are still computed).
OFF_ALPHA = 0.2
#: The size (points) of each tile's name, and the height kept above the tile for it.
_TILE_PT, _LABEL_PT = 9.0, 12.0


def mosaic_layout(h: int, s: int, box: tuple[float, float] = (360.0, 250.0)
                  ) -> tuple[int, int, int, int]:
    """Where the heads go in the mosaic: ``(rows, cols, gap, size)``.

    h tiles of s x s cells in a grid of ``rows x cols`` tiles, each with ``gap`` empty
    cells above it (room for its label) and to its right; ``size = s + gap`` is the tile
    pitch in cells. The grid is the one whose cells are largest in a panel of ``box`` =
    (width, height) points, so a few heads fill the panel as well as many do.
    """
    def candidate(cols):
        rows = -(-h // cols)  # ceil(h / cols)
        pitch = box[1] / rows  # points per row of tiles
        gap = max(1, math.ceil(s * _LABEL_PT / max(pitch - _LABEL_PT, 1.0)))
        cell = min(box[0] / (cols * (s + gap)), box[1] / (rows * (s + gap)))
        # the largest cells, then the fewest empty slots (the first such grid on a tie)
        return (round(cell, 1), -(rows * cols - h)), (rows, cols, gap, s + gap)
    return max(map(candidate, range(1, h + 1)), key=lambda c: c[0])[1]


class MosaicPanel(HeatmapPanel):
    """A :class:`HeatmapPanel` whose image holds n <= 16 matrices (s, s) (viridis, [0, 1],
    rows = queries, columns = keys) as the tiles of one RGBA image, laid out by
    :func:`mosaic_layout` to fill the panel: n tiles cost one image draw, not n. Each tile
    is named above by :attr:`tile_labels`; the tokens go along the first column's rows and
    the last row's columns, at a size that fits the cells (none when they do not fit).
    :attr:`box` is the panel's (width, height) in points, :attr:`layout` the layout shown.
    """

    def __init__(self, ax, *, colorbar_label: str, cache: OrderedDict):
        super().__init__(ax, xlabel="key j", ylabel="query i", col_rotation=90,
                         colorbar_label=colorbar_label, cache=cache)
        ax.spines[:].set_visible(False)  # white gaps separate the tiles
        self.cmap = self.image.get_cmap()  # the weights' colour map
        self.tile_labels = TextStamps(ax, "points", pad=1.0, cache=cache)  # "head 1 (off)"
        self.box, self.layout = (360.0, 250.0), (1, 1, 1, 2)

    @staticmethod
    def tiles_of(weights, s: int, n: str, most: int, what: str) -> np.ndarray:
        """``weights`` as an (n, s, s) array; a ValueError unless 1 <= n <= ``most`` (``n``
        names the count, ``what`` the tiles)."""
        weights = np.asarray(weights, dtype=float)
        if weights.ndim != 3 or weights.shape[1:] != (s, s):
            raise ValueError(f"weights must have shape ({n}, s, s) with s={s}, "
                             f"got {weights.shape}")
        if not 1 <= len(weights) <= most:
            raise ValueError(f"the picture shows 1 to {most} {what}, got {n}={len(weights)}")
        return weights

    def finish(self) -> None:
        super().finish()
        width, height = self.ax.get_position().size * self.ax.figure.get_size_inches() * 72
        self.box = (float(width), float(height))  # frozen now

    def show_tiles(self, tiles, tokens: Sequence[str], names: Sequence[str],
                   short_names: Sequence[str], title: str, faded=None) -> None:
        """Show ``tiles`` : (n, s, s), the ``tokens`` (length s), ``names`` (n) above the
        tiles (``short_names`` when they do not fit) and ``title``; the tiles where
        ``faded`` (n bools) is True are drawn faded towards white (:data:`OFF_ALPHA`)."""
        n, s = len(tiles), len(tokens)
        self.layout = rows, cols, gap, size = mosaic_layout(n, max(s, 1), self.box)
        rgba = np.full((rows * size, cols * size, 4), 255, dtype=np.uint8)  # white
        # (n, s, s) -> (n, s, s, 4) uint8: a uint8 image is the cheapest one to draw
        colours = self.cmap(np.clip(tiles, 0.0, 1.0), bytes=True)
        if faded is not None:
            off = np.asarray(faded, dtype=bool)
            colours[off] = (OFF_ALPHA * colours[off] + (1.0 - OFF_ALPHA) * 255).astype(np.uint8)
        for i in range(n):
            r, c = divmod(i, cols)
            rgba[r * size + gap: r * size + gap + s, c * size: c * size + s] = colours[i]
        self.image.set_data(rgba)
        extent = (-0.5, cols * size - 0.5, rows * size - 0.5, -0.5)
        self.image.set_extent(extent)
        self.ax.set(xlim=extent[:2], ylim=extent[2:])
        self.image.set_visible(s > 0)
        self.notice.set_visible(s == 0)
        last = n - (n - 1) // cols * cols  # tiles in the last row
        for stamps, cell, k_max, first in (
                (self.row_labels, self.box[1] / (rows * size), rows, gap),
                (self.col_labels, self.box[0] / (cols * size), last, 0)):
            fontsize = min(tick_fontsize(s), 0.9 * cell)
            shown = s > 0 and fontsize >= 6.0
            stamps.set_texts([tick_label(t) for t in tokens] * k_max if shown else (),
                             [k * size + first + j for k in range(k_max) for j in range(s)]
                             if shown else (), fontsize)
        if self.box[0] / cols < 0.6 * _TILE_PT * max(map(len, names)):  # ~0.6 em a letter
            names = short_names
        xy = [(i % cols * size + (s - 1) / 2, i // cols * size + gap - 0.5) for i in range(n)]
        self.tile_labels.set_texts(names if s else (), xy if s else (), _TILE_PT)
        self.title.show(title)


class MultiHeadView:
    """Chapter 4's picture: a mosaic of per-head weights and two output panels.

    Left, ``heads_panel`` (a :class:`MosaicPanel`): head i's weights (s_q, s_k), labelled
    "head i"; a head that is off is drawn faded. Right: the output of the heads that are
    on, ``sum_{i on} H_i W^O_i + b_o`` (s, d), and what the heads that are off would add,
    ``sum_{i off} H_i W^O_i`` (s, d); their sum is the output. Build it with
    :func:`multihead_view`; change it with :meth:`update` or :meth:`show`.
    """

    def __init__(self, figure: Figure):
        self.figure = figure
        grid = figure.add_gridspec(2, 2, width_ratios=(1.45, 1.0))
        cache: OrderedDict = OrderedDict()
        self.heads_panel = MosaicPanel(figure.add_subplot(grid[:, 0]),
                                       colorbar_label="attention weight", cache=cache)
        self.mosaic, self.cmap = self.heads_panel.image, self.heads_panel.cmap
        self.tile_labels = self.heads_panel.tile_labels
        lo, hi = HEADS_OUTPUT_COLOR_LIMITS
        self.on_panel, self.off_panel = (
            HeatmapPanel(figure.add_subplot(grid[k, 1]), cmap="cividis", vmin=lo, vmax=hi,
                         xlabel=xlabel, ylabel="token", colorbar_label="value",
                         cache=cache, empty_text="no tokens")
            for k, xlabel in ((0, ""), (1, "dimension")))
        panels = (self.heads_panel, self.on_panel, self.off_panel)
        for panel in panels:
            panel.reserve(rows=True, cols=panel is self.heads_panel)
        self.static = freeze_layout(figure, panels=panels)
        self.box = self.heads_panel.box  # the mosaic panel's size in points
        self.layout = self.heads_panel.layout  # the mosaic_layout shown now

    def show(self, state) -> None:
        """Show a :class:`~attention_book.scenes.multihead.MultiHeadState`."""
        self.update(state.tokens, state.weights, state.on, state.on_output, state.off_output)

    def update(self, tokens: Sequence[str], weights, on: Sequence[bool], on_output,
               off_output) -> None:
        """Show new heads, a new sentence or a new choice of heads.

        Parameters
        ----------
        tokens : sequence of str, length s
            Row labels of the panels, column labels of the tiles.
        weights : array_like, shape (h, s, s)
            Each head's attention weights; h <= :data:`MAX_HEADS`.
        on : sequence of bool, length h
            Which heads are switched on (the others are drawn faded).
        on_output, off_output : array_like, shape (s, d)
            ``sum_{i on} H_i W^O_i + b_o`` and ``sum_{i off} H_i W^O_i``.
        """
        s = len(tokens)
        weights = MosaicPanel.tiles_of(weights, s, "h", MAX_HEADS, "heads")
        on_output, off_output = np.asarray(on_output, float), np.asarray(off_output, float)
        h = len(weights)
        if len(on) != h:
            raise ValueError(f"on needs one flag per head ({h}), got {len(on)}")
        if on_output.shape != off_output.shape or on_output.shape[:1] != (s,):
            raise ValueError(f"on_output and off_output must both have shape (s, d) with "
                             f"s={s}, got {on_output.shape} and {off_output.shape}")
        self.heads_panel.show_tiles(
            weights, tokens, [f"head {i}" + ("" if f else " (off)") for i, f in enumerate(on)],
            [f"h{i}" + ("" if f else " off") for i, f in enumerate(on)],
            f"weights of h={h} head{'s' if h > 1 else ''} : (h, s, s) = ({h}, {s}, {s})",
            faded=~np.asarray(on, dtype=bool))
        self.layout = self.heads_panel.layout
        d, n_on = on_output.shape[1], int(sum(bool(f) for f in on))
        self.on_panel.update(on_output, row_labels=tokens,
                             title=f"output of {n_on} head(s) on : ({s}, {d})")
        self.off_panel.update(off_output, row_labels=tokens,
                              title=f"added by {h - n_on} head(s) off : ({s}, {d})")


multihead_view = view_factory(MultiHeadView, 9.5, 5.0, dpi=90, wspace=0.06)

VIEWS = {"multihead": multihead_view}
