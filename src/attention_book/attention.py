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

from ._validate import as_float_array, batch_shape, check_mask, positive_int, whole_number

__all__ = [
    "softmax",
    "attention_scores",
    "attend",
    "scaled_dot_product_attention",
    "causal_mask",
    "projection_weights",
    "project_qkv",
    "attention_entropy",
    "softmax_backward",
    "dot_product_variance",
    "softmax_saturation",
    "gradient_norms",
    "scaling_curves",
    "find_query_attending_elsewhere",
    "additive_parameters",
    "additive_scores",
    "additive_attention",
    "softmax_jacobian_norm",
    "SCORE_KINDS",
    "score_saturation",
    "gaussian_kernel_weights",
    "nadaraya_watson",
]


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
    x = as_float_array(x, "x", min_ndim=0, allow_neg_inf=True)
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


def _check_qk(q, k):
    q = as_float_array(q, "q", min_ndim=2)
    k = as_float_array(k, "k", min_ndim=2)
    if k.shape[-1] != q.shape[-1]:
        raise ValueError(
            f"k has shape {k.shape} but q has d_k={q.shape[-1]}: "
            f"the last axes of q and k must match"
        )
    batch_shape(q=q.shape, k=k.shape)
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
    batch_shape(q=q.shape, k=k.shape, v=v.shape)
    return attend(attention_scores(q, k, scale), v, mask)  # scores (..., s_q, s_k)


def attend(scores, v, mask=None):
    """The step every score function shares: mask the scores, softmax each row, and take
    the weighted sum of the value rows.

    Parameters
    ----------
    scores : numpy.ndarray, shape (..., s_q, s_k)
        One score per query and key (scaled dot products, additive scores, biased ones).
    v : numpy.ndarray, shape (..., s_k, d_v)
        Values, one row per key (the caller checks s_k: its message names its inputs).
    mask : array_like of bool, shape broadcastable to (..., s_q, s_k), optional
        True = query i may attend to key j. None: no mask.

    Returns
    -------
    output : numpy.ndarray, shape (..., s_q, d_v)
    weights : numpy.ndarray, shape (..., s_q, s_k)
        Each row sums to 1, or is all 0 when the whole row is masked.
    """
    if mask is not None:
        mask = check_mask(mask, scores.shape)
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


# ------------------------------------------------------------- projections and the lab


def _seed(seed, name: str = "seed") -> int:
    return whole_number(seed, name, 0)


def projection_weights(d: int, d_k: int, d_v: int | None = None, seed: int = 0):
    """Random projection matrices W^Q, W^K:(d, d_k) and W^V:(d, d_v), as before training.

    Entries are drawn from N(0, 1/d), so that when the entries of X are N(0, 1) the
    entries of Q = X W^Q, K and V have variance 1 (each is a sum of d products of
    variance 1/d). One set of matrices serves every position of every sentence.

    Parameters
    ----------
    d : int
        The model dimension (columns of X).
    d_k : int
        The query and key dimension.
    d_v : int, optional
        The value dimension; default d_k.
    seed : int
        Seed of the numpy generator (>= 0); the same seed gives the same matrices.

    Returns
    -------
    W_q : numpy.ndarray, shape (d, d_k)
    W_k : numpy.ndarray, shape (d, d_k)
    W_v : numpy.ndarray, shape (d, d_v)
    """
    d = positive_int(d, "d")
    d_k = positive_int(d_k, "d_k")
    d_v = d_k if d_v is None else positive_int(d_v, "d_v")
    rng = np.random.default_rng(_seed(seed))
    std = 1.0 / math.sqrt(d)
    W_q = rng.normal(0.0, std, (d, d_k))  # (d, d_k)
    W_k = rng.normal(0.0, std, (d, d_k))  # (d, d_k)
    W_v = rng.normal(0.0, std, (d, d_v))  # (d, d_v)
    return W_q, W_k, W_v


