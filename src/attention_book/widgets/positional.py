"""Chapter 2's lab: the positional encoding explorer.

Sliders for the number of positions s, the width d (even values only), the base of the
frequencies and an offset k; views of PE:(s, d), its waves, the similarity of positions
and the relative-position rotation check. :func:`positional_state` is the pure state
function that the live lab (:func:`positional_widget`) and the kernel-free explorer
(:func:`positional_explorer`) share.
"""

from __future__ import annotations

import html
import io
from collections.abc import Sequence
from dataclasses import dataclass

import ipywidgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from PIL import Image

from .. import positional as P
from .._validate import positive_int, whole_number
from ..explorer import Explorer, Frame, Slider
from ..plots import MAX_IMAGE_SIDE, PositionalView, positional_view
from .core import Lab, Note, notes_html

__all__ = [
    "S_RANGE",
    "D_RANGE",
    "BASE_CHOICES",
    "K_RANGE",
    "PositionalState",
    "positional_state",
    "positional_readout_html",
    "positional_alt_text",
    "PositionalLab",
    "positional_widget",
    "positional_explorer",
]

#: Positions the lab offers (inclusive).
S_RANGE = (1, 512)
#: Widths the lab offers (inclusive, even values only).
D_RANGE = (2, 512)
#: Bases the lab offers (the paper's is 10000).
BASE_CHOICES = (10, 100, 1000, 10000, 100000)
#: Offsets k the lab offers (inclusive).
K_RANGE = (-64, 64)


@dataclass(frozen=True, eq=False)
class PositionalState:
    """Everything chapter 2's lab and explorer show for one (s, d, base, k).

    Attributes
    ----------
    s, d, k : int
    base : float
    pe : numpy.ndarray, shape (s, d)
        ``sinusoidal_encoding(s, d, base)``.
    wave_columns : tuple of int
        The four sine columns 2i drawn as waves, for the frequency pairs i = 0, d/8,
        d/4 and d/2 - 1 (repeated when d is small).
    wavelengths : numpy.ndarray, shape (d/2,)
        ``2 pi / omega_i`` in positions.
    similarity : numpy.ndarray, shape (s, s)
        ``PE PE^T / (d/2)``, from the offset formula ``sum_i cos((p - q) omega_i) / (d/2)``.
    p : int
        The position of the rotation check (s // 2).
    shifted, rotated : numpy.ndarray, shape (d,)
        PE[p + k] (from the formula) and PE[p] @ T(k).
    max_error : float
        ``relative_rotation_error(s, d, k, base)``: max over p = 0..s-1 and all d columns.
    notes : tuple of Note
    """

    s: int
    d: int
    base: float
    k: int
    pe: np.ndarray
    wave_columns: tuple
    wavelengths: np.ndarray
    similarity: np.ndarray
    p: int
    shifted: np.ndarray
    rotated: np.ndarray
    max_error: float
    notes: tuple

    @property
    def shape_line(self) -> str:
        return f"PE : (s, d) = ({self.s}, {self.d});  T(k) : (d, d) = ({self.d}, {self.d})"


def _wave_columns(d: int) -> tuple:
    pairs = (0, d // 8, d // 4, d // 2 - 1)  # may repeat for small d
    return tuple(2 * i for i in pairs)


def positional_state(s: int = 64, d: int = 64, base: float = 10000, k: int = 3
                     ) -> PositionalState:
    """(s, d, base, k) -> the encoding, its waves, the similarity of positions and the
    rotation check.

    Pure: the same arguments give the same state.

    Parameters
    ----------
    s : int
        Number of positions, at least 1.
    d : int
        Model width, even and at least 2.
    base : float
        Base of the frequencies, greater than 1.
    k : int
        The offset of the rotation check.

    Returns
    -------
    PositionalState

    Raises
    ------
    ValueError
        For odd d, s < 1, base <= 1 or a k that is not a whole number, with the math
        layer's message ("d must be even for sinusoidal encoding ...").
    """
    pe = P.sinusoidal_encoding(s, d, base)  # (s, d); validates s, d, base
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"k must be a whole number (an offset in positions), got {k!r}")
    k = int(k)
    offsets = np.arange(-(s - 1), s)  # (2s - 1,): q - p from -(s-1) to s-1
    by_offset = P.offset_similarity(offsets, d, base) / (d / 2)  # (2s - 1,)
    idx = np.arange(s)
    similarity = by_offset[idx[None, :] - idx[:, None] + s - 1]  # (s, s), Toeplitz
    p = s // 2
    t = P.relative_rotation(k, d, base)  # (d, d)
    shifted = P.encoding_at([p + k], d, base)[0]  # (d,)
    rotated = pe[p] @ t  # (d,) @ (d, d) -> (d,)
    lam = P.wavelengths(d, base)  # (d/2,)
    notes = [Note("info", f"wavelengths grow geometrically from 2\u03c0 \u2248 6.28 "
                          f"to {lam[-1]:,.0f} positions (x{float(base) ** (2 / d):.3g} "
                          "per frequency pair)")]
    if not 0 <= p + k < s:
        notes.append(Note("info", f"p + k = {p + k} lies outside 0..{s - 1}: the formula "
                                  "still encodes it, and the rotation still holds"))
    strided = [f"1 in {-(-n // MAX_IMAGE_SIDE)} {name}" for name, n in
               (("rows", s), ("columns", d)) if n > MAX_IMAGE_SIDE]  # the view's strides
    if strided:
        notes.append(Note("info", f"the heatmaps show {' and '.join(strided)} (the picture "
                                  "has fewer pixels than cells); the numbers are exact"))
    return PositionalState(
        s=s, d=d, base=float(base), k=k, pe=pe, wave_columns=_wave_columns(d),
        wavelengths=lam, similarity=similarity, p=p, shifted=shifted, rotated=rotated,
        max_error=P.relative_rotation_error(s, d, k, base), notes=tuple(notes))


