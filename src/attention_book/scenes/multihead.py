"""Chapter 4's lab: per-head attention weights, head toggles and a live shape tracer.
:func:`multihead_state` is the pure state function; :data:`SCENE` declares the controls (h
offers only the divisors of d, "heads on" only the heads of h)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..multihead import MultiHeadAttention, divisors, shape_trace
from ..positional import sinusoidal_encoding
from ..tokens import RUNNING_SENTENCE
from .core import (as_known, MAX_WIDGET_TOKENS, HasTokens, Note, Scene, choice, embed_tokens, multi,
                   read_tokens, slider, text)

__all__ = ["MAX_HEADS", "MH_D_CHOICES", "MH_DEFAULT_SEED", "MH_SENTENCES", "head_choices",
           "missing_heads_text", "MultiHeadState", "multihead_state"]

#: The most heads the picture shows.
MAX_HEADS = 16
#: The lab's default seed. At seed 0 the two
#: heads of the default state are nearly copies (their weights correlate at 0.94), which
#: reads as "heads are alike" right after the pitfall on shared matrices; at seed 10 they
#: correlate at 0.01 (the mean over seeds 0..29 is 0.03). Chapter 4 computes both.
MH_DEFAULT_SEED = 10
#: The model widths chapter 4's lab offers.
MH_D_CHOICES = (8, 12, 16, 32, 64)
#: The lab's suggested sentences: the running example, and a repeated word ("the") whose two
#: rows agree without positional encoding and differ with it.
MH_SENTENCES = (RUNNING_SENTENCE, "the dog saw the cat")


def head_choices(d: int, max_heads: int = MAX_HEADS) -> tuple[int, ...]:
    """The h offered for width d: its divisors up to ``max_heads`` ((1, 2, 3, 4, 6, 12) for 12)."""
    return tuple(h for h in divisors(d) if h <= max_heads)


def missing_heads_text(d: int, max_heads: int = MAX_HEADS) -> str:
    """Why some h are not offered for width d, quoting the API's error (plain text: "h = 3,
    5, 6, 7 cannot be chosen: ... h=3 does not divide d=8 ...")."""
    text = f"h offered for d={d}: {', '.join(map(str, head_choices(d, max_heads)))}."
    missing = [h for h in range(1, min(d, max_heads) + 1) if d % h]
    if missing:
        try:
            shape_trace(1, 1, d, missing[0])
        except ValueError as err:  # the API's own message, quoted
            text += (f" h = {', '.join(map(str, missing))} cannot be chosen: each head gets "
                     f"d_k = d/h whole columns, and the API says \u201c{err}\u201d.")
    bigger = [h for h in divisors(d) if h > max_heads]
    if bigger:
        verbs = "divides d too but is" if len(bigger) == 1 else "divide d too but are"
        text += (f" h = {', '.join(map(str, bigger))} {verbs} left out: "
                 f"the picture shows at most {max_heads} heads.")
    return text


@dataclass(frozen=True, eq=False)
class MultiHeadState(HasTokens):
    """Everything chapter 4's lab shows for one set of control values."""

    text: str
    d: int                      # model width
    h: int                      # number of heads
    seed: int                   # seed of the embedding table and the weights
    on: tuple                   # (h,) bool: which heads are switched on
    positional: bool            # whether sinusoidal PE was added to X
    tokens: tuple               # (s,) str
    X: np.ndarray               # (s, d) input: embeddings (+ PE if positional)
    weights: np.ndarray         # (h, s, s) each head's attention weights
    contributions: np.ndarray   # (h, s, d) H_i @ W^O_i for each head
    output: np.ndarray          # (s, d) the full multi-head output (all heads)
    on_output: np.ndarray       # (s, d) sum_{i on} H_i W^O_i + b_o
    off_output: np.ndarray      # (s, d) sum_{i off} H_i W^O_i; on + off == output
    head_norms: np.ndarray      # (h,) Frobenius norm of each head's contribution
    check_error: float          # max |sum_i contributions_i + b_o - output| (~1e-16)
    trace: list                 # (name, shape) of every tensor for b = 1 (s = 0 if no tokens)
    notes: tuple                # of Note

    @property
    def d_k(self) -> int:
        """Per-head width d_k = d_v = d / h."""
        return self.d // self.h


