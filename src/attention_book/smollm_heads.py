"""SmolLM2's 270 heads, measured over many inputs (chapter 10).

A picture of one head on one prompt proves little; these functions score every head on
batches of inputs, each against the baseline of a head that spreads its weight evenly over
the keys it may see (``1 / (i + 1)`` for query i under the causal mask):

- :func:`head_survey`: on 8 passages of the book's sentences (natural text), each head's
  weight on the previous token and on the first token (an attention *sink*, Xiao et al.
  2023), and the mean weight at each distance; on 8 sequences of 20 random tokens
  repeated once, each head's induction score (``heads.induction_score``: the weight on the
  token after the earlier copy of the current one), and the model's next-token loss and
  accuracy in each half;
- :func:`remove_heads`: the same repeated sequences with heads switched off: the loss and
  accuracy on the repeated half (the intervention of the chapter).

Each result is kept in the disk cache (``_build/cache/smollm-heads``,
:mod:`attention_book.diskcache`), keyed by the model file's sha256, the arguments and the
code, as chapter 9 keeps its gallery: the chapter's next execution reads it.

Reference layer: runs :class:`~attention_book.smollm.SmolLM`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

import numpy as np

from . import diskcache
from .cost import blas_threads
from .heads import induction_score, previous_token_score
from .smollm import SmolLM

__all__ = ["natural_passages", "repeated_random", "uniform_previous", "uniform_first",
           "uniform_induction", "HeadSurvey", "head_survey", "remove_heads",
           "next_token_loss", "distance_profile"]

_CODE = ("attention_book.smollm_heads", "attention_book.llama", "attention_book.multihead",
         "attention_book.attention", "attention_book.positional", "attention_book.block",
         "attention_book.heads", "attention_book.bpe", "attention_book.quants",
         "attention_book.smollm")


def natural_passages(model: SmolLM, n: int = 8, length: int = 40) -> np.ndarray:
    """n passages of natural text, ``length`` tokens each: the book's 157 gallery sentences
    (``data/minilm_sentences.txt``, chapter 9) run together and cut into n pieces, each
    starting at a sentence.

    Returns
    -------
    numpy.ndarray of int64, shape (n, length)
    """
    text = resources.files("attention_book").joinpath("data", "minilm_sentences.txt")
    sentences = [s.strip() for s in text.read_text("utf-8").splitlines() if s.strip()]
    per = len(sentences) // n
    rows = []
    for k in range(n):
        ids = model.tokenizer.encode(" ".join(sentences[k * per:(k + 1) * per]))
        if len(ids) < length:
            raise ValueError(f"passage {k} has only {len(ids)} tokens; ask for fewer")
        rows.append(ids[:length])
    return np.array(rows, dtype=np.int64)


def repeated_random(model: SmolLM, n: int = 8, period: int = 20, seed: int = 0) -> np.ndarray:
    """n sequences of ``period`` random ordinary tokens (never a special token), each
    written twice: the second half can be predicted only by finding the first.

    Returns
    -------
    numpy.ndarray of int64, shape (n, 2 period)
    """
    first = max(model.tokenizer.special) + 1  # SmolLM2's special tokens are ids 0..16
    rng = np.random.default_rng(seed)
    half = np.stack([rng.choice(np.arange(first, model.config.vocab_size), period,
                                replace=False) for _ in range(n)])  # (n, period), distinct
    return np.concatenate([half, half], axis=1)  # (n, 2 period)


def uniform_previous(s: int) -> float:
    """Previous-token score of a head spreading its weight evenly over the visible keys:
    the mean of 1 / (i + 1) over queries 1..s-1."""
    return float(np.mean(1.0 / np.arange(2, s + 1)))


def uniform_first(s: int) -> float:
    """Weight on key 0 of an even spread, over queries 1..s-1 (the same mean)."""
    return uniform_previous(s)


def uniform_induction(period: int) -> float:
    """Induction score of an even spread on a sequence written twice: query i >= period
    has one target among its i + 1 keys."""
    return float(np.mean(1.0 / np.arange(period + 1, 2 * period + 1)))


def next_token_loss(logits: np.ndarray, ids: np.ndarray):
    """Per-position cross-entropy -log p(next token) and whether the argmax was right.

    Parameters
    ----------
    logits : numpy.ndarray, shape (n, s, V)
    ids : numpy.ndarray of int, shape (n, s)

    Returns
    -------
    loss : numpy.ndarray of float64, shape (n, s - 1)
        Position i: the loss of predicting ids[:, i + 1] from logits[:, i].
    right : numpy.ndarray of bool, shape (n, s - 1)
    """
    z = logits[:, :-1].astype(np.float64)  # (n, s-1, V)
    z = z - z.max(axis=-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))  # log-softmax
    target = ids[:, 1:, None]  # (n, s-1, 1)
    loss = -np.take_along_axis(log_p, target, axis=-1)[..., 0]  # (n, s-1)
    return loss, z.argmax(axis=-1) == ids[:, 1:]


@dataclass(frozen=True, eq=False)
class HeadSurvey:
    """Every head's scores (arrays (n_layers, h) unless said), means over the inputs.

    Attributes
    ----------
    natural, repeated : numpy.ndarray of int64
        The inputs: (8, 40) passages and (8, 40) random tokens written twice.
    previous : weight on the previous token (natural text).
    first : weight on the first token, queries 1..s-1 (natural text).
    first_random : the same on the repeated random tokens (a first token with no meaning).
    distance : numpy.ndarray, shape (n_layers, s)
        Mean weight at distance k = i - j (natural text, every head, queries i >= k, key 0
        left out: the sink is not a distance effect).
    induction : induction score (repeated random tokens).
    loss, right : numpy.ndarray, shape (8, 39)
        The model's next-token loss and correctness at each position of the repeated
        sequences (positions 0..18 predict the first half, 20..38 the repeat).
    """

    natural: np.ndarray
    repeated: np.ndarray
    previous: np.ndarray
    first: np.ndarray
    first_random: np.ndarray
    distance: np.ndarray
    induction: np.ndarray
    loss: np.ndarray
    right: np.ndarray

    @property
    def period(self) -> int:
        return self.repeated.shape[1] // 2

    def halves(self, which: str) -> np.ndarray:
        """The positions predicting the first half ("first") or the repeat ("second")."""
        p = self.period
        return np.arange(0, p - 1) if which == "first" else np.arange(p, 2 * p - 1)

    def top(self, name: str, k: int = 5) -> list:
        """The k heads with the highest score ``name``, as (layer, head), best first."""
        grid = getattr(self, name)
        order = np.argsort(-grid, axis=None, kind="stable")[:k]
        return [tuple(int(v) for v in np.unravel_index(i, grid.shape)) for i in order]


def distance_profile(w: np.ndarray) -> np.ndarray:
    """The mean weight at each distance k = i - j, keys j >= 1 (the first token, a sink, is
    left out).

    Parameters
    ----------
    w : numpy.ndarray, shape (n, L, h, s, s)
        Attention maps of n inputs, L layers, h heads.

    Returns
    -------
    numpy.ndarray, shape (L, s)
        Entry (l, k): the mean over inputs, layer l's heads and the queries i that have a
        key at distance k (i >= k + 1; for k = 0 every query from 1) of ``w[..., i, i - k]``.
    """
    s = w.shape[-1]
    out = np.zeros((w.shape[1], s))
    for k in range(s - 1):
        i = np.arange(k + 1, s) if k else np.arange(1, s)  # queries whose key i - k >= 1
        out[:, k] = w[..., i, i - k].mean(axis=(0, 2, 3))
    return out


@functools.lru_cache(maxsize=2)
def head_survey(model: SmolLM, *, cache: bool = True) -> HeadSurvey:
    """Score all heads (:class:`HeadSurvey`); about 10 s of forward passes, once, then
    read from the disk cache."""
    natural, repeated = natural_passages(model), repeated_random(model)

    def compute() -> dict:
        with blas_threads(1):
            w = np.stack(model.model.forward(natural).weights, axis=1)  # (n, L, h, s, s)
            out = model.model.forward(repeated)
            r = np.stack(out.weights, axis=1)  # (n, L, h, s, s)
        loss, right = next_token_loss(out.logits, repeated)
        # key 0's weight at queries 1..s-1 (query 0 has no other key): (n, L, h, s-1) -> (L, h)
        return {"previous": previous_token_score(w).mean(axis=0),
                "first": w[..., 1:, 0].mean(axis=(0, -1)),
                "first_random": r[..., 1:, 0].mean(axis=(0, -1)), "distance": distance_profile(w),
                "induction": induction_score(r, repeated[:, None, None, :]).mean(axis=0),
                "loss": loss, "right": right}

    arrays = diskcache.cached_arrays(
        "smollm-heads", {"model": model.sha256, "natural": natural.tolist(),
                         "repeated": repeated.tolist()},
        diskcache.module_digest(*_CODE), compute, cache=cache, anchor=__file__)
    return HeadSurvey(natural, repeated, **arrays)


def remove_heads(model: SmolLM, groups, *, cache: bool = True) -> dict:
    """The repeated random sequences of :func:`head_survey` with groups of heads switched
    off, one group at a time: the loss and accuracy on the repeat.

    Parameters
    ----------
    model : SmolLM
    groups : list of list of (layer, head)
        Each group is removed on its own (an empty group: nothing removed).

    Returns
    -------
    dict
        ``"loss"`` and ``"accuracy"``: numpy.ndarray (n_groups,), the mean next-token loss
        and the share of right argmax predictions over the positions p..2p-2, which predict
        the repeat's tokens 1..p-1 (:meth:`HeadSurvey.halves` "second"; its token 0 cannot
        be foreseen).
    """
    repeated = repeated_random(model)
    groups = [[[int(layer), int(head)] for layer, head in group] for group in groups]
    p = repeated.shape[1] // 2

    def compute() -> dict:
        loss, accuracy = [], []
        for group in groups:
            with blas_threads(1):  # the logits of positions p.. (they predict the repeat)
                logits = model.model.forward(repeated, heads_off=group or None,
                                             need_weights=False, logits_from=p).logits
            nll, right = next_token_loss(logits, repeated[:, p:])  # predicting p+1..2p-1
            loss.append(nll.mean())
            accuracy.append(right.mean())
        return {"loss": np.array(loss), "accuracy": np.array(accuracy)}

    return diskcache.cached_arrays(
        "smollm-removal", {"model": model.sha256, "groups": groups,
                           "repeated": repeated.tolist()},
        diskcache.module_digest(*_CODE), compute, cache=cache, anchor=__file__)
