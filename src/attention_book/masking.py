"""Masks: padding, causal, sliding-window and band masks, their torch polarities, and the
key/value cache of step-by-step decoding, in numpy.

The book's masks are boolean with True = "may attend" (the convention of PyTorch's
``torch.nn.functional.scaled_dot_product_attention``). A mask of shape (..., s_q, s_k)
says which key j query i may look at; a padding mask (b, s) says which positions hold a
real token (True) and which are padding (False).

PyTorch spells the same information three ways (the chapter's polarity table):

==========================================================  ==========================
PyTorch argument                                             "may attend" is written as
==========================================================  ==========================
``F.scaled_dot_product_attention(attn_mask=bool)``           True   (same as the book)
``F.scaled_dot_product_attention(attn_mask=float)``          0.0    (blocked: -inf)
``nn.MultiheadAttention(attn_mask=bool)``                    False  (True = ignore)
``nn.MultiheadAttention(key_padding_mask=bool)``             False  (True = padding)
``nn.Transformer.generate_square_subsequent_mask(s)``        0.0    (blocked: -inf)
==========================================================  ==========================

:func:`to_torch_mha_mask`, :func:`from_torch_mha_mask`, :func:`additive_mask` and
:func:`from_additive_mask` convert between them.

This module imports numpy only.
"""

from __future__ import annotations

import numpy as np

from ._validate import as_float_array, check_mask, positive_int, whole_number
from .attention import causal_mask, scaled_dot_product_attention, softmax
from .multihead import MultiHeadAttention, merge_heads, split_heads

__all__ = [
    "padding_mask",
    "key_padding_to_attention_mask",
    "combine_masks",
    "sliding_window_mask",
    "band_mask",
    "MASK_NAMES",
    "named_mask",
    "to_torch_mha_mask",
    "from_torch_mha_mask",
    "additive_mask",
    "from_additive_mask",
    "mask_after_softmax",
    "fully_masked_rows",
    "KVCache",
    "decode_with_cache",
    "kv_cache_numbers",
    "kv_cache_bytes",
    "decode_flops",
]


def _bool_array(mask, name: str, min_ndim: int = 1, meaning: str = "True = may attend"):
    """``mask`` as a numpy bool array with at least ``min_ndim`` axes, or a clear error."""
    arr = np.asarray(mask)
    if arr.dtype != bool:
        raise ValueError(
            f"{name} must be boolean ({meaning}), got dtype {arr.dtype}; build it with a "
            f"comparison, or convert a 0/1 array with {name}.astype(bool)"
        )
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} axes, got shape {arr.shape}")
    return arr


# ------------------------------------------------------------------ padding


def padding_mask(lengths, s: int) -> np.ndarray:
    """Which positions of a padded batch hold real tokens.

    Sentences of different lengths are stacked into one (b, s, d) array by appending
    padding tokens; sentence i's first ``lengths[i]`` positions are real.

    Parameters
    ----------
    lengths : array_like of int, shape (b,)
        Real tokens per sentence, each in 0..s. A single int gives one (s,) row.
    s : int
        The padded length (at least 1).

    Returns
    -------
    padding : numpy.ndarray of bool, shape (b, s)
        ``padding[i, j] = (j < lengths[i])``: True = a real token, False = padding.
    """
    s = positive_int(s, "s")
    arr = np.asarray(lengths)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(
            f"lengths must be whole numbers (an integer array), got dtype {arr.dtype}: "
            f"{arr.tolist()!r}"
        )
    bad = (arr < 0) | (arr > s)
    if bad.any():
        raise ValueError(
            f"lengths must be in 0..s = 0..{s} (a sentence cannot be longer than the "
            f"padded length), got {arr[bad].ravel()[0]}"
        )
    # (s,) < (..., 1) -> (..., s)
    return np.arange(s) < arr[..., None]


def key_padding_to_attention_mask(padding) -> np.ndarray:
    """Turn a padding mask into an attention mask that hides the padded keys.

    Every query may attend to every real key and to no padding key, so the (b, s) row of
    real tokens is repeated for every query by broadcasting: a new query axis of size 1.

    Parameters
    ----------
    padding : array_like of bool, shape (b, s) or (s,)
        True = a real token (e.g. from :func:`padding_mask`).

    Returns
    -------
    mask : numpy.ndarray of bool, shape (b, 1, s) or (1, s)
        Broadcasts to (b, s_q, s) with True = may attend.
    """
    padding = _bool_array(padding, "padding", meaning="True = a real token")
    return padding[..., None, :]  # (..., s) -> (..., 1, s): the same row for every query


