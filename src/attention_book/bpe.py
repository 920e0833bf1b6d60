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

Chapter 10's model uses the byte-level form of BPE (GPT-2's, :class:`ByteLevelBPE`): it
starts from the 256 bytes rather than from characters, so that every text has a spelling,
and it cuts the text into words with a pre-tokenizer (:func:`gpt2_split`,
:func:`smollm_split`) instead of at spaces.

This module needs only the standard library and numpy (for its integer types): symbols
are strings, counts are ints.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ._validate import whole_number

__all__ = ["END_OF_WORD", "BPEMerge", "pair_counts", "learn_bpe", "bpe_segment",
           "bytes_to_unicode", "gpt2_split", "smollm_split", "PRE_TOKENIZERS", "ByteLevelBPE"]

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


# ------------------------------------------------------------ byte-level BPE (chapter 10)


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's spelling of the 256 bytes as printable characters (Radford et al. 2019).

    Byte-level BPE works on bytes, but its vocabulary and merges are written as text: each
    byte becomes one visible character. The printable bytes of Latin-1 ("!".."~",
    "\\xa1".."\\xac", "\\xae".."\\xff") spell themselves; the other 68 (controls, the space,
    ...) are moved to code points 256 and up, in order: so a space is "Ġ" (U+0120) and a
    newline "Ċ" (U+010A).

    Returns
    -------
    dict of int -> str
        All 256 bytes, each to one character.
    """
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    spelling, extra = {}, 0
    for b in range(256):
        if b in printable:
            spelling[b] = chr(b)
        else:
            spelling[b] = chr(256 + extra)
            extra += 1
    return spelling


#: The characters regular expressions call white space (\\s): Unicode's White_Space.
_WHITE_SPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
                         "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
#: GPT-2's contractions, split off a word ("I'm" -> "I", "'m").
_CONTRACTIONS = ("s", "t", "re", "ve", "m", "ll", "d")


def _kind(c: str) -> str:
    """"space", "letter" (\\p{L}), "number" (\\p{N}) or "other", by Python's Unicode tables
    (a character assigned in a later Unicode version than Python's is "other")."""
    if c in _WHITE_SPACE:
        return "space"
    category = unicodedata.category(c)[0]
    return "letter" if category == "L" else "number" if category == "N" else "other"


def gpt2_split(text: str) -> list[str]:
    """GPT-2's pre-tokenizer: cut text into words before BPE, without regular expressions.

    It is the regular expression
    ``'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+``,
    read alternative by alternative: a contraction; else a run of letters, of numbers or of
    other symbols, each with at most one space glued in front; else a run of white space,
    less its last character when a word follows (that space then starts the word). Joined,
    the pieces give the text back.

    Parameters
    ----------
    text : str

    Returns
    -------
    list of str
        E.g. ``gpt2_split("I'm  here!")`` = ``["I", "'m", " ", " here", "!"]``.
    """
    pieces, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "'":
            suffix = next((x for x in _CONTRACTIONS if text.startswith(x, i + 1)), None)
            if suffix is not None:
                pieces.append("'" + suffix)
                i += 1 + len(suffix)
                continue
        start = i + 1 if c == " " and i + 1 < n and _kind(text[i + 1]) != "space" else i
        kind = _kind(text[start])
        if kind != "space":  # ' ?\p{L}+', ' ?\p{N}+' or ' ?[^\s\p{L}\p{N}]+'
            j = start + 1
            while j < n and _kind(text[j]) == kind:
                j += 1
        else:  # '\s+(?!\S)', else '\s+'
            j = i + 1
            while j < n and _kind(text[j]) == "space":
                j += 1
            if j < n and j - i > 1:  # a word follows: leave it the last space
                j -= 1
        pieces.append(text[i:j])
        i = j
    return pieces


def smollm_split(text: str) -> list[str]:
    """The ``smollm`` pre-tokenizer (SmolLM2, llama.cpp's ``LLAMA_VOCAB_PRE_TYPE_SMOLLM``):
    every digit is a piece of its own, and the text between digits is cut by
    :func:`gpt2_split`. So numbers are always spelled digit by digit.

    Returns
    -------
    list of str
        E.g. ``smollm_split("in 2024")`` = ``["in", " ", "2", "0", "2", "4"]``.
    """
    pieces, run = [], []
    for c in text:
        if _kind(c) == "number":
            if run:
                pieces += gpt2_split("".join(run))
                run = []
            pieces.append(c)
        else:
            run.append(c)
    return pieces + (gpt2_split("".join(run)) if run else [])


#: Pre-tokenizers by the name a GGUF file gives (``tokenizer.ggml.pre``).
PRE_TOKENIZERS = {"gpt2": gpt2_split, "smollm": smollm_split}


class ByteLevelBPE:
    """A byte-level BPE tokenizer from a vocabulary and a list of merges, as a GGUF file
    (or a Hugging Face ``tokenizer.json``) gives them: GPT-2's scheme, used by SmolLM2.

    Encoding: cut the text at special tokens (matched whole, e.g. ``<|im_start|>``); cut
    the rest into words with the pre-tokenizer; spell each word's UTF-8 bytes with
    :func:`bytes_to_unicode`; then, in each word, merge the adjacent pair of symbols that
    comes first in the merge list, again and again, until no pair of the list is left.
    With every byte in the vocabulary every text can be encoded: there is no unknown token
    (a byte the vocabulary lacks is dropped: :attr:`missing_bytes`). Decoding joins the
    tokens' spellings and turns them back into bytes.

    Parameters
    ----------
    tokens : sequence of str
        The vocabulary: token i's spelling (byte-level characters, or a special token).
    merges : sequence of str or of (str, str)
        The merges in order ("Ġ t" or ("Ġ", "t")); earlier ones are applied first.
    special : sequence of int
        Ids of the special tokens found whole in a text (control tokens).
    pre_tokenizer : str
        A name in :data:`PRE_TOKENIZERS`.

    Attributes
    ----------
    tokens : tuple of str
    vocab : dict of str -> int
    """

    def __init__(self, tokens, merges, special=(), pre_tokenizer: str = "gpt2"):
        self.tokens = tuple(tokens)
        if not self.tokens or not all(isinstance(t, str) and t for t in self.tokens):
            raise ValueError("tokens must be a non-empty list of non-empty strings")
        self.vocab = {t: i for i, t in enumerate(self.tokens)}
        if pre_tokenizer not in PRE_TOKENIZERS:
            raise ValueError(f"unknown pre-tokenizer {pre_tokenizer!r}: the book knows "
                             f"{sorted(PRE_TOKENIZERS)}")
        self.pre_tokenizer = pre_tokenizer
        self._split = PRE_TOKENIZERS[pre_tokenizer]
        self.ranks = {}
        for rank, m in enumerate(merges):
            pair = tuple(m.split(" ")) if isinstance(m, str) else tuple(m)
            if len(pair) != 2 or pair[0] + pair[1] not in self.vocab:
                raise ValueError(f"merge {rank} ({m!r}) must be two symbols whose join is a "
                                 f"token of the vocabulary")
            self.ranks.setdefault(pair, rank)
        self.byte_spelling = bytes_to_unicode()
        #: Bytes without a token of their own: a text's bytes among them are dropped, as
        #: Hugging Face's tokenizer drops them (SmolLM2 lacks 21: six control characters
        #: and 15 bytes that valid UTF-8 never or hardly ever uses).
        self.missing_bytes = tuple(b for b, c in self.byte_spelling.items()
                                   if c not in self.vocab)
        self._byte_of = {c: b for b, c in self.byte_spelling.items()}
        self.special = tuple(sorted({int(i) for i in special}))
        for i in self.special:
            whole_number(i, "a special token's id", 0, len(self.tokens) - 1)
        self._specials = sorted((self.tokens[i] for i in self.special), key=len, reverse=True)
        self._words: dict[str, tuple[int, ...]] = {}

    @property
    def vocab_size(self) -> int:
        """V, the number of tokens."""
        return len(self.tokens)

    def __repr__(self) -> str:
        return (f"ByteLevelBPE(V={self.vocab_size}, merges={len(self.ranks)}, "
                f"special={len(self.special)}, pre_tokenizer={self.pre_tokenizer!r})")

    def merge_word(self, word: str) -> list[str]:
        """The BPE symbols of one pre-tokenized word (its bytes spelled as characters).

        Parameters
        ----------
        word : str
            A piece of text, e.g. " hello".

        Returns
        -------
        list of str
            The tokens' spellings, e.g. ["Ġhello"].
        """
        spelled = (self.byte_spelling[b] for b in word.encode("utf-8"))
        symbols = [c for c in spelled if c in self.vocab]  # a byte without a token is dropped
        while len(symbols) > 1:
            ranked = [(self.ranks.get(pair, len(self.ranks)), i)
                      for i, pair in enumerate(zip(symbols, symbols[1:]))]
            rank, i = min(ranked)  # the earliest merge; the leftmost of its places
            if rank == len(self.ranks):
                break
            symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
        return symbols

    def _chunks(self, text: str):
        """(piece, is_special) in order: the text cut at its special tokens."""
        i, start, n = 0, 0, len(text)
        while i < n:
            hit = next((s for s in self._specials if text.startswith(s, i)), None)
            if hit is None:
                i += 1
                continue
            if start < i:
                yield text[start:i], False
            yield hit, True
            i = start = i + len(hit)
        if start < n:
            yield text[start:], False

    def encode(self, text: str) -> list[int]:
        """Token ids of a text.

        Parameters
        ----------
        text : str
            Any text ("" gives []).

        Returns
        -------
        list of int
        """
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {type(text).__name__}")
        ids = []
        for chunk, special in self._chunks(text):
            if special:
                ids.append(self.vocab[chunk])
                continue
            for word in self._split(chunk):
                if word not in self._words:
                    if len(self._words) > 100_000:  # reader-typed text: keep memory bounded
                        self._words.clear()
                    self._words[word] = tuple(self.vocab[s] for s in self.merge_word(word))
                ids += self._words[word]
        return ids

    def pieces(self, ids) -> list[str]:
        """Each token's spelling, e.g. ["Hello", "Ġworld"]."""
        return [self.tokens[i] for i in self._ids(ids)]

    def _ids(self, ids) -> list[int]:
        out = []
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
                raise ValueError(f"token ids must be whole numbers, got {i!r}")
            if not 0 <= i < len(self.tokens):
                raise ValueError(f"token id {i} is outside the vocabulary "
                                 f"(0..{len(self.tokens) - 1})")
            out.append(int(i))
        return out

    def decode(self, ids, *, skip_special: bool = False) -> str:
        """The text of token ids: the inverse of :meth:`encode`.

        Bytes that are not valid UTF-8 on their own (half of an emoji, when a text is cut
        between its tokens) become "\\ufffd", as in Hugging Face's decoder.

        Parameters
        ----------
        ids : sequence of int
        skip_special : bool
            Leave the special tokens out.
        """
        out, buffer = [], bytearray()
        special = set(self.special)
        for i in self._ids(ids):
            if i in special:
                out.append(buffer.decode("utf-8", errors="replace"))
                buffer.clear()
                if not skip_special:
                    out.append(self.tokens[i])
            else:
                buffer += bytes(self._byte_of[c] for c in self.tokens[i])
        out.append(buffer.decode("utf-8", errors="replace"))
        return "".join(out)
