"""Chapter 1's lab: type a sentence; see tokens, ids, X:(s, d) and its similarities.

:func:`embedding_state` is the pure state function that the live lab
(:func:`embedding_widget`) and the kernel-free explorer (:func:`embedding_explorer`) share.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import ipywidgets
import numpy as np

from .._validate import whole_number
from ..embedding import cosine_similarity, embed, embedding_table
from ..explorer import Choice, Explorer, Frame, Slider
from ..plots import EmbeddingView, embedding_view, figure_png
from ..tokens import RUNNING_SENTENCE, UNK_TOKEN, Vocabulary, tokenize
from .core import MAX_WIDGET_TOKENS, Lab, Note, notes_html

__all__ = [
    "D_CHOICES",
    "SEED_RANGE",
    "EmbeddingState",
    "embedding_state",
    "embedding_readout_html",
    "embedding_alt_text",
    "EmbeddingLab",
    "embedding_widget",
    "PRESET_SENTENCES",
    "embedding_explorer",
]

#: The model dimensions chapter 1's lab offers.
D_CHOICES = (2, 4, 8, 16, 32, 64)
#: The seeds chapter 1's lab offers (inclusive).
SEED_RANGE = (0, 20)


@dataclass(frozen=True, eq=False)
class EmbeddingState:
    """Everything chapter 1's lab and explorer show for one (text, d, seed).

    Attributes
    ----------
    text : str
        The text as typed.
    d, seed : int
        The model dimension and the seed of the embedding table.
    tokens : tuple of str, length s
        The tokens shown (the first :data:`MAX_WIDGET_TOKENS` of the text's tokens).
    ids : numpy.ndarray of int64, shape (s,)
        Their ids; an unknown word has the id of ``<unk>``.
    known : tuple of bool, length s
        Whether each token is in the vocabulary.
    total_tokens : int
        The number of tokens of the whole text (>= s).
    X : numpy.ndarray, shape (s, d)
        The embeddings, ``embed(ids, embedding_table(V, d, seed))``.
    similarity : numpy.ndarray, shape (s, s)
        ``cosine_similarity(X)``.
    notes : tuple of Note
        Messages: an error (no tokens), truncation, unknown words.
    """

    text: str
    d: int
    seed: int
    tokens: tuple
    ids: np.ndarray
    known: tuple
    total_tokens: int
    X: np.ndarray
    similarity: np.ndarray
    notes: tuple

    @property
    def s(self) -> int:
        """The number of tokens shown."""
        return len(self.tokens)

    @property
    def shape_line(self) -> str:
        """``"X : (s, d) = (5, 8)"``, or a line saying there are no tokens."""
        if self.s == 0:
            return f"X : (s, d) = (0, {self.d}): no tokens"
        return f"X : (s, d) = ({self.s}, {self.d})"


def embedding_state(text: str, d: int = 8, seed: int = 0, *,
                    max_tokens: int = MAX_WIDGET_TOKENS) -> EmbeddingState:
    """Text -> tokens -> ids -> X:(s, d) and its similarity matrix, with reader messages.

    Pure: the same arguments give the same state. Bad text never raises: an empty or
    over-long text gives a state with s = 0 and an error note; a text with more than
    ``max_tokens`` tokens is truncated with a warning note ("showing the first 32 of 57
    tokens"); each unknown word gets an info note.

    Parameters
    ----------
    text : str
        The sentence.
    d : int
        The model dimension.
    seed : int
        Seed of the embedding table.
    max_tokens : int
        The most tokens to keep.

    Returns
    -------
    EmbeddingState
        With ``X`` of shape (s, d) and ``similarity`` of shape (s, s).

    Raises
    ------
    ValueError
        If ``d`` is not a positive whole number (the text itself is never an error).
    """
    vocab = Vocabulary.default()
    table = embedding_table(len(vocab), d, seed)  # (V, d); validates d
    try:
        all_tokens = tokenize(text)
    except ValueError as err:
        return EmbeddingState(
            text=text if isinstance(text, str) else "", d=d, seed=seed, tokens=(),
            ids=np.zeros(0, dtype=np.int64), known=(), total_tokens=0,
            X=np.zeros((0, d)), similarity=np.zeros((0, 0)),
            notes=(Note("error", str(err)[:1].upper() + str(err)[1:] + "."),),
        )
    notes = []
    tokens = all_tokens[:max_tokens]
    if len(all_tokens) > max_tokens:
        notes.append(Note("warning", f"showing the first {max_tokens} of "
                                     f"{len(all_tokens)} tokens"))
    ids = vocab.encode(tokens)  # (s,)
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
    repeated = [(w, tokens.count(w)) for w in dict.fromkeys(tokens) if tokens.count(w) > 1]
    if repeated:
        listed = ", ".join(f"'{w}' ({n} times)" for w, n in repeated)
        notes.append(Note("info", f"repeated tokens: {listed}; a repeated token has "
                                  "identical rows of X, so their cosine similarity is 1"))
    X = embed(ids, table)  # (s, d)
    return EmbeddingState(
        text=text, d=d, seed=seed, tokens=tuple(tokens), ids=ids, known=known,
        total_tokens=len(all_tokens), X=X, similarity=cosine_similarity(X),  # (s, s)
        notes=tuple(notes),
    )


def embedding_readout_html(state: EmbeddingState) -> str:
    """The readout of chapter 1: tokens with their ids, the shapes, and the notes.

    Every token and message is HTML-escaped, so text typed by the reader is shown
    literally and never interpreted.

    Parameters
    ----------
    state : EmbeddingState

    Returns
    -------
    str
        An HTML fragment with inline styles only (no external CSS).
    """
    chips = []
    for token, token_id, known in zip(state.tokens, state.ids, state.known):
        style = ("display:inline-block;margin:2px;padding:1px 5px;border-radius:3px;"
                 "font-family:monospace;")
        if known:
            style += "border:1px solid #999"
            label = f"{html.escape(token)} &rarr; {int(token_id)}"
        else:
            style += "border:2px dashed #8a1c1c"
            label = (f"{html.escape(token)} &rarr; {int(token_id)} "
                     f"<i>({html.escape(UNK_TOKEN)}, unknown)</i>")
        chips.append(f'<span class="ab-token" style="{style}">{label}</span>')
    tokens_html = ('<div class="ab-tokens"><b>tokens &rarr; ids:</b> '
                   + ("".join(chips) if chips else "<i>none</i>") + "</div>")
    shapes = html.escape(state.shape_line)
    if state.s:
        shapes += html.escape(f";  similarity : (s, s) = ({state.s}, {state.s})")
    shape_html = f'<div class="ab-shape" style="font-family:monospace">{shapes}</div>'
    return ('<div class="ab-readout">' + tokens_html + shape_html
            + notes_html(state.notes) + "</div>")


def embedding_alt_text(state: EmbeddingState) -> str:
    """A plain-text description of chapter 1's figure for ``state`` (for alt text).

    Names the shape, the tokens, the most similar pair of distinct positions and any
    repeated tokens (whose rows of X are identical, similarity 1).
    """
    if state.s == 0:
        return ("Two empty heatmaps: there are no tokens to embed. "
                + " ".join(n.text for n in state.notes))
    words = ", ".join(state.tokens)
    text = (f"Left: heatmap of X with {state.s} rows (tokens: {words}) and {state.d} "
            f"columns (dimensions), values coloured from -3 to 3. Right: the {state.s} by "
            f"{state.s} cosine-similarity matrix of the rows, coloured from -1 to 1, "
            "with 1 on the diagonal.")
    if state.s > 1:
        sim = state.similarity.copy()  # (s, s)
        np.fill_diagonal(sim, -np.inf)
        i, j = np.unravel_index(np.argmax(sim), sim.shape)
        text += (f" The most similar pair of positions is {i} and {j} "
                 f"('{state.tokens[i]}' and '{state.tokens[j]}', {sim[i, j]:.2f}).")
    repeated = [t for t in dict.fromkeys(state.tokens) if state.tokens.count(t) > 1]
    if repeated:
        text += (" Repeated tokens have identical rows and similarity 1: "
                 + ", ".join(f"'{t}'" for t in repeated) + ".")
    unknown = [t for t, k in zip(state.tokens, state.known) if not k]
    if unknown:
        text += " Unknown words mapped to <unk>: " + ", ".join(
            f"'{t}'" for t in dict.fromkeys(unknown)) + "."
    return text


class EmbeddingLab(Lab):
    """Chapter 1's lab: type a sentence, choose d and a seed; see tokens, ids, X:(s, d)
    as a heatmap and the (s, s) cosine-similarity matrix. Build it with
    :func:`embedding_widget`.

    Attributes
    ----------
    controls : dict
        ``"text"`` (ipywidgets.Text, updates on every keystroke), ``"d"``
        (ipywidgets.SelectionSlider over :data:`D_CHOICES`), ``"seed"`` (ipywidgets.IntSlider).
    view : attention_book.plots.EmbeddingView
    state : EmbeddingState
    """

    view: EmbeddingView

    def __init__(self, text: str = RUNNING_SENTENCE, d: int = 8, seed: int = 0):
        if d not in D_CHOICES:
            raise ValueError(f"d must be one of {D_CHOICES}, got {d!r}")
        whole_number(seed, "seed", *SEED_RANGE)
        style = {"description_width": "7em"}
        controls = {
            "text": ipywidgets.Text(
                value=text, description="sentence", placeholder="type a sentence",
                continuous_update=True, style=style,
                layout=ipywidgets.Layout(width="min(100%, 44em)"),
                    ),
            "d": ipywidgets.SelectionSlider(
                options=D_CHOICES, value=d, description="d (dimension)",
                continuous_update=True, style=style,
            ),
            "seed": ipywidgets.IntSlider(
                value=int(seed), min=SEED_RANGE[0], max=SEED_RANGE[1],
                description="seed (table)", continuous_update=True, style=style,
            ),
        }
        super().__init__(controls, embedding_view())

    def compute(self, text: str, d: int, seed: int) -> EmbeddingState:
        return embedding_state(text, d, seed)

    def show(self, state: EmbeddingState) -> None:
        self.view.update(state.tokens, state.X, state.similarity)
        self.readout.value = embedding_readout_html(state)


def embedding_widget(text: str = RUNNING_SENTENCE, d: int = 8, seed: int = 0) -> EmbeddingLab:
    """Chapter 1's live lab (returned, not displayed).

    Parameters
    ----------
    text : str
        The sentence to start with.
    d : int
        The model dimension to start with, one of :data:`D_CHOICES`.
    seed : int
        The embedding table's seed to start with, in :data:`SEED_RANGE`.

    Returns
    -------
    EmbeddingLab
        An ``ipywidgets.VBox``; its figure shows X:(s, d) and the (s, s) similarities.
    """
    return EmbeddingLab(text=text, d=d, seed=seed)


#: Chapter 1's explorer sentences: the running example, an unknown word ("glorious"), a
#: longer sentence, and repeated words (whose similarity is exactly 1).
PRESET_SENTENCES = (
    RUNNING_SENTENCE,
    "THE WEATHER IS GLORIOUS TODAY",
    "In the morning the sun was warm, so we went to the river and read a book under a "
    "big tree.",
    "the cat saw the dog and the dog saw the cat",
)


def embedding_explorer(sentences: Sequence[str] = PRESET_SENTENCES,
                       ds: Sequence[int] = (2, 4, 8, 16, 32), seed: int = 0,
                       dpi: float = 80) -> Explorer:
    """Chapter 1's kernel-free explorer: a sentence menu and a d slider.

    Each (sentence, d) state is computed by :func:`~attention_book.widgets.embedding_state`
    and drawn by one :class:`~attention_book.plots.EmbeddingView`, exactly as the live lab
    does: tokens and ids, X:(s, d) as a heatmap, the (s, s) cosine similarities.

    Parameters
    ----------
    sentences : sequence of str
        The sentences offered (default :data:`PRESET_SENTENCES`).
    ds : sequence of int
        The model dimensions offered.
    seed : int
        Seed of the embedding table.
    dpi : float
        Resolution of the images.

    Returns
    -------
    Explorer
        ``len(sentences) * len(ds)`` states.
    """
    view = embedding_view()

    def render(values) -> Frame:
        state = embedding_state(values["text"], values["d"], seed)
        view.update(state.tokens, state.X, state.similarity)
        return Frame(figure_png(view.figure, dpi=dpi), embedding_alt_text(state),
                     embedding_readout_html(state))

    ds = tuple(ds)
    controls = [
        Choice("text", "Sentence", [(s, s) for s in sentences]),
        Slider("d", "d (dimension)", ds, default=8 if 8 in ds else None),
    ]
    return Explorer(controls, render, title="Embedding explorer: tokens \u2192 ids \u2192 X")