def project_qkv(X, W_q, W_k, W_v, X_kv=None):
    """Queries, keys and values: Q = X W^Q, K = X_kv W^K, V = X_kv W^V.

    The same three matrices multiply every row (every position): the weights are
    shared by all tokens, which is why attention works for any sequence length.

    Parameters
    ----------
    X : array_like, shape (..., s_q, d)
        The rows the queries come from.
    W_q, W_k : array_like, shape (d, d_k)
    W_v : array_like, shape (d, d_v)
    X_kv : array_like, shape (..., s_k, d), optional
        The rows keys and values come from; None means X (self-attention). Another
        sequence gives cross-attention (s_q may differ from s_k).

    Returns
    -------
    Q : numpy.ndarray, shape (..., s_q, d_k)
    K : numpy.ndarray, shape (..., s_k, d_k)
    V : numpy.ndarray, shape (..., s_k, d_v)
    """
    X = as_float_array(X, "X", min_ndim=2)
    X_kv = X if X_kv is None else as_float_array(X_kv, "X_kv", min_ndim=2)
    W_q = as_float_array(W_q, "W_q", min_ndim=2)
    W_k = as_float_array(W_k, "W_k", min_ndim=2)
    W_v = as_float_array(W_v, "W_v", min_ndim=2)
    d = X.shape[-1]
    for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
        if W.ndim != 2 or W.shape[0] != d:
            raise ValueError(f"{name} has shape {W.shape} but X has d={d} columns: "
                             f"{name} must be (d, ...) = ({d}, ...)")
    if X_kv.shape[-1] != d:
        raise ValueError(f"X_kv has d={X_kv.shape[-1]} columns but X has d={d}: "
                         f"both sequences must be embedded in the same dimension")
    if W_k.shape[1] != W_q.shape[1]:
        raise ValueError(f"W_q gives d_k={W_q.shape[1]} but W_k gives d_k={W_k.shape[1]}: "
                         f"queries and keys must have the same dimension to be compared")
    Q = X @ W_q  # (..., s_q, d) @ (d, d_k) -> (..., s_q, d_k)
    K = X_kv @ W_k  # (..., s_k, d) @ (d, d_k) -> (..., s_k, d_k)
    V = X_kv @ W_v  # (..., s_k, d) @ (d, d_v) -> (..., s_k, d_v)
    return Q, K, V


def attention_entropy(weights, axis: int = -1) -> np.ndarray:
    """Entropy (in nats) of each row of attention weights: ``-sum_j w_j log w_j``.

    0 for a one-hot row (all attention on one key); ``log(s_k)`` for a uniform row.
    Zero weights contribute 0 (the limit of w log w).

    Parameters
    ----------
    weights : array_like, shape (..., s_q, s_k)
        Non-negative rows summing to 1 (e.g. from :func:`softmax`).
    axis : int
        The axis the rows run along (the keys; the last by default).

    Returns
    -------
    entropy : numpy.ndarray, shape (..., s_q)
    """
    w = as_float_array(weights, "weights", min_ndim=1)
    axis = _axis(axis, w.ndim)
    if (w < 0).any():
        raise ValueError("weights must be non-negative (they are probabilities)")
    sums = w.sum(axis=axis)
    if not np.allclose(sums, 1.0, atol=1e-6):
        raise ValueError(
            f"each row of weights must sum to 1 (they are softmax outputs), got sums "
            f"between {sums.min():.4g} and {sums.max():.4g}"
        )
    logs = np.log(np.where(w > 0, w, 1.0))  # log 1 = 0 where w = 0
    return -(w * logs).sum(axis=axis)


def softmax_backward(weights, grad_weights) -> np.ndarray:
    """Gradient of a loss through a row-wise softmax: from dL/dweights to dL/dscores.

    The Jacobian of p = softmax(z) is ``diag(p) - p p^T``, so
    ``dL/dz = p * (g - sum_j p_j g_j)`` with g = dL/dp. When p is nearly one-hot
    (a saturated softmax) every entry is nearly 0: the gradient vanishes.

    Parameters
    ----------
    weights : array_like, shape (..., s_k)
        Softmax outputs p (rows summing to 1).
    grad_weights : array_like, shape (..., s_k)
        The upstream gradient g = dL/dp.

    Returns
    -------
    grad_scores : numpy.ndarray, shape (..., s_k)
        dL/dz.
    """
    p = as_float_array(weights, "weights", min_ndim=1)
    g = as_float_array(grad_weights, "grad_weights", min_ndim=1)
    if p.shape != g.shape:
        raise ValueError(f"grad_weights has shape {g.shape} but weights has shape {p.shape}: "
                         f"they must match")
    inner = (p * g).sum(axis=-1, keepdims=True)  # (..., 1)
    return p * (g - inner)  # (..., s_k)


