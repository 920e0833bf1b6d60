"""Two tiny transformers trained from scratch, in seconds, deterministically (chapter 8).

Tasks (every batch is fresh random sequences; nothing is ever shown twice):

- ``"reverse"``: 8 symbols from an alphabet of 10; the target at position i is the input
  at position 7 - i. No mask (encoder-style). Default 1 layer x 2 heads: the heads
  become an anti-diagonal.
- ``"roll"``: as "reverse", but the target at position i is the input at position
  (i + 1) mod 8 (the sequence rotated one place to the left, ``np.roll(x, -1)``).
- ``"induction"``: 24 symbols from 32, causal; each sequence is a random period p
  (6..12) of distinct symbols repeated; predict the next symbol. The loss and the
  accuracy count only the positions i >= p (from the second period on), where the next
  symbol is predictable. Default 2 layers x 1 head: a previous-token head in layer 0
  feeds an induction head in layer 1.

The model (``TinyTransformer``)::

    x = E[tokens] + P[:s]                          (b, s) -> (b, s, d), d = 64
    x = layer(x) for each pre-LN nn.TransformerEncoderLayer(d, h, 4d, dropout=0)
    logits = LN(x) @ W_u^T + b_u                   (b, s, d) -> (b, s, vocab)

Trained with AdamW (lr 3e-3) on a one-cycle schedule (10% warm-up), 256 sequences a
step, one thread, ``torch.use_deterministic_algorithms(True)``: the same seed gives the
same weights, bit for bit. The global torch settings (threads, determinism, the global
random state) are restored afterwards.

``TinyRun.attention`` recomputes the attention of any checkpoint with the book's own
numpy code (``attention_book.block.EncoderBlock``, gathered in a :class:`NumpyModel`),
not with torch. ``train_tiny(..., positions=False)`` trains without position embeddings
(the table stays zero), to see what attention cannot do without them.

``train_tiny`` trains each run once: it keeps runs in memory, and on disk in the source
checkout's ``_build/cache/train`` (or ``$ATTENTION_BOOK_CACHE/train``), so that the next process
(another chapter's kernel, the tests) loads what the first one trained.

This module is in the reference layer: it imports torch.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from . import diskcache
from ._validate import whole_number
from .attention import causal_mask, scaled_dot_product_attention
from .block import EncoderBlock, feed_forward, layer_norm
from .heads import (anti_diagonal_score, induction_score, mean_row_entropy,
                    previous_token_score, self_score)
from .masking import KVCache
from .multihead import merge_heads, split_heads

__all__ = [
    "TASKS",
    "Batch",
    "TinyTransformer",
    "TinyRun",
    "NumpyModel",
    "CachedDecoder",
    "deterministic_cpu",
    "make_batch",
    "sample",
    "train_tiny",
    "clear_cache",
    "torch_versions",
    "HEADLINE_SCORES",
    "headline_scores",
    "correct_outputs",
]

# train_tiny says here, at INFO, what it trained, loaded or saved (nothing shows by default:
# a chapter's stderr fails the strict build)
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Task:
    """What a task's sequences look like, and its default model and training length."""

    vocab: int  # symbols 0..vocab-1
    length: int  # positions per sequence (s)
    causal: bool  # may position i look at positions after it?
    n_layers: int
    n_heads: int
    steps: int  # optimiser steps (measured: ~100% held-out accuracy with margin)


TASKS = {
    "reverse": Task(vocab=10, length=8, causal=False, n_layers=1, n_heads=2, steps=60),
    "roll": Task(vocab=10, length=8, causal=False, n_layers=1, n_heads=2, steps=60),
    "induction": Task(vocab=32, length=24, causal=True, n_layers=2, n_heads=1, steps=150),
}
MIN_PERIOD, MAX_PERIOD = 6, 12  # the induction task's random period, inclusive
D_MODEL = 64
BATCH = 256
LR = 3e-3
WARMUP = 0.1  # fraction of the steps spent warming the learning rate up
HELD_OUT = 1000  # held-out sequences behind TinyRun.accuracy
HELD_OUT_SEED = 1_000_003  # their generator's seed, apart from the training seeds 0, 1, ...
EXAMPLE_SEED = 2024
EXAMPLE_PERIOD = 7  # the induction probe: 24 = 3 x 7 + 3, three repeats and a bit
N_CHECKPOINTS = 26  # saved states, evenly spaced from step 0 to the last


# ------------------------------------------------------------------ data


class Batch(NamedTuple):
    """A batch of sequences (numpy), or one sequence (shapes without the leading n).

    Attributes
    ----------
    tokens : numpy.ndarray of int64, shape (n, s)
        The inputs.
    targets : numpy.ndarray of int64, shape (n, s)
        What position i should predict.
    counted : numpy.ndarray of bool, shape (n, s)
        Positions that count in the loss and accuracy (all for "reverse" and "roll";
        i >= p, from the second period on, for "induction").
    """

    tokens: np.ndarray
    targets: np.ndarray
    counted: np.ndarray


def _task(task) -> Task:
    if task not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}, got {task!r}")
    return TASKS[task]


def _period(task: str, period):
    """None (random 6..12) or a fixed whole period for the induction task."""
    if period is None:
        return None
    if task != "induction":
        raise ValueError(f"period only applies to the induction task, not {task!r}")
    # p <= 23 leaves at least one predictable position in 24; p distinct symbols of 32
    return whole_number(period, "period", 2, TASKS["induction"].length - 1)


def _generator(generator) -> torch.Generator:
    if isinstance(generator, torch.Generator):
        return generator
    return torch.Generator().manual_seed(whole_number(generator, "generator (a seed)", 0))


def _torch_batch(task: str, n: int, g: torch.Generator, period=None):
    """(tokens, targets, counted) as torch tensors (n, s); draws from g only."""
    spec = TASKS[task]
    s = spec.length
    if task in ("reverse", "roll"):
        tokens = torch.randint(0, spec.vocab, (n, s), generator=g)  # (n, s)
        targets = tokens.flip(1) if task == "reverse" else tokens.roll(-1, dims=1)
        return tokens, targets, torch.ones(n, s, dtype=torch.bool)
    if period is None:
        p = torch.randint(MIN_PERIOD, MAX_PERIOD + 1, (n,), generator=g)  # (n,)
    else:
        p = torch.full((n,), period)  # (n,)
    # a random order of the alphabet per sequence; its first p symbols are the period
    symbols = torch.rand(n, spec.vocab, generator=g).argsort(dim=1)  # (n, vocab)
    # position t holds symbol number t mod p; s + 1 positions so the last has a target
    index = torch.arange(s + 1)[None, :] % p[:, None]  # (1, s+1) % (n, 1) -> (n, s+1)
    sequence = symbols.gather(1, index)  # (n, s+1)
    counted = torch.arange(s)[None, :] >= p[:, None]  # (n, s): from the second period on
    return sequence[:, :-1], sequence[:, 1:], counted


