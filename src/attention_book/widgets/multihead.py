"""Chapter 4's lab: per-head attention weights, head toggles and a live shape tracer.

:func:`multihead_state` is the pure state function that the live lab
(:func:`multihead_widget`) and the kernel-free explorer (:func:`multihead_explorer`) share.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import ipywidgets
import numpy as np

from ..explorer import Choice, Explorer, Frame
from ..multihead import MultiHeadAttention, divisors, shape_trace
from ..plots import MAX_HEADS, MultiHeadView, figure_png, multihead_view
from ..positional import sinusoidal_encoding
from ..tokens import RUNNING_SENTENCE
from .core import MAX_WIDGET_TOKENS, Lab, Note, notes_html
from .embedding import embedding_state

__all__ = [
    "MH_D_CHOICES",
    "MH_SEED_RANGE",
    "MH_EXPLORER_MODELS",
    "head_choices",
    "missing_heads_text",
    "MultiHeadState",
    "multihead_state",
    "multihead_readout_html",
    "multihead_alt_text",
    "MultiHeadLab",
    "multihead_widget",
    "multihead_explorer",
]

#: The model widths chapter 4's lab offers.
MH_D_CHOICES = (8, 12, 16, 32, 64)
#: The seeds chapter 4's lab offers (inclusive); one seed draws the embedding table and
#: the attention weights.
MH_SEED_RANGE = (0, 20)


def head_choices(d: int, max_heads: int = MAX_HEADS) -> tuple[int, ...]:
    """The head counts the lab offers for width d: divisors of d, at most ``max_heads``.

    Parameters
    ----------
    d : int
        Model width.
    max_heads : int
        The most heads the picture shows.

    Returns
    -------
    tuple of int
        E.g. (1, 2, 3, 4, 6, 12) for d = 12.
    """
    return tuple(h for h in divisors(d) if h <= max_heads)


def missing_heads_text(d: int, max_heads: int = MAX_HEADS) -> str:
    """Why some h are not offered for width d, quoting the error the API raises.

    Parameters
    ----------
    d : int
        Model width.
    max_heads : int
        The most heads the picture shows.

    Returns
    -------
    str
        Plain text, e.g. "h = 3, 5, 6, 7 are missing for d=8: h=3 does not divide d=8: ...".
    """
    offered = head_choices(d, max_heads)
    missing = [h for h in range(1, min(d, max_heads) + 1) if d % h]
    text = f"h offered for d={d}: {', '.join(map(str, offered))}."
    if missing:
        try:
            shape_trace(1, 1, d, missing[0])
        except ValueError as err:  # the API's own message, quoted
            reason = str(err)
        text += (f" h = {', '.join(map(str, missing))} cannot be chosen: each head gets "
                 f"d_k = d/h whole columns, and the API says \u201c{reason}\u201d.")
    bigger = [h for h in divisors(d) if h > max_heads]
    if bigger:
        text += (f" h = {', '.join(map(str, bigger))} divide d too but are left out: "
                 f"the picture shows at most {max_heads} heads.")
    return text


@dataclass(frozen=True, eq=False)
class MultiHeadState:
    """Everything chapter 4's lab and explorer show for one set of control values.

    Attributes
    ----------
    text : str
    d, h, seed : int
        Model width, number of heads, seed of the embedding table and the weights.
    on : tuple of bool, length h
        Which heads are switched on.
    positional : bool
        Whether sinusoidal positional encoding was added to X.
    tokens : tuple of str, length s
    X : numpy.ndarray, shape (s, d)
        The input (embeddings, plus PE if ``positional``).
    weights : numpy.ndarray, shape (h, s, s)
        Each head's attention weights.
    contributions : numpy.ndarray, shape (h, s, d)
        ``H_i @ W^O_i`` for each head.
    output : numpy.ndarray, shape (s, d)
        The full multi-head output (all heads).
    on_output : numpy.ndarray, shape (s, d)
        ``sum_{i on} H_i W^O_i + b_o``.
    off_output : numpy.ndarray, shape (s, d)
        ``sum_{i off} H_i W^O_i``; ``on_output + off_output == output``.
    head_norms : numpy.ndarray, shape (h,)
        The Frobenius norm of each head's contribution.
    check_error : float
        ``max |sum_i contributions_i + b_o - output|`` (about 1e-16).
    trace : list of (str, tuple)
        :func:`~attention_book.multihead.shape_trace` for b = 1.
    notes : tuple of Note
    """

    text: str
    d: int
    h: int
    seed: int
    on: tuple
    positional: bool
    tokens: tuple
    X: np.ndarray
    weights: np.ndarray
    contributions: np.ndarray
    output: np.ndarray
    on_output: np.ndarray
    off_output: np.ndarray
    head_norms: np.ndarray
    check_error: float
    trace: list
    notes: tuple

    @property
    def s(self) -> int:
        """The number of tokens."""
        return len(self.tokens)

    @property
    def d_k(self) -> int:
        """Per-head width d_k = d_v = d / h."""
        return self.d // self.h


def multihead_state(text: str = RUNNING_SENTENCE, d: int = 8, h: int = 2, seed: int = 0,
                    heads_on: Sequence[int] | None = None,
                    positional: bool = False, *,
                    max_tokens: int = MAX_WIDGET_TOKENS) -> MultiHeadState:
    """Sentence -> X:(s, d) -> h heads' weights, per-head contributions and outputs.

    Pure: the same arguments give the same state. The text never raises (an empty text
    gives s = 0 and an error note).

    Parameters
    ----------
    text : str
        The sentence (queries, keys and values all come from it: self-attention).
    d : int
        Model width (even, for positional encoding).
    h : int
        Number of heads; must divide d.
    seed : int
        Seed of the embedding table and of ``MultiHeadAttention.from_seed(d, h, seed,
        bias=True)``.
    heads_on : sequence of int, optional
        Indices of the heads switched on; None means all.
    positional : bool
        Add sinusoidal positional encoding to X.
    max_tokens : int
        The most tokens to keep (a longer text is truncated with a note).

    Returns
    -------
    MultiHeadState

    Raises
    ------
    ValueError
        If h does not divide d ("h=3 does not divide d=8: ..."), or a head index is out
        of range.
    """
    mha = MultiHeadAttention.from_seed(d, h, seed=seed, bias=True)  # validates d, h
    on_set = set(range(h)) if heads_on is None else {int(i) for i in heads_on}
    bad = sorted(i for i in on_set if not 0 <= i < h)
    if bad:
        raise ValueError(f"heads_on has head index {bad[0]}, but h={h} heads are "
                         f"numbered 0..{h - 1}")
    on = tuple(i in on_set for i in range(h))
    emb = embedding_state(text, d, seed, max_tokens=max_tokens)
    notes = list(emb.notes)
    s = emb.s
    X = emb.X  # (s, d)
    if positional and s:
        X = X + sinusoidal_encoding(s, d)  # (s, d) + (s, d)
    if s:
        contributions, weights = mha.head_contributions(X)  # (h, s, d), (h, s, s)
        output, _ = mha(X)  # (s, d)
    else:
        contributions, weights = np.zeros((h, 0, d)), np.zeros((h, 0, 0))
        output = np.zeros((0, d))
    mask = np.asarray(on, dtype=bool)
    on_output = contributions[mask].sum(axis=0) + mha.b_o  # (h_on, s, d) -> (s, d)
    off_output = contributions[~mask].sum(axis=0)  # (h_off, s, d) -> (s, d)
    if s == 0:
        on_output = np.zeros((0, d))
    check = float(np.abs(contributions.sum(axis=0) + mha.b_o - output).max()) if s else 0.0
    if not any(on):
        notes.append(Note("info", "every head is off: the output is just the bias b_o "
                                  "in every row"))
    return MultiHeadState(
        text=emb.text, d=d, h=h, seed=seed, on=on, positional=bool(positional),
        tokens=emb.tokens, X=X, weights=weights, contributions=contributions,
        output=output, on_output=on_output, off_output=off_output,
        head_norms=np.linalg.norm(contributions, axis=(1, 2)),  # (h, s, d) -> (h,)
        check_error=check, trace=shape_trace(1, max(s, 1), d, h), notes=tuple(notes))


def _shape(shape) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ")"


def multihead_readout_html(state: MultiHeadState) -> str:
    """The readout of chapter 4: tokens with positions, the shape tracer, the heads'
    contributions, and the notes (every text escaped).

    Parameters
    ----------
    state : MultiHeadState

    Returns
    -------
    str
        An HTML fragment with inline styles only.
    """
    tokens = " ".join(f"{i}:{html.escape(t)}" for i, t in enumerate(state.tokens)) or "<i>none</i>"
    parts = [f'<div class="ab-tokens"><b>positions:</b> <code>{tokens}</code></div>']
    sizes = (f"b=1, s={state.s}, d={state.d}, h={state.h}, d_k=d_v=d/h={state.d_k}"
             + ("  (X includes positional encoding)" if state.positional else ""))
    rows = "".join(
        f"<tr><td style='padding:0 8px 0 0;text-align:left'>{html.escape(name)}</td>"
        f"<td><code>{html.escape(_shape(shape))}</code></td></tr>"
        for name, shape in state.trace)
    parts.append(
        f'<details class="ab-trace" open><summary><b>shape tracer</b> '
        f'<code>{html.escape(sizes)}</code></summary>'
        f'<table class="ab-shape" style="font-size:90%;margin:0 0 0 1em">{rows}</table>'
        f'<div style="font-size:90%">{html.escape(missing_heads_text(state.d))}</div>'
        f'</details>')
    heads = ", ".join(
        f"{i}{'' if on else ' (off)'}: {norm:.2f}"
        for i, (on, norm) in enumerate(zip(state.on, state.head_norms)))
    parts.append(
        f'<div class="ab-contrib" style="font-size:90%"><b>each head\u2019s write '
        f'\u2016H_i W^O_i\u2016:</b> {html.escape(heads)}<br>'
        f'sum of all heads\u2019 writes + b_o vs the output: max difference '
        f'{state.check_error:.1e}</div>')
    return '<div class="ab-readout">' + "".join(parts) + notes_html(state.notes) + "</div>"


def multihead_alt_text(state: MultiHeadState) -> str:
    """A plain-text description of chapter 4's figure for ``state`` (for alt text)."""
    if state.s == 0:
        return "Empty heatmaps: there are no tokens. " + " ".join(n.text for n in state.notes)
    off = [str(i) for i, on in enumerate(state.on) if not on]
    text = (f"Left: {state.h} heatmaps, one per head, of {state.s} by {state.s} attention "
            f"weights for the tokens {', '.join(state.tokens)} (d={state.d}, "
            f"d_k={state.d_k}); ")
    text += (f"heads {', '.join(off)} are switched off and drawn faded. " if off
             else "all heads are on. ")
    peaks = [int(np.argmax(state.weights[i].mean(axis=0))) for i in range(state.h)]
    text += ("Most-attended key per head: " + "; ".join(
        f"head {i} '{state.tokens[p]}'" for i, p in enumerate(peaks)) + ". ")
    text += (f"Right: two {state.s} by {state.d} heatmaps: the output of the heads that are "
             "on (plus b_o) and what the switched-off heads would add; their sum is the "
             "full output.")
    return text


