"""The transformer block from scratch, in numpy: LayerNorm, GELU, the feed-forward
network, residual connections, and encoder and decoder blocks that match PyTorch's
``nn.TransformerEncoderLayer`` and ``nn.TransformerDecoderLayer`` number for number.

Row-vector notation: x:(b, s, d) or (s, d); h heads of width d_k = d / h; the
feed-forward network widens each row to d_ff (4 d in the original transformer)::

    post-LN (norm_first=False, the 2017 paper, BERT):
        x = LN1(x + MHA(x))
        x = LN2(x + FFN(x))
    pre-LN (norm_first=True, GPT-2 and most models since):
        x = x + MHA(LN1(x))
        x = x + FFN(LN2(x))
    FFN(x) = act(x @ W_1 + b_1) @ W_2 + b_2      W_1:(d, d_ff), W_2:(d_ff, d)

Masks are boolean with True = "may attend"; padding masks have True = "real token".
(torch's ``src_key_padding_mask`` and ``src_mask``/``tgt_mask`` in boolean form mean the
opposite, True = ignore: convert with :func:`attention_book.masking.to_torch_mha_mask`.)

Dropout is left out of the blocks: a block here equals a torch layer in eval mode.
:func:`dropout` and :func:`dropout_keep` compute it on any array (attention weights, a
sub-layer's output), to show where training adds it and what it does.

This module imports numpy only; ``from_torch`` reads a torch module's parameters by
their attribute names (``p.detach().cpu().numpy()``), without importing torch.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ._validate import as_float_array, check_mask, positive_int, whole_number
from .attention import causal_mask
from .masking import combine_masks, key_padding_to_attention_mask
from .multihead import MultiHeadAttention

__all__ = [
    "layer_norm",
    "gelu",
    "relu",
    "feed_forward",
    "EncoderBlock",
    "DecoderBlock",
    "encoder_block_parameters",
    "decoder_block_parameters",
    "encoder_stack",
    "stack_trace",
    "stream_norms",
    "jacobian_gain",
    "dropout_keep",
    "dropout",
    "rms_norm",
    "silu",
    "swiglu",
    "swiglu_hidden_size",
    "feed_forward_parameters",
    "swiglu_parameters",
    "without_heads",
    "mean_pool",
]

ACTIVATIONS = ("relu", "gelu", "gelu_tanh")


# ------------------------------------------------------------------ the pieces


def _eps(eps) -> float:
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not (
            math.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a small positive number such as 1e-5, got {eps!r}")
    return float(eps)


def _vector(v, name: str, n: int, what: str) -> np.ndarray | None:
    """A (n,) parameter vector, or None."""
    if v is None:
        return None
    v = as_float_array(v, name, min_ndim=1)
    if v.shape != (n,):
        raise ValueError(f"{name} must have shape ({what},) = ({n},), got shape {v.shape}")
    return v


def layer_norm(x, gamma=None, beta=None, eps: float = 1e-5) -> np.ndarray:
    """Layer normalisation over the last axis, as ``torch.nn.functional.layer_norm``.

    Each row (one token's d numbers) is shifted to mean 0 and scaled to variance 1, then
    scaled by gamma and shifted by beta, which are learned::

        LN(x) = (x - mean(x)) / sqrt(var(x) + eps) * gamma + beta

    The variance is the biased one (divide by d, not d - 1), as in torch. eps keeps a
    constant row (variance 0) from dividing by zero: it becomes all beta.

    Parameters
    ----------
    x : array_like, shape (..., d)
        E.g. (b, s, d); each of the ... rows is normalised on its own.
    gamma : array_like, shape (d,), optional
        Scale; None means 1 (no scale).
    beta : array_like, shape (d,), optional
        Shift; None means 0 (no shift).
    eps : float
        Added to the variance; 1e-5 in torch's default, 1e-12 in BERT.

    Returns
    -------
    numpy.ndarray, same shape as x
        float32 in, float32 out; otherwise float64.
    """
    x = as_float_array(x, "x", min_ndim=1)
    d = x.shape[-1]
    gamma = _vector(gamma, "gamma", d, "d")
    beta = _vector(beta, "beta", d, "d")
    eps = _eps(eps)
    mean = x.mean(axis=-1, keepdims=True)  # (..., d) -> (..., 1)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # (..., 1), biased (divide by d)
    y = (x - mean) / np.sqrt(var + eps)  # (..., d), mean 0, variance var / (var + eps)
    if gamma is not None:
        y = y * gamma.astype(x.dtype, copy=False)  # (..., d) * (d,)
    if beta is not None:
        y = y + beta.astype(x.dtype, copy=False)
    return y.astype(x.dtype, copy=False)


# W. J. Cody's rational Chebyshev approximations of erf (Math. Comp. 23, 1969, 631-638;
# the coefficients of his CALERF, netlib specfun): erf(x) = x R1(x^2) for |x| <= 0.46875,
# and erf(x) = sign(x) (1 - exp(-x^2) R2(|x|)) above, where R2 is exp(x^2) erfc(x).
_ERF_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
          3.20937758913846947e03)
_ERF_A_LEAD = 1.85777706184603153e-1
_ERF_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
          2.84423683343917062e03)
_ERF_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
          2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
          2.05107837782607147e03, 1.23033935479799725e03)
_ERF_C_LEAD = 2.15311535474403846e-8
_ERF_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
          1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
          3.43936767414372164e03, 1.23033935480374942e03)


def _rational(t: np.ndarray, lead: float, num: tuple, den: tuple) -> np.ndarray:
    """``P(t) / Q(t)`` by Horner's rule, P = lead t^n + num[0] t^(n-1) + ... + num[-1],
    Q = t^n + den[0] t^(n-1) + ... + den[-1]; in place on two temporaries."""
    p = lead * t
    q = t.copy()
    for i, (a, b) in enumerate(zip(num, den)):
        p += a
        q += b
        if i < len(num) - 1:
            p *= t
            q *= t
    p /= q
    return p


def _erf(x: np.ndarray) -> np.ndarray:
    """The error function of a float64 array, vectorised, within 4 ulp of ``math.erf``.

    Cody's two rational approximations, evaluated on the whole array and chosen per
    element (no Python call per element: about 6 times faster than ``math.erf`` through
    ``np.frompyfunc`` on a (12, 1536) array). Beyond |x| = 6, erfc(x) < 2.2e-17 and
    erf(x) rounds to +-1; the outer formula is used up to there.
    """
    y = np.minimum(np.abs(x), 6.0)  # same shape as x
    z = y * y
    inner = x * _rational(z, _ERF_A_LEAD, _ERF_A, _ERF_B)  # |x| <= 0.46875
    outer = _rational(y, _ERF_C_LEAD, _ERF_C, _ERF_D)  # exp(y^2) erfc(y), y > 0.46875
    outer *= np.exp(-z)  # erfc(y)
    outer = np.copysign(1.0 - outer, x)  # erf(|x|) = 1 - erfc(|x|); erf is odd
    return np.where(y <= 0.46875, inner, outer)


_GELU_CHUNK = 16384  # elements: the float64 temporaries of a chunk stay in the CPU's cache


def _exact_gelu(x: np.ndarray) -> np.ndarray:
    """``x Phi(x)`` with Cody's erf, in float64, chunk by chunk; x's dtype out.

    Elementwise, so a chunk's numbers are those of the whole array at once, bit for bit;
    but the twenty-odd temporaries of a (150, 1536) array (1.8 MB each in float64) did not
    fit in the cache: by chunks of 16,384 elements, 3 times faster (measured 26 -> 9 ms;
    chapter 9's head removals spent more than half their time here).
    """
    flat = np.ascontiguousarray(x).reshape(-1)  # (n,)
    out = np.empty(flat.shape, x.dtype)  # (n,)
    for start in range(0, flat.size, _GELU_CHUNK):
        x64 = flat[start:start + _GELU_CHUNK].astype(np.float64)  # (chunk,)
        phi = 0.5 * (1.0 + _erf(x64 * (1.0 / math.sqrt(2.0))))
        out[start:start + _GELU_CHUNK] = x64 * phi  # rounded to x's dtype
    return out.reshape(x.shape)


def gelu(x, approximate: str = "none") -> np.ndarray:
    """Gaussian error linear unit: ``x * Phi(x)``, Phi the standard normal CDF.

    ``Phi(x) = (1 + erf(x / sqrt(2))) / 2``: a smooth ReLU that lets small negative
    values through a little. Exact by default, as ``torch.nn.functional.gelu`` (BERT,
    and ``nn.TransformerEncoderLayer(activation="gelu")``); ``approximate="tanh"`` gives
    the tanh formula of GPT-2 and ``nn.GELU(approximate="tanh")``::

        0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))

    Parameters
    ----------
    x : array_like, any shape
    approximate : {"none", "tanh"}

    Returns
    -------
    numpy.ndarray, same shape as x
        float32 in, float32 out (computed in float64); otherwise float64.
    """
    x = as_float_array(x, "x", min_ndim=0)
    if approximate == "none":
        return _exact_gelu(x)
    x64 = x.astype(np.float64, copy=False)
    if approximate == "tanh":
        with np.errstate(over="ignore"):  # x**3 overflows for |x| > 1e102; tanh(inf) = 1
            phi = 0.5 * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x64 + 0.044715 * x64**3)))
    else:
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    return np.asarray(x64 * phi).astype(x.dtype, copy=False)


def relu(x) -> np.ndarray:
    """Rectified linear unit ``max(x, 0)``, elementwise.

    Parameters
    ----------
    x : array_like, any shape

    Returns
    -------
    numpy.ndarray, same shape as x
    """
    x = as_float_array(x, "x", min_ndim=0)
    return np.maximum(x, 0).astype(x.dtype, copy=False)


def _activation(name) -> str:
    if name not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {name!r}")
    return name


def _activate(x, name: str) -> np.ndarray:
    if name == "relu":
        return relu(x)
    return gelu(x, approximate="tanh" if name == "gelu_tanh" else "none")


def _ffn_weights(W_1, b_1, W_2, b_2, d: int | None = None):
    """Check W_1:(d, d_ff), b_1:(d_ff,) or None, W_2:(d_ff, d), b_2:(d,) or None."""
    W_1 = as_float_array(W_1, "W_1", min_ndim=2)
    W_2 = as_float_array(W_2, "W_2", min_ndim=2)
    if W_1.ndim != 2 or (d is not None and W_1.shape[0] != d):
        want = "(d, d_ff)" if d is None else f"(d, d_ff) = ({d}, d_ff)"
        raise ValueError(f"W_1 must have shape {want}, got shape {W_1.shape}")
    d, d_ff = W_1.shape
    if W_2.shape != (d_ff, d):
        raise ValueError(f"W_2 must have shape (d_ff, d) = ({d_ff}, {d}) to undo W_1's "
                         f"(d, d_ff) = ({d}, {d_ff}), got shape {W_2.shape}")
    b_1 = _vector(b_1, "b_1", d_ff, "d_ff")
    b_2 = _vector(b_2, "b_2", d, "d")
    return W_1, b_1, W_2, b_2


def _ffn(x, W_1, b_1, W_2, b_2, activation: str, record=None) -> np.ndarray:
    """The position-wise network on checked arrays; ``record`` collects the hidden layer."""
    hidden = x @ W_1.astype(x.dtype, copy=False)  # (..., s, d) @ (d, d_ff) -> (..., s, d_ff)
    if b_1 is not None:
        hidden = hidden + b_1.astype(x.dtype, copy=False)
    hidden = _activate(hidden, activation)  # (..., s, d_ff), elementwise
    if record is not None:
        record.append(("FFN hidden (d_ff)", hidden))
    out = hidden @ W_2.astype(x.dtype, copy=False)  # (..., s, d_ff) @ (d_ff, d) -> (..., s, d)
    return out if b_2 is None else out + b_2.astype(x.dtype, copy=False)


def feed_forward(x, W_1, b_1, W_2, b_2, activation: str = "relu") -> np.ndarray:
    """The position-wise feed-forward network: each row on its own, the same weights.

    ``act(x @ W_1 + b_1) @ W_2 + b_2``: widen every token's d numbers to d_ff, apply
    the nonlinearity, and project back to d. No row looks at another row: mixing
    between positions happens only in attention.

    Parameters
    ----------
    x : array_like, shape (..., s, d)
    W_1 : array_like, shape (d, d_ff)
    b_1 : array_like, shape (d_ff,), or None
    W_2 : array_like, shape (d_ff, d)
    b_2 : array_like, shape (d,), or None
    activation : {"relu", "gelu", "gelu_tanh"}
        "gelu" is the exact (erf) GELU, "gelu_tanh" its tanh approximation.

    Returns
    -------
    numpy.ndarray, shape (..., s, d)
    """
    x = as_float_array(x, "x", min_ndim=1)
    W_1, b_1, W_2, b_2 = _ffn_weights(W_1, b_1, W_2, b_2)
    if x.shape[-1] != W_1.shape[0]:
        raise ValueError(f"x has shape {x.shape} but W_1 has shape {W_1.shape}: x's last "
                         f"axis must be d = {W_1.shape[0]}")
    return _ffn(x, W_1, b_1, W_2, b_2, _activation(activation))


# ------------------------------------------------------------------ shared by both blocks


def _norm(norm, name: str, d: int):
    """(gamma, beta) for one LayerNorm; None means a fresh one (gamma = 1, beta = 0)."""
    if norm is None:
        return np.ones(d), np.zeros(d)
    if not isinstance(norm, (tuple, list)) or len(norm) != 2:
        raise ValueError(f"{name} must be a pair (gamma, beta) of (d,) = ({d},) arrays "
                         f"(either may be None), got {type(norm).__name__}")
    return _vector(norm[0], f"{name} gamma", d, "d"), _vector(norm[1], f"{name} beta", d, "d")


def _flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _attention(mha, name: str, d: int | None = None) -> MultiHeadAttention:
    if not isinstance(mha, MultiHeadAttention):
        raise ValueError(f"{name} must be a MultiHeadAttention, got {type(mha).__name__}")
    if d is not None and mha.d != d:
        raise ValueError(f"{name} has d={mha.d} but the block has d={d}: every part of a "
                         f"block must use the same width")
    return mha


def _sequence(x, name: str, d: int) -> np.ndarray:
    x = as_float_array(x, name, min_ndim=2)
    if x.shape[-1] != d:
        raise ValueError(f"{name} has shape {x.shape} but the block has d={d}: {name} "
                         f"must have shape (b, s, {d}) or (s, {d})")
    return x


def _padding(padding, name: str, x: np.ndarray, x_name: str):
    """Check a (b, s) / (s,) padding mask (True = real token) against x:(..., s, d)."""
    if padding is None:
        return None
    arr = np.asarray(padding)
    if arr.dtype != bool:
        raise ValueError(f"{name} must be boolean with True = a real token, got dtype "
                         f"{arr.dtype}; build it with masking.padding_mask(lengths, s)")
    if arr.shape != x.shape[:-1]:
        want = ", ".join(map(str, x.shape[:-1]))
        raise ValueError(f"{name} has shape {arr.shape} but {x_name} has shape {x.shape}: "
                         f"{name} must have shape ({want}{',' if x.ndim == 2 else ''}), "
                         f"one entry per token")
    return arr


def _numpy(p) -> np.ndarray | None:
    """A torch parameter (or None) as a numpy copy, by duck typing."""
    return None if p is None else np.array(p.detach().cpu().numpy(), copy=True)


def _get(module, attr: str, kind: str):
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ValueError(f"layer must be a torch.nn.{kind}, got {type(module).__name__} "
                         f"(it has no attribute {attr!r})") from None


def _mha_from_torch(module, kind: str) -> MultiHeadAttention:
    """torch.nn.MultiheadAttention -> MultiHeadAttention (as reference.mha_from_torch).

    torch packs W^Q, W^K, W^V as the row blocks of in_proj_weight:(3d, d) in column-vector
    form; each block is transposed to the book's (d, d) row-vector form.
    """
    d, h = _get(module, "embed_dim", kind), _get(module, "num_heads", kind)
    if not getattr(module, "_qkv_same_embed_dim", True) or module.in_proj_weight is None:
        raise ValueError(f"the attention of this {kind} has kdim/vdim != embed_dim; the "
                         f"book's MultiHeadAttention needs kdim = vdim = d")
    if getattr(module, "bias_k", None) is not None or getattr(module, "add_zero_attn", False):
        raise ValueError("the attention was built with add_bias_kv or add_zero_attn, which "
                         "append extra key/value rows the book's class does not have")
    w = _numpy(module.in_proj_weight)  # (3d, d), column-vector form
    ws = [w[i * d:(i + 1) * d].T for i in range(3)]  # 3 x (d, d)^T -> (d, d)
    bs = [None] * 4
    if module.in_proj_bias is not None:
        b = _numpy(module.in_proj_bias)  # (3d,)
        bs[:3] = [b[i * d:(i + 1) * d] for i in range(3)]  # 3 x (d,)
    bs[3] = _numpy(module.out_proj.bias)  # (d,) or None
    return MultiHeadAttention(*ws, _numpy(module.out_proj.weight).T, h, *bs)


def _activation_from_torch(layer, kind: str) -> str:
    """'relu', 'gelu' or 'gelu_tanh' from a torch layer's ``activation`` (by name)."""
    act = _get(layer, "activation", kind)
    code = getattr(layer, "activation_relu_or_gelu", None)  # encoder only: 1 relu, 2 gelu
    name = (getattr(act, "__name__", None) or type(act).__name__).lower()
    if code == 0 or name not in ("relu", "gelu"):
        raise ValueError(f"the layer's activation {act!r} is not relu or gelu; the book's "
                         f"blocks support activation in {ACTIVATIONS}")
    if name == "gelu" and getattr(act, "approximate", "none") == "tanh":
        return "gelu_tanh"
    return name


