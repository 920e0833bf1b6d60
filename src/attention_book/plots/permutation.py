"""Chapter 5's picture: the permutation playground.

Two rows of three heatmaps and a difference map. The top row permutes *after* attention:
the original input, weights and output with their rows (and the weights' columns)
reordered by P, i.e. P X_in, P A P^T and P f(X). The bottom row permutes *before*: the
input built from the permuted tokens, its weights and its output, i.e. (PX)_in, A(PX) and
f(PX). When attention is equivariant the two rows are identical; the right-hand panel
shows |f(PX) - P f(X)|, all dark exactly when they agree.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from .core import HeatmapPanel, freeze_layout

__all__ = [
    "INPUT_COLOR_LIMITS",
    "PERMUTATION_COLOR_LIMITS",
    "DIFFERENCE_COLOR_LIMITS",
    "PERMUTATION_MAX_LABELS",
    "PermutationView",
    "permutation_view",
]

#: Colour limits of the input rows X (+ PE): entries N(0, 1), plus PE in [-1, 1].
INPUT_COLOR_LIMITS = (-3.0, 3.0)
#: Colour limits of the output rows (convex combinations of value rows).
PERMUTATION_COLOR_LIMITS = (-2.0, 2.0)
#: Colour limits of |f(PX) - P f(X)|; larger differences saturate.
DIFFERENCE_COLOR_LIMITS = (0.0, 0.5)
#: The most tokens shown as words along an axis; longer sentences show position indices.
PERMUTATION_MAX_LABELS = 16


class PermutationView:
    """Chapter 5's figure: inputs, weights and outputs permuted after vs before attention.

    Build it with :func:`permutation_view`; change it with :meth:`update` or :meth:`show`.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    after : tuple of HeatmapPanel
        Top row: P X_in (s, d), P A P^T (s, s), P f(X) (s, d).
    before : tuple of HeatmapPanel
        Bottom row: (PX)_in (s, d), A(PX) (s, s), f(PX) (s, d).
    difference : HeatmapPanel
        |f(PX) - P f(X)| (s, d).
    panels : tuple of HeatmapPanel
        All seven, in the order above.
    static : StaticLayer
    """

    palette = True  # 256-colour PNGs in the explorer: about a third of the bytes

    def __init__(self, figure: Figure):
        self.figure = figure
        engine = figure.get_layout_engine()
        if isinstance(engine, ConstrainedLayoutEngine):
            engine.set(h_pad=0.12, w_pad=0.04)  # room for the titles drawn as stamps
        axes = figure.subplot_mosaic(
            [["a_in", "a_w", "a_out", "diff"], ["b_in", "b_w", "b_out", "diff"]])
        cache: OrderedDict = OrderedDict()

        def panel(key, kind, ylabel):
            if kind == "in":
                return HeatmapPanel(axes[key], cmap="cividis", vmin=INPUT_COLOR_LIMITS[0],
                                    vmax=INPUT_COLOR_LIMITS[1], xlabel="dimension",
                                    ylabel=ylabel, colorbar_label="input", cache=cache)
            if kind == "w":
                return HeatmapPanel(axes[key], cmap="viridis", vmin=0.0, vmax=1.0,
                                    xlabel="key", ylabel="query", colorbar_label="weight",
                                    col_rotation=90, cache=cache)
            return HeatmapPanel(axes[key], cmap="cividis", vmin=PERMUTATION_COLOR_LIMITS[0],
                                vmax=PERMUTATION_COLOR_LIMITS[1], xlabel="dimension",
                                ylabel="", colorbar_label="output", cache=cache)

        self.after = (panel("a_in", "in", "permute after"), panel("a_w", "w", ""),
                      panel("a_out", "out", ""))
        self.before = (panel("b_in", "in", "permute before"), panel("b_w", "w", ""),
                       panel("b_out", "out", ""))
        self.difference = HeatmapPanel(
            axes["diff"], cmap="viridis", vmin=DIFFERENCE_COLOR_LIMITS[0],
            vmax=DIFFERENCE_COLOR_LIMITS[1], xlabel="dimension", ylabel="",
            colorbar_label="|f(PX) - P f(X)|", cache=cache)
        self.panels = (*self.after, *self.before, self.difference)
        first = (self.after[0], self.before[0])
        for p in self.panels:
            is_w = p in (self.after[1], self.before[1])
            # every panel of a row has the same rows: only the first column shows the words
            p.reserve(rows=p in first, cols=is_w, n=8)
        self.static = freeze_layout(figure, panels=self.panels)
        for p in self.panels:
            # Speed: the tick labels are stamps and the axis labels live in the static
            # layer, so the axes need not walk their (invisible) ticks on every draw; the
            # image covers the whole axes, so the white background patch is not drawn.
            p.ax.xaxis.set_visible(False)
            p.ax.yaxis.set_visible(False)
            p.ax.patch.set_visible(False)
            for spine in p.ax.spines.values():  # the image's own edge frames it
                spine.set_visible(False)
            if p not in first:
                p.row_labels.set_visible(False)

    def show(self, state) -> None:
        """Show a :class:`~attention_book.scenes.permutation.PermutationState`."""
        self.update(state.permuted_tokens, state.after, state.before, state.difference,
                    pe=state.pe)

    def update(self, tokens: Sequence[str], after, before, difference, *,
               pe: bool = False) -> None:
        """Show one state.

        Parameters
        ----------
        tokens : sequence of str, length s
            The tokens in the permuted order: the row labels of every panel when
            s <= PERMUTATION_MAX_LABELS, else the panels show position indices.
        after : tuple of three arrays
            P X_in:(s, d), P A P^T:(s, s), P f(X):(s, d).
        before : tuple of three arrays
            (PX)_in:(s, d), A(PX):(s, s), f(PX):(s, d).
        difference : array_like, shape (s, d)
            |f(PX) - P f(X)|.
        pe : bool
            Whether the inputs include positional encoding (for the titles).
        """
        s = len(tokens)
        arrays = [np.asarray(a, dtype=float) for a in (*after, *before, difference)]
        for i, a in enumerate(arrays):
            if a.ndim != 2 or a.shape[0] != s or (i in (1, 4) and a.shape != (s, s)):
                raise ValueError(f"panel {i} expects {s} rows (and (s, s) weights), "
                                 f"got shape {a.shape}")
        # words up to PERMUTATION_MAX_LABELS tokens, beyond that indices (cheaper to draw)
        labels = list(tokens) if s <= PERMUTATION_MAX_LABELS else None
        x_in = "X + PE" if pe else "X"
        titles = (f"P({x_in})", "P A(X) P\u1d40", "P f(X)",
                  "PX + PE" if pe else "PX", "A(PX)", "f(PX)", "|f(PX) \u2212 P f(X)|")
        for k, (p, a, title) in enumerate(zip(self.panels, arrays, titles)):
            # words only where they are drawn (rows: first column; columns: the weights);
            # the other panels keep constant index ticks, which cost nothing to update
            rows = labels if k in (0, 3) else None
            cols = labels if k in (1, 4) else None
            p.update(a, row_labels=rows, col_labels=cols, title=title)


def permutation_view(figure: Figure | None = None) -> PermutationView:
    """Build chapter 5's figure once (seven heatmaps; see :class:`PermutationView`).

    Parameters
    ----------
    figure : matplotlib.figure.Figure, optional
        An empty figure; by default a new 10.5 x 5.2 inch figure with constrained layout
        (made without pyplot).

    Returns
    -------
    PermutationView
    """
    if figure is None:
        figure = Figure(figsize=(10.5, 5.2), dpi=75, layout="constrained")
    return PermutationView(figure)


VIEWS = {"permutation": permutation_view}
