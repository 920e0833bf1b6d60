"""Chapter 6's pictures: the mask editor's view (:class:`MaskingView`) and the chapter's
weight figures (:func:`weights_figure`: the right and the wrong way to mask, a padded batch)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import matplotlib as mpl
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .core import HeatmapPanel, freeze_layout, token_maps, view_factory

__all__ = ["MAX_CROSSED", "MaskingView", "masking_view", "weights_figure"]

_MASKED_GREY = "0.9"  # masked scores: light grey, crossed (not colour alone)


def _crosses(ax, color: str) -> Line2D:
    """An empty set of x markers in ``ax``'s data coordinates (one per masked cell)."""
    line = Line2D([], [], linestyle="none", marker="x", color=color, markeredgewidth=1.2)
    ax.add_line(line)
    return line


#: The largest s whose masked cells are crossed (beyond it the crosses merge into a blur;
#: the grey of the masked scores still marks them).
MAX_CROSSED = 16


def _set_crosses(line: Line2D, mask) -> None:
    """Put a cross on every False cell of ``mask`` (s_q, s_k), sized to the cells (none
    when it has more than :data:`MAX_CROSSED` rows)."""
    mask = np.asarray(mask, dtype=bool)
    rows, cols = np.nonzero(~mask if len(mask) <= MAX_CROSSED else np.ones((0, 0), bool))
    line.set_data(cols, rows)  # cell (i, j) is centred on (x=j, y=i)
    line.set_markersize(max(2.0, min(8.0, 60.0 / max(*np.shape(mask), 1))))


class MaskingView:
    """The mask editor's picture: the scores (s, s) with masked cells grey and crossed, the
    weights (s, s) with the masked cells crossed, and the output (s, d_k), side by side.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    scores_panel, weights_panel, output_panel : HeatmapPanel
        Their ``image`` arrays: the scores (s, s) with masked cells NaN (drawn grey), the
        weights (s, s), the output (s, d_k).
    score_crosses, weight_crosses : matplotlib.lines.Line2D
        One x marker per masked cell (for s up to :data:`MAX_CROSSED`).
    static : StaticLayer
    """

    def __init__(self, figure: Figure):
        self.figure = figure
        ax_s, ax_w, ax_o = figure.subplots(1, 3, width_ratios=(1.0, 1.0, 0.62))
        cache: OrderedDict = OrderedDict()
        common = dict(col_rotation=90, cache=cache)
        self.scores_panel = HeatmapPanel(
            ax_s, cmap="cividis", vmin=-3.0, vmax=3.0, xlabel="key j", ylabel="query i",
            colorbar_label=r"score $q_i\cdot k_j/\sqrt{d_k}$ (grey: masked)", **common)
        self.scores_panel.image.set_cmap(
            mpl.colormaps["cividis"].with_extremes(bad=_MASKED_GREY))
        self.weights_panel = HeatmapPanel(
            ax_w, xlabel="key j", ylabel="", colorbar_label="weight (\u00d7: masked)", **common)
        self.output_panel = HeatmapPanel(
            ax_o, cmap="cividis", vmin=-1.5, vmax=1.5, xlabel="dimension", ylabel="",
            colorbar_label=r"output = weights $\cdot\, V$", **common)
        self.score_crosses = _crosses(ax_s, "black")
        self.weight_crosses = _crosses(ax_w, "white")
        panels = (self.scores_panel, self.weights_panel, self.output_panel)
        for panel in panels:  # words down every panel, across the two (s, s) ones
            panel.reserve(rows=True, cols=panel is not self.output_panel, n=8)
        self.static = freeze_layout(figure, panels=panels)

    def show(self, state) -> None:
        """Show a :class:`~attention_book.scenes.masking.MaskingState`."""
        sums, live = state.row_sums, state.mask.any(axis=-1)  # (s,), (s,)
        empty = f", {int((~live).sum())} empty rows 0" if (~live).any() else ""
        rows = ("" if not state.s else "all rows empty: 0" if not live.any() else
                f"rows sum to 1{empty}" if np.allclose(sums[live], 1) else
                f"row sums {sums.min():.2f}..{sums.max():.2f}")
        how = "\u2212\u221e before softmax" if state.method == "before" else "0 after softmax"
        self.update(state.tokens, state.scores, state.mask, state.weights, state.output,
                    weights_title=f"weights ({how}): {rows}")

    def update(self, tokens: Sequence[str], scores, mask, weights, output, *,
               weights_title: str = "weights") -> None:
        """Show one mask.

        Parameters
        ----------
        tokens : sequence of str, length s
        scores : array_like, shape (s, s)
            Before masking.
        mask : array_like of bool, shape (s, s)
            True = may attend.
        weights : array_like, shape (s, s)
        output : array_like, shape (s, d_k)
        weights_title : str
        """
        s = len(tokens)
        scores, weights = np.asarray(scores, float), np.asarray(weights, float)
        mask, output = np.asarray(mask, dtype=bool), np.asarray(output, float)
        if not (scores.shape == weights.shape == mask.shape == (s, s)
                and output.ndim == 2 and len(output) == s):
            raise ValueError(f"expected scores, mask, weights (s, s) and output (s, d_k) with "
                             f"s={s} tokens, got {scores.shape}, {mask.shape}, "
                             f"{weights.shape}, {output.shape}")
        hidden = int((~mask).sum())
        self.scores_panel.update(np.where(mask, scores, np.nan), row_labels=tokens,
                                 col_labels=tokens, title=f"scores ({s}, {s}): {hidden} masked")
        self.weights_panel.update(weights, row_labels=tokens, col_labels=tokens,
                                  title=weights_title)
        self.output_panel.update(output, row_labels=tokens,
                                 title=f"output ({s}, {output.shape[1]})")
        _set_crosses(self.score_crosses, mask)
        _set_crosses(self.weight_crosses, mask)


