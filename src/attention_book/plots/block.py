"""Chapter 7's pictures: the lab's view (the residual stream's norm through a stack of
blocks, one attention map per layer) and the chapter's two figures over many seeds."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ..scenes.block import LN_LABELS, MAX_DEPTH
from .core import LinePanel, freeze_layout, notebook_figure, view_factory
from .multihead import MosaicPanel

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
    heads; viridis, [0, 1]) as tiles of one RGBA image, labelled "layer l"
    (:class:`~attention_book.plots.multihead.MosaicPanel`).

    Attributes
    ----------
    figure, norm_ax, static
    lines : dict of bool to matplotlib.lines.Line2D
        The norms of post-LN (False) and pre-LN (True); ``sqrt_d_line`` the dashed one.
    maps_panel : MosaicPanel
        Its image, ``mosaic``, is (rows*size, cols*size, 4) uint8, laid out as its
        ``layout``.
    tile_labels : TextStamps
        ``tile_labels.texts`` is ``("layer 1", ...)``.
    """

    def __init__(self, figure: Figure):
        self.figure = figure
        ax, ax_maps = figure.subplots(1, 2, width_ratios=(1.0, 1.2))
        cache: OrderedDict = OrderedDict()
        self.norm_ax = ax
        ax.set(yscale="log", ylim=NORM_LIMITS, xlim=(0, 2))
        ax.patch.set_visible(False)  # the legend is pasted below the axes: let it through
        ax.hlines(_Y_TICKS, 0, 1, transform=ax.get_yaxis_transform(), color="#e4e4e4",
                  linewidth=0.6, zorder=0)  # the grid: one artist
        self.sqrt_d_line = ax.axhline(np.sqrt(8), color="0.35", linestyle="--",
                                      linewidth=1.0, label=r"$\sqrt{d}$")
        self.lines = {nf: ax.add_line(Line2D([], [], color=LN_COLORS[nf], marker=_MARKERS[nf],
                                             markersize=3.5, label=LN_LABELS[nf]))
                      for nf in (False, True)}
        self.legend = ax.legend(handles=[*self.lines.values(), self.sqrt_d_line],
                                loc="upper left", fontsize=9, framealpha=0.9)
        self.norm_panel = LinePanel(
            ax, xlabel="after block l (half steps: after its attention)",
            ylabel="mean \u2016token\u2016 (log scale)", yticks=_Y_TICKS, cache=cache,
            widest_x="12")
        self.x_labels, self.y_labels = self.norm_panel.x_labels, self.norm_panel.y_labels
        self.norm_title = self.norm_panel.title
        self.maps_panel = MosaicPanel(ax_maps, cache=cache,
                                      colorbar_label="attention weight (mean over heads)")
        self.mosaic, self.cmap = self.maps_panel.image, self.maps_panel.cmap
        self.tile_labels = self.maps_panel.tile_labels
        self.maps_panel.reserve(rows=True, cols=True)
        self.static = freeze_layout(figure, panels=(self.maps_panel,),
                                    static_artists=[self.legend])
        self.norm_panel.finish()
        self.box = self.maps_panel.box
        self._depth = None

    def show(self, state) -> None:
        """Show a :class:`~attention_book.scenes.block.BlockState`."""
        self.update(state.tokens, state.norms, state.norm_first, state.weights,
                    residual=state.residual, d=state.d)

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
        s = len(tokens)
        weights = MosaicPanel.tiles_of(weights, s, "L", MAX_DEPTH, "layers")
        depth = len(weights)
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
            self.norm_panel.set_xticks(ticks, [str(t // 2) for t in ticks])
        self.norm_panel.title.show(
            f"residual stream, L = {depth}, residuals {'on' if residual else 'off'}")
        self.maps_panel.show_tiles(
            weights, tokens, [f"layer {i + 1}" for i in range(depth)],
            [f"L{i + 1}" for i in range(depth)],
            f"attention of each layer : (L, s, s) = ({depth}, {s}, {s})")


block_view = view_factory(BlockView, 9.5, 4.4, dpi=90, wspace=0.06)

VIEWS = {"block": block_view}


# ------------------------------------------------------- the chapter's static figures
_BAND_COLORS = ("#00204c", "#c9a227", "#31688e", "#35b779")
_BAND_STYLES = ("-", "-", "--", "--")


def _band_figure(curves: Mapping, *, step: float, xlabel: str, ylabel: str, title: str,
                 reference: tuple[float, str], log: bool) -> Figure:
    """Median over seeds (line) and 10th..90th percentile (band) of each (n_seeds, n)
    array, the points ``step`` apart along x."""
    fig = notebook_figure(6.8, 3.8)
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
    ax.legend(fontsize=9, loc="best", title="median, band: 10th to 90th percentile",
              title_fontsize=9)
    return fig


def gain_figure(gains: Mapping) -> Figure:
    """The Jacobian gain ``||J_l||_F / sqrt(s d)`` after each block l (log scale): median
    and 10th..90th percentile band of each setting's (n_seeds, L + 1) array of
    :func:`~attention_book.block.jacobian_gain` values (at most four settings)."""
    n = len(next(iter(gains.values())))
    return _band_figure(gains, step=1.0, xlabel="after block l (0 = the input)",
                        ylabel=r"gain $\Vert J\Vert\,/\sqrt{s\,d}$ (log scale)",
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
                        reference=(float(np.sqrt(d)), rf"$\sqrt{{d}}$ = {np.sqrt(d):.2f}"))
