"""Chapter 9's lab: one head of the pretrained all-MiniLM-L6-v2 on a sentence, and what
that head does across the gallery of 157 sentences (:func:`gallery_scores`, computed once:
the chapter's tables and the lab's readout read the same numbers). The model runs on one
BLAS thread: its matrices are small (T x 384), and more threads only wait for each other.
"""

from __future__ import annotations

import functools
import html
import math
from dataclasses import dataclass

import numpy as np

from .._validate import whole_number
from ..cost import blas_threads
from ..heads import (mean_row_entropy, next_token_score, position_score,
                     previous_token_score, self_score)
from ..pretrained import ANIMAL_SENTENCE, MiniLM, load_sentences
from ..tokens import MAX_TEXT_CHARS, RUNNING_SENTENCE
from .core import Note, Preset, Scene, choice, notes_html, slider, text

__all__ = [
    "MAX_PRETRAINED_TOKENS", "ANIMAL_WIDE", "PRETRAINED_PRESETS", "SCORE_LABELS",
    "head_scores", "Gallery", "gallery_scores", "read_pieces", "PretrainedState",
    "pretrained_state", "pretrained_readout_html", "pretrained_alt_text",
    "pretrained_query_options",
]

#: The most tokens ([CLS] and [SEP] included) the lab shows; longer texts are cut.
MAX_PRETRAINED_TOKENS = 128
#: The animal sentence with the other adjective: now "it" is the street.
ANIMAL_WIDE = "The animal didn't cross the street because it was too wide."
#: The explorer's sentences, each with the query it highlights: (label, text, query).
PRETRAINED_PRESETS = (
    ("running sentence, query 'weather'", RUNNING_SENTENCE, 2),
    ("'... because it was too tired.', query 'it'", ANIMAL_SENTENCE, 10),
    ("'... because it was too wide.', query 'it'", ANIMAL_WIDE, 10),
)
#: What each head score measures (see :func:`head_scores`), in display order.
SCORE_LABELS = {"previous": "previous token", "next": "next token", "cls": "[CLS]",
                "sep": "[SEP]", "self": "itself", "spread": "entropy / log T"}


def head_scores(weights) -> dict:
    """What a head does on one sentence: the :mod:`attention_book.heads` scores.

    Parameters
    ----------
    weights : array_like, shape (..., T, T)
        Attention maps of one sentence (rows = queries), e.g. (n_layers, h, T, T).

    Returns
    -------
    dict of str to float or numpy.ndarray of shape (...)
        "previous" (weight on key i-1), "next" (key i+1), "cls" (key 0), "sep" (key
        T-1), "self" (key i), "entropy" (mean row entropy, nats) and "spread" (entropy /
        log T: 0 = one key, 1 = uniform).
    """
    w = np.asarray(weights, dtype=np.float64)
    w = w / w.sum(axis=-1, keepdims=True)  # float32 rows of the model, summing to 1 again
    entropy = mean_row_entropy(w)
    return {"previous": previous_token_score(w), "next": next_token_score(w),
            "cls": position_score(w, 0), "sep": position_score(w, -1),
            "self": self_score(w), "entropy": entropy,
            "spread": entropy / math.log(w.shape[-1])}


@dataclass(frozen=True, eq=False)
class Gallery:
    """Every head measured on every gallery sentence.

    Attributes
    ----------
    sentences : tuple of str, length n = 157
    lengths : numpy.ndarray of int, shape (n,)
        Tokens T of each sentence, [CLS] and [SEP] included.
    scores : dict of str to numpy.ndarray, each of shape (n, n_layers, h) = (n, 6, 12)
        :func:`head_scores` per sentence (read-only).
    """

    sentences: tuple
    lengths: np.ndarray
    scores: dict

    @property
    def mean(self) -> dict:
        """Each score averaged over the sentences: name -> (n_layers, h)."""
        return {name: s.mean(axis=0) for name, s in self.scores.items()}


@functools.lru_cache(maxsize=16)
def _attention(text: str) -> np.ndarray:
    """``MiniLM.attention(text)``, (n_layers, h, T, T), run here on one BLAS thread, with
    a cache of its own (float32 products on 1 and on 2 threads differ in the last bits,
    so the model's cache is left to its other callers)."""
    model = MiniLM.load()
    x, maps = model.embed(model.encode(text)), []  # (T, d)
    with blas_threads(1):
        for block in model.blocks:
            x, weights = block.forward(x)  # (T, d), (h, T, T)
            maps.append(weights)
    maps = np.stack(maps)  # (n_layers, h, T, T)
    maps.flags.writeable = False  # shared by every caller of the cache
    return maps