def dot_product_variance(d_k: int, n: int = 4000, seed: int = 0) -> float:
    """Measured variance of q . k for q, k in R^{d_k} with independent N(0, 1) entries.

    The dot product is a sum of d_k independent products of variance 1, so its
    variance is d_k; this measures it from ``n`` random pairs.

    Parameters
    ----------
    d_k : int
        The dimension of q and k.
    n : int
        The number of random pairs (at least 2).
    seed : int
        Seed of the numpy generator.

    Returns
    -------
    float
        The sample variance of the n dot products (close to d_k).
    """
    d_k = positive_int(d_k, "d_k")
    n = positive_int(n, "n")
    if n < 2:
        raise ValueError(f"n must be at least 2 to measure a variance, got {n}")
    rng = np.random.default_rng(_seed(seed))
    q = rng.standard_normal((n, d_k))  # (n, d_k)
    k = rng.standard_normal((n, d_k))  # (n, d_k)
    dots = np.einsum("nd,nd->n", q, k)  # (n,)
    return float(dots.var(ddof=1))


def _saturation_experiment(d_k, scaled, s_k, n, seed):
    """The samples and the softmax of the sqrt(d_k) experiment, shared by
    :func:`softmax_saturation` and :func:`gradient_norms` (so both see the same numbers):
    validates the arguments, draws q:(n, 1, d_k), K:(n, s_k, d_k) and the upstream
    gradient g:(n, s_k), all N(0, 1), and returns K, the weights w = softmax(scale K q)
    and dL/dscores = softmax_backward(w, g), each (n, s_k) but K."""
    d_k = positive_int(d_k, "d_k")
    s_k = positive_int(s_k, "s_k")
    n = positive_int(n, "n")
    if s_k < 2:
        raise ValueError(f"s_k must be at least 2 for a softmax to choose, got {s_k}")
    if not isinstance(scaled, (bool, np.bool_)):
        raise ValueError(f"scaled must be True or False, got {scaled!r}")
    rng = np.random.default_rng(_seed(seed))
    q = rng.standard_normal((n, 1, d_k))  # (n, 1, d_k): one query each
    K = rng.standard_normal((n, s_k, d_k))  # (n, s_k, d_k)
    g = rng.standard_normal((n, s_k))  # (n, s_k)
    scale = 1.0 / math.sqrt(d_k) if scaled else 1.0
    scores = attention_scores(q, K, scale)[:, 0, :]  # (n, 1, s_k) -> (n, s_k)
    w = softmax(scores)  # (n, s_k)
    return K, w, softmax_backward(w, g)  # (n, s_k, d_k), (n, s_k), (n, s_k)


def softmax_saturation(d_k: int, scaled: bool = True, *, s_k: int = 16, n: int = 500,
                       seed: int = 0) -> dict:
    """How peaked the softmax of random scores q . k_j is, with or without 1/sqrt(d_k).

    Draws n queries q:(d_k,) and for each s_k keys K:(s_k, d_k), entries N(0, 1),
    computes the weights softmax(q K^T * scale) with scale 1/sqrt(d_k) (``scaled``) or
    1, and a random upstream gradient g:(s_k,) (entries N(0, 1)) pushed back through
    the softmax with :func:`softmax_backward`.

    Parameters
    ----------
    d_k : int
        Query and key dimension.
    scaled : bool
        Divide the scores by sqrt(d_k) (True) or not.
    s_k : int
        Keys per query (at least 2).
    n : int
        Number of queries averaged over.
    seed : int
        Seed of the numpy generator.

    Returns
    -------
    dict
        ``"max_weight"``: mean over queries of the largest weight (1/s_k .. 1);
        ``"entropy"``: mean entropy in nats (0 .. log s_k);
        ``"grad_norm"``: mean Euclidean norm of dL/dscores for L = g . weights;
        ``"weights"``: numpy.ndarray (s_k,), the first query's weights sorted in
        descending order (an example row).
    """
    _, w, grad = _saturation_experiment(d_k, scaled, s_k, n, seed)  # (n, s_k) each
    return {
        "max_weight": float(w.max(axis=-1).mean()),
        "entropy": float(attention_entropy(w).mean()),
        "grad_norm": float(np.linalg.norm(grad, axis=-1).mean()),
        "weights": np.sort(w[0])[::-1].copy(),
    }