class MultiHeadLab(Lab):
    """Chapter 4's lab: one heatmap per head, head toggles, a shape tracer.

    Build it with :func:`multihead_widget`.

    Attributes
    ----------
    controls : dict
        ``"text"`` (Text), ``"d"`` (Dropdown over :data:`MH_D_CHOICES`), ``"h"``
        (ToggleButtons over :func:`head_choices` of d: only divisors of d), ``"seed"``
        (IntSlider), ``"heads_on"`` (SelectMultiple of the heads switched on, options
        0..h-1), ``"positional"`` (Checkbox).
    view : attention_book.plots.MultiHeadView
    state : MultiHeadState
    """

    view: MultiHeadView

    def __init__(self, text: str = RUNNING_SENTENCE, d: int = 8, h: int = 2, seed: int = 0,
                 positional: bool = False, max_tokens: int = MAX_WIDGET_TOKENS):
        self.max_tokens = max_tokens
        if d not in MH_D_CHOICES:
            raise ValueError(f"d must be one of {MH_D_CHOICES}, got {d!r}")
        if h not in head_choices(d):
            shape_trace(1, 1, d, h)  # raises "h=3 does not divide d=8" if that is why
            raise ValueError(f"h must be one of {head_choices(d)} for d={d}, got {h!r}")
        style = {"description_width": "9em"}
        controls = {
            "text": ipywidgets.Text(
                value=text, description="query sentence", continuous_update=True,
                style=style, layout=ipywidgets.Layout(width="min(100%, 44em)")),
            "d": ipywidgets.Dropdown(options=MH_D_CHOICES, value=d,
                                     description="d (model width)", style=style),
            "h": ipywidgets.ToggleButtons(
                options=head_choices(d), value=h, description="h (heads)", style={
                    **style, "button_width": "3em"},
                tooltips=[f"d_k = {d // k}" for k in head_choices(d)]),
            "seed": ipywidgets.IntSlider(
                value=int(seed), min=MH_SEED_RANGE[0], max=MH_SEED_RANGE[1],
                description="seed (weights)", continuous_update=True, style=style),
            "heads_on": ipywidgets.SelectMultiple(
                options=self._head_options(h), value=tuple(range(h)),
                rows=min(h, 6), description="heads on", style=style),
            "positional": ipywidgets.Checkbox(value=bool(positional),
                                              description="add positional encoding",
                                              style=style),
        }
        self._syncing = False
        super().__init__(controls, multihead_view())

    @staticmethod
    def _head_options(h: int) -> list:
        return [(f"head {i}", i) for i in range(h)]

    def _on_change(self, change) -> None:
        if self._syncing:
            return
        self._syncing = True
        try:
            if change.owner is self.controls["d"]:
                d, h_control = change.new, self.controls["h"]
                allowed = head_choices(d)
                h = h_control.value if h_control.value in allowed else max(
                    k for k in allowed if k <= h_control.value)
                h_control.options = allowed  # only divisors of d can be chosen
                h_control.tooltips = [f"d_k = {d // k}" for k in allowed]
                h_control.value = h
            if change.owner in (self.controls["d"], self.controls["h"]):
                h = self.controls["h"].value
                heads = self.controls["heads_on"]
                if len(heads.options) != h:
                    heads.options = self._head_options(h)
                    heads.rows = min(h, 6)
                    heads.value = tuple(range(h))  # a new set of heads: all on
        finally:
            self._syncing = False
        self.refresh()

    def compute(self, text, d, h, seed, heads_on, positional) -> MultiHeadState:
        return multihead_state(text, d, h, seed, heads_on, positional,
                               max_tokens=self.max_tokens)

    def show(self, state: MultiHeadState) -> None:
        self.view.update(state.tokens, state.weights, state.on, state.on_output,
                         state.off_output)
        self.readout.value = multihead_readout_html(state)


