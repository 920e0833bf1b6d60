"""Chapter 2's six figures: layouts, the encoding and its waves, the wavelengths, the
similarity of positions, PE added to the embeddings, and RoPE turning a query and a key."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from .core import notebook_figure

__all__ = ["WAVE_COLORS", "layouts_figure", "encoding_figure", "wavelengths_figure",
           "similarity_figure", "sum_figure", "rope_pair_figure"]

#: Colours of the wave lines (from cividis and viridis, told apart also by line width).
WAVE_COLORS = ("#00204c", "#31688e", "#35b779", "#c9a227")
_WAVE_WIDTHS = (2.0, 1.5, 1.2, 0.9)
_TICKS = (-1.0, -0.5, 0.0, 0.5, 1.0)


# ------------------------------------------------------- the chapter's static figures
def _heatmap(ax, matrix, title: str, *, vmin=-1.0, vmax=1.0, cmap="cividis",
             xlabel="dimension j"):
    image = ax.imshow(matrix, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto",
                      interpolation="nearest")
    ax.set(title=title, xlabel=xlabel, ylabel="position p")
    ax.locator_params(integer=True)  # ticks on whole rows and columns
    return image


def _heatmap_row(size, matrices, titles, *, label, vmin=-1.0, vmax=1.0, **subplots):
    """Heatmaps side by side on one colour scale, each titled "title : shape"."""
    fig = notebook_figure(*size)
    axes = fig.subplots(1, len(matrices), **subplots)
    for ax, matrix, title in zip(axes, matrices, titles):
        image = _heatmap(ax, matrix, f"{title} : {np.shape(matrix)}", vmin=vmin, vmax=vmax)
    fig.colorbar(image, ax=axes, label=label, ticks=np.linspace(vmin, vmax, 5))
    return fig, axes


def layouts_figure(pe, pe_cat) -> Figure:
    """The interleaved layout PE:(s, d) next to the concatenated one PE_cat:(s, d), on one
    colour scale [-1, 1] (cividis)."""
    return _heatmap_row((9.0, 3.4), (pe, pe_cat), ("interleaved (the paper)", "concatenated"),
                        label="PE[p, j]")[0]


def encoding_figure(pe, columns: Sequence[int]) -> Figure:
    """PE:(s, d) as a heatmap and its ``columns`` (at most 4) as waves over the
    positions, in :data:`WAVE_COLORS`."""
    pe = np.asarray(pe, dtype=float)
    fig = notebook_figure(9.5, 3.6)
    fig.get_layout_engine().set(wspace=0.1)  # room between the colour bar and the waves
    ax_map, ax_wave = fig.subplots(1, 2)
    fig.colorbar(_heatmap(ax_map, pe, f"PE : (s, d) = {pe.shape}"), ax=ax_map,
                 label="PE[p, j]", ticks=_TICKS)
    for j, color, width in zip(columns, WAVE_COLORS, _WAVE_WIDTHS):
        ax_wave.plot(np.arange(len(pe)), pe[:, j], color=color, linewidth=width,
                     label=f"j = {j}")
    ax_wave.set(title="columns of PE as waves", xlabel="position p", ylabel="PE[p, j]",
                yticks=_TICKS)
    ax_wave.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9,
                   title="column", title_fontsize=9)
    ax_wave.locator_params(axis="x", integer=True)
    return fig


def wavelengths_figure(lam, base: float) -> Figure:
    """The wavelengths lam:(d/2,) of the frequency pairs on a log scale, between the lines
    2 pi and 2 pi base."""
    lam = np.asarray(lam, dtype=float)
    fig = notebook_figure(6.5, 3.2)
    ax = fig.subplots()
    ax.semilogy(np.arange(len(lam)), lam, color=WAVE_COLORS[1], label="wavelength of pair i")
    ax.axhline(2 * np.pi, color="#555555", linestyle=":", label=r"$2\pi$")
    ax.axhline(2 * np.pi * base, color=WAVE_COLORS[3], linestyle="--",
               label=rf"$2\pi \times {base:g}$")
    ax.set(xlabel="frequency pair i", ylabel="wavelength (positions, log scale)",
           title=f"d = {2 * len(lam)}: a straight line on a log scale = geometric growth")
    ax.legend(fontsize=9)
    ax.locator_params(axis="x", integer=True)
    return fig


def similarity_figure(similarity) -> Figure:
    """The cosine similarity of positions, ``PE PE^T / (d/2)`` : (s, s), as a heatmap whose
    colour limits are the data's range (rounded out to 0.1, and said on the colour bar),
    and the same numbers as a function of the offset k = q - p, read off its first row
    and column (it is Toeplitz)."""
    sim = np.asarray(similarity, dtype=float)  # (s, s)
    s = len(sim)
    low, high = np.floor(sim.min() * 10) / 10, 1.0  # 1: a position with itself
    fig = notebook_figure(9.5, 3.6)
    fig.get_layout_engine().set(wspace=0.1)  # room between the colour bar and the curve
    ax_g, ax_k = fig.subplots(1, 2)
    image = _heatmap(ax_g, sim, rf"$PE\,PE^\top/(d/2)$ : ({s}, {s})", vmin=low, vmax=high,
                     cmap="viridis", xlabel="position q")
    fig.colorbar(image, ax=ax_g,
                 label=f"cosine similarity\n(colours span the data, {low:g} to {high:g})")
    offsets = np.arange(-(s - 1), s)  # (2s - 1,)
    by_offset = np.concatenate([sim[:0:-1, 0], sim[0]])  # k < 0 from column 0, k >= 0 row 0
    ax_k.plot(offsets, by_offset, color=WAVE_COLORS[1])
    ax_k.set(title="the same numbers against the offset",
             xlabel="offset k = q \u2212 p", ylabel=r"$PE(p)\cdot PE(p+k)\,/\,(d/2)$")
    ax_k.locator_params(axis="x", integer=True)
    return fig


def sum_figure(X, pe, tokens: Sequence[str]) -> Figure:
    """X:(s, d), PE:(s, d) and X + PE side by side on one colour scale [-3, 3], rows
    labelled by the tokens."""
    fig, axes = _heatmap_row((9.5, 2.9), (X, pe, np.add(X, pe)),
                             ("X (tokens)", "PE (positions)", "X + PE"), label="value",
                             vmin=-3, vmax=3, sharey=True)
    for ax, ylabel in zip(axes, ("token (position p)", "", "")):
        ax.set_ylabel(ylabel)
    axes[0].set_yticks(range(len(tokens)), tokens)
    return fig


def rope_pair_figure(q, k, placements) -> Figure:
    """RoPE in one frequency pair: a query q:(2,) and a key k:(2,) as arrows in the plane,
    one panel per placement ``(m, n, q_m, k_n)``: the query at position m and the key at
    position n, turned (q_m, k_n: (2,) each, computed by the caller). The unturned q and k
    are drawn faint and dashed; each title gives the two positions and the turned pair's dot
    product."""
    q, k = np.asarray(q, dtype=float), np.asarray(k, dtype=float)
    reach = 1.25 * max(np.linalg.norm(q), np.linalg.norm(k))
    fig = notebook_figure(3.1 * len(placements), 3.4)
    axes = np.atleast_1d(fig.subplots(1, len(placements)))
    for ax, (m, n, q_m, k_n) in zip(axes, placements):
        for vector, color in ((q, WAVE_COLORS[0]), (k, WAVE_COLORS[2])):
            ax.plot([0, vector[0]], [0, vector[1]], color=color, linewidth=1.0,
                    linestyle="--", alpha=0.45)
        for vector, color, name in ((q_m, WAVE_COLORS[0], f"q at m = {m}"),
                                    (k_n, WAVE_COLORS[2], f"k at n = {n}")):
            ax.annotate("", xy=tuple(vector), xytext=(0, 0),
                        arrowprops={"arrowstyle": "-|>", "color": color, "linewidth": 2.0})
            ax.plot([], [], color=color, linewidth=2.0, label=name)  # the legend's entry
        ax.set(xlim=(-reach, reach), ylim=(-reach, reach), aspect="equal",
               title=f"m = {m}, n = {n}:  q\u00b7k = {float(np.dot(q_m, k_n)):.2f}",
               xlabel="column 2i", ylabel="column 2i + 1" if ax is axes[0] else "")
        ax.axhline(0, color="0.8", linewidth=0.6, zorder=0)
        ax.axvline(0, color="0.8", linewidth=0.6, zorder=0)
        ax.legend(loc="lower left", fontsize=9, frameon=False)
    return fig
