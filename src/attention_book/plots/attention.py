"""Chapter 3's pictures: the sqrt(d_k) lab (:class:`ScalingView`), the attention explorer
(:class:`AttentionView`) and the measured cost of attention (:func:`cost_figure`)."""

from __future__ import annotations

import base64
import functools
import html
import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import matplotlib as mpl
import numpy as np
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from ..scenes.attention import SCALING_DKS, SCALING_KEYS, scaling_curves
from .core import (RESERVED_TITLE, HeatmapPanel, NotebookFigure, TextStamps,
                   freeze_layout, tick_fontsize, tick_label)

__all__ = ["ScalingView", "scaling_view", "AttentionView", "attention_view", "thin_labels",
           "MAX_SHOWN_LABELS", "CostPlot", "cost_figure"]

#: The most token labels drawn along one axis; longer sequences show every k-th label.
MAX_SHOWN_LABELS = 16

_SCALED_COLOR = "#1f5fa8"    # dark blue
_UNSCALED_COLOR = "#c8641e"  # orange (blue/orange: distinguishable in common colour blindness)


def thin_labels(labels: Sequence[str], max_shown: int = MAX_SHOWN_LABELS) -> list[str]:
    """``labels`` (length n) with all but every k-th replaced by "", k = ceil(n /
    max_shown), so that at most ``max_shown`` (at least 1) remain."""
    if max_shown < 1:
        raise ValueError(f"max_shown must be at least 1, got {max_shown}")
    step = max(1, math.ceil(len(labels) / max_shown))
    return [str(t) if j % step == 0 else "" for j, t in enumerate(labels)]


_MEASURE = RendererAgg(1, 1, 72)  # 72 dpi: one pixel per point


@functools.lru_cache(maxsize=4096)
def _text_width(text: str, size: float) -> float:
    """Width of ``text`` in points at font size ``size`` (as Agg lays it out)."""
    return _MEASURE.get_text_width_height_descent(text, FontProperties(size=size), False)[0]


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
    #: The explorer's 20 states as 256-colour PNGs (about a third of the bytes).

    def __init__(self, figure: Figure, d_ks: Sequence[int], curves: dict, s_k: int):
        """``curves[(quantity, scaled)]`` is an array over ``d_ks``."""
        self.figure = figure
        self.d_ks = np.asarray(d_ks, dtype=float)
        self.curves = {key: np.asarray(val, dtype=float) for key, val in curves.items()}
        self.axes = axes = list(figure.subplots(2, 2).ravel())
        titles = ("variance of the score q\u00b7k", "largest softmax weight",
                  "entropy of the weights (nats)", "gradient norm through softmax")
        ylabels = ("var", "mean max weight", "mean entropy", "mean \u2016dL/dscores\u2016")
        for ax, quantity, title, ylabel in zip(axes, self.QUANTITIES, titles, ylabels):
            for scaled, color, marker, name in ((False, _UNSCALED_COLOR, "s", "unscaled"),
                                                (True, _SCALED_COLOR, "o", "scaled 1/\u221ad_k")):
                ax.plot(self.d_ks, self.curves[(quantity, scaled)], color=color, marker=marker,
                        ms=3, lw=1, alpha=0.45, label=name)
            ax.set_xscale("log", base=2)
            ax.set_title(title, fontsize=10)
            ax.set_ylabel(ylabel, fontsize=9)
            ax.tick_params(labelsize=8)
            ax.grid(True, alpha=0.3)
        for ax in axes[2:]:
            ax.set_xlabel("d_k (query/key dimension)", fontsize=9)
        var_ax, max_ax, ent_ax, grad_ax = axes
        var_ax.set_yscale("log", base=2)
        var_ax.plot(self.d_ks, self.d_ks, color="0.2", ls="--", lw=1, label="the line d_k")
        var_ax.legend(fontsize=7, loc="upper left")
        for ax, y, label, va, top in ((max_ax, 1.0 / s_k, f"uniform 1/{s_k}", "bottom", 1.05),
                                      (ent_ax, math.log(s_k), f"uniform: log {s_k}", "top",
                                       math.log(s_k) * 1.1)):
            ax.axhline(y, color="0.4", ls=":", lw=1)
            ax.text(self.d_ks[-1], y, label, fontsize=7, ha="right", va=va, color="0.3")
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
        matches = np.flatnonzero(self.d_ks == d_k)
        if matches.size == 0:
            raise ValueError(f"d_k={d_k} is not one of {self.d_ks.astype(int).tolist()}")
        k = int(matches[0])
        for quantity, line, point in zip(self.QUANTITIES, self.highlight, self.marker):
            ys = self.curves[(quantity, bool(scaled))]
            line.set_data(self.d_ks, ys)
            line.set_color(_SCALED_COLOR if scaled else _UNSCALED_COLOR)
            point.set_data([self.d_ks[k]], [ys[k]])


