"""Chapter 1's lab: type a sentence; see tokens, ids, X:(s, d) and its similarities."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..embedding import cosine_similarity, embed, embedding_table
from ..tokens import RUNNING_SENTENCE, UNK_TOKEN, Vocabulary
from .core import (MAX_WIDGET_TOKENS, HasTokens, Note, Scene, read_tokens, seed_slider, slider,
                   text)

__all__ = ["D_CHOICES", "PRESET_SENTENCES", "EmbeddingState", "embedding_state"]

#: The model dimensions chapter 1's lab offers.
D_CHOICES = (2, 4, 8, 16, 32, 64)
#: Chapter 1's suggested sentences: the running example, an unknown word ("glorious"), a
#: longer sentence, and repeated words (whose similarity is exactly 1).
PRESET_SENTENCES = (
    RUNNING_SENTENCE,
    "THE WEATHER IS GLORIOUS TODAY",
    "In the morning the sun was warm, so we went to the river and read a book under a "
    "big tree.",
    "the cat saw the dog and the dog saw the cat",
)


def _repeated(tokens) -> list:
    """The tokens that occur more than once, in order of first occurrence."""
    return [t for t in dict.fromkeys(tokens) if tokens.count(t) > 1]


@dataclass(frozen=True, eq=False)
class EmbeddingState(HasTokens):
    """Everything chapter 1's lab shows for one (text, d, seed)."""

    text: str              # the text as typed
    d: int                 # model dimension
    seed: int              # seed of the embedding table
    tokens: tuple          # (s,) the first MAX_WIDGET_TOKENS tokens of the text
    ids: np.ndarray        # (s,) int64 ids; an unknown word has the id of <unk>
    known: tuple           # (s,) whether each token is in the vocabulary
    total_tokens: int      # tokens of the whole text (>= s)
    X: np.ndarray          # (s, d) embeddings, embed(ids, embedding_table(V, d, seed))
    similarity: np.ndarray  # (s, s) cosine_similarity(X)
    notes: tuple           # Notes: an error (no tokens), truncation, unknown words


def embedding_state(text: str, d: int = 8, seed: int = 0, *,
                    max_tokens: int = MAX_WIDGET_TOKENS) -> EmbeddingState:
    """Text -> tokens -> ids -> X:(s, d) and its (s, s) similarity matrix, with reader notes.

    Pure. Bad text never raises: an empty or over-long text gives s = 0 and an error
    note; more than ``max_tokens`` tokens are truncated with a warning note ("showing the
    first 32 of 57 tokens"); each unknown word gets an info note.

    Parameters
    ----------
    text : str
    d, seed : int
        The model dimension and the seed of the embedding table.
    max_tokens : int

    Raises
    ------
    ValueError
        If ``d`` is not a positive whole number (the text itself is never an error).
    """
    vocab = Vocabulary.default()
    table = embedding_table(len(vocab), d, seed)  # (V, d); validates d
    tokens, notes, total = read_tokens(text, max_tokens)
    ids = vocab.encode(tokens) if tokens else np.zeros(0, dtype=np.int64)  # (s,)
    known = tuple(vocab.is_known(t) for t in tokens)
    unknown = list(dict.fromkeys(t for t, k in zip(tokens, known) if not k))
    unk = f"{UNK_TOKEN} (id {vocab.unk_id})"
    if len(unknown) <= 3:
        notes.extend(Note("info", f"'{word}' is not in the vocabulary: it maps to {unk}")
                     for word in unknown)
    else:
        words = ", ".join(f"'{w}'" for w in unknown)
        notes.append(Note("info", f"{len(unknown)} words are not in the vocabulary: {words}; "
                                  f"each maps to {unk}"))
    if len(unknown) > 1:
        notes.append(Note("info", f"every unknown word shares the one embedding of {UNK_TOKEN}, "
                                  "so their rows of X are identical (similarity 1)"))
    if repeated := _repeated(tokens):
        listed = ", ".join(f"'{w}' ({tokens.count(w)} times)" for w in repeated)
        notes.append(Note("info", f"repeated tokens: {listed}; a repeated token has "
                                  "identical rows of X, so their cosine similarity is 1"))
    X = embed(ids, table) if tokens else np.zeros((0, d))  # (s, d)
    return EmbeddingState(text=text if isinstance(text, str) else "", d=d, seed=seed,
                          tokens=tuple(tokens), ids=ids, known=known, total_tokens=total, X=X,
                          similarity=cosine_similarity(X), notes=tuple(notes))  # (s, s)


SCENE = Scene(
    name="embedding",
    title="Embedding explorer: tokens \u2192 ids \u2192 X",
    controls=(
        text("text", "sentence", RUNNING_SENTENCE, suggestions=PRESET_SENTENCES),
        slider("d", "d (dimension)", D_CHOICES, 8),
        seed_slider("seed (table)"),
    ),
    state=embedding_state, web="embedding",
    suggested=({"d": 64}, {"text": "the cat saw the dog and the dog saw the cat"},
               {"text": "THE WEATHER IS GLORIOUS TODAY"}),
)
SCENES = (SCENE,)
