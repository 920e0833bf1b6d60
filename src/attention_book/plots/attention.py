"""Chapter 3's pictures: the sqrt(d_k) lab (:class:`ScalingView`), the attention explorer
(:class:`AttentionView`) and the measured cost of attention (:func:`cost_figure`)."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import matplotlib as mpl
import numpy as np
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from ..scenes.attention import SCALING_DKS, SCALING_KEYS, scaling_curves
from .core import (AxisLabel, HeatmapPanel, NotebookFigure, TextStamps, Title,
                   freeze_layout, notebook_figure, tick_fontsize, tick_label,
                   view_factory)

__all__ = ["ScalingView", "scaling_view", "AttentionView", "attention_view", "thin_labels",
           "MAX_SHOWN_LABELS", "ArcsPanel", "cost_figure"]

#: The most token labels drawn along one axis; longer sequences show every k-th label.
MAX_SHOWN_LABELS = 16

_SCALED_COLOR = "#1f5fa8"    # dark blue
_UNSCALED_COLOR = "#c8641e"  # orange (blue/orange: distinguishable in common colour blindness)
_ACCENT = "#ff3b30"  # red: the chosen query


def thin_labels(labels: Sequence[str], max_shown: int = MAX_SHOWN_LABELS) -> list[str]:
    """``labels`` (length n) with all but every k-th replaced by "", k = ceil(n /
    max_shown), so that at most ``max_shown`` (at least 1) remain."""
    if max_shown < 1:
        raise ValueError(f"max_shown must be at least 1, got {max_shown}")
    step = max(1, math.ceil(len(labels) / max_shown))
    return [str(t) if j % step == 0 else "" for j, t in enumerate(labels)]


# ------------------------------------------------------------------ the sqrt(d_k) lab
class ScalingView:
    """The sqrt(d_k) lab's picture: four log-scale panels against d_k.

    ``axes``, in order: variance of q . k (with the line d_k); mean largest softmax weight;
    mean entropy of the weights (nats); mean norm of the gradient through the softmax.
    Each shows the unscaled (orange, squares) and scaled (blue, circles) curves faintly,
    drawn once into ``static``; :meth:`update` draws the chosen mode's curve bold
    (``highlight[i]``) and circles the chosen d_k (``marker[i]``): figure-level lines in
    the axes' data coordinates, drawn over the static picture.
    """

    QUANTITIES = ("variance", "max_weight", "entropy", "grad_norm")

    def __init__(self, figure: Figure, d_ks: Sequence[int] = SCALING_DKS,
                 curves: dict | None = None, s_k: int = SCALING_KEYS):
        """``curves[(quantity, scaled)]`` is an array over ``d_ks`` (default: the lab's,
        :func:`~attention_book.scenes.attention.scaling_curves`)."""
        self.figure = figure
        curves = scaling_curves() if curves is None else curves
        self.d_ks = np.asarray(d_ks, dtype=float)
        self.curves = {key: np.asarray(val, dtype=float) for key, val in curves.items()}
        self.axes = axes = list(figure.subplots(2, 2).ravel())
        titles = (r"variance of the score $q\cdot k$", "largest softmax weight",
                  "entropy of the weights (nats)", "gradient norm through the softmax")
        ylabels = ("variance", "mean max weight", "mean entropy",
                   r"mean $\Vert\partial L/\partial\,\mathrm{scores}\Vert$")
        for ax, quantity, title, ylabel in zip(axes, self.QUANTITIES, titles, ylabels):
            for scaled, color, marker, name in ((False, _UNSCALED_COLOR, "s", "unscaled"),
                                                (True, _SCALED_COLOR, "o",
                                                 r"scaled by $1/\sqrt{d_k}$")):
                ax.plot(self.d_ks, self.curves[(quantity, scaled)], color=color, marker=marker,
                        ms=3, lw=1, alpha=0.45, label=name)
            ax.set_xscale("log", base=2)
            ax.set(title=title, ylabel=ylabel)
            ax.grid(True, alpha=0.3)
        for ax in axes[2:]:
            ax.set_xlabel(r"$d_k$ (query/key dimension)")
        var_ax, max_ax, ent_ax, grad_ax = axes
        var_ax.set_yscale("log", base=2)
        var_ax.plot(self.d_ks, self.d_ks, color="0.2", ls="--", lw=1, label=r"the line $d_k$")
        var_ax.legend(fontsize=9, loc="upper left")
        for ax, y, label, va, top in ((max_ax, 1.0 / s_k, f"uniform 1/{s_k}", "bottom", 1.05),
                                      (ent_ax, math.log(s_k), rf"uniform: $\log {s_k}$", "top",
                                       math.log(s_k) * 1.1)):
            ax.axhline(y, color="0.4", ls=":", lw=1)
            ax.text(self.d_ks[-1], y, label, fontsize=9, ha="right", va=va, color="0.3")
            ax.set_ylim(0, top)
        grad_ax.set_ylim(0, None)

        def overlay(ax, **style):  # a figure-level line in ax's data coordinates
            art = figure.add_artist(Line2D([], [], transform=ax.transData, **style))
            art.set_clip_box(ax.bbox)
            return art
        self.highlight = [overlay(ax, lw=2.5) for ax in axes]
        self.marker = [overlay(ax, marker="o", ms=9, mfc="none", mew=2, color="black",
                               ls="none") for ax in axes]
        # every axes is static: drawn once, then pasted as pixels
        self.static = freeze_layout(figure, static_axes=self.axes)

    def show(self, state) -> None:
        """Show a :class:`~attention_book.scenes.attention.ScalingState`."""
        self.update(state.d_k, state.scaled)

    def update(self, d_k: int, scaled: bool) -> None:
        """Draw the curves of the mode ``scaled`` bold and mark ``d_k`` (one of the view's
        d_k values) on them."""
        if d_k not in self.d_ks:
            raise ValueError(f"d_k={d_k} is not one of {self.d_ks.astype(int).tolist()}")
        k = int(np.flatnonzero(self.d_ks == d_k)[0])
        for quantity, line, point in zip(self.QUANTITIES, self.highlight, self.marker):
            ys = self.curves[(quantity, bool(scaled))]
            line.set_data(self.d_ks, ys)
            line.set_color(_SCALED_COLOR if scaled else _UNSCALED_COLOR)
            point.set_data([self.d_ks[k]], [ys[k]])


scaling_view = view_factory(ScalingView, 9.0, 5.8)


# ------------------------------------------------------------------ the attention explorer
def _bezier(x0: float, x1: float, n: int = 24) -> np.ndarray:
    """Points (n, 2) of the cubic Bezier curve with control points (x0, 1), (x0, 0.5),
    (x1, 0.5), (x1, 0): from the query above down to key x1, vertical at both ends."""
    t = np.linspace(0.0, 1.0, n)[:, None]  # (n, 1)
    basis = np.hstack([(1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t**2, t**3])  # (n, 4)
    return basis @ np.array([[x0, 1.0], [x0, 0.5], [x1, 0.5], [x1, 0.0]])  # (n, 4) @ (4, 2)


class ArcsPanel:
    """One query's weights as arcs in ``ax`` (its axis off): from ``query_node`` above to
    every key's node (``key_nodes``, below, at x = 0..n-1), ``arcs`` as wide as
    ``width`` times the weight and coloured by it (cividis), with a ``title`` stamp (never
    mathtext: it quotes tokens)."""

    def __init__(self, ax, cache: OrderedDict, *, width: float, node_sizes=(4, 9)):
        self.ax, self.width, self._paths = ax, width, {}
        self.arcs = ax.add_collection(LineCollection([], capstyle="round"))
        self.key_nodes, self.query_node = (
            ax.add_line(Line2D([], [], marker="o", ms=size, ls="none", color=color))
            for size, color in zip(node_sizes, ("0.3", _ACCENT)))
        ax.set_ylim(-0.12, 1.12)
        ax.set_axis_off()
        self.title = Title(ax, math=False, cache=cache)

    def update(self, row, xq: float, title: str) -> None:
        """Show the weights ``row`` (n,) of the query drawn at x = ``xq`` (none if n = 0)."""
        row = np.asarray(row, dtype=float)
        n = len(row)
        for art in (self.arcs, self.key_nodes, self.query_node):
            art.set_visible(n > 0)
        self.title.set_texts([title if n else ""])
        if not n:
            return
        if (n, xq) not in self._paths:
            self._paths = {(n, xq): [_bezier(xq, x) for x in range(n)]}
        order = np.argsort(row)  # the heaviest drawn last, on top
        self.arcs.set_segments([self._paths[(n, xq)][j] for j in order])
        self.arcs.set_linewidths(0.4 + self.width * row[order])
        self.arcs.set_color(mpl.colormaps["cividis"](0.15 + 0.85 * row[order]
                                                     / max(row.max(), 1e-12)))
        self.key_nodes.set_data(np.arange(n), np.zeros(n))
        self.query_node.set_data([xq], [1.0])
        self.ax.set_xlim(-0.6, n - 0.4)


class AttentionView:
    """The attention explorer's picture.

    Left, ``heatmap``: the weights (s_q, s_k) (viridis, 0..1), query tokens down, key
    tokens across, the chosen query's row outlined by ``row_box``. Top right,
    ``arc_panel`` (:class:`ArcsPanel`): ``arcs`` from the chosen query (``query_node``,
    above) to every key. Bottom right: the same row as ``bars`` over the keys, labelled by
    ``bar_labels``. ``axis_labels`` ("key", "query": the heatmap's x and y labels; "bar
    key": the bars' x label) sit just outside the tick labels shown now.
    """

    def __init__(self, figure: Figure):
        self.figure = figure
        grid = figure.add_gridspec(2, 2, width_ratios=(1.15, 1.0), height_ratios=(1.0, 1.0))
        ax_heat = figure.add_subplot(grid[:, 0])
        ax_arcs = figure.add_subplot(grid[0, 1])
        self.ax_bars = ax_bars = figure.add_subplot(grid[1, 1])
        cache: OrderedDict = OrderedDict()
        self.heatmap = HeatmapPanel(
            ax_heat, xlabel="key token j", ylabel="query token i", col_rotation=90,
            colorbar_label="weight (each row sums to 1)", cache=cache)
        self.row_box = ax_heat.add_patch(Rectangle((-0.5, -0.5), 1, 1, fill=False,
                                                   ec=_ACCENT, lw=2.0))
        self.arc_panel = ArcsPanel(ax_arcs, cache, width=7.0)
        self.arcs, self.query_node = self.arc_panel.arcs, self.arc_panel.query_node
        self.bars = ax_bars.add_collection(PolyCollection([], facecolors=_SCALED_COLOR,
                                                          edgecolors="none"))
        ax_bars.set(ylim=(0, 1), ylabel="weight", xlabel="key token j")
        ax_bars.set_yticks([0, 0.5, 1], ["0", "0.5", "1"], fontsize=9)
        ax_bars.axhline(0.5, color="0.85", lw=0.8, zorder=0)
        self.bar_labels = TextStamps(ax_bars, "bottom", rotation=90, cache=cache)
        ticks = TextStamps(ax_bars, "left", pad=7.0, cache=cache)  # drawn past the marks
        ticks.set_texts(["0", "0.5", "1"], [0, 0.5, 1])
        # worst-case labels for the layout engine, then freeze
        self.heatmap.reserve(rows=True, cols=True)
        ax_bars.set_xticks([0], ["n" * 10], rotation=90)
        self.static = freeze_layout(figure, panels=(self.heatmap,))
        # the arcs' key nodes sit right above the bars: give both axes the same x extent
        bars_box, arcs_box = ax_bars.get_position(), ax_arcs.get_position()
        ax_arcs.set_position([bars_box.x0, arcs_box.y0, bars_box.width, arcs_box.height])
        ax_bars.set_xticks([])  # key labels are drawn by bar_labels
        ax_bars.tick_params(labelleft=False)  # and the y tick labels by a stamp
        # the bars' x label follows the key labels shown (the static layer draws it empty)
        self.axis_labels = {"key": self.heatmap.x_label, "query": self.heatmap.y_label,
                            "bar key": AxisLabel(ax_bars, "x", self.bar_labels, cache=cache)}
        ax_bars.xaxis.label.set_text("")
        self.static.invalidate()
        self._bar_tokens: tuple | None = None

    def show(self, state) -> None:
        """Show an :class:`~attention_book.scenes.attention.AttentionState`."""
        self.update(state.query_tokens, state.key_tokens, state.weights, state.query)

    def update(self, query_tokens: Sequence[str], key_tokens: Sequence[str], weights,
               query: int) -> None:
        """Show the ``weights`` : (s_q, s_k) (rows summing to 1) of ``query_tokens``
        (length s_q) over ``key_tokens`` (length s_k), and the row of ``query``,
        0 <= query < s_q (ignored when s_q = 0)."""
        w = np.asarray(weights, dtype=float)
        s_q, s_k = len(query_tokens), len(key_tokens)
        if w.shape != (s_q, s_k):
            raise ValueError(f"weights must be (s_q, s_k) = ({s_q}, {s_k}), got {w.shape}")
        empty = w.size == 0
        if not empty and not 0 <= query < s_q:
            raise ValueError(f"query must be in 0..{s_q - 1}, got {query}")
        rows, cols = thin_labels(query_tokens), thin_labels(key_tokens)
        self.heatmap.update(w, row_labels=None if empty else rows,
                            col_labels=None if empty else cols,
                            title=f"weights : $(s_q, s_k)$ = ({s_q}, {s_k})")
        for art in (self.row_box, self.bars, self.axis_labels["bar key"]):
            art.set_visible(not empty)
        if empty:
            self.arc_panel.update([], 0.0, "")
            self.bar_labels.set_texts([], [])
            self._bar_tokens = None
            return
        self.row_box.set_bounds(-0.5, query - 0.5, s_k, 1.0)
        xq = query * (s_k - 1) / max(s_q - 1, 1)  # the query above its place in the sentence
        self.arc_panel.update(w[query], xq, tick_label(f"query {query}: "
                                                       f"'{query_tokens[query]}'", 40)
                              + " \u2192 every key")
        xs = np.arange(s_k, dtype=float)
        self.bars.set_verts(np.stack([np.column_stack([[lo, lo, hi, hi], [0, h, h, 0]])
                                      for lo, hi, h in zip(xs - 0.4, xs + 0.4, w[query])]))
        self.ax_bars.set_xlim(-0.6, s_k - 0.4)
        if tuple(key_tokens) != self._bar_tokens:  # labels rebuilt only when they change
            self._bar_tokens = tuple(key_tokens)
            self.bar_labels.set_texts([tick_label(t) for t in cols], xs.tolist(),
                                      tick_fontsize(s_k))


# the space between the panels keeps the colour bar's label apart from the bars' label
attention_view = view_factory(AttentionView, 8.8, 4.4, wspace=0.08)


# ------------------------------------------------------------------ what it costs
def cost_figure(sizes: Sequence[int], seconds: Mapping[str, Sequence[float]],
                caches: Mapping[str, int] | None = None, itemsize: int = 4) -> NotebookFigure:
    """Measured attention time against the sequence length, on log-log axes.

    Left: seconds against s for each implementation, with a dashed guide of slope 2
    (time proportional to s^2) through the last point of the first. Right: the time per
    score, seconds / s^2 in nanoseconds (flat where doubling s quadruples the time), with
    dotted lines where one (s, s) matrix of ``itemsize`` bytes fills each cache level.

    Parameters
    ----------
    sizes : sequence of int, length n
        The sequence lengths s, increasing.
    seconds : mapping of str to sequence of float, each length n
        Name of the implementation -> measured seconds.
    caches : mapping of str to int, optional
        Cache level -> bytes (:func:`attention_book.cost.cache_sizes`).
    itemsize : int
        Bytes per score (4 for float32).
    """
    s = np.asarray(sizes, dtype=float)  # (n,)
    figure = notebook_figure(8.8, 4.0)
    ax_time, ax_per = figure.subplots(1, 2)
    colors = (_SCALED_COLOR, _UNSCALED_COLOR, "0.3")
    for (name, values), color, marker in zip(seconds.items(), colors, "osD"):
        t = np.asarray(values, dtype=float)  # (n,)
        ax_time.plot(s, t * 1e3, marker=marker, color=color, label=name)
        ax_per.plot(s, t / s ** 2 * 1e9, marker=marker, color=color, label=name)
    first = np.asarray(next(iter(seconds.values())), dtype=float)
    ax_time.plot(s, first[-1] * 1e3 * (s / s[-1]) ** 2, ls="--", color="0.2", lw=1,
                 label=r"slope 2: time $\propto s^2$")
    for ax, title in ((ax_time, "time of one attention call"), (ax_per, "time per score")):
        ax.set_xscale("log", base=2)
        ax.set(xlabel="sequence length s", title=title)
        ax.grid(True, alpha=0.3, which="both")
    ax_time.set(yscale="log", ylabel="time (ms)")
    figure.legend(handles=ax_time.get_lines(), loc="outside lower center", ncol=2, fontsize=9)
    ax_per.set(ylim=(0, None), ylabel=r"ns per score (time / $s^2$)")
    lines = []
    for level, size in (caches or {}).items():
        fill = math.sqrt(size / itemsize)  # one (s, s) matrix of this many bytes
        if s[0] <= fill <= s[-1]:
            ax_per.axvline(fill, color="0.4", ls=":", lw=1)
            right = fill > math.sqrt(s[0] * s[-1])  # past the middle: written to its left
            ax_per.text(fill, 0.02 + 0.16 * len(lines), f" one (s, s) matrix \n fills {level} ",
                        fontsize=9,
                        ha="right" if right else "left", color="0.3",
                        transform=ax_per.get_xaxis_transform())
            lines.append(f"{level} ({size / 2**20:g} MiB) at s = {fill:.0f}")
    figure.alt = (
        f"Two panels against the sequence length s from {int(s[0])} to {int(s[-1])} on log "
        f"axes. Left: the measured time of {' and '.join(seconds)}, in milliseconds on a log "
        "axis, with a dashed line of slope 2 (time proportional to s squared). Right: the "
        "time divided by s squared, in nanoseconds per score"
        + (", with dotted lines where one s by s matrix fills the cache: " + "; ".join(lines)
           if lines else "") + ".")
    return figure


VIEWS = {"scaling": scaling_view, "attention": attention_view}