def _eps_from_torch(layer, norms, kind: str) -> float:
    epss = {_get(layer, n, kind).eps for n in norms}
    if len(epss) != 1:
        raise ValueError(f"the layer's norms have different eps {sorted(epss)}; the book's "
                         f"block uses one eps for all of them")
    return epss.pop()


def _check_eval(layer, kind: str, attentions) -> None:
    """Dropout makes a training-mode layer random; the book's block has no dropout."""
    if not getattr(layer, "training", False):
        return
    drops = [getattr(layer, n, None) for n in ("dropout", "dropout1", "dropout2", "dropout3")]
    ps = [getattr(m, "p", 0.0) for m in drops if m is not None]
    ps += [getattr(_get(layer, a, kind), "dropout", 0.0) for a in attentions]
    if max(ps, default=0.0) > 0:
        raise ValueError(f"layer is in training mode with dropout={max(ps)}, so its output "
                         f"is random; call layer.eval() first (the book's block has no "
                         f"dropout)")


def _norm_from_torch(norm):
    return _numpy(norm.weight), _numpy(norm.bias)


def _count(*arrays) -> int:
    return sum(a.size for a in arrays if a is not None)


def _run(x, steps, norms, *, norm_first: bool, residual: bool, eps: float):
    """Run sub-layers with residual connections and LayerNorms; return the trace.

    ``steps`` is a list of (name, f) with f(input, trace) -> output:(..., s, d). Post-LN
    normalises after each residual sum, pre-LN before each sub-layer.
    """
    trace = [("x", x)]
    stream = "x"  # the name of what x holds, for the trace
    for i, ((name, step), (gamma, beta)) in enumerate(zip(steps, norms), start=1):
        last = i == len(steps)
        inp = x
        if norm_first:
            inp = layer_norm(x, gamma, beta, eps)  # (..., s, d)
            trace.append((f"LN{i}({stream})", inp))
        y = step(inp, trace)  # (..., s, d)
        trace.append((name, y))
        x, summed = (x + y, f"{stream} + {name}") if residual else (y, name)
        if norm_first:
            stream = summed
            if residual and not last:
                trace.append((stream, x))
        else:
            if residual:
                trace.append((summed, x))
            x = layer_norm(x, gamma, beta, eps)  # (..., s, d)
            stream = f"h{i}"
            if not last:
                trace.append((f"h{i} = LN{i}({summed})", x))
    trace.append(("output", x))
    return trace


