"""Chapter 6's lab, the mask editor: choose a mask (none, causal, padding, a causal sliding
window or a band) and see what it does to the scores, the weights (masked before the softmax,
so each row is renormalised over the keys it may see, or, to see why that is right, zeroed
after it) and the output. :func:`masking_state` is the pure state function."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._validate import whole_number
from ..attention import (attention_scores, project_qkv, projection_weights,
                         scaled_dot_product_attention)
from ..masking import fully_masked_rows, mask_after_softmax, named_mask, padding_mask
from ..tokens import PAD_TOKEN, RUNNING_SENTENCE
from .core import (as_known, MAX_WIDGET_TOKENS, HasTokens, Note, Scene, choice, compare, embed_tokens,
                   read_tokens, slider, text, when)

__all__ = ["MASK_KINDS", "MASK_METHODS", "MASKING_D", "MASKING_D_K", "MASKING_SENTENCES",
           "MaskingState", "masking_state"]

#: The mask kinds: (label, value).
MASK_KINDS = (("no mask", "none"), ("causal", "causal"), ("padding", "padding"),
              ("sliding window", "window"), ("band", "band"))
#: Where the mask is applied: (label, value).
MASK_METHODS = (("\u2212\u221e before softmax", "before"), ("0 after softmax (wrong)", "after"))
#: Model width of the lab (chapter 1's table, seed 0) and the width of Q, K, V.
MASKING_D, MASKING_D_K = 8, 4
#: The lab's suggested sentences: the running example and a longer one.
MASKING_SENTENCES = (RUNNING_SENTENCE, "the cat saw the dog and the dog saw the cat")

_KIND_VALUES = tuple(v for _, v in MASK_KINDS)


@functools.lru_cache(maxsize=1)
def _projections():
    """One set of projections W^Q, W^K, W^V:(d, d_k)."""
    return projection_weights(MASKING_D, MASKING_D_K, seed=0)


@dataclass(frozen=True, eq=False)
class MaskingState(HasTokens):
    """Everything the mask editor shows for one setting of its controls."""

    # the controls' values as given (length: how many tokens are real when padding)
    text: str
    kind: str
    method: str
    length: int
    window: int
    lower: int
    upper: int
    tokens: tuple          # (s,) str; with padding, positions length..s-1 are <pad>
    real: np.ndarray       # (s,) bool: True = a real token (all True unless padding)
    mask: np.ndarray       # (s, s) bool: True = query i may attend to key j
    scores: np.ndarray     # (s, s) q_i . k_j / sqrt(d_k), before any mask
    # (s, s) masked weights: softmax of the masked scores ("before"), or
    # softmax(scores) * mask ("after")
    weights: np.ndarray
    output: np.ndarray     # (s, d_k) weights @ V
    notes: tuple           # of Note

    @property
    def row_sums(self) -> np.ndarray:
        """Each query's total weight, shape (s,)."""
        return self.weights.sum(axis=-1)

    @property
    def seen(self) -> np.ndarray:
        """How many keys each query may see, shape (s,) of int."""
        return self.mask.sum(axis=-1)

    @property
    def fully_masked(self) -> np.ndarray:
        """Queries that may attend to nothing, shape (s,) of bool."""
        return fully_masked_rows(self.mask) if self.s else np.zeros(0, dtype=bool)


def band_past_note(lower: int, upper: int, s: int) -> str:
    """The note when a band slider reaches past what a sentence of s tokens can show (the
    sliders go to 16 whatever s): no query has more than s - 1 keys on either side, so larger
    values draw the same mask."""
    note = (f"keys before {lower}, after {upper}: no query of these s = {s} tokens has more "
            f"than {s - 1} keys on either side, so values past {s - 1} draw the same mask")
    if lower >= s - 1 and upper >= s - 1:
        note += "; this band covers every key, as no mask does"
    return note