def scaling_view(figure: Figure | None = None) -> ScalingView:
    """Build the sqrt(d_k) lab's figure once, with the lab's curves
    (:func:`~attention_book.scenes.attention.scaling_curves`), in ``figure`` or a new
    8.5 x 5.6 inch one with constrained layout."""
    if figure is None:
        figure = Figure(figsize=(8.5, 5.6), dpi=100, layout="constrained")
    return ScalingView(figure, SCALING_DKS, scaling_curves(), SCALING_KEYS)


# ------------------------------------------------------------------ the attention explorer


def _bezier(x0: float, x1: float, n: int = 24) -> np.ndarray:
    """Points (n, 2) of a cubic Bezier from (x0, 1) down to (x1, 0), vertical at both ends."""
    t = np.linspace(0.0, 1.0, n)[:, None]  # (n, 1)
    p0, p1, p2, p3 = np.array([(x0, 1.0), (x0, 0.5), (x1, 0.5), (x1, 0.0)])  # each (2,)
    return (1 - t) ** 3 * p0 + 3 * (1 - t) ** 2 * t * p1 + 3 * (1 - t) * t * t * p2 + t ** 3 * p3


class AttentionView:
    """The attention explorer's picture.

    Left, ``heatmap``: the weights (s_q, s_k) (viridis, 0..1), query tokens down, key
    tokens across, the chosen query's row outlined by ``row_box``. Top right: ``arcs``
    (one curve per key, width and colour by weight) from the chosen query (``query_node``,
    above) to every key (``key_nodes``, below). Bottom right: the same row as ``bars``
    over the keys, labelled by ``bar_labels``. ``axis_labels`` ("key", "query": the
    heatmap's x and y labels; "bar key": the bars' x label) sit just outside the tick
    labels shown now, not outside the margin reserved for the longest possible ones.
    """

    #: The explorer's 45 states as 256-colour PNGs (about a third of the bytes).
    _GAP = 4.0  # points between the tick labels and the axis label

    def __init__(self, figure: Figure):
        self.figure = figure
        grid = figure.add_gridspec(2, 2, width_ratios=(1.15, 1.0), height_ratios=(1.0, 1.0))
        ax_heat = figure.add_subplot(grid[:, 0])
        self.ax_arcs = ax_arcs = figure.add_subplot(grid[0, 1])
        self.ax_bars = ax_bars = figure.add_subplot(grid[1, 1])
        cache: OrderedDict = OrderedDict()
        self.heatmap = HeatmapPanel(
            ax_heat, cmap="viridis", vmin=0.0, vmax=1.0, xlabel="key token j",
            ylabel="query token i", colorbar_label="weight (row sums to 1)",
            col_rotation=90, empty_text="no tokens:\ntype a sentence", cache=cache)
        self.row_box = ax_heat.add_patch(Rectangle((-0.5, -0.5), 1, 1, fill=False,
                                                   ec="#ff3b30", lw=2.0))
        self.cmap = mpl.colormaps["cividis"]
        self.arcs = ax_arcs.add_collection(LineCollection([], capstyle="round"))
        self.key_nodes = ax_arcs.add_line(Line2D([], [], marker="o", ms=4, ls="none",
                                                 color="0.3"))
        self.query_node = ax_arcs.add_line(Line2D([], [], marker="o", ms=9, ls="none",
                                                  color="#ff3b30"))
        ax_arcs.set(ylim=(-0.12, 1.12), xticks=[], yticks=[])
        ax_arcs.spines[:].set_visible(False)
        ax_arcs.set_title("", y=1.0)
        self.arc_title = TextStamps(ax_arcs, "top", pad=mpl.rcParams["axes.titlepad"],
                                    cache=cache)
        self.bars = ax_bars.add_collection(PolyCollection([], facecolors=_SCALED_COLOR,
                                                          edgecolors="none"))
        ax_bars.set(ylim=(0, 1), ylabel="weight", xlabel="key token j")
        ax_bars.set_yticks([0, 0.5, 1], ["0", "0.5", "1"], fontsize=8)
        ax_bars.axhline(0.5, color="0.85", lw=0.8, zorder=0)
        self.bar_labels = TextStamps(ax_bars, "bottom", rotation=90, cache=cache)
        # worst-case labels for the layout engine, then freeze
        self.heatmap.reserve(rows=True, cols=True)
        ax_bars.set_xticks([0], ["n" * 10], rotation=90)
        ax_arcs.set_title(RESERVED_TITLE)
        self.static = freeze_layout(figure, panels=(self.heatmap,))
        # the arcs' key nodes sit right above the bars: give both axes the same x extent
        bars_box, arcs_box = ax_bars.get_position(), ax_arcs.get_position()
        ax_arcs.set_position([bars_box.x0, arcs_box.y0, bars_box.width, arcs_box.height])
        ax_bars.set_xticks([])  # key labels are drawn by bar_labels
        # the y tick labels never change: draw them once, with the static layer
        to_figure = figure.transFigure.inverted()
        for label in ax_bars.get_yticklabels():  # placed by the frozen layout
            box = label.get_window_extent()
            self.static.add(figure.text(*to_figure.transform((box.x1, (box.y0 + box.y1) / 2)),
                                        label.get_text(), fontsize=8, ha="right",
                                        va="center"))
        ax_bars.tick_params(labelleft=False)
        ax_arcs.title.set_visible(False)
        # Axis labels that follow the tick labels shown: the frozen ones sit outside the
        # margin reserved for 10-character labels, far from short tokens. Stamps replace
        # them (the axes keep their label texts; the static layer draws them empty).
        self.axis_labels = {"key": TextStamps(ax_heat, "bottom", cache=cache),
                            "query": TextStamps(ax_heat, "left", rotation=90, cache=cache),
                            "bar key": TextStamps(ax_bars, "bottom", cache=cache)}
        self._label_texts = {"key": ax_heat.get_xlabel(), "query": ax_heat.get_ylabel(),
                             "bar key": ax_bars.get_xlabel()}
        self._label_size = FontProperties(size=mpl.rcParams["axes.labelsize"]
                                          ).get_size_in_points()
        for axis in (ax_heat.xaxis, ax_heat.yaxis, ax_bars.xaxis):
            axis.label.set_text("")
        self.static.invalidate()
        self._keys: tuple = ()
        self._bar_tokens: tuple | None = None

    def show(self, state) -> None:
        """Show an :class:`~attention_book.scenes.attention.AttentionState`."""
        self.update(state.query_tokens, state.key_tokens, state.weights, state.query)

    @staticmethod
    def _thin_ticks(axis, labels: list) -> None:
        """Keep only the ticks whose label is shown (each tick costs draw time even with
        its label hidden; 128 of them would take most of a frame)."""
        n = len(labels)
        if n <= MAX_SHOWN_LABELS or len(axis.get_majorticklocs()) != n:
            return  # few labels, or already thinned
        kept = [j for j, t in enumerate(labels) if t]
        axis.set_ticks(kept, [tick_label(labels[j]) for j in kept], fontsize=tick_fontsize(n))

    def _place_label(self, name: str, labels: Sequence[str], center: float,
                     pad: float = 3.5) -> None:
        """Put axis label ``name`` at data position ``center``, just outside ``labels``
        (drawn at font size ``tick_fontsize(len(labels))``, ``pad`` points off the axes)."""
        size = tick_fontsize(len(labels))
        extent = max((_text_width(tick_label(t), size) for t in labels if t), default=0.0)
        stamp = self.axis_labels[name]
        stamp.pad = pad + extent + self._GAP
        stamp.set_texts([self._label_texts[name]], [center], self._label_size)

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
                            title=f"weights : (s_q, s_k) = ({s_q}, {s_k})")
        for art in (self.row_box, self.arcs, self.bars, self.key_nodes, self.query_node):
            art.set_visible(not empty)
        self._place_label("key", cols, (s_k - 1) / 2 if s_k else 0.0)
        self._place_label("query", rows, (s_q - 1) / 2 if s_q else 0.0)
        if empty:
            self.arc_title.set_texts([""])
            self.bar_labels.set_texts([], [])
            self.axis_labels["bar key"].set_texts([""], [0.0])
            self._bar_tokens = None
            return
        self._thin_ticks(self.heatmap.ax.yaxis, rows)
        self._thin_ticks(self.heatmap.ax.xaxis, cols)
        self.row_box.set_bounds(-0.5, query - 0.5, s_k, 1.0)
        row, xs = w[query], np.arange(s_k, dtype=float)  # (s_k,) each
        xq = query * (s_k - 1) / max(s_q - 1, 1)  # the query above its place in the sentence
        if (s_k, s_q, query) != self._keys:
            self._paths = [_bezier(xq, x) for x in xs]
            self._keys = (s_k, s_q, query)
        order = np.argsort(row)  # heaviest drawn last, on top
        self.arcs.set_segments([self._paths[j] for j in order])
        self.arcs.set_linewidths(0.4 + 7.0 * row[order])
        self.arcs.set_color(self.cmap(0.15 + 0.85 * row[order] / max(row.max(), 1e-12)))
        self.key_nodes.set_data(xs, np.zeros(s_k))
        self.query_node.set_data([xq], [1.0])
        self.ax_arcs.set_xlim(-0.6, s_k - 1 + 0.6)
        self.arc_title.set_texts([tick_label(f"query {query}: '{query_tokens[query]}'", 40)
                                  + " \u2192 every key"])
        left, right = xs - 0.4, xs + 0.4  # (s_k,) bar edges
        self.bars.set_verts(np.stack([np.column_stack([[lo, lo, hi, hi], [0, h, h, 0]])
                                      for lo, hi, h in zip(left, right, row)]))  # (s_k, 4, 2)
        self.ax_bars.set_xlim(-0.6, s_k - 0.4)
        if tuple(key_tokens) != self._bar_tokens:  # labels rebuilt only when they change
            self._bar_tokens = tuple(key_tokens)
            self.bar_labels.set_texts([tick_label(t) for t in cols], xs.tolist(),
                                      tick_fontsize(s_k))
            self._place_label("bar key", cols, (s_k - 1) / 2)