def make_batch(task: str, n: int, generator, *, period=None) -> Batch:
    """n fresh random sequences of a task, with their targets.

    Parameters
    ----------
    task : {"reverse", "roll", "induction"}
    n : int
        Number of sequences (>= 1).
    generator : torch.Generator or int
        Where the randomness comes from (an int seeds a new generator). The same
        generator state gives the same batch.
    period : int, optional
        Induction only: a fixed period (2..23) instead of a random one in 6..12.

    Returns
    -------
    Batch
        tokens, targets (int64) and counted (bool), each of shape (n, s), s = 8 for
        "reverse" and "roll", 24 for "induction".
    """
    _task(task)
    n = whole_number(n, "n", 1)
    period = _period(task, period)
    tokens, targets, counted = _torch_batch(task, n, _generator(generator), period)
    return Batch(tokens.numpy().copy(), targets.numpy().copy(), counted.numpy().copy())


def sample(task: str, seed: int = 0, *, period=None) -> Batch:
    """One random sequence of a task, the same for the same seed.

    Parameters
    ----------
    task : {"reverse", "roll", "induction"}
    seed : int
        >= 0.
    period : int, optional
        Induction only: a fixed period.

    Returns
    -------
    Batch
        tokens, targets and counted, each of shape (s,).
    """
    batch = make_batch(task, 1, whole_number(seed, "seed", 0), period=period)
    return Batch(*(a[0] for a in batch))  # (1, s) -> (s,)


# ------------------------------------------------------------------ the model


