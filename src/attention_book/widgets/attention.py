"""Chapter 3's labs: the sqrt(d_k) lab and the attention explorer.

:func:`scaling_state` and :func:`attention_state` are the pure state functions that the
live labs (:func:`scaling_widget`, :func:`attention_widget`) and the kernel-free
explorers (:func:`scaling_explorer`, :func:`attention_explorer`) share.
"""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

import ipywidgets
import numpy as np

from ..attention import (
    dot_product_variance,
    project_qkv,
    projection_weights,
    scaled_dot_product_attention,
    softmax_saturation,
)
from .._validate import whole_number
from ..embedding import embed, embedding_table
from ..explorer import Choice, Explorer, Frame, Slider
from ..plots import AttentionView, ScalingView, attention_view, figure_png, scaling_view
from ..tokens import RUNNING_SENTENCE, Vocabulary, tokenize
from .core import Lab, Note, notes_html

__all__ = [
    "SCALING_DKS",
    "SCALING_KEYS",
    "scaling_curves",
    "ScalingState",
    "scaling_state",
    "scaling_readout_html",
    "scaling_alt_text",
    "ScalingLab",
    "scaling_widget",
    "scaling_explorer",
    "ATTENTION_D",
    "ATTENTION_DKS",
    "TEMPERATURES",
    "ATTENTION_SEEDS",
    "MAX_ATTENTION_TOKENS",
    "CROSS_SENTENCE",
    "AttentionState",
    "attention_state",
    "attention_readout_html",
    "attention_alt_text",
    "AttentionLab",
    "attention_widget",
    "ATTENTION_PRESETS",
    "attention_explorer",
]

# ------------------------------------------------------------------ the sqrt(d_k) lab

#: The d_k values of the sqrt(d_k) lab.
SCALING_DKS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
#: Keys per query in the lab's softmax experiment.
SCALING_KEYS = 16


@functools.lru_cache(maxsize=4)
def scaling_curves(d_ks: tuple = SCALING_DKS, s_k: int = SCALING_KEYS, n: int = 300,
                   seed: int = 0) -> dict:
    """The lab's measurements for every d_k, unscaled and scaled (computed once, cached).

    Parameters
    ----------
    d_ks : tuple of int
    s_k : int
        Keys per query.
    n : int
        Random queries (and pairs, for the variance) per d_k.
    seed : int

    Returns
    -------
    dict
        ``curves[(quantity, scaled)]``: numpy.ndarray (len(d_ks),) for quantity
        "variance" (of q . k, or of q . k / sqrt(d_k) when scaled), "max_weight",
        "entropy", "grad_norm"; ``curves[("weights", scaled)]``: (len(d_ks), s_k), an
        example row of weights per d_k, sorted descending.
    """
    curves: dict = {}
    for scaled in (False, True):
        stats = [softmax_saturation(d_k, scaled, s_k=s_k, n=n, seed=seed) for d_k in d_ks]
        for key in ("max_weight", "entropy", "grad_norm"):
            curves[(key, scaled)] = np.array([st[key] for st in stats])
        curves[("weights", scaled)] = np.stack([st["weights"] for st in stats])  # (m, s_k)
    raw = np.array([dot_product_variance(d_k, n=4 * n, seed=seed) for d_k in d_ks])
    curves[("variance", False)] = raw
    curves[("variance", True)] = raw / np.asarray(d_ks, dtype=float)  # var(x / c) = var(x)/c^2
    return curves


@dataclass(frozen=True, eq=False)
class ScalingState:
    """What the sqrt(d_k) lab shows for one (d_k, scaled).

    Attributes
    ----------
    d_k : int
    scaled : bool
    variance, max_weight, entropy, grad_norm : float
        The measurements at this d_k (variance of the score as used: q . k, or
        q . k / sqrt(d_k) when scaled).
    weights : numpy.ndarray, shape (s_k,)
        An example row of weights, sorted descending.
    """

    d_k: int
    scaled: bool
    variance: float
    max_weight: float
    entropy: float
    grad_norm: float
    weights: np.ndarray

    @property
    def s_k(self) -> int:
        return len(self.weights)


