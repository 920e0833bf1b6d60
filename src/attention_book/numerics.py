"""Numbers a real kernel works with: bfloat16 rounding and the online softmax.

- :func:`to_bfloat16` rounds float32 to bfloat16 (its top 16 bits, round to nearest, ties
  to even), the way ``torch.Tensor.to(torch.bfloat16)`` does, so numpy can show what the
  format keeps and loses.
- :func:`online_softmax` and :func:`online_attention` compute the softmax, and attention,
  one block of keys at a time with a running maximum and a rescaled running sum
  (Milakov & Gimelshein 2018), the step that makes FlashAttention exact: the (s_q, s_k)
  scores are never held whole.
- :func:`attention_working_floats` counts the floats each way keeps besides its inputs
  and output.

This module imports numpy only.
"""

from __future__ import annotations

import math

import numpy as np

from ._validate import as_float_array, batch_shape, check_mask, positive_int

__all__ = [
    "BFLOAT16_MAX",
    "BFLOAT16_EPS",
    "to_bfloat16",
    "bfloat16_bits",
    "online_softmax",
    "online_attention",
    "attention_working_floats",
]

BFLOAT16_MAX = float((2 - 2**-7) * 2.0**127)  # 3.39e38: float32's 8 exponent bits
BFLOAT16_EPS = 2.0**-7  # spacing of bfloat16 numbers just above 1: 8 significant bits


def _float32(x, name: str) -> np.ndarray:
    try:
        arr = np.asarray(x)
    except Exception as err:  # ragged lists and the like
        raise ValueError(f"{name} must be an array of numbers: {err}") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise ValueError(f"{name} must be real, got a complex array")
    with np.errstate(over="ignore"):  # float64 beyond float32's range -> inf, as torch does
        return arr.astype(np.float32)


def bfloat16_bits(x) -> np.ndarray:
    """The 16 bits of bfloat16 that ``x`` rounds to, as torch stores them.

    bfloat16 is the top half of a float32: 1 sign bit, the same 8 exponent bits, and 7 of
    the 23 mantissa bits. Rounding to nearest, ties to even, adds ``0x7FFF`` plus the
    lowest kept bit to the float32's bits before the low 16 are dropped; a NaN becomes
    the quiet NaN ``0x7FC0`` (as torch's scalar ``c10::BFloat16`` does; its vectorised CPU
    conversion writes ``0xFFFF``, another NaN).

    Parameters
    ----------
    x : array_like, any shape
        Real numbers; converted to float32 first (values beyond float32's range become
        +-inf, as ``torch.tensor(x)`` does).

    Returns
    -------
    numpy.ndarray of uint16, same shape as x
        Equal to ``torch.tensor(x).to(torch.bfloat16).view(torch.int16)`` read as uint16,
        bit for bit wherever x is not NaN.
    """
    x32 = _float32(x, "x")
    bits = x32.view(np.uint32).astype(np.uint64)  # 64 bits: the carry cannot overflow
    lowest_kept = (bits >> 16) & 1  # 1 when the bit that survives is odd: ties go even
    rounded = ((bits + 0x7FFF + lowest_kept) >> 16).astype(np.uint16)
    return np.where(np.isnan(x32), np.uint16(0x7FC0), rounded)


def to_bfloat16(x) -> np.ndarray:
    """Round to bfloat16, returned as float32 (every bfloat16 number is a float32).

    Parameters
    ----------
    x : array_like, any shape
        Real numbers (see :func:`bfloat16_bits`).

    Returns
    -------
    numpy.ndarray of float32, same shape as x
        The nearest bfloat16 number (ties to even). Finite numbers beyond
        :data:`BFLOAT16_MAX` round to +-inf, as in torch. The relative rounding error of
        a normal number is at most ``BFLOAT16_EPS / 2 = 2**-8``, against float16's
        ``2**-11``; float16 overflows above 65504, bfloat16 only near 3.4e38.
    """
    bits = bfloat16_bits(x).astype(np.uint32) << 16  # bfloat16 -> the float32 it is
    return bits.view(np.float32)


def _block(block) -> int:
    return positive_int(block, "block")


def online_softmax(z, block: int) -> np.ndarray:
    """Softmax of each row, its normaliser found in one pass over blocks of the row.

    The running maximum ``m`` and running sum ``l = sum_j exp(z_j - m)`` are updated per
    block of ``block`` entries::

        m_new = max(m, max(z_block))
        l     = l * exp(m - m_new) + sum(exp(z_block - m_new))

    The factor ``exp(m - m_new)`` rescales the sum so far to the new maximum, so after the
    last block ``l`` is exactly the sum of the ordinary stable softmax. A second pass writes
    ``exp(z - m) / l``.

    Parameters
    ----------
    z : array_like, shape (..., n)
        Logits: finite numbers or -inf (masked).
    block : int
        Entries read per step (>= 1); any size, the last block may be shorter.

    Returns
    -------
    numpy.ndarray, shape (..., n)
        Equal to ``attention.softmax(z)`` up to rounding; a row that is all -inf gives
        zeros.
    """
    z = as_float_array(z, "z", min_ndim=1, allow_neg_inf=True)
    block = _block(block)
    n = z.shape[-1]
    m = np.full(z.shape[:-1], -np.inf, dtype=z.dtype)  # (...,): running max
    total = np.zeros(z.shape[:-1], dtype=z.dtype)  # (...,): running sum, relative to m
    for start in range(0, n, block):
        zb = z[..., start:start + block]  # (..., B)
        m_new = np.maximum(m, zb.max(axis=-1))  # (...,)
        shift = np.where(np.isneginf(m_new), 0.0, m_new)  # all -inf so far: shift by 0
        total = total * np.exp(m - shift) + np.exp(zb - shift[..., None]).sum(axis=-1)
        m = m_new
    shift = np.where(np.isneginf(m), 0.0, m)[..., None]  # (..., 1)
    safe = np.where(total > 0, total, 1.0)[..., None]  # (..., 1): an empty row -> 0 / 1
    return (np.exp(z - shift) / safe).astype(z.dtype)