def gradient_norms(d_k: int, scaled: bool = True, *, s_k: int = 16, n: int = 500,
                   seed: int = 0) -> dict:
    """Per query, how much gradient reaches the scores and how much reaches the query.

    The same experiment and the same random numbers as :func:`softmax_saturation`: n
    queries q:(d_k,), each with s_k keys K:(s_k, d_k) and an upstream gradient
    g = dL/dweights:(s_k,), all N(0, 1). With scores z = scale * K q and weights
    p = softmax(z), the loss L = g . p has

    ``dL/dz = p * (g - p . g)`` (:func:`softmax_backward`) and
    ``dL/dq = scale * K^T dL/dz``,

    the gradient that reaches W^Q through q = x W^Q (and, for each key, the gradient
    ``scale * (dL/dz_j) q`` that reaches W^K). Unscaled (scale 1) a saturated row has
    dL/dz nearly 0, but the keys it is multiplied by are long (norm about sqrt(d_k)), so
    the few rows that are not saturated pass on large gradients: the norms of dL/dq are
    heavy-tailed (median far below the mean).

    Parameters
    ----------
    d_k : int
        Query and key dimension.
    scaled : bool
        Scale 1/sqrt(d_k) (True) or 1.
    s_k : int
        Keys per query (at least 2).
    n : int
        Number of queries.
    seed : int
        Seed of the numpy generator (the samples of :func:`softmax_saturation`).

    Returns
    -------
    dict
        ``"scores"``: numpy.ndarray (n,), the norm of dL/dz for each query (their mean
        is :func:`softmax_saturation`'s ``"grad_norm"``); ``"query"``: numpy.ndarray (n,),
        the norm of dL/dq for each query.
    """
    K, _, grad_scores = _saturation_experiment(d_k, scaled, s_k, n, seed)
    scale = 1.0 / math.sqrt(d_k) if scaled else 1.0
    grad_q = scale * np.einsum("ns,nsd->nd", grad_scores, K)  # (n, s_k) . (n, s_k, d_k) -> (n, d_k)
    return {"scores": np.linalg.norm(grad_scores, axis=-1),  # (n,)
            "query": np.linalg.norm(grad_q, axis=-1)}  # (n,)


def scaling_curves(d_ks, *, s_k: int = 16, n: int = 500, seed: int = 0) -> dict:
    """The sqrt(d_k) experiment over many d_k: :func:`softmax_saturation` and
    :func:`dot_product_variance` at each, with the scores unscaled and scaled.

    Parameters
    ----------
    d_ks : sequence of int, length m
        The key dimensions to measure, each at least 1 (e.g. 1, 2, 4, ..., 512).
    s_k : int
        Keys per query (at least 2).
    n : int
        Queries per d_k for the softmax; the variance is measured on 4 n pairs.
    seed : int
        Seed of every measurement (the same samples at every d_k and in both modes).

    Returns
    -------
    curves : dict
        ``curves[(quantity, scaled)]`` for ``scaled`` in (False, True):

        - ``"max_weight"``, ``"entropy"``, ``"grad_norm"``: numpy.ndarray (m,), the
          measurements of :func:`softmax_saturation` at each d_k;
        - ``"variance"``: numpy.ndarray (m,), the variance of q . k (about d_k), or of
          q . k / sqrt(d_k) when scaled (about 1);
        - ``"weights"``: numpy.ndarray (m, s_k), an example row of weights per d_k,
          sorted in descending order.
    """
    if isinstance(d_ks, (str, bytes)) or not hasattr(d_ks, "__len__") or len(d_ks) == 0:
        raise ValueError(f"d_ks must be a non-empty sequence of key dimensions, e.g. "
                         f"(1, 2, 4, 8), got {d_ks!r}")
    d_ks = [positive_int(d_k, "each d_k") for d_k in d_ks]
    curves: dict = {}
    for scaled in (False, True):
        stats = [softmax_saturation(d_k, scaled, s_k=s_k, n=n, seed=seed) for d_k in d_ks]
        for key in ("max_weight", "entropy", "grad_norm"):
            curves[(key, scaled)] = np.array([st[key] for st in stats])  # (m,)
        curves[("weights", scaled)] = np.stack([st["weights"] for st in stats])  # (m, s_k)
    raw = np.array([dot_product_variance(d_k, n=4 * n, seed=seed) for d_k in d_ks])  # (m,)
    curves[("variance", False)] = raw
    # scaled: var(x / c) = var(x) / c^2 with c = sqrt(d_k)
    curves[("variance", True)] = raw / np.asarray(d_ks, dtype=float)
    return curves


