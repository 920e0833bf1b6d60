"""Text -> tokens -> ids: a word-level tokenizer and the book's vocabulary.

Real models split text into sub-word pieces (BPE, WordPiece) so that no word is ever
unknown; the book splits on words so that every token on screen is a word a reader can
see. The vocabulary is small (a few hundred common words) and fixed, and in it the notes'
sentence "THE WEATHER IS LOVELY TODAY" gets the ids 105, 12, 24, 107, 57.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from ._validate import whole_number

#: The notes' running example, used in every chapter.
RUNNING_SENTENCE = "THE WEATHER IS LOVELY TODAY"
#: Its ids in :func:`Vocabulary.default`.
RUNNING_IDS = (105, 12, 24, 107, 57)
#: The longest text :func:`tokenize` accepts, in characters.
MAX_TEXT_CHARS = 100_000

PAD_TOKEN = "<pad>"
UNK_TOKEN = "<unk>"

# A run of letters and digits, the clitic 's, or any other single non-space character.
_TOKEN_RE = re.compile(r"[^\W_]+|'s\b|[^\w\s]|_")


def invisible(ch: str) -> bool:
    """True if ``ch`` draws nothing and is not a space: a control (Unicode category Cc) or
    format character (Cf), such as the zero-width space U+200B, ZWJ/ZWNJ, the soft hyphen
    U+00AD or the byte order mark U+FEFF. :func:`tokenize` drops them, so a token is what
    the reader sees: "co\u00adoperate" is "cooperate"."""
    return unicodedata.category(ch) in ("Cc", "Cf") and not ch.isspace()


def tokenize(text: str) -> list[str]:
    """Split ``text`` into lower-case word and punctuation tokens.

    Characters that draw nothing (:func:`invisible`) are dropped first.

    Parameters
    ----------
    text : str
        Any text. Case is folded, so "The" and "THE" are one token.

    Returns
    -------
    list of str
        The s tokens, in order.

    Raises
    ------
    ValueError
        If ``text`` is not a string, holds no token, or is longer than
        :data:`MAX_TEXT_CHARS` characters.

    Examples
    --------
    >>> tokenize("THE WEATHER IS LOVELY TODAY")
    ['the', 'weather', 'is', 'lovely', 'today']
    >>> tokenize("It's the dog's bone.")
    ['it', "'s", 'the', 'dog', "'s", 'bone', '.']
    >>> tokenize("zero\u200bwidth \ufeffco\u00adoperate")
    ['zerowidth', 'cooperate']
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(
            f"text is {len(text):,} characters long; the limit is {MAX_TEXT_CHARS:,}"
        )
    if not text.isprintable():  # drop what draws nothing (spaces stay: they separate)
        text = "".join(ch for ch in text if not invisible(ch))
    tokens = _TOKEN_RE.findall(text.lower())
    if not tokens:
        raise ValueError("text is empty: type at least one word")
    return tokens


@dataclass(frozen=True)
class Vocabulary:
    """A fixed list of tokens; a token's id is its position in the list.

    Parameters
    ----------
    words : tuple of str
        The V tokens. ``words[0]`` is the padding token and ``words[1]`` the unknown token
        that every out-of-vocabulary word maps to.
    """

    words: tuple[str, ...]
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        words = tuple(self.words)
        if len(words) < 2 or words[:2] != (PAD_TOKEN, UNK_TOKEN):
            raise ValueError(
                f"words must start with {PAD_TOKEN!r} and {UNK_TOKEN!r}, got {words[:2]}"
            )
        if len(set(words)) != len(words):
            repeated = sorted({w for w in words if words.count(w) > 1})
            raise ValueError(f"words must be unique, repeated: {repeated}")
        object.__setattr__(self, "words", words)
        object.__setattr__(self, "_index", {w: i for i, w in enumerate(words)})

    @classmethod
    @functools.cache
    def default(cls) -> "Vocabulary":
        """The book's vocabulary (246 tokens), read from the package's ``vocab.txt`` once.

        Every caller shares the one instance; it is immutable."""
        text = resources.files("attention_book").joinpath("data/vocab.txt").read_text()
        return cls(tuple(text.split()))

    def __len__(self) -> int:
        return len(self.words)

    @property
    def unk_id(self) -> int:
        """The id every unknown word maps to."""
        return 1

    def is_known(self, token: str) -> bool:
        """True if ``token`` has an id of its own."""
        return token in self._index

    def encode(self, tokens: list[str]) -> np.ndarray:
        """Map tokens to ids; a token not in the vocabulary gets :attr:`unk_id`.

        Parameters
        ----------
        tokens : list of str
            s tokens, as returned by :func:`tokenize`.

        Returns
        -------
        numpy.ndarray of int64, shape (s,)
            The ids.
        """
        if isinstance(tokens, str):
            raise ValueError("encode takes a list of tokens: call tokenize(text) first")
        tokens = list(tokens)
        if not tokens:
            raise ValueError("tokens is empty: there is nothing to encode")
        return np.array([self._index.get(t, self.unk_id) for t in tokens], dtype=np.int64)

    def decode(self, ids) -> list[str]:
        """Map ids back to tokens.

        Parameters
        ----------
        ids : array_like of int, shape (s,)

        Returns
        -------
        list of str
            The s tokens (an unknown word comes back as ``"<unk>"``).
        """
        ids = np.asarray(ids)
        if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"ids must be a 1-D array of integers, got {ids.dtype} {ids.shape}")
        bad = ids[(ids < 0) | (ids >= len(self))]
        if bad.size:
            raise ValueError(f"ids must lie in 0..{len(self) - 1}, got {bad.tolist()}")
        return [self.words[i] for i in ids]


def next_token_pairs(ids, context: int, stride: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Cut a text's ids into (input, target) windows for next-token prediction.

    A language model learns p(x_t | x_0..x_{t-1}) at every position at once: each window
    of ``context`` ids is an input, and its target is the same window one id later, so
    target j is the token that follows input j. Window k starts at id ``k * stride``;
    ``stride = context`` (the default) gives windows that do not overlap, a smaller
    stride gives overlapping ones (more pairs from the same text, each id seen in more
    contexts).

    Parameters
    ----------
    ids : array_like of int, shape (n,)
        The ids of one text (documents joined by an end-of-text token, if several).
    context : int
        The length s of each window, >= 1.
    stride : int, optional
        How far each window starts after the one before, >= 1; ``context`` if omitted.

    Returns
    -------
    inputs, targets : numpy.ndarray of int64, each shape (m, s)
        ``targets[k] = ids[k * stride + 1 : k * stride + 1 + s]``: the inputs shifted by one.
        Every window whose target fits in the text, m = (n - 1 - s) // stride + 1.
    """
    ids = np.asarray(ids)
    if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"ids must be a 1-D array of integers, got {ids.dtype} {ids.shape}")
    context = whole_number(context, "context", low=1)
    stride = context if stride is None else whole_number(stride, "stride", low=1)
    if len(ids) < context + 1:
        raise ValueError(f"a window of context={context} needs {context + 1} ids (its targets "
                         f"reach one further), got {len(ids)}")
    starts = np.arange(0, len(ids) - context, stride)  # (m,): every window whose target fits
    window = starts[:, None] + np.arange(context)  # (m, 1) + (s,) -> (m, s): input positions
    return ids[window].astype(np.int64), ids[window + 1].astype(np.int64)