def multihead_widget(text: str = RUNNING_SENTENCE, d: int = 8, h: int = 2, seed: int = 0,
                     positional: bool = False,
                     max_tokens: int = MAX_WIDGET_TOKENS) -> MultiHeadLab:
    """Chapter 4's live lab (returned, not displayed).

    Parameters
    ----------
    text : str
        The sentence to start with.
    d : int
        Model width, one of :data:`MH_D_CHOICES`.
    h : int
        Number of heads, one of ``head_choices(d)``.
    seed : int
        Seed in :data:`MH_SEED_RANGE`.
    positional : bool
        Start with positional encoding added to X.
    max_tokens : int
        The most tokens shown (default :data:`MAX_WIDGET_TOKENS`).

    Returns
    -------
    MultiHeadLab
        An ``ipywidgets.VBox``; its figure shows the (h, s, s) weights and two (s, d)
        outputs.
    """
    return MultiHeadLab(text=text, d=d, h=h, seed=seed, positional=positional,
                       max_tokens=max_tokens)


#: The (d, h) pairs chapter 4's explorer offers: every allowed h for d = 8, some for 12.
MH_EXPLORER_MODELS = ((8, 1), (8, 2), (8, 4), (8, 8), (12, 3), (12, 6))
#: The head selections chapter 4's explorer offers: label -> function of h -> heads on.
_HEAD_SETS = (
    ("all heads on", "all"),
    ("head 0 switched off", "drop0"),
    ("only head 0 on", "only0"),
)