def find_query_attending_elsewhere(X, d_k: int, seeds=range(21), *,
                                   tie_qk: bool = False) -> dict | None:
    """The first random projection under which some query's largest weight is not on
    its own key.

    For each seed in turn, draws W^Q, W^K, W^V:(d, d_k) with :func:`projection_weights`
    (with ``tie_qk``, W^K is replaced by W^Q, so that K = Q), computes the self-attention
    weights of X and returns the first query i whose largest weight falls on a key
    j != i. Nothing in attention makes q_i . k_i the largest score of row i, not even
    W^Q = W^K: then the scores are q_i . q_j, and q_i . q_j > |q_i|^2 whenever q_j is
    long enough and points roughly the way q_i does.

    Parameters
    ----------
    X : array_like, shape (s, d)
        The inputs, one row per token (s >= 2).
    d_k : int
        Query/key (and value) dimension.
    seeds : iterable of int
        The seeds tried, in order.
    tie_qk : bool
        Use W^K = W^Q.

    Returns
    -------
    dict or None
        ``"seed"``, ``"query"`` (i), ``"key"`` (j, the argmax of row i) and
        ``"weights"``: numpy.ndarray (s, s) under that seed; None if no seed gives one.
    """
    X = as_float_array(X, "X", min_ndim=2)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError(f"X must be a matrix (s, d) with s >= 2 rows, got shape {X.shape}")
    d = X.shape[1]
    for seed in seeds:
        W_q, W_k, W_v = projection_weights(d, d_k, seed=seed)  # (d, d_k) each
        Q, K, V = project_qkv(X, W_q, W_q if tie_qk else W_k, W_v)  # (s, d_k) each
        _, weights = scaled_dot_product_attention(Q, K, V)  # (s, s)
        strongest = weights.argmax(axis=-1)  # (s,)
        others = np.flatnonzero(strongest != np.arange(len(strongest)))
        if others.size:
            i = int(others[0])
            return {"seed": int(seed), "query": i, "key": int(strongest[i]),
                    "weights": weights}
    return None


# ------------------------------------------------ additive attention (Bahdanau et al. 2015)


def additive_parameters(d_q: int, d_k: int, d_h: int, seed: int = 0):
    """Random parameters of additive attention, as before training.

    Entries N(0, 1/d_q) for W_q, N(0, 1/d_k) for W_k and N(0, 1/d_h) for w, so that
    ``q W_q + k W_k`` has entries of variance about 2 for unit-variance q and k, whatever
    the dimensions, and the score ``w . tanh(...)`` has variance below 1.

    Parameters
    ----------
    d_q, d_k : int
        Query and key dimensions (they may differ: the scores never take q . k).
    d_h : int
        Hidden width of the one-layer network that scores a pair.
    seed : int
        Seed of the numpy generator.

    Returns
    -------
    W_q : numpy.ndarray, shape (d_q, d_h)
    W_k : numpy.ndarray, shape (d_k, d_h)
    w : numpy.ndarray, shape (d_h,)
    """
    d_q, d_k, d_h = (positive_int(x, n) for x, n in ((d_q, "d_q"), (d_k, "d_k"), (d_h, "d_h")))
    rng = np.random.default_rng(_seed(seed))
    W_q = rng.standard_normal((d_q, d_h)) / math.sqrt(d_q)  # (d_q, d_h)
    W_k = rng.standard_normal((d_k, d_h)) / math.sqrt(d_k)  # (d_k, d_h)
    w = rng.standard_normal(d_h) / math.sqrt(d_h)  # (d_h,)
    return W_q, W_k, w


