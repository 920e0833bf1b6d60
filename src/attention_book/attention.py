"""Scaled dot-product attention from scratch, in numpy.

Row-vector notation, with any leading batch axes ``...``::

    q:(..., s_q, d_k)   k:(..., s_k, d_k)   v:(..., s_k, d_v)
    scores  = q @ k^T * scale                   (..., s_q, s_k)
    weights = softmax(scores, axis=-1)          (..., s_q, s_k), rows sum to 1
    output  = weights @ v                       (..., s_q, d_v)

Masks are boolean with True meaning "may attend", as in PyTorch's
``torch.nn.functional.scaled_dot_product_attention``. (``torch.nn.MultiheadAttention``
uses the opposite: there True means "may NOT attend".)

This module imports numpy only.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ._validate import as_float_array, positive_int

__all__ = [
    "softmax",
    "attention_scores",
    "scaled_dot_product_attention",
    "causal_mask",
]


def _as_logits(x) -> np.ndarray:
    """Like as_float_array, but -inf is allowed (it is how masked entries look)."""
    try:
        arr = np.asarray(x)
    except Exception as err:
        raise ValueError(f"x must be an array of numbers: {err}") from None
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or arr.dtype == bool
    ):
        raise ValueError(f"x must be an array of numbers, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise ValueError("x must be real, got a complex array")
    if arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)
    if np.isnan(arr).any():
        raise ValueError("x contains NaN; softmax needs numbers (-inf is allowed)")
    if np.isposinf(arr).any():
        raise ValueError("x contains +inf; softmax needs finite numbers or -inf")
    return arr


def _axis(axis, ndim: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise ValueError(f"axis must be a whole number, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis={axis} is out of range for an array with {ndim} axes")
    return int(axis)


def softmax(x, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along one axis.

    The maximum of each slice is subtracted before ``exp`` (softmax does not change when
    a constant is added to every entry), so logits of +-1e4 neither overflow nor give
    NaN. Entries equal to ``-inf`` get weight 0. A slice that is entirely ``-inf`` (a
    query that may attend to nothing) returns all zeros rather than NaN.

    Parameters
    ----------
    x : array_like, shape (..., n)
        Logits; finite numbers or ``-inf``. NaN and +inf are refused.
    axis : int
        The axis to normalise over (the last by default: one row per query).

    Returns
    -------
    weights : numpy.ndarray, same shape as x
        Non-negative; each slice along ``axis`` sums to 1, or is all 0 when the slice
        was all ``-inf``. float32 in, float32 out; otherwise float64.
    """
    x = _as_logits(x)
    if x.ndim == 0:
        raise ValueError("x must have at least 1 axis, got a scalar")
    axis = _axis(axis, x.ndim)
    m = np.max(x, axis=axis, keepdims=True)  # (..., 1)
    m = np.where(np.isneginf(m), 0.0, m).astype(x.dtype)  # all -inf slice: shift by 0
    with np.errstate(over="ignore"):  # x - m may overflow to -inf near 1e308: exp -> 0
        e = np.exp(x - m)  # (..., n); exp(-inf) = 0, largest entry exp(0) = 1
    total = np.sum(e, axis=axis, keepdims=True)  # (..., 1); >= 1 unless all -inf
    safe = np.where(total > 0, total, 1).astype(x.dtype)
    return e / safe


def _scale(scale, d_k: int) -> float:
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise ValueError(f"scale must be a positive number or None, got {scale!r}")
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(
            f"scale must be a positive finite number (default 1/sqrt(d_k)), got {scale}"
        )
    return float(scale)


def _batch_shape(**shapes) -> tuple:
    """Broadcast the leading (batch) axes of the named arrays, or explain why not."""
    try:
        return np.broadcast_shapes(*(s[:-2] for s in shapes.values()))
    except ValueError:
        listed = ", ".join(f"{n} has shape {s}" for n, s in shapes.items())
        raise ValueError(
            f"the leading (batch) axes do not broadcast: {listed}; all axes before "
            f"the last two must be equal or 1"
        ) from None


def _check_qk(q, k):
    q = as_float_array(q, "q", min_ndim=2)
    k = as_float_array(k, "k", min_ndim=2)
    if k.shape[-1] != q.shape[-1]:
        raise ValueError(
            f"k has shape {k.shape} but q has d_k={q.shape[-1]}: "
            f"the last axes of q and k must match"
        )
    _batch_shape(q=q.shape, k=k.shape)
    return q, k


