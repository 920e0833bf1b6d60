"""Head scores: one number that says what an attention head does.

Every score takes a self-attention map ``weights``:(..., s, s), whose row i holds query i's
weights over the keys 0..s-1 (non-negative, summing to 1), and measures how much of each
row lands where a particular kind of head would put it:

==========================  ====================================  =======================
score                       weight on key(s) ...                  queries that count
==========================  ====================================  =======================
``offset_score(w, k)``      i - k                                 i with 0 <= i - k < s
``previous_token_score``    i - 1                                 1 .. s-1
``next_token_score``        i + 1                                 0 .. s-2
``anti_diagonal_score``     s - 1 - i (the mirror position)       all
``self_score``              i (the diagonal)                      all
``position_score(w, P)``    the fixed positions P (a "sink")      all
``induction_score(w, t)``   j < i with t[j-1] == t[i]             i whose token occurred
                                                                  earlier (see below)
``mean_row_entropy``        (how spread out each row is)          all
==========================  ====================================  =======================

Attention patterns say where a head looks, not what it moves. :func:`ov_circuit` is the
head's token-to-logit map ``W_E W^V W^O W_U`` (Elhage et al. 2021), and
:func:`copying_score` / :func:`eigenvalue_copying_score` say whether that map copies:
whether attending to a token raises that token's own logit.

Each returns the mean over the queries that count: a float for one map (s, s), an
array (...) (one score per map, e.g. (n_layers, h) for a whole model) for a stack of
maps. With ``per_query=True`` it returns the per-query values (..., s) instead, NaN at
the queries that do not count (matplotlib leaves NaN out of a plot).

A uniform map (every row 1/s) scores 1/s on every single-key score: a head scores well
only if it beats that.

:func:`head_scores` takes the scores chapter 9 reads (previous, next, first and last key,
self, entropy) at once.

Whether a model *needs* a head is another question, answered by removing it:
:func:`ablate_subsets` evaluates a model with every subset of its heads removed, and
:func:`ablation_by_size` compares the best subsets with removing heads at random.

This module imports numpy only.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ._validate import as_float_array, whole_number
from .attention import attention_entropy

__all__ = [
    "SCORE_LABELS",
    "ROW_SUM_TOL",
    "offset_score",
    "previous_token_score",
    "next_token_score",
    "anti_diagonal_score",
    "self_score",
    "position_score",
    "induction_targets",
    "induction_score",
    "mean_row_entropy",
    "head_scores",
    "weight_on_keys",
    "word_attention",
    "most_attended_word",
    "best_offset",
    "value_writes",
    "weighted_write_norms",
    "ablate_subsets",
    "ablation_by_size",
]

# Rows of float32 softmax outputs sum to 1 within ~1e-7 * s; 1e-5 accepts them and
# still refuses raw scores or a map with a fully masked (all-zero) row.
ROW_SUM_TOL = 1e-5


# ------------------------------------------------------------------ checks and the mean


def _check_weights(weights) -> np.ndarray:
    """``weights`` as a float array (..., s, s) of rows that are distributions."""
    w = as_float_array(weights, "weights", min_ndim=2)
    s_q, s_k = w.shape[-2:]
    if s_q != s_k:
        raise ValueError(
            f"weights has shape {w.shape}, but a head score needs a self-attention map "
            f"(..., s, s): one row and one column per position; got s_q={s_q} queries "
            f"and s_k={s_k} keys"
        )
    if w.size == 0:
        raise ValueError(f"weights is empty (shape {w.shape}): there is no query to score")
    if (w < 0).any():
        raise ValueError("weights must be non-negative: pass the attention weights after "
                         "the softmax, not the scores before it")
    sums = w.sum(axis=-1)  # (..., s)
    if not np.all(np.abs(sums - 1.0) <= ROW_SUM_TOL):
        raise ValueError(
            f"each row of weights must sum to 1 (a softmax output), got row sums between "
            f"{sums.min():.4g} and {sums.max():.4g}; pass the weights after the softmax, "
            f"and no query whose keys are all masked"
        )
    return w


def _mean(values: np.ndarray, counts: np.ndarray, per_query: bool, none_count: str):
    """The mean of ``values``:(..., s) over the queries where ``counts`` is True.

    Returns a float for 1-D values, an array (...) otherwise; with ``per_query`` the
    values themselves, NaN where a query does not count.
    """
    counts = np.broadcast_to(counts, values.shape)  # (..., s)
    if per_query:
        return np.where(counts, values, np.nan).astype(values.dtype, copy=False)
    n = counts.sum(axis=-1)  # (...,)
    if (n == 0).any():
        raise ValueError(none_count)
    mean = np.where(counts, values, 0).sum(axis=-1) / n  # (...,)
    return float(mean) if mean.ndim == 0 else mean


def _per_query(per_query) -> bool:
    if not isinstance(per_query, (bool, np.bool_)):
        raise ValueError(f"per_query must be True or False, got {per_query!r}")
    return bool(per_query)


def _key_per_query(w: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``w[..., i, keys[i]]`` for every query i: (..., s, s) -> (..., s)."""
    s = w.shape[-1]
    return w[..., np.arange(s), np.clip(keys, 0, s - 1)]  # (..., s)


