"""Chapter 4's picture: one attention-weight heatmap per head, and what the heads write.
All h <= MAX_HEADS heads are tiles of one RGBA image, laid out to fill the panel for any h
(:func:`mosaic_layout`): changing h, d or the sentence never re-plots."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from ..scenes.multihead import MAX_HEADS
from .core import HeatmapPanel, TextStamps, freeze_layout, tick_fontsize, tick_label

__all__ = ["HEADS_OUTPUT_COLOR_LIMITS", "OFF_ALPHA", "mosaic_layout", "MultiHeadView",
           "multihead_view"]

#: Colour limits of the output panels; values beyond them saturate the colour scale.
HEADS_OUTPUT_COLOR_LIMITS = (-3.0, 3.0)
#: Opacity of a head that is switched off (its weights are still computed).
OFF_ALPHA = 0.2
#: Height (points) kept above each tile for its "head i" label.
_LABEL_PT = 11.0


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


class MultiHeadView:
    """Chapter 4's picture: a mosaic of per-head weights and two output panels.

    Left, one image holding h small heatmaps, head i's weights (s_q, s_k) (viridis, limits
    [0, 1], rows = queries, columns = keys), labelled "head i" and, when they fit, with the
    tokens along the first column's rows and the last row's columns; a head that is off is
    drawn faded. The heads are colour-mapped into one RGBA mosaic, so h = 16 heads cost one
    image draw, not sixteen. Right: the output of the heads that are on,
    ``sum_{i on} H_i W^O_i + b_o`` (s, d), and what the heads that are off would add,
    ``sum_{i off} H_i W^O_i`` (s, d); their sum is the output. Build it with
    :func:`multihead_view`; change it with :meth:`update` or :meth:`show`.
    """


    def __init__(self, figure: Figure):
        self.figure = figure
        if isinstance(engine := figure.get_layout_engine(), ConstrainedLayoutEngine):
            engine.set(h_pad=0.06)  # room above the titles, which are drawn as stamps
        grid = figure.add_gridspec(2, 2, width_ratios=(1.45, 1.0))
        cache: OrderedDict = OrderedDict()
        self.heads_panel = HeatmapPanel(
            figure.add_subplot(grid[:, 0]), cmap="viridis", vmin=0.0, vmax=1.0,
            xlabel="key j", ylabel="query i", colorbar_label="attention weight",
            col_rotation=90, empty_text="no tokens:\ntype a sentence", cache=cache)
        # its image is the RGBA mosaic (rows*size, cols*size, 4), see mosaic_layout
        self.mosaic, ax = self.heads_panel.image, self.heads_panel.ax
        self.cmap = self.mosaic.get_cmap()  # the weights' colour map
        ax.spines[:].set_visible(False)  # white gaps separate the tiles
        self.tile_labels = TextStamps(ax, "points", pad=1.0, cache=cache)  # "head 1 (off)"
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
        width, height = ax.get_position().size * figure.get_size_inches() * 72
        self.box = (float(width), float(height))  # the mosaic panel's size in points
        self.layout = (1, 1, 1, 2)  # the mosaic_layout shown now

    def show(self, state) -> None:
        """Show a :class:`~attention_book.scenes.multihead.MultiHeadState`."""
        self.update(state.tokens, state.weights, state.on, state.on_output, state.off_output)

    def _label(self, tokens: Sequence[str], on: Sequence[bool]) -> None:
        """"head i" above each tile; the tokens along the rows of the first column's tiles
        and the columns of the last row's tiles, at a size that fits the cells (none when
        they do not fit)."""
        rows, cols, gap, size = self.layout
        h, s = len(on), len(tokens)
        last = h - (h - 1) // cols * cols  # tiles in the last row
        for stamps, cell, n, first in (
                (self.heads_panel.row_labels, self.box[1] / (rows * size), rows, gap),
                (self.heads_panel.col_labels, self.box[0] / (cols * size), last, 0)):
            fontsize = min(tick_fontsize(s), 0.9 * cell)
            shown = s > 0 and fontsize >= 5.0
            stamps.set_texts([tick_label(t) for t in tokens] * n if shown else (),
                             [k * size + first + j for k in range(n) for j in range(s)]
                             if shown else (), fontsize)
        texts = [f"head {i}" + ("" if f else " (off)") for i, f in enumerate(on)]
        fontsize = 8.0 if h <= 9 else 7.0  # a character is about 0.6 fontsize wide
        if self.box[0] / cols < 0.6 * fontsize * max(map(len, texts)):  # "h3", "h3 off"
            texts = [f"h{i}" + ("" if f else " off") for i, f in enumerate(on)]
        xy = [(i % cols * size + (s - 1) / 2, i // cols * size + gap - 0.5) for i in range(h)]
        self.tile_labels.set_texts(texts if s else (), xy if s else (), fontsize)

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
        weights, on_output, off_output = (np.asarray(a, dtype=float)
                                          for a in (weights, on_output, off_output))
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
        self.layout = rows, cols, gap, size = mosaic_layout(h, max(s, 1), self.box)
        rgba = np.full((rows * size, cols * size, 4), 255, dtype=np.uint8)  # white
        # (h, s, s) -> (h, s, s, 4) uint8: a uint8 image is the cheapest one to draw
        colours = self.cmap(np.clip(weights, 0.0, 1.0), bytes=True)
        off = ~np.asarray(on, dtype=bool)  # faded towards white
        colours[off] = (OFF_ALPHA * colours[off] + (1.0 - OFF_ALPHA) * 255).astype(np.uint8)
        for i in range(h):
            r, c = divmod(i, cols)
            rgba[r * size + gap: r * size + gap + s, c * size: c * size + s] = colours[i]
        self.mosaic.set_data(rgba)
        extent = (-0.5, cols * size - 0.5, rows * size - 0.5, -0.5)
        self.mosaic.set_extent(extent)
        ax = self.heads_panel.ax
        ax.set(xlim=extent[:2], ylim=extent[2:])
        self.mosaic.set_visible(s > 0)
        self.heads_panel.notice.set_visible(s == 0)
        self._label(tokens, on)
        title = f"weights of h={h} head{'s' if h > 1 else ''} : (h, s, s) = ({h}, {s}, {s})"
        ax.title.set_text(title)
        self.heads_panel.title.set_texts([title], fontsize=ax.title.get_fontsize())
        d, n_on = on_output.shape[1], int(sum(bool(f) for f in on))
        self.on_panel.update(on_output, row_labels=tokens,
                             title=f"output of {n_on} head(s) on : ({s}, {d})")
        self.off_panel.update(off_output, row_labels=tokens,
                              title=f"added by {h - n_on} head(s) off : ({s}, {d})")


def multihead_view(figure: Figure | None = None) -> MultiHeadView:
    """Build chapter 4's figure (:class:`MultiHeadView`) once on the empty ``figure``; by
    default a new 9.5 x 4.8 inch, 90 dpi, constrained-layout figure (made without pyplot)."""
    if figure is None:
        figure = Figure(figsize=(9.5, 4.8), dpi=90, layout="constrained")
    return MultiHeadView(figure)


VIEWS = {"multihead": multihead_view}