def scaling_state(d_k: int = 64, scaled: bool = False) -> ScalingState:
    """The sqrt(d_k) lab's state: the measurements at one d_k, scaled or not.

    Parameters
    ----------
    d_k : int
        One of :data:`SCALING_DKS`.
    scaled : bool
        Whether the scores are divided by sqrt(d_k).

    Returns
    -------
    ScalingState
    """
    if d_k not in SCALING_DKS:
        raise ValueError(f"d_k must be one of {SCALING_DKS}, got {d_k!r}")
    if not isinstance(scaled, (bool, np.bool_)):
        raise ValueError(f"scaled must be True or False, got {scaled!r}")
    curves = scaling_curves()
    k = SCALING_DKS.index(d_k)
    scaled = bool(scaled)
    return ScalingState(
        d_k=d_k, scaled=scaled, variance=float(curves[("variance", scaled)][k]),
        max_weight=float(curves[("max_weight", scaled)][k]),
        entropy=float(curves[("entropy", scaled)][k]),
        grad_norm=float(curves[("grad_norm", scaled)][k]),
        weights=curves[("weights", scaled)][k],
    )


def scaling_readout_html(state: ScalingState) -> str:
    """The sqrt(d_k) lab's readout: the mode, the four measurements, an example row."""
    mode = ("scaled: scores = q\u00b7k / \u221ad_k" if state.scaled
            else "unscaled: scores = q\u00b7k")
    row = ", ".join(f"{w:.2f}" for w in state.weights[:6])
    lines = [
        f"<b>{html.escape(mode)}</b>, d_k = {state.d_k}",
        f"variance of the scores: {state.variance:.3g} "
        f"(q\u00b7k alone has variance \u2248 d_k = {state.d_k})",
        f"largest weight {state.max_weight:.3f} (uniform would be 1/{state.s_k} = "
        f"{1 / state.s_k:.3f}); entropy {state.entropy:.3f} nats "
        f"(max log {state.s_k} = {math.log(state.s_k):.3f}); "
        f"gradient norm {state.grad_norm:.3f}",
        f"an example row of {state.s_k} weights, largest first: {row}, \u2026",
    ]
    return ('<div class="ab-readout" style="font-family:monospace;font-size:90%">'
            + "<br>".join(lines) + "</div>")


def scaling_alt_text(state: ScalingState) -> str:
    """Plain-text description of the sqrt(d_k) lab's figure for ``state``."""
    mode = "scaled by 1/sqrt(d_k)" if state.scaled else "unscaled"
    return (f"Four panels against d_k from 1 to 512 on log axes, each with an unscaled "
            f"(orange) and a scaled (blue) curve; the {mode} curve is bold and d_k = "
            f"{state.d_k} is circled. Top left: the variance of the score, which for "
            f"unscaled q.k follows the dashed line d_k and for the scaled score stays "
            f"near 1; here {state.variance:.3g}. Top right: the mean largest softmax "
            f"weight, here {state.max_weight:.2f}. Bottom left: the mean entropy, here "
            f"{state.entropy:.2f} nats. Bottom right: the mean gradient norm through the "
            f"softmax, here {state.grad_norm:.3f}. Unscaled, the largest weight climbs "
            f"towards 1 and entropy and gradient fall towards 0 as d_k grows; scaled, all "
            f"stay flat.")


def _scaling_view() -> ScalingView:
    curves = scaling_curves()
    return scaling_view(SCALING_DKS, curves, SCALING_KEYS)


