"""Chapter 7's figures over many seeds: the residual stream's gain and norm through a stack
of blocks."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.figure import Figure

from .core import notebook_figure

__all__ = ["gain_figure", "stream_norm_figure"]


# ------------------------------------------------------- the chapter's static figures
_BAND_COLORS = ("#00204c", "#c9a227", "#31688e", "#35b779")
_BAND_STYLES = ("-", "-", "--", "--")


def _band_figure(curves: Mapping, *, step: float, xlabel: str, ylabel: str, title: str,
                 reference: tuple[float, str], log: bool) -> Figure:
    """Median over seeds (line) and 10th..90th percentile (band) of each (n_seeds, n)
    array, the points ``step`` apart along x."""
    fig = notebook_figure(6.8, 3.8)
    ax = fig.subplots()
    for (label, values), color, style in zip(curves.items(), _BAND_COLORS, _BAND_STYLES):
        values = np.asarray(values, dtype=float)  # (n_seeds, n)
        x = np.arange(values.shape[1]) * step
        low, high = np.percentile(values, [10, 90], axis=0)  # (n,) each
        ax.fill_between(x, low, high, color=color, alpha=0.15, linewidth=0)
        ax.plot(x, np.median(values, axis=0), color=color, linestyle=style, marker="o",
                markersize=3, label=label)
    ax.axhline(reference[0], color="0.35", linestyle=":", linewidth=1.0, label=reference[1])
    if log:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.set_xticks(range(0, int(round(x[-1])) + 1))
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend(fontsize=9, loc="best", title="median, band: 10th to 90th percentile",
              title_fontsize=9)
    return fig


def gain_figure(gains: Mapping) -> Figure:
    """The Jacobian gain ``||J_l||_F / sqrt(s d)`` after each block l (log scale): median
    and 10th..90th percentile band of each setting's (n_seeds, L + 1) array of
    :func:`~attention_book.block.jacobian_gain` values (at most four settings)."""
    n = len(next(iter(gains.values())))
    return _band_figure(gains, step=1.0, xlabel="after block l (0 = the input)",
                        ylabel=r"gain $\Vert J\Vert\,/\sqrt{s\,d}$ (log scale)",
                        title=f"how much of a change to x reaches block l ({n} seeds)",
                        reference=(1.0, "1 = the identity"), log=True)


def stream_norm_figure(norms: Mapping, d: int) -> Figure:
    """The residual stream's mean token norm after every sub-layer: median and 10th..90th
    percentile band of each setting's (n_seeds, 2 L + 1) array of
    :func:`~attention_book.block.stream_norms` values, with sqrt(d) dotted."""
    n = len(next(iter(norms.values())))
    return _band_figure(norms, step=0.5,
                        xlabel="after block l (half steps: after its attention)",
                        ylabel="mean \u2016token\u2016", log=False,
                        title=f"the residual stream's norm ({n} seeds)",
                        reference=(float(np.sqrt(d)), rf"$\sqrt{{d}}$ = {np.sqrt(d):.2f}"))
