"""From logits to text: choosing the next token, and the generation loop (chapter 8).

A language model gives, at every position, logits over the vocabulary for the *next*
token. Generating text is a loop: run the model on the tokens so far, turn the last
row of logits into one token, append it, repeat.

- :func:`softmax_temperature`: the distribution ``softmax(logits / T)``; T < 1 sharpens
  it, T > 1 flattens it.
- :func:`next_token`: greedy (T = 0: the argmax) or sampled from that distribution with
  a seeded ``numpy.random.Generator``.
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

__all__ = ["softmax_temperature", "next_token", "generate", "FullRerun"]


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


def next_token(logits, temperature: float = 0.0, rng: np.random.Generator | None = None):
    """Choose the next token from a row of logits: greedy or sampled.

    Parameters
    ----------
    logits : array_like, shape (..., V)
        The model's logits for the next token (the last row of its output).
    temperature : float
        0 (the default): greedy, the token with the largest logit (the first one on a
        tie, as ``numpy.argmax``). T > 0: a draw from ``softmax(logits / T)``.
    rng : numpy.random.Generator
        Needed when T > 0 (e.g. ``np.random.default_rng(seed)``): the same generator
        state gives the same draw.

    Returns
    -------
    int, or numpy.ndarray of int64 with shape (...) for several rows
    """
    z = as_float_array(logits, "logits", allow_neg_inf=True)
    t = _temperature(temperature)
    if t == 0:
        chosen = z.argmax(axis=-1)  # (...,)
    else:
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"sampling (temperature {t} > 0) needs rng, a "
                             f"numpy.random.Generator such as np.random.default_rng(0); "
                             f"got {rng!r}")
        p = softmax_temperature(z, t)  # (..., V)
        u = rng.random(p.shape[:-1])[..., None]  # (..., 1): uniform in [0, 1)
        # inverse CDF: the first token whose cumulative probability exceeds u
        chosen = (p.cumsum(axis=-1) <= u).sum(axis=-1)  # (...,)
        chosen = np.minimum(chosen, p.shape[-1] - 1)  # u just below 1, rounding
    return int(chosen) if np.ndim(chosen) == 0 else chosen.astype(np.int64)


def generate(step: Callable, prompt, n_new: int, *, temperature: float = 0.0,
             seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
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

    Returns
    -------
    tokens : numpy.ndarray of int64, shape (n_new,)
        The generated tokens, in order.
    logits : numpy.ndarray, shape (n_new, V)
        The logits each token was chosen from.
    """
    prompt = np.asarray(prompt)
    if prompt.ndim != 1 or prompt.size == 0 or prompt.dtype.kind not in "iu":
        raise ValueError(f"prompt must be a non-empty sequence of token ids (s_0,), got "
                         f"{prompt!r}")
    n_new = whole_number(n_new, "n_new", 0)
    t = _temperature(temperature)
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
        token = next_token(row, t, rng)
        tokens.append(token)
        chosen_from.append(row)
        if n + 1 < n_new:
            logits = np.asarray(step(np.array([token], dtype=np.int64)))  # (1, V)
    V = logits.shape[-1]
    return (np.array(tokens, dtype=np.int64),
            np.array(chosen_from).reshape(n_new, V))  # n_new x (V,) -> (n_new, V)


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