def online_attention(q, k, v, block: int, mask=None, scale: float | None = None,
                     return_stats: bool = False):
    """Attention over blocks of keys with the online softmax: no (s_q, s_k) matrix kept.

    For each block of ``block`` keys: its scores ``S = q k_b^T * scale`` (s_q, B), the
    running maximum ``m``, and two running sums rescaled by ``c = exp(m_old - m_new)``::

        l   = c * l   + rowsum(exp(S - m_new))            (..., s_q)
        acc = c * acc + exp(S - m_new) @ v_b              (..., s_q, d_v)

    and at the end ``output = acc / l``. Each step is exact algebra, so the output equals
    ``softmax(q k^T * scale) @ v`` up to rounding, for any block size: the idea behind
    FlashAttention (which also tiles the queries, and runs it in fast on-chip memory).

    Parameters
    ----------
    q : array_like, shape (..., s_q, d_k)
    k : array_like, shape (..., s_k, d_k)
    v : array_like, shape (..., s_k, d_v)
        Leading axes broadcast, as in ``attention.scaled_dot_product_attention``.
    block : int
        Keys per step (>= 1).
    mask : array_like of bool, broadcastable to (..., s_q, s_k), optional
        True = may attend. A query that may attend to nothing gets a zero row, as in the
        book's ``scaled_dot_product_attention``.
    scale : float, optional
        Positive multiplier of the scores; default 1 / sqrt(d_k).
    return_stats : bool
        Also return the final running max and sum.

    Returns
    -------
    output : numpy.ndarray, shape (..., s_q, d_v)
        Only the output: the weights are never formed.
    m : numpy.ndarray, shape (..., s_q)
        With ``return_stats``: each row's largest score (-inf for a row that may attend
        to nothing).
    l : numpy.ndarray, shape (..., s_q)
        With ``return_stats``: ``sum_j exp(score_j - m)``; ``m + log(l)`` is the row's
        log-sum-exp, all FlashAttention keeps of the softmax for the backward pass.
    """
    q = as_float_array(q, "q", min_ndim=2)
    k = as_float_array(k, "k", min_ndim=2)
    v = as_float_array(v, "v", min_ndim=2)
    if k.shape[-1] != q.shape[-1]:
        raise ValueError(f"k has shape {k.shape} but q has d_k={q.shape[-1]}: "
                         f"the last axes of q and k must match")
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(f"v has shape {v.shape} but k has s_k={k.shape[-2]} rows: "
                         f"k and v need one row per key position")
    batch = batch_shape(q=q.shape, k=k.shape, v=v.shape)
    block = _block(block)
    if not isinstance(return_stats, (bool, np.bool_)):
        raise ValueError(f"return_stats must be True or False, got {return_stats!r}")
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    elif isinstance(scale, bool) or not (isinstance(scale, (int, float)) and math.isfinite(scale)
                                         and scale > 0):
        raise ValueError(f"scale must be a positive finite number (default 1/sqrt(d_k)), "
                         f"got {scale!r}")
    s_q, s_k, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    if mask is not None:
        mask = check_mask(mask, batch + (s_q, s_k))
    dtype = np.result_type(q, k, v)
    m = np.full(batch + (s_q,), -np.inf, dtype=dtype)  # (..., s_q): running max
    total = np.zeros(batch + (s_q,), dtype=dtype)  # (..., s_q): running sum
    acc = np.zeros(batch + (s_q, d_v), dtype=dtype)  # (..., s_q, d_v): running output
    for start in range(0, s_k, block):
        keys = slice(start, start + block)
        S = q @ np.swapaxes(k[..., keys, :], -1, -2) * scale  # (..., s_q, d_k) @ (..., d_k, B)
        if mask is not None:
            S = np.where(mask[..., keys], S, -np.inf)  # (..., s_q, B)
        m_new = np.maximum(m, S.max(axis=-1))  # (..., s_q)
        shift = np.where(np.isneginf(m_new), 0.0, m_new)  # nothing seen yet: shift by 0
        c = np.exp(m - shift)  # (..., s_q): rescales what was summed against the old max
        p = np.exp(S - shift[..., None])  # (..., s_q, B); masked keys: exp(-inf) = 0
        total = c * total + p.sum(axis=-1)
        acc = c[..., None] * acc + p @ v[..., keys, :]  # (..., s_q, B) @ (..., B, d_v)
        m = m_new
    safe = np.where(total > 0, total, 1.0)[..., None]  # (..., s_q, 1): empty rows -> 0
    output = (acc / safe).astype(dtype)
    return (output, m, total) if return_stats else output


def attention_working_floats(s_q: int, s_k: int, block: int | None = None) -> int:
    """Floats one attention head keeps besides q, k, v and the output.

    Parameters
    ----------
    s_q, s_k : int
        Query and key counts.
    block : int, optional
        None: the plain computation, which holds the (s_q, s_k) scores (the weights
        overwrite them). A block size: :func:`online_attention`, which holds one block
        of scores (s_q, min(block, s_k)) and the running max and sum (2 s_q).

    Returns
    -------
    int
        ``s_q * s_k``, or ``s_q * min(block, s_k) + 2 * s_q``.
    """
    s_q, s_k = positive_int(s_q, "s_q"), positive_int(s_k, "s_k")
    if block is None:
        return s_q * s_k
    return s_q * min(_block(block), s_k) + 2 * s_q
