"""Byte-pair encoding (Sennrich et al., 2016): how a sub-word vocabulary is learned.

Start from the characters of every word, with an end-of-word marker ``</w>`` glued to the
last one, so that "low" is ``l o w</w>``. Then repeat: count every pair of adjacent
symbols over the corpus (each word weighted by how often it occurs), merge the most
frequent pair into one new symbol everywhere, and add that symbol to the vocabulary. Each
merge adds one symbol; the list of merges, in order, is the tokenizer. A new word is
split by applying the same merges in the same order (:func:`bpe_segment`).

Ties between equally frequent pairs are broken by the pair met first when reading the
corpus's words in order of first appearance, left to right: this is what the reference
code of the paper does (it takes ``max`` over a dict filled in that order), so the merges
here are the paper's.

This module needs only the standard library: symbols are strings, counts are ints.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

__all__ = ["END_OF_WORD", "BPEMerge", "pair_counts", "learn_bpe", "bpe_segment"]

#: Marks the end of a word, so that a piece at the end of a word ("est</w>" in "newest")
#: differs from the same letters inside one ("est" in "estate").
END_OF_WORD = "</w>"


@dataclass(frozen=True)
class BPEMerge:
    """One step of the merge loop.

    Attributes
    ----------
    pair : tuple of (str, str)
        The two adjacent symbols merged.
    count : int
        How often they stood side by side in the corpus just before the merge (each word
        counted as often as it occurs).
    vocabulary_size : int
        The number of symbols in the vocabulary after the merge: the alphabet plus one per
        merge so far.
    corpus_length : int
        The number of symbols the whole corpus is written with after the merge.
    """

    pair: tuple[str, str]
    count: int
    vocabulary_size: int
    corpus_length: int

    @property
    def symbol(self) -> str:
        """The new symbol: the two merged symbols written together."""
        return self.pair[0] + self.pair[1]


def _word_counts(corpus) -> dict[str, int]:
    """{word: count}, in order of first appearance; from a dict or a list of texts."""
    if isinstance(corpus, str):
        raise ValueError("corpus must be a list of texts or a {word: count} dict, got one string")
    if isinstance(corpus, dict):
        counts = {}
        for word, n in corpus.items():
            if not isinstance(word, str) or not word or any(c.isspace() for c in word):
                raise ValueError(f"corpus keys must be words without spaces, got {word!r}")
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"the count of {word!r} must be a whole number >= 1, got {n!r}")
            counts[word] = n
    else:
        counts = {}
        for text in corpus:
            if not isinstance(text, str):
                raise ValueError(f"corpus must hold texts (str), got {type(text).__name__}")
            for word in text.split():
                counts[word] = counts.get(word, 0) + 1
    if not counts:
        raise ValueError("corpus holds no word: give at least one")
    if any(END_OF_WORD in word for word in counts):
        raise ValueError(f"words must not contain the end-of-word marker {END_OF_WORD!r}")
    return counts


def _split(word: str) -> tuple[str, ...]:
    """'low' -> ('l', 'o', 'w</w>')."""
    return (*word[:-1], word[-1] + END_OF_WORD)


def pair_counts(segmented: dict[tuple[str, ...], int]) -> Counter:
    """Count the adjacent symbol pairs of a segmented corpus.

    Parameters
    ----------
    segmented : dict of tuple of str to int
        Each word as a tuple of its symbols, mapped to how often it occurs.

    Returns
    -------
    collections.Counter
        ``{(a, b): n}``: a and b stand side by side n times in the corpus. The keys are in
        the order they are first met, reading the words in the dict's order, left to
        right (the tie-break of :func:`learn_bpe`).
    """
    pairs = Counter()
    for symbols, n in segmented.items():
        for pair in zip(symbols, symbols[1:]):
            pairs[pair] += n
    return pairs


def _merge(symbols: tuple[str, ...], pair: tuple[str, str]) -> tuple[str, ...]:
    """Replace every occurrence of ``pair`` in ``symbols``, left to right, by one symbol."""
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def learn_bpe(corpus, n_merges: int) -> tuple[list[BPEMerge], dict[str, tuple[str, ...]]]:
    """Learn up to ``n_merges`` byte-pair merges from a corpus.

    Parameters
    ----------
    corpus : list of str, or dict of str to int
        Texts, split into words on white space, or ``{word: count}`` directly.
    n_merges : int
        The most merges to learn, >= 0. The loop stops earlier when every word is one
        symbol (no pair is left to merge).

    Returns
    -------
    merges : list of BPEMerge
        The merges in the order they were learned, each with its pair count and the sizes
        of the vocabulary and of the corpus after it.
    segmentation : dict of str to tuple of str
        Every word of the corpus, as the symbols it is written with after the last merge.

    Raises
    ------
    ValueError
        If the corpus holds no word, a word contains ``</w>``, a count is not a whole
        number >= 1, or ``n_merges`` is not a whole number >= 0.

    Examples
    --------
    >>> merges, seg = learn_bpe({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 4)
    >>> [m.symbol for m in merges]
    ['es', 'est</w>', 'lo', 'ne']
    >>> seg["newest"]
    ('ne', 'w', 'est</w>')
    """
    if isinstance(n_merges, bool) or not isinstance(n_merges, int) or n_merges < 0:
        raise ValueError(f"n_merges must be a whole number >= 0, got {n_merges!r}")
    counts = _word_counts(corpus)
    segmented = {_split(word): n for word, n in counts.items()}  # insertion order = first seen
    vocabulary = {symbol for symbols in segmented for symbol in symbols}
    merges = []
    for _ in range(n_merges):
        pairs = pair_counts(segmented)
        if not pairs:
            break
        best = max(pairs, key=pairs.get)  # the first of the most frequent, in reading order
        segmented = {_merge(symbols, best): n for symbols, n in segmented.items()}
        vocabulary.add(best[0] + best[1])
        merges.append(BPEMerge(best, pairs[best], len(vocabulary),
                               sum(len(symbols) * n for symbols, n in segmented.items())))
    return merges, {word: symbols for word, symbols in zip(counts, segmented)}


def bpe_segment(word: str, merges) -> tuple[str, ...]:
    """Split a word with learned merges, applied in the order they were learned.

    Parameters
    ----------
    word : str
        One word, without white space; it need not be in the training corpus.
    merges : list of BPEMerge or of (str, str)
        The merges, as :func:`learn_bpe` returns them.

    Returns
    -------
    tuple of str
        The symbols; joined, they spell ``word + "</w>"``. A word made of letters never seen
        in training keeps them as single characters: plain BPE on characters has no
        unknown token, but its vocabulary lacks those letters (byte-level BPE starts from
        the 256 bytes instead, so that every text has a spelling).

    Examples
    --------
    >>> merges, _ = learn_bpe({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 11)
    >>> bpe_segment("lowest", merges)
    ('low', 'est</w>')
    """
    if not isinstance(word, str) or not word or any(c.isspace() for c in word):
        raise ValueError(f"word must be one word without spaces, got {word!r}")
    if END_OF_WORD in word:
        raise ValueError(f"word must not contain the end-of-word marker {END_OF_WORD!r}")
    symbols = _split(word)
    for merge in merges:
        pair = merge.pair if isinstance(merge, BPEMerge) else tuple(merge)
        if len(pair) != 2 or not all(isinstance(p, str) and p for p in pair):
            raise ValueError(f"each merge must be a pair of two symbols, got {merge!r}")
        symbols = _merge(symbols, pair)
    return symbols