def attention_scores(q, k, scale: float | None = None) -> np.ndarray:
    """Pre-softmax attention scores ``q @ k^T * scale``.

    Parameters
    ----------
    q : array_like, shape (..., s_q, d_k)
        Queries, one row per query position.
    k : array_like, shape (..., s_k, d_k)
        Keys, one row per key position; leading axes broadcast with those of q.
    scale : float, optional
        Positive multiplier; default ``1 / sqrt(d_k)``.

    Returns
    -------
    scores : numpy.ndarray, shape (..., s_q, s_k)
        ``scores[..., i, j] = scale * (q_i . k_j)``.
    """
    q, k = _check_qk(q, k)
    scale = _scale(scale, q.shape[-1])
    # (..., s_q, d_k) @ (..., d_k, s_k) -> (..., s_q, s_k)
    return (q @ np.swapaxes(k, -1, -2)) * scale


def _check_mask(mask, scores_shape: tuple) -> np.ndarray:
    """Return mask as a bool array broadcastable to scores_shape (..., s_q, s_k)."""
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise ValueError(
            f"mask must be boolean with True = may attend (PyTorch SDPA convention), "
            f"got dtype {mask.dtype}; build it with a comparison, e.g. causal_mask(s), "
            f"or convert a 0/1 array with mask.astype(bool)"
        )
    s_q, s_k = scores_shape[-2:]
    try:
        full = np.broadcast_shapes(mask.shape, scores_shape)
    except ValueError:
        full = None
    if full is None or full[-2:] != (s_q, s_k):
        raise ValueError(
            f"mask has shape {mask.shape} but the scores have shape {scores_shape} "
            f"(..., s_q={s_q}, s_k={s_k}): mask must broadcast to (..., {s_q}, {s_k})"
        )
    return mask


def scaled_dot_product_attention(q, k, v, mask=None, scale: float | None = None):
    """Scaled dot-product attention: ``softmax(q k^T * scale, masked) @ v``.

    Each output row is a convex combination of the rows of v: its weights are
    non-negative and sum to 1.

    A query whose mask row is all False (it may attend to nothing) gets zero weights
    and a zero output row, never NaN. torch.nn.functional.scaled_dot_product_attention
    in the pinned torch 2.13 on CPU also returns zeros there, but older versions, a
    plain ``torch.softmax`` of the masked scores and ``torch.nn.MultiheadAttention``
    give NaN for such a row.

    Parameters
    ----------
    q : array_like, shape (..., s_q, d_k)
        Queries.
    k : array_like, shape (..., s_k, d_k)
        Keys; same d_k as q.
    v : array_like, shape (..., s_k, d_v)
        Values; same s_k as k. Leading axes of q, k, v broadcast.
    mask : array_like of bool, shape broadcastable to (..., s_q, s_k), optional
        True = query i may attend to key j (PyTorch SDPA convention). None: no mask.
    scale : float, optional
        Positive multiplier of the scores; default ``1 / sqrt(d_k)``.

    Returns
    -------
    output : numpy.ndarray, shape (..., s_q, d_v)
        ``weights @ v``.
    weights : numpy.ndarray, shape (..., s_q, s_k)
        Post-softmax attention weights; each row sums to 1 (or is all 0 when the
        whole row is masked).
    """
    q, k = _check_qk(q, k)
    v = as_float_array(v, "v", min_ndim=2)
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"v has shape {v.shape} but k has s_k={k.shape[-2]} rows: "
            f"k and v need one row per key position, so their s_k must match"
        )
    _batch_shape(q=q.shape, k=k.shape, v=v.shape)
    scores = attention_scores(q, k, scale)  # (..., s_q, s_k)
    if mask is not None:
        mask = _check_mask(mask, scores.shape)
        scores = np.where(mask, scores, -np.inf).astype(scores.dtype)
    weights = softmax(scores, axis=-1)  # (..., s_q, s_k)
    # (..., s_q, s_k) @ (..., s_k, d_v) -> (..., s_q, d_v)
    return weights @ v, weights


def causal_mask(s: int) -> np.ndarray:
    """Causal (look-back only) mask: position i may attend to positions 0..i.

    Parameters
    ----------
    s : int
        Sequence length, at least 1.

    Returns
    -------
    mask : numpy.ndarray of bool, shape (s, s)
        Lower triangular: ``mask[i, j] = (j <= i)``; True = may attend.
    """
    s = positive_int(s, "s")
    return np.tril(np.ones((s, s), dtype=bool))
