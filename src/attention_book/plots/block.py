"""Chapter 7's pictures: the lab's view (the residual stream's norm through a stack of
blocks, one attention map per layer) and the chapter's two figures over many seeds."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.lines import Line2D

from ..scenes.block import LN_LABELS, MAX_DEPTH
from .core import (RESERVED_TITLE, HeatmapPanel, NotebookFigure, TextStamps, freeze_layout,
                   tick_fontsize, tick_label)
from .multihead import mosaic_layout

__all__ = ["NORM_LIMITS", "LN_COLORS", "BlockView", "block_view", "gain_figure",
           "stream_norm_figure"]

#: The norm panel's (log) y range; the lab's norms stay inside it for seeds 0..20.
NORM_LIMITS = (0.25, 64.0)
#: Line colours of post-LN (False) and pre-LN (True), from cividis (and markers o, s).
LN_COLORS = {False: "#00204c", True: "#c9a227"}
_MARKERS = {False: "o", True: "s"}
_Y_TICKS = (0.25, 1.0, 4.0, 16.0, 64.0)


class BlockView:
    """Chapter 7's lab picture, built once.

    Left, the mean norm of a token's vector in the residual stream after every sub-layer
    (x at 0, block l's attention at 2l - 1 and its feed-forward network at 2l), for
    post-LN and pre-LN with the same weights, on a log scale, with sqrt(d) dashed; the
    chosen setting is drawn thick. Right, each layer's attention weights (mean over its
    heads; viridis, [0, 1]) as tiles of one RGBA image, labelled "layer l", laid out by
    :func:`~attention_book.plots.multihead.mosaic_layout`.

    Attributes
    ----------
    figure, norm_ax, static
    lines : dict of bool to matplotlib.lines.Line2D
        The norms of post-LN (False) and pre-LN (True); ``sqrt_d_line`` the dashed one.
    maps_panel : HeatmapPanel
        Its image, ``mosaic``, is (rows*size, cols*size, 4) uint8, laid out as ``layout``.
    tile_labels : TextStamps
        ``tile_labels.texts`` is ``("layer 1", ...)``.
    """


    def __init__(self, figure: Figure):
        self.figure = figure
        engine = figure.get_layout_engine()
        if isinstance(engine, ConstrainedLayoutEngine):
            engine.set(wspace=0.06, h_pad=0.06)
        ax, ax_maps = figure.subplots(1, 2, width_ratios=(1.0, 1.2))
        cache: OrderedDict = OrderedDict()
        self.norm_ax = ax
        ax.set_yscale("log")
        ax.set(ylim=NORM_LIMITS, xlim=(0, 2), ylabel="mean \u2016token\u2016 (log scale)",
               xlabel="after block l (half steps: after its attention)")
        ax.set_title("", y=1.0)
        ax.spines[["top", "right"]].set_visible(False)
        ax.patch.set_visible(False)  # the legend is pasted below the axes: let it through
        ax.hlines(_Y_TICKS, 0, 1, transform=ax.get_yaxis_transform(), color="#e4e4e4",
                  linewidth=0.6, zorder=0)  # the grid: one artist
        self.sqrt_d_line = ax.axhline(np.sqrt(8), color="0.35", linestyle="--",
                                      linewidth=1.0, label="\u221ad")
        self.lines = {nf: Line2D([], [], color=LN_COLORS[nf], marker=_MARKERS[nf],
                                 markersize=3.5, label=LN_LABELS[nf]) for nf in (False, True)}
        for line in self.lines.values():
            ax.add_line(line)
        self.legend = ax.legend(handles=[*self.lines.values(), self.sqrt_d_line],
                                loc="upper left", fontsize=7, framealpha=0.9)
        self.x_labels = TextStamps(ax, "bottom", cache=cache)
        self.y_labels = TextStamps(ax, "left", cache=cache)
        self.norm_title = TextStamps(ax, "top", pad=6.0, cache=cache)
        ax.set_xticks([0, 24], ["0", "12"])  # room for the widest labels
        ax.set_yticks(_Y_TICKS, [f"{y:g}" for y in _Y_TICKS])
        ax.title.set_text(RESERVED_TITLE)
        self.maps_panel = HeatmapPanel(
            ax_maps, cmap="viridis", vmin=0.0, vmax=1.0, xlabel="key j", ylabel="query i",
            colorbar_label="attention weight (mean over heads)", col_rotation=90,
            empty_text="no tokens:\ntype a sentence", cache=cache)
        self.mosaic, self.cmap = self.maps_panel.image, self.maps_panel.image.get_cmap()
        for spine in ax_maps.spines.values():  # white gaps separate the tiles
            spine.set_visible(False)
        self.tile_labels = TextStamps(ax_maps, "points", pad=1.0, cache=cache)
        self.maps_panel.reserve(rows=True, cols=True)
        self.static = freeze_layout(figure, panels=(self.maps_panel,),
                                    static_artists=[self.legend])
        self.y_labels.set_texts([f"{y:g}" for y in _Y_TICKS], _Y_TICKS)  # data y (log axis)
        ax.title.set_visible(False)
        ax.xaxis.set_visible(False)  # tick labels are stamps, axis labels static pixels
        ax.yaxis.set_visible(False)
        width, height = ax_maps.get_position().size * figure.get_size_inches() * 72
        self.box = (float(width), float(height))
        self.layout = (1, 1, 1, 2)
        self._depth = None

    def show(self, state) -> None:
        """Show a :class:`~attention_book.scenes.block.BlockState`."""
        self.update(state.tokens, state.norms, state.norm_first, state.weights,
                    residual=state.residual, d=state.d)

    def _mosaic_rgba(self, weights: np.ndarray) -> np.ndarray:
        n, s, _ = weights.shape
        rows, cols, gap, size = self.layout
        rgba = np.full((rows * size, cols * size, 4), 255, dtype=np.uint8)  # white
        colours = self.cmap(np.clip(weights, 0.0, 1.0), bytes=True)  # (n, s, s, 4) uint8
        for i in range(n):
            r, c = divmod(i, cols)
            rgba[r * size + gap: r * size + gap + s, c * size: c * size + s] = colours[i]
        return rgba

    def _label_tiles(self, tokens: Sequence[str], n: int) -> None:
        """"layer l" above each tile; the tokens along the first column's rows and the last
        row's columns when they fit."""
        rows, cols, gap, size = self.layout
        s = len(tokens)
        last = n - (n - 1) // cols * cols  # tiles in the last row
        for stamps, cell, k_max, first in (
                (self.maps_panel.row_labels, self.box[1] / (rows * size), rows, gap),
                (self.maps_panel.col_labels, self.box[0] / (cols * size), last, 0)):
            fontsize = min(tick_fontsize(s), 0.9 * cell)
            shown = s > 0 and fontsize >= 5.0
            stamps.set_texts([tick_label(t) for t in tokens] * k_max if shown else (),
                             [k * size + first + j for k in range(k_max) for j in range(s)]
                             if shown else (), fontsize)
        texts = [f"layer {i + 1}" for i in range(n)]
        if self.box[0] / cols < 0.6 * 8.0 * len(texts[-1]):  # a character ~0.6 fontsize
            texts = [f"L{i + 1}" for i in range(n)]
        xy = [(i % cols * size + (s - 1) / 2, i // cols * size + gap - 0.5) for i in range(n)]
        self.tile_labels.set_texts(texts if s else (), xy if s else (), 8.0)

    def update(self, tokens: Sequence[str], norms: Mapping, norm_first: bool, weights, *,
               residual: bool = True, d: int = 8) -> None:
        """Show a new stack, sentence or setting.

        Parameters
        ----------
        tokens : sequence of str, length s
        norms : mapping of bool to array_like, each shape (2 L + 1,)
            The stream's mean token norm for post-LN (False) and pre-LN (True); empty
            arrays when s = 0.
        norm_first : bool
            The setting drawn thick.
        weights : array_like, shape (L, s, s)
            Each layer's attention weights (mean over heads); 1 <= L <= MAX_DEPTH.
        residual, d
            Said in the title; where the dashed sqrt(d) line goes.
        """
        weights = np.asarray(weights, dtype=float)
        s = len(tokens)
        if weights.ndim != 3 or weights.shape[1:] != (s, s):
            raise ValueError(f"weights must have shape (L, s, s) with s={s}, "
                             f"got {weights.shape}")
        depth = weights.shape[0]
        if not 1 <= depth <= MAX_DEPTH:
            raise ValueError(f"the picture shows 1 to {MAX_DEPTH} layers, got L={depth}")
        for nf, line in self.lines.items():
            y = np.asarray(norms[nf], dtype=float)
            if y.shape not in ((2 * depth + 1,), (0,)):
                raise ValueError(f"norms[{nf}] must have shape (2 L + 1,) = "
                                 f"({2 * depth + 1},), got {y.shape}")
            line.set_data(np.arange(len(y)), y)
            chosen = nf == bool(norm_first)
            line.set(linewidth=2.4 if chosen else 1.0, alpha=1.0 if chosen else 0.55,
                     zorder=3 if chosen else 2)
        self.sqrt_d_line.set_ydata([np.sqrt(d)] * 2)
        if depth != self._depth:  # x from 0 to 2 L, a tick after each block
            self._depth, ticks = depth, list(range(0, 2 * depth + 1, 2))
            self.norm_ax.set_xlim(-0.4, 2 * depth + 0.4)
            self.norm_ax.set_xticks(ticks, [str(t // 2) for t in ticks])
            self.x_labels.set_texts([str(t // 2) for t in ticks], ticks)
        title = f"residual stream, L = {depth}, residuals {'on' if residual else 'off'}"
        self.norm_ax.title.set_text(title)
        self.norm_title.set_texts([title], fontsize=self.norm_ax.title.get_fontsize())
        self.layout = rows, cols, gap, size = mosaic_layout(depth, max(s, 1), self.box)
        self.mosaic.set_data(self._mosaic_rgba(weights))
        extent = (-0.5, cols * size - 0.5, rows * size - 0.5, -0.5)
        self.mosaic.set_extent(extent)
        ax = self.maps_panel.ax
        ax.set_xlim(extent[0], extent[1])
        ax.set_ylim(extent[2], extent[3])
        self.mosaic.set_visible(s > 0)
        self.maps_panel.notice.set_visible(s == 0)
        self._label_tiles(tokens, depth)
        title = f"attention of each layer : (L, s, s) = ({depth}, {s}, {s})"
        ax.title.set_text(title)
        self.maps_panel.title.set_texts([title], fontsize=ax.title.get_fontsize())


def block_view(figure: Figure | None = None) -> BlockView:
    """Build chapter 7's lab figure once (see :class:`BlockView`) in ``figure``, by default
    a new 9.5 x 4.2 inch figure at 90 dpi with constrained layout (no pyplot)."""
    if figure is None:
        figure = Figure(figsize=(9.5, 4.2), dpi=90, layout="constrained")
    return BlockView(figure)


VIEWS = {"block": block_view}


# ------------------------------------------------------- the chapter's static figures


_BAND_COLORS = ("#00204c", "#c9a227", "#31688e", "#35b779")
_BAND_STYLES = ("-", "-", "--", "--")


def _band_figure(curves: Mapping, *, step: float, xlabel: str, ylabel: str, title: str,
                 reference: tuple[float, str], log: bool) -> Figure:
    """Median over seeds (line) and 10th..90th percentile (band) of each (n_seeds, n)
    array, the points ``step`` apart along x."""
    fig = NotebookFigure(figsize=(6.8, 3.6), dpi=100, layout="constrained")
    ax = fig.subplots()
    for (label, values), color, style in zip(curves.items(), _BAND_COLORS, _BAND_STYLES):
        values = np.asarray(values, dtype=float)  # (n_seeds, n)
        x = np.arange(values.shape[1]) * step
        low, high = np.percentile(values, [10, 90], axis=0)  # (n,) each
        ax.fill_between(x, low, high, color=color, alpha=0.15, linewidth=0)
        ax.plot(x, np.median(values, axis=0), color=color, linestyle=style, marker="o",
                markersize=3, label=label)
    ax.axhline(reference[0], color="0.35", linestyle=":", linewidth=1.0, label=reference[1])
    if log:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.set_xticks(range(0, int(round(x[-1])) + 1))
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend(fontsize=7.5, loc="best", title="median, band: 10th to 90th percentile",
              title_fontsize=7.5)
    return fig


def gain_figure(gains: Mapping) -> Figure:
    """The Jacobian gain ``||J_l||_F / sqrt(s d)`` after each block l (log scale): median
    and 10th..90th percentile band of each setting's (n_seeds, L + 1) array of
    :func:`~attention_book.block.jacobian_gain` values (at most four settings)."""
    n = len(next(iter(gains.values())))
    return _band_figure(gains, step=1.0, xlabel="after block l (0 = the input)",
                        ylabel="gain \u2016J\u2016 / \u221a(s d) (log scale)",
                        title=f"how much of a change to x reaches block l ({n} seeds)",
                        reference=(1.0, "1 = the identity"), log=True)


def stream_norm_figure(norms: Mapping, d: int) -> Figure:
    """The residual stream's mean token norm after every sub-layer: median and 10th..90th
    percentile band of each setting's (n_seeds, 2 L + 1) array of
    :func:`~attention_book.block.stream_norms` values, with sqrt(d) dotted."""
    n = len(next(iter(norms.values())))
    return _band_figure(norms, step=0.5,
                        xlabel="after block l (half steps: after its attention)",
                        ylabel="mean \u2016token\u2016", log=False,
                        title=f"the residual stream's norm ({n} seeds)",
                        reference=(float(np.sqrt(d)), f"\u221ad = {np.sqrt(d):.2f}"))
