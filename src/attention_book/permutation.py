"""Permutations of the rows of X:(s, d), for the permutation-equivariance chapter.

A permutation of s positions is an int array ``perm`` of shape (s,) holding each of
0..s-1 exactly once. Permuting rows puts old row ``perm[i]`` at new position i:
``(P @ X)[i] = X[perm[i]]`` with ``P = permutation_matrix(perm)``.

This module imports numpy only.
"""

from __future__ import annotations

import numpy as np

from ._validate import as_float_array, positive_int

__all__ = [
    "is_permutation",
    "permutation_matrix",
    "random_permutation",
    "PERMUTATION_NAMES",
    "named_permutation",
    "permute_rows",
    "inverse_permutation",
    "parse_permutation",
    "equivariance_error",
    "invariance_error",
    "match_rows",
    "same_rows_up_to_order",
]


def _as_perm(perm, name: str = "perm") -> np.ndarray:
    """Return perm as an int64 array of shape (s,), or raise a ValueError explaining why not."""
    try:
        arr = np.asarray(perm)
    except Exception as err:
        raise ValueError(f"{name} must be a 1-D array of whole numbers: {err}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array (s,), got shape {arr.shape}")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must hold whole numbers (int dtype), got dtype {arr.dtype}")
    s = arr.shape[0]
    if not np.array_equal(np.sort(arr), np.arange(s)):
        raise ValueError(
            f"{name} must contain each of 0..{s - 1} exactly once, got {arr.tolist()}"
        )
    return arr.astype(np.int64)


def is_permutation(perm) -> bool:
    """Whether ``perm`` is a permutation of 0..s-1.

    Parameters
    ----------
    perm : array_like, shape (s,)
        Candidate; anything else (wrong shape, floats, repeats, gaps) gives False.

    Returns
    -------
    bool
        True when perm is an integer array holding each of 0..s-1 exactly once.
    """
    try:
        _as_perm(perm)
    except ValueError:
        return False
    return True


def permutation_matrix(perm, dtype=np.float64) -> np.ndarray:
    """The matrix P with ``(P @ X)[i] = X[perm[i]]``: left-multiplying permutes rows.

    Parameters
    ----------
    perm : array_like of int, shape (s,)
        A permutation of 0..s-1.
    dtype : numpy dtype
        dtype of P (float64 by default; use X's dtype to keep float32 products float32).

    Returns
    -------
    P : numpy.ndarray, shape (s, s)
        ``P[i, perm[i]] = 1``, all other entries 0. P is orthogonal: ``P.T @ P = I``
        and ``P.T`` is the matrix of :func:`inverse_permutation`.
    """
    perm = _as_perm(perm)
    s = perm.shape[0]
    p = np.zeros((s, s), dtype=dtype)  # (s, s)
    p[np.arange(s), perm] = 1
    return p


def random_permutation(s: int, seed: int = 0) -> np.ndarray:
    """A random permutation of 0..s-1 from a seeded numpy Generator (deterministic).

    Parameters
    ----------
    s : int
        Number of positions, at least 1.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    perm : numpy.ndarray of int64, shape (s,)
    """
    s = positive_int(s, "s")
    return np.random.default_rng(seed).permutation(s).astype(np.int64)


#: The permutations :func:`named_permutation` knows.
PERMUTATION_NAMES = ("identity", "reverse", "rotate", "swap", "shuffle")


def named_permutation(name: str, s: int, seed: int = 0) -> np.ndarray:
    """A permutation of s positions chosen by name.

    Parameters
    ----------
    name : str
        One of :data:`PERMUTATION_NAMES`: "identity"; "reverse"; "rotate" (new position
        i holds old token i+1, the first moves to the end); "swap" (the first and last
        tokens change places); "shuffle" (:func:`random_permutation` with ``seed``).
    s : int
        Number of positions, at least 1.
    seed : int
        Seed of "shuffle" (the other names ignore it).

    Returns
    -------
    perm : numpy.ndarray of int64, shape (s,)
        New position i holds old position ``perm[i]``, as in :func:`permute_rows`.
    """
    s = positive_int(s, "s")
    if not isinstance(name, str) or name not in PERMUTATION_NAMES:
        raise ValueError(f"unknown permutation {name!r}: choose one of "
                         f"{list(PERMUTATION_NAMES)}")
    perm = np.arange(s, dtype=np.int64)  # (s,)
    if name == "reverse":
        return perm[::-1].copy()
    if name == "rotate":
        return (perm + 1) % s
    if name == "shuffle":
        return random_permutation(s, seed)
    if name == "swap":
        perm[[0, -1]] = perm[[-1, 0]]
    return perm


