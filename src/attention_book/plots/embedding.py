"""Chapter 1's picture: the embeddings X:(s, d) and their cosine similarities (s, s)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from .core import HeatmapPanel, freeze_layout, view_factory

__all__ = ["X_COLOR_LIMITS", "EmbeddingView", "embedding_view"]

#: Colour limits of the embedding heatmap. Entries of an untrained embedding table are
#: N(0, 1), so 99.7 % of them fall in [-3, 3]; the rest saturate the colour scale.
X_COLOR_LIMITS = (-3.0, 3.0)


class EmbeddingView:
    """Chapter 1's picture, built once by :func:`embedding_view`.

    Left, ``x_panel``: X:(s, d) as a heatmap (a row per token, a column per dimension,
    cividis, limits :data:`X_COLOR_LIMITS`); right, ``similarity_panel``: the (s, s)
    cosine similarities (viridis, [-1, 1]). ``static`` holds colour bars and axis labels.
    """

    def __init__(self, figure: Figure):
        self.figure = figure
        ax_x, ax_sim = figure.subplots(1, 2, width_ratios=(1.35, 1.0))
        cache: OrderedDict = OrderedDict()
        self.x_panel = HeatmapPanel(
            ax_x, cmap="cividis", vmin=X_COLOR_LIMITS[0], vmax=X_COLOR_LIMITS[1],
            xlabel="dimension j (column of X)", ylabel="token (row i of X)",
            colorbar_label="X[i, j]", cache=cache)
        self.similarity_panel = HeatmapPanel(
            ax_sim, cmap="viridis", vmin=-1.0, vmax=1.0, xlabel="token j", ylabel="token i",
            colorbar_label="cosine similarity of rows i and j", col_rotation=90, cache=cache)
        self.x_panel.reserve(rows=True, cols=False)
        self.similarity_panel.reserve(rows=True, cols=True)
        self.static = freeze_layout(figure, panels=(self.x_panel, self.similarity_panel))

    def show(self, state) -> None:
        """Show a :class:`~attention_book.scenes.embedding.EmbeddingState`."""
        self.update(state.tokens, state.X, state.similarity)

    def update(self, tokens: Sequence[str], X, similarity) -> None:
        """Show ``tokens`` (length s, the row and column labels; may be empty), their
        embeddings ``X`` : (s, d) and ``similarity`` = cosine_similarity(X) : (s, s)."""
        X, similarity = np.asarray(X, dtype=float), np.asarray(similarity, dtype=float)
        s = len(tokens)
        if X.ndim != 2 or X.shape[0] != s or similarity.shape != (s, s):
            raise ValueError(f"expected X:(s, d) and similarity:(s, s) with s={s} tokens, "
                             f"got X {X.shape} and similarity {similarity.shape}")
        self.x_panel.update(X, row_labels=tokens, title=f"X : (s, d) = ({s}, {X.shape[1]})")
        self.similarity_panel.update(similarity, row_labels=tokens, col_labels=tokens,
                                     title=f"cosine similarity : (s, s) = ({s}, {s})")


embedding_view = view_factory(EmbeddingView, 9.0, 3.8, wspace=0.06)

VIEWS = {"embedding": embedding_view}
