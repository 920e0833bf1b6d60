"""Chapter 5's permutation playground: reorder a sentence's tokens (named, shuffled or
typed), switch positional encoding and the causal mask, and compare "permute after
attention" (P X_in, P A P^T, P f(X)) with "permute before" ((PX)_in, A(PX), f(PX)).
:func:`permutation_state` is the pure state function; :data:`SCENE` declares the controls
(the typed order and the seed are active only for their permutation)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..attention import causal_mask, projection_weights, scaled_dot_product_attention
from ..permutation import named_permutation, parse_permutation, same_rows_up_to_order
from ..positional import sinusoidal_encoding
from ..tokens import RUNNING_SENTENCE
from .core import (as_known, HasTokens, Note, Scene, choice, embed_tokens, read_tokens, seed_slider,
                   text, toggle, when)

__all__ = ["ORDER_CHOICES", "EQUIVARIANCE_TOL", "SHUFFLE_SEEDS", "PermutationState", "shuffle_order",
           "permutation_state"]

#: The permutations offered, as (label, name).
ORDER_CHOICES = (("identity (no change)", "identity"), ("reverse", "reverse"),
                 ("rotate left by one", "rotate"), ("swap first and last", "swap"),
                 ("shuffle (seeded)", "shuffle"), ("custom order", "custom"))
#: Max |f(PX) - P f(X)| still called "equivariant" (float64 rounding is ~1e-16).
EQUIVARIANCE_TOL = 1e-9
#: The shuffle seeds offered (inclusive).
SHUFFLE_SEEDS = (0, 99)


@functools.lru_cache(maxsize=32)
def _shuffles(s: int) -> tuple:
    """The lab's shuffled orders of s positions: distinct permutations, drawn in turn from one
    generator (seed 0), one a shuffle seed (fewer when s! is smaller). A generator a seed
    gave 71 distinct orders for 100 seeds of 5 tokens (seeds 0, 2, 48 and 50 all [2 4 3 0
    1]; chapters 1-5 review, F5), though the chapter says each seed is another order."""
    rng, want = np.random.default_rng(0), SHUFFLE_SEEDS[1] - SHUFFLE_SEEDS[0] + 1
    if s < 8:
        want = min(want, math.factorial(s))
    seen, out = set(), []
    while len(out) < want:
        perm = rng.permutation(s)  # (s,) int64
        if perm.tobytes() not in seen:
            seen.add(perm.tobytes())
            out.append(perm)
    return tuple(out)


def shuffle_order(s: int, seed: int) -> np.ndarray:
    """The order the lab's shuffle seed ``seed`` gives s tokens: (s,) int64, another one for
    each seed while s! allows (seeds past it repeat the first orders)."""
    orders = _shuffles(s)
    return orders[seed % len(orders)].copy()


@dataclass(frozen=True, eq=False)
class PermutationState(HasTokens):
    """Everything the playground shows for one setting of its controls."""

    tokens: tuple           # (s,) str, in their original order
    perm: np.ndarray        # (s,) int64: new position i holds old token perm[i]
    pe: bool                # positional encoding added
    causal: bool            # causal mask applied
    after: tuple            # P X_in:(s, d), P A(X) P^T:(s, s), P f(X):(s, d); X_in = X (+ PE)
    before: tuple           # (PX)_in:(s, d), A(PX):(s, s), f(PX):(s, d); (PX)_in = PX (+ PE)
    difference: np.ndarray  # (s, d) |f(PX) - P f(X)|
    max_error: float        # its largest entry
    weights_error: float    # max |A(PX) - P A(X) P^T|
    same_set: bool          # whether f(PX) and f(X) hold the same rows up to order
    notes: tuple            # of Note

    @property
    def permuted_tokens(self) -> tuple:
        """The tokens in the new order."""
        return tuple(self.tokens[j] for j in self.perm)

    @property
    def equivariant(self) -> bool:
        """Whether f(PX) = P f(X) up to rounding (:data:`EQUIVARIANCE_TOL`)."""
        return self.max_error <= EQUIVARIANCE_TOL

    @property
    def verdict(self) -> str:
        """``"equivariant: yes (max error 2.2e-16)"`` or ``"equivariant: no (...)"``."""
        return (f"equivariant: {'yes' if self.equivariant else 'no'} "
                f"(max error {self.max_error:.1e})")


@functools.lru_cache(maxsize=4)
def _projections(d: int, seed: int) -> tuple:
    return projection_weights(d, d, seed=seed)  # W^Q, W^K, W^V:(d, d)


@functools.lru_cache(maxsize=8)
def _positions(s: int, d: int):
    return sinusoidal_encoding(s, d), causal_mask(s)  # (s, d), (s, s)


def permutation_state(text: str = RUNNING_SENTENCE, order: str = "reverse", custom: str = "",
                      seed: int = 0, pe: bool = False, causal: bool = False, *,
                      d: int = 8, model_seed: int = 0, max_tokens: int = 128
                      ) -> PermutationState:
    """Attention f(X) = softmax(Q K^T / sqrt(d) [masked]) V of a sentence, before and after
    a permutation of its tokens. Pure; reader input never raises: an empty sentence gives
    s = 0 and an error note, an invalid custom order an error note and the identity.

    Parameters
    ----------
    text, order, custom : str
        The sentence; a name in :data:`ORDER_CHOICES`; the typed order used when
        ``order == "custom"``, e.g. ``"4 3 2 1 0"``.
    seed : int
        The seed of "shuffle".
    pe, causal : bool
        Add sinusoidal positional encoding to the inputs; apply the causal mask.
    d, model_seed, max_tokens : int
        Model dimension (d = d_k = d_v); seed of the embedding table and of W^Q, W^K,
        W^V:(d, d); the most tokens kept.
    """
    W_q, W_k, W_v = _projections(d, model_seed)
    tokens, notes, _ = read_tokens(text, max_tokens)
    tokens = as_known(tokens, notes)
    s = len(tokens)
    if s == 0:
        e, w = np.zeros((0, d)), np.zeros((0, 0))  # (s, d) and (s, s) with s = 0
        return PermutationState((), np.zeros(0, np.int64), bool(pe), bool(causal), (e, w, e),
                                (e, w, e), e, 0.0, 0.0, True, tuple(notes))
    if order == "custom":
        try:
            perm = parse_permutation(custom, s)
        except ValueError as err:
            notes.append(Note("error", f"custom order: {err}; showing the identity"))
            perm = np.arange(s, dtype=np.int64)
    elif order == "shuffle":
        perm = shuffle_order(s, seed)
    else:
        perm = named_permutation(order, s, seed)
    X = embed_tokens(tokens, d, model_seed)  # (s, d)
    pe_matrix, mask = _positions(s, d)  # (s, d), (s, s)
    add, mask = (pe_matrix if pe else 0.0), (mask if causal else None)
    def f(x_in):
        # (s, d) @ (d, d) -> (s, d) for each of Q, K, V: one set of weights for all rows
        return scaled_dot_product_attention(x_in @ W_q, x_in @ W_k, x_in @ W_v, mask=mask)
    x_in = X + add  # (s, d)
    out, weights = f(x_in)  # (s, d), (s, s)
    px_in = X[perm] + add  # (s, d): the tokens move, the positions do not
    out_p, weights_p = f(px_in)  # (s, d), (s, s)
    after = (x_in[perm], weights[perm][:, perm], out[perm])  # P X_in, P A P^T, P f(X)
    difference = np.abs(out_p - after[2])  # (s, d)
    max_error = float(difference.max())
    if np.array_equal(perm, np.arange(s)):
        notes.append(Note("info", "the identity moves nothing, so both rows agree trivially: "
                                  "choose another order"))
    elif max_error > EQUIVARIANCE_TOL:
        if pe:
            notes.append(Note("info", "positional encoding is added by position, not moved "
                                      "with the tokens: PX + PE is not P(X + PE)"))
        if causal:
            notes.append(Note("info", "the causal mask lets position i see only positions "
                                      "0..i: a moved token sees a different set of tokens"))
    return PermutationState(tuple(tokens), perm, bool(pe), bool(causal), after,
                            (px_in, weights_p, out_p), difference, max_error,
                            float(np.abs(weights_p - after[1]).max()),
                            same_rows_up_to_order(out_p, out, atol=1e-9), tuple(notes))


SCENE = Scene(
    name="permutation", title="Permutation playground: permute before or after attention",
    controls=(
        text("text", "sentence", RUNNING_SENTENCE),
        choice("order", "permutation", ORDER_CHOICES, "reverse"),
        # the typed orders of chapter 5's exercise 4
        text("custom", "custom order", "0 1 2 4 3", suggestions=("1 0 2 3 4",),
             placeholder="e.g. 4 3 2 1 0", active_when=when("order", "custom"),
             hint="used when the permutation is \u201ccustom order\u201d"),
        seed_slider("shuffle seed", SHUFFLE_SEEDS, active_when=when("order", "shuffle"),
                    hint="used when the permutation is \u201cshuffle\u201d"),
        toggle("pe", "positional encoding"),
        toggle("causal", "causal mask"),
    ),
    state=permutation_state, web="permutation",
    suggested=(
        {"order": "shuffle", "pe": False, "causal": False},     # every order: equivariant
        {"order": "rotate", "pe": True, "causal": False},       # PE on: the inputs differ
        {"order": "reverse", "pe": False, "causal": True},      # mask on, reverse
        {"order": "identity", "pe": True, "causal": True},      # nothing moved
        {"order": "custom", "custom": "0 1 2 4 3", "pe": False, "causal": True},  # ex. 4
        {"order": "custom", "custom": "1 0 2 3 4", "pe": False, "causal": True},
    ))
SCENES = (SCENE,)
