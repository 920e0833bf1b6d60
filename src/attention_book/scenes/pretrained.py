"""Chapter 9's lab: one head of the pretrained all-MiniLM-L6-v2 on a sentence, and what that
head does across the gallery of 157 sentences (:func:`~attention_book.pretrained.gallery_scores`,
computed once: the chapter's tables and the lab's readout read the same numbers, all from
:func:`~attention_book.pretrained.single_thread_attention`)."""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from .._validate import whole_number
from ..heads import head_scores
from ..pretrained import ANIMAL_SENTENCE, MiniLM, gallery_scores, single_thread_attention
from ..tokens import RUNNING_SENTENCE
from .core import (Note, Scene, choice, no_tokens_alt, readout_html, slider, text,
                   token_options)

__all__ = ["MAX_PRETRAINED_TOKENS", "ANIMAL_WIDE", "PRETRAINED_PRESETS", "SCORE_LABELS",
           "read_pieces", "PretrainedState", "pretrained_state", "pretrained_readout_html",
           "pretrained_alt_text", "pretrained_query_options"]

#: The most tokens ([CLS] and [SEP] included) the lab shows; longer texts are cut.
MAX_PRETRAINED_TOKENS = 128
#: The animal sentence with the other adjective: now "it" is the street.
ANIMAL_WIDE = "The animal didn't cross the street because it was too wide."
#: The lab's preset sentences (shown before the model loads), each with the query it highlights: (label, text, query).
PRETRAINED_PRESETS = (
    ("running sentence, query 'weather'", RUNNING_SENTENCE, 2),
    ("'... because it was too tired.', query 'it'", ANIMAL_SENTENCE, 10),
    ("'... because it was too wide.', query 'it'", ANIMAL_WIDE, 10),
)
#: What each head score measures (see :func:`attention_book.heads.head_scores`), in
#: display order.
SCORE_LABELS = {"previous": "previous token", "next": "next token", "cls": "[CLS]",
                "sep": "[SEP]", "self": "itself", "spread": "entropy / log T"}


def read_pieces(text, max_tokens: int = MAX_PRETRAINED_TOKENS):
    """The model's tokens of reader-typed text, cut to ``max_tokens``
    (:meth:`~attention_book.pretrained.MiniLM.cut`: a word is never split); never raises.

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
    try:
        used, kept, total = model.cut(text, max_tokens)
        tokens = model.tokenize(used)
    except ValueError as err:
        message = str(err)
        return "", [], [Note("error", message[:1].upper() + message[1:] + ".")], 0
    notes = [Note("warning", f"showing the first {kept} of {total} tokens (the lab reads "
                             f"at most {max_tokens})")] if kept < total else []
    return used, tokens, notes, total


@dataclass(frozen=True, eq=False)
class PretrainedState:
    """What the lab shows for one (text, layer, head, query)."""

    text: str            # as typed ("" if it was not a string)
    layer: int           # 0-based: 0..5
    head: int            # 0-based: 0..11
    query: int           # the highlighted query position (clamped to the sentence)
    tokens: tuple        # (T,) str
    total_tokens: int    # tokens of the whole text (>= T)
    weights: np.ndarray  # (T, T) the head's weights (rows: queries), attention(text)[layer, head]
    scores: dict         # str -> float: head_scores of weights (empty without tokens)
    gallery: dict        # str -> float: the same scores of this head averaged over the gallery
    notes: tuple         # of Note

    @property
    def T(self) -> int:
        return len(self.tokens)

    @property
    def source(self) -> str:
        """Where the weights come from, as the browser's module says: "package" (computed
        here), or "none" without tokens."""
        return "package" if self.T else "none"

    @property
    def gallery_sentences(self) -> int:
        """How many sentences the gallery's scores average over."""
        return len(gallery_scores().sentences)

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
        weights = single_thread_attention(used)[layer, head].astype(np.float64)  # (T, T)
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
    columns = [f"gallery ({state.gallery_sentences} sentences)"]
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
    return readout_html("<br>".join(parts) + table, state.notes, "font-size:90%")


def pretrained_alt_text(state: PretrainedState) -> str:
    """Plain-text description of the lab's figure for ``state``."""
    gallery = ("bars of the head's scores averaged over the gallery: " + ", ".join(
        f"{SCORE_LABELS[n]} {state.gallery[n]:.2f}" for n in SCORE_LABELS) + ".")
    if not state.T:
        return no_tokens_alt("Empty heatmap and arcs", state.notes) + " Bottom right: " + gallery
    row, top = state.row, int(np.argmax(state.row))
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
    return token_options(read_pieces(values["text"])[1])


SCENE = Scene(
    name="pretrained",
    title="A pretrained model's heads: all-MiniLM-L6-v2",
    controls=(
        text("text", "sentence", RUNNING_SENTENCE,
             suggestions=[sentence for _, sentence, _ in PRETRAINED_PRESETS]),
        slider("layer", "layer", range(6), 0),
        slider("head", "head", range(12), 2),
        choice("query", "query token", [(str(i), i) for i in range(MAX_PRETRAINED_TOKENS)],
               2, options_for=pretrained_query_options),
    ),
    state=pretrained_state, readout=pretrained_readout_html, alt=pretrained_alt_text,
    web="pretrained",
    suggested=({"text": RUNNING_SENTENCE, "layer": 0, "head": 2},
               {"text": RUNNING_SENTENCE, "layer": 1, "head": 8},
               {"text": RUNNING_SENTENCE, "layer": 2, "head": 9},
               {"text": ANIMAL_SENTENCE, "layer": 3, "head": 1, "query": 10},
               {"text": ANIMAL_WIDE, "layer": 3, "head": 1, "query": 10},
               {"text": ANIMAL_SENTENCE, "layer": 5, "head": 11},
               {"text": ANIMAL_WIDE, "layer": 5, "head": 11}),
)
SCENES = (SCENE,)