class ScalingLab(Lab):
    """The sqrt(d_k) lab: a d_k slider and a scaled/unscaled switch.

    Attributes
    ----------
    controls : dict
        ``"d_k"`` (ipywidgets.SelectionSlider over :data:`SCALING_DKS`), ``"scaled"``
        (ipywidgets.ToggleButtons, False = unscaled, True = scaled).
    view : attention_book.plots.ScalingView
    state : ScalingState
    """

    view: ScalingView

    def __init__(self, d_k: int = 64, scaled: bool = False):
        scaling_state(d_k, scaled)  # checks the arguments
        style = {"description_width": "9em"}
        controls = {
            "d_k": ipywidgets.SelectionSlider(options=SCALING_DKS, value=d_k,
                                              description="d_k (key dim.)",
                                              continuous_update=True, style=style),
            "scaled": ipywidgets.ToggleButtons(
                options=[("unscaled: q\u00b7k", False), ("scaled: q\u00b7k/\u221ad_k", True)],
                value=bool(scaled), description="scores", style=style),
        }
        super().__init__(controls, _scaling_view())

    def compute(self, d_k: int, scaled: bool) -> ScalingState:
        return scaling_state(d_k, scaled)

    def show(self, state: ScalingState) -> None:
        self.view.update(state.d_k, state.scaled)
        self.readout.value = scaling_readout_html(state)


def scaling_widget(d_k: int = 64, scaled: bool = False) -> ScalingLab:
    """The sqrt(d_k) lab, live (returned, not displayed).

    Parameters
    ----------
    d_k : int
        One of :data:`SCALING_DKS`.
    scaled : bool

    Returns
    -------
    ScalingLab
    """
    return ScalingLab(d_k=d_k, scaled=scaled)


def scaling_explorer(d_ks: Sequence[int] = SCALING_DKS, dpi: float = 80) -> Explorer:
    """The sqrt(d_k) lab, kernel-free: ``2 * len(d_ks)`` precomputed states.

    Parameters
    ----------
    d_ks : sequence of int
        A subset of :data:`SCALING_DKS`.
    dpi : float

    Returns
    -------
    Explorer
    """
    view = _scaling_view()

    def render(values) -> Frame:
        state = scaling_state(values["d_k"], values["scaled"])
        view.update(state.d_k, state.scaled)
        return Frame(figure_png(view.figure, dpi=dpi), scaling_alt_text(state),
                     scaling_readout_html(state))

    d_ks = tuple(d_ks)
    controls = [
        Choice("scaled", "Scores", [("unscaled: q\u00b7k", False),
                                     ("scaled: q\u00b7k / \u221ad_k", True)]),
        Slider("d_k", "d_k (key dimension)", d_ks, default=64 if 64 in d_ks else None),
    ]
    return Explorer(controls, render, title="The \u221ad_k lab: why the scores are scaled")


# ------------------------------------------------------------------ the attention explorer

#: The model dimension of the explorer's sentences (chapter 1's embedding table, seed 0).
ATTENTION_D = 8
#: The d_k values the explorer offers.
ATTENTION_DKS = (1, 2, 4, 8, 16, 32, 64)
#: Temperatures T: scores are q.k / (T sqrt(d_k)); T = 1 is the standard scaling.
TEMPERATURES = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
#: Seeds of the random projections W^Q, W^K, W^V (inclusive).
ATTENTION_SEEDS = (0, 20)
#: The most tokens the explorer shows.
MAX_ATTENTION_TOKENS = 128
#: The keys/values sentence for cross-attention (7 tokens: s_k differs from s_q = 5).
CROSS_SENTENCE = "in the morning the sun was warm"


@functools.lru_cache(maxsize=1)
def _table() -> np.ndarray:
    return embedding_table(len(Vocabulary.default()), ATTENTION_D, 0)  # (V, d)