def additive_scores(q, k, W_q, W_k, w) -> np.ndarray:
    """Additive (Bahdanau) attention scores: ``score(q_i, k_j) = w . tanh(q_i W_q + k_j W_k)``.

    A one-layer network with hidden width d_h scores each pair, in place of the dot
    product q_i . k_j (Bahdanau et al. 2015, in row-vector form). Its tanh bounds every
    hidden unit to [-1, 1], so a score is at most ``sum |w|`` in size, however large d_k
    is: unlike q . k, it needs no 1/sqrt(d_k).

    Parameters
    ----------
    q : array_like, shape (..., s_q, d_q)
        Queries.
    k : array_like, shape (..., s_k, d_k)
        Keys; leading axes broadcast with those of q.
    W_q : array_like, shape (d_q, d_h)
    W_k : array_like, shape (d_k, d_h)
    w : array_like, shape (d_h,)

    Returns
    -------
    scores : numpy.ndarray, shape (..., s_q, s_k)
    """
    q = as_float_array(q, "q", min_ndim=2)
    k = as_float_array(k, "k", min_ndim=2)
    W_q = as_float_array(W_q, "W_q", min_ndim=2)
    W_k = as_float_array(W_k, "W_k", min_ndim=2)
    w = as_float_array(w, "w", min_ndim=1)
    if W_q.ndim != 2 or W_k.ndim != 2 or w.ndim != 1:
        raise ValueError(f"W_q and W_k must be matrices and w a vector, got shapes "
                         f"{W_q.shape}, {W_k.shape}, {w.shape}")
    if W_q.shape[0] != q.shape[-1]:
        raise ValueError(f"W_q has shape {W_q.shape} but q has d_q={q.shape[-1]}: "
                         f"W_q must be (d_q, d_h)")
    if W_k.shape[0] != k.shape[-1]:
        raise ValueError(f"W_k has shape {W_k.shape} but k has d_k={k.shape[-1]}: "
                         f"W_k must be (d_k, d_h)")
    if not W_q.shape[1] == W_k.shape[1] == w.shape[0]:
        raise ValueError(f"W_q {W_q.shape}, W_k {W_k.shape} and w {w.shape} must share "
                         f"the hidden width d_h")
    batch_shape(q=q.shape, k=k.shape)
    hq = q @ W_q  # (..., s_q, d_q) @ (d_q, d_h) -> (..., s_q, d_h)
    hk = k @ W_k  # (..., s_k, d_k) @ (d_k, d_h) -> (..., s_k, d_h)
    hidden = np.tanh(hq[..., :, None, :] + hk[..., None, :, :])  # (..., s_q, s_k, d_h)
    return hidden @ w  # (..., s_q, s_k, d_h) @ (d_h,) -> (..., s_q, s_k)


def additive_attention(q, k, v, W_q, W_k, w, mask=None):
    """Additive attention: ``softmax(additive_scores(q, k), masked) @ v``.

    The same softmax and weighted sum as :func:`scaled_dot_product_attention`, with the
    scores of :func:`additive_scores`; each output row is again a convex combination of
    the rows of v.

    Parameters
    ----------
    q : array_like, shape (..., s_q, d_q)
    k : array_like, shape (..., s_k, d_k)
    v : array_like, shape (..., s_k, d_v)
        Values; same s_k as k.
    W_q, W_k, w : array_like, shapes (d_q, d_h), (d_k, d_h), (d_h,)
    mask : array_like of bool, shape broadcastable to (..., s_q, s_k), optional
        True = may attend.

    Returns
    -------
    output : numpy.ndarray, shape (..., s_q, d_v)
    weights : numpy.ndarray, shape (..., s_q, s_k)
    """
    scores = additive_scores(q, k, W_q, W_k, w)  # (..., s_q, s_k)
    v = as_float_array(v, "v", min_ndim=2)
    if v.shape[-2] != scores.shape[-1]:
        raise ValueError(f"v has shape {v.shape} but k has s_k={scores.shape[-1]} rows: "
                         f"k and v need one row per key position")
    batch_shape(scores=scores.shape, v=v.shape)
    return attend(scores, v, mask)


