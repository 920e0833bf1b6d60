"""Chapter 7's lab: a stack of random transformer blocks on a sentence (post-LN or
pre-LN, residuals on or off, 1 to 12 blocks, a seed, an optional causal mask): the
residual stream's norm after every sub-layer and each layer's attention weights.
:func:`block_state` is the pure state function; :data:`SCENE` declares the controls."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._validate import whole_number
from ..attention import causal_mask
from ..block import encoder_stack, stack_trace, stream_norms
from ..positional import sinusoidal_encoding
from ..tokens import RUNNING_SENTENCE
from .core import (as_known, MAX_WIDGET_TOKENS, HasTokens, Note, Scene, choice, embed_tokens,
                   read_tokens, seed_slider, slider, text, toggle)

__all__ = ["BLOCK_D", "BLOCK_H", "MAX_DEPTH", "BLOCK_SENTENCES", "LN_LABELS", "BlockState",
           "block_state"]

#: The lab's width and heads (d_ff = 4 d = 32).
BLOCK_D, BLOCK_H = 8, 2
#: The deepest stack the lab offers (and the most attention maps it shows).
MAX_DEPTH = 12
#: The lab's suggested sentences: the running example, a repeated word, a longer sentence.
BLOCK_SENTENCES = (RUNNING_SENTENCE, "the dog saw the cat",
                   "in the morning the sun was warm, so we went to the river")
#: How the two LayerNorm placements are named, by ``norm_first``.
LN_LABELS = {False: "post-LN (the paper, BERT)", True: "pre-LN (GPT-2)"}


@functools.lru_cache(maxsize=64)
def _stack(seed: int, norm_first: bool) -> tuple:
    """The MAX_DEPTH random blocks of ``seed`` (a shallower stack is their start), built
    once: moving the residual toggle, the depth or the text reuses them."""
    return tuple(encoder_stack(MAX_DEPTH, BLOCK_D, BLOCK_H, seed, norm_first=norm_first))


@functools.lru_cache(maxsize=256)
def _run(tokens: tuple, seed: int, depth: int, residual: bool, causal: bool):
    """X:(s, d), the norms of both LN settings, and per setting the head-averaged weights
    (L, s, s), the output (s, d) and layer 1's trace shapes; cached, so that switching
    between post-LN and pre-LN (or back to an earlier state) costs no computation."""
    X = embed_tokens(tokens, BLOCK_D) + sinusoidal_encoding(len(tokens), BLOCK_D)  # (s, d)
    mask = causal_mask(len(tokens)) if causal else None  # (s, s) or None
    norms, runs = {}, {}
    for nf in (False, True):
        blocks = _stack(seed, nf)[:depth]
        stream, weights = stack_trace(blocks, X, mask=mask, residual=residual)
        norms[nf] = stream_norms(stream)  # (2L + 1,)
        trace = tuple((n, a.shape) for n, a in blocks[0].trace(X, mask=mask,
                                                              residual=residual))
        # L x (h, s, s) -> (L, s, s): each layer's heads averaged
        runs[nf] = (np.stack([w.mean(axis=0) for w in weights]), stream[-1][1], trace)
    for a in (X, *norms.values(), *(r[k] for r in runs.values() for k in (0, 1))):
        a.flags.writeable = False  # shared by every state that hits the cache
    return X, norms, runs


@dataclass(frozen=True, eq=False)
class BlockState(HasTokens):
    """Everything chapter 7's lab shows for one set of control values (L = depth)."""

    text: str
    tokens: tuple          # (s,) str
    norm_first: bool       # pre-LN (else post-LN)
    residual: bool         # residual connections
    causal: bool           # a causal mask
    depth: int             # blocks in the stack (L)
    seed: int              # of the blocks' weights
    d: int
    h: int
    d_ff: int
    X: np.ndarray          # (s, d) the input: embeddings plus sinusoidal positional encoding
    # {False: post-LN, True: pre-LN}, same weights: each (2 L + 1,), the mean norm of a
    # token's vector at each point; (0,) when there are no tokens
    norms: dict
    weights: np.ndarray    # (L, s, s) each layer's weights, mean over heads (chosen LN setting)
    output: np.ndarray     # (s, d) the stack's output (chosen LN setting)
    trace: tuple           # (name, shape) of layer 1's arrays (EncoderBlock.trace; chosen LN)
    n_parameters: int      # learned numbers of one block, 12 d^2 + 13 d
    notes: tuple           # of Note

    @property
    def norms_post(self) -> np.ndarray:
        """The norms with post-LN, shape (2 L + 1,)."""
        return self.norms[False]

    @property
    def norms_pre(self) -> np.ndarray:
        """The norms with pre-LN, shape (2 L + 1,)."""
        return self.norms[True]

    @property
    def chosen_norms(self) -> np.ndarray:
        """The norms of the chosen LN setting, shape (2 L + 1,)."""
        return self.norms[self.norm_first]


