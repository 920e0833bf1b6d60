"""Chapter 10's figures: every head of SmolLM2 scored as a (layer, head) grid, the weight at
each distance, the removal of heads, and a few heads' weights on a prompt."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.patches import Rectangle

from .core import NotebookFigure, notebook_figure, token_maps

__all__ = ["decoder_scores_figure", "distance_figure", "removal_figure", "decoder_maps_figure"]

_ACCENT = "#ff3b30"  # the top heads' outline
_BLUE, _ORANGE, _GREY = "#1f5fa8", "#e69f00", "#8c8c8c"  # colour-blind-safe (Okabe-Ito)


def decoder_scores_figure(grids: Mapping[str, np.ndarray], uniform: Mapping[str, float],
                          top: int = 4) -> NotebookFigure:
    """One (n_layers, h) grid a score, side by side, the ``top`` best heads outlined.

    Parameters
    ----------
    grids : mapping of str to numpy.ndarray (n_layers, h)
        Panel title -> each head's mean score, between 0 and 1.
    uniform : mapping of str to float
        Panel title -> what an even spread of weight scores (said in the title).
    """
    figure = notebook_figure(2.6 * len(grids) + 1.0, 5.6)
    axes = np.atleast_1d(figure.subplots(1, len(grids), sharey=True))
    for ax, (name, grid) in zip(axes, grids.items()):
        grid = np.asarray(grid, dtype=float)
        image = ax.imshow(grid, cmap="viridis", vmin=0, vmax=1, aspect="auto")
        for i in np.argsort(-grid, axis=None)[:top]:
            layer, head = np.unravel_index(i, grid.shape)
            ax.add_patch(Rectangle((head - 0.5, layer - 0.5), 1, 1, fill=False, ec=_ACCENT,
                                   lw=1.5))
        best = np.unravel_index(np.argmax(grid), grid.shape)
        ax.set_title(f"{name}\nbest L{best[0]} H{best[1]} {grid[best]:.2f}, "
                     f"even {uniform[name]:.2f}", fontsize=9)
        ax.set(xticks=range(grid.shape[1]), yticks=range(0, grid.shape[0], 3),
               xlabel="head")
        ax.tick_params(labelsize=9)
    axes[0].set_ylabel("layer")
    figure.colorbar(image, ax=list(axes), label="mean weight", shrink=0.8)
    return figure


def distance_figure(measured: np.ndarray, uniform: np.ndarray, rope: np.ndarray
                    ) -> NotebookFigure:
    """Two panels: the mean weight at each distance (measured against an even spread), and
    RoPE's own decay of a query-key score with distance.

    Parameters
    ----------
    measured : numpy.ndarray, shape (k,)
        Mean weight at distance 0..k-1, every head of the model, the first token left out.
    uniform : numpy.ndarray, shape (k,)
        What an even spread over the visible keys puts at each distance.
    rope : numpy.ndarray, shape (m,)
        The mean score of a query with its own key rotated to distance 0..m-1, over its score
        at distance 0 (drawn from distance 1, on a logarithmic axis).
    """
    figure = notebook_figure(8.6, 3.0)
    left, right = figure.subplots(1, 2)
    k = np.arange(len(measured))
    left.plot(k, measured, "o-", color=_BLUE, ms=3, label="SmolLM2, mean of 270 heads")
    left.plot(k, uniform, "--", color=_GREY, label="even spread")
    left.set(xlabel="distance i - j (tokens)", ylabel="mean weight", yscale="log")
    left.legend(fontsize=9, frameon=False)
    right.plot(np.arange(1, len(rope)), rope[1:], color=_ORANGE, lw=0.8)
    right.axhline(0, color=_GREY, lw=0.8)
    right.set(xlabel="distance (tokens)", ylabel="score / score at 0", xscale="log",
              xlim=(1, len(rope) - 1))
    right.set_title("RoPE alone: a query and its own key", fontsize=10)
    left.set_title("where the weight goes", fontsize=10)
    for ax in (left, right):
        ax.tick_params(labelsize=9)
    return figure


def removal_figure(labels: Sequence[str], loss: np.ndarray, accuracy: np.ndarray
                   ) -> NotebookFigure:
    """The loss and the accuracy on the repeated half, one bar a removal.

    Parameters
    ----------
    labels : sequence of str
        What was removed, one a bar ("none", "the induction heads", "random 1", ...).
    loss, accuracy : numpy.ndarray, shape (n,)
    """
    figure = notebook_figure(8.6, 3.0)
    axes = figure.subplots(1, 2)
    colours = [_GREY if "none" in s else _ACCENT if "induction" in s else _BLUE for s in labels]
    y = np.arange(len(labels))
    for ax, values, name in ((axes[0], loss, "loss on the repeat (nats)"),
                             (axes[1], accuracy, "next token right on the repeat")):
        ax.barh(y, values, color=colours)
        ax.set(yticks=y, xlabel=name)
        ax.invert_yaxis()
        ax.tick_params(labelsize=9)
    axes[0].set_yticklabels(labels)
    axes[1].set_yticklabels([])
    axes[1].set_xlim(0, 1)
    return figure


def decoder_maps_figure(panels: Sequence[tuple]) -> NotebookFigure:
    """Several heads' weights on one prompt, side by side.

    Parameters
    ----------
    panels : sequence of (title, tokens, weights)
        ``weights`` of shape (T, T).
    """
    titles, tokens, weights = zip(*panels)
    return token_maps((min(2.6 * len(panels) + 1.0, 9.5), 3.6), weights, titles, tokens,
                      label="weight", xlabel="key token", ylabel="query token")[0]
