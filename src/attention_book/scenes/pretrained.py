"""Chapter 9's lab: one head of the pretrained all-MiniLM-L6-v2 on a sentence, and what that
head does across the gallery of 157 sentences (:func:`~attention_book.pretrained.gallery_scores`,
computed once: the chapter's tables and the lab's readout read the same numbers, all from
:func:`~attention_book.pretrained.single_thread_attention`).

Two switches: what the maps show, the attention weights alpha_ij or the weighted value norms
||alpha_ij f_h(x_j)|| of Kobayashi et al. 2020 (each row scaled to sum to 1, so that the two
read on one colour scale: the share of what query i receives that comes from key j); and
the view, one head (its map, arcs from the query, its scores) or the model view (all 72
heads as thumbnails, the chosen one outlined and opened below them)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import whole_number
from ..heads import SCORE_LABELS, head_scores
from ..pretrained import (ANIMAL_SENTENCE, MiniLM, gallery_scores, single_thread_attention,
                          single_thread_value_norms)
from ..tokens import RUNNING_SENTENCE
from .core import Note, Scene, choice, slider, text, token_options

__all__ = ["MAX_PRETRAINED_TOKENS", "ANIMAL_WIDE", "PRETRAINED_PRESETS", "SCORE_LABELS",
           "read_pieces", "PretrainedState", "pretrained_state", "pretrained_query_options",
           "MEASURES", "VIEWS", "shown_maps"]

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
#: What the maps show: value -> (button label, what a map's colour is).
MEASURES = {"weight": ("weights \u03b1", "weight (each row sums to 1)"),
            "norm": ("\u2016\u03b1 f(x)\u2016", "share of \u2016\u03b1 f(x)\u2016 (rows sum to 1)")}
#: The two views: value -> button label.
VIEWS = {"head": "one head", "model": "all 72 heads"}


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
    measure: str         # what the maps show: "weight" or "norm"
    view: str            # "head" (one head) or "model" (all 72 thumbnails and the chosen head)
    value_norms: np.ndarray  # (T,) ||f_h(x_j)||: how long what the head writes from token j is
    norms: np.ndarray    # (T, T) ||alpha_ij f_h(x_j)|| (rows of weights scaled to sum to 1)
    shown: np.ndarray    # (T, T) the head's map as drawn: weights, or norms / their row sums
    thumbs: np.ndarray   # (n_layers * h * T * T,) float32: every head's map as drawn (model view; else empty)
    differs: int         # queries whose largest-weight key is not their largest-norm key
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

    @property
    def shown_row(self) -> np.ndarray:
        """The query's row of the map drawn, shape (T,) (empty without tokens)."""
        return self.shown[self.query] if self.T else np.zeros(0)


def shown_maps(maps, value_norms, measure: str) -> np.ndarray:
    """What the lab draws for heads' maps: the weights, or ||alpha_ij f(x_j)|| with each
    row scaled to sum to 1.

    Parameters
    ----------
    maps : numpy.ndarray, shape (..., T, T)
        Attention weights (rows: queries).
    value_norms : numpy.ndarray, shape (..., T)
        ||f(x_j)|| of the same heads.
    measure : str
        "weight" or "norm".

    Returns
    -------
    numpy.ndarray of float64, shape (..., T, T)
    """
    w = np.asarray(maps, dtype=np.float64)
    if measure == "weight":
        return w.copy()
    w = w / w.sum(axis=-1, keepdims=True)  # rows sum to 1 in float64, as weighted_norms
    norms = w * np.asarray(value_norms, dtype=np.float64)[..., None, :]  # (..., T, T) * (..., 1, T)
    return norms / norms.sum(axis=-1, keepdims=True)