def _tokens(text, max_tokens: int, which: str, notes: list) -> list:
    try:
        tokens = tokenize(text)
    except ValueError as err:
        notes.append(Note("error", f"{which}: {err}"))
        return []
    if not tokens:
        notes.append(Note("error", f"{which}: no tokens; type a sentence"))
    if len(tokens) > max_tokens:
        notes.append(Note("warning", f"{which}: showing the first {max_tokens} of "
                                     f"{len(tokens)} tokens"))
    return tokens[:max_tokens]


@dataclass(frozen=True, eq=False)
class AttentionState:
    """Everything the attention explorer shows for one setting of its controls.

    Attributes
    ----------
    text, kv_text : str
        The query sentence; the keys/values sentence (used in cross mode).
    mode : str
        "self" (Q, K, V from one sentence) or "cross" (Q from ``text``, K and V from
        ``kv_text``).
    d_k, seed : int
    temperature : float
    query : int
        The chosen query position (clamped to the sentence).
    query_tokens, key_tokens : tuple of str, lengths s_q, s_k
    X_q : numpy.ndarray, shape (s_q, d)
    X_kv : numpy.ndarray, shape (s_k, d)
    Q : numpy.ndarray, shape (s_q, d_k)
    K : numpy.ndarray, shape (s_k, d_k)
    V : numpy.ndarray, shape (s_k, d_v), d_v = d_k
    scale : float
        ``1 / (temperature * sqrt(d_k))``.
    weights : numpy.ndarray, shape (s_q, s_k)
    output : numpy.ndarray, shape (s_q, d_v)
    notes : tuple of Note
    """

    text: str
    kv_text: str
    mode: str
    d_k: int
    temperature: float
    seed: int
    query: int
    query_tokens: tuple
    key_tokens: tuple
    X_q: np.ndarray
    X_kv: np.ndarray
    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    scale: float
    weights: np.ndarray
    output: np.ndarray
    notes: tuple

    @property
    def s_q(self) -> int:
        return len(self.query_tokens)

    @property
    def s_k(self) -> int:
        return len(self.key_tokens)

    @property
    def row(self) -> np.ndarray:
        """The chosen query's weights, shape (s_k,) (empty when there are no tokens)."""
        return self.weights[self.query] if self.weights.size else np.zeros(0)


