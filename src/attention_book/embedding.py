"""ids -> X:(s, d): an embedding table, one-hot vectors, and the lookup they amount to."""

from __future__ import annotations

import numpy as np

from ._validate import as_float_array, positive_int


def embedding_table(vocab_size: int, d: int, seed: int = 0) -> np.ndarray:
    """A random embedding table, as an untrained model starts with.

    Entries are drawn from N(0, 1), the initialisation of ``torch.nn.Embedding``.

    Parameters
    ----------
    vocab_size : int
        V, the number of tokens in the vocabulary.
    d : int
        The model dimension.
    seed : int
        Seed of the numpy generator; the same seed gives the same table.

    Returns
    -------
    numpy.ndarray, shape (V, d)
        Row ``t`` is the embedding of the token with id ``t``.
    """
    vocab_size = positive_int(vocab_size, "vocab_size")
    d = positive_int(d, "d")
    return np.random.default_rng(seed).standard_normal((vocab_size, d))


def _check_ids(ids, vocab_size: int) -> np.ndarray:
    ids = np.asarray(ids)
    if ids.ndim != 1 or ids.size == 0:
        raise ValueError(f"ids must be a non-empty 1-D array of s ids, got shape {ids.shape}")
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"ids must be integers, got dtype {ids.dtype}")
    bad = ids[(ids < 0) | (ids >= vocab_size)]
    if bad.size:
        raise ValueError(
            f"ids must lie in 0..{vocab_size - 1} (the vocabulary has {vocab_size} "
            f"tokens), got {bad.tolist()}"
        )
    return ids


def one_hot(ids, vocab_size: int) -> np.ndarray:
    """One-hot rows: row ``j`` is all zeros except a 1 at column ``ids[j]``.

    Parameters
    ----------
    ids : array_like of int, shape (s,)
    vocab_size : int
        V.

    Returns
    -------
    numpy.ndarray, shape (s, V)
    """
    vocab_size = positive_int(vocab_size, "vocab_size")
    ids = _check_ids(ids, vocab_size)
    return np.eye(vocab_size)[ids]  # (V, V)[s] -> (s, V)


def embed(ids, table) -> np.ndarray:
    """Look up the embeddings of ``ids``: X = table[ids], which equals one_hot(ids) @ table.

    Parameters
    ----------
    ids : array_like of int, shape (s,)
    table : array_like, shape (V, d)

    Returns
    -------
    numpy.ndarray, shape (s, d)
        X, one row per token.
    """
    table = as_float_array(table, "table", min_ndim=2)
    if table.ndim != 2:
        raise ValueError(f"table must have shape (V, d), got {table.shape}")
    ids = _check_ids(ids, table.shape[0])
    return table[ids]  # (V, d)[s] -> (s, d)


def cosine_similarity(x) -> np.ndarray:
    """Cosine of the angle between every pair of rows of ``x``.

    Parameters
    ----------
    x : array_like, shape (s, d)

    Returns
    -------
    numpy.ndarray, shape (s, s)
        Entry (i, j) is x_i . x_j / (|x_i| |x_j|), in [-1, 1]; a zero row has similarity 0
        with everything (its direction is undefined).
    """
    x = as_float_array(x, "x", min_ndim=2)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (s, d), got {x.shape}")
    norms = np.linalg.norm(x, axis=1, keepdims=True)  # (s, 1)
    unit = np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)  # (s, d)
    return np.clip(unit @ unit.T, -1.0, 1.0)  # (s, d) @ (d, s) -> (s, s)


def chance_similarities(ids, vocab_size: int, d: int, seeds) -> np.ndarray:
    """Cosine similarities of the token pairs of one sentence, in many random tables.

    For each seed, the sentence is embedded with a fresh untrained table
    (:func:`embedding_table`) and the similarity of every pair of its tokens is taken:
    what chance alone gives, before any training.

    Parameters
    ----------
    ids : array_like of int, shape (s,)
        Token ids, s >= 2, each in 0..V-1.
    vocab_size : int
        V, the number of rows of each table.
    d : int
        The model dimension.
    seeds : sequence of int, length n
        One table per seed.

    Returns
    -------
    numpy.ndarray, shape (n, s (s - 1) / 2)
        Row r holds, for seed ``seeds[r]``, the cosine similarity of tokens i < j in the
        order of ``numpy.triu_indices(s, 1)``.
    """
    ids = _check_ids(ids, positive_int(vocab_size, "vocab_size"))
    if ids.ndim != 1 or len(ids) < 2:
        raise ValueError(f"ids must have shape (s,) with s >= 2 tokens, got shape {ids.shape}")
    seeds = [int(seed) for seed in seeds]
    if not seeds:
        raise ValueError("seeds is empty: give at least one seed")
    upper = np.triu_indices(len(ids), 1)  # the s (s - 1) / 2 pairs i < j
    # Only the table's rows up to the largest id: the generator draws a table row after row,
    # so embedding_table(rows, d, seed) is the first rows of embedding_table(vocab_size, d,
    # seed), bit for bit, at a fraction of the draws (108 of 246 rows for the running
    # sentence; tests check it).
    rows = int(ids.max()) + 1
    return np.stack([
        # (rows, d) -> (s, d) -> (s, s) -> the pairs i < j
        cosine_similarity(embed(ids, embedding_table(rows, d, seed)))[upper]
        for seed in seeds
    ])  # (n, s (s - 1) / 2)


def tied_logits(x, table) -> np.ndarray:
    """Output logits with weight tying: the output layer reuses the embedding table.

    A language model ends with a linear layer from d back to V numbers, one logit per
    vocabulary entry. With weight tying (Press and Wolf, 2017; the Transformer paper,
    section 3.4) that layer's weight *is* the embedding table E, transposed:
    ``logits = x E^T``, so the logit of token t is the dot product of x with t's
    embedding, and the model stores V d numbers once instead of twice.

    Parameters
    ----------
    x : array_like, shape (..., d)
        Hidden states, one row per position (for example the last block's output).
    table : array_like, shape (V, d)
        The embedding table E.

    Returns
    -------
    numpy.ndarray, shape (..., V)
        ``x @ table.T``: entry t is x . E[t].
    """
    table = as_float_array(table, "table", min_ndim=2)
    if table.ndim != 2:
        raise ValueError(f"table must have shape (V, d), got {table.shape}")
    x = as_float_array(x, "x")
    if x.shape[-1] != table.shape[1]:
        raise ValueError(
            f"x has d={x.shape[-1]} columns but the table's rows have d={table.shape[1]}: "
            f"a tied output layer needs x as wide as the embeddings"
        )
    return x @ table.T  # (..., d) @ (d, V) -> (..., V)
