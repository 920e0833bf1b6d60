"""PyTorch parity: the same computations in torch, and loading weights from torch modules.

Everything here takes and returns numpy arrays, so the book can compare
``np.allclose(ours, torch_version)`` in one line. Conventions to remember:

- ``torch.nn.Linear`` and ``torch.nn.MultiheadAttention`` store weights in column-vector
  form (y = W x, W:(out, in)); the book uses row vectors (y = x @ W, W:(in, out)), so
  every weight is transposed when it is copied.
- ``torch.nn.functional.scaled_dot_product_attention`` takes a boolean mask with True =
  may attend (the book's convention); ``torch.nn.MultiheadAttention``'s ``attn_mask``
  uses True = may NOT attend. :func:`torch_mha_forward` converts.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

from ._validate import as_float_array, check_mask, whole_number
from .attention import scaled_dot_product_attention
from .multihead import MultiHeadAttention

__all__ = [
    "to_torch",
    "sdpa_torch",
    "mha_from_torch",
    "torch_mha_forward",
    "embedding_from_torch",
    "softmax_grad_norm_torch",
    "time_torch_sdpa",
    "torch_sdpa_peak_bytes",
    "additive_attention_torch",
    "nadaraya_watson_torch",
    "bfloat16_torch",
    "gqa_torch",
    "rms_norm_torch",
    "swiglu_torch",
]


def to_torch(x, dtype: torch.dtype | None = None) -> torch.Tensor:
    """A numpy array (or array-like, or tensor) as a CPU torch tensor.

    Parameters
    ----------
    x : array_like or torch.Tensor, any shape
        Copied, never shared with the tensor. float32 stays float32, float64 stays
        float64, bool stays bool.
    dtype : torch.dtype, optional
        Convert to this dtype.

    Returns
    -------
    torch.Tensor, same shape as x
    """
    if isinstance(x, torch.Tensor):
        t = x.detach().cpu()
    else:
        arr = np.asarray(x)
        if arr.dtype == object:
            raise ValueError(f"x must be an array of numbers or bools, got dtype {arr.dtype}")
        t = torch.from_numpy(np.array(arr, order="C", copy=True))  # a copy: no aliasing
    return t if dtype is None else t.to(dtype)


def _numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy().copy()


def sdpa_torch(q, k, v, mask=None, scale: float | None = None):
    """PyTorch's scaled dot-product attention on numpy inputs.

    The output comes from ``torch.nn.functional.scaled_dot_product_attention``; the
    weights (which that function does not return) from ``torch.softmax`` of the masked
    scores, so a fully masked row has NaN weights here, as in plain torch.

    Parameters
    ----------
    q : array_like, shape (..., s_q, d_k)
    k : array_like, shape (..., s_k, d_k)
    v : array_like, shape (..., s_k, d_v)
    mask : array_like of bool, broadcastable to (..., s_q, s_k), optional
        True = may attend (same convention as torch SDPA and the book).
    scale : float, optional
        Default 1/sqrt(d_k).

    Returns
    -------
    output : numpy.ndarray, shape (..., s_q, d_v)
    weights : numpy.ndarray, shape (..., s_q, s_k)
    """
    q = as_float_array(q, "q", min_ndim=2)
    v = as_float_array(v, "v", min_ndim=2)
    k = as_float_array(k, "k", min_ndim=2)
    scaled_dot_product_attention(q, k, v, mask, scale)  # same checks and messages as ours
    dt = np.result_type(q, k, v)  # torch refuses mixed float32/float64 inputs
    q, k, v = q.astype(dt, copy=False), k.astype(dt, copy=False), v.astype(dt, copy=False)
    tq, tk, tv = to_torch(q), to_torch(k), to_torch(v)
    tm = None if mask is None else to_torch(np.asarray(mask))
    out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm, scale=scale)
    s = (1.0 / q.shape[-1] ** 0.5) if scale is None else scale
    # (..., s_q, d_k) @ (..., d_k, s_k) -> (..., s_q, s_k)
    ts = (tq @ tk.transpose(-2, -1)) * s
    if tm is not None:
        ts = ts.masked_fill(~tm, float("-inf"))
    return _numpy(out), _numpy(torch.softmax(ts, dim=-1))


def _check_mha(module) -> None:
    if not isinstance(module, torch.nn.MultiheadAttention):
        raise ValueError(
            f"module must be a torch.nn.MultiheadAttention, got {type(module).__name__}"
        )
    d = module.embed_dim
    if module.kdim != d or module.vdim != d:
        raise ValueError(
            f"module has kdim={module.kdim}, vdim={module.vdim} but embed_dim={d}; "
            f"the book's MultiHeadAttention needs kdim = vdim = embed_dim"
        )
    if module.bias_k is not None or module.add_zero_attn:
        raise ValueError(
            "module was built with add_bias_kv=True or add_zero_attn=True, which append "
            "extra key/value rows; the book's MultiHeadAttention has no such rows"
        )


def mha_from_torch(module: torch.nn.MultiheadAttention) -> MultiHeadAttention:
    """Copy the weights of a ``torch.nn.MultiheadAttention`` into the book's class.

    torch packs the three input projections in ``in_proj_weight``:(3d, d) in column-vector
    form; rows 0..d-1 are W^Q, d..2d-1 W^K, 2d..3d-1 W^V. Each block is transposed to the
    row-vector (d, d) form; ``out_proj.weight`` likewise becomes W_o. ``batch_first``
    does not matter: the book's class always takes (..., s, d).

    Parameters
    ----------
    module : torch.nn.MultiheadAttention
        With kdim = vdim = embed_dim, no add_bias_kv, no add_zero_attn.

    Returns
    -------
    MultiHeadAttention
        W_q, W_k, W_v, W_o:(d, d) and, if the module has biases, b_q, b_k, b_v, b_o:(d,),
        in the module's dtype.
    """
    _check_mha(module)
    d = module.embed_dim
    w = _numpy(module.in_proj_weight)  # (3d, d), column-vector form
    ws = [w[i * d : (i + 1) * d].T for i in range(3)]  # 3 x (d, d)^T -> (d, d)
    wo = _numpy(module.out_proj.weight).T  # (d, d)^T -> (d, d)
    bs = [None] * 4
    if module.in_proj_bias is not None:
        b = _numpy(module.in_proj_bias)  # (3d,)
        bs[:3] = [b[i * d : (i + 1) * d] for i in range(3)]  # 3 x (d,)
    if module.out_proj.bias is not None:
        bs[3] = _numpy(module.out_proj.bias)  # (d,)
    return MultiHeadAttention(*ws, wo, module.num_heads, *bs)


def _torch_input(x, name: str, dtype: torch.dtype, batch_first: bool) -> torch.Tensor:
    t = to_torch(x, dtype)
    if t.ndim not in (2, 3):
        raise ValueError(f"{name} must have shape (b, s, d) or (s, d), got {tuple(t.shape)}")
    # (b, s, d) -> (s, b, d) when the module expects sequence-first input
    return t if batch_first or t.ndim == 2 else t.transpose(0, 1)


def _torch_mask(mask, b: int | None, h: int, s_q: int, s_k: int) -> torch.Tensor | None:
    """Book mask (True = may attend) -> nn.MultiheadAttention attn_mask (True = may NOT)."""
    if mask is None:
        return None
    batch = () if b is None else (b,)
    mask = np.asarray(check_mask(mask, (*batch, s_q, s_k)))
    if mask.ndim <= 2:
        return ~to_torch(np.broadcast_to(mask, (s_q, s_k)))  # (s_q, s_k)
    full = np.broadcast_to(mask, (b, s_q, s_k))  # (b, s_q, s_k)
    # (b, s_q, s_k) -> (b*h, s_q, s_k), batch-major as torch expects
    return ~to_torch(full).repeat_interleave(h, dim=0)


def torch_mha_forward(module: torch.nn.MultiheadAttention, x_q, x_kv=None, mask=None):
    """Run a ``torch.nn.MultiheadAttention`` on numpy inputs laid out as (b, s, d).

    Handles ``batch_first`` (inputs and outputs are always (b, s, d) here) and converts
    the book's mask (True = may attend) to torch's ``attn_mask`` (True = may NOT attend).
    Calls the module with ``need_weights=True, average_attn_weights=False``. Note that
    torch returns NaN for a query whose mask row is all False, where the book returns 0.

    Parameters
    ----------
    module : torch.nn.MultiheadAttention
        In eval mode if it has dropout (otherwise results would be random).
    x_q : array_like, shape (b, s_q, d) or (s_q, d)
        Cast to the module's dtype (float32 unless the module was made ``.double()``).
    x_kv : array_like, shape (b, s_k, d) or (s_k, d), optional
        None means x_q (self-attention).
    mask : array_like of bool, broadcastable to (b, s_q, s_k), optional
        True = may attend.

    Returns
    -------
    output : numpy.ndarray, shape (b, s_q, d) (or (s_q, d) for unbatched input)
    weights : numpy.ndarray, shape (b, h, s_q, s_k) (or (h, s_q, s_k))
        Per-head weights, not averaged.
    """
    _check_mha(module)
    if module.training and module.dropout > 0:
        raise ValueError(
            f"module is in training mode with dropout={module.dropout}, so its output is "
            f"random; call module.eval() first"
        )
    dtype, bf = module.in_proj_weight.dtype, module.batch_first
    tq = _torch_input(x_q, "x_q", dtype, bf)
    tkv = tq if x_kv is None else _torch_input(x_kv, "x_kv", dtype, bf)
    if tq.ndim != tkv.ndim:
        raise ValueError(
            f"x_q has {tq.ndim} axes but x_kv has {tkv.ndim}: both must be (b, s, d) or (s, d)"
        )
    b = None if tq.ndim == 2 else tq.shape[0 if bf else 1]
    seq = 1 if (b is not None and bf) else 0  # which torch axis is the sequence
    s_q, s_k = tq.shape[seq], tkv.shape[seq]
    attn_mask = _torch_mask(mask, b, module.num_heads, s_q, s_k)
    with torch.no_grad():
        out, w = module(tq, tkv, tkv, attn_mask=attn_mask, need_weights=True,
                        average_attn_weights=False)
    if b is not None and not bf:
        out = out.transpose(0, 1)  # (s_q, b, d) -> (b, s_q, d)
    return _numpy(out), _numpy(w)


def embedding_from_torch(module: torch.nn.Embedding) -> np.ndarray:
    """The lookup table of a ``torch.nn.Embedding`` as a numpy array.

    ``module(ids)`` equals ``table[ids]`` (= ``embedding.embed(ids, table)``).

    Parameters
    ----------
    module : torch.nn.Embedding
        Without max_norm (which rescales rows at lookup time, so it is not a plain table).

    Returns
    -------
    table : numpy.ndarray, shape (V, d)
        Row j is the embedding of token id j; a copy in the module's dtype.
    """
    if not isinstance(module, torch.nn.Embedding):
        raise ValueError(f"module must be a torch.nn.Embedding, got {type(module).__name__}")
    if module.max_norm is not None:
        raise ValueError(
            f"module has max_norm={module.max_norm}, which rescales rows when they are "
            f"looked up; its output is not a plain table lookup"
        )
    return _numpy(module.weight)  # (V, d)


def softmax_grad_norm_torch(d_k: int, scaled: bool = True, *, s_k: int = 16, n: int = 500,
                            seed: int = 0) -> float:
    """Mean norm of dL/dscores through the softmax, measured with torch autograd.

    The same experiment, with the same random numbers, as
    :func:`attention_book.attention.softmax_saturation` (whose ``"grad_norm"`` uses the
    analytic Jacobian ``diag(p) - p p^T``): n queries q:(d_k,), each with s_k keys
    K:(s_k, d_k) and an upstream gradient g:(s_k,), all N(0, 1); scores = q K^T times
    1/sqrt(d_k) (``scaled``) or 1; L = sum of g . softmax(scores); autograd gives
    dL/dscores:(n, s_k), whose row norms are averaged.

    Parameters
    ----------
    d_k : int
    scaled : bool
    s_k : int
        Keys per query (at least 2).
    n : int
        Number of queries.
    seed : int
        Seed of the numpy generator the inputs are drawn from.

    Returns
    -------
    float
        The mean Euclidean norm of the n rows of dL/dscores.
    """
    from .attention import softmax_saturation

    softmax_saturation(d_k, scaled, s_k=s_k, n=1, seed=0)  # same checks and messages
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, 1, d_k))  # (n, 1, d_k)
    K = rng.standard_normal((n, s_k, d_k))  # (n, s_k, d_k)
    g = rng.standard_normal((n, s_k))  # (n, s_k)
    scale = 1.0 / math.sqrt(d_k) if scaled else 1.0
    # (n, 1, d_k) @ (n, d_k, s_k) -> (n, 1, s_k) -> (n, s_k)
    scores = ((to_torch(q) @ to_torch(K).transpose(-2, -1)) * scale)[:, 0, :]
    scores = scores.detach().requires_grad_(True)
    loss = (torch.softmax(scores, dim=-1) * to_torch(g)).sum()
    loss.backward()
    return float(scores.grad.norm(dim=-1).mean())


def time_torch_sdpa(s: int, d_k: int = 64, *, repeats: int = 3, seed: int = 0,
                    warmup: int = 2, min_seconds: float = 0.0, one_thread: bool = True,
                    fused: bool = True) -> dict:
    """Time of ``torch.nn.functional.scaled_dot_product_attention`` on random float32
    Q, K, V:(s, d_k) on the CPU, and the memory its (s, s) matrix would take.

    With ``fused`` the inputs are shaped (batch, heads, s, d_k) = (1, 1, s, d_k), the
    shape torch's fused (flash-style) CPU kernel takes: it works through the (s, s)
    scores in tiles and never holds the whole matrix. Without, they are (s, d_k), and
    torch falls back to its unfused "math" kernel, which forms the whole (s, s) matrix as
    our numpy function does. Memory is not measured: ``score_bytes`` is the theoretical
    size ``s * s * 4`` of one float32 score matrix. The first calls pay for starting
    torch's thread pool and choosing a kernel, so ``warmup`` calls run untimed first;
    then the fastest of several runs is kept (see :func:`attention_book.cost.best_time`).

    Parameters
    ----------
    s : int
        Sequence length.
    d_k : int
        Query, key and value dimension.
    repeats : int
        Runs timed at least; the fastest is reported.
    seed : int
    warmup : int
        Untimed runs first.
    min_seconds : float
        Keep timing until this much time has been spent.
    one_thread : bool
        Run on one thread (``torch.set_num_threads(1)``, restored afterwards) and time
        with that thread's CPU clock (:func:`time.thread_time`), as
        :func:`attention_book.cost.measure_attention` does; False: wall time on torch's
        own threads.
    fused : bool
        Inputs (1, 1, s, d_k) (the fused kernel) or (s, d_k) (the math kernel).

    Returns
    -------
    dict
        ``"s"``, ``"seconds"``, ``"score_bytes"``, ``"clock"`` ("thread CPU" or "wall").
    """
    from .cost import best_time

    if isinstance(s, bool) or not isinstance(s, int) or s < 1:
        raise ValueError(f"s must be a whole number >= 1, got {s!r}")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a whole number >= 1, got {repeats!r}")
    rng = np.random.default_rng(seed)
    shape = (1, 1, s, d_k) if fused else (s, d_k)
    Q, K, V = (to_torch(rng.standard_normal(shape).astype(np.float32)) for _ in range(3))
    threads = torch.get_num_threads()
    try:
        if one_thread:
            torch.set_num_threads(1)
        with torch.no_grad():
            best = best_time(lambda: F.scaled_dot_product_attention(Q, K, V),  # shape of Q
                             repeats=repeats, warmup=warmup, min_seconds=min_seconds,
                             clock=time.thread_time if one_thread else time.perf_counter)
    finally:
        torch.set_num_threads(threads)
    return {"s": s, "seconds": best, "score_bytes": s * s * 4,
            "clock": "thread CPU" if one_thread else "wall"}


@contextlib.contextmanager
def _stderr_fd_silenced():
    """Send what C++ code writes to file descriptor 2 to /dev/null for a while: torch's
    profiler (kineto) logs two lines there at every start and stop, which a notebook's
    kernel would show as a warning."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def torch_sdpa_peak_bytes(s: int, d_k: int = 64, *, fused: bool = False, seed: int = 0) -> int:
    """The most memory ``torch.nn.functional.scaled_dot_product_attention`` holds at once
    during one call on random float32 Q, K, V, measured by torch's profiler.

    The profiler (``profile_memory=True``) records every allocation and free of the call,
    in order; the peak of their running sum is what the call holds at once beyond its
    inputs. Shapes as in :func:`time_torch_sdpa`: (s, d_k) takes torch's "math" kernel,
    which forms whole (s, s) matrices (about 2.25 of them in float32: the scores, the
    weights and a boolean (s, s) mask of the infinite scores its safe softmax checks),
    (1, 1, s, d_k) the fused kernel, which works in tiles.

    Parameters
    ----------
    s : int
        Sequence length, >= 1.
    d_k : int
        Query, key and value dimension, >= 1.
    fused : bool
        Inputs (1, 1, s, d_k) (the fused kernel) or (s, d_k) (the math kernel).
    seed : int

    Returns
    -------
    int
        Bytes: the peak of allocations minus frees during the call.
    """
    from torch.profiler import ProfilerActivity, profile

    s = whole_number(s, "s", low=1)
    d_k = whole_number(d_k, "d_k", low=1)
    rng = np.random.default_rng(seed)
    shape = (1, 1, s, d_k) if fused else (s, d_k)
    Q, K, V = (to_torch(rng.standard_normal(shape).astype(np.float32)) for _ in range(3))
    with torch.no_grad():
        F.scaled_dot_product_attention(Q, K, V)  # warm-up: the kernel chosen, pools started
        with _stderr_fd_silenced(), profile(activities=[ProfilerActivity.CPU],
                                            profile_memory=True) as prof:
            F.scaled_dot_product_attention(Q, K, V)
    # every allocation (+bytes) and free (-bytes) of the call, in the order they happened
    changes = sorted((e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events()
                     if e.name() == "[memory]")
    held = np.cumsum([0] + [nbytes for _, nbytes in changes])  # bytes held after each change
    return int(held.max())


def additive_attention_torch(q, k, v, W_q, W_k, w):
    """Additive (Bahdanau) attention in torch, the twin of
    :func:`attention_book.attention.additive_attention`: ``torch.tanh`` of the two
    projections added, a ``torch.nn.Linear`` without bias for w, ``torch.softmax``.

    Parameters
    ----------
    q : array_like, shape (..., s_q, d_q)
    k : array_like, shape (..., s_k, d_k)
    v : array_like, shape (..., s_k, d_v)
    W_q, W_k, w : array_like, shapes (d_q, d_h), (d_k, d_h), (d_h,)

    Returns
    -------
    output : numpy.ndarray, shape (..., s_q, d_v)
    weights : numpy.ndarray, shape (..., s_q, s_k)
    """
    from .attention import additive_attention

    additive_attention(q, k, v, W_q, W_k, w)  # same checks and messages as ours
    tq, tk, tv, tWq, tWk, tw = (to_torch(np.asarray(a, dtype=np.float64))
                                for a in (q, k, v, W_q, W_k, w))
    score = torch.nn.Linear(tw.shape[0], 1, bias=False).double()
    with torch.no_grad():
        score.weight.copy_(tw[None, :])  # (1, d_h): column-vector form of w
        # (..., s_q, 1, d_h) + (..., 1, s_k, d_h) -> (..., s_q, s_k, d_h)
        hidden = torch.tanh((tq @ tWq).unsqueeze(-2) + (tk @ tWk).unsqueeze(-3))
        weights = torch.softmax(score(hidden).squeeze(-1), dim=-1)  # (..., s_q, s_k)
        out = weights @ tv  # (..., s_q, s_k) @ (..., s_k, d_v) -> (..., s_q, d_v)
    return _numpy(out), _numpy(weights)


def nadaraya_watson_torch(queries, keys, values, bandwidth: float = 1.0):
    """Gaussian-kernel regression by ``torch.nn.functional.scaled_dot_product_attention``:
    the twin of :func:`attention_book.attention.nadaraya_watson`.

    The kernel's weights are attention's with scale ``1/sigma^2`` and a float mask (added
    to the scores) of ``-|k_j|^2 / (2 sigma^2)`` a key; the ``-|q|^2/(2 sigma^2)`` term is
    left out, being the same for every key of a row.

    Parameters
    ----------
    queries : array_like, shape (s_q,) or (s_q, d)
    keys : array_like, shape (s_k,) or (s_k, d)
    values : array_like, shape (s_k,) or (s_k, d_v)
    bandwidth : float

    Returns
    -------
    predictions : numpy.ndarray, shape (s_q,) or (s_q, d_v)
    """
    from .attention import nadaraya_watson

    nadaraya_watson(queries, keys, values, bandwidth)  # same checks and messages as ours
    x_q, x_k, y = (np.asarray(a, dtype=np.float64) for a in (queries, keys, values))
    x_q, x_k = (x[:, None] if x.ndim == 1 else x for x in (x_q, x_k))  # (s, d)
    tq, tk = to_torch(x_q), to_torch(x_k)
    tv = to_torch(y[:, None] if y.ndim == 1 else y)  # (s_k, d_v)
    bias = -(tk ** 2).sum(-1) / (2 * bandwidth ** 2)  # (s_k,): one a key
    out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=bias.expand(len(tq), -1),
                                         scale=1.0 / bandwidth ** 2)  # (s_q, d_v)
    return _numpy(out)[:, 0] if y.ndim == 1 else _numpy(out)


