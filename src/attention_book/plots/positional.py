"""Chapter 2's pictures: the lab's view (PE:(s, d), its waves, the (s, s) similarity of
positions, the relative-position rotation check) and the chapter's five static figures."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.offsetbox import DrawingArea, HPacker, TextArea
from matplotlib.ticker import MaxNLocator

from ..scenes.positional import image_stride, shown_columns
from .core import HeatmapPanel, LinePanel, freeze_layout, notebook_figure, view_factory

__all__ = ["WAVE_COLORS", "PositionalView", "positional_view", "layouts_figure",
           "encoding_figure", "wavelengths_figure", "similarity_figure", "sum_figure"]

#: Colours of the wave lines (from cividis and viridis, told apart also by line width).
WAVE_COLORS = ("#00204c", "#31688e", "#35b779", "#c9a227")
_WAVE_WIDTHS = (2.0, 1.5, 1.2, 0.9)
_WAVE_LABELS = ("i = 0", "i = d/8", "i = d/4", "i = d/2 \u2212 1")
_TICKS = (-1.0, -0.5, 0.0, 0.5, 1.0)


def _line_panel(ax, xlabel: str, ylabel: str, cache: OrderedDict) -> LinePanel:
    """A :class:`LinePanel` of values in [-1, 1] over an integer axis."""
    ax.set_ylim(-1.15, 1.15)
    ax.axhline(0.0, color="#cccccc", linewidth=0.6, zorder=0)
    return LinePanel(ax, xlabel=xlabel, ylabel=ylabel, yticks=(-1, 0, 1), cache=cache)


def _legend_entries(legend) -> list:
    """A legend's entry boxes (its line and its text, packed side by side), in order."""
    return [box for box in legend.findobj(HPacker)
            if [type(c) for c in box.get_children()] == [DrawingArea, TextArea]]


def _wave_labels(columns: Sequence[int]) -> dict:
    """The legend entry of each distinct column: {index of its first line: label}.

    Small d repeats columns (d = 2 has the one pair i = 0 four times, d = 4 two pairs):
    one entry a distinct curve, labelled with its number i; otherwise the names
    i = 0, d/8, d/4, d/2 - 1."""
    first = {}
    for n, column in enumerate(columns):
        first.setdefault(int(column), n)
    if len(first) == len(columns) == len(_WAVE_LABELS):
        return {n: _WAVE_LABELS[n] for n in range(len(columns))}
    return {n: f"i = {column // 2}" for column, n in first.items()}


def _set_range(panel: LinePanel, n: int) -> None:
    """Show x from 0 to n - 1 (with a margin)."""
    if n != getattr(panel, "n", None):
        panel.n = n  # up to about 6 ticks 0..n-1, a 1, 2, 5 x 10^k apart
        ticks = [int(t) for t in MaxNLocator(5, integer=True, steps=(1, 2, 5, 10)).tick_values(
            0, max(n - 1, 1)) if 0 <= t <= n - 1]
        panel.ax.set_xlim(-0.5, max(n - 0.5, 0.5))
        panel.set_xticks(ticks, [str(t) for t in ticks])