# ------------------------------------------------------------------ the encoder block


class EncoderBlock:
    """One transformer encoder block: self-attention and a feed-forward network, each
    with a residual connection and a LayerNorm (after it, or before it if norm_first).

    Parameters
    ----------
    attention : MultiHeadAttention
        The self-attention, width d and h heads.
    W_1 : array_like, shape (d, d_ff)
    b_1 : array_like, shape (d_ff,), or None
    W_2 : array_like, shape (d_ff, d)
    b_2 : array_like, shape (d,), or None
    norm1, norm2 : (gamma, beta), each array_like of shape (d,) or None, optional
        The two LayerNorms: norm1 goes with attention, norm2 with the feed-forward
        network. None (the default) is a fresh LayerNorm, gamma = 1 and beta = 0.
    norm_first : bool
        False: post-LN, ``LN(x + sublayer(x))`` (torch's default, BERT). True: pre-LN,
        ``x + sublayer(LN(x))`` (GPT-2).
    activation : {"relu", "gelu", "gelu_tanh"}
        Of the feed-forward network; "gelu" is exact (erf).
    eps : float
        LayerNorm's eps.

    Attributes
    ----------
    attention : MultiHeadAttention
    W_1, b_1, W_2, b_2 : numpy.ndarray (b_1, b_2 may be None)
    norm1, norm2 : tuple (gamma, beta) of numpy.ndarray (d,) or None
    d, h, d_ff : int
    norm_first : bool
    activation : str
    eps : float
    n_parameters : int
        Equal to ``sum(p.numel() for p in layer.parameters())`` of the torch layer.
    """

    def __init__(self, attention, W_1, b_1, W_2, b_2, norm1=None, norm2=None, *,
                 norm_first=False, activation="relu", eps=1e-5):
        self.attention = _attention(attention, "attention")
        d = self.attention.d
        self.W_1, self.b_1, self.W_2, self.b_2 = _ffn_weights(W_1, b_1, W_2, b_2, d)
        self.norm1 = _norm(norm1, "norm1", d)
        self.norm2 = _norm(norm2, "norm2", d)
        self.norm_first = _flag(norm_first, "norm_first")
        self.activation = _activation(activation)
        self.eps = _eps(eps)

    @classmethod
    def from_seed(cls, d: int, h: int, d_ff: int | None = None, seed: int = 0, *,
                  norm_first=False, activation="relu", eps=1e-5, bias: bool = True):
        """Random weights from a seeded numpy generator, fresh LayerNorms (1 and 0).

        Attention as :meth:`MultiHeadAttention.from_seed`; W_1, W_2 entries from
        N(0, 1/fan_in), biases from N(0, 0.1^2).

        Parameters
        ----------
        d, h : int
            Width and heads (h must divide d).
        d_ff : int, optional
            Hidden width of the feed-forward network; default 4 d.
        seed : int
        norm_first, activation, eps
            As in the constructor.
        bias : bool
            Biases in attention and the feed-forward network.

        Returns
        -------
        EncoderBlock
        """
        d = positive_int(d, "d")
        d_ff = 4 * d if d_ff is None else positive_int(d_ff, "d_ff")
        seed = whole_number(seed, "seed", 0)
        mha = MultiHeadAttention.from_seed(d, h, seed=seed, bias=bias)
        W_1, b_1, W_2, b_2 = _random_ffn(d, d_ff, seed, bias)
        norms = [_fresh_norm(d, bias) for _ in range(2)]
        return cls(mha, W_1, b_1, W_2, b_2, *norms, norm_first=norm_first,
                   activation=activation, eps=eps)

    @classmethod
    def from_torch(cls, layer) -> "EncoderBlock":
        """Copy a ``torch.nn.TransformerEncoderLayer``'s weights into an EncoderBlock.

        Linear weights are transposed to row-vector form (``linear1.weight``:(d_ff, d)
        -> W_1:(d, d_ff)). ``batch_first`` does not matter: the block always takes
        (b, s, d). The layer must be in eval mode (dropout is not implemented here).

        Parameters
        ----------
        layer : torch.nn.TransformerEncoderLayer
            relu or gelu activation (function, name or nn.ReLU/nn.GELU module), the same
            eps in both norms, kdim = vdim = d.

        Returns
        -------
        EncoderBlock
            In the layer's dtype (call ``layer.double()`` first for float64).
        """
        kind = "TransformerEncoderLayer"
        _check_eval(layer, kind, ["self_attn"])
        lin1, lin2 = _get(layer, "linear1", kind), _get(layer, "linear2", kind)
        return cls(
            _mha_from_torch(_get(layer, "self_attn", kind), kind),
            _numpy(lin1.weight).T, _numpy(lin1.bias),  # (d_ff, d)^T -> (d, d_ff)
            _numpy(lin2.weight).T, _numpy(lin2.bias),  # (d, d_ff)^T -> (d_ff, d)
            _norm_from_torch(_get(layer, "norm1", kind)),
            _norm_from_torch(_get(layer, "norm2", kind)),
            norm_first=bool(_get(layer, "norm_first", kind)),
            activation=_activation_from_torch(layer, kind),
            eps=_eps_from_torch(layer, ("norm1", "norm2"), kind),
        )

    @property
    def d(self) -> int:
        """Model width d."""
        return self.attention.d

    @property
    def h(self) -> int:
        """Number of heads h."""
        return self.attention.h

    @property
    def d_ff(self) -> int:
        """Hidden width of the feed-forward network."""
        return self.W_1.shape[1]

    @property
    def n_parameters(self) -> int:
        """Learned numbers: attention + W_1, b_1, W_2, b_2 + both norms' gamma and beta."""
        return self.attention.n_parameters + _count(
            self.W_1, self.b_1, self.W_2, self.b_2, *self.norm1, *self.norm2)

    def __repr__(self) -> str:
        return (f"EncoderBlock(d={self.d}, h={self.h}, d_ff={self.d_ff}, "
                f"norm_first={self.norm_first}, activation={self.activation!r}, "
                f"eps={self.eps:g})")

    def _trace(self, x, padding, mask, residual):
        x = _sequence(x, "x", self.d)
        padding = _padding(padding, "padding", x, "x")
        s = x.shape[-2]
        if mask is not None:
            mask = check_mask(mask, (*x.shape[:-2], s, s))
        pad = None if padding is None else key_padding_to_attention_mask(padding)
        attend = combine_masks(pad, mask)  # (..., s, s) or None
        weights = []

        def attention(inp, trace):
            out, w = self.attention(inp, mask=attend)  # (..., s, d), (..., h, s, s)
            weights.append(w)
            return out

        def ffn(inp, trace):
            return _ffn(inp, self.W_1, self.b_1, self.W_2, self.b_2, self.activation, trace)

        trace = _run(x, [("attention", attention), ("FFN out", ffn)],
                     [self.norm1, self.norm2], norm_first=self.norm_first,
                     residual=_flag(residual, "residual"), eps=self.eps)
        return trace, weights[0]

    def forward(self, x, padding=None, mask=None, residual=True):
        """The block's output and its self-attention weights.

        Parameters
        ----------
        x : array_like, shape (b, s, d) or (s, d)
            (More leading axes work too: (..., s, d).)
        padding : array_like of bool, shape (b, s) or (s,), optional
            True = a real token. Padding keys are not attended to; padding rows are
            computed but meaningless.
        mask : array_like of bool, broadcastable to (b, s, s), optional
            True = may attend, e.g. ``causal_mask(s)`` for a decoder-only model;
            combined (AND) with ``padding``.
        residual : bool
            False drops both residual additions (to see what they do).

        Returns
        -------
        output : numpy.ndarray, same shape as x
        weights : numpy.ndarray, shape (b, h, s, s) or (h, s, s)
        """
        trace, weights = self._trace(x, padding, mask, residual)
        return trace[-1][1], weights

    def __call__(self, x, padding=None, mask=None, residual=True) -> np.ndarray:
        """The block's output, same shape as x; see :meth:`forward`."""
        return self.forward(x, padding, mask, residual)[0]

    def trace(self, x, padding=None, mask=None, residual=True) -> list:
        """Every intermediate array of the block, in computation order.

        Post-LN (residual=True): ``x``, ``attention`` (= MHA(x)), ``x + attention``,
        ``h1 = LN1(x + attention)``, ``FFN hidden (d_ff)``, ``FFN out``,
        ``h1 + FFN out``, ``output`` (= LN2(h1 + FFN out)).

        Pre-LN (residual=True): ``x``, ``LN1(x)``, ``attention`` (= MHA(LN1(x))),
        ``x + attention``, ``LN2(x + attention)``, ``FFN hidden (d_ff)``, ``FFN out``,
        ``output`` (= x + attention + FFN out). The residual stream is ``x``,
        ``x + attention``, ``output``.

        With residual=False the sums are left out (e.g. ``h1 = LN1(attention)``).

        Parameters
        ----------
        x, padding, mask, residual
            As in :meth:`forward`.

        Returns
        -------
        list of (str, numpy.ndarray)
            Every array is (b, s, d) or (s, d), except ``FFN hidden (d_ff)``:
            (b, s, d_ff) or (s, d_ff).
        """
        return self._trace(x, padding, mask, residual)[0]