@functools.lru_cache(maxsize=1)
def gallery_scores() -> Gallery:
    """:func:`head_scores` of all 72 heads on each of the gallery's sentences (computed
    once per process: about 4 s, most of it the model's forward passes)."""
    model, sentences = MiniLM.load(), tuple(load_sentences())
    per_sentence = [head_scores(_attention(s)) for s in sentences]  # (6, 12) arrays each
    scores = {name: np.stack([s[name] for s in per_sentence]) for name in per_sentence[0]}
    for array in scores.values():  # (n, 6, 12)
        array.flags.writeable = False
    lengths = np.array([len(model.tokenize(s)) for s in sentences])
    return Gallery(sentences, lengths, scores)


def read_pieces(text, max_tokens: int = MAX_PRETRAINED_TOKENS):
    """The model's tokens of reader-typed text, cut to ``max_tokens``; never raises.

    A longer text is cut after the last whole word that fits (its word pieces all kept).

    Returns
    -------
    used : str
        The text the model reads (``text`` or its beginning; "" when unreadable).
    tokens : list of str, length T <= max_tokens ([] for bad text)
    notes : list of Note
    total : int
        Tokens of the whole text (0 for bad text).
    """
    model = MiniLM.load()
    notes, total = [], 0
    if isinstance(text, str) and text.strip() and len(text) <= MAX_TEXT_CHARS:
        enc = model.tokenizer.encode(text)  # no truncation: every piece
        total = len(enc.ids)
        if total > max_tokens:
            keep = max_tokens - 2  # the last kept piece; [SEP] is added back
            while keep > 1 and enc.tokens[keep + 1].startswith("##"):
                keep -= 1  # a word must not be split across the cut
            text = text[:enc.offsets[keep][1]]
            notes.append(Note("warning", f"showing the first {keep + 2} of {total} tokens "
                                         f"(the lab reads at most {max_tokens})"))
    try:
        tokens = model.tokenize(text)
    except ValueError as err:
        message = str(err)
        return "", [], [Note("error", message[:1].upper() + message[1:] + ".")], 0
    return text, tokens, notes, total or len(tokens)


@dataclass(frozen=True, eq=False)
class PretrainedState:
    """What the lab shows for one (text, layer, head, query).

    Attributes
    ----------
    text : str
        As typed ("" if it was not a string).
    layer, head : int
        0-based: layer 0..5, head 0..11.
    query : int
        The highlighted query position (clamped to the sentence).
    tokens : tuple of str, length T
    total_tokens : int
        Tokens of the whole text (>= T).
    weights : numpy.ndarray, shape (T, T)
        The head's attention weights (rows = queries), ``attention(text)[layer, head]``.
    scores : dict of str to float
        :func:`head_scores` of ``weights`` (empty without tokens).
    gallery : dict of str to float
        The same scores of this head averaged over the gallery.
    notes : tuple of Note
    """

    text: str
    layer: int
    head: int
    query: int
    tokens: tuple
    total_tokens: int
    weights: np.ndarray
    scores: dict
    gallery: dict
    notes: tuple

    @property
    def T(self) -> int:
        return len(self.tokens)

    @property
    def row(self) -> np.ndarray:
        """The query's weights, shape (T,) (empty without tokens)."""
        return self.weights[self.query] if self.T else np.zeros(0)


def pretrained_state(text: str = RUNNING_SENTENCE, layer: int = 0, head: int = 2,
                     query: int = 2, *, max_tokens: int = MAX_PRETRAINED_TOKENS
                     ) -> PretrainedState:
    """One head of all-MiniLM-L6-v2 on ``text``, with its scores here and on the gallery.

    Pure (the forward pass is cached for the 16 most recent texts, so only a new text
    costs one). Bad text never raises: it gives T = 0 and a note.

    Parameters
    ----------
    text : str
        Any text; cut after ``max_tokens`` tokens, with a note.
    layer, head, query : int
        Layer 0..5, head 0..11, and the query position to highlight (clamped to T - 1).

    Returns
    -------
    PretrainedState
        With ``weights`` of shape (T, T).
    """
    model = MiniLM.load()
    layer = whole_number(layer, "layer", 0, model.n_layers - 1)
    head = whole_number(head, "head", 0, model.n_heads - 1)
    query = whole_number(query, "query", 0)
    used, tokens, notes, total = read_pieces(text, max_tokens)
    gallery = {name: float(s[layer, head]) for name, s in gallery_scores().mean.items()}
    if tokens:
        weights = _attention(used)[layer, head].astype(np.float64)  # (T, T)
        scores = {name: float(v) for name, v in head_scores(weights).items()}
    else:
        weights, scores = np.zeros((0, 0)), {}
    return PretrainedState(
        text=text if isinstance(text, str) else "", layer=layer, head=head,
        query=min(query, len(tokens) - 1) if tokens else 0, tokens=tuple(tokens),
        total_tokens=total, weights=weights, scores=scores, gallery=gallery,
        notes=tuple(notes))