# ------------------------------------------------------------------ positional scores


def offset_score(weights, k: int, *, per_query: bool = False):
    """Mean weight a query puts on the key k positions before it (key i - k).

    ``k = 1`` is a previous-token head, ``k = -1`` a next-token head, ``k = 0`` the
    diagonal. Query i counts when its key i - k exists (0 <= i - k <= s - 1), so the
    first k queries (or, for k < 0, the last |k|) do not count.

    Parameters
    ----------
    weights : array_like, shape (..., s, s)
        Attention weights, rows = queries, each row summing to 1.
    k : int
        The offset; ``|k| < s``.
    per_query : bool
        Return the per-query values instead of their mean.

    Returns
    -------
    float, or numpy.ndarray of shape (...) for a stack of maps
        ``mean_i weights[..., i, i - k]`` over the queries that count; 1.0 for a pure
        offset-k head, 1/s for a uniform map. With ``per_query``: numpy.ndarray
        (..., s), NaN where a query does not count.
    """
    w = _check_weights(weights)
    per_query = _per_query(per_query)
    s = w.shape[-1]
    k = whole_number(k, "k")
    if abs(k) >= s:
        raise ValueError(f"k={k} but the sequence has s={s} positions: no query i has a key "
                         f"i - k inside it; use |k| <= {s - 1}")
    keys = np.arange(s) - k  # (s,): query i's key
    counts = (keys >= 0) & (keys < s)  # (s,)
    return _mean(_key_per_query(w, keys), counts, per_query, "no query counts")


def previous_token_score(weights, *, per_query: bool = False):
    """Mean weight on the previous token, key i - 1, over queries 1..s-1.

    ``offset_score(weights, 1)``; 1.0 for a pure previous-token head.

    Parameters
    ----------
    weights : array_like, shape (..., s, s)
        Rows summing to 1; s >= 2.
    per_query : bool
        Return the per-query values (..., s) (NaN at query 0) instead of their mean.

    Returns
    -------
    float, or numpy.ndarray of shape (...) (per_query: (..., s))
    """
    return offset_score(weights, 1, per_query=per_query)


def next_token_score(weights, *, per_query: bool = False):
    """Mean weight on the next token, key i + 1, over queries 0..s-2.

    ``offset_score(weights, -1)``; 1.0 for a pure next-token head (only possible
    without a causal mask).

    Parameters
    ----------
    weights : array_like, shape (..., s, s)
        Rows summing to 1; s >= 2.
    per_query : bool
        Return the per-query values (..., s) (NaN at query s-1) instead of their mean.

    Returns
    -------
    float, or numpy.ndarray of shape (...) (per_query: (..., s))
    """
    return offset_score(weights, -1, per_query=per_query)


def anti_diagonal_score(weights, *, per_query: bool = False):
    """Mean weight on the mirror position, key s - 1 - i, over all queries.

    The pattern of a head that reverses a sequence: query 0 looks at the last key,
    the last query at key 0.

    Parameters
    ----------
    weights : array_like, shape (..., s, s)
        Rows summing to 1.
    per_query : bool
        Return the per-query values (..., s) instead of their mean.

    Returns
    -------
    float, or numpy.ndarray of shape (...) (per_query: (..., s))
        1.0 for a pure reversing head, 1/s for a uniform map.
    """
    w = _check_weights(weights)
    per_query = _per_query(per_query)
    s = w.shape[-1]
    keys = s - 1 - np.arange(s)  # (s,): query i's mirror key
    return _mean(_key_per_query(w, keys), np.ones(s, bool), per_query, "no query counts")


