"""Chapter 6's weight figures (:func:`weights_figure`: the right and the wrong way to mask,
a padded batch)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .core import token_maps

__all__ = ["MAX_CROSSED", "weights_figure"]

#: The largest s whose masked cells are crossed (beyond it the crosses merge into a blur;
#: the grey of the masked scores still marks them).
MAX_CROSSED = 16


def _cross(ax, mask) -> None:
    """A white x on every False cell of ``mask`` (s_q, s_k), sized to the cells (none when
    it has more than :data:`MAX_CROSSED` rows)."""
    mask = np.asarray(mask, dtype=bool)
    if len(mask) <= MAX_CROSSED:
        rows, cols = np.nonzero(~mask)  # cell (i, j) is centred on (x=j, y=i)
        ax.add_line(Line2D(cols, rows, linestyle="none", marker="x", color="white",
                           markeredgewidth=1.2,
                           markersize=max(2.0, min(8.0, 60.0 / max(*mask.shape, 1)))))


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
            _cross(ax, mask)
    return fig
