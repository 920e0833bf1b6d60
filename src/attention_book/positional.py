"""Sinusoidal positional encoding (Vaswani et al., 2017, section 3.5).

Row-vector notation: the encoding of a sequence of ``s`` positions is a matrix
PE:(s, d) that is added to the embeddings X:(s, d). Positions ``p`` run 0..s-1 and
frequency pairs ``i`` run 0..d/2-1::

    omega_i       = base ** (-2 i / d)
    PE[p, 2 i]    = sin(p * omega_i)
    PE[p, 2 i + 1] = cos(p * omega_i)

Positions inside attention rather than added to X (:func:`rotary_embedding`,
:func:`alibi_bias`, :func:`t5_relative_bias`) come at the end.

This module imports numpy only (and the book's attention, for
:func:`attention_with_bias`).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ._validate import as_float_array, positive_int
from .attention import attend, attention_scores

__all__ = [
    "frequencies",
    "sinusoidal_encoding",
    "concatenated_encoding",
    "tensor2tensor_frequencies",
    "tensor2tensor_encoding",
    "interleaved_to_concatenated",
    "concatenated_to_interleaved",
    "relative_rotation",
    "wavelengths",
    "encoding_at",
    "position_similarity",
    "offset_similarity",
    "relative_rotation_error",
    "pair_similarity",
    "mean_position_similarity",
    "learned_position_table",
    "learned_positional_encoding",
    "rotary_embedding",
    "alibi_slopes",
    "alibi_bias",
    "relative_position_bucket",
    "t5_relative_bias",
    "attention_with_bias",
]


def _even_d(d) -> int:
    d = positive_int(d, "d")
    if d < 2 or d % 2:
        raise ValueError(
            f"d must be even for sinusoidal encoding (sin and cos come in pairs), "
            f"got d={d}"
        )
    return d


def _real(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")
    return value


def _base(base) -> float:
    base = _real(base, "base")
    if base <= 1.0:
        raise ValueError(
            f"base must be greater than 1 so that the frequencies decrease, got base={base}"
        )
    return base


def _dtype(dtype):
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    return dtype


def frequencies(d: int, base: float = 10000.0, dtype=np.float64) -> np.ndarray:
    """Angular frequencies of the sinusoidal encoding, one per sin/cos pair.

    Parameters
    ----------
    d : int
        Model width, even and at least 2.
    base : float
        The base of the geometric progression, greater than 1 (10000 in the paper).
    dtype : {numpy.float64, numpy.float32}
        dtype of the result.

    Returns
    -------
    omega : numpy.ndarray, shape (d/2,)
        ``omega[i] = base ** (-2 i / d)`` for i = 0..d/2-1; omega[0] = 1 and the
        frequencies decrease towards ``1 / base``.
    """
    d, base, dtype = _even_d(d), _base(base), _dtype(dtype)
    i = np.arange(d // 2, dtype=np.float64)  # (d/2,)
    return (base ** (-2.0 * i / d)).astype(dtype)


def _angles(s, d, base) -> np.ndarray:
    """p * omega_i as an (s, d/2) float64 matrix."""
    s = positive_int(s, "s")
    omega = frequencies(d, base)  # (d/2,)
    p = np.arange(s, dtype=np.float64)  # (s,)
    return np.outer(p, omega)  # (s,) outer (d/2,) -> (s, d/2)


def sinusoidal_encoding(
    s: int, d: int, base: float = 10000.0, dtype=np.float64
) -> np.ndarray:
    """Sinusoidal positional encoding in the paper's interleaved layout.

    Parameters
    ----------
    s : int
        Number of positions (sequence length), at least 1.
    d : int
        Model width, even and at least 2.
    base : float
        Base of the frequencies, greater than 1 (10000 in the paper).
    dtype : {numpy.float64, numpy.float32}
        dtype of the result.

    Returns
    -------
    PE : numpy.ndarray, shape (s, d)
        ``PE[p, 2i] = sin(p omega_i)``, ``PE[p, 2i+1] = cos(p omega_i)`` for
        p = 0..s-1 and i = 0..d/2-1, with ``omega_i = base ** (-2i/d)``.
        Row 0 is ``[0, 1, 0, 1, ...]``.
    """
    dtype = _dtype(dtype)
    angles = _angles(s, d, base)  # (s, d/2)
    pe = np.empty((angles.shape[0], 2 * angles.shape[1]))  # (s, d)
    pe[:, 0::2] = np.sin(angles)  # even columns 2i
    pe[:, 1::2] = np.cos(angles)  # odd columns 2i+1
    return pe.astype(dtype, copy=False)


def concatenated_encoding(
    s: int, d: int, base: float = 10000.0, dtype=np.float64
) -> np.ndarray:
    """Sinusoidal encoding with all sines first, then all cosines.

    The layout some libraries use. It holds the same numbers as
    :func:`sinusoidal_encoding`, with the columns in another order (see
    :func:`interleaved_to_concatenated`).

    Parameters
    ----------
    s : int
        Number of positions, at least 1.
    d : int
        Model width, even and at least 2.
    base : float
        Base of the frequencies, greater than 1.
    dtype : {numpy.float64, numpy.float32}
        dtype of the result.

    Returns
    -------
    PE_cat : numpy.ndarray, shape (s, d)
        ``PE_cat[p, i] = sin(p omega_i)``, ``PE_cat[p, d/2 + i] = cos(p omega_i)``.
    """
    dtype = _dtype(dtype)
    angles = _angles(s, d, base)  # (s, d/2)
    # [(s, d/2) | (s, d/2)] -> (s, d)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=-1).astype(
        dtype, copy=False
    )


def tensor2tensor_frequencies(d: int, base: float = 10000.0, dtype=np.float64) -> np.ndarray:
    """Angular frequencies of tensor2tensor's timing signal (``get_timing_signal_1d``).

    The d/2 frequencies are spaced geometrically from 1 down to exactly ``1 / base``:
    ``omega_i = base ** (-i / (d/2 - 1))``, where the paper's run from 1 to
    ``base ** (-(d - 2) / d)`` (:func:`frequencies`). For d = 2 the one frequency is 1,
    as in tensor2tensor (which divides by ``max(d/2 - 1, 1)``).

    Parameters
    ----------
    d : int
        Model width, even and at least 2.
    base : float
        ``max_timescale / min_timescale`` in tensor2tensor (10000), greater than 1.
    dtype : {numpy.float64, numpy.float32}
        dtype of the result.

    Returns
    -------
    omega : numpy.ndarray, shape (d/2,)
        ``omega[i] = base ** (-i / max(d/2 - 1, 1))`` for i = 0..d/2-1.
    """
    d, base, dtype = _even_d(d), _base(base), _dtype(dtype)
    i = np.arange(d // 2, dtype=np.float64)  # (d/2,)
    return (base ** (-i / max(d // 2 - 1, 1))).astype(dtype)


def tensor2tensor_encoding(
    s: int, d: int, base: float = 10000.0, dtype=np.float64
) -> np.ndarray:
    """tensor2tensor's concatenated timing signal: all sines, then all cosines, at
    :func:`tensor2tensor_frequencies`.

    Not the paper's encoding in another column order: its frequencies differ from
    :func:`frequencies` for every pair but the first when d >= 4.

    Parameters
    ----------
    s : int
        Number of positions, at least 1.
    d : int
        Model width, even and at least 2.
    base : float
        Ratio of the longest to the shortest timescale, greater than 1 (10000).
    dtype : {numpy.float64, numpy.float32}
        dtype of the result.

    Returns
    -------
    signal : numpy.ndarray, shape (s, d)
        ``signal[p, i] = sin(p omega_i)``, ``signal[p, d/2 + i] = cos(p omega_i)`` with
        ``omega_i = base ** (-i / (d/2 - 1))``.
    """
    dtype = _dtype(dtype)
    omega = tensor2tensor_frequencies(d, base)  # (d/2,)
    s = positive_int(s, "s")
    # (s, 1) * (1, d/2) -> (s, d/2)
    angles = np.arange(s, dtype=np.float64)[:, None] * omega[None, :]
    # [(s, d/2) | (s, d/2)] -> (s, d)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=-1).astype(dtype, copy=False)


def _layout_input(pe, name: str) -> np.ndarray:
    pe = as_float_array(pe, name, min_ndim=1)
    d = pe.shape[-1]
    if d < 2 or d % 2:
        raise ValueError(
            f"{name} must have an even, non-zero last axis d (sin/cos pairs), "
            f"got shape {pe.shape}"
        )
    return pe


def interleaved_to_concatenated(pe) -> np.ndarray:
    """Reorder columns from ``[sin0, cos0, sin1, cos1, ...]`` to ``[sin..., cos...]``.

    Parameters
    ----------
    pe : array_like, shape (..., d)
        An encoding in the interleaved layout of :func:`sinusoidal_encoding`; d even.

    Returns
    -------
    pe_cat : numpy.ndarray, shape (..., d)
        The same numbers with columns ``[0, 2, 4, ..., 1, 3, 5, ...]``: a column
        permutation, so no information is lost.
    """
    pe = _layout_input(pe, "pe")
    d = pe.shape[-1]
    order = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])  # (d,)
    return pe[..., order]  # (..., d) -> (..., d), columns permuted


def concatenated_to_interleaved(pe_cat) -> np.ndarray:
    """Inverse of :func:`interleaved_to_concatenated`.

    Parameters
    ----------
    pe_cat : array_like, shape (..., d)
        An encoding in the concatenated layout ``[sin..., cos...]``; d even.

    Returns
    -------
    pe : numpy.ndarray, shape (..., d)
        The interleaved layout ``[sin0, cos0, sin1, cos1, ...]``.
    """
    pe_cat = _layout_input(pe_cat, "pe_cat")
    half = pe_cat.shape[-1] // 2
    # (..., d) -> (..., 2, d/2): row 0 the sines, row 1 the cosines
    pairs = pe_cat.reshape(*pe_cat.shape[:-1], 2, half)
    # (..., 2, d/2) -> (..., d/2, 2) -> (..., d)
    return np.swapaxes(pairs, -1, -2).reshape(pe_cat.shape)


def relative_rotation(k, d: int, base: float = 10000.0, dtype=np.float64) -> np.ndarray:
    """Matrix T(k) that shifts an encoding by k positions: ``PE[p + k] = PE[p] @ T(k)``.

    Derivation for one frequency pair, with a = p omega_i and b = k omega_i::

        [sin(a + b), cos(a + b)] = [sin a, cos a] @ [[ cos b, -sin b],
                                                     [ sin b,  cos b]]

    because sin(a + b) = sin a cos b + cos a sin b and
    cos(a + b) = cos a cos b - sin a sin b. T(k) puts these 2x2 blocks on its diagonal,
    one per pair (2i, 2i+1). It depends on the offset k only, not on p: the encoding of
    position p + k is a rotation of the encoding of p, the same rotation for every p.

    Parameters
    ----------
    k : int or float
        The offset; may be negative or zero (T(0) is the identity).
    d : int
        Model width, even and at least 2.
    base : float
        Base of the frequencies, greater than 1.
    dtype : {numpy.float64, numpy.float32}
        dtype of the result.

    Returns
    -------
    T : numpy.ndarray, shape (d, d)
        Block-diagonal and orthogonal; ``T(k) @ T(j) = T(k + j)`` and ``T(-k) = T(k).T``.
    """
    k = _real(k, "k")
    dtype = _dtype(dtype)
    b = k * frequencies(d, base)  # (d/2,)
    c, sn = np.cos(b), np.sin(b)
    t = np.zeros((d, d))  # (d, d)
    even, odd = np.arange(0, d, 2), np.arange(1, d, 2)
    t[even, even] = c  # sin_in -> sin_out
    t[odd, even] = sn  # cos_in -> sin_out
    t[even, odd] = -sn  # sin_in -> cos_out
    t[odd, odd] = c  # cos_in -> cos_out
    return t.astype(dtype, copy=False)


def wavelengths(d: int, base: float = 10000.0) -> np.ndarray:
    """Wavelength (in positions) of each frequency pair: ``2 pi / omega_i``.

    Parameters
    ----------
    d : int
        Model width, even and at least 2.
    base : float
        Base of the frequencies, greater than 1.

    Returns
    -------
    lam : numpy.ndarray, shape (d/2,)
        ``lam[i] = 2 pi * base ** (2 i / d)``: a geometric progression from ``2 pi``
        (pair 0) up to, but not reaching, ``2 pi * base`` (pair d/2 - 1 has
        ``2 pi * base ** (1 - 2/d)``). Each step multiplies by ``base ** (2/d)``.
    """
    return 2.0 * np.pi / frequencies(d, base)  # (d/2,)


def encoding_at(positions, d: int, base: float = 10000.0) -> np.ndarray:
    """The sinusoidal encoding of arbitrary positions (any real numbers, any order).

    ``sinusoidal_encoding(s, d)`` is ``encoding_at(range(s), d)``; this form also
    encodes positions past any length seen so far, negative offsets or fractions: the
    formula has no table to run out of.

    Parameters
    ----------
    positions : array_like of real, shape (n,)
        The positions p to encode.
    d : int
        Model width, even and at least 2.
    base : float
        Base of the frequencies, greater than 1.

    Returns
    -------
    PE : numpy.ndarray, shape (n, d)
        Row r is ``[sin(p_r omega_0), cos(p_r omega_0), sin(p_r omega_1), ...]``.
    """
    p = as_float_array(positions, "positions", min_ndim=1)
    if p.ndim != 1:
        raise ValueError(f"positions must be a 1-D array of n positions, got shape {p.shape}")
    omega = frequencies(d, base)  # (d/2,)
    angles = np.outer(p.astype(np.float64), omega)  # (n,) outer (d/2,) -> (n, d/2)
    pe = np.empty((p.shape[0], 2 * omega.shape[0]))  # (n, d)
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe


def position_similarity(pe) -> np.ndarray:
    """Dot products of every pair of encoding rows: ``PE @ PE.T``.

    For the sinusoidal encoding entry (p, q) equals ``sum_i cos((p - q) omega_i)``
    (see :func:`offset_similarity`): it depends on the offset p - q only, so the matrix
    is Toeplitz (constant along every diagonal), with d/2 on the diagonal.

    Parameters
    ----------
    pe : array_like, shape (s, d)
        An encoding, one row per position.

    Returns
    -------
    G : numpy.ndarray, shape (s, s)
        ``G[p, q] = PE[p] . PE[q]``.
    """
    pe = as_float_array(pe, "pe", min_ndim=2)
    if pe.ndim != 2:
        raise ValueError(f"pe must be a matrix of shape (s, d), got shape {pe.shape}")
    return pe @ pe.T  # (s, d) @ (d, s) -> (s, s)


def offset_similarity(offsets, d: int, base: float = 10000.0) -> np.ndarray:
    """``PE[p] . PE[p + k]`` as a function of the offset k alone.

    Each frequency pair contributes ``sin a sin b + cos a cos b = cos(a - b)`` with
    a = (p + k) omega_i and b = p omega_i, so the sum is ``sum_i cos(k omega_i)``,
    whatever p is.

    Parameters
    ----------
    offsets : array_like of real, any shape (...)
        The offsets k.
    d : int
        Model width, even and at least 2.
    base : float
        Base of the frequencies, greater than 1.

    Returns
    -------
    numpy.ndarray, shape (...)
        ``sum_i cos(k omega_i)``; equal to d/2 at k = 0, symmetric in k.
    """
    k = as_float_array(offsets, "offsets", min_ndim=0).astype(np.float64)
    omega = frequencies(d, base)  # (d/2,)
    return np.cos(k[..., None] * omega).sum(axis=-1)  # (..., d/2) -> (...)


def relative_rotation_error(s: int, d: int, k, base: float = 10000.0) -> float:
    """Largest ``|PE[p + k] - PE[p] @ T(k)|`` over every position p = 0..s-1.

    PE[p + k] is computed from the formula (:func:`encoding_at`), so p + k may lie past
    s - 1 or below 0; the identity holds there too.

    Parameters
    ----------
    s : int
        Number of positions p checked, at least 1.
    d : int
        Model width, even and at least 2.
    k : int or float
        The offset.
    base : float
        Base of the frequencies, greater than 1.

    Returns
    -------
    float
        The largest absolute difference over all s * d entries: rounding error only
        (about 1e-13 for positions below 1000 in float64).
    """
    s = positive_int(s, "s")
    k = _real(k, "k")
    p = np.arange(s, dtype=np.float64)  # (s,)
    shifted = encoding_at(p + k, d, base)  # (s, d)
    pe = encoding_at(p, d, base)  # (s, d)
    t = relative_rotation(k, d, base)  # (d, d)
    # PE @ T(k) computed block by block: T(k) is zero off its 2x2 diagonal blocks, so this
    # equals the (s, d) @ (d, d) product at O(s d) instead of O(s d^2) cost.
    half = np.arange(d // 2)
    blocks = t.reshape(d // 2, 2, d // 2, 2)[half, :, half, :]  # (d/2, 2, 2): block i
    sin, cos = pe[:, 0::2], pe[:, 1::2]  # (s, d/2) each: the two entries of every pair
    rotated = np.empty_like(pe)  # (s, d)
    # [sin', cos'] = [sin, cos] @ block: row vector (1, 2) @ (2, 2), for every p and pair
    rotated[:, 0::2] = sin * blocks[:, 0, 0] + cos * blocks[:, 1, 0]
    rotated[:, 1::2] = sin * blocks[:, 0, 1] + cos * blocks[:, 1, 1]
    return float(np.max(np.abs(shifted - rotated)))


def pair_similarity(s: int, d: int, base: float = 10000.0) -> np.ndarray:
    """Each frequency pair's share of :func:`mean_position_similarity`: the mean of
    ``cos((p - q) omega_i)`` over every p != q in 0..s-1.

    Near 1 for a pair whose wavelength is much longer than the s positions (it barely
    turns), near 0 for one that turns many times. Their mean over the d/2 pairs is
    :func:`mean_position_similarity`.

    Parameters
    ----------
    s : int
        Number of positions, at least 2.
    d : int
        Model width, even and at least 2.
    base : float
        Base of the frequencies, greater than 1.

    Returns
    -------
    numpy.ndarray, shape (d/2,)
        Pair i's mean cosine, i = 0 (fastest) .. d/2 - 1 (slowest).
    """
    s = positive_int(s, "s")
    if s < 2:
        raise ValueError(f"s must be at least 2 to have two distinct positions, got {s}")
    omega = frequencies(d, base)  # (d/2,)
    k = np.arange(1, s)  # (s - 1,): the offsets q - p > 0
    count = 2 * (s - k)  # (s - 1,): pairs (p, q) at offset +k or -k
    # (s - 1,) @ (s - 1, d/2) -> (d/2,): every offset's cosine, weighted by how often it occurs
    return count @ np.cos(np.outer(k, omega)) / (s * (s - 1))


def mean_position_similarity(s: int, d: int, base: float = 10000.0) -> float:
    """Mean cosine similarity of two distinct positions, ``PE[p] . PE[q] / (d/2)`` over
    every p != q in 0..s-1.

    One number for how alike the encoding makes different positions look: near 1 when
    most frequency pairs barely turn over the s positions (a large base), near 0 when
    every pair turns many times (a small base), so that far-apart positions are nearly
    orthogonal. Every row has norm sqrt(d/2), so dividing by d/2 gives the cosine.

    Parameters
    ----------
    s : int
        Number of positions, at least 2.
    d : int
        Model width, even and at least 2.
    base : float
        Base of the frequencies, greater than 1.

    Returns
    -------
    float
        ``sum_{p != q} sum_i cos((p - q) omega_i) / (d/2) / (s (s - 1))``.
    """
    return float(pair_similarity(s, d, base).mean())  # (d/2,) -> scalar


def learned_position_table(s_max: int, d: int, seed: int = 0) -> np.ndarray:
    """An untrained *learned* positional table P:(s_max, d), one row per position.

    This is note 004's one-hot trick: appending a one-hot position vector o_p to the
    input and multiplying by a weight matrix adds ``o_p @ W_o = P[p]``, a row of a
    learned table, like a token embedding (BERT and GPT-2 do this). Entries are drawn
    from N(0, 1) as in ``torch.nn.Embedding``; training would change them.

    Parameters
    ----------
    s_max : int
        The most positions the table covers (512 in BERT, 1024 in GPT-2).
    d : int
        Model width.
    seed : int
        Seed of the numpy generator.

    Returns
    -------
    P : numpy.ndarray, shape (s_max, d)
    """
    s_max = positive_int(s_max, "s_max")
    d = positive_int(d, "d")
    return np.random.default_rng(seed).standard_normal((s_max, d))


def learned_positional_encoding(s: int, table) -> np.ndarray:
    """The first s rows of a learned positional table: P[0..s-1].

    Parameters
    ----------
    s : int
        Sequence length, at least 1.
    table : array_like, shape (s_max, d)
        A learned positional table (:func:`learned_position_table`).

    Returns
    -------
    numpy.ndarray, shape (s, d)

    Raises
    ------
    ValueError
        If s > s_max: a learned table has no row for positions it never had, unlike
        the sinusoidal formula, which encodes any position.
    """
    s = positive_int(s, "s")
    table = as_float_array(table, "table", min_ndim=2)
    if table.ndim != 2:
        raise ValueError(f"table must be a matrix of shape (s_max, d), got shape {table.shape}")
    if s > table.shape[0]:
        raise ValueError(
            f"a learned table of s_max={table.shape[0]} positions has no row for positions "
            f"{table.shape[0]}..{s - 1} (s={s}); the sinusoidal encoding has no such limit"
        )
    return table[:s]  # (s_max, d) -> (s, d)


def rotary_embedding(x, base: float = 10000.0, *, pairs: str = "adjacent",
                     positions=None) -> np.ndarray:
    """Rotary position embedding (RoPE, Su et al.): turn row p of x by the angles p omega_i.

    Each pair of columns of row p is rotated counterclockwise by ``p * omega_i``, the angle
    of frequency pair i at position p. Which columns form pair i is a layout choice:

    - ``pairs="adjacent"``: columns (2i, 2i+1), as RoFormer, GPT-J and llama.cpp rotate
      them (and as the paper's sinusoidal encoding interleaves sin and cos)::

        [x_2i, x_2i+1] -> [x_2i cos(p w_i) - x_2i+1 sin(p w_i),
                           x_2i sin(p w_i) + x_2i+1 cos(p w_i)]

    - ``pairs="halves"``: columns (i, i + d/2), as Hugging Face's Llama code does it
      (``rotate_half``). A model trained in one layout runs in the other once the columns
      of each head's W^Q and W^K are permuted to match (chapter 10 does this for a GGUF file).

    In the book's row-vector form the adjacent layout is ``x[p] @ T(-p)`` with T of
    :func:`relative_rotation`. Applied to queries and keys, the score of a query at m and
    a key at n is ``q_m T(-m) T(-n)^T k_n^T = q_m T(n - m) k_n^T``: it depends on the two
    positions only through their offset n - m, in either layout. Nothing is added to X.

    Parameters
    ----------
    x : array_like, shape (..., s, d)
        Queries or keys, one row per position; d even.
    base : float
        Base of the frequencies, greater than 1 (10000 in RoFormer and most models).
    pairs : {"adjacent", "halves"}
        Which columns are rotated together (above).
    positions : array_like of int, shape (s,), optional
        The position of each row; ``0..s-1`` when omitted. A key/value cache rotates a new
        token at its own position ``t`` with ``positions=[t]``.

    Returns
    -------
    numpy.ndarray, shape (..., s, d)
        The rotated rows; every row keeps its norm.
    """
    x = as_float_array(x, "x", min_ndim=2)
    s, d = x.shape[-2:]
    if d < 2 or d % 2:
        raise ValueError(f"x must have an even number of columns d (pairs are rotated), got d={d}")
    if pairs not in ("adjacent", "halves"):
        raise ValueError(f'pairs must be "adjacent" (2i, 2i+1) or "halves" (i, i + d/2), got {pairs!r}')
    if positions is None:
        angles = _angles(s, d, base)  # (s, d/2): p * omega_i
    else:
        p = np.asarray(positions)
        if p.shape != (s,) or not np.issubdtype(p.dtype, np.integer) or (p < 0).any():
            raise ValueError(f"positions must be {s} whole numbers >= 0, one a row of x, "
                             f"got {np.asarray(positions).tolist()!r}")
        angles = np.outer(p.astype(np.float64), frequencies(d, base))  # (s,) outer (d/2,) -> (s, d/2)
    c, sn = np.cos(angles), np.sin(angles)
    first, second = ((slice(0, None, 2), slice(1, None, 2)) if pairs == "adjacent"
                     else (slice(0, d // 2), slice(d // 2, d)))
    a, b = x[..., first], x[..., second]  # (..., s, d/2) each: the two halves of every pair
    out = np.empty_like(x)
    out[..., first] = a * c - b * sn
    out[..., second] = a * sn + b * c
    return out


def alibi_slopes(h: int) -> np.ndarray:
    """ALiBi's per-head slopes m_1..m_h (Press et al., 2022).

    For h a power of 2 they are the geometric sequence ``m_j = 2 ** (-8 j / h)``,
    j = 1..h: 1/2, 1/4, ..., 1/256 for 8 heads. For other h the paper's code takes the
    slopes of the largest power of 2 below h and fills up with every other slope of the
    next power of 2 (as ``get_slopes`` of the ALiBi repository does).

    Parameters
    ----------
    h : int
        Number of heads, >= 1.

    Returns
    -------
    m : numpy.ndarray, shape (h,)
        Positive, and decreasing when h is a power of 2.
    """
    h = positive_int(h, "h")
    if h & (h - 1) == 0:  # a power of 2
        return 2.0 ** (-8.0 * np.arange(1, h + 1) / h)
    below = 1 << (h.bit_length() - 1)  # the largest power of 2 below h
    return np.concatenate([alibi_slopes(below), alibi_slopes(2 * below)[0::2][:h - below]])


def _offsets(s_q: int, s_k: int) -> np.ndarray:
    """(s_q, s_k): entry (i, j) is j - i, the key's position minus the query's."""
    return np.arange(s_k)[None, :] - np.arange(s_q)[:, None]  # (1, s_k) - (s_q, 1)


def alibi_bias(s: int, h: int) -> np.ndarray:
    """ALiBi's bias on the attention scores: ``-m_h |i - j|`` for query i and key j.

    Each head penalises a key linearly in its distance from the query, head h with its
    own slope m_h (:func:`alibi_slopes`): steep heads look near, gentle heads far. With
    a causal mask (j <= i) this is the paper's ``-m_h (i - j)``; the absolute value is the
    symmetric form used without a mask. No position vector is added to X.

    Parameters
    ----------
    s : int
        Sequence length.
    h : int
        Number of heads.

    Returns
    -------
    bias : numpy.ndarray, shape (h, s, s)
        Added to the (h, s, s) scores before the softmax; 0 on the diagonal.
    """
    s = positive_int(s, "s")
    distance = np.abs(_offsets(s, s))  # (s, s)
    return alibi_slopes(h)[:, None, None] * -distance  # (h, 1, 1) * (s, s) -> (h, s, s); no -0.0


def relative_position_bucket(relative_position, bidirectional: bool = True,
                             num_buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """T5's bucket of a relative position j - i (Raffel et al., 2020).

    Half the buckets (in the bidirectional case) hold offsets exactly, one bucket per
    small distance; the other half cover distances logarithmically up to ``max_distance``,
    and every farther distance shares the last bucket. With ``bidirectional=True`` the
    buckets are split again between keys before (j < i) and after (j > i) the query;
    with ``bidirectional=False`` (a decoder) every key after the query gets bucket 0.
    Written after ``T5Attention._relative_position_bucket`` of Hugging Face transformers.

    Parameters
    ----------
    relative_position : array_like of int, any shape
        Offsets j - i (key position minus query position).
    bidirectional : bool
        True in an encoder (keys on both sides), False in a decoder.
    num_buckets : int
        Number of buckets, >= 4 and even when bidirectional (32 in T5).
    max_distance : int
        Distances from here on share the last bucket (128 in T5).

    Returns
    -------
    numpy.ndarray of int64, same shape as ``relative_position``
        Buckets in 0..num_buckets-1.
    """
    rel = np.asarray(relative_position)
    if rel.dtype == bool or not np.issubdtype(rel.dtype, np.integer):
        raise ValueError(f"relative_position must hold whole numbers j - i, got dtype {rel.dtype}")
    if not isinstance(bidirectional, (bool, np.bool_)):
        raise ValueError(f"bidirectional must be True or False, got {bidirectional!r}")
    num_buckets = positive_int(num_buckets, "num_buckets")
    max_distance = positive_int(max_distance, "max_distance")
    if bidirectional and num_buckets % 2:
        raise ValueError(f"num_buckets must be even when bidirectional, got {num_buckets}")
    n = num_buckets // 2 if bidirectional else num_buckets  # buckets for one direction
    max_exact = n // 2  # distances 0..max_exact-1 get a bucket each
    if max_exact < 1:
        raise ValueError(f"num_buckets={num_buckets} leaves no bucket for exact distances; "
                         f"give at least {4 if bidirectional else 2}")
    if max_distance <= max_exact:
        raise ValueError(f"max_distance={max_distance} must exceed the {max_exact} distances "
                         f"held exactly")
    rel = rel.astype(np.int64)
    bucket = np.zeros(rel.shape, dtype=np.int64)
    if bidirectional:
        bucket += (rel > 0) * n  # keys after the query use the upper half
        distance = np.abs(rel)
    else:
        distance = -np.minimum(rel, 0)  # keys after the query: distance 0
    # In float32, as T5 computes it, so that the buckets agree at their edges too.
    ratio = np.maximum(distance, 1).astype(np.float32) / np.float32(max_exact)
    log_part = max_exact + (np.log(ratio) / np.float32(math.log(max_distance / max_exact))
                            * np.float32(n - max_exact)).astype(np.int64)
    log_part = np.minimum(log_part, n - 1)
    return bucket + np.where(distance < max_exact, distance, log_part)


def t5_relative_bias(s: int, table, bidirectional: bool = True,
                     max_distance: int = 128) -> np.ndarray:
    """T5's relative position bias: one learned number per head and bucket of j - i.

    Parameters
    ----------
    s : int
        Sequence length.
    table : array_like, shape (num_buckets, h)
        The learned biases (T5's ``relative_attention_bias.weight``).
    bidirectional : bool
        See :func:`relative_position_bucket`.
    max_distance : int
        See :func:`relative_position_bucket`.

    Returns
    -------
    bias : numpy.ndarray, shape (h, s, s)
        ``bias[h, i, j] = table[bucket(j - i), h]``, added to the scores before the
        softmax; constant along every diagonal, like the sinusoid's PE PE^T.
    """
    s = positive_int(s, "s")
    table = as_float_array(table, "table", min_ndim=2)
    if table.ndim != 2:
        raise ValueError(f"table must have shape (num_buckets, h), got {table.shape}")
    buckets = relative_position_bucket(_offsets(s, s), bidirectional, table.shape[0],
                                       max_distance)  # (s, s)
    return np.moveaxis(table[buckets], -1, 0)  # (s, s, h) -> (h, s, s)


def attention_with_bias(q, k, v, bias, mask=None):
    """Scaled dot-product attention with an additive bias on the scores (ALiBi, T5).

    ``softmax(q k^T / sqrt(d_k) + bias, masked) @ v``. (T5 itself does not divide by
    sqrt(d_k); its initialisation absorbs the factor. The bias is added the same way.)

    Parameters
    ----------
    q : array_like, shape (..., s_q, d_k)
    k : array_like, shape (..., s_k, d_k)
    v : array_like, shape (..., s_k, d_v)
    bias : array_like, shape broadcastable to (..., s_q, s_k)
        For h heads, (h, s_q, s_k) with q, k, v of shape (h, s, d_k).
    mask : array_like of bool, shape broadcastable to (..., s_q, s_k), optional
        True = may attend.

    Returns
    -------
    output : numpy.ndarray, shape (..., s_q, d_v)
    weights : numpy.ndarray, shape (..., s_q, s_k)
        Each row sums to 1 (all 0 for a query that may attend to nothing).
    """
    v = as_float_array(v, "v", min_ndim=2)
    scores = attention_scores(q, k)  # (..., s_q, d_k) @ (..., d_k, s_k) -> (..., s_q, s_k)
    bias = as_float_array(bias, "bias", min_ndim=2)
    try:
        scores = scores + bias  # broadcast (..., s_q, s_k)
    except ValueError:
        raise ValueError(
            f"bias of shape {bias.shape} does not broadcast to the scores' shape {scores.shape}"
        ) from None
    if v.shape[-2] != scores.shape[-1]:
        raise ValueError(f"v has {v.shape[-2]} rows but there are {scores.shape[-1]} keys")
    return attend(scores, v, mask)