def self_score(weights, *, per_query: bool = False):
    """Mean weight a query puts on its own position (the diagonal), over all queries.

    Note that under a causal mask query 0 can only attend to itself, so it always
    scores 1 there.

    Parameters
    ----------
    weights : array_like, shape (..., s, s)
        Rows summing to 1.
    per_query : bool
        Return the per-query values (..., s) instead of their mean.

    Returns
    -------
    float, or numpy.ndarray of shape (...) (per_query: (..., s))
    """
    w = _check_weights(weights)
    per_query = _per_query(per_query)
    s = w.shape[-1]
    diagonal = np.diagonal(w, axis1=-2, axis2=-1)  # (..., s, s) -> (..., s)
    return _mean(diagonal, np.ones(s, bool), per_query, "no query counts")


def position_score(weights, positions, *, per_query: bool = False):
    """Mean total weight on a fixed set of key positions, over all queries.

    A head that parks its attention on [CLS] (position 0) or [SEP] (position -1) when it
    has nothing better to do is an "attention sink"; this measures how much it parks
    there. Each row's weight on the positions is summed, then averaged over queries.

    Parameters
    ----------
    weights : array_like, shape (..., s, s)
        Rows summing to 1.
    positions : int or sequence of int
        Key positions in -s..s-1 (negative counts from the end, as in Python: -1 is the
        last position). Repeats are counted once.
    per_query : bool
        Return the per-query values (..., s) instead of their mean.

    Returns
    -------
    float, or numpy.ndarray of shape (...) (per_query: (..., s))
        1.0 when every query puts all its weight on the positions; m/s for a uniform
        map and m distinct positions.
    """
    w = _check_weights(weights)
    per_query = _per_query(per_query)
    s = w.shape[-1]
    keys = np.atleast_1d(np.asarray(positions))
    if keys.ndim != 1 or keys.size == 0:
        raise ValueError(f"positions must be one position or a non-empty list of them, "
                         f"got {positions!r}")
    keys = np.unique([whole_number(p, "each position", -s, s - 1) % s for p in keys])
    on_keys = w[..., keys].sum(axis=-1)  # (..., s, m) -> (..., s)
    return _mean(on_keys, np.ones(s, bool), per_query, "no query counts")


# ------------------------------------------------------------------ the induction score


def _check_tokens(tokens, w: np.ndarray) -> np.ndarray:
    """``tokens`` as an array (..., s) of ids or strings matching the map (..., s, s)."""
    t = np.asarray(tokens)
    if t.dtype.kind not in "iuUS":
        raise ValueError(f"tokens must be token ids (whole numbers) or strings, got dtype "
                         f"{t.dtype}")
    if t.ndim == 0:
        raise ValueError("tokens must be a sequence (..., s), got a single value")
    s = w.shape[-1]
    if t.shape[-1] != s:
        raise ValueError(f"tokens has {t.shape[-1]} positions but weights is for s={s} "
                         f"(shape {w.shape}): give one token per query/key position")
    try:
        np.broadcast_shapes(t.shape[:-1], w.shape[:-2])
    except ValueError:
        raise ValueError(
            f"tokens has shape {t.shape} and weights {w.shape}: the axes before the last "
            f"must broadcast; for weights (b, n_layers, h, s, s) pass tokens[:, None, None, :]"
        ) from None
    return t


def induction_targets(tokens) -> np.ndarray:
    """Where an induction head should look: ``targets[..., i, j] = j < i and
    tokens[j-1] == tokens[i]`` (j >= 1), the positions just after earlier copies of
    query i's token.

    Parameters
    ----------
    tokens : array_like, shape (..., s)
        Token ids or strings.

    Returns
    -------
    targets : numpy.ndarray of bool, shape (..., s, s)
    """
    t = np.asarray(tokens)
    s = t.shape[-1]
    same = t[..., :, None] == t[..., None, :]  # (..., s, 1) vs (..., 1, s) -> (..., s, s)
    targets = np.zeros(same.shape, dtype=bool)  # (..., s, s)
    # key j is a target of query i when the token BEFORE j equals query i's token
    targets[..., :, 1:] = same[..., :, :-1]
    return targets & np.tri(s, s, -1, dtype=bool)  # only keys j < i (strictly earlier)



