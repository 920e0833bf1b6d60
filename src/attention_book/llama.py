"""A modern decoder, the Llama architecture, in numpy (chapter 10).

The pieces are the book's own: chapter 1's embedding lookup, chapter 7's RMSNorm and SwiGLU
(``block.rms_norm``, ``block.swiglu``), chapter 2's rotary positions
(``positional.rotary_embedding``), chapter 4's heads grown into grouped-query attention
(``multihead.GroupedQueryAttention``) and chapter 6's key/value cache (``masking.KVCache``,
with g heads). For token ids t_0..t_{s-1}::

    x_0 = E[t]                                                     (s, d)
    a_l, A_l = GQA_l(RMSNorm(x_{l-1}; g_attn))     A_l:(h, s, s)
    x'_l = x_{l-1} + a_l
    x_l  = x'_l + SwiGLU(RMSNorm(x'_l; g_ffn))                     l = 1..L
    logits = RMSNorm(x_L; g_out) @ E^T                             (s, V)

Pre-norm (each sublayer reads a normalised copy of the stream and adds its result back),
no biases anywhere, no position table (the positions enter only as RoPE's rotations of the
queries and keys), and the output layer tied to the embedding (``E^T``) unless the model
has its own.

Names follow llama.cpp's GGUF keys and Hugging Face's config (each field of
:class:`LlamaConfig` says which). Matrices are row-vector, (in, out): GGUF and PyTorch store
(out, in), and the loader (``attention_book.smollm``) transposes them.

The public surface, for the chapter, the lab and the browser engine's parity tests:
``LlamaModel.forward(ids, cache=None, *, heads_off=None, need_weights=True, hidden=False,
logits_from=0)`` returns :class:`LlamaOutput` (``logits`` (..., s, V); ``weights``, one
(..., h, s, t + s) array a layer; ``hidden`` (n_layers + 1, ..., s, d)), with ``cache`` from
``new_cache()`` holding the t earlier tokens; ``generate``, ``logit_lens``, ``unembed``,
``with_rope_pairs`` and ``parameter_counts`` build on it.

This module imports numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ._validate import as_float_array, positive_int, whole_number
from .block import rms_norm, silu
from .decoding import generate, largest
from .masking import KVCache
from .multihead import GroupedQueryAttention, kv_groups

__all__ = ["LlamaConfig", "LlamaBlock", "LlamaOutput", "LlamaModel", "Generation",
           "rope_permutation", "heads_off_mask", "token_ids", "kv_cache_bytes_gqa"]


@dataclass(frozen=True)
class LlamaConfig:
    """The hyperparameters of a Llama-architecture decoder.

    Attributes
    ----------
    n_layers : int
        Blocks L (GGUF ``llama.block_count``; HF ``num_hidden_layers``).
    d : int
        Model width (``llama.embedding_length``; ``hidden_size``).
    h : int
        Query heads (``llama.attention.head_count``; ``num_attention_heads``).
    g : int
        Key/value heads (``llama.attention.head_count_kv``, llama.cpp's ``n_head_kv``;
        ``num_key_value_heads``).
    d_ff : int
        SwiGLU's hidden width (``llama.feed_forward_length``; ``intermediate_size``).
    vocab_size : int
        Tokens V (``llama.vocab_size``, or the tokenizer's count).
    context : int
        Positions the model was trained on (``llama.context_length``;
        ``max_position_embeddings``).
    rope_theta : float
        RoPE's base (``llama.rope.freq_base``; ``rope_theta``).
    eps : float
        RMSNorm's epsilon (``llama.attention.layer_norm_rms_epsilon``; ``rms_norm_eps``).
    rope_pairs : {"adjacent", "halves"}
        The layout of W_q's and W_k's columns within each head: "adjacent" as a GGUF file
        stores them (llama.cpp), "halves" as Hugging Face does (:func:`rope_permutation`).
    """

    n_layers: int
    d: int
    h: int
    g: int
    d_ff: int
    vocab_size: int
    context: int
    rope_theta: float
    eps: float
    rope_pairs: str = "adjacent"

    def __post_init__(self):
        for name in ("n_layers", "d", "h", "g", "d_ff", "vocab_size", "context"):
            positive_int(getattr(self, name), name)
        if self.d % self.h or (self.d // self.h) % 2:
            raise ValueError(f"h={self.h} must divide d={self.d} into heads of an even width "
                             f"(RoPE turns pairs of columns)")
        kv_groups(self.h, self.g)  # g must divide h
        if self.rope_pairs not in ("adjacent", "halves"):
            raise ValueError(f'rope_pairs must be "adjacent" or "halves", got {self.rope_pairs!r}')

    @property
    def d_head(self) -> int:
        """Width of each head, d / h (``llama.rope.dimension_count``; ``head_dim``)."""
        return self.d // self.h

    @property
    def n_head_kv(self) -> int:
        """llama.cpp's name for g."""
        return self.g


def rope_permutation(h: int, d_head: int) -> np.ndarray:
    """The column permutation between RoPE's two layouts, for h heads of width d_head.

    GGUF files store W_q and W_k for RoPE on adjacent pairs (2i, 2i+1); Hugging Face's
    Llama turns the halves (i, i + d_head/2). Reordering each head's columns as
    (0, 2, 4, ..., d_head-2, 1, 3, ..., d_head-1) turns one layout into the other:
    ``W_halves = W_adjacent[:, perm]``, and the model computes the same scores (a head's
    pairs are the same pairs, only numbered differently).

    Parameters
    ----------
    h : int
        Heads (query heads for W_q, key/value heads g for W_k).
    d_head : int
        Width of each head, even.

    Returns
    -------
    numpy.ndarray of int64, shape (h d_head,)
    """
    h, d_head = positive_int(h, "h"), positive_int(d_head, "d_head")
    if d_head % 2:
        raise ValueError(f"d_head must be even (RoPE turns pairs), got {d_head}")
    within = np.concatenate([np.arange(0, d_head, 2), np.arange(1, d_head, 2)])  # (d_head,)
    return (np.arange(h)[:, None] * d_head + within[None, :]).ravel()  # (h, d_head) -> (h d_head,)


def heads_off_mask(heads_off, n_layers: int, h: int) -> np.ndarray | None:
    """Heads to switch off as an (n_layers, h) boolean array (True = off), or None.

    Parameters
    ----------
    heads_off : None, array_like of bool (n_layers, h), or iterable of (layer, head)
    n_layers, h : int

    Returns
    -------
    numpy.ndarray of bool, shape (n_layers, h), or None when no head is off
    """
    if heads_off is None:
        return None
    if isinstance(heads_off, np.ndarray) and heads_off.dtype == bool:
        if heads_off.shape != (n_layers, h):
            raise ValueError(f"heads_off must have shape (n_layers, h) = ({n_layers}, {h}), "
                             f"got {heads_off.shape}")
        return heads_off.copy() if heads_off.any() else None
    off = np.zeros((n_layers, h), dtype=bool)
    for pair in heads_off:
        try:
            layer, head = pair
        except (TypeError, ValueError):
            raise ValueError(f"heads_off must hold (layer, head) pairs, got {pair!r}") from None
        off[whole_number(layer, "layer", 0, n_layers - 1),
            whole_number(head, "head", 0, h - 1)] = True
    return off if off.any() else None


def token_ids(ids, vocab_size: int) -> np.ndarray:
    """Check token ids: whole numbers in 0..V-1, at least one, shape (s,) or (b, s).

    Raises
    ------
    ValueError
        "token id 50000 is outside the vocabulary (0..49151)", or an empty sequence.
    """
    a = np.asarray(ids)
    if a.size == 0:
        raise ValueError("no tokens: the model needs at least one token (an empty prompt has "
                         "nothing to continue)")
    if a.dtype.kind not in "iu":
        raise ValueError(f"token ids must be whole numbers, got dtype {a.dtype}")
    if a.ndim not in (1, 2):
        raise ValueError(f"token ids must have shape (s,) or (b, s), got shape {a.shape}")
    bad = a[(a < 0) | (a >= vocab_size)]
    if bad.size:
        raise ValueError(f"token id {int(bad.ravel()[0])} is outside the vocabulary "
                         f"(0..{vocab_size - 1})")
    return a.astype(np.int64)


def kv_cache_bytes_gqa(n_layers: int, s: int, g: int, d_head: int, batch: int = 1,
                       bytes_per_number: int = 2) -> int:
    """Bytes of a key/value cache when each layer keeps g key/value heads of width d_head:
    ``2 n_layers s g d_head batch bytes_per_number`` (keys and values).

    With g = h this is ``masking.kv_cache_bytes`` (width d = h d_head); grouped-query
    attention divides it by h / g.
    """
    return (2 * positive_int(n_layers, "n_layers") * positive_int(s, "s")
            * positive_int(g, "g") * positive_int(d_head, "d_head")
            * positive_int(batch, "batch") * positive_int(bytes_per_number, "bytes_per_number"))


class LlamaBlock:
    """One decoder block: pre-norm grouped-query attention, then pre-norm SwiGLU.

    ::

        x' = x + GQA(RMSNorm(x; attn_norm))
        y  = x' + (silu(n @ W_1) * (n @ W_3)) @ W_2,   n = RMSNorm(x'; ffn_norm)

    Parameters
    ----------
    attention : multihead.GroupedQueryAttention
    attn_norm, ffn_norm : array_like, shape (d,)
        The two RMSNorm gains.
    W_1, W_3 : array_like, shape (d, d_ff)
        SwiGLU's gate (``ffn_gate``, ``gate_proj``) and its up projection (``ffn_up``,
        ``up_proj``).
    W_2 : array_like, shape (d_ff, d)
        Back to d (``ffn_down``, ``down_proj``).
    eps : float
        RMSNorm's epsilon.
    """

    def __init__(self, attention, attn_norm, W_1, W_3, W_2, ffn_norm, eps: float):
        if not isinstance(attention, GroupedQueryAttention):
            raise ValueError(f"attention must be a GroupedQueryAttention, got "
                             f"{type(attention).__name__}")
        d = attention.d
        self.attention = attention
        self.attn_norm = as_float_array(attn_norm, "attn_norm")
        self.ffn_norm = as_float_array(ffn_norm, "ffn_norm")
        self.W_1 = as_float_array(W_1, "W_1", min_ndim=2)
        self.W_3 = as_float_array(W_3, "W_3", min_ndim=2)
        self.W_2 = as_float_array(W_2, "W_2", min_ndim=2)
        d_ff = self.W_1.shape[-1]
        for name, shape in (("attn_norm", (d,)), ("ffn_norm", (d,)), ("W_1", (d, d_ff)),
                            ("W_3", (d, d_ff)), ("W_2", (d_ff, d))):
            if getattr(self, name).shape != shape:
                raise ValueError(f"{name} must have shape {shape}, got "
                                 f"{getattr(self, name).shape}")
        self.eps = float(eps)

    @property
    def d_ff(self) -> int:
        return self.W_1.shape[1]

    def parameter_counts(self) -> dict:
        """Learned numbers of each piece: ``{"attention": ..., "swiglu": ..., "norms": ...}``."""
        return {"attention": self.attention.n_parameters,
                "swiglu": self.W_1.size + self.W_3.size + self.W_2.size,
                "norms": self.attn_norm.size + self.ffn_norm.size}

    def ffn(self, x) -> np.ndarray:
        """SwiGLU of the normalised stream: ``(silu(n W_1) * (n W_3)) W_2``, (..., s, d).

        The same as ``block.swiglu(n, W_1, W_3, W_2)``, without checking the three weight
        matrices again at every token."""
        n = rms_norm(x, self.ffn_norm, self.eps)  # (..., s, d)
        gate = silu(n @ self.W_1)  # (..., s, d) @ (d, d_ff) -> (..., s, d_ff)
        return (gate * (n @ self.W_3)) @ self.W_2  # (..., s, d_ff) @ (d_ff, d) -> (..., s, d)

    def __call__(self, x, cache=None, *, heads_off=None):
        """The block on the new tokens x:(..., s, d), after the t tokens in ``cache``.

        Returns
        -------
        x : numpy.ndarray, shape (..., s, d)
            The stream after the block.
        weights : numpy.ndarray, shape (..., h, s, t + s)
        """
        a, weights = self.attention(rms_norm(x, self.attn_norm, self.eps), cache,
                                    heads_off=heads_off)  # (..., s, d), (..., h, s, t+s)
        x = x + a
        return x + self.ffn(x), weights


@dataclass(frozen=True, eq=False)
class LlamaOutput:
    """What :meth:`LlamaModel.forward` returns for s new tokens after t cached ones.

    Attributes
    ----------
    logits : numpy.ndarray of float32, shape (..., s, V)
        Row i: the next-token logits after new token i.
    weights : tuple of numpy.ndarray, or None
        One (..., h, s, t + s) array per layer: every query head's attention weights over
        every key so far (None when not asked for).
    hidden : numpy.ndarray or None, shape (n_layers + 1, ..., s, d)
        The residual stream before block 0 (the embeddings) and after each block (None
        when not asked for).
    """

    logits: np.ndarray
    weights: tuple | None = None
    hidden: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class Generation:
    """A prompt and what the model wrote after it (:meth:`LlamaModel.generate`).

    Attributes
    ----------
    prompt : numpy.ndarray of int64, shape (s_0,)
    tokens : numpy.ndarray of int64, shape (n,)
        The generated tokens (n <= n_new: fewer when the stop token came).
    logits : numpy.ndarray, shape (n, V)
        The logits each token was chosen from.
    """

    prompt: np.ndarray
    tokens: np.ndarray
    logits: np.ndarray

    @property
    def sequence(self) -> np.ndarray:
        """Prompt and generated tokens, (s_0 + n,)."""
        return np.concatenate([self.prompt, self.tokens])


@dataclass(eq=False)
class LlamaModel:
    """A Llama-architecture decoder: embedding, blocks, final RMSNorm, output layer.

    Attributes
    ----------
    config : LlamaConfig
    embedding : numpy.ndarray, shape (V, d)
        E (``token_embd``, ``embed_tokens``).
    blocks : list of LlamaBlock
    final_norm : numpy.ndarray, shape (d,)
        (``output_norm``, ``norm``).
    output : numpy.ndarray of shape (d, V), or None
        The output layer's own matrix (``output``, ``lm_head``); None when it is tied to
        the embedding (logits = x E^T), as in SmolLM2.
    """

    config: LlamaConfig
    embedding: np.ndarray
    blocks: list
    final_norm: np.ndarray
    output: np.ndarray | None = None
    _unembed: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        c = self.config
        if self.embedding.shape != (c.vocab_size, c.d):
            raise ValueError(f"embedding must have shape (V, d) = ({c.vocab_size}, {c.d}), got "
                             f"{self.embedding.shape}")
        if len(self.blocks) != c.n_layers:
            raise ValueError(f"the config says {c.n_layers} blocks, got {len(self.blocks)}")
        if self.output is not None and self.output.shape != (c.d, c.vocab_size):
            raise ValueError(f"output must have shape (d, V) = ({c.d}, {c.vocab_size}), got "
                             f"{self.output.shape}")
        # (V, d) -> (d, V): a transposed view of E when tied, no copy
        self._unembed = self.embedding.T if self.output is None else self.output

    @classmethod
    def from_weights(cls, config: LlamaConfig, weights: dict) -> "LlamaModel":
        """Build the model from named row-vector arrays.

        Parameters
        ----------
        config : LlamaConfig
        weights : dict of str -> numpy.ndarray
            ``"embedding"`` (V, d), ``"final_norm"`` (d,), optionally ``"output"`` (d, V),
            and for each block l: ``"l.attn_norm"`` (d,), ``"l.W_q"`` (d, h d_head),
            ``"l.W_k"``, ``"l.W_v"`` (d, g d_head), ``"l.W_o"`` (h d_head, d),
            ``"l.ffn_norm"`` (d,), ``"l.W_1"``, ``"l.W_3"`` (d, d_ff), ``"l.W_2"`` (d_ff, d).
        """
        blocks = []
        for i in range(config.n_layers):
            w = {k.split(".", 1)[1]: v for k, v in weights.items() if k.startswith(f"{i}.")}
            attention = GroupedQueryAttention(w["W_q"], w["W_k"], w["W_v"], w["W_o"], config.h,
                                              config.g, rope_base=config.rope_theta,
                                              rope_pairs=config.rope_pairs)
            blocks.append(LlamaBlock(attention, w["attn_norm"], w["W_1"], w["W_3"], w["W_2"],
                                     w["ffn_norm"], config.eps))
        return cls(config, weights["embedding"], blocks, weights["final_norm"],
                   weights.get("output"))

    def weights(self) -> dict:
        """The named arrays :meth:`from_weights` takes (shared, not copied)."""
        out = {"embedding": self.embedding, "final_norm": self.final_norm}
        if self.output is not None:
            out["output"] = self.output
        for i, b in enumerate(self.blocks):
            a = b.attention
            out.update({f"{i}.attn_norm": b.attn_norm, f"{i}.W_q": a.W_q, f"{i}.W_k": a.W_k,
                        f"{i}.W_v": a.W_v, f"{i}.W_o": a.W_o, f"{i}.ffn_norm": b.ffn_norm,
                        f"{i}.W_1": b.W_1, f"{i}.W_3": b.W_3, f"{i}.W_2": b.W_2})
        return out

    def with_rope_pairs(self, pairs: str) -> "LlamaModel":
        """The same model with W_q's and W_k's columns in the other RoPE layout
        (:func:`rope_permutation`): it computes the same logits."""
        c = self.config
        if pairs == c.rope_pairs:
            return self
        perm_q, perm_k = rope_permutation(c.h, c.d_head), rope_permutation(c.g, c.d_head)
        if pairs == "adjacent":  # the inverse permutation: halves -> adjacent
            perm_q, perm_k = np.argsort(perm_q), np.argsort(perm_k)
        config = replace(c, rope_pairs=pairs)
        w = self.weights()
        for i in range(c.n_layers):
            w[f"{i}.W_q"] = w[f"{i}.W_q"][:, perm_q]  # (d, h d_head), columns reordered
            w[f"{i}.W_k"] = w[f"{i}.W_k"][:, perm_k]  # (d, g d_head)
        return LlamaModel.from_weights(config, w)

    @property
    def n_parameters(self) -> int:
        """Learned numbers (the tied output layer counted once, as the embedding)."""
        return sum(v.size for v in self.weights().values())

    def parameter_counts(self) -> dict:
        """Learned numbers by piece, summed over the blocks: embedding (tied: also the
        output layer), attention, SwiGLU, norms (every RMSNorm gain), output (0 when tied)."""
        counts = {"embedding": self.embedding.size, "attention": 0, "swiglu": 0, "norms":
                  self.final_norm.size, "output": 0 if self.output is None else self.output.size}
        for b in self.blocks:
            for k, v in b.parameter_counts().items():
                counts[k] += v
        return counts

    def new_cache(self, batch: tuple = ()) -> list:
        """An empty key/value cache: one ``masking.KVCache(g, d_head, batch)`` a layer."""
        c = self.config
        return [KVCache(c.g, c.d_head, batch=batch) for _ in range(c.n_layers)]

    def unembed(self, x) -> np.ndarray:
        """Logits from a stream: ``RMSNorm(x; final_norm) @ E^T`` (or the output layer).

        Parameters
        ----------
        x : array_like, shape (..., d)
            The last block's output, or any layer's (the logit lens).

        Returns
        -------
        numpy.ndarray, shape (..., V)
        """
        n = rms_norm(x, self.final_norm, self.config.eps)  # (..., d)
        return n @ self._unembed  # (..., d) @ (d, V) -> (..., V)

    def forward(self, ids, cache=None, *, heads_off=None, need_weights: bool = True,
                hidden: bool = False, logits_from: int = 0) -> LlamaOutput:
        """Run the model on new tokens, after those already in ``cache``.

        Parameters
        ----------
        ids : array_like of int, shape (s,) or (b, s)
            Token ids in 0..V-1, at least one.
        cache : list of masking.KVCache, optional
            From :meth:`new_cache` (with ``batch=(b,)`` for a batch), holding the t tokens
            before these; the new keys and values are appended. None: the ids are the whole
            sequence.
        heads_off : optional
            Query heads to switch off, as (layer, head) pairs or an (n_layers, h) boolean
            array: their outputs are zeroed before W_o.
        need_weights : bool
            Return every layer's attention weights (memory: n_layers h s (t + s) floats).
        hidden : bool
            Return the residual stream before and after every block.
        logits_from : int
            Compute the logits of the new tokens from this one on (negative counts from the
            end: -1 is the last token, all that generation needs). The output layer is a
            fifth of the model's arithmetic per token.

        Returns
        -------
        LlamaOutput
            ``logits`` (..., s', V) for the s' tokens from ``logits_from``, ``weights`` and
            ``hidden``.

        Raises
        ------
        ValueError
            For no tokens, a token outside the vocabulary, or more positions than the
            model's context.
        """
        c = self.config
        ids = token_ids(ids, c.vocab_size)
        t = 0 if cache is None else self._check_cache(cache, ids.shape[:-1])
        if t + ids.shape[-1] > c.context:
            raise ValueError(f"{t + ids.shape[-1]} positions: the model was trained on "
                             f"{c.context} (its context), and has no rotation for more")
        off = heads_off_mask(heads_off, c.n_layers, c.h)
        logits_from = whole_number(logits_from, "logits_from", -ids.shape[-1], ids.shape[-1] - 1)
        x = self.embedding[ids]  # (..., s) -> (..., s, d): a lookup (chapter 1)
        stream, maps = [x] if hidden else None, [] if need_weights else None
        for i, block in enumerate(self.blocks):
            x, w = block(x, None if cache is None else cache[i],
                         heads_off=None if off is None else off[i])  # (..., s, d), (..., h, s, t+s)
            if hidden:
                stream.append(x)
            if need_weights:
                maps.append(w)
        logits = self.unembed(x[..., logits_from:, :])  # (..., s', V)
        return LlamaOutput(logits, None if maps is None else tuple(maps),
                           None if stream is None else np.stack(stream))

    __call__ = forward

    def _check_cache(self, cache, batch: tuple) -> int:
        if (not isinstance(cache, (list, tuple)) or len(cache) != self.config.n_layers
                or not all(isinstance(k, KVCache) for k in cache)):
            raise ValueError(f"cache must be the list of {self.config.n_layers} KVCache that "
                             f"new_cache() returns")
        if cache[0].batch != batch:
            raise ValueError(f"the cache holds a batch {cache[0].batch} but the ids have "
                             f"{batch}: use new_cache(batch={batch})")
        return cache[0].length

    def generate(self, prompt, n_new: int, *, temperature: float = 0.0,
                 top_k: int | None = None, top_p: float | None = None,
                 seed: int | None = None, stop: int | None = None,
                 heads_off=None) -> Generation:
        """Write n_new tokens after a prompt, one at a time, with a key/value cache.

        The prompt is run once (its keys and values fill the cache); then each chosen
        token is run alone at its own position (``decoding.generate``'s loop).

        Parameters
        ----------
        prompt : array_like of int, shape (s_0,)
        n_new : int
        temperature, top_k, top_p, seed :
            Greedy (temperature 0) or sampled (``decoding.next_token``); sampling needs a
            seed.
        stop : int, optional
            A token that ends the text (the end-of-turn token): generation stops after it.
        heads_off : optional
            Heads switched off while generating (as in :meth:`forward`).

        Returns
        -------
        Generation
        """
        prompt = token_ids(prompt, self.config.vocab_size)
        if prompt.ndim != 1:
            raise ValueError(f"prompt must be one sequence (s_0,), got shape {prompt.shape}")
        n_new = whole_number(n_new, "n_new", 0)
        if prompt.size + n_new > self.config.context:
            raise ValueError(f"{prompt.size} prompt tokens and {n_new} new ones exceed the "
                             f"model's context of {self.config.context} positions")
        cache, off = self.new_cache(), heads_off_mask(heads_off, self.config.n_layers,
                                                      self.config.h)

        def step(new_tokens):
            return self.forward(new_tokens, cache, heads_off=off, need_weights=False,
                                logits_from=-1).logits  # (1, V)

        tokens, logits = generate(step, prompt, n_new, temperature=temperature, seed=seed,
                                  top_k=top_k, top_p=top_p, stop=stop)
        return Generation(prompt, tokens, logits)

    def logit_lens(self, hidden, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
        """Each layer's guess for the next token: its stream read through the final norm
        and the output layer, as if the model stopped there (the "logit lens").

        Parameters
        ----------
        hidden : array_like, shape (n_layers + 1, d)
            One position's stream before block 0 and after each block
            (``forward(..., hidden=True).hidden[:, -1]``).
        k : int
            How many top tokens per layer.

        Returns
        -------
        top : numpy.ndarray of int64, shape (n_layers + 1, k)
            The k most likely tokens of each layer, most likely first.
        p : numpy.ndarray of float64, shape (n_layers + 1, k)
            Their probabilities under that layer's softmax.
        """
        hidden = as_float_array(hidden, "hidden", min_ndim=2)
        if hidden.ndim != 2 or hidden.shape[-1] != self.config.d:
            raise ValueError(f"hidden must have shape (n_layers + 1, d), got {hidden.shape}")
        k = whole_number(k, "k", 1, self.config.vocab_size)
        z = self.unembed(hidden).astype(np.float64)  # (L+1, d) -> (L+1, V)
        z -= z.max(axis=-1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=-1, keepdims=True)  # (L+1, V)
        top = np.stack([largest(row, k) for row in p])  # (L+1, k)
        return top, np.take_along_axis(p, top, axis=-1)
