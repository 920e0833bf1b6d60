"""From logits to text: choosing the next token, and the generation loop (chapter 8).

A language model gives, at every position, logits over the vocabulary for the *next*
token. Generating text is a loop: run the model on the tokens so far, turn the last
row of logits into one token, append it, repeat.

- :func:`softmax_temperature`: the distribution ``softmax(logits / T)``; T < 1 sharpens
  it, T > 1 flattens it.
- :func:`top_k_top_p`: keep only the k most likely tokens (top-k) and/or the smallest set
  of most likely tokens whose probability reaches p (top-p, nucleus sampling, Holtzman
  et al. 2020); the others get logit -inf.
- :func:`next_token`: greedy (T = 0: the argmax) or sampled from that distribution (after
  top-k/top-p, when asked) with a seeded ``numpy.random.Generator``.
- :func:`generate`: the loop, around any ``step(new_tokens) -> logits`` function. A step
  that keeps a key/value cache feeds the model only the new tokens
  (``attention_book.training.CachedDecoder``); :class:`FullRerun` runs the whole
  sequence again every time, which gives the same tokens, only slower.

This module imports numpy only.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ._validate import as_float_array, whole_number

__all__ = ["softmax_temperature", "largest", "top_k_top_p", "sampling_distribution", "next_token",
           "generate", "FullRerun"]


def _temperature(temperature) -> float:
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.number)):
        raise ValueError(f"temperature must be a number >= 0, got {temperature!r}")
    t = float(temperature)
    if not np.isfinite(t) or t < 0:
        raise ValueError(f"temperature must be a finite number >= 0 (0 = greedy), got {t}")
    return t


def softmax_temperature(logits, temperature: float = 1.0) -> np.ndarray:
    """The next-token distribution ``softmax(logits / T)`` along the last axis.

    Parameters
    ----------
    logits : array_like, shape (..., V)
        One row of logits per position (-inf allowed: that token gets probability 0).
    temperature : float
        T > 0. T = 1 is the model's own distribution; T -> 0 puts everything on the
        largest logit; T -> infinity gives the uniform distribution.

    Returns
    -------
    numpy.ndarray, shape (..., V)
        Non-negative rows summing to 1.
    """
    z = as_float_array(logits, "logits", allow_neg_inf=True)
    t = _temperature(temperature)
    if t == 0:
        raise ValueError("temperature 0 is greedy decoding, not a distribution: use "
                         "next_token(logits, 0) (the argmax), or a temperature > 0")
    if np.isneginf(z).all(axis=-1).any():
        raise ValueError("a row of logits is all -inf: no token is possible")
    z = z / t  # (..., V)
    z = z - z.max(axis=-1, keepdims=True)  # the largest logit becomes 0: exp never overflows
    e = np.exp(z)  # (..., V)
    return e / e.sum(axis=-1, keepdims=True)


def _top_k(top_k) -> int | None:
    return None if top_k is None else whole_number(top_k, "top_k", 1)


def _top_p(top_p) -> float | None:
    if top_p is None:
        return None
    if isinstance(top_p, bool) or not isinstance(top_p, (int, float, np.number)) or not (
            0 < float(top_p) <= 1):
        raise ValueError(f"top_p must be a number in (0, 1] (1 keeps every token), got {top_p!r}")
    return float(top_p)


def largest(p, k: int) -> np.ndarray:
    """The indices of the k largest values of ``p``, largest first, ties to the lower
    index: ``np.argsort(-p, kind="stable")[:k]`` without sorting all V (the full sort of
    49,152 was three quarters of a logit lens's time, and of a lab step's).

    Parameters
    ----------
    p : array_like, shape (V,)
    k : int
        At least 1.

    Returns
    -------
    numpy.ndarray, shape (min(k, V),), int
    """
    p = as_float_array(p, "p", allow_neg_inf=True)
    k = whole_number(k, "k", 1)
    if p.ndim != 1:
        raise ValueError(f"p must have shape (V,), got shape {p.shape}")
    if k >= p.size:
        return np.argsort(-p, kind="stable")
    kth = np.partition(p, p.size - k)[p.size - k]  # the k-th largest value
    near = np.flatnonzero(p >= kth)  # every value tied with it too, in index order
    return near[np.argsort(-p[near], kind="stable")][:k]


def top_k_top_p(logits, top_k: int | None = None, top_p: float | None = None) -> np.ndarray:
    """Logits with every token outside the top k, or outside the nucleus p, set to -inf.

    As Hugging Face's ``TopKLogitsWarper`` then ``TopPLogitsWarper``: top-k keeps the tokens
    whose logit is at least the k-th largest (ties with it stay); top-p sorts the remaining
    probabilities (softmax of the logits) in increasing order and removes a token while the
    cumulative sum up to it is at most 1 - p, so the kept tokens are the fewest most likely
    ones whose probability reaches p; the most likely token always stays.

    Parameters
    ----------
    logits : array_like, shape (..., V)
        Already divided by the temperature, if any.
    top_k : int, optional
        At least 1; None (or k >= V) keeps every token.
    top_p : float, optional
        In (0, 1]; None or 1 keeps every token.

    Returns
    -------
    numpy.ndarray, same shape as logits
    """
    z = as_float_array(logits, "logits", allow_neg_inf=True).copy()
    k, p = _top_k(top_k), _top_p(top_p)
    if k is not None and k < z.shape[-1]:
        kth = np.partition(z, -k, axis=-1)[..., -k:].min(axis=-1, keepdims=True)  # (..., 1)
        z[z < kth] = -np.inf
    if p is not None and p < 1:
        order = np.argsort(z, axis=-1, kind="stable")  # (..., V): increasing
        probs = softmax_temperature(np.take_along_axis(z, order, axis=-1))  # (..., V) sorted
        remove = probs.cumsum(axis=-1) <= 1 - p  # (..., V), in sorted order
        remove[..., -1] = False  # the most likely token always stays
        np.put_along_axis(z, order, np.where(remove, -np.inf, np.take_along_axis(z, order, -1)),
                          axis=-1)
    return z


def sampling_distribution(logits, temperature: float = 1.0, top_k: int | None = None,
                          top_p: float | None = None) -> np.ndarray:
    """The distribution a token is sampled from: ``softmax(top_k_top_p(logits / T))``.

    Parameters
    ----------
    logits : array_like, shape (..., V)
    temperature : float
        T > 0.
    top_k, top_p : optional
        As :func:`top_k_top_p`; both None gives :func:`softmax_temperature`.

    Returns
    -------
    numpy.ndarray, shape (..., V)
        Rows summing to 1, zero outside the kept tokens.
    """
    if top_k is None and top_p is None:
        return softmax_temperature(logits, temperature)
    t = _temperature(temperature)
    if t == 0:
        raise ValueError("temperature 0 is greedy decoding, not a distribution")
    z = as_float_array(logits, "logits", allow_neg_inf=True)
    return softmax_temperature(top_k_top_p(z / t, top_k, top_p))


def next_token(logits, temperature: float = 0.0, rng: np.random.Generator | None = None, *,
               top_k: int | None = None, top_p: float | None = None):
    """Choose the next token from a row of logits: greedy or sampled.

    Parameters
    ----------
    logits : array_like, shape (..., V)
        The model's logits for the next token (the last row of its output).
    temperature : float
        0 (the default): greedy, the token with the largest logit (the first one on a
        tie, as ``numpy.argmax``). T > 0: a draw from ``softmax(logits / T)``, restricted
        to the top k tokens and/or the nucleus p when those are given.
    rng : numpy.random.Generator
        Needed when T > 0 (e.g. ``np.random.default_rng(seed)``): the same generator
        state gives the same draw.
    top_k, top_p : optional
        :func:`top_k_top_p`'s filters (sampling only; greedy ignores them).

    Returns
    -------
    int, or numpy.ndarray of int64 with shape (...) for several rows
    """
    z = as_float_array(logits, "logits", allow_neg_inf=True)
    t = _temperature(temperature)
    _top_k(top_k), _top_p(top_p)  # refuse bad values even when greedy
    if t == 0:
        chosen = z.argmax(axis=-1)  # (...,)
    else:
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"sampling (temperature {t} > 0) needs rng, a "
                             f"numpy.random.Generator such as np.random.default_rng(0); "
                             f"got {rng!r}")
        p = sampling_distribution(z, t, top_k, top_p)  # (..., V)
        u = rng.random(p.shape[:-1])[..., None]  # (..., 1): uniform in [0, 1)
        # inverse CDF: the first token whose cumulative probability exceeds u
        chosen = (p.cumsum(axis=-1) <= u).sum(axis=-1)  # (...,)
        # u just below 1 and rounding: at most the last token with any probability
        last = p.shape[-1] - 1 - np.argmax(p[..., ::-1] > 0, axis=-1)  # (...,)
        chosen = np.minimum(chosen, last)
    return int(chosen) if np.ndim(chosen) == 0 else chosen.astype(np.int64)


def generate(step: Callable, prompt, n_new: int, *, temperature: float = 0.0,
             seed: int | None = None, top_k: int | None = None, top_p: float | None = None,
             stop: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The decoding loop: feed the prompt, then one chosen token at a time.

    ``step(new_tokens)`` must remember what it has seen (a cache, or the whole
    sequence) and return the logits of the new positions only. The loop calls it once
    with the prompt, then with each chosen token.

    Parameters
    ----------
    step : callable
        ``step(tokens: numpy.ndarray (t_new,)) -> logits (t_new, V)``, the next-token
        logits at each new position.
    prompt : array_like of int, shape (s_0,)
        At least one token.
    n_new : int
        Tokens to generate (>= 0).
    temperature : float
        0: greedy; > 0: sampled (:func:`next_token`).
    seed : int, optional
        Seeds the sampling (needed when temperature > 0).
    top_k, top_p : optional
        Sampling filters (:func:`top_k_top_p`).
    stop : int, optional
        A token that ends the text (e.g. end-of-turn): generation stops after it.

    Returns
    -------
    tokens : numpy.ndarray of int64, shape (n,)
        The generated tokens, in order: n = n_new, or fewer when ``stop`` came.
    logits : numpy.ndarray, shape (n, V)
        The logits each token was chosen from.
    """
    prompt = np.asarray(prompt)
    if prompt.ndim != 1 or prompt.size == 0 or prompt.dtype.kind not in "iu":
        raise ValueError(f"prompt must be a non-empty sequence of token ids (s_0,), got "
                         f"{prompt!r}")
    n_new = whole_number(n_new, "n_new", 0)
    t = _temperature(temperature)
    _top_k(top_k), _top_p(top_p)
    if t > 0 and seed is None:
        raise ValueError("sampling (temperature > 0) needs a seed, so that the text can be "
                         "generated again")
    rng = np.random.default_rng(whole_number(seed, "seed", 0)) if seed is not None else None
    if not callable(step):
        raise ValueError(f"step must be a function new_tokens -> logits, got {step!r}")
    tokens, chosen_from = [], []
    logits = np.asarray(step(prompt.astype(np.int64)))  # (s_0, V)
    for n in range(n_new):
        if logits.ndim != 2 or logits.shape[0] < 1:
            raise ValueError(f"step must return logits (t_new, V), got shape {logits.shape}")
        row = logits[-1]  # (V,): the logits for the token after the last one
        token = next_token(row, t, rng, top_k=top_k, top_p=top_p)
        tokens.append(token)
        chosen_from.append(row)
        if token == stop:
            break
        if n + 1 < n_new:
            logits = np.asarray(step(np.array([token], dtype=np.int64)))  # (1, V)
    V = logits.shape[-1]
    return (np.array(tokens, dtype=np.int64),
            np.array(chosen_from).reshape(len(tokens), V))  # n x (V,) -> (n, V)


class FullRerun:
    """A step for :func:`generate` without a cache: run the model on the whole sequence.

    Parameters
    ----------
    forward : callable
        ``forward(tokens (s,)) -> logits (s, V)``, the model on a whole sequence.

    Attributes
    ----------
    tokens : list of int
        Every token seen so far.
    """

    def __init__(self, forward: Callable):
        if not callable(forward):
            raise ValueError(f"forward must be a function tokens -> logits, got {forward!r}")
        self.forward = forward
        self.tokens: list[int] = []

    def __call__(self, new_tokens) -> np.ndarray:
        """Append the new tokens, run the whole sequence, return the new rows (t_new, V)."""
        new = [int(x) for x in np.asarray(new_tokens).ravel()]
        self.tokens.extend(new)
        logits = np.asarray(self.forward(np.array(self.tokens, dtype=np.int64)))  # (s, V)
        return logits[-len(new):]  # (t_new, V)