def permute_rows(x, perm, axis: int = -2) -> np.ndarray:
    """Reorder ``x`` along one axis: ``out[..., i, :] = x[..., perm[i], :]``.

    Equal to ``permutation_matrix(perm) @ x`` for x:(..., s, d) and axis=-2, without
    building the matrix. The dtype of x is kept (works for bool masks and ids too).

    Parameters
    ----------
    x : array_like, shape (..., s, d) by default
        The array whose rows (axis ``axis``) are permuted; that axis has length s.
    perm : array_like of int, shape (s,)
        A permutation of 0..s-1.
    axis : int
        The axis to permute, -2 (rows / sequence positions) by default.

    Returns
    -------
    numpy.ndarray, same shape and dtype as x
    """
    x = np.asarray(x)
    perm = _as_perm(perm)
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise ValueError(f"axis must be a whole number, got {axis!r}")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis={axis} is out of range for x with shape {x.shape}")
    if x.shape[axis] != perm.shape[0]:
        raise ValueError(
            f"x has shape {x.shape}, so axis {axis} has length {x.shape[axis]}, "
            f"but perm permutes s={perm.shape[0]} positions: the lengths must match"
        )
    return np.take(x, perm, axis=axis)


def inverse_permutation(perm) -> np.ndarray:
    """The permutation that undoes ``perm``.

    Parameters
    ----------
    perm : array_like of int, shape (s,)
        A permutation of 0..s-1.

    Returns
    -------
    inv : numpy.ndarray of int64, shape (s,)
        ``inv[perm[i]] = i``, so ``permute_rows(permute_rows(x, perm), inv) == x``.
    """
    perm = _as_perm(perm)
    inv = np.empty_like(perm)  # (s,)
    inv[perm] = np.arange(perm.shape[0])
    return inv


# ------------------------------------------------ equivariance and invariance, measured


def parse_permutation(text: str, s: int) -> np.ndarray:
    """Read a permutation typed by a reader, e.g. ``"4 3 2 1 0"`` or ``"4,3,2,1,0"``.

    Parameters
    ----------
    text : str
        Whole numbers separated by spaces and/or commas; entry i is the old position that
        moves to new position i (the convention of :func:`permute_rows`).
    s : int
        The number of positions the permutation must cover.

    Returns
    -------
    perm : numpy.ndarray of int64, shape (s,)

    Raises
    ------
    ValueError
        With a message saying what is wrong: not numbers, the wrong count, a number out of
        range, a repeated or a missing position.
    """
    s = positive_int(s, "s")
    if not isinstance(text, str):
        raise ValueError(f"the order must be text such as '4 3 2 1 0', got {text!r}")
    parts = [p for p in text.replace(",", " ").split() if p]
    if not parts:
        raise ValueError(f"type {s} positions, e.g. '{' '.join(map(str, range(s - 1, -1, -1)))}'")
    bad = [p for p in parts if not (p.isascii() and p.isdigit())]
    if bad:
        raise ValueError(f"'{bad[0]}' is not a position: use whole numbers 0..{s - 1}")
    values = [int(p) for p in parts]
    if len(values) != s:
        raise ValueError(f"the sentence has s={s} tokens, so type {s} positions, "
                         f"got {len(values)}")
    out = [v for v in values if v >= s]
    if out:
        raise ValueError(f"position {out[0]} does not exist: positions run 0..{s - 1}")
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        missing = sorted(set(range(s)) - set(values))
        raise ValueError(f"position {repeated[0]} appears twice and {missing[0]} is missing: "
                         f"each of 0..{s - 1} must appear exactly once")
    return np.asarray(values, dtype=np.int64)


def _output(result) -> np.ndarray:
    """The output array of ``f``'s result: attention functions return (output, weights)."""
    if isinstance(result, tuple):
        result = result[0]
    return as_float_array(result, "f(X)", min_ndim=2)


