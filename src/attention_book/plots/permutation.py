"""Chapter 5's picture: the permutation playground's seven heatmaps.

The top row permutes *after* attention: the input, weights and output with their rows (and
the weights' columns) reordered by P, i.e. P X_in, P A P^T and P f(X). The bottom row permutes
*before*: (PX)_in, A(PX) and f(PX), computed from the permuted tokens. When attention is
equivariant the rows are identical; the right-hand panel shows |f(PX) - P f(X)|, all dark
exactly when they agree."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from .core import HeatmapPanel, freeze_layout, view_factory

__all__ = ["INPUT_COLOR_LIMITS", "PERMUTATION_COLOR_LIMITS", "DIFFERENCE_COLOR_LIMITS",
           "PERMUTATION_MAX_LABELS", "PermutationView", "permutation_view"]

#: Colour limits of the input rows X (+ PE): entries N(0, 1), plus PE in [-1, 1].
INPUT_COLOR_LIMITS = (-3.0, 3.0)
#: Colour limits of the output rows (convex combinations of value rows).
PERMUTATION_COLOR_LIMITS = (-2.0, 2.0)
#: Colour limits of |f(PX) - P f(X)|; larger differences saturate.
DIFFERENCE_COLOR_LIMITS = (0.0, 0.5)
#: The most tokens shown as words along an axis; longer sentences show position indices.
PERMUTATION_MAX_LABELS = 16


class PermutationView:
    """Chapter 5's figure: inputs, weights and outputs permuted after vs before attention,
    each column on one colour scale (its bar below it). Build it with
    :func:`permutation_view`; change it with :meth:`update` or :meth:`show`."""

    def __init__(self, figure: Figure):
        self.figure = figure
        axes = figure.subplot_mosaic(
            [["a_in", "a_w", "a_out", "diff"], ["b_in", "b_w", "b_out", "diff"]])
        cache: OrderedDict = OrderedDict()

        def panel(key, cmap, limits, xlabel, bar, ylabel="", rotation=0.0):
            # one colour bar under each column, made by its bottom panel
            column = [axes[k] for k in (f"a{key[1:]}", key) if k in axes]
            return HeatmapPanel(axes[key], cmap=cmap, vmin=limits[0], vmax=limits[1],
                                xlabel=xlabel, ylabel=ylabel, colorbar_label=bar,
                                col_rotation=rotation, cache=cache,
                                colorbar=key[0] != "a" and dict(ax=column, location="bottom",
                                                                shrink=0.8, aspect=12))
        # top row (after): P X_in (s, d), P A P^T (s, s), P f(X) (s, d);
        # bottom row (before): (PX)_in (s, d), A(PX) (s, s), f(PX) (s, d)
        self.after, self.before = (
            (panel(f"{r}_in", "cividis", INPUT_COLOR_LIMITS, "dimension", "input", label),
             panel(f"{r}_w", "viridis", (0.0, 1.0), "key", "weight", "query", 90),
             panel(f"{r}_out", "cividis", PERMUTATION_COLOR_LIMITS, "dimension", "output"))
            for r, label in (("a", "permute after"), ("b", "permute before")))
        self.difference = panel("diff", "viridis", DIFFERENCE_COLOR_LIMITS, "dimension",
                                r"$|f(PX) - P\,f(X)|$")  # (s, d)
        self.panels = (*self.after, *self.before, self.difference)  # all seven
        for k, p in enumerate(self.panels):
            # every panel of a row has the same rows: only the first column shows the words
            p.reserve(rows=k in (0, 3), cols=k in (1, 4), n=8)
        self.static = freeze_layout(figure, panels=self.panels)
        for k, p in enumerate(self.panels):
            # Speed: the image covers the axes and its own edge frames it, so no background
            # patch or spines are drawn.
            for artist in (p.ax.patch, *p.ax.spines.values()):
                artist.set_visible(False)
            p.row_labels.set_visible(k in (0, 3))

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
            The tokens in the permuted order: the rows' labels when
            s <= PERMUTATION_MAX_LABELS, else the panels show position indices.
        after, before : tuple of three arrays
            P X_in:(s, d), P A P^T:(s, s), P f(X):(s, d); (PX)_in:(s, d), A(PX):(s, s),
            f(PX):(s, d).
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
        titles = (r"$P(X + PE)$" if pe else "$P(X)$", r"$P\,A(X)\,P^\top$", r"$P\,f(X)$",
                  "$PX + PE$" if pe else "$PX$", "$A(PX)$", "$f(PX)$",
                  r"$|f(PX) - P\,f(X)|$")
        for k, (p, a, title) in enumerate(zip(self.panels, arrays, titles)):
            # words only where they are drawn (rows: first column; columns: the weights);
            # the other panels keep constant index ticks, which cost nothing to update
            p.update(a, row_labels=labels if k in (0, 3) else None,
                     col_labels=labels if k in (1, 4) else None, title=title)


permutation_view = view_factory(PermutationView, 9.5, 6.0, dpi=75, wspace=0.04)

VIEWS = {"permutation": permutation_view}