def induction_score(weights, tokens, *, per_query: bool = False):
    """Mean weight on the positions right after earlier copies of the current token.

    An induction head (Olsson et al. 2022) completes a pattern seen before: at a token
    A that occurred earlier as ``... A B ...``, it attends to that earlier B (and the
    next layer copies B as the prediction). Precisely, for query i the target keys are

        T(i) = { j : 1 <= j < i and tokens[j - 1] == tokens[i] },

    the position just after each earlier copy of tokens[i]. Query i counts when T(i)
    is not empty, that is when its token occurred earlier at some position <= i - 2 (a
    copy right before it, at i - 1, points at i itself, which is not earlier). Its
    value is the total weight on T(i); the score is the mean over the queries that
    count. On a repeated random sequence (period p, distinct tokens) the queries that
    count are i >= p and T(i) = {i - p + 1}: Olsson et al.'s "prefix matching" score.

    Parameters
    ----------
    weights : array_like, shape (..., s, s)
        Rows summing to 1.
    tokens : array_like, shape (..., s)
        The sequence's token ids (integers) or token strings. Its leading axes broadcast
        with those of weights: for weights (b, n_layers, h, s, s) pass tokens (b, s)
        as ``tokens[:, None, None, :]``.
    per_query : bool
        Return the per-query values instead of their mean.

    Returns
    -------
    float, or numpy.ndarray of shape (...) (the broadcast leading axes)
        1.0 for a perfect induction head. With ``per_query``: numpy.ndarray (..., s),
        NaN at the queries that do not count.

    Raises
    ------
    ValueError
        When a sequence has no query that counts (no token repeats with a gap).
    """
    w = _check_weights(weights)
    per_query = _per_query(per_query)
    t = _check_tokens(tokens, w)
    targets = induction_targets(t)  # (..., s, s)
    on_targets = (w * targets).sum(axis=-1)  # (..., s, s) -> (..., s), leading axes broadcast
    counts = targets.any(axis=-1)  # (..., s): T(i) is not empty
    counts = np.broadcast_to(counts, on_targets.shape)  # (..., s)
    return _mean(on_targets, counts, per_query,
                 "no token occurs again after a gap (tokens[i] == tokens[j-1] for some "
                 "j < i), so no query has an earlier copy for an induction head to follow")


# ------------------------------------------------------------------ spread


def mean_row_entropy(weights, normalised: bool = False, *, per_query: bool = False):
    """Mean entropy (nats) of the rows: 0 when every query looks at one key only.

    Uses :func:`attention_book.attention.attention_entropy` for each row.

    Parameters
    ----------
    weights : array_like, shape (..., s, s)
        Rows summing to 1.
    normalised : bool
        Divide by log(s), the entropy of a uniform row over all s keys, so that the
        result is in [0, 1]: 0 = every query on one key, 1 = uniform. (Under a causal
        mask query i sees only i + 1 keys, so even a uniform causal map scores below 1.)
        Needs s >= 2.
    per_query : bool
        Return each row's entropy (..., s) instead of the mean.

    Returns
    -------
    float, or numpy.ndarray of shape (...) (per_query: (..., s))
    """
    w = _check_weights(weights)
    per_query = _per_query(per_query)
    if not isinstance(normalised, (bool, np.bool_)):
        raise ValueError(f"normalised must be True or False, got {normalised!r}")
    s = w.shape[-1]
    entropy = attention_entropy(w)  # (..., s)
    if normalised:
        if s < 2:
            raise ValueError("normalised entropy needs s >= 2 keys (log 1 = 0: a single "
                             "key leaves nothing to spread over)")
        entropy = entropy / math.log(s)
    return _mean(entropy, np.ones(s, bool), per_query, "no query counts")


# ------------------------------------------------------------------ all at once


def head_scores(weights) -> dict:
    """What a head does on one sentence: the scores of this module at once.

    The maps of a model in float32 have rows summing to 1 within about 1e-7 s; they are
    taken to float64 and divided by their row sums first, so that every score is
    measured on rows that sum to 1 exactly.

    Parameters
    ----------
    weights : array_like, shape (..., s, s)
        Attention maps of one sentence (rows = queries, summing to 1), e.g. a whole
        model's (n_layers, h, s, s); s >= 2.

    Returns
    -------
    dict of str to float, or to numpy.ndarray of shape (...)
        ``"previous"`` (:func:`previous_token_score`, key i-1), ``"next"`` (key i+1),
        ``"cls"`` (:func:`position_score` of key 0, where BERT puts [CLS]), ``"sep"`` (of
        key s-1, where it puts [SEP]), ``"self"`` (key i), ``"entropy"``
        (:func:`mean_row_entropy`, nats) and ``"spread"`` (entropy / log s: 0 = every
        query on one key, 1 = uniform).
    """
    w = _check_weights(as_float_array(weights, "weights", min_ndim=2).astype(np.float64))
    if w.shape[-1] < 2:
        raise ValueError(f"weights has shape {w.shape}: head scores need s >= 2 positions "
                         f"(with one key there is no choice to measure)")
    w = w / w.sum(axis=-1, keepdims=True)  # (..., s, s): rows sum to 1 in float64
    entropy = mean_row_entropy(w)
    return {"previous": previous_token_score(w), "next": next_token_score(w),
            "cls": position_score(w, 0), "sep": position_score(w, -1),
            "self": self_score(w), "entropy": entropy,
            "spread": entropy / math.log(w.shape[-1])}