def masking_state(text: str = RUNNING_SENTENCE, kind: str = "causal", length: int = 3,
                  window: int = 2, lower: int = 1, upper: int = 1, method: str = "before",
                  *, max_tokens: int = MAX_WIDGET_TOKENS) -> MaskingState:
    """Sentence -> X -> scores -> masked weights -> output, for one mask.

    X comes from chapter 1's table (d = :data:`MASKING_D`, seed 0), Q, K, V from one
    seeded set of projections (d_k = :data:`MASKING_D_K`). Pure. Bad text never raises:
    it gives s = 0 and a note; bad numbers raise ValueError.

    Parameters
    ----------
    text : str
    kind : {"none", "causal", "padding", "window", "band"}
    length : int
        Padding only: how many tokens are real (>= 0; more than s means all).
    window : int
        Window only: keys i-window+1..i (>= 1).
    lower, upper : int
        Band only: keys i-lower..i+upper (>= 0 each).
    method : {"before", "after"}
        Mask the scores with -inf before the softmax (right) or zero the weights after it
        (wrong: rows no longer sum to 1).
    max_tokens : int

    Returns
    -------
    MaskingState
        mask, scores, weights (s, s); output (s, d_k).
    """
    if kind not in _KIND_VALUES:
        raise ValueError(f"kind must be one of {list(_KIND_VALUES)}, got {kind!r}")
    if method not in ("before", "after"):
        raise ValueError(f"method must be 'before' or 'after', got {method!r}")
    length = whole_number(length, "length (real tokens)", 0)
    window = whole_number(window, "window", 1)
    lower = whole_number(lower, "lower", 0)
    upper = whole_number(upper, "upper", 0)
    tokens, notes, _ = read_tokens(text, max_tokens)
    tokens = as_known(tokens, notes)
    s = len(tokens)
    real = np.ones(s, dtype=bool)
    if kind == "padding" and s:
        real = padding_mask(min(length, s), s)  # (s,)
        tokens = [t if r else PAD_TOKEN for t, r in zip(tokens, real)]
        if length >= s:
            notes.append(Note("info", f"length {length} \u2265 s = {s}: every token is real, "
                                      "nothing is padded"))
        elif length:
            notes.append(Note("info", f"the <pad> query rows {length}..{s - 1} still compute "
                                      "an output, which the loss ignores; no query gives a "
                                      "<pad> key any weight"))
    if s == 0:
        mask = np.zeros((0, 0), dtype=bool)
        scores = weights = mask.astype(float)
        output = np.zeros((0, MASKING_D_K))
    else:
        X = embed_tokens(tokens, MASKING_D)  # (s, d)
        Q, K, V = project_qkv(X, *_projections())  # (s, d) @ (d, d_k) -> (s, d_k) each
        mask = named_mask(kind, s, padding=real, window=window, lower=lower,
                          upper=upper)  # (s, s)
        scores = attention_scores(Q, K)  # (s, d_k) @ (d_k, s) -> (s, s)
        if method == "before":
            output, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
        else:
            weights = mask_after_softmax(scores, mask)  # (s, s)
            output = weights @ V  # (s, s) @ (s, d_k) -> (s, d_k)
    empty = np.flatnonzero(fully_masked_rows(mask)) if s else np.zeros(0, dtype=int)
    if empty.size:
        rows = ", ".join(str(i) for i in empty[:12]) + (", \u2026" if empty.size > 12 else "")
        notes.append(Note("warning", f"rows {rows} may attend to nothing (fully masked): the "
                                     "book gives them zero weights and a zero output; a plain "
                                     "softmax of all \u2212\u221e gives NaN"))
    if kind == "window" and s and window >= s:
        notes.append(Note("info", f"window {window} \u2265 s = {s}: the same as the causal mask"))
    if kind == "band" and s and (max(lower, upper) > s - 1 or min(lower, upper) >= s - 1):
        notes.append(Note("info", band_past_note(lower, upper, s)))
    if kind == "band" and s and lower >= s - 1 and upper == 0:
        notes.append(Note("info", "a band reaching every earlier key and none after is the "
                                  "causal mask"))
    sums = weights.sum(-1)[mask.any(-1)] if s else np.zeros(0)  # rows that see something
    if method == "after" and sums.size and sums.min() < 1 - 1e-9:
        notes.append(Note("warning", f"masked after the softmax: the rows sum to "
                                     f"{sums.min():.2f}..{sums.max():.2f}, not 1; the hidden "
                                     "keys kept their share of the softmax"))
    return MaskingState(
        text=text if isinstance(text, str) else "", kind=kind, method=method, length=length,
        window=window, lower=lower, upper=upper, tokens=tuple(tokens), real=real, mask=mask,
        scores=scores, weights=weights, output=output, notes=tuple(notes))


SCENE = Scene(
    name="masking",
    title="Mask editor: what a mask does to the scores, the weights and the output",
    controls=(
        text("text", "sentence", RUNNING_SENTENCE, suggestions=MASKING_SENTENCES),
        choice("kind", "mask", MASK_KINDS, "causal"),
        slider("length", "real tokens", range(MAX_WIDGET_TOKENS + 1), 3,
               active_when=when("kind", "padding"), hint="used by the padding mask only"),
        slider("window", "window size", range(1, 17), 2, active_when=when("kind", "window"),
               hint="used by the sliding window only"),
        slider("lower", "band: keys before", range(17), 1, active_when=when("kind", "band"),
               hint="used by the band only"),
        slider("upper", "band: keys after", range(17), 1, active_when=when("kind", "band"),
               hint="used by the band only"),
        choice("method", "apply the mask", MASK_METHODS, "before",
               active_when=compare("kind", "!=", "none"), hint="there is no mask to apply"),
    ),
    state=masking_state, web="masking",
    suggested=({"kind": "causal", "method": "after"}, {"kind": "padding", "length": 0},
               {"kind": "padding", "length": 3}, {"kind": "window", "window": 2},
               {"kind": "band", "lower": 0, "upper": 2}, {"kind": "none"}),
)
SCENES = (SCENE,)