masking_view = view_factory(MaskingView, 9.5, 3.8)

VIEWS = {"masking": masking_view}


# ------------------------------------------------------- the chapter's static figures
def weights_figure(matrices, titles: Sequence[str], labels, masks=None, *,
                   label: str = "weight") -> Figure:
    """A row of (s, s) matrices on one colour scale [0, 1] (viridis): each row's sum is
    written at its right, and the False cells of each mask are crossed.

    Parameters
    ----------
    matrices : sequence of array_like, each shape (s, s)
        Weights (or a mask as 0/1: its row sums count the keys each query may see).
    titles : sequence of str
        One per matrix.
    labels : sequence of str, or sequence of sequences of str
        The tokens (rows and columns): one list for all matrices, or one per matrix.
    masks : sequence of (array_like of bool, shape (s, s), or None), optional
        True = may attend; one per matrix.
    label : str
        The colour bar's label.

    Returns
    -------
    matplotlib.figure.Figure
        Shown as a PNG by Jupyter.
    """
    matrices = [np.asarray(m, dtype=float) for m in matrices]
    n = len(matrices)
    if isinstance(labels[0], str):
        labels = [labels] * n
    masks = list(masks) if masks is not None else [None] * n
    if not len(titles) == len(labels) == len(masks) == n:
        raise ValueError(f"need one title, label list and mask per matrix ({n} matrices)")
    fig, axes = token_maps((min(2.9 * n + 1.0, 9.5), 3.6), matrices, titles, labels,
                           label=label)
    for ax, matrix, mask in zip(axes, matrices, masks):
        for i, total in enumerate(matrix.sum(axis=1)):
            ax.text(len(matrix) - 0.35, i, f"\u03a3 {total:.2f}".rstrip("0").rstrip("."),
                    va="center", fontsize=9)
        if mask is not None:
            _set_crosses(_crosses(ax, "white"), mask)
    return fig