# ------------------------------------------------------------------ chapter 9: what BERT looks at


def weight_on_keys(weights, keys, *, per_query: bool = False):
    """Mean total weight on a set of keys given as a mask, over all queries.

    Like :func:`position_score`, but the keys are a boolean mask that may differ from
    map to map (the punctuation of each sentence, say) and may be empty (the weight on
    no key is 0).

    Parameters
    ----------
    weights : array_like, shape (..., s, s)
        Attention weights, rows = queries, each row summing to 1.
    keys : array_like of bool, shape (..., s)
        True at the key positions to count; its leading axes broadcast with those of
        ``weights`` (for weights (n_layers, h, s, s) of one sentence pass keys (s,)).
    per_query : bool
        Return the per-query values (..., s) instead of their mean.

    Returns
    -------
    float, or numpy.ndarray of shape (...) (per_query: (..., s))
        ``mean_i sum_{j: keys[j]} weights[..., i, j]``; m/s for a uniform map and m keys.
    """
    w = _check_weights(weights)
    per_query = _per_query(per_query)
    s = w.shape[-1]
    mask = np.asarray(keys)
    if mask.dtype != bool:
        raise ValueError(f"keys must be a boolean mask (True = count this key), got dtype "
                         f"{mask.dtype}; for a list of positions use position_score")
    if mask.ndim == 0 or mask.shape[-1] != s:
        raise ValueError(f"keys has shape {mask.shape} but weights is for s={s} keys "
                         f"(shape {w.shape}): give one True/False per key position")
    try:
        np.broadcast_shapes(mask.shape[:-1], w.shape[:-2])
    except ValueError:
        raise ValueError(f"keys has shape {mask.shape} and weights {w.shape}: the axes "
                         f"before the last must broadcast") from None
    on_keys = (w * mask[..., None, :]).sum(axis=-1)  # (..., s, s) * (..., 1, s) -> (..., s)
    return _mean(on_keys, np.ones(s, bool), per_query, "no query counts")


def _check_word_ids(word_ids, s: int) -> tuple[np.ndarray, int]:
    ids = np.asarray(word_ids)
    if ids.ndim != 1 or ids.shape[0] != s or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"word_ids must be {s} whole numbers, one per token of the map "
                         f"(-1 for a token that belongs to no word, such as [CLS]), got "
                         f"dtype {ids.dtype} shape {ids.shape}")
    if (ids < -1).any():
        raise ValueError(f"word_ids must be -1 or a word index >= 0, got {ids.min()}")
    n = int(ids.max()) + 1
    if n == 0:
        raise ValueError("word_ids marks no token as part of a word (all -1)")
    missing = sorted(set(range(n)) - set(ids[ids >= 0].tolist()))
    if missing:
        raise ValueError(f"word_ids must number the words 0..{n - 1} with no gap; word(s) "
                         f"{missing} have no token")
    return ids, n


def word_attention(weights, word_ids) -> np.ndarray:
    """Token-to-token attention turned into word-to-word attention (Clark et al. 2019).

    A word that WordPiece split into several tokens gets one row and one column: the
    weight *to* a word is the sum of the weights to its tokens (so the split keeps the
    weight a query puts on the word), and the weight *from* a word is the mean of its
    tokens' rows. Tokens whose id is -1 (``[CLS]``, ``[SEP]``) are left out, as rows
    and as columns, so a row of the result sums to 1 minus the weight its tokens put on
    the left-out tokens.

    Parameters
    ----------
    weights : array_like, shape (..., s, s)
        Attention weights over s tokens, rows summing to 1.
    word_ids : array_like of int, shape (s,)
        The word of each token, numbered 0..n-1 in order, or -1 for a token in no word.

    Returns
    -------
    numpy.ndarray, shape (..., n, n)
        ``out[..., a, b] = mean_{i in word a} sum_{j in word b} weights[..., i, j]``.
    """
    w = _check_weights(weights)
    s = w.shape[-1]
    ids, n = _check_word_ids(word_ids, s)
    member = (ids[None, :] == np.arange(n)[:, None]).astype(w.dtype)  # (n, s): word a has token i
    to_words = w @ member.T  # (..., s, s) @ (s, n) -> (..., s, n): summed over each word's keys
    mean_rows = member / member.sum(axis=1, keepdims=True)  # (n, s): each word's rows averaged
    return mean_rows @ to_words  # (n, s) @ (..., s, n) -> (..., n, n)