def combine_masks(*masks):
    """Logical AND of boolean masks, with broadcasting: attend only where all allow it.

    Parameters
    ----------
    *masks : array_like of bool, or None
        E.g. ``causal_mask(s)`` (s, s) and ``key_padding_to_attention_mask(p)``
        (b, 1, s). None entries are skipped (no restriction).

    Returns
    -------
    mask : numpy.ndarray of bool, or None
        Shape: the broadcast of the masks' shapes, e.g. (b, s, s). None when every
        argument is None (or none is given).
    """
    given = [(i, _bool_array(m, f"mask {i}", min_ndim=0))
             for i, m in enumerate(masks) if m is not None]
    if not given:
        return None
    try:
        np.broadcast_shapes(*(m.shape for _, m in given))
    except ValueError:
        listed = ", ".join(f"mask {i} has shape {m.shape}" for i, m in given)
        raise ValueError(
            f"the masks do not broadcast: {listed}; each axis must be equal or 1 "
            f"(counting from the right)"
        ) from None
    out = given[0][1]
    for _, m in given[1:]:
        out = out & m  # broadcasts
    return np.array(out, dtype=bool)


# ------------------------------------------------------------------ shapes of masks


def _offsets(s: int) -> np.ndarray:
    """``offsets[i, j] = j - i``:(s, s), how far key j lies after query i."""
    idx = np.arange(s)
    return idx[None, :] - idx[:, None]  # (1, s) - (s, 1) -> (s, s)


def sliding_window_mask(s: int, window: int, causal: bool = True) -> np.ndarray:
    """Local attention: each query sees only the ``window`` nearest positions.

    Parameters
    ----------
    s : int
        Sequence length.
    window : int
        Window size, at least 1. ``window >= s`` with ``causal=True`` gives the full
        causal mask.
    causal : bool
        True: query i sees keys i-window+1 .. i (itself and the window-1 before it).
        False: keys with |i - j| < window on both sides.

    Returns
    -------
    mask : numpy.ndarray of bool, shape (s, s)
        ``mask[i, j] = 0 <= i - j < window`` (causal) or ``|i - j| < window``.
    """
    s = positive_int(s, "s")
    window = positive_int(window, "window")
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    back = -_offsets(s)  # (s, s): i - j, how far key j lies before query i
    if causal:
        return (back >= 0) & (back < window)
    return np.abs(back) < window


def band_mask(s: int, lower: int, upper: int) -> np.ndarray:
    """Band mask: query i sees keys from ``lower`` positions before to ``upper`` after.

    ``band_mask(s, s, 0)`` is the causal mask; ``band_mask(s, w-1, 0)`` the causal
    sliding window of size w; ``band_mask(s, 0, 0)`` lets each token see only itself.

    Parameters
    ----------
    s : int
        Sequence length.
    lower : int
        How many earlier keys each query sees (>= 0).
    upper : int
        How many later keys each query sees (>= 0).

    Returns
    -------
    mask : numpy.ndarray of bool, shape (s, s)
        ``mask[i, j] = -lower <= j - i <= upper``.
    """
    s = positive_int(s, "s")
    lower = whole_number(lower, "lower", 0)
    upper = whole_number(upper, "upper", 0)
    offsets = _offsets(s)  # (s, s): j - i
    return (offsets >= -lower) & (offsets <= upper)


#: The masks :func:`named_mask` builds.
MASK_NAMES = ("none", "causal", "padding", "window", "band")