def _fresh_norm(d: int, bias: bool):
    """A new LayerNorm's (gamma, beta): 1 and 0; no beta without biases (as torch)."""
    return np.ones(d), (np.zeros(d) if bias else None)


def _random_ffn(d: int, d_ff: int, seed: int, bias: bool):
    rng = np.random.default_rng([seed, 1])  # a stream apart from the attention's
    W_1 = rng.normal(0.0, 1.0 / math.sqrt(d), (d, d_ff))  # (d, d_ff)
    W_2 = rng.normal(0.0, 1.0 / math.sqrt(d_ff), (d_ff, d))  # (d_ff, d)
    b_1 = rng.normal(0.0, 0.1, d_ff) if bias else None  # (d_ff,)
    b_2 = rng.normal(0.0, 0.1, d) if bias else None  # (d,)
    return W_1, b_1, W_2, b_2


# ------------------------------------------------------------------ the decoder block


class DecoderBlock:
    """One transformer decoder block (encoder-decoder models): causal self-attention,
    cross-attention to the encoder's output (the memory), and a feed-forward network,
    each with a residual connection and a LayerNorm, as ``nn.TransformerDecoderLayer``::

        post-LN: x = LN1(x + SelfMHA(x)); x = LN2(x + CrossMHA(x, memory));
                 x = LN3(x + FFN(x))
        pre-LN:  x = x + SelfMHA(LN1(x)); x = x + CrossMHA(LN2(x), memory);
                 x = x + FFN(LN3(x))

    Parameters
    ----------
    self_attention, cross_attention : MultiHeadAttention
        Same width d.
    W_1, b_1, W_2, b_2
        Feed-forward weights, as in :class:`EncoderBlock`.
    norm1, norm2, norm3 : (gamma, beta), optional
        None is a fresh LayerNorm (gamma = 1, beta = 0).
    norm_first : bool
    activation : {"relu", "gelu", "gelu_tanh"}
    eps : float

    Attributes
    ----------
    self_attention, cross_attention : MultiHeadAttention
    d, h, d_ff, norm_first, activation, eps, n_parameters
        As in :class:`EncoderBlock`.
    """

    def __init__(self, self_attention, cross_attention, W_1, b_1, W_2, b_2, norm1=None,
                 norm2=None, norm3=None, *, norm_first=False, activation="relu", eps=1e-5):
        self.self_attention = _attention(self_attention, "self_attention")
        d = self.self_attention.d
        self.cross_attention = _attention(cross_attention, "cross_attention", d)
        self.W_1, self.b_1, self.W_2, self.b_2 = _ffn_weights(W_1, b_1, W_2, b_2, d)
        self.norm1 = _norm(norm1, "norm1", d)
        self.norm2 = _norm(norm2, "norm2", d)
        self.norm3 = _norm(norm3, "norm3", d)
        self.norm_first = _flag(norm_first, "norm_first")
        self.activation = _activation(activation)
        self.eps = _eps(eps)

    @classmethod
    def from_seed(cls, d: int, h: int, d_ff: int | None = None, seed: int = 0, *,
                  norm_first=False, activation="relu", eps=1e-5, bias: bool = True):
        """Random weights, as :meth:`EncoderBlock.from_seed` (cross-attention: seed + 1)."""
        d = positive_int(d, "d")
        d_ff = 4 * d if d_ff is None else positive_int(d_ff, "d_ff")
        seed = whole_number(seed, "seed", 0)
        sa = MultiHeadAttention.from_seed(d, h, seed=seed, bias=bias)
        ca = MultiHeadAttention.from_seed(d, h, seed=seed + 1, bias=bias)
        norms = [_fresh_norm(d, bias) for _ in range(3)]
        return cls(sa, ca, *_random_ffn(d, d_ff, seed, bias), *norms, norm_first=norm_first,
                   activation=activation, eps=eps)

    @classmethod
    def from_torch(cls, layer) -> "DecoderBlock":
        """Copy a ``torch.nn.TransformerDecoderLayer``'s weights into a DecoderBlock.

        ``self_attn`` becomes the self-attention, ``multihead_attn`` the
        cross-attention; otherwise as :meth:`EncoderBlock.from_torch` (eval mode,
        relu or gelu, one eps, batch_first either way).

        Parameters
        ----------
        layer : torch.nn.TransformerDecoderLayer

        Returns
        -------
        DecoderBlock
        """
        kind = "TransformerDecoderLayer"
        _check_eval(layer, kind, ["self_attn", "multihead_attn"])
        lin1, lin2 = _get(layer, "linear1", kind), _get(layer, "linear2", kind)
        return cls(
            _mha_from_torch(_get(layer, "self_attn", kind), kind),
            _mha_from_torch(_get(layer, "multihead_attn", kind), kind),
            _numpy(lin1.weight).T, _numpy(lin1.bias),  # (d_ff, d)^T -> (d, d_ff)
            _numpy(lin2.weight).T, _numpy(lin2.bias),  # (d, d_ff)^T -> (d_ff, d)
            *(_norm_from_torch(_get(layer, n, kind)) for n in ("norm1", "norm2", "norm3")),
            norm_first=bool(_get(layer, "norm_first", kind)),
            activation=_activation_from_torch(layer, kind),
            eps=_eps_from_torch(layer, ("norm1", "norm2", "norm3"), kind),
        )

    @property
    def d(self) -> int:
        """Model width d."""
        return self.self_attention.d

    @property
    def h(self) -> int:
        """Number of heads of the self-attention."""
        return self.self_attention.h

    @property
    def d_ff(self) -> int:
        """Hidden width of the feed-forward network."""
        return self.W_1.shape[1]

    @property
    def n_parameters(self) -> int:
        """Learned numbers: both attentions, the feed-forward network, three norms."""
        return (self.self_attention.n_parameters + self.cross_attention.n_parameters
                + _count(self.W_1, self.b_1, self.W_2, self.b_2,
                         *self.norm1, *self.norm2, *self.norm3))

    def __repr__(self) -> str:
        return (f"DecoderBlock(d={self.d}, h={self.h}, d_ff={self.d_ff}, "
                f"norm_first={self.norm_first}, activation={self.activation!r}, "
                f"eps={self.eps:g})")

    def _trace(self, x, memory, memory_padding, padding, residual):
        x = _sequence(x, "x", self.d)
        memory = _sequence(memory, "memory", self.d)
        if memory.shape[:-2] != x.shape[:-2]:
            raise ValueError(f"memory has shape {memory.shape} but x has shape {x.shape}: "
                             f"both must be (b, s, d) with the same b, or both (s, d)")
        padding = _padding(padding, "padding", x, "x")
        memory_padding = _padding(memory_padding, "memory_padding", memory, "memory")
        pad = None if padding is None else key_padding_to_attention_mask(padding)
        self_mask = combine_masks(causal_mask(x.shape[-2]), pad)  # (..., s, s)
        cross_mask = (None if memory_padding is None  # (..., 1, s_mem)
                      else key_padding_to_attention_mask(memory_padding))
        weights = {}

        def self_attention(inp, trace):
            out, weights["self"] = self.self_attention(inp, mask=self_mask)  # (..., s, d)
            return out

        def cross_attention(inp, trace):
            # queries from the decoder (..., s, d), keys/values from memory (..., s_mem, d)
            out, weights["cross"] = self.cross_attention(inp, memory, mask=cross_mask)
            return out

        def ffn(inp, trace):
            return _ffn(inp, self.W_1, self.b_1, self.W_2, self.b_2, self.activation, trace)

        trace = _run(x, [("self-attention", self_attention),
                         ("cross-attention", cross_attention), ("FFN out", ffn)],
                     [self.norm1, self.norm2, self.norm3], norm_first=self.norm_first,
                     residual=_flag(residual, "residual"), eps=self.eps)
        return trace, weights["self"], weights["cross"]

    def forward(self, x, memory, memory_padding=None, padding=None, residual=True):
        """The block's output and both attentions' weights.

        Parameters
        ----------
        x : array_like, shape (b, s, d) or (s, d)
            The decoder's input (target tokens so far).
        memory : array_like, shape (b, s_mem, d) or (s_mem, d)
            The encoder's output.
        memory_padding : array_like of bool, shape (b, s_mem) or (s_mem,), optional
            True = a real memory token; padding is not attended to by cross-attention.
        padding : array_like of bool, shape (b, s) or (s,), optional
            True = a real target token; combined with the (always applied) causal mask.
        residual : bool
            False drops the three residual additions.

        Returns
        -------
        output : numpy.ndarray, same shape as x
        self_weights : numpy.ndarray, shape (b, h, s, s) or (h, s, s)
        cross_weights : numpy.ndarray, shape (b, h, s, s_mem) or (h, s, s_mem)
        """
        trace, w_self, w_cross = self._trace(x, memory, memory_padding, padding, residual)
        return trace[-1][1], w_self, w_cross

    def __call__(self, x, memory, memory_padding=None, padding=None, residual=True):
        """The block's output, same shape as x; see :meth:`forward`."""
        return self.forward(x, memory, memory_padding, padding, residual)[0]

    def trace(self, x, memory, memory_padding=None, padding=None, residual=True) -> list:
        """Every intermediate array, in order, named as in :meth:`EncoderBlock.trace`
        with ``self-attention`` and ``cross-attention`` sub-layers (post-LN: h1, h2 after
        LN1, LN2; pre-LN: ``x + self-attention + cross-attention`` and so on).

        Returns
        -------
        list of (str, numpy.ndarray)
        """
        return self._trace(x, memory, memory_padding, padding, residual)[0]


