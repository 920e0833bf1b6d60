"""Chapter 9's pictures: the pretrained lab's view (:class:`PretrainedView`) and the
chapter's figures: every head's scores as (layer, head) grids, several heads' weights side
by side, one score taken apart dimension by dimension, and the spread of many heads."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence

import matplotlib as mpl
import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from ..scenes.pretrained import SCORE_LABELS
from .attention import thin_labels
from .core import (RESERVED_TITLE, HeatmapPanel, NotebookFigure, TextStamps, freeze_layout,
                   notebook_figure)

__all__ = ["PretrainedView", "pretrained_view", "head_scores_figure", "head_maps_figure",
           "neuron_view_figure", "entropy_figure"]

_DARK, _LIGHT, _ACCENT = "#1f5fa8", "#9dbfe3", "#ff3b30"  # blue, pale blue, red outline


def _bezier(x0: float, x1: float, n: int = 24) -> np.ndarray:
    """Points (n, 2) of the cubic Bezier curve with control points (x0, 1), (x0, 0.5),
    (x1, 0.5), (x1, 0): from the query above down to key x1, vertical at both ends."""
    t = np.linspace(0.0, 1.0, n)[:, None]  # (n, 1)
    basis = np.hstack([(1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t**2, t**3])  # (n, 4)
    return basis @ np.array([[x0, 1.0], [x0, 0.5], [x1, 0.5], [x1, 0.0]])  # (n, 4) @ (4, 2)


class PretrainedView:
    """The pretrained lab's picture.

    Left: the head's weights (T, T) (viridis, 0..1), tokens on both axes, the query's row
    outlined. Top right: arcs from the query (above) to every token (below), width and
    colour by weight. Bottom right: the head's scores on this sentence (dark bars) and
    averaged over the gallery (pale bars), all between 0 and 1.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    heatmap : HeatmapPanel
        ``heatmap.image`` shows the weights (T, T).
    row_box : matplotlib.patches.Rectangle
    arcs : matplotlib.collections.LineCollection
        One curve per key.
    sentence_bars, gallery_bars : list of matplotlib.patches.Rectangle
        One bar per score of :data:`~attention_book.scenes.pretrained.SCORE_LABELS`;
        the width is the score.
    """

    #: 216 explorer states: 256-colour PNGs at a low resolution keep the page light.

    def __init__(self, figure: Figure):
        self.figure = figure
        if figure.get_layout_engine() is not None:  # room above the titles (see RESERVED_TITLE:
            figure.get_layout_engine().set(h_pad=0.1)  # the stamps still reached row 0)
        grid = figure.add_gridspec(2, 2, width_ratios=(1.2, 1.0))
        ax_heat, ax_arcs = figure.add_subplot(grid[:, 0]), figure.add_subplot(grid[0, 1])
        ax_bars = figure.add_subplot(grid[1, 1])
        cache: OrderedDict = OrderedDict()
        self.heatmap = HeatmapPanel(
            ax_heat, cmap="viridis", vmin=0.0, vmax=1.0, xlabel="", ylabel="",  # in the title
            colorbar_label="weight (row sums to 1)", col_rotation=90,
            empty_text="no tokens:\ntype a sentence", cache=cache)
        self.row_box = Rectangle((-0.5, -0.5), 1, 1, fill=False, ec=_ACCENT, lw=1.8)
        ax_heat.add_patch(self.row_box)
        self.arcs = LineCollection([], capstyle="round")
        self.key_nodes = Line2D([], [], marker="o", ms=3, ls="none", color="0.3")
        self.query_node = Line2D([], [], marker="o", ms=7, ls="none", color=_ACCENT)
        ax_arcs.add_collection(self.arcs)
        ax_arcs.add_line(self.key_nodes)
        ax_arcs.add_line(self.query_node)
        ax_arcs.set_ylim(-0.12, 1.12)
        ax_arcs.set_axis_off()
        ax_arcs.set_title(RESERVED_TITLE, y=1.0)
        self.ax_arcs = ax_arcs
        self.arc_title = TextStamps(ax_arcs, "top", pad=mpl.rcParams["axes.titlepad"],
                                    cache=cache)
        # The bars' frame (ticks, names, legend) never changes: it is drawn once, and
        # the bars sit in a transparent axes of their own on top of it.
        y = np.arange(len(SCORE_LABELS))
        ax_bars.set_yticks(y, list(SCORE_LABELS.values()), fontsize=8)
        ax_bars.set_xticks([0, 0.5, 1], ["0", "0.5", "1"], fontsize=8)
        ax_bars.set(xlim=(0, 1), ylim=(len(y) - 0.5, -1.5))  # a free row for the legend
        ax_bars.grid(axis="x", alpha=0.3)
        legend = ax_bars.legend([Patch(color=_DARK), Patch(color=_LIGHT)],
                                ["this sentence", "gallery mean"], fontsize=7,
                                loc="upper center", ncol=2, frameon=False)
        self.heatmap.reserve(rows=True, cols=True)
        self.static = freeze_layout(figure, static_axes=(ax_bars,), panels=(self.heatmap,),
                                    static_artists=(legend,))
        ax_arcs.title.set_visible(False)
        bars = figure.add_axes(ax_bars.get_position(), sharex=ax_bars, sharey=ax_bars)
        bars.set_axis_off()
        self.sentence_bars = list(bars.barh(y - 0.2, np.zeros(len(y)), 0.4, color=_DARK))
        self.gallery_bars = list(bars.barh(y + 0.2, np.zeros(len(y)), 0.4, color=_LIGHT))
        self._paths: dict = {}

    def show(self, state) -> None:
        """Show a :class:`~attention_book.scenes.pretrained.PretrainedState`."""
        self.update(state.tokens, state.weights, state.query, state.scores, state.gallery,
                    title=f"layer {state.layer}, head {state.head}")

    def update(self, tokens: Sequence[str], weights, query: int, scores: Mapping,
               gallery: Mapping, title: str = "") -> None:
        """Show one head on one sentence.

        Parameters
        ----------
        tokens : sequence of str, length T (may be empty)
        weights : array_like, shape (T, T)
            Rows = queries, each summing to 1.
        query : int
            The highlighted query, 0 <= query < T (ignored when T = 0).
        scores, gallery : mapping of str to float
            The head's scores on this sentence (may be empty) and on the gallery, keyed
            like :data:`~attention_book.scenes.pretrained.SCORE_LABELS`.
        title : str
            Names the head, e.g. "layer 3, head 1".
        """
        w = np.asarray(weights, dtype=float)
        T = len(tokens)
        if w.shape != (T, T):
            raise ValueError(f"weights must be (T, T) = ({T}, {T}), got {w.shape}")
        if T and not 0 <= query < T:
            raise ValueError(f"query must be in 0..{T - 1}, got {query}")
        labels = thin_labels(tokens) if T else None
        self.heatmap.update(w, row_labels=labels, col_labels=labels,
                            title=f"{title}: query rows, key columns")
        for artist in (self.row_box, self.arcs, self.key_nodes, self.query_node):
            artist.set_visible(bool(T))
        for name, bar, other in zip(SCORE_LABELS, self.sentence_bars, self.gallery_bars):
            bar.set_width(scores.get(name, 0.0))
            other.set_width(gallery[name])
        if not T:
            self.arc_title.set_texts([""])
            return
        self.row_box.set_bounds(-0.5, query - 0.5, T, 1.0)
        row = w[query]  # (T,)
        if (T, query) not in self._paths:
            self._paths = {(T, query): [_bezier(query, j) for j in range(T)]}
        order = np.argsort(row)  # the heaviest drawn last, on top
        self.arcs.set_segments([self._paths[(T, query)][j] for j in order])
        self.arcs.set_linewidths(0.4 + 6.0 * row[order])
        self.arcs.set_color(mpl.colormaps["cividis"](0.15 + 0.85 * row[order]
                                                     / max(row.max(), 1e-12)))
        self.key_nodes.set_data(np.arange(T), np.zeros(T))
        self.query_node.set_data([query], [1.0])
        self.ax_arcs.set_xlim(-0.6, T - 0.4)
        self.arc_title.set_texts([f"query {query} '{tokens[query][:16]}' \u2192 every token"])


def pretrained_view(figure: Figure | None = None) -> PretrainedView:
    """Build the pretrained lab's figure once, in ``figure`` or a new 7.6 x 3.3 inch one."""
    if figure is None:
        figure = Figure(figsize=(7.6, 3.3), dpi=100, layout="constrained")
    return PretrainedView(figure)


