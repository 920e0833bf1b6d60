"""Chapter 8's pictures: attention maps of trained heads, loss curves and head scores
over training, and the training lab's view (:class:`TrainingView`)."""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.transforms import blended_transform_factory

from .core import HeatmapPanel, freeze_layout, notebook_figure, token_maps, view_factory

__all__ = ["SCORE_COLORS", "heads_figure", "loss_figure", "training_curves_figure",
           "TrainingView", "training_view"]

#: Line colours of the heads' scores and of several runs' losses (colour-blind safe:
#: viridis/cividis-like blue, orange-brown, green, purple), with distinct markers too.
SCORE_COLORS = ("#31688e", "#b5651d", "#35b779", "#6a3d9a")
_MARKERS = ("o", "s", "^", "D")
#: The lab's legend of the head scores, above their axes (it names what they show).
_ABOVE = dict(loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False, fontsize=9,
              borderaxespad=0.2, handlelength=1.5)


def heads_figure(maps, titles: Sequence[str], tokens: Sequence | None = None, *,
                 width: float | None = None) -> Figure:
    """A row of attention maps ``maps``:(n, s, s) (rows = queries) on one colour scale
    [0, 1] (viridis), one title each, labelled with the input ``tokens`` (length s;
    default the positions). Returns a Figure with ``_repr_png_``."""
    maps = np.asarray(maps, dtype=float)
    n, s = maps.shape[0], maps.shape[-1]
    if maps.ndim != 3 or maps.shape[1] != s or len(titles) != n:
        raise ValueError(f"maps must be (n, s, s) with one title each, got {maps.shape} "
                         f"and {len(titles)} titles")
    fig = token_maps((min(width or 3.2 * n + 0.8, 9.5), 3.5), maps, titles,
                     [tokens if tokens is not None else range(s)] * n)[0]
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