def named_mask(name: str, s: int, *, padding=None, window: int = 1, lower: int = 0,
               upper: int = 0) -> np.ndarray:
    """A self-attention mask chosen by name.

    Parameters
    ----------
    name : str
        One of :data:`MASK_NAMES`: "none" (every query sees every key), "causal"
        (:func:`~attention_book.attention.causal_mask`), "padding" (no query sees a
        padding key), "window" (:func:`sliding_window_mask`, causal) or "band"
        (:func:`band_mask`).
    s : int
        Sequence length, at least 1.
    padding : array_like of bool, shape (s,)
        "padding" only: True = a real token (e.g. ``padding_mask(length, s)``).
    window : int
        "window" only: query i sees keys i-window+1 .. i (>= 1).
    lower, upper : int
        "band" only: query i sees keys i-lower .. i+upper (>= 0 each).

    Returns
    -------
    mask : numpy.ndarray of bool, shape (s, s)
        True = query i may attend to key j; a new array.
    """
    s = positive_int(s, "s")
    if not isinstance(name, str) or name not in MASK_NAMES:
        raise ValueError(f"unknown mask {name!r}: choose one of {list(MASK_NAMES)}")
    if name == "causal":
        return causal_mask(s)
    if name == "padding":
        if padding is None:
            raise ValueError("the padding mask needs padding: (s,) bool with True = a real "
                             "token, e.g. padding_mask(length, s)")
        padding = _bool_array(padding, "padding", meaning="True = a real token")
        if padding.shape != (s,):
            raise ValueError(f"padding must have shape (s,) = ({s},), got {padding.shape}")
        # (1, s): the same row for every query -> (s, s)
        return np.broadcast_to(key_padding_to_attention_mask(padding), (s, s)).copy()
    if name == "window":
        return sliding_window_mask(s, window)
    if name == "band":
        return band_mask(s, lower, upper)
    return np.ones((s, s), dtype=bool)


# ------------------------------------------------------------------ torch polarities


def to_torch_mha_mask(mask) -> np.ndarray:
    """The book's mask in ``nn.MultiheadAttention``'s polarity (True = ignore).

    ``nn.MultiheadAttention``'s boolean ``attn_mask`` and ``key_padding_mask`` (and the
    ``src_mask``/``src_key_padding_mask`` of the ``nn.Transformer*`` layers) mean True =
    "may NOT attend" / "is padding", the opposite of the book and of SDPA. Pass
    ``torch.from_numpy(to_torch_mha_mask(mask))``.

    Parameters
    ----------
    mask : array_like of bool, any shape
        True = may attend (or, for a padding mask, True = real token).

    Returns
    -------
    numpy.ndarray of bool, same shape
        ``~mask``: True = ignore.
    """
    return ~_bool_array(mask, "mask", min_ndim=0)


def from_torch_mha_mask(mask) -> np.ndarray:
    """An ``nn.MultiheadAttention`` boolean mask (True = ignore) in the book's polarity.

    Parameters
    ----------
    mask : array_like of bool, any shape
        True = may NOT attend (or = padding), as torch's ``attn_mask`` and
        ``key_padding_mask``; a CPU torch tensor works too.

    Returns
    -------
    numpy.ndarray of bool, same shape
        ``~mask``: True = may attend.
    """
    return ~_bool_array(mask, "mask", min_ndim=0, meaning="True = ignore, torch's polarity")


def additive_mask(mask, dtype=np.float64) -> np.ndarray:
    """The book's mask as a float mask that is added to the scores.

    ``softmax(scores + additive)`` gives the masked weights: adding 0 leaves a score
    alone and adding -inf makes its weight exp(-inf) = 0. This is what SDPA's float
    ``attn_mask`` and ``nn.Transformer.generate_square_subsequent_mask`` use.

    Parameters
    ----------
    mask : array_like of bool, any shape
        True = may attend.
    dtype : numpy floating dtype
        float64 by default.

    Returns
    -------
    numpy.ndarray, same shape
        0.0 where the mask is True, -inf where it is False.
    """
    mask = _bool_array(mask, "mask", min_ndim=0)
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise ValueError(f"dtype must be a floating-point dtype (to hold -inf), got {dtype}")
    return np.where(mask, 0.0, -np.inf).astype(dtype)


def from_additive_mask(float_mask) -> np.ndarray:
    """A 0 / -inf float mask back to the book's boolean mask.

    Float masks may also carry finite biases (e.g. ALiBi's distance penalties); those
    are not masks, so anything other than 0 and -inf is refused.

    Parameters
    ----------
    float_mask : array_like of float, any shape
        0 = may attend, -inf = blocked (e.g. ``generate_square_subsequent_mask(s)``;
        a CPU torch tensor works too).

    Returns
    -------
    numpy.ndarray of bool, same shape
        True where the entry is 0.
    """
    arr = as_float_array(float_mask, "float_mask", min_ndim=0, allow_neg_inf=True)
    other = ~((arr == 0) | np.isneginf(arr))
    if other.any():
        raise ValueError(
            f"float_mask must contain only 0 (may attend) and -inf (blocked), got "
            f"{float(arr[other].ravel()[0])}; finite values are biases, not a mask"
        )
    return arr == 0