# ------------------------------------------------------------------ the chapter's figures


def head_scores_figure(means: Mapping[str, np.ndarray]) -> NotebookFigure:
    """Each score of every head as a (layer, head) grid, the top head outlined.

    Parameters
    ----------
    means : mapping of str to numpy.ndarray, each of shape (n_layers, h)
        Scores between 0 and 1, keyed like
        :data:`~attention_book.scenes.pretrained.SCORE_LABELS` (all six are drawn).
    """
    figure = notebook_figure(9.0, 3.5)
    axes = figure.subplots(2, 3, sharex=True, sharey=True)
    for ax, (name, label) in zip(axes.ravel(), SCORE_LABELS.items()):
        grid = np.asarray(means[name], dtype=float)  # (n_layers, h)
        image = ax.imshow(grid, cmap="viridis", vmin=0, vmax=1)
        layer, head = np.unravel_index(np.argmax(grid), grid.shape)
        ax.add_patch(Rectangle((head - 0.5, layer - 0.5), 1, 1, fill=False, ec=_ACCENT, lw=2))
        ax.set_title(f"{label}: top L{layer} H{head} {grid[layer, head]:.2f}", fontsize=9)
        ax.set(xticks=range(grid.shape[1]), yticks=range(grid.shape[0]))
        ax.tick_params(labelsize=7)
    figure.supxlabel("head", fontsize=10)
    figure.supylabel("layer", fontsize=10)
    figure.colorbar(image, ax=axes, label="mean over the gallery", shrink=0.9)
    return figure