def attention_view(figure: Figure | None = None) -> AttentionView:
    """Build the attention explorer's figure once, in ``figure`` or a new 8.8 x 4.2 inch
    one with constrained layout; then call ``show(state)`` or ``update(...)``."""
    if figure is None:
        figure = Figure(figsize=(8.8, 4.2), dpi=100, layout="constrained")
    return AttentionView(figure)


# ------------------------------------------------------------------ what it costs


class CostPlot(NotebookFigure):
    """A notebook figure shown as an image with alt text: :attr:`alt` (plain text)."""

    alt = ""

    def _repr_html_(self) -> str:
        data = base64.b64encode(self._repr_png_()).decode("ascii")
        return (f'<img src="data:image/png;base64,{data}" alt="{html.escape(self.alt)}" '
                'style="max-width:100%;height:auto">')


def cost_figure(sizes: Sequence[int], seconds: Mapping[str, Sequence[float]],
                caches: Mapping[str, int] | None = None, itemsize: int = 4) -> CostPlot:
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
    figure = CostPlot(figsize=(8.8, 3.4), dpi=100, layout="constrained")
    ax_time, ax_per = figure.subplots(1, 2)
    colors = (_SCALED_COLOR, _UNSCALED_COLOR, "0.3")
    for (name, values), color, marker in zip(seconds.items(), colors, "osD"):
        t = np.asarray(values, dtype=float)  # (n,)
        ax_time.plot(s, t * 1e3, marker=marker, color=color, label=name)
        ax_per.plot(s, t / s ** 2 * 1e9, marker=marker, color=color, label=name)
    first = np.asarray(next(iter(seconds.values())), dtype=float)
    ax_time.plot(s, first[-1] * 1e3 * (s / s[-1]) ** 2, ls="--", color="0.2", lw=1,
                 label="slope 2: time \u221d s\u00b2")
    for ax, title in ((ax_time, "time of one attention call"), (ax_per, "time per score")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("sequence length s")
        ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3, which="both")
    ax_time.set_yscale("log", base=10)
    ax_time.set_ylabel("time (ms)")
    ax_time.legend(fontsize=7)
    ax_per.set(ylim=(0, None), ylabel="ns per score (time / s\u00b2)")
    lines = []
    for level, size in (caches or {}).items():
        fill = math.sqrt(size / itemsize)  # one (s, s) matrix of this many bytes
        if s[0] <= fill <= s[-1]:
            ax_per.axvline(fill, color="0.4", ls=":", lw=1)
            ax_per.text(fill, 0.02, f" one (s, s) matrix\n fills {level}", fontsize=7,
                        transform=ax_per.get_xaxis_transform(), color="0.3")
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
