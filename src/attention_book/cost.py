"""What attention costs: the (s_q, s_k) score matrix, counted and measured (numpy only).

Scaled dot-product attention forms every query-key score, so for s tokens it does
about ``2 s^2 d_k`` multiply-adds for ``Q K^T`` and ``2 s^2 d_v`` for ``weights @ V``
(time O(s^2 d)) and holds an (s, s) matrix (memory O(s^2)). Doubling the sequence length
quadruples both.

Measurements use :func:`time.perf_counter` (the best of a few runs) and
:mod:`tracemalloc`, which sees numpy's array allocations: the peak is the most memory
the call held at once beyond what existed before it.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from ._validate import positive_int
from .attention import scaled_dot_product_attention

__all__ = ["attention_flops", "score_matrix_bytes", "measure_attention"]


def attention_flops(s_q: int, s_k: int, d_k: int, d_v: int | None = None) -> int:
    """Floating-point operations of one attention call (multiply and add counted apart).

    ``2 s_q s_k d_k`` for the scores ``Q K^T`` plus ``2 s_q s_k d_v`` for
    ``weights @ V``; the softmax's O(s_q s_k) is left out (it is smaller by a factor d).

    Parameters
    ----------
    s_q, s_k : int
        Numbers of queries and keys.
    d_k : int
        Query and key dimension.
    d_v : int, optional
        Value dimension; default d_k.

    Returns
    -------
    int
    """
    s_q, s_k = positive_int(s_q, "s_q"), positive_int(s_k, "s_k")
    d_k = positive_int(d_k, "d_k")
    d_v = d_k if d_v is None else positive_int(d_v, "d_v")
    return 2 * s_q * s_k * d_k + 2 * s_q * s_k * d_v


def score_matrix_bytes(s_q: int, s_k: int, itemsize: int = 4) -> int:
    """Bytes of one (s_q, s_k) score or weight matrix: ``s_q * s_k * itemsize``.

    Parameters
    ----------
    s_q, s_k : int
    itemsize : int
        Bytes per number: 4 for float32, 8 for float64.

    Returns
    -------
    int
    """
    return (positive_int(s_q, "s_q") * positive_int(s_k, "s_k")
            * positive_int(itemsize, "itemsize"))


def measure_attention(s: int, d_k: int = 64, *, repeats: int = 3, dtype=np.float32,
                      seed: int = 0) -> dict:
    """Time and peak memory of :func:`~attention_book.attention.scaled_dot_product_attention`
    on random Q, K, V:(s, d_k).

    Parameters
    ----------
    s : int
        Sequence length (s_q = s_k = s).
    d_k : int
        Query, key and value dimension.
    repeats : int
        Runs timed; the fastest is reported (the least disturbed by other work).
    dtype : numpy dtype
        float32 (as in torch) or float64.
    seed : int
        Seed of Q, K, V.

    Returns
    -------
    dict
        ``"s"``, ``"seconds"`` (fastest run), ``"peak_bytes"`` (tracemalloc peak of one
        run, beyond the inputs), ``"score_bytes"`` (one (s, s) matrix of ``dtype``).
    """
    s = positive_int(s, "s")
    d_k = positive_int(d_k, "d_k")
    repeats = positive_int(repeats, "repeats")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((s, d_k)).astype(dtype) for _ in range(3))  # (s, d_k)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        scaled_dot_product_attention(Q, K, V)
        best = min(best, time.perf_counter() - start)
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        scaled_dot_product_attention(Q, K, V)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return {"s": s, "seconds": best, "peak_bytes": int(peak),
            "score_bytes": score_matrix_bytes(s, s, dtype.itemsize)}