def pretrained_state(text: str = RUNNING_SENTENCE, layer: int = 0, head: int = 2,
                     query: int = 2, measure: str = "weight", view: str = "head", *,
                     max_tokens: int = MAX_PRETRAINED_TOKENS) -> PretrainedState:
    """One head of all-MiniLM-L6-v2 on ``text``, with its scores here and on the gallery.

    Pure (the forward pass is cached for the 16 most recent texts, so only a new text
    costs one). Bad text never raises: it gives T = 0 and a note.

    Parameters
    ----------
    text : str
        Any text; cut after ``max_tokens`` tokens, with a note.
    layer, head, query : int
        Layer 0..5, head 0..11, and the query position to highlight (clamped to T - 1).
    measure : str
        What the maps show: "weight" (alpha) or "norm" (||alpha_ij f(x_j)||, rows scaled
        to sum to 1).
    view : str
        "head" (one head) or "model" (also every head's map, in ``thumbs``).

    Returns
    -------
    PretrainedState
        With ``weights`` of shape (T, T).
    """
    model = MiniLM.load()
    layer = whole_number(layer, "layer", 0, model.n_layers - 1)
    head = whole_number(head, "head", 0, model.n_heads - 1)
    query = whole_number(query, "query", 0)
    for name, value, allowed in (("measure", measure, MEASURES), ("view", view, VIEWS)):
        if not isinstance(value, str) or value not in allowed:
            raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")
    used, tokens, notes, total = read_pieces(text, max_tokens)
    gallery = {name: float(s[layer, head]) for name, s in gallery_scores().mean.items()}
    thumbs, differs = np.zeros(0), 0
    if tokens:
        maps, lengths = single_thread_attention(used), single_thread_value_norms(used)
        weights = maps[layer, head].astype(np.float64)  # (T, T)
        scores = {name: float(v) for name, v in head_scores(weights).items()}
        value_norms = lengths[layer, head].astype(np.float64)  # (T,)
        norms = weights / weights.sum(axis=-1, keepdims=True) * value_norms  # (T, T) * (T,)
        shown = shown_maps(weights, value_norms, measure)  # (T, T)
        differs = int((weights.argmax(axis=-1) != norms.argmax(axis=-1)).sum())
        if view == "model":
            # (L, h, T, T) -> (L*h*T*T,), in float32: half the bytes a live lab sends
            thumbs = shown_maps(maps, lengths, measure).astype(np.float32).ravel()
    else:
        weights, scores, value_norms = np.zeros((0, 0)), {}, np.zeros(0)
        norms, shown = np.zeros((0, 0)), np.zeros((0, 0))
    return PretrainedState(
        text=text if isinstance(text, str) else "", layer=layer, head=head,
        query=min(query, len(tokens) - 1) if tokens else 0, tokens=tuple(tokens),
        total_tokens=total, weights=weights, measure=measure, view=view,
        value_norms=value_norms, norms=norms, shown=shown, thumbs=thumbs, differs=differs,
        scores=scores, gallery=gallery, notes=tuple(notes))


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
        choice("measure", "maps show", [(label, v) for v, (label, _) in MEASURES.items()],
               "weight"),
        choice("view", "view", [(label, v) for v, label in VIEWS.items()], "head"),
    ),
    state=pretrained_state, web="pretrained",
    suggested=({"text": RUNNING_SENTENCE, "layer": 0, "head": 2},
               {"text": RUNNING_SENTENCE, "layer": 1, "head": 8},
               {"text": RUNNING_SENTENCE, "layer": 2, "head": 9},
               {"text": ANIMAL_SENTENCE, "layer": 3, "head": 1, "query": 10},
               {"text": ANIMAL_WIDE, "layer": 3, "head": 1, "query": 10},
               {"text": ANIMAL_SENTENCE, "layer": 5, "head": 11},
               {"text": ANIMAL_WIDE, "layer": 5, "head": 11},
               {"text": RUNNING_SENTENCE, "layer": 2, "head": 9, "measure": "norm"},
               {"text": ANIMAL_SENTENCE, "layer": 3, "head": 1, "query": 10,
                "view": "model"}),
)
SCENES = (SCENE,)
