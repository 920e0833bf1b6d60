"""Chapter 2's picture: the sinusoidal encoding PE:(s, d), its waves, the (s, s) similarity
of positions and the relative-position rotation check."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from .core import HeatmapPanel, StaticLayer, TextStamps, freeze_layout

__all__ = ["WAVE_COLORS", "MAX_IMAGE_SIDE", "PositionalView", "positional_view"]

#: Colours of the wave lines (from cividis and viridis, told apart also by line style).
WAVE_COLORS = ("#00204c", "#31688e", "#35b779", "#c9a227")
_WAVE_WIDTHS = (2.0, 1.5, 1.2, 0.9)  # told apart by width as well as colour
_WAVE_LABELS = ("i = 0", "i = d/8", "i = d/4", "i = d/2 \u2212 1")
#: Heatmaps larger than this along an axis are shown with every n-th row/column only
#: (the figure has fewer pixels than that anyway); the data stays exact in the state.
MAX_IMAGE_SIDE = 256


def _stride(n: int) -> int:
    """The step that brings n cells down to at most :data:`MAX_IMAGE_SIDE`."""
    return max(1, -(-n // MAX_IMAGE_SIDE))


def _nice_ticks(n: int) -> list[int]:
    """Up to about 6 tick positions 0..n-1 on a 1, 2, 5 x 10^k step."""
    if n <= 1:
        return [0]
    raw = (n - 1) / 5
    mag = 10 ** int(np.floor(np.log10(raw))) if raw >= 1 else 1
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    return list(range(0, n, int(step)))


class _LinePanel:
    """An axes of lines over an integer axis, with tick labels drawn from cached bitmaps
    (the x range changes with s or d; matplotlib's own tick labels are kept true but not
    drawn)."""

    def __init__(self, ax, *, xlabel: str, ylabel: str, cache: OrderedDict):
        self.ax = ax
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title("", y=1.0)
        ax.set_ylim(-1.15, 1.15)
        ax.spines[["top", "right"]].set_visible(False)
        ax.set_yticks([-1, 0, 1])
        ax.axhline(0.0, color="#cccccc", linewidth=0.6, zorder=0)
        self.x_labels = TextStamps(ax, "bottom", cache=cache)
        self.y_labels = TextStamps(ax, "left", cache=cache)
        self.title = TextStamps(ax, "top", pad=6.0, cache=cache)
        self._n = None

    def reserve(self) -> None:
        self.ax.set_xticks([0, 500], ["0", "500"])
        self.ax.title.set_text("reserved: (a one-line title) |")

    def finish(self) -> None:
        self.y_labels.set_texts(["-1", "0", "1"], [-1, 0, 1])
        self.ax.tick_params(left=False, bottom=False, labelleft=False, labelbottom=False)
        self.ax.title.set_visible(False)

    def set_range(self, n: int) -> None:
        """Show x from 0 to n - 1 (with a margin)."""
        if n == self._n:
            return
        self._n = n
        self.ax.set_xlim(-0.5, max(n - 0.5, 0.5))
        ticks = _nice_ticks(n)
        texts = [str(t) for t in ticks]
        self.ax.set_xticks(ticks, texts)
        self.x_labels.set_texts(texts, ticks)

    def set_title(self, title: str) -> None:
        self.ax.title.set_text(title)
        self.title.set_texts([title], fontsize=self.ax.title.get_fontsize())


class PositionalView:
    """Chapter 2's picture, four panels built once.

    Top left, PE:(s, d) as a heatmap (positions down, dimensions across, cividis, colour
    limits [-1, 1]). Top right, a few sine columns of PE as waves over the positions.
    Bottom left, the cosine similarity of every pair of positions, ``PE PE^T / (d/2)``
    (viridis, [-1, 1]): constant along each diagonal. Bottom right, the rotation check
    for one position p: PE[p], PE[p + k] and PE[p] T(k) over the dimensions (the last
    two coincide).

    Heatmaps with more than :data:`MAX_IMAGE_SIDE` rows or columns are drawn from every
    n-th row/column (the figure has fewer pixels than cells); the title says so.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
    pe_panel, similarity_panel : HeatmapPanel
        ``pe_panel.image`` shows PE (s, d); ``similarity_panel.image`` shows (s, s).
    wave_lines : list of matplotlib.lines.Line2D
        One per wave column (the unused ones hidden when fewer columns are given).
    pe_line, shifted_line, rotated_line : matplotlib.lines.Line2D
        PE[p], PE[p + k] and PE[p] T(k), each over the d dimensions.
    static : StaticLayer
    """

    def __init__(self, figure: Figure):
        self.figure = figure
        engine = figure.get_layout_engine()
        if isinstance(engine, ConstrainedLayoutEngine):
            engine.set(wspace=0.05, h_pad=0.06)  # room between colour bars and line panels
        (ax_pe, ax_wave), (ax_sim, ax_rot) = figure.subplots(2, 2)
        cache: OrderedDict = OrderedDict()
        self.pe_panel = HeatmapPanel(
            ax_pe, cmap="cividis", vmin=-1.0, vmax=1.0, xlabel="dimension j",
            ylabel="position p", colorbar_label="PE[p, j]", cache=cache)
        self.similarity_panel = HeatmapPanel(
            ax_sim, cmap="viridis", vmin=-1.0, vmax=1.0, xlabel="position q",
            ylabel="position p", colorbar_label="PE[p]\u00b7PE[q] / (d/2)", cache=cache)
        self.wave_panel = _LinePanel(ax_wave, xlabel="position p", ylabel="PE[p, 2i]",
                                     cache=cache)
        self.rot_panel = _LinePanel(ax_rot, xlabel="dimension j", ylabel="value",
                                    cache=cache)
        self.wave_lines = [
            ax_wave.plot([0, 1], [0, 0], color=c, linewidth=w, label=label)[0]
            for label, c, w in zip(_WAVE_LABELS, WAVE_COLORS, _WAVE_WIDTHS)]
        self.pe_line, = ax_rot.plot([0, 1], [0, 0], color="#b0b0b0", linewidth=1.0,
                                    label="PE[p]")
        self.shifted_line, = ax_rot.plot([0, 1], [0, 0], color="#8fd9a8", linewidth=3.2,
                                         label="PE[p+k]")
        self.rotated_line, = ax_rot.plot([0, 1], [0, 0], color="#00204c", linewidth=1.0,
                                         label="PE[p] T(k)")
        # Legends outside the axes, with fixed texts: drawn once, pasted as pixels.
        legend_style = dict(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7.5,
                            handlelength=2.0, borderpad=0.3, borderaxespad=0.0)
        self.wave_legend = ax_wave.legend(title="column j = 2i", title_fontsize=7.5,
                                          **legend_style)
        self.rot_legend = ax_rot.legend(**legend_style)
        self.pe_panel.reserve(rows=False, cols=False, n=512)
        self.similarity_panel.reserve(rows=False, cols=False, n=512)
        self.wave_panel.reserve()
        self.rot_panel.reserve()
        for ax in (ax_pe, ax_sim):  # the tallest glyphs a title may have
            ax.title.set_text("reserved: (a one-line title) |")
        heat = (self.pe_panel, self.similarity_panel)
        colorbars = [p.colorbar.ax for p in heat]
        layer = freeze_layout(figure, static_axes=colorbars)
        layer.remove()  # replaced by one layer that also holds the legends
        labels = [axis.label for ax in (ax_pe, ax_wave, ax_sim, ax_rot)
                  for axis in (ax.xaxis, ax.yaxis)]
        self.static = StaticLayer(axes=colorbars,
                                  texts=[*labels, self.wave_legend, self.rot_legend])
        figure.add_artist(self.static)
        for panel in (*heat, self.wave_panel, self.rot_panel):
            panel.finish()
        for ax in (ax_pe, ax_wave, ax_sim, ax_rot):
            # Their tick labels are drawn from bitmaps and their axis labels by the static
            # layer, so the axes need not draw their axes at all (saves ~0.5 ms each).
            # Ticks stay set, so ax.get_xticks() and the formatters still tell the truth.
            ax.xaxis.set_visible(False)
            ax.yaxis.set_visible(False)

    def update(self, pe, wave_columns: Sequence[int], similarity, p: int, k: int,
               shifted, rotated, max_error: float) -> None:
        """Show a new encoding.

        Parameters
        ----------
        pe : array_like, shape (s, d)
            The encoding.
        wave_columns : sequence of int, at most 4
            Columns j of ``pe`` drawn as waves over the positions.
        similarity : array_like, shape (s, s)
            ``PE PE^T / (d/2)``.
        p, k : int
            The position and the offset of the rotation check.
        shifted, rotated : array_like, shape (d,)
            PE[p + k] and PE[p] @ T(k).
        max_error : float
            max |PE[p + k] - PE[p] T(k)| over all positions, shown in the title.
        """
        pe = np.asarray(pe, dtype=float)
        similarity = np.asarray(similarity, dtype=float)
        if pe.ndim != 2 or similarity.shape != (pe.shape[0], pe.shape[0]):
            raise ValueError(f"expected pe:(s, d) and similarity:(s, s), got {pe.shape} "
                             f"and {similarity.shape}")
        if len(wave_columns) > len(self.wave_lines):
            raise ValueError(f"at most {len(self.wave_lines)} wave columns, "
                             f"got {len(wave_columns)}")
        s, d = pe.shape
        rs, cs = _stride(s), _stride(d)
        shown = pe[::rs, ::cs]  # (ceil(s/rs), ceil(d/cs))
        every = "" if rs == cs == 1 else ", every 2nd cell" if max(rs, cs) == 2 else (
            f", 1 in {max(rs, cs)} cells")
        self.pe_panel.update(shown, title=f"PE : (s, d) = ({s}, {d}){every}")
        self._scale_extent(self.pe_panel, s, d)
        self.similarity_panel.update(similarity[::rs, ::rs],
                                     title=f"similarity of positions ({s}, {s})")
        self._scale_extent(self.similarity_panel, s, s)

        positions = np.arange(s)
        for n, line in enumerate(self.wave_lines):
            if n < len(wave_columns):
                j = int(wave_columns[n])
                line.set_data(positions, pe[:, j])
                line.set_visible(True)
            else:
                line.set_visible(False)
        self.wave_panel.set_range(s)
        self.wave_panel.set_title(f"waves PE[:, 2i], d = {d}")

        dims = np.arange(d)
        self.pe_line.set_data(dims, np.asarray(pe[p] if p < s else shifted, dtype=float))
        self.shifted_line.set_data(dims, np.asarray(shifted, dtype=float))
        self.rotated_line.set_data(dims, np.asarray(rotated, dtype=float))
        self.rot_panel.set_range(d)
        self.rot_panel.set_title(f"p = {p}, k = {k}: max error {max_error:.0e}")

    @staticmethod
    def _scale_extent(panel: HeatmapPanel, m: int, n: int) -> None:
        """Let a strided image cover the full m x n cells, so the axes count positions."""
        extent = (-0.5, n - 0.5, m - 0.5, -0.5)
        if tuple(panel.image.get_extent()) != extent:
            panel.image.set_extent(extent)
            panel.ax.set_xlim(extent[0], extent[1])
            panel.ax.set_ylim(extent[2], extent[3])
            panel._set_ticks("y", None, m)
            panel._set_ticks("x", None, n)


def positional_view(figure: Figure | None = None) -> PositionalView:
    """Build chapter 2's figure once (four panels; see :class:`PositionalView`).

    Parameters
    ----------
    figure : matplotlib.figure.Figure, optional
        An empty figure; by default a new 8.2 x 5.4 inch figure at 78 dpi with constrained layout
        (made without pyplot).

    Returns
    -------
    PositionalView
        Call its ``update(...)`` to show a state.
    """
    if figure is None:
        figure = Figure(figsize=(8.2, 5.4), dpi=78, layout="constrained")
    return PositionalView(figure)