def head_maps_figure(panels: Sequence[tuple]) -> NotebookFigure:
    """Several heads' weights side by side, one heatmap each.

    Parameters
    ----------
    panels : sequence of (title, tokens, weights)
        ``weights`` of shape (T, T) for the T ``tokens``.
    """
    figure = notebook_figure(2.6 * len(panels) + 0.8, 3.3)
    axes = np.atleast_1d(figure.subplots(1, len(panels)))
    for ax, (title, tokens, weights) in zip(axes, panels):
        image = ax.imshow(np.asarray(weights, dtype=float), cmap="viridis", vmin=0, vmax=1)
        ax.set_xticks(range(len(tokens)), tokens, rotation=90, fontsize=7)
        ax.set_yticks(range(len(tokens)), tokens, fontsize=7)
        ax.set_title(title, fontsize=9)
    axes[0].set_ylabel("query token")
    figure.supxlabel("key token", fontsize=9)
    figure.colorbar(image, ax=axes, label="weight", shrink=0.8)
    return figure


def neuron_view_figure(q, k_a, k_b, names: tuple[str, str], query: str) -> NotebookFigure:
    """The score of one query on two keys, ``q . k / sqrt(d_k)``, as its d_k terms.

    Bars of ``q[i] k[i] / sqrt(d_k)`` for both keys, the dimensions sorted by how much more
    key a gets than key b; each key's sum (its score) in the legend.

    Parameters
    ----------
    q, k_a, k_b : array_like, shape (d_k,)
        The query and the two keys of one head.
    names : (str, str)
        The keys' tokens.
    query : str
        The query's token.
    """
    q, k_a, k_b = (np.asarray(v, dtype=float) for v in (q, k_a, k_b))
    a, b = q * k_a / np.sqrt(len(q)), q * k_b / np.sqrt(len(q))  # (d_k,) each
    order = np.argsort(b - a)  # the largest difference first
    x = np.arange(len(q))
    figure = notebook_figure(8.8, 3.0)
    ax = figure.subplots()
    ax.bar(x - 0.2, a[order], 0.4, color=_DARK, label=f"'{names[0]}': sum {a.sum():.2f}")
    ax.bar(x + 0.2, b[order], 0.4, color="#c8641e", label=f"'{names[1]}': sum {b.sum():.2f}")
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_xticks(x, [str(i) for i in order], fontsize=7)
    ax.set_xlabel(f"dimension i of q and k (sorted by the difference '{names[0]}' "
                  f"\u2212 '{names[1]}')")
    ax.set_ylabel("q[i] k[i] / \u221ad_k")
    ax.set_title(f"query '{query}': the score on each key is the sum of its bars", fontsize=10)
    ax.legend(fontsize=8)
    return figure


def entropy_figure(groups: Mapping[str, np.ndarray]) -> NotebookFigure:
    """How spread each head's weights are, one row of dots per model.

    Parameters
    ----------
    groups : mapping of str to array_like
        Model name -> each head's mean row entropy divided by log s (0 = one key,
        1 = uniform), any shape.
    """
    figure = notebook_figure(8.0, 0.75 * len(groups) + 1.0)
    ax = figure.subplots()
    for row, (name, values) in enumerate(groups.items()):
        v = np.sort(np.ravel(np.asarray(values, dtype=float)))
        jitter = 0.25 * np.sin(np.arange(len(v)) * 2.4)  # fixed, spreads equal values
        ax.plot(v, row + jitter, "o", ms=4, alpha=0.7, color=_DARK)
        ax.plot([v.mean()] * 2, [row - 0.38, row + 0.38], color=_ACCENT, lw=2)
    ax.set_yticks(range(len(groups)), [f"{n} ({np.size(v)} heads)" for n, v in groups.items()])
    ax.set(xlim=(-0.02, 1.02), ylim=(len(groups) - 0.5, -0.5))
    ax.set_xlabel("mean row entropy / log s   (0: every query on one key, 1: uniform)")
    ax.grid(axis="x", alpha=0.3)
    return figure


VIEWS = {"pretrained": pretrained_view}