def pretrained_readout_html(state: PretrainedState) -> str:
    """The lab's readout: the query's strongest keys, and a table of the head's scores on
    this sentence, on the whole gallery and for a uniform head (every token escaped)."""
    parts = [f"<b>layer {state.layer}, head {state.head}</b> of all-MiniLM-L6-v2: weights "
             f": (T, T) = ({state.T}, {state.T})"]
    columns = [f"gallery ({len(gallery_scores().sentences)} sentences)"]
    if state.T:
        row, who = state.row, html.escape(state.tokens[state.query])
        keys = ", ".join(f"{j} '{html.escape(state.tokens[j])}' {row[j]:.2f}"
                         for j in np.argsort(row)[::-1][:3])
        parts.append(f"query {state.query} '{who}' attends most to: {keys}")
        columns = ["this sentence", *columns, "uniform head"]
    rows = []
    for name, label in SCORE_LABELS.items():
        values = [state.gallery[name]]
        if state.T:
            values = [state.scores[name], *values, 1.0 if name == "spread" else 1 / state.T]
        rows.append(f"<tr><td>{html.escape(label)}</td>"
                    + "".join(f"<td>{v:.3f}</td>" for v in values) + "</tr>")
    table = ('<table style="font-size:90%;border-collapse:collapse" cellpadding="2"><tr>'
             + "".join(f"<th>{c}</th>" for c in ["score", *columns]) + "</tr>"
             + "".join(rows) + "</table>")
    return ('<div class="ab-readout" style="font-size:90%">' + "<br>".join(parts) + table
            + notes_html(state.notes) + "</div>")


def pretrained_alt_text(state: PretrainedState) -> str:
    """Plain-text description of the lab's figure for ``state``."""
    gallery = ("bars of the head's scores averaged over the gallery: " + ", ".join(
        f"{SCORE_LABELS[n]} {state.gallery[n]:.2f}" for n in SCORE_LABELS) + ".")
    if not state.T:
        return ("Empty heatmap and arcs: there are no tokens. "
                + " ".join(n.text for n in state.notes) + " Bottom right: " + gallery)
    row = state.row
    top = int(np.argmax(row))
    mine = ", ".join(f"{SCORE_LABELS[n]} {state.scores[n]:.2f}" for n in SCORE_LABELS)
    return (f"Left: heatmap of the {state.T} by {state.T} attention weights of layer "
            f"{state.layer}, head {state.head}, tokens ({', '.join(state.tokens[:20])}"
            f"{', ...' if state.T > 20 else ''}) on both axes, colour 0 to 1, row "
            f"{state.query} outlined. Top right: arcs from query {state.query} "
            f"'{state.tokens[state.query]}' to every token; the heaviest goes to "
            f"{top} '{state.tokens[top]}' with weight {row[top]:.2f}. Bottom right: bars "
            f"of the head's scores on this sentence ({mine}) beside its " + gallery)


def pretrained_query_options(values) -> tuple:
    """The query drop-down's choices for the current text: ("position: token", i)."""
    tokens = read_pieces(values["text"])[1]
    if not tokens:
        return (("(no tokens)", 0),)
    return tuple((f"{i}: {t}", i) for i, t in enumerate(tokens))


SCENE = Scene(
    name="pretrained",
    title="A pretrained model's heads: all-MiniLM-L6-v2",
    controls=(
        text("text", "sentence", RUNNING_SENTENCE),
        slider("layer", "layer", range(6), 0),
        slider("head", "head", range(12), 2),
        choice("query", "query token", [(str(i), i) for i in range(MAX_PRETRAINED_TOKENS)],
               2, explore=(2,), options_for=pretrained_query_options),
    ),
    state=pretrained_state,
    readout=pretrained_readout_html,
    alt=pretrained_alt_text,
    presets=(Preset("sentence", "sentence", tuple(
        (label, {"text": sentence, "query": query})
        for label, sentence, query in PRETRAINED_PRESETS)),),
    suggested=({"text": RUNNING_SENTENCE, "layer": 0, "head": 2},
               {"text": RUNNING_SENTENCE, "layer": 1, "head": 8},
               {"text": RUNNING_SENTENCE, "layer": 2, "head": 9},
               {"text": ANIMAL_SENTENCE, "layer": 3, "head": 1, "query": 10},
               {"text": ANIMAL_WIDE, "layer": 3, "head": 1, "query": 10},
               {"text": ANIMAL_SENTENCE, "layer": 5, "head": 11},
               {"text": ANIMAL_WIDE, "layer": 5, "head": 11}),
)
SCENES = (SCENE,)