class TrainingView:
    """Chapter 8's lab picture, built once by :func:`training_view`.

    Left, ``panels``: two heatmaps, the weights (s, s) of the model's two heads (viridis,
    [0, 1], rows = queries, labelled with the input's symbols). Right, top: the training
    loss of every step (log scale) and ln V; bottom: each head's held-out headline score
    at every checkpoint, named by the legend above it. Dashed vertical lines and dots
    (``markers``) mark the step shown. The curves, their legend and the label of ln V
    (``chance_text``) change only with the task: they are drawn once per task into the
    static layer (pasted as pixels), so moving the checkpoint slider draws only the
    markers, the two maps and their labels.
    """

    def __init__(self, figure: Figure):
        self.figure = figure
        grid = figure.add_gridspec(2, 3, width_ratios=(1.0, 1.0, 1.25))
        cache = OrderedDict()
        axes = [figure.add_subplot(grid[:, k]) for k in range(2)]
        self.panels = tuple(  # one colour bar for both maps
            HeatmapPanel(ax, xlabel="key j", ylabel="query i", col_rotation=90, cache=cache,
                         colorbar_label="attention weight", empty_text="no input:\ntype symbols",
                         colorbar=k == 1 and {"ax": axes})
            for k, ax in enumerate(axes))
        self.loss_ax, self.score_ax = (figure.add_subplot(grid[k, 2]) for k in range(2))
        self.loss_lines = _loss_lines(self.loss_ax, {"training loss": ([0, 1], [1, 1])}, 1.0)
        self.score_lines = _score_lines(self.score_ax, [0, 1], np.ones((2, 2)), ["a", "b"])
        self.chance_text = self.loss_ax.text(
            0.98, 1.0, "", ha="right", va="bottom", fontsize=9, color="#555555",
            transform=blended_transform_factory(self.loss_ax.transAxes, self.loss_ax.transData))
        self.loss_ax.set(xlabel="", ylim=(1e-3, 10))  # the limits: room for the widest ticks
        self.loss_ax.set_title("training loss", fontsize=10, y=1.0)
        for ax in (self.loss_ax, self.score_ax):
            ax.set_xlim(0, 3000)
        self.score_ax.legend(**_ABOVE)
        for panel in self.panels:
            panel.ax.title.set_fontsize(10)
            panel.reserve(rows=False, cols=False, n=24)
        self.static = freeze_layout(figure, static_axes=(self.loss_ax, self.score_ax),
                                    panels=self.panels)
        self.markers = []  # drawn per frame, on top of the pasted curves
        for ax, n in ((self.loss_ax, 1), (self.score_ax, 2)):
            span = blended_transform_factory(ax.transData, ax.transAxes)
            self.markers.append(Line2D([0, 0], [0, 1], transform=span, color="#444444",
                                       ls="--", lw=1.0))
            self.markers += [Line2D([0], [0], transform=ax.transData, ls="none", marker="o",
                                    ms=6, mfc=SCORE_COLORS[k], mec="black")
                             for k in range(n)]
        for line in self.markers:
            figure.add_artist(line)
        self._curves = None

    def show(self, state) -> None:
        """Show a :class:`~attention_book.scenes.training.TrainingState`."""
        titles = [f"{head}: {name} {'n/a' if v is None else f'{v:.2f}'}"
                  for head, name, v in zip(state.heads, state.score_names, state.input_scores)]
        self.update(state.tokens, state.weights, titles, state.step,
                    (state.loss_steps, state.loss, state.score_steps, state.score_curves,
                     [f"{h}: {n}" for h, n in zip(state.heads, state.score_names)],
                     math.log(state.vocab)))

    def _set_curves(self, curves) -> None:
        loss_steps, loss, score_steps, scores, labels, chance = curves
        self.loss_lines[0].set_data(loss_steps, loss)
        self.loss_lines[1].set_ydata([chance, chance])
        self.loss_lines[1].set_label(_chance_label(chance))
        self.chance_text.set(text=_chance_label(chance), y=chance)
        for line, c, label in zip(self.score_lines, scores, labels):
            line.set_data(score_steps, c)
            line.set_label(label)
        for ax in (self.loss_ax, self.score_ax):
            ax.set_xlim(-0.02 * score_steps[-1], 1.02 * score_steps[-1])
        self.score_ax.legend(**_ABOVE)
        self.loss_ax.set_ylim(0.5 * min(np.min(loss), chance), 2.0 * max(np.max(loss), chance))
        # named by their content: switching back to a task pastes its curves (1 ms) instead
        # of drawing them again (about 170 ms: 3000 points, log ticks, a legend)
        digest = hashlib.blake2b(repr((labels, chance)).encode(), digest_size=16)
        for array in (loss_steps, loss, score_steps, scores):
            digest.update(np.ascontiguousarray(array).tobytes())
        self.static.invalidate(variant=digest.hexdigest())

    def update(self, tokens: Sequence[int], weights, titles: Sequence[str], step: int,
               curves: tuple) -> None:
        """Show two heads' maps at one step, and the run's curves with that step marked.

        Parameters
        ----------
        tokens : sequence of int, length s
            The input (labels of rows and columns); may be empty.
        weights : array_like, shape (2, s, s)
            The two heads' attention weights.
        titles : sequence of str, length 2
        step : int
            The step to mark.
        curves : tuple
            ``(loss_steps (steps,), loss (steps,), score_steps (n_ckpt,), scores
            (2, n_ckpt), labels (2 str), chance (float))``.
        """
        weights = np.asarray(weights, dtype=float)
        s = len(tokens)
        if weights.shape != (len(self.panels), s, s) or len(titles) != len(self.panels):
            raise ValueError(f"weights must be ({len(self.panels)}, s, s) with s={s} and "
                             f"one title per head, got {weights.shape}, {len(titles)} titles")
        old = self._curves
        if old is None or any(not np.array_equal(a, b) for a, b in zip(old, curves)):
            self._set_curves(curves)
            self._curves = tuple(np.array(c) for c in curves)  # copies, to compare with
        labels = [str(t) for t in tokens]
        for panel, w, title in zip(self.panels, weights, titles):
            panel.update(w, row_labels=labels, col_labels=labels, title=title)
        loss_steps, loss, score_steps, scores = curves[:4]
        k = int(np.searchsorted(score_steps, step))
        at = min(step, len(loss) - 1)
        self.markers[0].set_xdata([step, step])
        self.markers[1].set_data([loss_steps[at]], [loss[at]])
        self.markers[2].set_xdata([step, step])
        for marker, c in zip(self.markers[3:], scores):
            marker.set_data([score_steps[k]], [c[k]])


training_view = view_factory(TrainingView, 9.5, 4.4, dpi=90)

VIEWS = {"training": training_view}