class TinyTransformer(nn.Module):
    """Token and learned position embeddings, pre-LN encoder layers, LayerNorm, unembedding.

    Parameters
    ----------
    vocab : int
        Alphabet size V.
    length : int
        Largest sequence length (rows of the position table).
    n_layers, n_heads : int
        n_heads must divide d.
    causal : bool
        Whether position i may only attend to positions 0..i.
    d : int
        Model width.
    positions : bool
        False: the position table is all zeros and is not trained (no position
        information at all; the random initial weights of everything else are the same).

    Attributes
    ----------
    embed : nn.Embedding
        (V, d) table.
    position : nn.Embedding
        (length, d) table, one learned row per position.
    layers : nn.ModuleList of nn.TransformerEncoderLayer
        ``(d, n_heads, 4 d, dropout=0.0, batch_first=True, norm_first=True)``.
    norm : nn.LayerNorm
    unembed : nn.Linear
        d -> V.
    """

    def __init__(self, vocab: int, length: int, n_layers: int, n_heads: int, causal: bool,
                 d: int = D_MODEL, positions: bool = True):
        super().__init__()
        self.causal = causal
        self.embed = nn.Embedding(vocab, d)
        self.position = nn.Embedding(length, d)
        if not positions:  # drawn anyway, so every other initial weight stays the same
            with torch.no_grad():
                self.position.weight.zero_()
            self.position.weight.requires_grad_(False)  # AdamW skips it: it stays zero
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d, n_heads, 4 * d, dropout=0.0, batch_first=True,
                                       norm_first=True)
            for _ in range(n_layers))
        self.norm = nn.LayerNorm(d)
        self.unembed = nn.Linear(d, vocab)

    def torch_mask(self, s: int) -> torch.Tensor | None:
        """The causal mask in torch's polarity (True = may NOT attend), or None."""
        if not self.causal:
            return None
        return ~torch.from_numpy(causal_mask(s))  # (s, s); the book's True = may attend

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits (b, s, V) for tokens (b, s)."""
        s = tokens.shape[-1]
        x = self.embed(tokens) + self.position.weight[:s]  # (b, s, d) + (s, d)
        mask = self.torch_mask(s)
        for layer in self.layers:
            x = layer(x, src_mask=mask)  # (b, s, d)
        return self.unembed(self.norm(x))  # (b, s, d) -> (b, s, V)


def _accuracy(predicted, targets, counted, task: str) -> float:
    """Whole-sequence accuracy for "reverse" and "roll"; per counted position for
    "induction".

    predicted, targets: int arrays (n, s); counted: bool (n, s); numpy or torch.
    """
    right = np.asarray(predicted) == np.asarray(targets)  # (n, s)
    if task != "induction":
        return float(right.all(axis=-1).mean())
    return float(right[np.asarray(counted)].mean())


def _numpy_state(model: nn.Module) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}


@contextlib.contextmanager
def deterministic_cpu():
    """One thread, deterministic kernels, a private random state; all restored after.

    Inside it, the same seeds give the same training bit for bit (:func:`train_tiny`
    trains inside it). ``torch.manual_seed`` called inside does not change the random
    state outside.
    """
    threads = torch.get_num_threads()
    deterministic = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    fill = torch.utils.deterministic.fill_uninitialized_memory
    # one thread: with the other core busy, two threads ran 30x slower here
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    # Deterministic mode also fills every new tensor with NaN (to expose a read of memory
    # never written): 8,844 fills in 30 induction steps, 10% of the training's CPU. No
    # kernel here reads such memory: the weights and curves are the same bit for bit
    # without the fills (tests/test_training.py's determinism test trains twice).
    torch.utils.deterministic.fill_uninitialized_memory = False
    try:
        with torch.random.fork_rng(devices=[]):  # torch.manual_seed below stays local
            yield
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic, warn_only=warn_only)
        torch.utils.deterministic.fill_uninitialized_memory = fill


# ------------------------------------------------------------------ the trained run


@dataclass(eq=False)
class TinyRun:
    """A trained tiny transformer, its history, and its checkpoints.

    Attributes
    ----------
    task : str
    seed : int
    config : dict
        vocab, length, causal, d, n_layers, n_heads, period (None = random 6..12),
        positions (False: no position embeddings), steps, batch, lr, warmup.
    model : TinyTransformer
        The trained torch module, in eval mode. Shared by every caller of the cache:
        do not train it further (``copy.deepcopy`` it first).
    history : dict of numpy.ndarray, each of shape (steps,)
        ``"steps"`` (0..steps-1), ``"loss"`` (cross-entropy on the counted positions)
        and ``"accuracy"`` (the metric of :attr:`accuracy`) of each step's fresh batch,
        measured before the model learned from it, so already a held-out measure.
    accuracy : float
        On 1000 held-out sequences from a generator of their own: whole sequences
        right for "reverse", counted positions right for "induction".
    train_seconds : float
        Wall time of the training, checkpoints and held-out evaluation included (not
        torch's one-time set-up: the first ``use_deterministic_algorithms`` call in a
        process imports torch's compiler stack, about 1-2 s).
    checkpoints : list of (int, dict of numpy.ndarray)
        (step, state) at about 26 evenly spaced steps from 0 (before any update) to
        ``steps`` (the final weights): ``state`` is the model's state_dict as numpy
        arrays, enough to recompute everything at that step.
    example : numpy.ndarray of int64, shape (s,)
        A fixed probe sequence for the lab (induction: period 7, or the run's fixed
        period).
    """

    task: str
    seed: int
    config: dict
    model: TinyTransformer
    history: dict
    accuracy: float
    train_seconds: float
    checkpoints: list
    example: np.ndarray
    _nets: dict = field(default_factory=dict, repr=False)
    _score_history: tuple | None = field(default=None, repr=False)
    # head_scores' memo: not an init field, so that dataclasses.replace with other
    # checkpoints (the page's weights) starts it empty; _score_history is kept
    _scores: dict = field(default_factory=dict, init=False, repr=False)

    @property
    def steps(self) -> list[int]:
        """The checkpoint steps, ascending."""
        return [step for step, _ in self.checkpoints]

    def _state(self, step) -> tuple[int, dict]:
        if step is None:
            return self.checkpoints[-1]
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)):
            raise ValueError(f"step must be a whole number (a checkpoint step) or None, "
                             f"got {step!r}")
        for saved, state in self.checkpoints:
            if saved == step:
                return saved, state
        raise ValueError(f"no checkpoint at step {step}; checkpoints are at steps "
                         f"{self.steps} (None = the final weights)")

    def _net(self, step):
        """The book's numpy model at a checkpoint, built once and kept."""
        step, state = self._state(step)
        if step not in self._nets:
            self._nets[step] = NumpyModel.from_state(state, self.config)
        return self._nets[step]

    def numpy_model(self, step=None) -> "NumpyModel":
        """The model at a checkpoint as numpy arrays and the book's EncoderBlocks.

        Built once per checkpoint and kept: treat its arrays as read-only.

        Parameters
        ----------
        step : int, optional
            A checkpoint step (see :attr:`steps`); None = the final weights.

        Returns
        -------
        NumpyModel
        """
        return self._net(step)

    def check_tokens(self, tokens) -> np.ndarray:
        """``tokens`` as the model takes them, or a ValueError saying why not.

        Parameters
        ----------
        tokens : array_like of int, shape (s,) or (b, s)
            Symbols 0..V-1, of a length the task accepts.

        Returns
        -------
        numpy.ndarray of int64, shape (s,) or (b, s)
        """
        return _check_tokens(tokens, self.task, self.config)

    def forward(self, tokens, step=None):
        """Logits and attention of the model at a checkpoint, with the book's numpy code.

        Parameters
        ----------
        tokens : array_like of int, shape (s,) or (b, s)
            Symbols 0..V-1; s = 8 for "reverse" and "roll", 1..24 for "induction".
        step : int, optional
            A checkpoint step (see :attr:`steps`); None = the final weights.

        Returns
        -------
        logits : numpy.ndarray of float32, shape (s, V) or (b, s, V)
        attention : numpy.ndarray of float32, shape (n_layers, h, s, s) or
            (b, n_layers, h, s, s)
        """
        return self._net(step).forward(self.check_tokens(tokens), self.config["causal"])

    def attention(self, tokens, step=None) -> np.ndarray:
        """Every head's attention weights, computed by the book's numpy blocks.

        Parameters
        ----------
        tokens : array_like of int, shape (s,) or (b, s)
        step : int, optional
            A checkpoint step; None = the final weights.

        Returns
        -------
        numpy.ndarray of float32, shape (n_layers, h, s, s) (or (b, n_layers, h, s, s))
            Rows are queries; the induction task's maps are causal (zero above the
            diagonal).
        """
        return self.forward(tokens, step)[1]

    def predict(self, tokens, step=None) -> np.ndarray:
        """The predicted symbol at every position (numpy forward pass).

        Parameters
        ----------
        tokens : array_like of int, shape (s,) or (b, s)
        step : int, optional
            A checkpoint step; None = the final weights.

        Returns
        -------
        numpy.ndarray of int64, shape (s,) or (b, s)
            For "reverse", the reversed input once trained (for "roll", the rotated
            input); for "induction", the next symbol (meaningful from the second period
            on).
        """
        return self.forward(tokens, step)[0].argmax(axis=-1)

    def evaluate(self, batch: Batch, step=None) -> float:
        """Accuracy on a batch (from :func:`make_batch`), with the run's metric.

        Parameters
        ----------
        batch : Batch
            tokens, targets, counted of shape (n, s).
        step : int, optional
            A checkpoint step; None = the final weights.

        Returns
        -------
        float
            Whole sequences right ("reverse", "roll") or counted positions right
            ("induction").
        """
        if not isinstance(batch, Batch):
            raise ValueError(f"batch must be a Batch from make_batch, got "
                             f"{type(batch).__name__}")
        predicted = self.predict(batch.tokens, step)  # (n, s)
        counted = np.asarray(batch.counted, dtype=bool)
        if not counted.any():
            raise ValueError("batch has no counted position to score")
        return _accuracy(predicted, np.asarray(batch.targets), counted, self.task)

    def head_scores(self, n: int = 256, step=None, *, period=None) -> dict:
        """What each head does, on n held-out sequences: one score per (layer, head).

        Scores (:mod:`attention_book.heads`), each averaged over the sequences:

        - ``"previous_token"``: weight on key i-1; for "induction" only over the first
          period (queries 1..p-1), before any symbol repeats;
        - ``"induction"`` ("induction" task only): weight on the position after the
          earlier copy of the current symbol, over the queries i >= p;
        - ``"anti_diagonal"``: weight on key s-1-i;
        - ``"self"``: weight on the diagonal;
        - ``"entropy"``: mean row entropy divided by log s (0 = one key, 1 = uniform).

        Parameters
        ----------
        n : int
            Number of held-out sequences.
        step : int, optional
            A checkpoint step; None = the final weights.
        period : int, optional
            Induction only: score on sequences with this fixed period instead of the
            run's own distribution.

        Returns
        -------
        dict of str to numpy.ndarray, each of shape (n_layers, h)
            New arrays at each call; the scores are computed once per (n, step, period)
            and kept (:meth:`score_history` fills them for every checkpoint).
        """
        if period is None:
            period = self.config["period"]
        # checked as make_batch and forward check them: the memo's key
        key = (whole_number(n, "n", 1), self._state(step)[0], _period(self.task, period))
        if key not in self._scores:
            self._scores[key] = self._head_scores(n, step, period)
        return {name: v.copy() for name, v in self._scores[key].items()}

    def _head_scores(self, n: int, step, period) -> dict:
        """:meth:`head_scores`, computed."""
        batch = make_batch(self.task, n, torch.Generator().manual_seed(HELD_OUT_SEED + 1),
                           period=period)
        weights = self.attention(batch.tokens, step)  # (n, n_layers, h, s, s)
        tokens = batch.tokens[:, None, None, :]  # (n, s) -> (n, 1, 1, s), to broadcast
        scores = {"previous_token": previous_token_score(weights, per_query=True)}
        if self.task == "induction":
            # the first period: queries 1..p-1, where nothing has repeated yet
            first = ~batch.counted[:, None, None, :]  # (n, 1, 1, s)
            scores["previous_token"] = np.where(first, scores["previous_token"], np.nan)
            scores["induction"] = induction_score(weights, tokens, per_query=True)
        scores["anti_diagonal"] = anti_diagonal_score(weights, per_query=True)
        scores["self"] = self_score(weights, per_query=True)
        scores["entropy"] = mean_row_entropy(weights, normalised=True, per_query=True)
        # (n, n_layers, h, s) -> (n_layers, h): mean over sequences and counted queries
        return {name: _nanmean(v, axes=(0, 3)) for name, v in scores.items()}

    def score_history(self) -> tuple[np.ndarray, dict]:
        """:meth:`head_scores` (256 held-out sequences) at every checkpoint: how each head
        became what it is.

        Computed once per run and kept: treat the arrays as read-only. Kept on disk too
        (``_build/cache/scores``, :mod:`attention_book.diskcache`), so that the next
        process (the second execution of chapter 8, its lab, the tests) reads them: keyed
        by the weights at every checkpoint, the run's config, the source of every module
        the scores run through (:data:`_SCORE_CODE`) and the versions of torch (which
        draws the held-out sequences) and numpy.

        Returns
        -------
        steps : numpy.ndarray of int, shape (n_checkpoints,)
            :attr:`steps`.
        scores : dict of str to numpy.ndarray, each of shape (n_checkpoints, n_layers, h)
            ``scores[name][c]`` is ``head_scores(step=steps[c])[name]``.
        """
        if self._score_history is None:
            def compute() -> dict:
                scores = [self.head_scores(step=step) for step in self.steps]
                return {k: np.stack([s[k] for s in scores]) for k in scores[0]}

            arguments = {"task": self.task, "config": self.config, "n": 256,
                         "steps": self.steps, "weights": self._weights_digest()}
            history = diskcache.cached_arrays(
                "scores", arguments, diskcache.module_digest(*_SCORE_CODE), compute,
                versions=torch_versions())
            for c, step in enumerate(self.steps):  # head_scores(step=...) reads them now
                self._scores.setdefault((256, step, self.config["period"]),
                                        {k: v[c] for k, v in history.items()})
            self._score_history = (np.array(self.steps), history)
        return self._score_history

    def _weights_digest(self) -> str:
        """sha256 of the weights at every checkpoint (names, dtypes, shapes and bytes)."""
        return diskcache.source_digest(
            part for step, state in self.checkpoints for name, w in state.items()
            for part in (f"{step} {name} {w.dtype} {w.shape}".encode(),
                         np.ascontiguousarray(w).tobytes()))


#: The modules whose source decides :meth:`TinyRun.head_scores` (the held-out sequences, the
#: book's numpy forward pass and the scores; tests/test_chapter8_cache.py checks the list).
_SCORE_CODE = ("attention_book.training", "attention_book.heads", "attention_book.block",
               "attention_book.attention", "attention_book.multihead",
               "attention_book.masking", "attention_book._validate")


def _nanmean(values: np.ndarray, axes) -> np.ndarray:
    """Mean over ``axes`` ignoring NaN (queries that do not count), without warnings."""
    valid = ~np.isnan(values)
    total = np.where(valid, values, 0.0).sum(axis=axes)
    return total / np.maximum(valid.sum(axis=axes), 1)


def _check_tokens(tokens, task: str, config: dict) -> np.ndarray:
    """tokens as int64 (s,) or (b, s), with symbols and a length the model knows."""
    t = np.asarray(tokens)
    if t.size == 0:
        raise ValueError("tokens is empty: give at least one symbol")
    if t.dtype.kind not in "iu":
        raise ValueError(f"tokens must be whole numbers (symbol ids), got dtype {t.dtype}")
    if t.ndim not in (1, 2):
        raise ValueError(f"tokens must have shape (s,) or (b, s), got shape {t.shape}")
    vocab, length, s = config["vocab"], config["length"], t.shape[-1]
    if t.min() < 0 or t.max() >= vocab:
        bad = t.min() if t.min() < 0 else t.max()
        raise ValueError(f"tokens must be symbols 0..{vocab - 1} (the {task} task's "
                         f"alphabet of {vocab}), got {bad}")
    if task == "reverse" and s != length:
        raise ValueError(f"the reversal model reads exactly {length} symbols (position i "
                         f"is answered from position {length - 1} - i), got {s}")
    if task == "roll" and s != length:
        raise ValueError(f"the roll model reads exactly {length} symbols (position i is "
                         f"answered from position (i + 1) mod {length}), got {s}")
    if s > length:
        raise ValueError(f"the {task} model learned positions 0..{length - 1} only, so "
                         f"give at most {length} symbols, got {s}")
    return t.astype(np.int64, copy=False)


@dataclass(frozen=True)
class NumpyModel:
    """A trained tiny transformer as numpy arrays and the book's own blocks.

    Get one with :meth:`TinyRun.numpy_model`. Its forward pass is
    ``x = embed[tokens] + position[:s]``, then each block, then ``LN(x) @ W_u + b_u``.

    Attributes
    ----------
    embed : numpy.ndarray, shape (V, d)
        The token embedding table E.
    position : numpy.ndarray, shape (length, d)
        The learned position table P (all zeros for a run with ``positions=False``).
    blocks : tuple of EncoderBlock, length n_layers
        Pre-LN blocks (``norm_first=True``) holding the trained W^Q, W^K, W^V, W^O,
        feed-forward weights and LayerNorms.
    norm : (numpy.ndarray, numpy.ndarray)
        The final LayerNorm's (gamma, beta), each (d,).
    eps : float
        The final LayerNorm's eps.
    W_u : numpy.ndarray, shape (d, V)
        The unembedding, in row-vector form.
    b_u : numpy.ndarray, shape (V,)
    """

    embed: np.ndarray  # (V, d)
    position: np.ndarray  # (length, d)
    blocks: tuple  # n_layers EncoderBlocks
    norm: tuple  # (gamma, beta), each (d,)
    eps: float
    W_u: np.ndarray  # (d, V), row-vector form
    b_u: np.ndarray  # (V,)

    @classmethod
    def from_state(cls, state: dict, config: dict) -> "NumpyModel":
        """Load a numpy state_dict into a fresh torch model, then copy it out with
        ``EncoderBlock.from_torch``: the same code path for every checkpoint."""
        model = _new_model(config)
        model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
        model.eval()
        return cls(
            embed=state["embed.weight"],
            position=state["position.weight"],
            blocks=tuple(EncoderBlock.from_torch(layer) for layer in model.layers),
            norm=(state["norm.weight"], state["norm.bias"]),
            eps=model.norm.eps,
            W_u=state["unembed.weight"].T,  # (V, d)^T -> (d, V)
            b_u=state["unembed.bias"],
        )

    def forward(self, tokens: np.ndarray, causal: bool):
        """tokens (..., s) -> logits (..., s, V), attention (..., n_layers, h, s, s).

        ``tokens`` must already be valid (symbols 0..V-1, s <= length): use
        :meth:`TinyRun.forward` for checked input.
        """
        s = tokens.shape[-1]
        x = self.embed[tokens] + self.position[:s]  # (..., s, d) + (s, d)
        mask = causal_mask(s) if causal else None  # (s, s), True = may attend
        maps = []
        for block in self.blocks:
            x, w = block.forward(x, mask=mask)  # (..., s, d), (..., h, s, s)
            maps.append(w)
        x = layer_norm(x, *self.norm, self.eps)  # (..., s, d)
        logits = x @ self.W_u + self.b_u  # (..., s, d) @ (d, V) -> (..., s, V)
        return logits, np.stack(maps, axis=-4)  # L x (..., h, s, s) -> (..., L, h, s, s)


    def run_heads(self, tokens: np.ndarray, causal: bool, *, replace=None):
        """The forward pass head by head, showing (and optionally replacing) each head's
        output before W^O.

        The same computation as :meth:`forward`, written out for a pre-LN block:
        ``x += concat_h(z_h) W^O + b^O`` with ``z_h = softmax(q_h k_h^T / sqrt(d_k)) v_h``
        read from ``LN1(x)``, then ``x += FFN(LN2(x))``. ``replace`` sets chosen heads'
        ``z_h`` to given values: zeros (zero-ablation) or, say, their mean over a batch
        (mean-ablation).

        Parameters
        ----------
        tokens : numpy.ndarray of int, shape (..., s)
            Valid symbols (use :meth:`TinyRun.forward` to check input).
        causal : bool
        replace : dict of (layer, head) to array_like, optional
            Each value broadcastable to (..., s, d_k): what head ``head`` of layer
            ``layer`` outputs instead of its own z.

        Returns
        -------
        logits : numpy.ndarray, shape (..., s, V)
        outputs : list of numpy.ndarray, one (..., h, s, d_k) per layer
            Each head's z as computed (before any replacement).
        """
        replace = {} if replace is None else dict(replace)
        for layer, head in replace:
            if not (0 <= layer < len(self.blocks) and 0 <= head < self.blocks[layer].h):
                raise ValueError(f"no head {head} in layer {layer}: the model has "
                                 f"{len(self.blocks)} layers of {self.blocks[0].h} heads")
        s = tokens.shape[-1]
        x = self.embed[tokens] + self.position[:s]  # (..., s, d) + (s, d)
        mask = causal_mask(s) if causal else None  # (s, s), True = may attend
        outputs = []
        for layer, block in enumerate(self.blocks):
            z = _attend(block, layer_norm(x, *block.norm1, block.eps), mask)  # (..., h, s, d_k)
            outputs.append(z)
            for (at, head), value in replace.items():
                if at == layer:
                    z = z.copy()
                    z[..., head, :, :] = value  # (..., s, d_k) <- broadcast
            x = _finish_block(block, x, z)  # (..., s, d)
        x = layer_norm(x, *self.norm, self.eps)  # (..., s, d)
        return x @ self.W_u + self.b_u, outputs  # (..., s, d) @ (d, V) -> (..., s, V)

    def decoder(self) -> "CachedDecoder":
        """A fresh :class:`CachedDecoder` for this (causal) model."""
        return CachedDecoder(self)


def _affine(x, W, b):
    """Row-vector affine map: (..., n, d) @ (d, m) + (m,) -> (..., n, m)."""
    y = x @ W  # (..., n, d) @ (d, m) -> (..., n, m)
    return y if b is None else y + b


def _project(block: EncoderBlock, a: np.ndarray):
    """q, k, v of every head from the normed stream a (..., t, d): each (..., h, t, d_k)."""
    mha = block.attention
    return tuple(split_heads(_affine(a, W, b), mha.h)  # (..., t, d) -> (..., h, t, d_k)
                 for W, b in ((mha.W_q, mha.b_q), (mha.W_k, mha.b_k), (mha.W_v, mha.b_v)))


def _attend(block: EncoderBlock, a: np.ndarray, mask) -> np.ndarray:
    """Each head's output z (..., h, s, d_k) for the normed stream a (..., s, d)."""
    q, k, v = _project(block, a)
    return scaled_dot_product_attention(q, k, v, mask=mask)[0]  # (..., h, s, d_k)


def _finish_block(block: EncoderBlock, x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Pre-LN: x + concat(z) W^O + b^O, then + FFN(LN2(.)): (..., t, d)."""
    mha = block.attention
    x = x + _affine(merge_heads(z), mha.W_o, mha.b_o)  # (..., h, t, d_k) -> (..., t, d)
    normed = layer_norm(x, *block.norm2, block.eps)  # (..., t, d)
    return x + feed_forward(normed, block.W_1, block.b_1, block.W_2, block.b_2,
                            block.activation)  # (..., t, d)


class CachedDecoder:
    """Incremental decoding of a causal tiny transformer with one key/value cache a layer.

    Each call gets only the new tokens. Their positions continue where the cache ends:
    a new token's position is the cache's length (the number of tokens seen so far),
    so it reads row ``position[length]`` of the position table, and its query attends
    to the cached keys and values of every earlier token and to its own. The logits are
    those of the full causal pass (to float rounding), without recomputing the past.

    Parameters
    ----------
    net : NumpyModel
        A model trained with a causal mask (the "induction" task) and pre-LN blocks.

    Attributes
    ----------
    caches : list of KVCache, one per layer
        keys, values: (h, length, d_k).
    length : int
        Tokens seen so far (the next token's position).
    weights : list of numpy.ndarray, one (h, t_new, length) per layer
        The attention of the last call's new queries over every key so far (empty before
        the first call): what each head looked at to produce the next token's logits.
    """

    def __init__(self, net: NumpyModel):
        if not isinstance(net, NumpyModel):
            raise ValueError(f"net must be a NumpyModel (TinyRun.numpy_model()), got "
                             f"{type(net).__name__}")
        if not all(block.norm_first for block in net.blocks):
            raise ValueError("CachedDecoder follows pre-LN blocks (norm_first=True) only")
        self.net = net
        self.caches = [KVCache(b.h, b.attention.d_k) for b in net.blocks]
        self.weights: list[np.ndarray] = []

    @property
    def length(self) -> int:
        """Tokens seen so far: the position the next token will get."""
        return self.caches[0].length

    def __call__(self, new_tokens, *, position: int | None = None) -> np.ndarray:
        """Feed new tokens; get their next-token logits.

        Parameters
        ----------
        new_tokens : array_like of int, shape (t_new,)
            The prompt (several tokens at once) or one generated token.
        position : int, optional
            The first new token's position. Default: :attr:`length`, the only right
            value; anything else (an exercise) gives the model wrong positions.

        Returns
        -------
        numpy.ndarray, shape (t_new, V)
        """
        t = np.asarray(new_tokens)
        V, length = self.net.embed.shape[0], self.net.position.shape[0]
        if t.ndim != 1 or t.size == 0 or t.dtype.kind not in "iu":
            raise ValueError(f"new_tokens must be a non-empty sequence of symbols (t_new,), "
                             f"got {new_tokens!r}")
        if t.min() < 0 or t.max() >= V:
            raise ValueError(f"new_tokens must be symbols 0..{V - 1}, got {t.tolist()}")
        start = self.length
        first = start if position is None else whole_number(position, "position", 0)
        end = start + t.size  # cache length after this call
        if first + t.size > length or end > length:
            raise ValueError(f"the model learned positions 0..{length - 1} only: it cannot "
                             f"take {t.size} more token(s) after {start}")
        x = self.net.embed[t] + self.net.position[first:first + t.size]  # (t_new, d)
        # query r (position start + r) may see cached keys 0..start + r
        mask = np.arange(end)[None, :] <= start + np.arange(t.size)[:, None]  # (t_new, end)
        weights = []
        for block, cache in zip(self.net.blocks, self.caches):
            q, k, v = _project(block, layer_norm(x, *block.norm1, block.eps))  # (h, t_new, d_k)
            cache.append(k, v)  # keys, values: (h, end, d_k)
            # (h, t_new, d_k) against (h, end, d_k) -> (h, t_new, d_k), weights (h, t_new, end)
            z, w = scaled_dot_product_attention(q, cache.keys, cache.values, mask=mask)
            weights.append(w)
            x = _finish_block(block, x, z)  # (t_new, d)
        self.weights = weights
        x = layer_norm(x, *self.net.norm, self.net.eps)  # (t_new, d)
        return x @ self.net.W_u + self.net.b_u  # (t_new, d) @ (d, V) -> (t_new, V)


def _new_model(config: dict) -> TinyTransformer:
    """A TinyTransformer of the config's shape; its random init does not touch the
    global random state."""
    with torch.random.fork_rng(devices=[]):
        return TinyTransformer(config["vocab"], config["length"], config["n_layers"],
                               config["n_heads"], config["causal"], config["d"],
                               config.get("positions", True))


# ------------------------------------------------------------------ training


def _checkpoint_steps(checkpoints, steps: int) -> tuple[int, ...]:
    """Evenly spaced steps 0..steps (an int count), or an explicit list of steps."""
    if isinstance(checkpoints, (int, np.integer)) and not isinstance(checkpoints, bool):
        n = whole_number(checkpoints, "checkpoints", 2)
        return tuple(int(s) for s in np.unique(np.round(np.linspace(0, steps, n))))
    if isinstance(checkpoints, Sequence) and not isinstance(checkpoints, str):
        chosen = {whole_number(s, "each checkpoint step", 0, steps) for s in checkpoints}
        return tuple(sorted(chosen | {steps}))  # the final weights are always kept
    raise ValueError(f"checkpoints must be a count (>= 2) or a list of steps 0..{steps}, "
                     f"got {checkpoints!r}")


def _train(task: str, seed: int, n_layers: int, n_heads: int, period, steps: int,
           checkpoint_steps: tuple[int, ...], positions: bool = True) -> TinyRun:
    spec = TASKS[task]
    config = dict(vocab=spec.vocab, length=spec.length, causal=spec.causal, d=D_MODEL,
                  n_layers=n_layers, n_heads=n_heads, period=period, positions=positions,
                  steps=steps, batch=BATCH, lr=LR, warmup=WARMUP)
    _log.info("training %s: seed %d, %d layer(s) x %d head(s), %d steps", task, seed,
              n_layers, n_heads, steps)
    with deterministic_cpu():
        start = time.perf_counter()  # after the one-time import use_deterministic_... does
        torch.manual_seed(seed)  # the initial weights
        model = TinyTransformer(spec.vocab, spec.length, n_layers, n_heads, spec.causal,
                                positions=positions)
        data = torch.Generator().manual_seed(seed)  # the training sequences
        optimiser = torch.optim.AdamW(model.parameters(), lr=LR)
        schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=LR,
                                                       total_steps=steps, pct_start=WARMUP)
        losses, accuracies, checkpoints = [], [], []
        for step in range(steps + 1):
            if step in checkpoint_steps:  # the state BEFORE update number `step`
                checkpoints.append((step, _numpy_state(model)))
            if step == steps:
                break
            tokens, targets, counted = _torch_batch(task, BATCH, data, period)
            logits = model(tokens)  # (b, s, V)
            loss = nn.functional.cross_entropy(logits[counted], targets[counted])
            losses.append(loss.item())
            accuracies.append(_accuracy(logits.argmax(-1), targets, counted, task))
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            schedule.step()
        # no stale gradients on the returned model: it equals one rebuilt from the disk
        # cache in every attribute, and holds no second copy of the weights' size
        optimiser.zero_grad(set_to_none=True)
        model.eval()
        held_out = _torch_batch(task, HELD_OUT, torch.Generator().manual_seed(HELD_OUT_SEED),
                                period)
        with torch.no_grad():
            accuracy = _accuracy(model(held_out[0]).argmax(-1), *held_out[1:], task)
    seconds = time.perf_counter() - start
    example_period = None if task != "induction" else (period or EXAMPLE_PERIOD)
    return TinyRun(
        task=task, seed=seed, config=config, model=model,
        history={"steps": np.arange(steps), "loss": np.array(losses),
                 "accuracy": np.array(accuracies)},
        accuracy=accuracy, train_seconds=seconds, checkpoints=checkpoints,
        example=sample(task, EXAMPLE_SEED, period=example_period).tokens,
    )


# ------------------------------------------------------------------ one input, read


#: The score that says what each head of a task's default model (``train_tiny(task)``)
#: became, per head in (layer, head) order.
HEADLINE_SCORES = {"reverse": ("anti_diagonal", "anti_diagonal"),
                   "induction": ("previous_token", "induction")}


def headline_scores(task: str, weights, tokens) -> tuple:
    """Each head's headline score (:data:`HEADLINE_SCORES`) on one input.

    Parameters
    ----------
    task : {"reverse", "induction"}
    weights : numpy.ndarray, shape (n_layers, h, s, s)
        The attention of the task's default model on ``tokens`` (:meth:`TinyRun.attention`):
        (1, 2, 8, 8) for "reverse", (2, 1, s, s) for "induction".
    tokens : array_like of int, shape (s,)
        The input.

    Returns
    -------
    tuple of (float or None), length n_layers h
        "reverse": each head's anti-diagonal score. "induction": layer 0's previous-token
        score over the first period (queries 1 .. before the first symbol that occurred
        earlier, as :meth:`TinyRun.head_scores` measures it; later, layer 0 has other
        work) and layer 1's induction score; None where no query counts.
    """
    if task not in HEADLINE_SCORES:
        raise ValueError(f"task must be one of {list(HEADLINE_SCORES)}, got {task!r}")
    w, t = np.asarray(weights), np.asarray(tokens)
    n = len(HEADLINE_SCORES[task])
    if (t.ndim != 1 or w.ndim != 4 or w.shape[0] * w.shape[1] != n
            or w.shape[2:] != (t.shape[0],) * 2):
        raise ValueError(f"weights must be the default {task} model's attention "
                         f"(n_layers, h, s, s) with n_layers h = {n} heads, on tokens (s,); "
                         f"got weights {w.shape} and tokens {t.shape}")
    if task == "reverse":
        return tuple(float(v) for v in anti_diagonal_score(w).ravel())
    first = next((i for i in range(len(t)) if t[i] in t[:i]), len(t))
    previous = (float(np.mean(previous_token_score(w[0, 0], per_query=True)[1:first]))
                if first > 1 else None)
    try:
        induction = float(induction_score(w[1, 0], t))
    except ValueError:  # no symbol repeats after a gap: nothing to follow
        induction = None
    return previous, induction


def correct_outputs(task: str, tokens, predicted) -> tuple:
    """Which outputs of a model on one input are right.

    Parameters
    ----------
    task : {"reverse", "roll", "induction"}
    tokens : sequence of int, length s
        The input.
    predicted : sequence of int, length s
        The output at each position (e.g. :meth:`TinyRun.predict`).

    Returns
    -------
    tuple of (bool or None), length s
        "reverse": output i == input s-1-i; "roll": output i == input (i+1) mod s;
        "induction": output i == input i+1 where symbol i occurred before (a copy to
        follow), None elsewhere (the input cannot tell).
    """
    _task(task)
    tokens, predicted = [int(x) for x in tokens], [int(x) for x in predicted]
    s = len(tokens)
    if len(predicted) != s:
        raise ValueError(f"predicted has {len(predicted)} symbols but tokens has {s}: give "
                         f"one output per input position")
    if task == "reverse":
        return tuple(p == x for p, x in zip(predicted, tokens[::-1]))
    if task == "roll":
        return tuple(predicted[i] == tokens[(i + 1) % s] for i in range(s))
    seen = [tokens[i] in tokens[:i] and i + 1 < s for i in range(s)]
    return tuple(predicted[i] == tokens[i + 1] if seen[i] else None for i in range(s))


# ------------------------------------------------------------------ the caches

#: The environment variable that names the disk caches' root (see :func:`train_tiny`).
CACHE_ENV = diskcache.CACHE_ENV
_CACHE_FORMAT = 1  # the layout of a cache file: bump it when _run_arrays changes
_source_digest = diskcache.source_digest


def _training_code_digest() -> str | None:
    """The digest of the source that decides the trained weights; None if unreadable.

    This module holds the data, the model, the loop and the optimiser settings; the module
    of ``causal_mask`` (attention.py) makes the induction model's torch mask. Nothing else
    the training calls changes a weight: ``_validate`` only checks the arguments (which are
    in the key themselves), and the book's numpy modules (block, heads, multihead, masking)
    only read the checkpoints afterwards, so a run from disk recomputes with the current
    ones.
    """
    return diskcache.module_digest(__name__, causal_mask.__module__)


# Read at import, so that it describes the code this process runs even if the files are
# edited while it lives (a kernel keeps the module it imported).
_CODE_DIGEST = _training_code_digest()


def _cache_key(args: tuple) -> str | None:
    """Everything a cached run depends on, as JSON; None when the code could not be read."""
    if _CODE_DIGEST is None:
        return None
    return json.dumps({
        "format": _CACHE_FORMAT, "arguments": list(args), "code": _CODE_DIGEST,
        **torch_versions(),
        "numpy": np.__version__,  # computes the accuracies; reads and writes the file
    })


def torch_versions() -> dict:
    """What a result torch computes depends on besides the code, for the disk caches' keys
    (trained runs here, chapter 8's generation counts in scenes/generation.py).

    Returns
    -------
    dict
        ``{"torch": version, "cpu": instruction set}``: torch computes every weight, and
        picks its kernels by the CPU's instruction set, so the same version may sum in
        another order on another machine. Read at each call.
    """
    return {"torch": str(torch.__version__), "cpu": torch.backends.cpu.get_cpu_capability()}


def _cache_folder() -> Path | None:
    """Where trained runs are kept on disk, or None: no disk cache.

    ``train`` in ``$ATTENTION_BOOK_CACHE`` when set; else ``_build/cache/train`` in the
    source checkout this package lives in, which ``make clean`` removes with the rest of
    ``_build``; else None: an installed package has no checkout of its own to write into
    (:func:`attention_book.diskcache.folder`).
    """
    return diskcache.folder("train", __file__)


def _cache_file(args: tuple) -> tuple[Path, str] | None:
    """The cache file of _train's arguments and its key, or None: no disk cache."""
    key = _cache_key(args)
    path = diskcache.cache_file(_cache_folder(), args[0], key)
    return None if path is None else (path, key)


def _run_arrays(run: TinyRun, key: str) -> dict[str, np.ndarray]:
    """A TinyRun as named arrays for ``numpy.savez``: weights and curves as they are (bit
    for bit), the rest as one JSON string, so that loading runs no pickle.

    The torch model is not stored: it is the last checkpoint's state (see _run_from_file).
    """
    meta = dict(key=key, task=run.task, seed=run.seed, config=run.config,
                accuracy=run.accuracy, train_seconds=run.train_seconds, steps=run.steps,
                history=list(run.history), state=list(run.checkpoints[0][1]))
    arrays = {"meta": np.array(json.dumps(meta)), "example": run.example}
    arrays.update({f"history/{name}": v for name, v in run.history.items()})
    for i, (_, state) in enumerate(run.checkpoints):
        arrays.update({f"checkpoint{i}/{name}": v for name, v in state.items()})
    return arrays


def _run_from_file(data, key: str) -> TinyRun | None:
    """The TinyRun _run_arrays stored (data: an open npz file); None if made for another key."""
    meta = json.loads(str(data["meta"][()]))
    if meta["key"] != key:  # a name collision, or a file copied from elsewhere
        return None
    checkpoints = [(step, {name: data[f"checkpoint{i}/{name}"] for name in meta["state"]})
                   for i, step in enumerate(meta["steps"])]
    # the trained model's weights are the last checkpoint (taken after the last update)
    model = _new_model(meta["config"])
    model.load_state_dict({k: torch.from_numpy(v) for k, v in checkpoints[-1][1].items()})
    return TinyRun(
        task=meta["task"], seed=meta["seed"], config=meta["config"], model=model.eval(),
        history={name: data[f"history/{name}"] for name in meta["history"]},
        accuracy=meta["accuracy"], train_seconds=meta["train_seconds"],
        checkpoints=checkpoints, example=data["example"],
    )


def _load(path: Path, key: str) -> TinyRun | None:
    """The run cached in path, or None when there is none or it cannot be used."""
    run = diskcache.load(path, lambda data: _run_from_file(data, key))
    if run is not None:
        _log.info("loaded %s (seed %d) from %s", run.task, run.seed, path)
    return run


def _save(run: TinyRun, path: Path, key: str) -> None:
    """Write the run to path atomically; on failure (read-only or full disk) keep going
    (the run is still returned, and memoised in the process)."""
    if diskcache.save(path, _run_arrays(run, key)):
        _log.info("saved %s (seed %d) to %s", run.task, run.seed, path)


def _load_or_train(*args) -> TinyRun:
    """_train(*args), from the disk cache when it holds this run for this code."""
    where = _cache_file(args)
    if where is None:
        return _train(*args)
    path, key = where

    def train_and_save() -> TinyRun:
        run = _train(*args)
        _save(run, path, key)
        return run

    return diskcache.load_or_make(path, lambda: _load(path, key), train_and_save)


# in-process memo on top of the disk cache: the same arguments give the same object
_cached_train = functools.lru_cache(maxsize=None)(_load_or_train)


def _arguments(task, seed, n_layers, n_heads, period, steps, checkpoints,
               positions) -> tuple:
    """train_tiny's arguments checked and filled in: _train's, and the caches' key."""
    spec = _task(task)
    seed = whole_number(seed, "seed", 0)
    n_layers = spec.n_layers if n_layers is None else whole_number(n_layers, "n_layers", 1, 8)
    n_heads = spec.n_heads if n_heads is None else whole_number(n_heads, "n_heads", 1)
    if D_MODEL % n_heads:
        raise ValueError(f"n_heads={n_heads} does not divide d={D_MODEL}: each head gets "
                         f"d / n_heads columns")
    period = _period(task, period)
    steps = spec.steps if steps is None else whole_number(steps, "steps", 1)
    if not isinstance(positions, (bool, np.bool_)):
        raise ValueError(f"positions must be True or False, got {positions!r}")
    return (task, seed, n_layers, n_heads, period, steps,
            _checkpoint_steps(checkpoints, steps), bool(positions))


def train_tiny(task: str, seed: int = 0, *, n_layers: int | None = None,
               n_heads: int | None = None, period: int | None = None,
               steps: int | None = None, checkpoints=N_CHECKPOINTS,
               positions: bool = True, cache: bool = True) -> TinyRun:
    """Train a tiny transformer on a task, from scratch, deterministically.

    Results are kept for the life of the process: the same arguments (defaults filled
    in) return the same TinyRun object, so the chapter, its lab and the tests pay once.
    :func:`clear_cache` forgets them.

    They are also kept on disk, so that the next process (another notebook kernel, the
    tests) loads the run instead of training it again: equal to a fresh training bit for
    bit (weights at every checkpoint, curves, the torch model; ``train_seconds`` is the
    time the stored training took). The folder is ``$ATTENTION_BOOK_CACHE/train`` if set, else
    ``_build/cache/train`` of the source checkout the package lives in (``make clean``
    removes it); an installed package outside a checkout keeps runs in memory only. A file
    is used only for the same arguments, the same training code (the source of this module
    and of ``causal_mask``'s), the same torch, numpy and CPU instruction set; any other
    file, or a damaged one, is trained again and overwritten.

    Parameters
    ----------
    task : {"reverse", "roll", "induction"}
    seed : int
        Seeds the initial weights and the training sequences (>= 0).
    n_layers : int, optional
        Default 1 ("reverse", "roll") or 2 ("induction").
    n_heads : int, optional
        Heads per layer, dividing d = 64; default 2 ("reverse", "roll") or 1
        ("induction").
    period : int, optional
        Induction only: train on one fixed period (2..23) instead of a random 6..12.
        The model then solves the task with heads that look a fixed distance back,
        not with an induction circuit.
    steps : int, optional
        Optimiser steps; default 60 ("reverse", "roll") or 150 ("induction").
    checkpoints : int or sequence of int
        How many evenly spaced states to keep from step 0 to the end (>= 2), or the
        steps themselves (the last step is always added).
    positions : bool
        False trains without position embeddings: the position table stays zero, so
        the model cannot tell positions apart (chapter 5: it is then permutation
        equivariant).
    cache : bool
        False trains afresh even when the run is cached, and keeps the result neither in
        memory nor on disk (to time a training, or to check that it is deterministic).

    Returns
    -------
    TinyRun
    """
    args = _arguments(task, seed, n_layers, n_heads, period, steps, checkpoints, positions)
    if not isinstance(cache, (bool, np.bool_)):
        raise ValueError(f"cache must be True or False, got {cache!r}")
    return (_cached_train if cache else _train)(*args)


def clear_cache() -> None:
    """Forget every run kept in this process (the next :func:`train_tiny` call loads it
    from the disk cache, or trains it again)."""
    _cached_train.cache_clear()