def bfloat16_torch(x) -> np.ndarray:
    """``x`` rounded to bfloat16 by torch, returned as float32: the twin of
    ``numerics.to_bfloat16``.

    Parameters
    ----------
    x : array_like, any shape
        Real numbers, converted to float32 first.

    Returns
    -------
    numpy.ndarray of float32, same shape as x
    """
    with np.errstate(over="ignore"):  # beyond float32's range -> inf, as torch.tensor does
        x32 = np.asarray(x, dtype=np.float32)
    return torch.from_numpy(x32.copy()).to(torch.bfloat16).float().numpy()


def gqa_torch(q, k, v, mask=None) -> np.ndarray:
    """Grouped-query attention by torch SDPA with ``enable_gqa=True``: the twin of
    ``multihead.grouped_query_attention``.

    Parameters
    ----------
    q : array_like, shape (..., h, s_q, d_k)
    k : array_like, shape (..., g, s_k, d_k)
        g key/value heads, g dividing h.
    v : array_like, shape (..., g, s_k, d_v)
    mask : array_like of bool, broadcastable to (..., h, s_q, s_k), optional
        True = may attend.

    Returns
    -------
    output : numpy.ndarray, shape (..., h, s_q, d_v)
    """
    q, k, v = (as_float_array(a, n, min_ndim=3) for a, n in ((q, "q"), (k, "k"), (v, "v")))
    if q.shape[-3] % k.shape[-3] or k.shape[-3] != v.shape[-3]:
        raise ValueError(f"k and v need the same number g of heads, dividing q's h: got "
                         f"q {q.shape}, k {k.shape}, v {v.shape}")
    dt = np.result_type(q, k, v)
    tm = None if mask is None else to_torch(np.asarray(mask, dtype=bool))
    out = F.scaled_dot_product_attention(*(to_torch(a.astype(dt, copy=False)) for a in (q, k, v)),
                                         attn_mask=tm, enable_gqa=True)
    return _numpy(out)