# ------------------------------------------------------------------ counting


def _ffn_and_bias(d, d_ff, bias) -> tuple[int, int, bool]:
    d = positive_int(d, "d")
    d_ff = 4 * d if d_ff is None else positive_int(d_ff, "d_ff")
    return d, d_ff, _flag(bias, "bias")


def encoder_block_parameters(d: int, d_ff: int | None = None, bias: bool = True) -> int:
    """Learned numbers of one encoder block (= torch's TransformerEncoderLayer).

    Attention ``4 d^2 + 4 d``, feed-forward ``2 d d_ff + d_ff + d``, two LayerNorms
    ``4 d``; in all ``4 d^2 + 2 d d_ff + d_ff + 9 d``, which is ``12 d^2 + 13 d`` for
    d_ff = 4 d. Without biases (torch's ``bias=False``, which also drops LayerNorm's
    beta): ``4 d^2 + 2 d d_ff + 2 d``.

    Parameters
    ----------
    d : int
    d_ff : int, optional
        Default 4 d.
    bias : bool

    Returns
    -------
    int
    """
    d, d_ff, bias = _ffn_and_bias(d, d_ff, bias)
    if bias:
        return 4 * d * d + 2 * d * d_ff + d_ff + 9 * d
    return 4 * d * d + 2 * d * d_ff + 2 * d