def equivariance_error(f, x, perm) -> float:
    """How far ``f`` is from permutation equivariance at x: ``max |f(P X) - P f(X)|``.

    Zero (up to rounding) when permuting the input rows permutes the output rows the same
    way, as for self-attention without positional information or masks.

    Parameters
    ----------
    f : callable
        Maps X:(s, d) to an output (s, d_out), or to a tuple whose first element is that
        output (as :func:`~attention_book.attention.scaled_dot_product_attention` and
        :class:`~attention_book.multihead.MultiHeadAttention` return (output, weights)).
    x : array_like, shape (s, d)
        The input, one row per position.
    perm : array_like of int, shape (s,)
        A permutation of 0..s-1; ``P X = permute_rows(X, perm)``.

    Returns
    -------
    float
        The largest absolute entry of ``f(P X) - P f(X)``, shape (s, d_out).
    """
    x = as_float_array(x, "x", min_ndim=2)
    perm = _as_perm(perm)
    if x.shape[-2] != perm.shape[0]:
        raise ValueError(f"x has s={x.shape[-2]} rows but perm permutes {perm.shape[0]} "
                         "positions: the lengths must match")
    y = _output(f(x))  # (s, d_out)
    y_perm = _output(f(permute_rows(x, perm)))  # (s, d_out)
    if y.shape != y_perm.shape or y.shape[-2] != x.shape[-2]:
        raise ValueError(f"f must map (s, d) to (s, d_out) for every order of the rows, "
                         f"got shapes {y.shape} and {y_perm.shape}")
    return float(np.max(np.abs(y_perm - permute_rows(y, perm)), initial=0.0))


def invariance_error(f, q, k, v, perm) -> float:
    """How far ``f`` is from invariance to a joint permutation of keys and values.

    ``max |f(Q, P K, P V) - f(Q, K, V)|``: the queries stay put, the key rows and the
    value rows are reordered together (their pairing kept).

    Parameters
    ----------
    f : callable
        ``f(q, k, v)`` returning the output (s_q, d_v), or a tuple (output, weights).
    q : array_like, shape (s_q, d_k)
    k : array_like, shape (s_k, d_k)
    v : array_like, shape (s_k, d_v)
    perm : array_like of int, shape (s_k,)
        A permutation of the s_k key/value positions.

    Returns
    -------
    float
        The largest absolute entry of the difference, shape (s_q, d_v).
    """
    k = as_float_array(k, "k", min_ndim=2)
    v = as_float_array(v, "v", min_ndim=2)
    perm = _as_perm(perm)
    if k.shape[-2] != perm.shape[0] or v.shape[-2] != perm.shape[0]:
        raise ValueError(f"k has s_k={k.shape[-2]} rows and v has {v.shape[-2]}, but perm "
                         f"permutes {perm.shape[0]} positions: all three must match")
    y = _output(f(q, k, v))  # (s_q, d_v)
    y_perm = _output(f(q, permute_rows(k, perm), permute_rows(v, perm)))  # (s_q, d_v)
    return float(np.max(np.abs(y_perm - y), initial=0.0))


def match_rows(a, b, atol: float = 1e-9) -> np.ndarray | None:
    """A permutation pairing the rows of ``a`` with equal rows of ``b``, if there is one.

    Greedy: row i of a takes the first unused row of b within ``atol`` (entry-wise).
    Exact for rows that are either equal (within atol) or clearly different, which is
    what comparing attention outputs needs.

    Parameters
    ----------
    a, b : array_like, shape (s, d)
    atol : float
        Largest absolute difference of entries still called equal (>= 0).

    Returns
    -------
    perm : numpy.ndarray of int64, shape (s,), or None
        With ``b[perm[i]] ~ a[i]`` (so ``permute_rows(b, perm) ~ a``); None when the rows
        cannot be paired.
    """
    a = as_float_array(a, "a", min_ndim=2)
    b = as_float_array(b, "b", min_ndim=2)
    if a.ndim != 2 or a.shape != b.shape:
        raise ValueError(f"a and b must be matrices of one shape (s, d), got {a.shape} "
                         f"and {b.shape}")
    if not (isinstance(atol, (int, float, np.floating)) and atol >= 0):
        raise ValueError(f"atol must be a number >= 0, got {atol!r}")
    # (s, 1, d) - (1, s, d) -> (s, s): close[i, j] says row i of a equals row j of b
    close = np.all(np.abs(a[:, None, :] - b[None, :, :]) <= atol, axis=-1)
    used = np.zeros(b.shape[0], dtype=bool)
    perm = np.empty(a.shape[0], dtype=np.int64)
    for i in range(a.shape[0]):
        free = np.flatnonzero(close[i] & ~used)
        if free.size == 0:
            return None
        perm[i] = free[0]
        used[free[0]] = True
    return perm


def same_rows_up_to_order(a, b, atol: float = 1e-9) -> bool:
    """Whether a and b hold the same rows, possibly in a different order (a multiset).

    Parameters
    ----------
    a, b : array_like, shape (s, d)
    atol : float
        Largest absolute difference of entries still called equal.

    Returns
    -------
    bool
        True when some permutation P gives ``P b ~ a`` (see :func:`match_rows`).
    """
    return match_rows(a, b, atol) is not None