class PositionalView:
    """Chapter 2's lab picture, four panels built once (``static``: colour bars, axis
    labels and legends, drawn once).

    Top left, ``pe_panel``: PE:(s, d) (cividis, [-1, 1]). Top right, ``wave_panel`` (a
    :class:`~attention_book.plots.core.LinePanel`): a few sine columns of PE as
    ``wave_lines`` over the positions. Bottom left, ``similarity_panel``: the (s, s)
    similarity ``PE PE^T / (d/2)`` (viridis, [-1, 1]), constant along each diagonal. Bottom
    right, ``rot_panel``: ``pe_line`` PE[p], ``shifted_line`` PE[p + k] and ``rotated_line``
    PE[p] T(k) (the last two coincide) over the dimensions. Heatmaps with more than
    :data:`~attention_book.scenes.positional.MAX_IMAGE_SIDE` rows or columns show every
    n-th one (the title says so; the axes still count every cell).
    """

    def __init__(self, figure: Figure):
        self.figure = figure
        (ax_pe, ax_wave), (ax_sim, ax_rot) = figure.subplots(2, 2)
        cache: OrderedDict = OrderedDict()
        self.pe_panel = HeatmapPanel(
            ax_pe, cmap="cividis", vmin=-1.0, vmax=1.0, xlabel="dimension j",
            ylabel="position p", colorbar_label="PE[p, j]", cache=cache)
        self.similarity_panel = HeatmapPanel(
            ax_sim, cmap="viridis", vmin=-1.0, vmax=1.0, xlabel="position q",
            ylabel="position p", colorbar_label=r"$PE(p)\cdot PE(q)\,/\,(d/2)$", cache=cache)
        self.wave_panel = _line_panel(ax_wave, "position p", "PE[p, 2i]", cache)
        self.rot_panel = _line_panel(ax_rot, "dimension j", "value", cache)
        self.wave_lines = [ax_wave.plot([0, 1], [0, 0], color=c, linewidth=w, label=label)[0]
                           for label, c, w in zip(_WAVE_LABELS, WAVE_COLORS, _WAVE_WIDTHS)]
        self.pe_line, self.shifted_line, self.rotated_line = (
            ax_rot.plot([0, 1], [0, 0], color=c, linewidth=w, label=label)[0]
            for label, c, w in (("PE[p]", "#b0b0b0", 1.0), ("PE[p+k]", "#8fd9a8", 3.2),
                                ("PE[p] T(k)", "#00204c", 1.0)))
        # Legends outside the axes, with fixed texts: drawn once, pasted as pixels.
        legend_style = dict(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=9,
                            handlelength=1.6, borderpad=0.3, borderaxespad=0.0)
        self.wave_legend = ax_wave.legend(title="column j = 2i", title_fontsize=9,
                                          **legend_style)
        self.rot_legend = ax_rot.legend(**legend_style)
        self.wave_entries = _legend_entries(self.wave_legend)  # one per wave line
        self._wave_labels = dict(enumerate(_WAVE_LABELS))
        for panel in (self.pe_panel, self.similarity_panel):
            panel.reserve(rows=False, cols=False, n=512)
        self.static = freeze_layout(figure, panels=(self.pe_panel, self.similarity_panel),
                                    static_artists=[self.wave_legend, self.rot_legend])
        self.wave_panel.finish()
        self.rot_panel.finish()

    def show(self, state) -> None:
        """Show a :class:`~attention_book.scenes.positional.PositionalState`."""
        self.update(state.pe, state.wave_columns, state.similarity, state.p, state.k,
                    state.shifted, state.rotated, state.max_error)

    def update(self, pe, wave_columns: Sequence[int], similarity, p: int, k: int,
               shifted, rotated, max_error: float) -> None:
        """Show a new encoding ``pe`` : (s, d) and its ``similarity`` : (s, s).

        Parameters
        ----------
        wave_columns : sequence of int, at most 4
            Columns j of ``pe`` drawn as waves over the positions.
        p, k : int
            The position and the offset of the rotation check.
        shifted, rotated : array_like, shape (d,)
            PE[p + k] and PE[p] @ T(k).
        max_error : float
            max |PE[p + k] - PE[p] T(k)| over all positions, shown in the title.
        """
        pe, similarity = np.asarray(pe, dtype=float), np.asarray(similarity, dtype=float)
        if pe.ndim != 2 or similarity.shape != (pe.shape[0], pe.shape[0]):
            raise ValueError(f"expected pe:(s, d) and similarity:(s, s), got {pe.shape} "
                             f"and {similarity.shape}")
        if len(wave_columns) > len(self.wave_lines):
            raise ValueError(f"at most {len(self.wave_lines)} wave columns, "
                             f"got {len(wave_columns)}")
        s, d = pe.shape
        rs, cs = image_stride(s), image_stride(d)
        every = "" if rs == cs == 1 else ", every 2nd cell" if max(rs, cs) == 2 else (
            f", 1 in {max(rs, cs)} cells")
        self.pe_panel.update(pe[::rs, shown_columns(d)], title=f"PE : (s, d) = ({s}, {d}){every}",
                             cells=(s, d))  # every rs-th row, whole (sin, cos) pairs, of (s, d)
        self.similarity_panel.update(similarity[::rs, ::rs], cells=(s, s),
                                     title=rf"$PE\,PE^\top/(d/2)$ : ({s}, {s})")
        labels = _wave_labels(wave_columns)  # a line and a legend entry per distinct column
        for n, line in enumerate(self.wave_lines):
            if n < len(wave_columns):
                line.set_data(np.arange(s), pe[:, int(wave_columns[n])])
            line.set_visible(n in labels)
        if labels != self._wave_labels:  # the legend is static: change it, then repaint it
            for n, entry in enumerate(self.wave_entries):
                entry.set_visible(n in labels)
                entry.get_children()[1].set_text(labels.get(n, ""))
            self._wave_labels = labels
            self.static.invalidate(variant=tuple(labels.items()))
        _set_range(self.wave_panel, s)
        self.wave_panel.title.show(f"waves PE[:, 2i], d = {d}")
        dims, shifted = np.arange(d), np.asarray(shifted, dtype=float)
        self.pe_line.set_data(dims, pe[p] if p < s else shifted)
        self.shifted_line.set_data(dims, shifted)
        self.rotated_line.set_data(dims, np.asarray(rotated, dtype=float))
        _set_range(self.rot_panel, d)
        self.rot_panel.title.show(f"p = {p}, k = {k}: max error {max_error:.0e}")


positional_view = view_factory(PositionalView, 8.2, 5.4, dpi=78, wspace=0.06)

VIEWS = {"positional": positional_view}


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