def decoder_block_parameters(d: int, d_ff: int | None = None, bias: bool = True) -> int:
    """Learned numbers of one decoder block (= torch's TransformerDecoderLayer).

    Two attentions ``8 d^2 + 8 d``, feed-forward ``2 d d_ff + d_ff + d``, three
    LayerNorms ``6 d``; in all ``8 d^2 + 2 d d_ff + d_ff + 15 d`` (``16 d^2 + 19 d`` for
    d_ff = 4 d); without biases ``8 d^2 + 2 d d_ff + 3 d``.

    Parameters
    ----------
    d : int
    d_ff : int, optional
        Default 4 d.
    bias : bool

    Returns
    -------
    int
    """
    d, d_ff, bias = _ffn_and_bias(d, d_ff, bias)
    if bias:
        return 8 * d * d + 2 * d * d_ff + d_ff + 15 * d
    return 8 * d * d + 2 * d * d_ff + 3 * d


# ------------------------------------------------------------------ stacks of blocks


def encoder_stack(depth: int, d: int, h: int, seed: int = 0, *, d_ff: int | None = None,
                  norm_first=False, activation="relu", eps=1e-5) -> list:
    """``depth`` random encoder blocks, layer i drawn by ``EncoderBlock.from_seed`` with
    seed ``1000 * seed + i``.

    So layer 0 of seed 0 is ``EncoderBlock.from_seed(d, h, seed=0)``, a shallower stack is
    the start of a deeper one with the same seed, and the weights do not depend on
    ``norm_first``: a pre-LN and a post-LN stack of one seed differ only in where their
    LayerNorms sit.

    Parameters
    ----------
    depth : int
        Number of blocks, at least 1.
    d, h : int
        Width and heads (h must divide d).
    seed : int
        0..999 999.
    d_ff, norm_first, activation, eps
        As in :meth:`EncoderBlock.from_seed`.

    Returns
    -------
    list of EncoderBlock, length depth
    """
    depth = positive_int(depth, "depth")
    seed = whole_number(seed, "seed", 0, 999_999)
    return [EncoderBlock.from_seed(d, h, d_ff, 1000 * seed + i, norm_first=norm_first,
                                   activation=activation, eps=eps) for i in range(depth)]


def _blocks(blocks) -> list:
    blocks = list(blocks) if isinstance(blocks, (list, tuple)) else None
    if not blocks or not all(isinstance(b, EncoderBlock) for b in blocks):
        raise ValueError("blocks must be a non-empty list of EncoderBlock (e.g. from "
                         "encoder_stack(depth, d, h))")
    if len({b.d for b in blocks}) != 1:
        raise ValueError(f"every block of a stack must have the same d, got "
                         f"{[b.d for b in blocks]}")
    return blocks


def stack_trace(blocks, x, padding=None, mask=None, residual=True):
    """Run x through a stack of encoder blocks and keep the residual stream.

    The stream is what flows from sub-layer to sub-layer: the input, then after each
    block's attention sub-layer and after its feed-forward sub-layer. Post-LN: ``h1`` and
    the block's output (both just normalised). Pre-LN: ``x + attention`` and the output
    (never normalised). With ``residual=False`` the sums are left out (post-LN
    ``LN1(attention)``, pre-LN ``attention``).

    Parameters
    ----------
    blocks : list of EncoderBlock, length L
        The same width d; each may be pre- or post-LN.
    x : array_like, shape (b, s, d) or (s, d)
    padding, mask, residual
        As in :meth:`EncoderBlock.forward`, used by every block.

    Returns
    -------
    stream : list of (str, numpy.ndarray), length 2 L + 1
        ``("x", x)``, then ``("layer 1 attention", ...)``, ``("layer 1 FFN", ...)``, ...;
        every array has x's shape. The last one is the stack's output.
    weights : list of numpy.ndarray, length L
        Each block's self-attention weights, (b, h, s, s) or (h, s, s).
    """
    blocks = _blocks(blocks)
    x = _sequence(x, "x", blocks[0].d)
    stream, weights = [("x", x)], []
    for i, block in enumerate(blocks, start=1):
        trace, w = block._trace(x, padding, mask, residual)
        names = [name for name, _ in trace]
        if block.norm_first:  # the stream is what LN2 reads: the entry before "LN2(...)"
            mid = next(k for k, n in enumerate(names) if n.startswith("LN2(")) - 1
        else:  # the stream is h1 = LN1(...)
            mid = next(k for k, n in enumerate(names) if n.startswith("h1 = "))
        x = trace[-1][1]
        stream += [(f"layer {i} attention", trace[mid][1]), (f"layer {i} FFN", x)]
        weights.append(w)
    return stream, weights


