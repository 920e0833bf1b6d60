"""Permutations of the rows of X:(s, d), for the permutation-equivariance chapter.

A permutation of s positions is an int array ``perm`` of shape (s,) holding each of
0..s-1 exactly once. Permuting rows puts old row ``perm[i]`` at new position i:
``(P @ X)[i] = X[perm[i]]`` with ``P = permutation_matrix(perm)``.

This module imports numpy only.
"""

from __future__ import annotations

import numpy as np

from ._validate import positive_int

__all__ = [
    "is_permutation",
    "permutation_matrix",
    "random_permutation",
    "permute_rows",
    "inverse_permutation",
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