def most_attended_word(word_weights) -> np.ndarray:
    """For each word, the other word it attends to most.

    Parameters
    ----------
    word_weights : array_like, shape (..., n, n)
        Word-to-word attention (:func:`word_attention`), n >= 2; rows need not sum to 1.

    Returns
    -------
    numpy.ndarray of int, shape (..., n)
        ``argmax_{b != a} word_weights[..., a, b]`` (the word itself is left out; the
        first of equal weights wins).
    """
    w = as_float_array(word_weights, "word_weights", min_ndim=2)
    n = w.shape[-1]
    if w.shape[-2] != n or n < 2:
        raise ValueError(f"word_weights has shape {w.shape}: it must be (..., n, n) with "
                         f"n >= 2 words, one row and one column per word")
    return np.where(np.eye(n, dtype=bool), -np.inf, w).argmax(axis=-1)  # (..., n)


def best_offset(dependents, targets) -> tuple[int, float]:
    """The fixed-offset baseline: the offset k for which "word i attends to word i + k"
    is right most often, and how often.

    Parameters
    ----------
    dependents, targets : array_like of int, shape (m,)
        For each of m relations, the position of the word that attends and of the word
        it should attend to (positions within their own sentence).

    Returns
    -------
    k : int
        The most frequent ``targets - dependents`` (the smaller one in a tie).
    accuracy : float
        The fraction of relations with ``targets - dependents == k``.
    """
    d, t = np.asarray(dependents), np.asarray(targets)
    if (d.ndim != 1 or d.shape != t.shape or d.size == 0
            or not (np.issubdtype(d.dtype, np.integer) and np.issubdtype(t.dtype, np.integer))):
        raise ValueError(f"dependents and targets must be two non-empty 1-D arrays of "
                         f"whole numbers of the same length, got {d.dtype} {d.shape} and "
                         f"{t.dtype} {t.shape}")
    offsets, counts = np.unique(t - d, return_counts=True)  # sorted offsets
    best = int(np.argmax(counts))  # the first (smallest) of equal counts
    return int(offsets[best]), float(counts[best] / d.size)


def value_writes(values, W_o, h: int) -> np.ndarray:
    """What each head writes from each token: f_h(x_j) = v_j^h W^O_h (Kobayashi et al. 2020).

    The attention output of token i is ``sum_h sum_j alpha^h_ij f_h(x_j) + b^O``, where
    v_j^h are head h's d_k columns of token j's value and W^O_h the d_k rows of W^O
    that multiply them. So ``alpha^h_ij * ||f_h(x_j)||`` is how much token j adds to
    token i through head h, not the weight alone.

    Parameters
    ----------
    values : array_like, shape (..., s, d)
        All heads' values side by side, ``X W^V + b^V``.
    W_o : array_like, shape (d, d_out)
        The output projection.
    h : int
        The number of heads; d_k = d / h.

    Returns
    -------
    numpy.ndarray, shape (..., h, s, d_out)
        ``f[..., head, j]``, head's write from token j before the weights.
    """
    V = as_float_array(values, "values", min_ndim=2)
    W = as_float_array(W_o, "W_o", min_ndim=2)
    h = whole_number(h, "h", 1)
    s, d = V.shape[-2:]
    if W.ndim != 2 or W.shape[0] != d:
        raise ValueError(f"W_o has shape {W.shape}, but values have d={d} columns: W_o "
                         f"must be (d, d_out) = ({d}, d_out)")
    if d % h:
        raise ValueError(f"h={h} does not divide d={d}")
    d_k = d // h
    V = V.reshape(*V.shape[:-1], h, d_k)  # (..., s, d) -> (..., s, h, d_k)
    V = np.swapaxes(V, -3, -2)  # (..., s, h, d_k) -> (..., h, s, d_k)
    W = W.reshape(h, d_k, W.shape[1])  # (d, d_out) -> (h, d_k, d_out): W^O_h
    return V @ W  # (..., h, s, d_k) @ (h, d_k, d_out) -> (..., h, s, d_out)