def stream_norms(stream) -> np.ndarray:
    """The mean length of a token's vector at each point of a residual stream.

    Parameters
    ----------
    stream : list of (str, array_like), each (..., s, d)
        E.g. the first result of :func:`stack_trace`; s >= 1.

    Returns
    -------
    numpy.ndarray, shape (len(stream),)
        ``mean over tokens of ||x_i||`` (the Euclidean norm of each row of d numbers).
        A LayerNorm output with gamma = 1 and beta = 0 has norm about sqrt(d).
    """
    norms = []
    for name, a in stream:
        a = as_float_array(a, str(name), min_ndim=2)
        if a.shape[-2] == 0:
            raise ValueError(f"{name} has no tokens (shape {a.shape}): a norm needs s >= 1")
        norms.append(float(np.linalg.norm(a, axis=-1).mean()))  # (..., s, d) -> (..., s)
    return np.array(norms)


def jacobian_gain(blocks, x, mask=None, residual=True, eps: float = 1e-5) -> np.ndarray:
    """How strongly a change of the input reaches each layer: ``||J_l||_F / sqrt(s d)``.

    ``J_l`` is the Jacobian of the stream after layer l with respect to the input x:(s, d),
    measured by central differences, one input number at a time (all s d of them, as one
    batch). The gain is 1 for the identity. ``J_l^T`` is what carries a gradient from
    layer l back to the input, and has the same Frobenius norm: a gain near 0 means the
    gradient vanishes on its way back, a large one that it explodes.

    Parameters
    ----------
    blocks : list of EncoderBlock, length L
    x : array_like, shape (s, d)
        One sentence (no batch axis).
    mask : array_like of bool, shape (s, s), optional
        True = may attend, e.g. ``causal_mask(s)``.
    residual : bool
        False drops every residual addition.
    eps : float
        The step of the central differences (the error is about eps^2).

    Returns
    -------
    numpy.ndarray, shape (L + 1,)
        The gain at the input (1, up to rounding) and after each of the L blocks.
    """
    blocks = _blocks(blocks)
    x = _sequence(x, "x", blocks[0].d).astype(np.float64)
    if x.ndim != 2:
        raise ValueError(f"x must be one sentence (s, d), got shape {x.shape}")
    eps = _eps(eps)
    s, d = x.shape
    n = s * d
    steps = eps * np.eye(n).reshape(n, s, d)  # (n, s, d): one input number nudged each
    batch = np.concatenate([x + steps, x - steps])  # (2n, s, d)
    stream, _ = stack_trace(blocks, batch, mask=mask, residual=residual)
    gains = []
    for _, out in [stream[0]] + stream[2::2]:  # the input, then after each block
        columns = (out[:n] - out[n:]) / (2 * eps)  # (n, s, d): column k of J = dy/dx_k
        gains.append(math.sqrt(float((columns**2).sum()) / n))
    return np.array(gains)


# ------------------------------------------------------------------ dropout


def _probability(p) -> float:
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= float(p) < 1.0:
        raise ValueError(f"p, the probability of dropping a number, must lie in [0, 1), got {p!r}")
    return float(p)


def dropout_keep(shape, p: float, seed: int = 0) -> np.ndarray:
    """Which numbers dropout keeps: each independently with probability ``1 - p``.

    Parameters
    ----------
    shape : tuple of int
        The shape of the array dropout will be applied to, e.g. (h, s, s) for attention
        weights or (s, d) for a sub-layer's output.
    p : float
        Probability of dropping a number, 0 <= p < 1 (0.1 in the paper).
    seed : int
        Seed of the numpy generator; the same seed gives the same mask.

    Returns
    -------
    keep : numpy.ndarray of bool, shape ``shape``
        True = kept.
    """
    p = _probability(p)
    shape = tuple(int(n) for n in np.atleast_1d(shape))
    return np.random.default_rng(seed).random(shape) >= p  # P(keep) = 1 - p


def dropout(x, p: float, keep=None, *, seed: int = 0, training: bool = True) -> np.ndarray:
    """Inverted dropout, as ``torch.nn.Dropout``: zero each number with probability p and
    divide the kept ones by ``1 - p``, so that the expectation is ``x``; the identity
    when not training.

    Parameters
    ----------
    x : array_like, any shape
        E.g. attention weights (..., h, s, s) or a sub-layer's output (..., s, d).
    p : float
        Probability of dropping a number, 0 <= p < 1.
    keep : array_like of bool, broadcastable to x's shape, optional
        Which numbers to keep (e.g. the mask torch drew, to compare with it). None: drawn
        by :func:`dropout_keep` with ``seed``.
    seed : int
        Seed for the mask when ``keep`` is None.
    training : bool
        False (evaluation, inference): return x unchanged, as ``module.eval()`` does.

    Returns
    -------
    numpy.ndarray, same shape as x
        ``x * keep / (1 - p)`` when training, else a copy of x.
    """
    x = as_float_array(x, "x", min_ndim=0)
    p = _probability(p)
    if not _flag(training, "training"):
        return x.copy()
    if keep is None:
        keep = dropout_keep(x.shape, p, seed)
    keep = np.asarray(keep)
    if keep.dtype != bool:
        raise ValueError(f"keep must be boolean (True = kept), got dtype {keep.dtype}")
    try:
        fits = np.broadcast_shapes(keep.shape, x.shape) == x.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"keep has shape {keep.shape} but x has shape {x.shape}: keep must "
                         f"broadcast to x's shape")
    return np.where(keep, x / (1.0 - p), 0.0).astype(x.dtype, copy=False)


# ------------------------------------------------- the modern block: RMSNorm and SwiGLU


def rms_norm(x, g=None, eps: float = 1e-6) -> np.ndarray:
    """Root-mean-square normalisation over the last axis (Zhang and Sennrich, 2019), as
    ``torch.nn.RMSNorm`` and the blocks of Llama.

    LayerNorm without the centring and without beta: each row is divided by its root mean
    square, then scaled by a learned gain g::

        RMSNorm(x) = x / sqrt(mean(x^2) + eps) * g

    A row keeps its direction (nothing is subtracted), and its RMS becomes 1 (length
    sqrt(d)) when g = 1. On a row whose mean is 0 it equals LayerNorm.

    Parameters
    ----------
    x : array_like, shape (..., d)
        E.g. (b, s, d); each of the ... rows is normalised on its own.
    g : array_like, shape (d,), optional
        Gain; None means 1.
    eps : float
        Added to the mean square; 1e-6 in Llama, 1e-5 in Llama 2.

    Returns
    -------
    numpy.ndarray, same shape as x
        float32 in, float32 out; otherwise float64.
    """
    x = as_float_array(x, "x", min_ndim=1)
    g = _vector(g, "g", x.shape[-1], "d")
    eps = _eps(eps)
    ms = (x * x).mean(axis=-1, keepdims=True)  # (..., d) -> (..., 1): the mean square
    y = x / np.sqrt(ms + eps)  # (..., d) / (..., 1)
    if g is not None:
        y = y * g.astype(x.dtype, copy=False)  # (..., d) * (d,)
    return y.astype(x.dtype, copy=False)


def silu(x) -> np.ndarray:
    """Sigmoid linear unit (also called swish), ``x * sigmoid(x)``, elementwise, as
    ``torch.nn.functional.silu``.

    Computed from ``exp(-|x|)``, which cannot overflow.

    Parameters
    ----------
    x : array_like, any shape

    Returns
    -------
    numpy.ndarray, same shape as x
        float32 in, float32 out; otherwise float64.
    """
    x = as_float_array(x, "x", min_ndim=0)
    e = np.exp(-np.abs(x))  # same shape as x, in (0, 1]
    sigmoid = np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return (x * sigmoid).astype(x.dtype, copy=False)