def positional_readout_html(state: PositionalState) -> str:
    """The readout of chapter 2's lab: shapes, the frequencies and the rotation check.

    Parameters
    ----------
    state : PositionalState

    Returns
    -------
    str
        An HTML fragment with inline styles only; every text escaped.
    """
    lam = state.wavelengths
    lines = [
        state.shape_line,
        f"base = {state.base:g}: wavelengths {lam[0]:.2f} .. {lam[-1]:,.1f} positions "
        f"over {state.d // 2} frequency pairs i = 0..{state.d // 2 - 1}",
        f"rotation check, k = {state.k}: max over p = 0..{state.s - 1} of "
        f"|PE[p+k] \u2212 PE[p] T(k)| = {state.max_error:.1e}",
    ]
    body = "".join(f'<div style="font-family:monospace">{html.escape(x)}</div>' for x in lines)
    return '<div class="ab-readout">' + body + notes_html(state.notes) + "</div>"


def positional_alt_text(state: PositionalState) -> str:
    """A plain-text description of chapter 2's figure for ``state`` (for alt text)."""
    cols = ", ".join(str(j) for j in state.wave_columns)
    return (
        f"Top left: heatmap of the sinusoidal encoding PE with {state.s} positions (rows) "
        f"and {state.d} dimensions (columns), base {state.base:g}, values from -1 to 1; "
        "the left columns change quickly down the positions, the right ones slowly. "
        f"Top right: columns {cols} as waves over the positions, slower for larger j. "
        f"Bottom left: the {state.s} by {state.s} similarity of positions, 1 on the "
        "diagonal and constant along every diagonal (it depends only on the offset). "
        f"Bottom right: PE[p+k] and PE[p]T(k) for p = {state.p}, k = {state.k} over the "
        f"dimensions lie on top of each other; largest difference {state.max_error:.1e}."
    )