def multihead_state(text: str = RUNNING_SENTENCE, d: int = 8, h: int = 2,
                    seed: int = MH_DEFAULT_SEED,
                    heads_on: Sequence[int] | None = None, positional: bool = False, *,
                    max_tokens: int = MAX_WIDGET_TOKENS) -> MultiHeadState:
    """Sentence -> X:(s, d) -> h heads' weights, per-head contributions and outputs.
    Pure; the text never raises (an empty text gives s = 0 and an error note).

    Parameters
    ----------
    text : str
        The sentence (self-attention: queries, keys and values all come from it).
    d, h, seed : int
        Model width (even, for positional encoding), number of heads (must divide d), and
        seed of the embedding table and of ``MultiHeadAttention.from_seed(d, h, seed)``.
    heads_on : sequence of int, optional
        Indices of the heads switched on; None means all.
    positional : bool
        Add sinusoidal positional encoding to X.
    max_tokens : int
        The most tokens kept (a longer text is truncated with a note).

    Raises
    ------
    ValueError
        If h does not divide d ("h=3 does not divide d=8: ...") or a head index is out of
        range.
    """
    mha = MultiHeadAttention.from_seed(d, h, seed=seed, bias=True)  # validates d, h
    on_set = set(range(h)) if heads_on is None else {int(i) for i in heads_on}
    bad = sorted(i for i in on_set if not 0 <= i < h)
    if bad:
        raise ValueError(f"heads_on has head index {bad[0]}, but h={h} heads are "
                         f"numbered 0..{h - 1}")
    on = np.array([i in on_set for i in range(h)])  # (h,)
    tokens, notes, _ = read_tokens(text, max_tokens)
    tokens = as_known(tokens, notes)
    s = len(tokens)
    if s:
        X = embed_tokens(tokens, d, seed)  # (s, d)
        if positional:
            X = X + sinusoidal_encoding(s, d)  # (s, d) + (s, d)
        contributions, weights = mha.head_contributions(X)  # (h, s, d), (h, s, s)
        output, _ = mha(X)  # (s, d)
        on_output = contributions[on].sum(axis=0) + mha.b_o  # (h_on, s, d) -> (s, d)
        check = float(np.abs(contributions.sum(axis=0) + mha.b_o - output).max())
    else:
        X = output = on_output = np.zeros((0, d))
        contributions, weights, check = np.zeros((h, 0, d)), np.zeros((h, 0, 0)), 0.0
    off_output = contributions[~on].sum(axis=0)  # (h_off, s, d) -> (s, d)
    if not on.any():
        notes.append(Note("info", "every head is off: the output is just the bias b_o "
                                  "in every row"))
    return MultiHeadState(
        text if isinstance(text, str) else "", d, h, seed, tuple(bool(f) for f in on),
        bool(positional), tuple(tokens), X, weights, contributions, output, on_output,
        off_output, np.linalg.norm(contributions, axis=(1, 2)),  # (h, s, d) -> (h,)
        check, shape_trace(1, s, d, h), tuple(notes))


def _check(values) -> None:
    """An impossible h gets the API's own message ("h=3 does not divide d=8")."""
    if values["d"] in MH_D_CHOICES:
        shape_trace(1, 1, values["d"], values["h"])


SCENE = Scene(
    name="multihead", title="Multi-head explorer: one heatmap per head",
    controls=(
        text("text", "query sentence", RUNNING_SENTENCE, suggestions=MH_SENTENCES),
        choice("d", "d (model width)", MH_D_CHOICES, 8),
        choice("h", "h (heads)", head_choices(8), 2,
               options_for=lambda v: tuple((str(h), h) for h in head_choices(v["d"]))),
        slider("seed", "seed (weights)", range(21), MH_DEFAULT_SEED),
        # beside the seed on a phone's two columns, before the heads' row of check boxes
        choice("positional", "input", [("X (embeddings)", False),
                                       ("X + positional encoding", True)]),
        multi("heads_on", "heads on", [(f"head {i}", i) for i in range(MAX_HEADS)], (0, 1),
              options_for=lambda v: tuple((f"head {i}", i) for i in range(v["h"]))),
    ),
    state=multihead_state, web="multihead",
    check=_check,
    suggested=(
        {"d": 8, "h": 2, "heads_on": (1,)},                       # switch head 0 off
        {"d": 8, "h": 8, "heads_on": tuple(range(8))},            # raise h at fixed d
        {"text": "the dog saw the cat", "positional": False},     # the repeated "the" ...
        {"text": "the dog saw the cat", "positional": True},      # ... gets different rows
        {"d": 8, "h": 1, "heads_on": (0,)},                       # ... from h = 1
    ))
SCENES = (SCENE,)