def swiglu(x, W_1, W_3, W_2) -> np.ndarray:
    """The gated feed-forward network of Llama, SwiGLU (Shazeer, 2020)::

        SwiGLU(x) = (silu(x @ W_1) * (x @ W_3)) @ W_2

    Two projections up to d_ff: one through SiLU, the *gate*, multiplies the other
    elementwise; then one projection back to d. No biases, as in Llama. Like
    :func:`feed_forward`, each row on its own.

    Parameters
    ----------
    x : array_like, shape (..., s, d)
    W_1 : array_like, shape (d, d_ff)
        The gate's projection (Llama's ``w1``, Hugging Face's ``gate_proj``).
    W_3 : array_like, shape (d, d_ff)
        The projection the gate multiplies (``w3``, ``up_proj``).
    W_2 : array_like, shape (d_ff, d)
        Back to d (``w2``, ``down_proj``).

    Returns
    -------
    numpy.ndarray, shape (..., s, d)
    """
    x = as_float_array(x, "x", min_ndim=1)
    W_1, _, W_2, _ = _ffn_weights(W_1, None, W_2, None)
    W_3 = as_float_array(W_3, "W_3", min_ndim=2)
    if W_3.shape != W_1.shape:
        raise ValueError(f"W_3 must have W_1's shape (d, d_ff) = {W_1.shape}, got shape "
                         f"{W_3.shape}")
    if x.shape[-1] != W_1.shape[0]:
        raise ValueError(f"x has shape {x.shape} but W_1 has shape {W_1.shape}: x's last "
                         f"axis must be d = {W_1.shape[0]}")
    gate = silu(x @ W_1.astype(x.dtype, copy=False))  # (..., s, d) @ (d, d_ff) -> (..., s, d_ff)
    up = x @ W_3.astype(x.dtype, copy=False)  # (..., s, d) @ (d, d_ff) -> (..., s, d_ff)
    return (gate * up) @ W_2.astype(x.dtype, copy=False)  # (..., s, d_ff) @ (d_ff, d) -> (..., s, d)


def swiglu_hidden_size(d: int, multiple_of: int = 1) -> int:
    """The hidden width Llama gives SwiGLU: two thirds of 4 d, rounded up to a multiple.

    SwiGLU has three (d, d_ff) matrices where the ReLU network has two, so Shazeer and
    Llama shrink d_ff to ``2/3 * 4 d``: then ``3 d d_ff = 8 d^2``, the ReLU network's
    count without biases. Llama's code takes ``int(2 * 4 d / 3)`` and rounds it up to a
    multiple of ``multiple_of`` (256 in Llama and Llama 2 7B: d = 4096 gives 11008).

    Parameters
    ----------
    d : int
    multiple_of : int

    Returns
    -------
    int
    """
    d, multiple_of = positive_int(d, "d"), positive_int(multiple_of, "multiple_of")
    hidden = int(2 * (4 * d) / 3)
    return multiple_of * -(-hidden // multiple_of)  # round up to a multiple


def feed_forward_parameters(d: int, d_ff: int | None = None, bias: bool = True) -> int:
    """Learned numbers of :func:`feed_forward`: ``2 d d_ff + d_ff + d`` with biases
    (``8 d^2 + 5 d`` for d_ff = 4 d), ``2 d d_ff`` without.

    Parameters
    ----------
    d : int
    d_ff : int, optional
        Default 4 d.
    bias : bool

    Returns
    -------
    int
    """
    d, d_ff, bias = _ffn_and_bias(d, d_ff, bias)
    return 2 * d * d_ff + (d_ff + d if bias else 0)


def swiglu_parameters(d: int, d_ff: int | None = None) -> int:
    """Learned numbers of :func:`swiglu`: ``3 d d_ff`` (no biases).

    Parameters
    ----------
    d : int
    d_ff : int, optional
        Default :func:`swiglu_hidden_size` (d), which makes it ``8 d^2`` when 3 divides d.

    Returns
    -------
    int
    """
    d = positive_int(d, "d")
    d_ff = swiglu_hidden_size(d) if d_ff is None else positive_int(d_ff, "d_ff")
    return 3 * d * d_ff


# ------------------------------------------------------------------ removing heads


def without_heads(block, heads) -> "EncoderBlock":
    """A copy of an encoder block in which the given heads write nothing (zero-ablation).

    A head's output z_i:(s, d_k) reaches the stream only through its d_k rows of W^O
    (``concat(z_0, ..., z_{h-1}) @ W^O``), so zeroing those rows removes exactly that
    head's write and leaves every other head, the bias b^O and the rest of the block as
    they were.

    Parameters
    ----------
    block : EncoderBlock
    heads : iterable of int
        Heads to remove, each in 0..h-1 (an empty one gives an unchanged copy).

    Returns
    -------
    EncoderBlock
        With its own copy of W^O; every other array is shared with ``block``.
    """
    if not isinstance(block, EncoderBlock):
        raise ValueError(f"block must be an EncoderBlock, got {type(block).__name__}")
    a = block.attention
    try:
        heads = [whole_number(k, "each head", 0, a.h - 1) for k in heads]
    except TypeError:
        raise ValueError(f"heads must be an iterable of head numbers, got {heads!r}") from None
    W_o = a.W_o.copy()  # (d, d): rows k d_k .. (k + 1) d_k multiply head k's z
    for k in heads:
        W_o[k * a.d_k:(k + 1) * a.d_k] = 0.0
    mha = MultiHeadAttention(a.W_q, a.W_k, a.W_v, W_o, a.h, a.b_q, a.b_k, a.b_v, a.b_o)
    return EncoderBlock(mha, block.W_1, block.b_1, block.W_2, block.b_2, block.norm1,
                        block.norm2, norm_first=block.norm_first,
                        activation=block.activation, eps=block.eps)


def mean_pool(x, segments=None) -> np.ndarray:
    """The mean of each sentence's rows, scaled to length 1: the sentence vector of
    sentence-transformers models such as all-MiniLM-L6-v2 (mean pooling, then
    normalisation).

    Several sentences may be packed into one sequence (run with a block-diagonal mask,
    ``segments[:, None] == segments[None, :]``, so that no token sees another sentence);
    ``segments`` says which sentence each row belongs to.

    Parameters
    ----------
    x : array_like, shape (s, d)
        E.g. the last layer's output.
    segments : array_like of int, shape (s,), optional
        Row i belongs to sentence ``segments[i]``, in 0..n-1, each of them present. None:
        all rows are one sentence (n = 1).

    Returns
    -------
    numpy.ndarray, shape (n, d)
        One vector of length 1 per sentence.
    """
    x = as_float_array(x, "x", min_ndim=2)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (s, d), got shape {x.shape}")
    s = x.shape[0]
    segments = np.zeros(s, dtype=int) if segments is None else np.asarray(segments)
    if segments.shape != (s,) or not np.issubdtype(segments.dtype, np.integer):
        raise ValueError(f"segments must be whole numbers of shape (s,) = ({s},), got "
                         f"dtype {segments.dtype} and shape {segments.shape}")
    n = int(segments.max()) + 1 if s else 0
    counts = np.bincount(segments, minlength=n) if s and segments.min() >= 0 else None
    if counts is None or (counts == 0).any():
        raise ValueError("segments must number the sentences 0..n-1, each with at least "
                         f"one row, got {segments.tolist()}")
    member = (segments[None, :] == np.arange(n)[:, None]).astype(x.dtype)  # (n, s)
    v = member @ x / counts[:, None].astype(x.dtype)  # (n, s) @ (s, d) -> (n, d)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)