def rms_norm_torch(x, g=None, eps: float = 1e-6) -> np.ndarray:
    """:func:`attention_book.block.rms_norm` by ``torch.nn.RMSNorm`` (float64), its
    weight set to g.

    Parameters
    ----------
    x : array_like, shape (..., d)
    g : array_like, shape (d,), optional
        None leaves torch's initial weight, 1.
    eps : float

    Returns
    -------
    numpy.ndarray, same shape as x
    """
    x_t = to_torch(as_float_array(x, "x"), torch.float64)
    norm = torch.nn.RMSNorm(x_t.shape[-1], eps=eps, dtype=torch.float64)
    with torch.no_grad():
        if g is not None:
            norm.weight.copy_(to_torch(g, torch.float64))
        return _numpy(norm(x_t))


def swiglu_torch(x, W_1, W_3, W_2) -> np.ndarray:
    """:func:`attention_book.block.swiglu` as Llama's ``FeedForward`` computes it: three
    bias-free ``torch.nn.Linear`` layers (weights transposed to torch's (out, in)) and
    ``torch.nn.functional.silu``, in float64.

    Parameters
    ----------
    x : array_like, shape (..., s, d)
    W_1, W_3 : array_like, shape (d, d_ff)
    W_2 : array_like, shape (d_ff, d)

    Returns
    -------
    numpy.ndarray, shape (..., s, d)
    """
    def linear(W):  # (in, out) -> nn.Linear(in, out), weight (out, in)
        W = to_torch(W, torch.float64)
        layer = torch.nn.Linear(*W.shape, bias=False, dtype=torch.float64)
        layer.weight.copy_(W.T)
        return layer

    with torch.no_grad():
        w1, w3, w2 = linear(W_1), linear(W_3), linear(W_2)
        x_t = to_torch(x, torch.float64)
        return _numpy(w2(F.silu(w1(x_t)) * w3(x_t)))  # (..., s, d_ff) -> (..., s, d)
