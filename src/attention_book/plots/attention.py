"""Chapter 3's figure: the measured cost of attention (:func:`cost_figure`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from .core import NotebookFigure, notebook_figure

__all__ = ["cost_figure"]

_SCALED_COLOR = "#1f5fa8"    # dark blue
_UNSCALED_COLOR = "#c8641e"  # orange (blue/orange: distinguishable in common colour blindness)


# ------------------------------------------------------------------ what it costs
def cost_figure(sizes: Sequence[int], seconds: Mapping[str, Sequence[float]],
                caches: Mapping[str, int] | None = None, itemsize: float = 4, *,
                held: str = "one (s, s) matrix") -> NotebookFigure:
    """Measured attention time against the sequence length, on log-log axes.

    Left: seconds against s for each implementation, with a dashed guide of slope 2
    (time proportional to s^2) through the last point of the first. Right: the time per
    score, seconds / s^2 in nanoseconds (flat where doubling s quadruples the time), with
    dotted lines where ``itemsize`` bytes per score (one (s, s) float32 matrix by default;
    a kernel's measured working set, ``held``) fill each cache level.

    Parameters
    ----------
    sizes : sequence of int, length n
        The sequence lengths s, increasing.
    seconds : mapping of str to sequence of float, each length n
        Name of the implementation -> measured seconds.
    caches : mapping of str to int, optional
        Cache level -> bytes (:func:`attention_book.cost.cache_sizes`).
    itemsize : float
        Bytes held per score: 4 for one float32 (s, s) matrix; about 9 for torch's math
        kernel (:func:`attention_book.reference.torch_sdpa_peak_bytes` divided by s^2).
    held : str
        What those bytes are, for the lines' labels and the alt text.
    """
    s = np.asarray(sizes, dtype=float)  # (n,)
    figure = notebook_figure(8.8, 4.0)
    ax_time, ax_per = figure.subplots(1, 2)
    colors = (_SCALED_COLOR, _UNSCALED_COLOR, "0.3")
    for (name, values), color, marker in zip(seconds.items(), colors, "osD"):
        t = np.asarray(values, dtype=float)  # (n,)
        ax_time.plot(s, t * 1e3, marker=marker, color=color, label=name)
        ax_per.plot(s, t / s ** 2 * 1e9, marker=marker, color=color, label=name)
    first = np.asarray(next(iter(seconds.values())), dtype=float)
    ax_time.plot(s, first[-1] * 1e3 * (s / s[-1]) ** 2, ls="--", color="0.2", lw=1,
                 label=r"slope 2: time $\propto s^2$")
    for ax, title in ((ax_time, "time of one attention call"), (ax_per, "time per score")):
        ax.set_xscale("log", base=2)
        ax.set(xlabel="sequence length s", title=title)
        ax.grid(True, alpha=0.3, which="both")
    ax_time.set(yscale="log", ylabel="time (ms)")
    figure.legend(handles=ax_time.get_lines(), loc="outside lower center", ncol=2, fontsize=9)
    ax_per.set(ylim=(0, None), ylabel=r"ns per score (time / $s^2$)")
    lines = []
    for level, size in (caches or {}).items():
        fill = math.sqrt(size / itemsize)  # s at which s^2 * itemsize bytes fill the level
        if s[0] <= fill <= s[-1]:
            ax_per.axvline(fill, color="0.4", ls=":", lw=1)
            right = fill > math.sqrt(s[0] * s[-1])  # past the middle: written to its left
            ax_per.text(fill, 0.02 + 0.16 * len(lines), f" {held} \n fills {level} ",
                        fontsize=9,
                        ha="right" if right else "left", color="0.3",
                        transform=ax_per.get_xaxis_transform())
            lines.append(f"{level} ({size / 2**20:g} MiB) at s = {fill:.0f}")
    figure.alt = (
        f"Two panels against the sequence length s from {int(s[0])} to {int(s[-1])} on log "
        f"axes. Left: the measured time of {' and '.join(seconds)}, in milliseconds on a log "
        "axis, with a dashed line of slope 2 (time proportional to s squared). Right: the "
        "time divided by s squared, in nanoseconds per score"
        + (f", with dotted lines where {held.replace('(s, s)', 's by s')} fills the cache: "
           + "; ".join(lines)
           if lines else "") + ".")
    return figure