def weighted_write_norms(weights, values, W_o) -> np.ndarray:
    """||alpha^h_ij f_h(x_j)||: how much each key adds to each query, head by head
    (Kobayashi et al. 2020's "weight times transformed value norm").

    Parameters
    ----------
    weights : array_like, shape (..., h, s, s)
        Attention weights of the h heads of one layer.
    values : array_like, shape (..., s, d)
        ``X W^V + b^V``, all heads side by side.
    W_o : array_like, shape (d, d_out)
        The output projection.

    Returns
    -------
    numpy.ndarray, shape (..., h, s, s)
        ``weights[..., h, i, j] * ||f_h(x_j)||`` (the weights are non-negative).
    """
    w = _check_weights(weights)
    if w.ndim < 3:
        raise ValueError(f"weights has shape {w.shape}: pass one layer's maps (..., h, s, s)")
    writes = value_writes(values, W_o, w.shape[-3])  # (..., h, s, d_out)
    if writes.shape[-2] != w.shape[-1]:
        raise ValueError(f"values have {writes.shape[-2]} tokens but weights is for "
                         f"s={w.shape[-1]}")
    norms = np.linalg.norm(writes, axis=-1)  # (..., h, s): ||f_h(x_j)||
    return w * norms[..., None, :]  # (..., h, s, s) * (..., h, 1, s)


# ------------------------------------------------------------------ what a head moves: OV


def ov_circuit(W_E, W_V, W_O, W_U) -> np.ndarray:
    """The OV circuit of a head: what attending to each token adds to each logit.

    A head that puts all its weight on a key holding token a adds ``e_a W^V W^O`` to the
    residual stream (``e_a`` = row a of ``W_E``); read out by the unembedding, that is
    row a of ``W_E W^V W^O W_U`` (Elhage et al. 2021). Biases and LayerNorms are left
    out (fold a norm's scale into ``W_E`` or ``W_U`` first if you want it).

    Parameters
    ----------
    W_E : array_like, shape (V, d)
        What the head's values read for each token (the embedding, or its normed rows).
    W_V : array_like, shape (d, d_v)
        The head's value projection.
    W_O : array_like, shape (d_v, d)
        The head's rows of the output projection.
    W_U : array_like, shape (d, V_out)
        The unembedding (row-vector form).

    Returns
    -------
    numpy.ndarray, shape (V, V_out)
        Row a: the change of every logit when the head attends to token a.
    """
    E = as_float_array(W_E, "W_E", min_ndim=2)
    mats = [("W_V", as_float_array(W_V, "W_V", min_ndim=2)),
            ("W_O", as_float_array(W_O, "W_O", min_ndim=2)),
            ("W_U", as_float_array(W_U, "W_U", min_ndim=2))]
    shapes = "W_E (V, d) @ W_V (d, d_v) @ W_O (d_v, d) @ W_U (d, V)"
    for name, m in [("W_E", E), *mats]:
        if m.ndim != 2:
            raise ValueError(f"{name} must be a matrix, got shape {m.shape}: the circuit is "
                             f"{shapes}")
    out, prev_name = E, "W_E"
    for name, m in mats:
        if out.shape[1] != m.shape[0]:
            raise ValueError(f"{prev_name} ends with {out.shape[1]} columns but {name} has "
                             f"shape {m.shape}: the circuit is {shapes}")
        out = out @ m  # (V, n) @ (n, m) -> (V, m)
        prev_name = name
    return out  # (V, d) @ (d, d_v) @ (d_v, d) @ (d, V) -> (V, V)


def _square(circuit, name: str = "circuit") -> np.ndarray:
    m = as_float_array(circuit, name, min_ndim=2)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] < 2:
        raise ValueError(f"{name} must be a square token-to-logit matrix (V, V) with V >= 2 "
                         f"(row a: the logits when the head attends to token a), got shape "
                         f"{m.shape}")
    return m


def copying_score(circuit, *, per_token: bool = False):
    """Fraction of tokens whose own logit is the one the OV circuit raises most.

    Row a of the circuit (:func:`ov_circuit`) is what attending to token a does to the
    logits; the head *copies* a when entry (a, a) is the largest of that row. A pure
    copying head scores 1; a random circuit about 1/V.

    Parameters
    ----------
    circuit : array_like, shape (V, V)
    per_token : bool
        Return, for each token, whether it is copied (bool (V,)) instead of the fraction.

    Returns
    -------
    float in [0, 1] (per_token: numpy.ndarray of bool, shape (V,))
    """
    m = _square(circuit)
    if not isinstance(per_token, (bool, np.bool_)):
        raise ValueError(f"per_token must be True or False, got {per_token!r}")
    own = np.diagonal(m)  # (V,)
    others = np.where(np.eye(len(m), dtype=bool), -np.inf, m).max(axis=1)  # (V,)
    copied = own > others  # (V,): a strict maximum (a tie is not a copy)
    return copied if per_token else float(copied.mean())


