"""Chapter 8's pictures: attention maps of trained heads, loss curves and head scores
over training."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from .core import notebook_figure, token_maps

__all__ = ["SCORE_COLORS", "heads_figure", "loss_figure", "training_curves_figure"]

#: Line colours of the heads' scores and of several runs' losses (colour-blind safe:
#: viridis/cividis-like blue, orange-brown, green, purple), with distinct markers too.
SCORE_COLORS = ("#31688e", "#b5651d", "#35b779", "#6a3d9a")
_MARKERS = ("o", "s", "^", "D")


def heads_figure(maps, titles: Sequence[str], tokens: Sequence | None = None, *,
                 width: float | None = None) -> Figure:
    """A row of attention maps ``maps``:(n, s, s) (rows = queries) on one colour scale
    [0, 1] (viridis), one title each, labelled with the positions and, given the input
    ``tokens`` (length s), each position's symbol ("7: 31"): the chapter speaks of "query
    11" and "6 positions back", which a reader counted row by row when only the symbols
    were named (chapters 6-9 review, F6). Returns a Figure with ``_repr_png_``."""
    maps = np.asarray(maps, dtype=float)
    n, s = maps.shape[0], maps.shape[-1]
    if maps.ndim != 3 or maps.shape[1] != s or len(titles) != n:
        raise ValueError(f"maps must be (n, s, s) with one title each, got {maps.shape} "
                         f"and {len(titles)} titles")
    if tokens is None:
        labels, axes = range(s), {"xlabel": "key j", "ylabel": "query i"}
    else:
        labels = [f"{i}: {t}" for i, t in enumerate(tokens)]
        axes = {"xlabel": "key position j: its symbol", "ylabel": "query position i: its symbol"}
    fig = token_maps((min(width or 3.2 * n + 0.8, 9.5), 3.5 if s <= 12 else 4.2), maps, titles,
                     [labels] * n, **axes)[0]
    fig.draw_without_rendering()  # constrained layout settles in two passes with square maps
    return fig


def _chance_label(chance: float) -> str:
    return rf"uniform guess $\ln V$ = {chance:.2f}"


def _loss_lines(ax, curves: Mapping, chance: float | None) -> list:
    """Loss curves {label: (steps, loss)} on a log scale, and the uniform-guess line."""
    lines = [ax.plot(steps, loss, color=SCORE_COLORS[k % 4], lw=1.4, label=label)[0]
             for k, (label, (steps, loss)) in enumerate(curves.items())]
    if chance is not None:
        lines.append(ax.axhline(chance, color="#555555", ls=":", lw=1.0,
                                label=_chance_label(chance)))
    ax.set(yscale="log", xlabel="optimiser step", ylabel="loss (cross-entropy)")
    ax.locator_params(axis="x", integer=True)  # steps are whole numbers
    return lines


def loss_figure(curves: Mapping, chance: float | None = None, title: str = "") -> Figure:
    """Training loss against step (log scale), one line per run of ``curves``
    ({label: (steps (n,), loss (n,))}), and the loss of a uniform guess ``chance`` = ln V
    as a dotted line."""
    fig = notebook_figure(6.0, 3.0)
    ax = fig.subplots()
    _loss_lines(ax, curves, chance)
    ax.set_title(title)
    ax.legend(fontsize=9)
    return fig


def _score_lines(ax, steps, curves, labels: Sequence[str]) -> list:
    """Each head's score curve (n_heads, n_ckpt) against the checkpoint steps."""
    lines = [ax.plot(steps, c, color=SCORE_COLORS[k % 4], marker=_MARKERS[k % 4], ms=3,
                     lw=1.2, label=label)[0] for k, (c, label) in enumerate(zip(curves, labels))]
    ax.set(xlabel="optimiser step", ylabel="head score (held-out)", ylim=(-0.03, 1.03))
    ax.locator_params(axis="x", integer=True)
    return lines


def training_curves_figure(loss_steps, loss, score_steps, curves, labels: Sequence[str],
                           chance: float | None = None) -> Figure:
    """Left, the training loss ``loss``:(steps,) and ln V; right, each head's score
    ``curves``:(n_heads, n_ckpt) at the checkpoint steps ``score_steps``:(n_ckpt,), one
    label per head."""
    fig = notebook_figure(9.5, 3.4)
    ax_loss, ax_score = fig.subplots(1, 2)
    _loss_lines(ax_loss, {"training loss": (loss_steps, loss)}, chance)
    ax_loss.legend(fontsize=9)
    ax_loss.set_title("loss of each step's fresh batch")
    _score_lines(ax_score, score_steps, np.asarray(curves), labels)
    ax_score.legend(fontsize=9)
    ax_score.set_title("what each head does, at each checkpoint")
    return fig