# ------------------------------------------------------------------ right and wrong


def mask_after_softmax(scores, mask) -> np.ndarray:
    """The WRONG way to mask: softmax first, then zero the blocked weights.

    The blocked keys already took their share of the softmax's total of 1, so after
    zeroing them the remaining weights no longer sum to 1: a query with half its keys
    blocked keeps only part of its attention, and the output shrinks. The right way
    (``scaled_dot_product_attention(..., mask=mask)``) sets blocked *scores* to -inf
    before the softmax, so the allowed weights are renormalised to sum to 1.

    Parameters
    ----------
    scores : array_like, shape (..., s_q, s_k)
        Pre-softmax scores.
    mask : array_like of bool, broadcastable to (..., s_q, s_k)
        True = may attend.

    Returns
    -------
    weights : numpy.ndarray, shape (..., s_q, s_k)
        ``softmax(scores) * mask``; row sums are below 1 wherever something was
        masked.
    """
    scores = as_float_array(scores, "scores", min_ndim=2, allow_neg_inf=True)
    mask = check_mask(mask, scores.shape)
    return softmax(scores, axis=-1) * mask  # (..., s_q, s_k) * broadcast mask


def fully_masked_rows(mask) -> np.ndarray:
    """Queries that may attend to nothing (their mask row is all False).

    Such a row's softmax is 0/0: plain ``torch.softmax`` and ``nn.MultiheadAttention``
    give NaN, the book (and CPU SDPA in torch 2.13) give zero weights and a zero
    attention output.

    Parameters
    ----------
    mask : array_like of bool, shape (..., s_q, s_k)
        True = may attend.

    Returns
    -------
    numpy.ndarray of bool, shape (..., s_q)
        True for a query whose row has no True entry.
    """
    mask = _bool_array(mask, "mask", min_ndim=2)
    return ~mask.any(axis=-1)  # (..., s_q, s_k) -> (..., s_q)


# ------------------------------------------------------------------ decoding with a cache


class KVCache:
    """The keys and values of the tokens generated so far, one layer, every head.

    When a decoder generates token t, its query needs the keys and values of tokens
    0..t. Those of tokens 0..t-1 do not change (the causal mask means earlier tokens
    never look at later ones), so they are stored instead of recomputed: each step
    projects only the new token and appends its k and v.

    (A production cache preallocates its memory; this one concatenates, which is
    simpler to read.)

    Parameters
    ----------
    h : int
        Number of heads.
    d_k : int
        Width of each head.
    batch : tuple of int
        Leading (batch) axes, e.g. ``(b,)``; ``()`` for one sequence.

    Attributes
    ----------
    keys, values : numpy.ndarray, shape (*batch, h, t, d_k)
        Row t' holds token t''s key (value) in every head.
    """

    def __init__(self, h: int, d_k: int, batch: tuple = ()):
        self.h = positive_int(h, "h")
        self.d_k = positive_int(d_k, "d_k")
        if not isinstance(batch, tuple):
            raise ValueError(f"batch must be a tuple of whole numbers, got {batch!r}")
        self.batch = tuple(positive_int(n, "batch axis") for n in batch)
        self.keys = np.zeros((*self.batch, self.h, 0, self.d_k))  # (*batch, h, 0, d_k)
        self.values = np.zeros((*self.batch, self.h, 0, self.d_k))

    def append(self, k, v) -> None:
        """Add the newest token's keys and values (or several tokens' at once).

        Parameters
        ----------
        k, v : array_like, shape (*batch, h, t_new, d_k)
            E.g. ``split_heads(x_t @ W_k, h)`` for one new token (t_new = 1).
        """
        want = (*self.batch, self.h, None, self.d_k)
        pretty = "(" + ", ".join("t_new" if n is None else str(n) for n in want) + ")"
        arrays = []
        for name, a in (("k", k), ("v", v)):
            a = as_float_array(a, name, min_ndim=2)
            ok = a.ndim == len(want) and all(n is None or n == m for n, m in zip(want, a.shape))
            if not ok:
                raise ValueError(
                    f"{name} has shape {a.shape} but the cache holds (*batch, h, t, d_k) "
                    f"= {pretty}: {name} must have that shape"
                )
            arrays.append(a)
        if arrays[0].shape != arrays[1].shape:
            raise ValueError(f"k has shape {arrays[0].shape} but v has shape "
                             f"{arrays[1].shape}: one key and one value per new token")
        first = self.length == 0  # adopt the dtype of the first keys (float32 stays so)
        # (*batch, h, t, d_k) + (*batch, h, t_new, d_k) -> (*batch, h, t + t_new, d_k)
        self.keys = arrays[0].copy() if first else np.concatenate([self.keys, arrays[0]], -2)
        self.values = arrays[1].copy() if first else np.concatenate([self.values, arrays[1]], -2)

    @property
    def length(self) -> int:
        """t, the number of tokens cached."""
        return self.keys.shape[-2]

    def __len__(self) -> int:
        return self.length

    @property
    def n_numbers(self) -> int:
        """Numbers stored: keys plus values, ``2 * batch * h * t * d_k`` (= 2 t d each)."""
        return int(self.keys.size + self.values.size)

    def __repr__(self) -> str:
        return (f"KVCache(h={self.h}, d_k={self.d_k}, batch={self.batch}, "
                f"t={self.length}, n_numbers={self.n_numbers})")