def eigenvalue_copying_score(circuit) -> float:
    """Elhage et al.'s eigenvalue summary of an OV circuit: sum(lambda) / sum(|lambda|).

    An eigenvector of the circuit with a positive eigenvalue is a direction the head
    writes back with the same sign, so a copying head has mostly positive eigenvalues:
    the score is 1 when all are positive, -1 when all are negative, near 0 for a random
    matrix. (sum(lambda) is the trace, so the score is real.)

    Parameters
    ----------
    circuit : array_like, shape (V, V)

    Returns
    -------
    float in [-1, 1]
    """
    m = _square(circuit)
    eigenvalues = np.linalg.eigvals(m)  # (V,), complex in general
    total = np.abs(eigenvalues).sum()
    if total == 0:
        raise ValueError("circuit is all zeros: a head that writes nothing copies nothing")
    return float(np.real(eigenvalues.sum()) / total)


# ------------------------------------------------------------------ ablation

MAX_ABLATION_UNITS = 12  # 2**12 = 4096 evaluations: beyond that, sample instead


def ablate_subsets(metric, units):
    """Evaluate a model with every subset of its heads removed (2**n evaluations).

    Parameters
    ----------
    metric : callable
        ``metric(removed)`` with ``removed`` a frozenset of units, returning a number or a
        1-d array of numbers (say accuracy and loss) of the model with those units
        ablated (for heads: their output set to zero).
    units : sequence of hashable, length n <= 12
        The heads, e.g. ``[(layer, head), ...]``; distinct.

    Returns
    -------
    subsets : list of frozenset, length 2**n
        By size, then in ``itertools.combinations`` order: ``subsets[0]`` is the empty
        set (the intact model), ``subsets[1:n+1]`` the single units in the given order.
    values : numpy.ndarray, shape (2**n, m)
        ``values[j] = metric(subsets[j])``; m = 1 for a scalar metric.
    """
    if not callable(metric):
        raise ValueError(f"metric must be a function of a frozenset of units, got {metric!r}")
    units = list(units)
    if len(set(units)) != len(units):
        raise ValueError(f"units must be distinct, got {units}")
    if not 1 <= len(units) <= MAX_ABLATION_UNITS:
        raise ValueError(f"ablate_subsets needs 1..{MAX_ABLATION_UNITS} units (2**n "
                         f"evaluations), got {len(units)}")
    subsets = [frozenset(c) for size in range(len(units) + 1)
               for c in itertools.combinations(units, size)]
    values = [np.atleast_1d(np.asarray(metric(c), dtype=np.float64)) for c in subsets]
    if any(v.ndim != 1 or v.shape != values[0].shape for v in values):
        raise ValueError("metric must return a number or a 1-d array of the same length "
                         "for every subset")
    return subsets, np.stack(values)  # (2**n, m)


def ablation_by_size(subsets, values):
    """Smallest, mean and largest metric over all subsets of each size.

    The mean over the subsets of size k is exactly what removing k heads chosen at random
    gives on average: the baseline a chosen set of heads is measured against.

    Parameters
    ----------
    subsets : list of frozenset, length N
    values : array_like, shape (N,) or (N, m)
        As returned by :func:`ablate_subsets`.

    Returns
    -------
    low, mean, high : numpy.ndarray, each shape (n + 1,) or (n + 1, m)
        Entry k: the smallest, mean and largest value over the subsets of size k
        (k = 0..n, n the largest subset's size).
    """
    v = as_float_array(values, "values", min_ndim=1)
    if len(subsets) != v.shape[0]:
        raise ValueError(f"{len(subsets)} subsets but {v.shape[0]} rows of values")
    sizes = np.array([len(c) for c in subsets])  # (N,)
    n = int(sizes.max())
    groups = [v[sizes == k] for k in range(n + 1)]  # (N_k, ...) each
    if any(len(g) == 0 for g in groups):
        raise ValueError("every size 0..n needs at least one subset")
    return tuple(np.stack([f(g, axis=0) for g in groups]) for f in (np.min, np.mean, np.max))


#: What each score of :func:`head_scores` measures, in display order (chapter 9's lab and
#: figures label them so).
SCORE_LABELS = {"previous": "previous token", "next": "next token", "cls": "[CLS]",
                "sep": "[SEP]", "self": "itself", "spread": "entropy / log T"}
