"""Multi-head attention from scratch, in numpy, with the one-big-matmul trick.

Row-vector notation: X:(..., s, d); h heads of width d_k = d_v = d / h::

    Q = X_q @ W_q + b_q          (..., s_q, d)  -> split -> (..., h, s_q, d_k)
    K = X_kv @ W_k + b_k         (..., s_k, d)  -> split -> (..., h, s_k, d_k)
    V = X_kv @ W_v + b_v         (..., s_k, d)  -> split -> (..., h, s_k, d_k)
    head_i = attention(Q_i, K_i, V_i)                       (..., h, s_q, d_k)
    output = concat(head_0, ..., head_{h-1}) @ W_o + b_o    (..., s_q, d)

Columns ``i*d_k:(i+1)*d_k`` of W_q are head i's own W_i^Q (likewise W_k, W_v), so one
(d, d) matmul computes all h heads' projections at once.

:func:`head_circuits` reads each head as two (d, d) matrices of rank <= d_k, W_QK and W_OV
(``heads.ov_circuit`` carries W_OV on through the embedding and unembedding);
:func:`grouped_query_attention` lets groups of query heads share key/value heads (MQA, GQA);
:class:`GroupedQueryAttention` is that attention as Llama computes it (chapter 10): its own
projections, rotary positions, a causal mask and a key/value cache.

This module imports numpy only.
"""

from __future__ import annotations

import math

import numpy as np

from ._validate import as_float_array, batch_shape, check_mask, positive_int, whole_number
from .attention import scaled_dot_product_attention
from .positional import rotary_embedding

__all__ = [
    "split_heads",
    "merge_heads",
    "MultiHeadAttention",
    "divisors",
    "mha_parameter_count",
    "shape_trace",
    "head_correlations",
    "head_circuits",
    "grouped_query_attention",
    "kv_width",
    "kv_groups",
    "GroupedQueryAttention",
]


def _divides(h, d: int) -> int:
    h = positive_int(h, "h")
    if d % h:
        raise ValueError(
            f"h={h} does not divide d={d}: each head gets d_k = d/h columns, "
            f"so h must be a divisor of d"
        )
    return h


def divisors(d: int) -> tuple[int, ...]:
    """The head counts h a model of width d allows: the divisors of d, in increasing order.

    Parameters
    ----------
    d : int
        Model width, at least 1.

    Returns
    -------
    tuple of int
        Every h with ``d % h == 0`` (so d_k = d / h is a whole number), e.g. (1, 2, 4, 8)
        for d = 8.
    """
    d = positive_int(d, "d")
    return tuple(h for h in range(1, d + 1) if d % h == 0)


def mha_parameter_count(d: int, bias: bool = True) -> int:
    """Learned numbers of multi-head attention: 4 d^2 weights (+ 4 d biases).

    W^Q, W^K, W^V:(d, d) are the h heads' (d, d_k) blocks side by side, and
    W^O:(h d_v, d) = (d, d), so the count does not depend on h.

    Parameters
    ----------
    d : int
        Model width.
    bias : bool
        Count the biases b_q, b_k, b_v, b_o:(d,) too.

    Returns
    -------
    int
        ``4 d**2 + 4 d`` with biases, ``4 d**2`` without.
    """
    d = positive_int(d, "d")
    return 4 * d * d + (4 * d if bias else 0)


def shape_trace(b: int, s: int, d: int, h: int) -> list[tuple[str, tuple[int, ...]]]:
    """Every tensor's shape on the way through multi-head self-attention.

    Parameters
    ----------
    b, s, d, h : int
        Batch size, sequence length (0 for an empty sequence: the axes of length s read 0),
        model width and number of heads (h must divide d).

    Returns
    -------
    list of (str, tuple of int)
        ``(description, shape)`` pairs in computation order, from X:(b, s, d) through the
        split (b, s, h, d_k) -> (b, h, s, d_k), the per-head scores (b, h, s, s), the merge
        back to (b, s, h d_v) and W^O:(h d_v, d) to the output (b, s, d).

    Raises
    ------
    ValueError
        "h=3 does not divide d=8: ..." when d / h is not a whole number.
    """
    b, s, d = positive_int(b, "b"), whole_number(s, "s", 0), positive_int(d, "d")
    h = _divides(h, d)
    d_k = d // h
    return [
        ("X", (b, s, d)),
        ("W^Q, W^K, W^V (h blocks W_i of (d, d_k) side by side)", (d, d)),
        ("Q = X W^Q  (likewise K, V)", (b, s, d)),
        ("reshape: cut the last axis into h heads", (b, s, h, d_k)),
        ("swap axes: heads before positions", (b, h, s, d_k)),
        ("scores = Q_i K_i^T / sqrt(d_k), every head", (b, h, s, s)),
        ("weights = softmax(scores), rows sum to 1", (b, h, s, s)),
        ("heads H_i = weights_i V_i", (b, h, s, d_k)),
        ("swap axes back", (b, s, h, d_k)),
        ("reshape: concat(H_0, ..., H_{h-1})", (b, s, h * d_k)),
        ("W^O", (h * d_k, d)),
        ("output = concat(...) W^O + b_o", (b, s, d)),
    ]