def _linear(x, W, b):
    """Row-vector affine map in x's dtype: (..., n, d) @ (d, m) + (m,) -> (..., n, m)."""
    y = x @ W.astype(x.dtype, copy=False)  # (..., n, d) @ (d, m) -> (..., n, m)
    return y if b is None else y + b.astype(x.dtype, copy=False)


def decode_with_cache(mha, x, *, padding=None, return_cache: bool = False):
    """Causal self-attention computed one position at a time, with a key/value cache.

    This is how a decoder generates text: at step t only token t is new. Its q, k, v are
    projected (one row each), k and v are appended to the cache, and q attends to the
    whole cache, which holds exactly positions 0..t, so no causal mask is needed. The
    result equals the full causal pass ``mha(x, mask=causal_mask(s))[0]`` (to rounding).
    A batch whose sentences are padded (on the left, as for generation) still needs the
    key-padding mask: the cache holds the padding keys too, and ``padding`` hides them
    (the result then equals the causal pass with :func:`combine_masks` of both masks).

    Parameters
    ----------
    mha : MultiHeadAttention
        With or without biases.
    x : array_like, shape (s, d) or (b, s, d)
        The tokens, in order; row t is only used at step t.
    padding : array_like of bool, shape (s,) or (b, s), optional
        True = a real token, False = padding (see :func:`padding_mask`). At step t the
        query may attend to the cached keys 0..t that are real; a query that may attend
        to none (left padding) gets a zero attention output before W^O. None: every
        token is real.
    return_cache : bool
        Also return the filled :class:`KVCache`.

    Returns
    -------
    output : numpy.ndarray, shape (s, d) or (b, s, d)
        Row t is the attention output of token t.
    cache : KVCache
        Only with ``return_cache=True``: keys and values (*batch, h, s, d_k).
    """
    if not isinstance(mha, MultiHeadAttention):
        raise ValueError(f"mha must be a MultiHeadAttention, got {type(mha).__name__}")
    x = as_float_array(x, "x", min_ndim=2)
    if x.shape[-1] != mha.d:
        raise ValueError(f"x has shape {x.shape} but the module has d={mha.d}: x must "
                         f"have shape (s, {mha.d}) or (b, s, {mha.d})")
    if padding is not None:
        padding = np.asarray(padding)  # (s,) or (b, s)
        if padding.dtype != bool or padding.shape != x.shape[:-1]:
            raise ValueError(
                f"padding must be boolean (True = a real token) with shape {x.shape[:-1]}, "
                f"one flag a token of x; got dtype {padding.dtype} and shape {padding.shape}")
    cache = KVCache(mha.h, mha.d_k, batch=x.shape[:-2])
    outputs = []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]  # (..., 1, d): only the newest token is projected
        q = split_heads(_linear(x_t, mha.W_q, mha.b_q), mha.h)  # (..., 1, d) -> (..., h, 1, d_k)
        k = split_heads(_linear(x_t, mha.W_k, mha.b_k), mha.h)  # (..., h, 1, d_k)
        v = split_heads(_linear(x_t, mha.W_v, mha.b_v), mha.h)  # (..., h, 1, d_k)
        cache.append(k, v)  # cache: (..., h, t+1, d_k), positions 0..t only
        # the real keys among 0..t: (..., t+1) -> (..., 1, 1, t+1), shared by the h heads
        keep = None if padding is None else padding[..., None, None, : t + 1]
        # (..., h, 1, d_k) attends to (..., h, t+1, d_k) -> (..., h, 1, d_k)
        heads, _ = scaled_dot_product_attention(q, cache.keys, cache.values, mask=keep)
        # (..., h, 1, d_k) -> (..., 1, d) -> @ W_o (d, d) -> (..., 1, d)
        outputs.append(_linear(merge_heads(heads), mha.W_o, mha.b_o))
    output = np.concatenate(outputs, axis=-2)  # s x (..., 1, d) -> (..., s, d)
    return (output, cache) if return_cache else output