def softmax_jacobian_norm(weights) -> np.ndarray:
    """Frobenius norm of the softmax's Jacobian ``J = diag(p) - p p^T`` at each row p.

    How much the weights move when the scores move: 0 for a one-hot row (a saturated
    softmax passes no gradient back), ``sqrt(n - 1) / n`` for a uniform row over n keys
    (in general ``||J||^2 = sum p^2 - 2 sum p^3 + (sum p^2)^2``).

    Parameters
    ----------
    weights : array_like, shape (..., n)
        Rows of softmax weights (non-negative, summing to 1).

    Returns
    -------
    norms : numpy.ndarray, shape (...)
    """
    p = as_float_array(weights, "weights", min_ndim=1)
    if (p < 0).any() or not np.allclose(p.sum(axis=-1), 1.0, atol=1e-6):
        raise ValueError("weights must be rows of non-negative numbers summing to 1")
    J = p[..., :, None] * np.eye(p.shape[-1]) - p[..., :, None] * p[..., None, :]  # (..., n, n)
    return np.sqrt((J ** 2).sum(axis=(-2, -1)))  # (...)


#: The score functions :func:`score_saturation` compares.
SCORE_KINDS = ("dot", "scaled dot", "additive")


def score_saturation(d_k: int, score: str, *, s_k: int = 16, n: int = 500, d_h: int = 64,
                     seed: int = 0) -> dict:
    """How peaked the softmax of random scores is for one score function, at one d_k.

    Draws n queries q:(1, d_k) and for each s_k keys K:(s_k, d_k), entries N(0, 1) (the
    first two draws of :func:`softmax_saturation`'s generator, so "dot" and "scaled dot"
    see its samples), scores them with q . k ("dot"), q . k / sqrt(d_k) ("scaled dot")
    or :func:`additive_scores` with :func:`additive_parameters` (d_h hidden units, seed
    ``seed``), and measures the softmax of each row.

    Parameters
    ----------
    d_k : int
        Query and key dimension.
    score : {"dot", "scaled dot", "additive"}
    s_k : int
        Keys per query (at least 2).
    n : int
        Number of queries.
    d_h : int
        Hidden width of the additive score.
    seed : int
        Seed of the numpy generators.

    Returns
    -------
    dict
        ``"score_std"``: standard deviation of all n * s_k scores;
        ``"max_weight"``: mean over queries of the largest weight (1/s_k .. 1);
        ``"jacobian_norm"``: mean :func:`softmax_jacobian_norm` (0 when saturated);
        ``"max_weights"``: numpy.ndarray (n,), each query's largest weight.
    """
    if score not in SCORE_KINDS:
        raise ValueError(f"score must be one of {SCORE_KINDS}, got {score!r}")
    d_k, s_k, n = positive_int(d_k, "d_k"), positive_int(s_k, "s_k"), positive_int(n, "n")
    if s_k < 2:
        raise ValueError(f"s_k must be at least 2 for a softmax to choose, got {s_k}")
    rng = np.random.default_rng(_seed(seed))
    q = rng.standard_normal((n, 1, d_k))  # (n, 1, d_k)
    K = rng.standard_normal((n, s_k, d_k))  # (n, s_k, d_k)
    if score == "additive":
        scores = additive_scores(q, K, *additive_parameters(d_k, d_k, d_h, seed))  # (n, 1, s_k)
    else:
        scores = attention_scores(q, K, 1 / math.sqrt(d_k) if score == "scaled dot" else 1.0)
    w = softmax(scores[:, 0, :])  # (n, 1, s_k) -> (n, s_k)
    return {"score_std": float(scores.std()),
            "max_weight": float(w.max(axis=-1).mean()),
            "jacobian_norm": float(softmax_jacobian_norm(w).mean()),
            "max_weights": w.max(axis=-1)}