def split_heads(x, h: int) -> np.ndarray:
    """Cut the last axis into h heads and move the head axis before the sequence axis.

    Parameters
    ----------
    x : array_like, shape (..., s, d)
        E.g. Q = X @ W_q; d must be divisible by h.
    h : int
        Number of heads.

    Returns
    -------
    heads : numpy.ndarray, shape (..., h, s, d_k)
        ``heads[..., i, :, :] = x[..., :, i*d_k:(i+1)*d_k]`` with d_k = d / h.
    """
    x = as_float_array(x, "x", min_ndim=2)
    *batch, s, d = x.shape
    h = _divides(h, d)
    x = x.reshape(*batch, s, h, d // h)  # (..., s, d) -> (..., s, h, d_k)
    return np.swapaxes(x, -2, -3)  # (..., s, h, d_k) -> (..., h, s, d_k)


def merge_heads(x) -> np.ndarray:
    """Concatenate the heads side by side: the inverse of :func:`split_heads`.

    Parameters
    ----------
    x : array_like, shape (..., h, s, d_k)
        One (s, d_k) block per head.

    Returns
    -------
    merged : numpy.ndarray, shape (..., s, h*d_k)
        ``[head_0 | head_1 | ... | head_{h-1}]`` along the last axis.
    """
    x = as_float_array(x, "x", min_ndim=3)
    *batch, h, s, d_k = x.shape
    x = np.swapaxes(x, -2, -3)  # (..., h, s, d_k) -> (..., s, h, d_k)
    return x.reshape(*batch, s, h * d_k)  # (..., s, h, d_k) -> (..., s, h*d_k)


def head_correlations(weights) -> np.ndarray:
    """How alike the heads' attention patterns are: Pearson correlations between heads.

    Each head's weights are flattened into one vector (its s_q * s_k entries, over the
    whole batch if there is one), and entry (i, j) is the correlation of head i's vector
    with head j's: 1 for identical patterns (as when heads share their matrices), about
    0 for unrelated ones.

    Parameters
    ----------
    weights : array_like, shape (h, s_q, s_k) or (b, h, s_q, s_k)
        Attention weights, one map per head (as :meth:`MultiHeadAttention.heads` returns).

    Returns
    -------
    numpy.ndarray, shape (h, h)
        Symmetric, ones on the diagonal, entries in [-1, 1].

    Raises
    ------
    ValueError
        If there are fewer than 3 axes, or a head's weights are all equal (a constant
        pattern, such as every map for s_k = 1, has no correlation).
    """
    w = as_float_array(weights, "weights", min_ndim=3)
    if w.ndim > 4:
        raise ValueError(f"weights must be (h, s_q, s_k) or (b, h, s_q, s_k), got shape {w.shape}")
    if w.ndim == 4:
        w = w.swapaxes(0, 1)  # (b, h, s_q, s_k) -> (h, b, s_q, s_k)
    flat = w.reshape(w.shape[0], -1)  # (h, ...) -> (h, n): one row per head
    centred = flat - flat.mean(axis=1, keepdims=True)  # (h, n)
    norms = np.linalg.norm(centred, axis=1)  # (h,)
    flat_heads = [i for i, n in enumerate(norms) if n <= 1e-12 * max(1.0, np.abs(flat[i]).max())]
    if flat_heads:
        raise ValueError(f"head {flat_heads[0]}'s weights are all equal: a constant pattern has "
                         f"no correlation with another")
    unit = centred / norms[:, None]  # (h, n)
    return np.clip(unit @ unit.T, -1.0, 1.0)  # (h, n) @ (n, h) -> (h, h)


def _weight(w, name: str, d: int | None) -> np.ndarray:
    w = as_float_array(w, name, min_ndim=2)
    if w.ndim != 2 or w.shape[0] != w.shape[1] or (d is not None and w.shape[0] != d):
        want = "(d, d)" if d is None else f"(d, d) = ({d}, {d})"
        raise ValueError(f"{name} must have shape {want}, got shape {w.shape}")
    return w.copy()


def _bias(b, name: str, d: int) -> np.ndarray | None:
    if b is None:
        return None
    b = as_float_array(b, name, min_ndim=1)
    if b.shape != (d,):
        raise ValueError(f"{name} must have shape (d,) = ({d},) or be None, got {b.shape}")
    return b.copy()


def _cols(b, cols: slice):
    """Head i's slice of a bias (d,) -> (d_k,), or None."""
    return None if b is None else b[cols]


class MultiHeadAttention:
    """Multi-head attention with weights W_q, W_k, W_v, W_o:(d, d), row-vector form.

    Parameters
    ----------
    W_q, W_k, W_v : array_like, shape (d, d)
        Input projections, ``Q = X @ W_q``. Columns ``i*d_k:(i+1)*d_k`` belong to head i.
    W_o : array_like, shape (d, d)
        Output projection applied to the concatenated heads (h*d_v = d rows).
    h : int
        Number of heads; must divide d.
    b_q, b_k, b_v, b_o : array_like, shape (d,), optional
        Biases; None means no bias.

    Attributes
    ----------
    W_q, W_k, W_v, W_o : numpy.ndarray, shape (d, d)
    b_q, b_k, b_v, b_o : numpy.ndarray of shape (d,), or None
    d, h, d_k : int
        Model width, number of heads, and per-head width d_k = d_v = d / h.
    n_parameters : int
        4 d^2 weights plus d per bias present (4 d^2 + 4 d with all biases).
    """

    def __init__(self, W_q, W_k, W_v, W_o, h, b_q=None, b_k=None, b_v=None, b_o=None):
        self.W_q = _weight(W_q, "W_q", None)
        d = self.W_q.shape[0]
        self.W_k = _weight(W_k, "W_k", d)
        self.W_v = _weight(W_v, "W_v", d)
        self.W_o = _weight(W_o, "W_o", d)
        self._h = _divides(h, d)
        self.b_q, self.b_k = _bias(b_q, "b_q", d), _bias(b_k, "b_k", d)
        self.b_v, self.b_o = _bias(b_v, "b_v", d), _bias(b_o, "b_o", d)

    @classmethod
    def from_seed(cls, d: int, h: int, seed: int = 0, bias: bool = False, dtype=np.float64):
        """Random weights from a seeded numpy Generator (deterministic).

        Weights are drawn from N(0, 1/d) (Xavier normal for a (d, d) matrix, whose
        variance is 2 / (fan_in + fan_out) = 1/d), so Q, K, V keep the scale of X.

        Parameters
        ----------
        d : int
            Model width.
        h : int
            Number of heads; must divide d.
        seed : int
            Seed of ``numpy.random.default_rng``.
        bias : bool
            Also draw biases b_q, b_k, b_v, b_o:(d,) (same distribution).
        dtype : {numpy.float64, numpy.float32}
            dtype of the parameters.

        Returns
        -------
        MultiHeadAttention
        """
        d = positive_int(d, "d")
        h = _divides(h, d)
        rng = np.random.default_rng(seed)
        std = 1.0 / math.sqrt(d)
        ws = [rng.normal(0.0, std, size=(d, d)).astype(dtype) for _ in range(4)]
        bs = [rng.normal(0.0, std, size=d).astype(dtype) if bias else None for _ in range(4)]
        return cls(*ws, h, *bs)

    @property
    def d(self) -> int:
        """Model width d."""
        return self.W_q.shape[0]

    @property
    def h(self) -> int:
        """Number of heads h."""
        return self._h

    @property
    def d_k(self) -> int:
        """Per-head width d_k = d_v = d / h."""
        return self.d // self._h

    @property
    def n_parameters(self) -> int:
        """Number of learned numbers: 4 d^2, plus d for each bias present."""
        biases = (self.b_q, self.b_k, self.b_v, self.b_o)
        return 4 * self.d**2 + self.d * sum(b is not None for b in biases)

    def __repr__(self) -> str:
        bias = self.b_q is not None
        return f"MultiHeadAttention(d={self.d}, h={self.h}, d_k={self.d_k}, bias={bias})"

    def _inputs(self, x_q, x_kv):
        x_q = as_float_array(x_q, "x_q", min_ndim=2)
        x_kv = x_q if x_kv is None else as_float_array(x_kv, "x_kv", min_ndim=2)
        for name, x in (("x_q", x_q), ("x_kv", x_kv)):
            if x.shape[-1] != self.d:
                raise ValueError(
                    f"{name} has shape {x.shape} but the module has d={self.d}: "
                    f"{name} must have shape (..., s, {self.d})"
                )
        batch = batch_shape(x_q=x_q.shape, x_kv=x_kv.shape)
        return x_q, x_kv, batch

    def _project(self, x, w, b) -> np.ndarray:
        # (..., s, d) @ (d, n) -> (..., s, n); computed in x's dtype
        y = x @ w.astype(x.dtype, copy=False)
        return y if b is None else y + b.astype(x.dtype, copy=False)

    def _mask(self, mask, batch, s_q, s_k):
        """Check a (..., s_q, s_k) mask; return it ready to broadcast over heads."""
        if mask is None:
            return None
        mask = check_mask(mask, (*batch, s_q, s_k))
        # (..., s_q, s_k) -> (..., 1, s_q, s_k): the same mask for every head
        return mask[..., None, :, :] if mask.ndim >= 3 else mask

    def heads(self, x_q, x_kv=None, mask=None):
        """Every head's attention output before concatenation and W_o.

        Parameters
        ----------
        x_q : array_like, shape (..., s_q, d)
            Sequence the queries come from.
        x_kv : array_like, shape (..., s_k, d), optional
            Sequence the keys and values come from; None means x_q (self-attention).
        mask : array_like of bool, broadcastable to (..., s_q, s_k), optional
            True = may attend; the same mask is used by every head.

        Returns
        -------
        heads : numpy.ndarray, shape (..., h, s_q, d_k)
            ``heads[..., i, :, :]`` is head_i = attention(Q_i, K_i, V_i).
        weights : numpy.ndarray, shape (..., h, s_q, s_k)
            Each head's attention weights.
        """
        x_q, x_kv, batch = self._inputs(x_q, x_kv)
        mask = self._mask(mask, batch, x_q.shape[-2], x_kv.shape[-2])
        q = split_heads(self._project(x_q, self.W_q, self.b_q), self.h)  # (..., h, s_q, d_k)
        k = split_heads(self._project(x_kv, self.W_k, self.b_k), self.h)  # (..., h, s_k, d_k)
        v = split_heads(self._project(x_kv, self.W_v, self.b_v), self.h)  # (..., h, s_k, d_k)
        return scaled_dot_product_attention(q, k, v, mask=mask)

    def __call__(self, x_q, x_kv=None, mask=None):
        """Multi-head attention, all heads at once (one big matmul per projection).

        Parameters
        ----------
        x_q : array_like, shape (..., s_q, d)
            Sequence the queries come from.
        x_kv : array_like, shape (..., s_k, d), optional
            Sequence the keys and values come from; None means x_q (self-attention).
        mask : array_like of bool, broadcastable to (..., s_q, s_k), optional
            True = may attend (PyTorch SDPA convention), broadcast over the heads.

        Returns
        -------
        output : numpy.ndarray, shape (..., s_q, d)
            ``concat(head_0, ..., head_{h-1}) @ W_o + b_o``.
        weights : numpy.ndarray, shape (..., h, s_q, s_k)
            Each head's attention weights.
        """
        heads, weights = self.heads(x_q, x_kv, mask)  # (..., h, s_q, d_k)
        merged = merge_heads(heads)  # (..., h, s_q, d_k) -> (..., s_q, d)
        return self._project(merged, self.W_o, self.b_o), weights

    def head_contributions(self, x_q, x_kv=None, mask=None):
        """What each head writes into the output: ``H_i @ W^O_i``, one (s_q, d) per head.

        W^O:(h d_v, d) is h blocks of d_v = d_k rows stacked; block i, ``W^O_i =
        W_o[i*d_k:(i+1)*d_k]``:(d_k, d), only ever multiplies head i's columns of the
        concatenation. So ``concat(H_0, ..., H_{h-1}) @ W_o`` equals
        ``sum_i H_i @ W^O_i``, and the output is the sum of these contributions plus b_o.

        Parameters
        ----------
        x_q : array_like, shape (..., s_q, d)
        x_kv : array_like, shape (..., s_k, d), optional
            None means x_q (self-attention).
        mask : array_like of bool, broadcastable to (..., s_q, s_k), optional
            True = may attend.

        Returns
        -------
        contributions : numpy.ndarray, shape (..., h, s_q, d)
            ``contributions[..., i, :, :] = H_i @ W^O_i``;
            ``contributions.sum(axis=-3) + b_o`` is the module's output.
        weights : numpy.ndarray, shape (..., h, s_q, s_k)
            Each head's attention weights.
        """
        heads, weights = self.heads(x_q, x_kv, mask)  # (..., h, s_q, d_k)
        # (h d_v, d) -> (h, d_k, d): block i is W^O_i
        w_o = self.W_o.astype(heads.dtype, copy=False).reshape(self.h, self.d_k, self.d)
        # (..., h, s_q, d_k) @ (h, d_k, d) -> (..., h, s_q, d)
        return heads @ w_o, weights

    def per_head_loop(self, x_q, x_kv=None, mask=None):
        """The same as calling the module, but with an explicit Python loop over heads.

        Head i uses its own slices ``W_q[:, i*d_k:(i+1)*d_k]`` (and of W_k, W_v, the
        biases), attends, and the h results are concatenated before W_o. It exists to
        show that the one-big-matmul version computes exactly this.

        Parameters
        ----------
        x_q : array_like, shape (..., s_q, d)
        x_kv : array_like, shape (..., s_k, d), optional
            None means x_q (self-attention).
        mask : array_like of bool, broadcastable to (..., s_q, s_k), optional
            True = may attend.

        Returns
        -------
        output : numpy.ndarray, shape (..., s_q, d)
        weights : numpy.ndarray, shape (..., h, s_q, s_k)
        """
        x_q, x_kv, batch = self._inputs(x_q, x_kv)
        if mask is not None:
            mask = check_mask(mask, (*batch, x_q.shape[-2], x_kv.shape[-2]))
        outs, weights = [], []
        for i in range(self.h):
            cols = slice(i * self.d_k, (i + 1) * self.d_k)
            q = self._project(x_q, self.W_q[:, cols], _cols(self.b_q, cols))  # (..., s_q, d_k)
            k = self._project(x_kv, self.W_k[:, cols], _cols(self.b_k, cols))  # (..., s_k, d_k)
            v = self._project(x_kv, self.W_v[:, cols], _cols(self.b_v, cols))  # (..., s_k, d_k)
            out, w = scaled_dot_product_attention(q, k, v, mask=mask)
            outs.append(out)  # (..., s_q, d_k)
            weights.append(w)  # (..., s_q, s_k)
        merged = np.concatenate(outs, axis=-1)  # h x (..., s_q, d_k) -> (..., s_q, d)
        # h x (..., s_q, s_k) -> (..., h, s_q, s_k)
        return self._project(merged, self.W_o, self.b_o), np.stack(weights, axis=-3)

    def circuits(self):
        """Each head's QK and OV circuits, ``head_circuits(W_q, W_k, W_v, W_o, h)``.

        Returns
        -------
        W_QK : numpy.ndarray, shape (h, d, d)
        W_OV : numpy.ndarray, shape (h, d, d)
        """
        return head_circuits(self.W_q, self.W_k, self.W_v, self.W_o, self.h)


def head_circuits(W_q, W_k, W_v, W_o, h: int):
    """The QK and OV circuits of every head (Elhage et al. 2021): two (d, d) matrices each.

    Head i's scores are ``(X W_i^Q)(X W_i^K)^T = X (W_i^Q W_i^K^T) X^T``, so one (d, d)
    matrix ``W_QK^i = W_i^Q W_i^K^T`` says which pairs of tokens attract; its write into
    the output is ``A^i X W_i^V W^O_i``, so ``W_OV^i = W_i^V W^O_i`` says what a token,
    once attended to, adds. Without biases::

        scores_i = X @ W_QK[i] @ X.T / sqrt(d_k)              (s, s)
        output   = sum_i A^i @ X @ W_OV[i]                     (s, d)

    Each is a product through d_k dimensions, so its rank is at most d_k = d / h.

    Parameters
    ----------
    W_q, W_k, W_v, W_o : array_like, shape (d, d)
        Row-vector weights; columns ``i*d_k:(i+1)*d_k`` of W_q, W_k, W_v and rows
        ``i*d_k:(i+1)*d_k`` of W_o belong to head i.
    h : int
        Number of heads, dividing d.

    Returns
    -------
    W_QK : numpy.ndarray, shape (h, d, d)
        ``W_QK[i] = W_i^Q @ W_i^K.T``, rank <= d_k.
    W_OV : numpy.ndarray, shape (h, d, d)
        ``W_OV[i] = W_i^V @ W^O_i``, rank <= d_k.
    """
    W_q = _weight(W_q, "W_q", None)
    d = W_q.shape[0]
    W_k, W_v, W_o = (_weight(w, n, d) for w, n in ((W_k, "W_k"), (W_v, "W_v"), (W_o, "W_o")))
    h = _divides(h, d)
    d_k = d // h
    q = W_q.reshape(d, h, d_k).transpose(1, 0, 2)  # (d, d) -> (d, h, d_k) -> (h, d, d_k)
    k = W_k.reshape(d, h, d_k).transpose(1, 0, 2)  # (h, d, d_k)
    v = W_v.reshape(d, h, d_k).transpose(1, 0, 2)  # (h, d, d_k)
    o = W_o.reshape(h, d_k, d)  # (h d_v, d) -> (h, d_v, d): block i is W^O_i
    # (h, d, d_k) @ (h, d_k, d) -> (h, d, d)
    return q @ k.transpose(0, 2, 1), v @ o


def kv_width(d: int, h: int, kv_heads: int) -> int:
    """Numbers a token's key (or value) takes in one layer when kv_heads key/value heads
    serve h query heads: ``kv_heads * d / h``.

    kv_heads = h is multi-head attention (width d), kv_heads = 1 multi-query attention
    (width d_k), anything between grouped-query attention. The key/value cache shrinks by
    the factor h / kv_heads.

    Parameters
    ----------
    d : int
        Model width.
    h : int
        Query heads, dividing d.
    kv_heads : int
        Key/value heads, dividing h.

    Returns
    -------
    int
    """
    d = positive_int(d, "d")
    h = _divides(h, d)
    kv_heads = positive_int(kv_heads, "kv_heads")
    if h % kv_heads:
        raise ValueError(f"kv_heads={kv_heads} does not divide h={h}: each key/value head "
                         f"serves a group of h / kv_heads query heads")
    return kv_heads * (d // h)


def grouped_query_attention(q, k, v, mask=None, scale: float | None = None):
    """Attention where groups of query heads share one key/value head (MQA, GQA).

    Query head i reads key/value head ``i // (h / g)``: with g = 1 every head shares one
    (multi-query attention, Shazeer 2019), with g = h it is ordinary multi-head attention,
    in between grouped-query attention (Ainslie et al. 2023). The same as PyTorch's
    ``scaled_dot_product_attention(..., enable_gqa=True)``, which repeats each key/value
    head h / g times (``repeat_interleave``).

    Parameters
    ----------
    q : array_like, shape (..., h, s_q, d_k)
        Queries, split into h heads.
    k : array_like, shape (..., g, s_k, d_k)
        Keys of the g key/value heads; g must divide h.
    v : array_like, shape (..., g, s_k, d_v)
    mask : array_like of bool, broadcastable to (..., h, s_q, s_k), optional
        True = may attend.
    scale : float, optional
        Default 1 / sqrt(d_k).

    Returns
    -------
    output : numpy.ndarray, shape (..., h, s_q, d_v)
    weights : numpy.ndarray, shape (..., h, s_q, s_k)
    """
    q = as_float_array(q, "q", min_ndim=3)
    k = as_float_array(k, "k", min_ndim=3)
    v = as_float_array(v, "v", min_ndim=3)
    h, g = q.shape[-3], k.shape[-3]
    if v.shape[-3] != g:
        raise ValueError(f"k has {g} heads (shape {k.shape}) but v has {v.shape[-3]} "
                         f"(shape {v.shape}): keys and values come in pairs")
    if h % g:
        raise ValueError(f"q has h={h} heads and k, v have g={g}: g must divide h, so that "
                         f"each key/value head serves h / g query heads")
    k = np.repeat(k, h // g, axis=-3)  # (..., g, s_k, d_k) -> (..., h, s_k, d_k): 0,0,1,1,...
    v = np.repeat(v, h // g, axis=-3)  # (..., h, s_k, d_v)
    return scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)


def kv_groups(h: int, g: int) -> np.ndarray:
    """Which key/value head each query head reads when g key/value heads serve h query heads.

    Query heads are grouped in order: the first h / g read key/value head 0, the next h / g
    head 1, and so on (``repeat_interleave``, as :func:`grouped_query_attention`, PyTorch's
    ``enable_gqa`` and Llama's ``repeat_kv`` do).

    Parameters
    ----------
    h : int
        Query heads.
    g : int
        Key/value heads, dividing h.

    Returns
    -------
    numpy.ndarray of int64, shape (h,)
        ``groups[i] = i // (h / g)``; e.g. (0, 0, 0, 1, 1, 1, 2, 2, 2) for h = 9, g = 3.
    """
    h, g = positive_int(h, "h"), positive_int(g, "g")
    if h % g:
        raise ValueError(f"g={g} does not divide h={h}: each key/value head serves a group of "
                         f"h / g query heads")
    return np.arange(h, dtype=np.int64) // (h // g)


def _head_switch(heads_off, h: int) -> np.ndarray | None:
    """``heads_off`` as a (h,) boolean array (True = switched off), or None for none."""
    if heads_off is None:
        return None
    off = np.asarray(heads_off)
    if off.dtype == bool:
        if off.shape != (h,):
            raise ValueError(f"heads_off must be h={h} flags (True = off), got shape {off.shape}")
        return off if off.any() else None
    flags = np.zeros(h, dtype=bool)
    for i in off.ravel().tolist():
        flags[whole_number(i, "each head switched off", 0, h - 1)] = True
    return flags if flags.any() else None


class GroupedQueryAttention:
    """Causal self-attention as Llama computes it: h query heads over g key/value heads,
    rotary positions on the queries and keys, no biases, and a key/value cache.

    Row-vector form, for the s new tokens x:(..., s, d) after t cached ones::

        Q = RoPE(x @ W_q)   split into h heads      (..., h, s, d_k)
        K = RoPE(x @ W_k)   split into g heads      (..., g, s, d_k)   appended to the cache
        V = x @ W_v         split into g heads      (..., g, s, d_k)   appended to the cache
        head_i = attention(Q_i, K_{kv(i)}, V_{kv(i)}), causal   (..., h, s, d_k)
        output = concat(head_0, ..., head_{h-1}) @ W_o          (..., s, d)

    with ``kv(i) = i // (h / g)`` (:func:`kv_groups`) and RoPE at the positions t..t+s-1
    (``positional.rotary_embedding``). With g = h it is multi-head attention with RoPE; the
    attention itself is :func:`grouped_query_attention`.

    Parameters
    ----------
    W_q : array_like, shape (d, h d_k)
    W_k, W_v : array_like, shape (d, g d_k)
    W_o : array_like, shape (h d_k, d)
    h, g : int
        Query heads, and key/value heads (dividing h).
    rope_base : float or None
        RoPE's base (Llama's ``rope_theta``); None: no rotation.
    rope_pairs : {"adjacent", "halves"}
        Which columns of a head RoPE turns together: (2i, 2i+1) as GGUF files store
        W_q and W_k, or (i, i + d_k/2) as Hugging Face's Llama does.
    """

    def __init__(self, W_q, W_k, W_v, W_o, h: int, g: int, *, rope_base: float | None = None,
                 rope_pairs: str = "adjacent"):
        self.W_q = as_float_array(W_q, "W_q", min_ndim=2)
        d = self.W_q.shape[0]
        self._h = positive_int(h, "h")
        self._g = int(kv_groups(self._h, g)[-1]) + 1
        if self.W_q.ndim != 2 or self.W_q.shape[1] % self._h:
            raise ValueError(f"W_q must have shape (d, h d_k) with h={self._h}, got shape "
                             f"{self.W_q.shape}")
        d_k = self.W_q.shape[1] // self._h
        shapes = {"W_k": (d, self._g * d_k), "W_v": (d, self._g * d_k),
                  "W_o": (self._h * d_k, d)}
        for name, w in (("W_k", W_k), ("W_v", W_v), ("W_o", W_o)):
            w = as_float_array(w, name, min_ndim=2)
            if w.shape != shapes[name]:
                raise ValueError(f"{name} must have shape {shapes[name]} (d={d}, h={self._h}, "
                                 f"g={self._g}, d_k={d_k}), got shape {w.shape}")
            setattr(self, name, w)
        if rope_pairs not in ("adjacent", "halves"):
            raise ValueError(f'rope_pairs must be "adjacent" or "halves", got {rope_pairs!r}')
        self.rope_base = None if rope_base is None else float(rope_base)
        self.rope_pairs = rope_pairs

    @property
    def d(self) -> int:
        """Model width d."""
        return self.W_q.shape[0]

    @property
    def h(self) -> int:
        """Query heads h."""
        return self._h

    @property
    def g(self) -> int:
        """Key/value heads g (``n_head_kv``)."""
        return self._g

    @property
    def d_k(self) -> int:
        """Width of every head, d_k = d_v."""
        return self.W_q.shape[1] // self._h

    @property
    def groups(self) -> np.ndarray:
        """(h,) the key/value head each query head reads (:func:`kv_groups`)."""
        return kv_groups(self._h, self._g)

    @property
    def n_parameters(self) -> int:
        """``d h d_k + 2 d g d_k + h d_k d``: 2 d^2 + 2 d^2 g / h when h d_k = d."""
        return sum(w.size for w in (self.W_q, self.W_k, self.W_v, self.W_o))

    def __repr__(self) -> str:
        return (f"GroupedQueryAttention(d={self.d}, h={self.h}, g={self.g}, d_k={self.d_k}, "
                f"rope_base={self.rope_base}, rope_pairs={self.rope_pairs!r})")

    def _rope(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        if self.rope_base is None:
            return x
        return rotary_embedding(x, self.rope_base, pairs=self.rope_pairs, positions=positions)

    def __call__(self, x, cache=None, *, heads_off=None):
        """Attend from the new tokens x to every cached token and to themselves (causal).

        Parameters
        ----------
        x : array_like, shape (..., s, d)
            The new tokens (after the block's norm).
        cache : masking.KVCache, optional
            ``KVCache(g, d_k, batch)``: holds the t earlier tokens' keys and values; the
            new ones are appended. None: x is the whole sequence (t = 0).
        heads_off : array_like, optional
            Query heads to switch off: their outputs are zeroed before W_o (h booleans,
            True = off, or head numbers).

        Returns
        -------
        output : numpy.ndarray, shape (..., s, d)
        weights : numpy.ndarray, shape (..., h, s, t + s)
            Every query head's weights over all t + s keys; zero on the future.
        """
        x = as_float_array(x, "x", min_ndim=2)
        if x.shape[-1] != self.d:
            raise ValueError(f"x has shape {x.shape} but the layer has d={self.d}: x must have "
                             f"shape (..., s, {self.d})")
        s = x.shape[-2]
        t = 0 if cache is None else cache.length
        positions = np.arange(t, t + s)  # (s,): each new token's position
        dt = x.dtype
        # (..., s, d) @ (d, h d_k) -> (..., s, h d_k) -> (..., h, s, d_k), each head turned
        q = self._rope(split_heads(x @ self.W_q.astype(dt, copy=False), self.h), positions)
        k = self._rope(split_heads(x @ self.W_k.astype(dt, copy=False), self.g), positions)
        v = split_heads(x @ self.W_v.astype(dt, copy=False), self.g)  # (..., g, s, d_k)
        if cache is not None:
            cache.append(k, v)  # (..., g, t + s, d_k)
            k, v = cache.keys, cache.values
        # new query i (position t + i) may see keys 0..t + i: (s, t + s)
        mask = np.arange(t + s)[None, :] <= positions[:, None]
        # (..., h, s, d_k) over (..., g, t+s, d_k) -> (..., h, s, d_k), weights (..., h, s, t+s)
        heads, weights = grouped_query_attention(q, k, v, mask=mask)
        off = _head_switch(heads_off, self.h)
        if off is not None:
            heads = np.where(off[:, None, None], 0, heads).astype(dt, copy=False)
        merged = merge_heads(heads)  # (..., h, s, d_k) -> (..., s, h d_k)
        return merged @ self.W_o.astype(dt, copy=False), weights  # (..., s, h d_k) @ (h d_k, d)