# ------------------------------------------------------------------ what the cache costs


def kv_cache_numbers(n_layers: int, s: int, d: int, batch: int = 1) -> int:
    """How many numbers a decoder's key/value cache holds: ``2 n_layers s d batch``.

    Every layer stores one key and one value row of width d (h heads of d_k = d/h) per
    cached token per sequence; the count does not depend on h.

    Parameters
    ----------
    n_layers : int
        Decoder layers.
    s : int
        Tokens cached (prompt plus generated so far).
    d : int
        Model width.
    batch : int
        Sequences decoded together.

    Returns
    -------
    int
    """
    return (2 * positive_int(n_layers, "n_layers") * positive_int(s, "s")
            * positive_int(d, "d") * positive_int(batch, "batch"))


def kv_cache_bytes(n_layers: int, s: int, d: int, batch: int = 1,
                   bytes_per_number: int = 2) -> int:
    """Memory of the key/value cache: :func:`kv_cache_numbers` times bytes per number.

    Parameters
    ----------
    n_layers, s, d, batch : int
        As in :func:`kv_cache_numbers`.
    bytes_per_number : int
        2 for float16/bfloat16 (the usual for inference), 4 for float32.

    Returns
    -------
    int
    """
    return kv_cache_numbers(n_layers, s, d, batch) * positive_int(
        bytes_per_number, "bytes_per_number")


def decode_flops(s: int, d: int, cached: bool) -> int:
    """Rough multiply-add count of one attention layer generating s tokens one by one.

    Counted: the four (d, d) projections (q, k, v and W_o: ``4 d^2`` per row
    projected), the scores ``q . k`` (d per query-key pair, over all heads) and the
    weighted sum of values (d per pair). Left out: softmax, biases, the feed-forward
    network. One multiply-add is 2 floating-point operations in
    :func:`attention_book.cost.attention_flops`'s count.

    Without the cache, step t (t = 1..s) reruns the full causal pass over the t tokens
    so far: ``4 d^2 t`` for the projections plus ``2 d t^2`` for a full t x t score
    matrix and weighted sum. Summed over t::

        uncached = 2 d^2 s (s + 1) + d s (s + 1) (2 s + 1) / 3        ~ (2/3) d s^3

    With the cache, step t projects one row (``4 d^2``) and one query attends to t
    cached keys (``2 d t``)::

        cached = 4 d^2 s + d s (s + 1)                                ~ d s^2

    Parameters
    ----------
    s : int
        Tokens generated.
    d : int
        Model width.
    cached : bool
        With (True) or without (False) the key/value cache.

    Returns
    -------
    int
        Multiply-adds.
    """
    s, d = positive_int(s, "s"), positive_int(d, "d")
    if not isinstance(cached, (bool, np.bool_)):
        raise ValueError(f"cached must be True or False, got {cached!r}")
    if cached:
        return 4 * d * d * s + d * s * (s + 1)
    return 2 * d * d * s * (s + 1) + d * s * (s + 1) * (2 * s + 1) // 3