# ------------------------------------------------ attention as kernel regression


def _points(x, name: str) -> np.ndarray:
    x = as_float_array(x, name, min_ndim=1)
    if x.ndim == 1:
        x = x[:, None]  # (s,) -> (s, 1): one number a point
    if x.ndim != 2:
        raise ValueError(f"{name} must have shape (s,) or (s, d), got {x.shape}")
    return x


def _bandwidth(bandwidth) -> float:
    if (isinstance(bandwidth, bool) or not isinstance(bandwidth, numbers.Real)
            or not math.isfinite(bandwidth) or bandwidth <= 0):
        raise ValueError(f"bandwidth must be a positive finite number, got {bandwidth!r}")
    return float(bandwidth)


def gaussian_kernel_weights(queries, keys, bandwidth: float = 1.0) -> np.ndarray:
    """Nadaraya-Watson weights of a Gaussian kernel: row i is
    ``softmax_j(-|x_i - x_j|^2 / (2 sigma^2))``.

    The Gaussian kernel ``K(u) = exp(-|u|^2 / (2 sigma^2))``, normalised over the keys
    (the training inputs), is a softmax of the negative squared distances. Expanding
    ``-|q - k_j|^2 / 2 = q . k_j - |q|^2 / 2 - |k_j|^2 / 2``: the |q|^2 term is the same
    for every key of a row and cancels in the softmax, so these are the weights of
    dot-product attention with scale 1/sigma^2 plus a bias ``-|k_j|^2 / (2 sigma^2)``
    for each key, and exactly its weights when every key has the same length.

    Parameters
    ----------
    queries : array_like, shape (s_q,) or (s_q, d)
        Where to predict.
    keys : array_like, shape (s_k,) or (s_k, d)
        The training inputs x_j.
    bandwidth : float
        sigma > 0: the kernel's width.

    Returns
    -------
    weights : numpy.ndarray, shape (s_q, s_k)
        Non-negative; each row sums to 1.
    """
    x_q, x_k = _points(queries, "queries"), _points(keys, "keys")  # (s_q, d), (s_k, d)
    if x_q.shape[1] != x_k.shape[1]:
        raise ValueError(f"queries have d={x_q.shape[1]} but keys d={x_k.shape[1]}: "
                         f"points must have the same dimension")
    sigma = _bandwidth(bandwidth)
    diff = x_q[:, None, :] - x_k[None, :, :]  # (s_q, 1, d) - (1, s_k, d) -> (s_q, s_k, d)
    return softmax(-(diff ** 2).sum(axis=-1) / (2 * sigma ** 2))  # (s_q, s_k)


def nadaraya_watson(queries, keys, values, bandwidth: float = 1.0):
    """Nadaraya-Watson kernel regression: ``f(x) = sum_j alpha(x, x_j) y_j`` with
    Gaussian-kernel weights (:func:`gaussian_kernel_weights`).

    Attention pooling before attention had a name: each prediction is a weighted average
    of the training targets, weighted by how close x is to each training input.

    Parameters
    ----------
    queries : array_like, shape (s_q,) or (s_q, d)
    keys : array_like, shape (s_k,) or (s_k, d)
        Training inputs.
    values : array_like, shape (s_k,) or (s_k, d_v)
        Training targets y_j, one a key.
    bandwidth : float
        sigma > 0.

    Returns
    -------
    predictions : numpy.ndarray, shape (s_q,) or (s_q, d_v)
        As values is 1-d or 2-d.
    weights : numpy.ndarray, shape (s_q, s_k)
    """
    weights = gaussian_kernel_weights(queries, keys, bandwidth)  # (s_q, s_k)
    y = as_float_array(values, "values", min_ndim=1)
    if y.ndim > 2 or y.shape[0] != weights.shape[1]:
        raise ValueError(f"values has shape {y.shape} but there are {weights.shape[1]} keys: "
                         f"values must be (s_k,) or (s_k, d_v)")
    return weights @ y, weights  # (s_q, s_k) @ (s_k[, d_v]) -> (s_q[, d_v])