def _heads_on(key: str, h: int) -> tuple:
    if key == "drop0":
        return tuple(range(1, h))
    if key == "only0":
        return (0,)
    return tuple(range(h))


def multihead_explorer(text: str = RUNNING_SENTENCE,
                       models: Sequence[tuple[int, int]] = MH_EXPLORER_MODELS, seed: int = 0,
                       dpi: float = 80) -> Explorer:
    """Chapter 4's kernel-free explorer: (d, h), which heads are on, and PE on/off.

    Each state is computed by :func:`multihead_state` and drawn by one
    :class:`~attention_book.plots.MultiHeadView`, as the live lab does. Only valid (d, h)
    pairs (h divides d) are offered.

    Parameters
    ----------
    text : str
        The sentence.
    models : sequence of (d, h)
        The model sizes offered; each h must divide d.
    seed : int
        Seed of the embedding table and the weights.
    dpi : float
        Resolution of the images.

    Returns
    -------
    Explorer
        ``len(models) * 3 * 2`` states.
    """
    for d, h in models:
        shape_trace(1, 1, d, h)  # a learner-friendly error for an invalid pair
    view = multihead_view()

    def render(values) -> Frame:
        d, h = values["model"]
        state = multihead_state(text, d, h, seed, _heads_on(values["heads"], h),
                                values["positional"])
        view.update(state.tokens, state.weights, state.on, state.on_output,
                    state.off_output)
        return Frame(figure_png(view.figure, dpi=dpi), multihead_alt_text(state),
                     multihead_readout_html(state))

    controls = [
        Choice("model", "d and h (h divides d)",
               [(f"d={d}, h={h} (d_k={d // h})", (d, h)) for d, h in models],
               default=(8, 2) if (8, 2) in models else None),
        Choice("heads", "heads", _HEAD_SETS),
        Choice("positional", "input", [("X (embeddings)", False),
                                       ("X + positional encoding", True)]),
    ]
    return Explorer(controls, render, title="Multi-head explorer: one heatmap per head")
