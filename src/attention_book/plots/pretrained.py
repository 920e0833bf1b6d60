"""Chapter 9's figures: every head's scores as (layer, head) grids, several heads' weights side
by side, one score taken apart dimension by dimension, and the spread of many heads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.patches import Rectangle

from ..heads import SCORE_LABELS
from .core import NotebookFigure, notebook_figure, token_maps

__all__ = ["head_scores_figure", "head_maps_figure", "neuron_view_figure", "entropy_figure"]

_DARK, _LIGHT, _ACCENT = "#1f5fa8", "#9dbfe3", "#ff3b30"  # blue, pale blue, red outline


# ------------------------------------------------------------------ the chapter's figures
def head_scores_figure(means: Mapping[str, np.ndarray]) -> NotebookFigure:
    """Each score of every head as a (layer, head) grid, the top head outlined.

    Parameters
    ----------
    means : mapping of str to numpy.ndarray, each of shape (n_layers, h)
        Scores between 0 and 1, keyed like
        :data:`~attention_book.heads.SCORE_LABELS` (all six are drawn).
    """
    figure = notebook_figure(9.0, 3.5)
    axes = figure.subplots(2, 3, sharex=True, sharey=True)
    for ax, (name, label) in zip(axes.ravel(), SCORE_LABELS.items()):
        grid = np.asarray(means[name], dtype=float)  # (n_layers, h)
        image = ax.imshow(grid, cmap="viridis", vmin=0, vmax=1)
        layer, head = np.unravel_index(np.argmax(grid), grid.shape)
        ax.add_patch(Rectangle((head - 0.5, layer - 0.5), 1, 1, fill=False, ec=_ACCENT, lw=2))
        ax.set_title(f"{label}: top L{layer} H{head} {grid[layer, head]:.2f}", fontsize=10)
        ax.set(xticks=range(0, grid.shape[1], 2), yticks=range(grid.shape[0]))
        ax.tick_params(labelsize=9)
    for ax in axes[-1]:
        ax.set_xlabel("head")
    for ax in axes[:, 0]:
        ax.set_ylabel("layer")
    figure.colorbar(image, ax=axes, label="mean over the gallery", shrink=0.9)
    return figure


def head_maps_figure(panels: Sequence[tuple]) -> NotebookFigure:
    """Several heads' weights side by side, one heatmap each.

    Parameters
    ----------
    panels : sequence of (title, tokens, weights)
        ``weights`` of shape (T, T) for the T ``tokens``.
    """
    titles, tokens, weights = zip(*panels)
    return token_maps((min(2.3 * len(panels) + 0.8, 9.5), 3.4), weights, titles, tokens,
                      label="weight", xlabel="key token", ylabel="query token",
                      width_ratios=[max(len(t), 6) for t in tokens])[0]  # as wide as needed


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
    ax.set_xticks(x, [str(i) for i in order], fontsize=9)
    ax.set(xlabel=f"dimension i of q and k (sorted by the difference '{names[0]}' \u2212 "
                  f"'{names[1]}')", ylabel=r"$q[i]\,k[i]\,/\sqrt{d_k}$",
           title=f"query '{query}': the score on each key is the sum of its bars")
    ax.legend(fontsize=9)
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
    for row, values in enumerate(groups.values()):
        v = np.sort(np.ravel(np.asarray(values, dtype=float)))
        jitter = 0.25 * np.sin(np.arange(len(v)) * 2.4)  # fixed, spreads equal values
        ax.plot(v, row + jitter, "o", ms=4, alpha=0.7, color=_DARK)
        ax.plot([v.mean()] * 2, [row - 0.38, row + 0.38], color=_ACCENT, lw=2)
    ax.set_yticks(range(len(groups)), [f"{n} ({np.size(v)} heads)" for n, v in groups.items()])
    ax.set(xlim=(-0.02, 1.02), ylim=(len(groups) - 0.5, -0.5))
    ax.set_xlabel("mean row entropy / log s   (0: every query on one key, 1: uniform)")
    ax.grid(axis="x", alpha=0.3)
    return figure