def attention_state(text: str = RUNNING_SENTENCE, d_k: int = 4, temperature: float = 1.0,
                    seed: int = 0, query: int = 0, mode: str = "self",
                    kv_text: str = CROSS_SENTENCE, *,
                    max_tokens: int = MAX_ATTENTION_TOKENS) -> AttentionState:
    """Sentence(s) -> X -> Q, K, V -> weights and output, with reader messages.

    X rows come from chapter 1's embedding table (d = :data:`ATTENTION_D`, seed 0);
    W^Q, W^K, W^V from :func:`~attention_book.attention.projection_weights` with ``seed``;
    the weights are ``softmax(Q K^T / (temperature * sqrt(d_k)))``. Pure: the same
    arguments give the same state. Bad text never raises: it gives s = 0 and a note.

    Parameters
    ----------
    text : str
        The sentence the queries come from (and, in self mode, keys and values).
    d_k : int
        Query/key (and value) dimension.
    temperature : float
        Positive; larger flattens the weights, smaller sharpens them.
    seed : int
        Seed of the projections.
    query : int
        The query position to single out; clamped to 0..s_q - 1.
    mode : {"self", "cross"}
    kv_text : str
        The keys/values sentence in cross mode.
    max_tokens : int
        The most tokens kept from each sentence.

    Returns
    -------
    AttentionState
    """
    if mode not in ("self", "cross"):
        raise ValueError(f"mode must be 'self' or 'cross', got {mode!r}")
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not (
            math.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    whole_number(query, "query", 0)
    W_q, W_k, W_v = projection_weights(ATTENTION_D, d_k, seed=seed)  # (d, d_k) each
    notes: list = []
    q_tokens = _tokens(text, max_tokens, "query sentence", notes)
    if mode == "cross":
        k_tokens = _tokens(kv_text, max_tokens, "keys/values sentence", notes)
    else:
        k_tokens = q_tokens
    if not q_tokens or not k_tokens:
        q_tokens = k_tokens = []
    vocab, table = Vocabulary.default(), _table()
    unknown = [t for t in dict.fromkeys([*q_tokens, *k_tokens]) if not vocab.is_known(t)]
    if unknown:
        notes.append(Note("info", "not in the vocabulary (shown with the <unk> embedding): "
                          + ", ".join(f"'{t}'" for t in unknown[:8])
                          + (", \u2026" if len(unknown) > 8 else "")))
    d = ATTENTION_D
    X_q = embed(vocab.encode(q_tokens), table) if q_tokens else np.zeros((0, d))  # (s_q, d)
    X_kv = (embed(vocab.encode(k_tokens), table) if k_tokens else np.zeros((0, d)))  # (s_k, d)
    scale = 1.0 / (float(temperature) * math.sqrt(d_k))
    if q_tokens:
        Q, K, V = project_qkv(X_q, W_q, W_k, W_v, X_kv)  # (s_q, d_k), (s_k, d_k), (s_k, d_k)
        output, weights = scaled_dot_product_attention(Q, K, V, scale=scale)
    else:
        Q, K, V = np.zeros((0, d_k)), np.zeros((0, d_k)), np.zeros((0, d_k))
        output, weights = np.zeros((0, d_k)), np.zeros((0, 0))
    if q_tokens and query >= len(q_tokens):
        query = len(q_tokens) - 1
    elif not q_tokens:
        query = 0
    return AttentionState(
        text=text if isinstance(text, str) else "", kv_text=kv_text if isinstance(
            kv_text, str) else "", mode=mode, d_k=d_k, temperature=float(temperature),
        seed=int(seed), query=int(query), query_tokens=tuple(q_tokens),
        key_tokens=tuple(k_tokens), X_q=X_q, X_kv=X_kv, Q=Q, K=K, V=V, scale=scale,
        weights=weights, output=output, notes=tuple(notes))


def attention_readout_html(state: AttentionState) -> str:
    """The explorer's readout: shapes, the chosen query's weights, and the notes (every
    token escaped)."""
    d = ATTENTION_D
    kind = "self-attention" if state.mode == "self" else "cross-attention"
    parts = [f"<b>{kind}</b>: Q = X<sub>q</sub>W<sup>Q</sup> : ({state.s_q}, {state.d_k}), "
             f"K = X<sub>kv</sub>W<sup>K</sup> : ({state.s_k}, {state.d_k}), "
             f"V : ({state.s_k}, {state.d_k}), with W<sup>Q</sup>, W<sup>K</sup>, "
             f"W<sup>V</sup> : ({d}, {state.d_k}) shared by every position; "
             f"weights : ({state.s_q}, {state.s_k}); scale = 1/({state.temperature:g}"
             f"\u00b7\u221a{state.d_k}) = {state.scale:.3f}"]
    if state.s_q:
        row = state.row
        top = int(np.argmax(row))
        who = html.escape(state.query_tokens[state.query])
        chips = " ".join(
            f'<span style="font-family:monospace;margin-right:4px">'
            f"{html.escape(t)}&nbsp;{w:.2f}</span>"
            for t, w in list(zip(state.key_tokens, row))[:16])
        more = " \u2026" if state.s_k > 16 else ""
        line = (f"query {state.query} ('{who}') attends most to key {top} "
                f"('{html.escape(state.key_tokens[top])}', weight {row[top]:.2f})")
        if state.mode == "self":
            line += (": itself" if top == state.query else
                     f", not to itself (weight {row[state.query]:.2f})")
        parts.append(line)
        parts.append(f"its row (sums to {row.sum():.2f}): {chips}{more}")
    return ('<div class="ab-readout" style="font-size:90%">' + "<br>".join(parts)
            + notes_html(state.notes) + "</div>")


def attention_alt_text(state: AttentionState) -> str:
    """Plain-text description of the explorer's figure for ``state``."""
    if state.s_q == 0:
        return ("Empty heatmap, arcs and bars: there are no tokens. "
                + " ".join(n.text for n in state.notes))
    row = state.row
    top = int(np.argmax(row))
    kind = "self-attention" if state.mode == "self" else "cross-attention"
    return (f"Left: heatmap of the {state.s_q} by {state.s_k} attention weights "
            f"({kind}, d_k = {state.d_k}, temperature {state.temperature:g}, seed "
            f"{state.seed}), query tokens ({', '.join(state.query_tokens[:16])}) down and "
            f"key tokens ({', '.join(state.key_tokens[:16])}) across, colour 0 to 1, row "
            f"{state.query} outlined. Right: arcs and bars from query {state.query} "
            f"'{state.query_tokens[state.query]}' to every key; the heaviest goes to key "
            f"{top} '{state.key_tokens[top]}' with weight {row[top]:.2f}, the lightest has "
            f"{row.min():.2f}.")


class AttentionLab(Lab):
    """The attention explorer, live: type sentences; choose a query, d_k, a temperature,
    the projections' seed, and self- or cross-attention.

    Attributes
    ----------
    controls : dict
        ``"text"`` and ``"kv_text"`` (ipywidgets.Text), ``"mode"`` (ToggleButtons "self" /
        "cross"), ``"query"`` (Dropdown of "position: token"), ``"d_k"`` and
        ``"temperature"`` (SelectionSlider), ``"seed"`` (IntSlider).
    view : attention_book.plots.AttentionView
    state : AttentionState
    """

    view: AttentionView

    def __init__(self, text: str = RUNNING_SENTENCE, d_k: int = 4, temperature: float = 1.0,
                 seed: int = 0, query: int = 0, mode: str = "self",
                 kv_text: str = CROSS_SENTENCE):
        if d_k not in ATTENTION_DKS:
            raise ValueError(f"d_k must be one of {ATTENTION_DKS}, got {d_k!r}")
        if temperature not in TEMPERATURES:
            raise ValueError(f"temperature must be one of {TEMPERATURES}, got {temperature!r}")
        lo, hi = ATTENTION_SEEDS
        whole_number(seed, "seed", lo, hi)
        first = attention_state(text, d_k, temperature, seed, query, mode, kv_text)
        style = {"description_width": "10em"}
        wide = ipywidgets.Layout(width="min(100%, 44em)")
        self._syncing = False
        controls = {
            "text": ipywidgets.Text(value=text, description="sentence (queries)",
                                    continuous_update=True, style=style, layout=wide),
            "mode": ipywidgets.ToggleButtons(
                options=[("self-attention", "self"), ("cross-attention", "cross")],
                value=mode, description="attention", style=style),
            "kv_text": ipywidgets.Text(value=kv_text, description="keys/values (cross)",
                                       continuous_update=True, style=style, layout=wide),
            "query": ipywidgets.Dropdown(options=self._query_options(first),
                                         value=first.query, description="query token",
                                         style=style),
            "d_k": ipywidgets.SelectionSlider(options=ATTENTION_DKS, value=d_k,
                                              description="d_k", continuous_update=True,
                                              style=style),
            "temperature": ipywidgets.SelectionSlider(
                options=TEMPERATURES, value=temperature,
                description="temperature T", continuous_update=True, style=style),
            "seed": ipywidgets.IntSlider(value=int(seed), min=lo, max=hi,
                                         description="seed (W's)", continuous_update=True,
                                         style=style),
        }
        super().__init__(controls, attention_view())

    @staticmethod
    def _query_options(state: AttentionState) -> list:
        if not state.s_q:
            return [("(no tokens)", 0)]
        return [(f"{i}: {t}", i) for i, t in enumerate(state.query_tokens)]

    def compute(self, text, mode, kv_text, query, d_k, temperature, seed) -> AttentionState:
        return attention_state(text, d_k, temperature, seed, query, mode, kv_text)

    def show(self, state: AttentionState) -> None:
        control = self.controls.get("query") if hasattr(self, "controls") else None
        if control is not None:
            options = self._query_options(state)
            if list(control.options) != options or control.value != state.query:
                self._syncing = True
                try:
                    if list(control.options) != options:
                        control.options = options
                    control.value = state.query
                finally:
                    self._syncing = False
        self.view.update(state.query_tokens, state.key_tokens, state.weights, state.query)
        self.readout.value = attention_readout_html(state)

    def _on_change(self, change) -> None:
        if not self._syncing:
            self.refresh()


def attention_widget(text: str = RUNNING_SENTENCE, d_k: int = 4, temperature: float = 1.0,
                     seed: int = 0, query: int = 0, mode: str = "self",
                     kv_text: str = CROSS_SENTENCE) -> AttentionLab:
    """The attention explorer, live (returned, not displayed).

    Parameters
    ----------
    text : str
        The query sentence.
    d_k : int
        One of :data:`ATTENTION_DKS`.
    temperature : float
        One of :data:`TEMPERATURES`.
    seed : int
        In :data:`ATTENTION_SEEDS`.
    query : int
        The query position to start with.
    mode : {"self", "cross"}
    kv_text : str
        The keys/values sentence used in cross mode.

    Returns
    -------
    AttentionLab
    """
    return AttentionLab(text=text, d_k=d_k, temperature=temperature, seed=seed, query=query,
                        mode=mode, kv_text=kv_text)


#: The explorer's settings: (label, query sentence, mode, keys/values sentence, seed).
ATTENTION_PRESETS = (
    ("running sentence, self-attention, seed 0", RUNNING_SENTENCE, "self", CROSS_SENTENCE, 0),
    ("running sentence, self-attention, seed 1", RUNNING_SENTENCE, "self", CROSS_SENTENCE, 1),
    ("cross-attention: queries from the running sentence, keys/values from "
     f"'{CROSS_SENTENCE}'", RUNNING_SENTENCE, "cross", CROSS_SENTENCE, 0),
)


def attention_explorer(presets: Sequence = ATTENTION_PRESETS, queries: Sequence[int] = range(5),
                       temperatures: Sequence[float] = (0.25, 1.0, 4.0), d_k: int = 4,
                       dpi: float = 80) -> Explorer:
    """The attention explorer, kernel-free: setting x query x temperature states.

    Each state is computed by :func:`attention_state` and drawn by one
    :class:`~attention_book.plots.AttentionView`, as in the live lab.

    Parameters
    ----------
    presets : sequence of (label, text, mode, kv_text, seed)
    queries : sequence of int
        Query positions offered (clamped to each sentence).
    temperatures : sequence of float
    d_k : int
    dpi : float

    Returns
    -------
    Explorer
        ``len(presets) * len(queries) * len(temperatures)`` states.
    """
    view = attention_view()
    presets = tuple(presets)

    def render(values) -> Frame:
        _, text, mode, kv_text, seed = presets[values["preset"]]
        state = attention_state(text, d_k, values["temperature"], seed, values["query"],
                                mode, kv_text)
        view.update(state.query_tokens, state.key_tokens, state.weights, state.query)
        return Frame(figure_png(view.figure, dpi=dpi), attention_alt_text(state),
                     attention_readout_html(state))

    temperatures = tuple(temperatures)
    controls = [
        Choice("preset", "Setting", [(p[0], k) for k, p in enumerate(presets)]),
        Slider("query", "query position", tuple(queries)),
        Slider("temperature", "temperature T", temperatures,
               default=1.0 if 1.0 in temperatures else None),
    ]
    return Explorer(controls, render, title="Attention explorer: who attends to whom")
