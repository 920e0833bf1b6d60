"""Chapter 2's lab: s, d (even), the base and an offset k; PE:(s, d), its waves, the (s, s)
similarity of positions and the relative-position rotation check."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import positional as P
from .._validate import positive_int, whole_number
from .core import Note, Scene, compare, slider

__all__ = ["BASE_CHOICES", "K_RANGE", "MAX_IMAGE_SIDE", "image_stride", "shown_columns",
           "PositionalState", "positional_state"]

#: Bases the lab offers (the paper's is 10000).
BASE_CHOICES = (10, 100, 1000, 10000, 100000)
#: Offsets k the lab offers (inclusive).
K_RANGE = (-64, 64)
#: Heatmaps larger than this along an axis are drawn from every n-th row/column only (the
#: figure has fewer pixels than that anyway); the numbers in the state stay exact.
MAX_IMAGE_SIDE = 256


def image_stride(n: int) -> int:
    """The step that brings ``n`` cells down to at most :data:`MAX_IMAGE_SIDE`."""
    return max(1, -(-n // MAX_IMAGE_SIDE))


def shown_columns(d: int) -> np.ndarray:
    """The columns of PE (s, d) a heatmap shows: all, or every ``image_stride(d)``-th (sin,
    cos) pair whole, so that a strided picture keeps both halves of PE (every other column
    alone would be the sines only, and the slow half of PE would look empty).

    Returns
    -------
    ndarray of int, shape (2 ceil(d / 2 / stride),)
    """
    pairs = np.arange(0, d // 2, image_stride(d))  # (n_pairs,)
    return np.stack([2 * pairs, 2 * pairs + 1], axis=1).ravel()  # (n_pairs, 2) -> (2 n_pairs,)


@dataclass(frozen=True, eq=False)
class PositionalState:
    """Everything chapter 2's lab shows for one (s, d, base, k)."""

    s: int
    d: int
    base: float
    k: int
    pe: np.ndarray            # (s, d) sinusoidal_encoding(s, d, base)
    wave_columns: tuple       # the sine columns 2i drawn as waves, i = 0, d/8, d/4, d/2 - 1
    wavelengths: np.ndarray   # (d/2,) 2 pi / omega_i, in positions
    similarity: np.ndarray    # (s, s) PE PE^T / (d/2) = sum_i cos((p - q) omega_i) / (d/2)
    by_offset: np.ndarray     # (2s - 1,) the similarity of offset q - p = -(s-1)..s-1
    mean_similarity: float | None  # mean off-diagonal similarity (None when s = 1)
    p: int                    # the position of the rotation check, s // 2
    shifted: np.ndarray       # (d,) PE[p + k], from the formula
    rotated: np.ndarray       # (d,) PE[p] @ T(k)
    max_error: float          # relative_rotation_error: max over p = 0..s-1, all d columns
    notes: tuple


def positional_state(s: int = 64, d: int = 64, base: float = 10000, k: int = 3
                     ) -> PositionalState:
    """(s, d, base, k) -> the encoding PE:(s, d), its waves, the (s, s) similarity of
    positions and the rotation check by the offset ``k``. Pure.

    Parameters
    ----------
    s, d : int
        Positions (at least 1) and the model width (even, at least 2).
    base : float
        Base of the frequencies, greater than 1.
    k : int
        The offset of the rotation check.

    Raises
    ------
    ValueError
        For odd d, s < 1, base <= 1 or a k that is not a whole number, with the math
        layer's message ("d must be even for sinusoidal encoding ...").
    """
    pe = P.sinusoidal_encoding(s, d, base)  # (s, d); validates s, d, base
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"k must be a whole number (an offset in positions), got {k!r}")
    k, p = int(k), s // 2
    offsets = np.arange(-(s - 1), s)  # (2s - 1,): q - p from -(s-1) to s-1
    by_offset = P.offset_similarity(offsets, d, base) / (d / 2)  # (2s - 1,)
    idx = np.arange(s)
    similarity = by_offset[idx[None, :] - idx[:, None] + s - 1]  # (s, s), Toeplitz
    lam = P.wavelengths(d, base)  # (d/2,)
    notes = [Note("info", "one frequency pair, \u03c9\u2080 = 1: wavelength 2\u03c0 \u2248 6.28 "
                          "positions, whatever the base") if d == 2 else
             Note("info", f"wavelengths grow geometrically from 2\u03c0 \u2248 6.28 "
                          f"to {lam[-1]:,.0f} positions (x{float(base) ** (2 / d):.3g} "
                          "per frequency pair)")]
    if not 0 <= p + k < s:
        notes.append(Note("info", f"p + k = {p + k} lies outside 0..{s - 1}: the formula "
                                  "still encodes it, and the rotation still holds"))
    strided = [f"1 in {image_stride(n)} {name}" for name, n in
               (("rows", s), ("columns", d)) if image_stride(n) > 1]
    if strided:
        notes.append(Note("info", f"the heatmaps show {' and '.join(strided)} (the picture "
                                  "has fewer pixels than cells); the numbers are exact"))
    pairs = (0, d // 8, d // 4, d // 2 - 1)  # may repeat for small d
    return PositionalState(
        s=s, d=d, base=float(base), k=k, pe=pe, wave_columns=tuple(2 * i for i in pairs),
        wavelengths=lam, similarity=similarity, by_offset=by_offset,
        mean_similarity=P.mean_position_similarity(s, d, base) if s > 1 else None, p=p,
        shifted=P.encoding_at([p + k], d, base)[0],  # (d,)
        rotated=pe[p] @ P.relative_rotation(k, d, base),  # (d,) @ (d, d) -> (d,)
        max_error=P.relative_rotation_error(s, d, k, base), notes=tuple(notes))


def _check(values) -> None:
    """The math layer's own messages first ("d must be even for sinusoidal encoding ...")."""
    positive_int(values["s"], "s")
    P.frequencies(values["d"], values["base"])  # odd d, base <= 1
    whole_number(values["k"], "k", *K_RANGE)


SCENE = Scene(
    name="positional",
    title="Positional encoding explorer: PE, its waves, offsets, rotations",
    controls=(
        slider("s", "s (positions)", range(1, 513), 64),
        slider("d", "d (width)", range(2, 513, 2), 64),
        slider("base", "base", BASE_CHOICES, 10000,
               active_when=compare("d", ">", 2),
               hint="d = 2 has one frequency, \u03c9\u2080 = 1, whatever the base"),
        slider("k", "k (offset)", range(K_RANGE[0], K_RANGE[1] + 1), 3),
    ),
    state=positional_state, check=_check, web="positional",  # computed in the browser by web/positional.js
    # the "things to try" of chapter 2: a small base, one frequency pair, p + k past the end
    suggested=({"s": 64, "d": 64, "base": 10}, {"s": 64, "d": 64, "base": 100},
               {"d": 2}, {"s": 8, "k": 16}, {"s": 64, "d": 8, "base": 10000}),
)
SCENES = (SCENE,)