def block_state(text: str = RUNNING_SENTENCE, norm_first: bool = False,
                residual: bool = True, depth: int = 6, seed: int = 0, causal: bool = False,
                *, max_tokens: int = MAX_WIDGET_TOKENS) -> BlockState:
    """Sentence -> X:(s, d) -> a stack of ``depth`` random encoder blocks.

    Pure: the same arguments give the same state (the blocks are cached per seed and LN
    setting). The text never raises: an empty text gives s = 0 and an error note.

    Parameters
    ----------
    text : str
        The sentence; X = its embeddings (chapter 1's table, seed 0) + positional encoding.
    norm_first : bool
        Pre-LN (True) or post-LN (False) for the attention maps, the output and the trace;
        the norms are computed for both.
    residual : bool
        Residual connections on or off (in every block).
    depth : int
        1..MAX_DEPTH blocks.
    seed : int
        Seed of the blocks' weights (``encoder_stack``).
    causal : bool
        A causal mask in every block (decoder-only, as GPT); else no mask (as BERT).
    max_tokens : int
        The most tokens kept (a longer text is truncated with a note).

    Raises
    ------
    ValueError
        If depth is not a whole number in 1..MAX_DEPTH or seed not one >= 0.
    """
    depth = whole_number(depth, "depth", 1, MAX_DEPTH)
    seed = whole_number(seed, "seed", 0)
    tokens, notes, _ = read_tokens(text, max_tokens)
    tokens = as_known(tokens, notes)
    s, d = len(tokens), BLOCK_D
    block = _stack(seed, norm_first)[0]
    if s:
        X, norms, runs = _run(tuple(tokens), seed, depth, bool(residual), bool(causal))
        weights, output, trace = runs[bool(norm_first)]
    else:
        X, output, weights, trace = np.zeros((0, d)), np.zeros((0, d)), np.zeros((depth, 0, 0)), ()
        norms = {False: np.zeros(0), True: np.zeros(0)}
    if s and not residual:
        notes.append(Note("info", "residual connections are off: each sub-layer's output "
                                  "replaces the stream instead of being added to it"))
    if s and norm_first and residual:
        n = norms[True]
        notes.append(Note("info", f"pre-LN: the stream's norm grew from {n[0]:.2f} to "
                                  f"{n[-1]:.2f} over {depth} block(s); post-LN holds it at "
                                  f"\u221ad = {np.sqrt(d):.2f} after every sub-layer"))
    return BlockState(
        text=text if isinstance(text, str) else "", tokens=tuple(tokens),
        norm_first=bool(norm_first), residual=bool(residual), causal=bool(causal),
        depth=depth, seed=seed, d=d, h=BLOCK_H, d_ff=block.d_ff, X=X,
        norms=norms, weights=weights, output=output, trace=trace,
        n_parameters=block.n_parameters, notes=tuple(notes))


SCENE = Scene(
    name="block",
    title="Block explorer: a stack of transformer blocks",
    controls=(
        text("text", "sentence", RUNNING_SENTENCE, suggestions=BLOCK_SENTENCES),
        choice("norm_first", "LayerNorm", [(label, nf) for nf, label in LN_LABELS.items()],
               False),
        toggle("residual", "residual connections", True),
        slider("depth", "depth L (blocks)", range(1, MAX_DEPTH + 1), 6),  # 6: the paper's
        seed_slider("seed (weights)"),
        choice("causal", "mask", [("none (encoder, as BERT)", False),
                                  ("causal (decoder-only, as GPT)", True)],
               False),
    ),
    state=block_state, web="block",
    suggested=(
        {"norm_first": True, "residual": True, "depth": 12},    # pre-LN: the norm grows
        {"norm_first": False, "residual": True, "depth": 12},   # post-LN: flat at sqrt(d)
        {"norm_first": True, "residual": False, "depth": 12},   # no residuals
        {"text": "the dog saw the cat", "depth": 1},            # the repeated "the"
    ),
)
SCENES = (SCENE,)
