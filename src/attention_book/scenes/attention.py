"""Chapter 3's labs: the sqrt(d_k) lab ("scaling") and the attention explorer ("attention").

The chapter's table of the softmax's saturation reads the same measurements as the lab
(:func:`scaling_curves`), so the two cannot disagree.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .._validate import whole_number
from ..attention import project_qkv, projection_weights, scaled_dot_product_attention
from ..attention import scaling_curves as measure_scaling_curves
from ..tokens import RUNNING_SENTENCE, Vocabulary
from .core import (Note, Scene, choice, embed_tokens, read_tokens, seed_slider, slider, text,
                   token_options, when)

__all__ = ["SCALING_DKS", "SCALING_KEYS", "SCALING_QUERIES", "scaling_curves", "ScalingState",
           "scaling_state", "ATTENTION_D", "MAX_ATTENTION_TOKENS", "CROSS_SENTENCE",
           "AttentionState", "attention_state", "query_options"]

# ------------------------------------------------------------------ the sqrt(d_k) lab

#: The d_k values of the sqrt(d_k) lab.
SCALING_DKS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
#: Keys per query in the lab's softmax experiment.
SCALING_KEYS = 16
#: Random queries per d_k in the lab's softmax experiment (4 times as many pairs for the
#: variance); the chapter's table shows these same measurements.
SCALING_QUERIES = 300
_MEASURES = ("max_weight", "entropy", "grad_norm")


@functools.lru_cache(maxsize=4)
def scaling_curves(d_ks: tuple = SCALING_DKS, s_k: int = SCALING_KEYS,
                   n: int = SCALING_QUERIES, seed: int = 0) -> dict:
    """:func:`attention_book.attention.scaling_curves` with the lab's d_k, keys and
    queries, computed once: ``curves[(quantity, scaled)]``, arrays over ``d_ks``."""
    return measure_scaling_curves(d_ks, s_k=s_k, n=n, seed=seed)


@dataclass(frozen=True, eq=False)
class ScalingState:
    """What the sqrt(d_k) lab shows for one (d_k, scaled): the measurements at this d_k."""

    d_k: int
    scaled: bool
    variance: float     # of the score as used: q . k, or q . k / sqrt(d_k) when scaled
    max_weight: float   # mean largest softmax weight
    entropy: float      # mean entropy of the weights (nats)
    grad_norm: float    # mean norm of the gradient through the softmax
    weights: np.ndarray  # (s_k,) an example row of weights, sorted descending

    @property
    def s_k(self) -> int:
        return len(self.weights)


def scaling_state(d_k: int = 64, scaled: bool = False) -> ScalingState:
    """The sqrt(d_k) lab's state: the measurements at ``d_k`` (one of
    :data:`SCALING_DKS`), with the scores divided by sqrt(d_k) (``scaled``) or not."""
    if d_k not in SCALING_DKS:
        raise ValueError(f"d_k must be one of {SCALING_DKS}, got {d_k!r}")
    if not isinstance(scaled, (bool, np.bool_)):
        raise ValueError(f"scaled must be True or False, got {scaled!r}")
    curves, k, scaled = scaling_curves(), SCALING_DKS.index(d_k), bool(scaled)
    return ScalingState(d_k=d_k, scaled=scaled, weights=curves[("weights", scaled)][k],
                        **{q: float(curves[(q, scaled)][k]) for q in ("variance", *_MEASURES)})


SCALING_SCENE = Scene(
    name="scaling",
    title="The \u221ad_k lab: why the scores are scaled",
    controls=(
        choice("scaled", "scores", [("unscaled: q\u00b7k", False),
                                    ("scaled: q\u00b7k/\u221ad_k", True)], False),
        slider("d_k", "d_k (key dim.)", SCALING_DKS, 64),
    ),
    state=scaling_state, web="scaling",
    suggested=({"d_k": 512, "scaled": False}, {"d_k": 512, "scaled": True},
               {"d_k": 1, "scaled": False}),
)

# ------------------------------------------------------------------ the attention explorer

#: The model dimension of the explorer's sentences: chapter 1's embedding table (seed 0),
#: the same d = 8 as the chapter's running example.
ATTENTION_D = 8
#: The most tokens the explorer shows.
MAX_ATTENTION_TOKENS = 128
#: The keys/values sentence for cross-attention (7 tokens: s_k differs from s_q = 5).
CROSS_SENTENCE = "in the morning the sun was warm"


@dataclass(frozen=True, eq=False)
class AttentionState:
    """Everything the attention explorer shows for one setting of its controls."""

    text: str              # the query sentence
    kv_text: str           # the keys/values sentence (used in cross mode)
    mode: str              # "self" (Q, K, V from text) or "cross" (K, V from kv_text)
    d_k: int
    temperature: float
    seed: int
    query: int             # the chosen query position (clamped to the sentence)
    query_tokens: tuple    # (s_q,)
    key_tokens: tuple      # (s_k,)
    X_q: np.ndarray        # (s_q, d)
    X_kv: np.ndarray       # (s_k, d)
    Q: np.ndarray          # (s_q, d_k)
    K: np.ndarray          # (s_k, d_k)
    V: np.ndarray          # (s_k, d_v), d_v = d_k
    scale: float           # 1 / (temperature * sqrt(d_k))
    weights: np.ndarray    # (s_q, s_k)
    output: np.ndarray     # (s_q, d_v)
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

    X rows come from chapter 1's embedding table (d = :data:`ATTENTION_D`, seed 0), with
    no positional encoding (chapter 3 studies attention alone); W^Q, W^K, W^V from
    :func:`~attention_book.attention.projection_weights` with ``seed``; the weights are
    ``softmax(Q K^T / (temperature * sqrt(d_k)))``. Pure. Bad text never raises: it gives
    s = 0 and a note.

    Parameters
    ----------
    text, kv_text : str
        The queries' sentence (also keys' and values' in self mode); the keys/values
        sentence in cross mode.
    d_k, seed : int
        Query/key (and value) dimension; seed of the projections.
    temperature : float
        Positive; larger flattens the weights, smaller sharpens them.
    query : int
        The query position to single out; clamped to 0..s_q - 1.
    mode : {"self", "cross"}
    max_tokens : int
        The most tokens kept from each sentence.
    """
    if mode not in ("self", "cross"):
        raise ValueError(f"mode must be 'self' or 'cross', got {mode!r}")
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not (
            math.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    whole_number(query, "query", 0)
    W_q, W_k, W_v = projection_weights(ATTENTION_D, d_k, seed=seed)  # (d, d_k) each
    q_tokens, notes, _ = read_tokens(text, max_tokens, "query sentence")
    k_tokens = q_tokens
    if mode == "cross":
        k_tokens, kv_notes, _ = read_tokens(kv_text, max_tokens, "keys/values sentence")
        notes += kv_notes
    if not q_tokens or not k_tokens:
        q_tokens = k_tokens = []
    vocab = Vocabulary.default()
    unknown = [t for t in dict.fromkeys([*q_tokens, *k_tokens]) if not vocab.is_known(t)]
    if unknown:
        notes.append(Note("info", "not in the vocabulary (shown with the <unk> embedding): "
                          + ", ".join(f"'{t}'" for t in unknown[:8])
                          + (", \u2026" if len(unknown) > 8 else "")))
    X_q, X_kv = embed_tokens(q_tokens, ATTENTION_D), embed_tokens(k_tokens, ATTENTION_D)
    scale = 1.0 / (float(temperature) * math.sqrt(d_k))
    if q_tokens:
        Q, K, V = project_qkv(X_q, W_q, W_k, W_v, X_kv)  # (s_q, d_k), (s_k, d_k), (s_k, d_k)
        output, weights = scaled_dot_product_attention(Q, K, V, scale=scale)
    else:
        Q = K = V = output = np.zeros((0, d_k))
        weights = np.zeros((0, 0))
    return AttentionState(
        text=text if isinstance(text, str) else "",
        kv_text=kv_text if isinstance(kv_text, str) else "", mode=mode, d_k=d_k,
        temperature=float(temperature), seed=int(seed),
        query=int(min(query, len(q_tokens) - 1) if q_tokens else 0),
        query_tokens=tuple(q_tokens), key_tokens=tuple(k_tokens), X_q=X_q, X_kv=X_kv,
        Q=Q, K=K, V=V, scale=scale, weights=weights, output=output, notes=tuple(notes))


def query_options(values) -> tuple:
    """The query drop-down's choices for the current sentence: ("position: token", i)."""
    tokens = read_tokens(values["text"], MAX_ATTENTION_TOKENS)[0]
    keys = values["mode"] == "self" or read_tokens(values["kv_text"])[0]
    return token_options(tokens if keys else ())


ATTENTION_SCENE = Scene(
    name="attention",
    title="Attention explorer: who attends to whom",
    controls=(
        text("text", "sentence (queries)", RUNNING_SENTENCE),
        choice("mode", "attention", [("self-attention", "self"),
                                     ("cross-attention", "cross")], "self"),
        text("kv_text", "keys/values (cross)", CROSS_SENTENCE,
             active_when=when("mode", "cross"), hint="used in cross-attention only"),
        choice("query", "query token", [(f"{i}", i) for i in range(MAX_ATTENTION_TOKENS)], 0,
               options_for=query_options),
        slider("d_k", "d_k", (1, 2, 4, 8, 16, 32, 64), 4),
        # scores are q.k / (T sqrt(d_k)): T = 1 is the standard scaling
        slider("temperature", "temperature T", (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0), 1.0),
        seed_slider("seed (W's)"),
    ),
    state=attention_state, web="attention",
    suggested=({"query": 0, "seed": 0, "mode": "self"}, {"temperature": 0.25},
               {"temperature": 4.0}, {"seed": 1}, {"mode": "cross", "query": 4}),
)
SCENES = (SCALING_SCENE, ATTENTION_SCENE)