class PositionalLab(Lab):
    """Chapter 2's lab: sliders for s, d (even only), the base and an offset k. Build it
    with :func:`positional_widget`.

    Attributes
    ----------
    controls : dict
        ``"s"`` (ipywidgets.IntSlider 1..512), ``"d"`` (ipywidgets.SelectionSlider over the
        even values 2..512), ``"base"`` (ipywidgets.SelectionSlider over
        :data:`BASE_CHOICES`), ``"k"`` (ipywidgets.IntSlider over :data:`K_RANGE`).
    view : attention_book.plots.PositionalView
    state : PositionalState
    """

    view: PositionalView

    def __init__(self, s: int = 64, d: int = 64, base: float = 10000, k: int = 3):
        s = positive_int(s, "s")
        if s > S_RANGE[1]:
            raise ValueError(f"s must be at most {S_RANGE[1]} in the lab, got {s}")
        positional_state(1, d, base, 0)  # the math layer's messages for d and base
        if not D_RANGE[0] <= d <= D_RANGE[1]:
            raise ValueError(f"d must be at most {D_RANGE[1]} in the lab, got {d}")
        if base not in BASE_CHOICES:
            raise ValueError(f"base must be one of {BASE_CHOICES} in the lab, got {base!r}")
        whole_number(k, "k", *K_RANGE)
        style = {"description_width": "9em"}
        controls = {
            "s": ipywidgets.IntSlider(
                value=s, min=S_RANGE[0], max=S_RANGE[1], description="s (positions)",
                continuous_update=True, style=style),
            "d": ipywidgets.SelectionSlider(
                options=tuple(range(D_RANGE[0], D_RANGE[1] + 1, 2)), value=int(d),
                description="d (width, even)", continuous_update=True, style=style),
            "base": ipywidgets.SelectionSlider(
                options=BASE_CHOICES, value=base, description="base",
                continuous_update=True, style=style),
            "k": ipywidgets.IntSlider(
                value=int(k), min=K_RANGE[0], max=K_RANGE[1], description="k (offset)",
                continuous_update=True, style=style),
        }
        super().__init__(controls, positional_view())

    def compute(self, s: int, d: int, base: float, k: int) -> PositionalState:
        return positional_state(s, d, base, k)

    def show(self, state: PositionalState) -> None:
        self.view.update(state.pe, state.wave_columns, state.similarity, state.p, state.k,
                         state.shifted, state.rotated, state.max_error)
        self.readout.value = positional_readout_html(state)


def positional_widget(s: int = 64, d: int = 64, base: float = 10000, k: int = 3
                      ) -> PositionalLab:
    """Chapter 2's live lab, the positional encoding explorer (returned, not displayed).

    Parameters
    ----------
    s : int
        Positions to start with, in 1..512.
    d : int
        Width to start with: even, in 2..512.
    base : float
        Base to start with, one of :data:`BASE_CHOICES`.
    k : int
        Offset to start with, in :data:`K_RANGE`.

    Returns
    -------
    PositionalLab
        An ``ipywidgets.VBox``.

    Raises
    ------
    ValueError
        For an odd d ("d must be even for sinusoidal encoding ..."), s < 1, or a value
        the sliders do not offer.
    """
    return PositionalLab(s=s, d=d, base=base, k=k)


def _palette_png(canvas: FigureCanvasAgg) -> bytes:
    """Draw the canvas and return a 256-colour PNG of it: about a third of the bytes of an
    RGBA PNG, so the explorer's states fit the page budget, and quicker to make."""
    canvas.draw()
    rgb = np.asarray(canvas.buffer_rgba())[..., :3]  # (height, width, 3)
    quantized = Image.fromarray(rgb).quantize(
        colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    with io.BytesIO() as buffer:
        quantized.save(buffer, format="PNG")
        return buffer.getvalue()


def positional_explorer(ss: Sequence[int] = (64,), ds: Sequence[int] = (8, 64, 512),
                        bases: Sequence[float] = (100, 10000),
                        ks: Sequence[int] = (1, 4, 16), dpi: float = 80) -> Explorer:
    """Chapter 2's kernel-free explorer: sliders over a grid of (s, d, base, k).

    Each state is computed by :func:`positional_state` and drawn by one
    :class:`~attention_book.plots.PositionalView`, exactly as the live lab does.

    Parameters
    ----------
    ss, ds, bases, ks : sequences
        The values offered for s, d, the base and k (every d even).
    dpi : float
        Resolution of the images (stored as 256-colour PNGs).

    Returns
    -------
    Explorer
        ``len(ss) * len(ds) * len(bases) * len(ks)`` states.
    """
    view = positional_view()
    view.figure.set_dpi(dpi)  # the layout is in inches: only the pixel count changes
    canvas = FigureCanvasAgg(view.figure)

    def render(values) -> Frame:
        state = positional_state(values.get("s", ss[0]), values["d"], values["base"],
                                 values["k"])
        view.update(state.pe, state.wave_columns, state.similarity, state.p, state.k,
                    state.shifted, state.rotated, state.max_error)
        return Frame(_palette_png(canvas), positional_alt_text(state),
                     positional_readout_html(state))

    ss, ds, bases, ks = tuple(ss), tuple(ds), tuple(bases), tuple(ks)
    controls = []
    if len(ss) > 1:
        controls.append(Slider("s", "s (positions)", ss, default=64 if 64 in ss else None))
    controls += [
        Slider("d", "d (width)", ds, default=64 if 64 in ds else None),
        Slider("base", "base", bases, default=10000 if 10000 in bases else None),
        Slider("k", "k (offset)", ks),
    ]
    return Explorer(controls, render,
                    title="Positional encoding explorer: PE, its waves, offsets, rotations")
