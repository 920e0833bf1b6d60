"""Chapter 8's lab: a tiny transformer's heads at every checkpoint of its training.

:func:`training_state` is the pure state function: a task, a checkpoint (0 = untrained,
25 = trained) and the reader's input give each head's attention map (the book's numpy
blocks), the model's output, the loss curve and the head scores over training. The runs
come from the memoised ``train_tiny`` (imported lazily: importing the scenes does not
import torch); scores per checkpoint (``TinyRun.score_history``) and maps per input are
cached, so moving the slider never retrains or rescans.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

from .._validate import whole_number
from .core import HasTokens, Note, Scene, choice, slider, text, when

__all__ = ["TRAINING_TASKS", "TRAINING_CHECKPOINTS", "REVERSE_INPUTS", "INDUCTION_INPUTS",
           "training_run", "read_symbols", "TrainingState", "training_state"]

#: The tasks the lab offers (their default models, as in :func:`train_tiny`).
TRAINING_TASKS = ("reverse", "induction")
#: Saved checkpoints per run (train_tiny's default): index 0 is step 0, the last the end.
TRAINING_CHECKPOINTS = 26
#: The lab's suggested reversal inputs: digits of pi, 0..7 in order, one symbol eight times.
REVERSE_INPUTS = ("3 1 4 1 5 9 2 6", "0 1 2 3 4 5 6 7", "7 7 7 7 7 7 7 7")
#: The lab's suggested induction inputs: the run's probe (period 7), period 4 (shorter than any
#: period of training, 6..12), and 24 distinct symbols (nothing repeats, nothing to copy).
INDUCTION_INPUTS = (
    " ".join(["31 29 28 3 10 4 12"] * 3 + ["31 29 28"]),
    " ".join(["5 17 23 8"] * 6),
    "28 29 3 17 30 25 12 27 10 20 31 0 23 15 11 13 8 9 18 6 1 2 26 16",
)
_SYMBOL = re.compile(r"[+-]?\d+")


def training_run(task: str):
    """The task's default run (``train_tiny(task)``: trained once per process)."""
    from ..training import train_tiny  # torch only when a training lab is shown

    if task not in TRAINING_TASKS:
        raise ValueError(f"task must be one of {list(TRAINING_TASKS)}, got {task!r}")
    return train_tiny(task)


@functools.lru_cache(maxsize=512)
def _forward(task: str, tokens: tuple, step: int) -> tuple:
    """(attention (L, h, s, s), predicted (s,)) of one input at one checkpoint."""
    logits, weights = training_run(task).forward(np.array(tokens, dtype=np.int64), step)
    return weights, logits.argmax(axis=-1)


def read_symbols(text) -> tuple[tuple, list]:
    """Reader-typed symbols ("3 1 4 1 5 9 2 6", spaces or commas) and notes; never raises.

    Empty symbols and an error note when the text is empty or a word is not a whole
    number (the model checks range and length).
    """
    words = str(text).replace(",", " ").split() if isinstance(text, str) else []
    if not words:
        return (), [Note("error", "no symbols: type whole numbers separated by spaces, "
                                  "e.g. 3 1 4 1 5 9 2 6")]
    bad = [w for w in words if not _SYMBOL.fullmatch(w)]
    if bad:
        return (), [Note("error", f"{bad[0]!r} is not a symbol: type whole numbers "
                                  f"separated by spaces, e.g. 3 1 4 1 5 9 2 6")]
    return tuple(int(w) for w in words), []


@dataclass(frozen=True, eq=False)
class TrainingState(HasTokens):
    """Everything chapter 8's lab shows for one (task, checkpoint, input); n_heads = L h."""

    task: str
    vocab: int                # the alphabet size V; a uniform guess has loss ln V
    checkpoint: int           # the checkpoint's index, 0..25
    step: int                 # its optimiser step
    steps: int                # the run's last step
    tokens: tuple             # (s,) int: the input (empty when it is invalid: see notes)
    heads: tuple              # (n_heads,) names, "layer 0, head 1", layers' heads in order
    weights: np.ndarray       # (n_heads, s, s) the heads' weights at this step (TinyRun.attention)
    predicted: tuple          # (s,) int: the model's output at each position
    right: tuple              # (s,) whether each output is right (None: the input cannot tell)
    input_scores: tuple       # (n_heads,) each head's headline score on this input, or None
    loss_steps: np.ndarray    # (steps,) every step
    loss: np.ndarray          # (steps,) the loss of each step's fresh batch
    score_steps: np.ndarray   # (26,) the checkpoints' steps
    score_curves: tuple       # n_heads arrays (26,): each head's held-out headline score at each
    score_names: tuple        # (n_heads,) "anti-diagonal", "previous-token" or "induction"
    # this step's loss and accuracy on its fresh batch (before learning from it); at the
    # end, the last step's loss and the held-out accuracy
    loss_now: float
    accuracy_now: float
    notes: tuple              # of Note


def training_state(task: str = "reverse", checkpoint: int = TRAINING_CHECKPOINTS - 1,
                   reverse_input: str = REVERSE_INPUTS[0],
                   induction_input: str = INDUCTION_INPUTS[0]) -> TrainingState:
    """A task's run at one checkpoint, on the reader's input.

    Pure (the runs are deterministic and memoised). Bad input never raises: it gives no
    maps and an error note (the model's own message for a bad symbol or length).

    Parameters
    ----------
    task : {"reverse", "induction"}
    checkpoint : int
        0..25, the index of a saved checkpoint (0 = step 0, untrained; 25 = the end).
    reverse_input, induction_input : str
        Symbols separated by spaces; only the task's own is read: 8 symbols 0..9 for
        "reverse", 1..24 symbols 0..31 for "induction".
    """
    # imported here: attention_book.training imports torch
    from ..training import HEADLINE_SCORES, correct_outputs, headline_scores

    run = training_run(task)
    checkpoint = whole_number(checkpoint, "checkpoint", 0, len(run.steps) - 1)
    step = run.steps[checkpoint]
    L, h = run.config["n_layers"], run.config["n_heads"]
    tokens, notes = read_symbols(reverse_input if task == "reverse" else induction_input)
    weights, predicted = np.zeros((L, h, 0, 0)), ()
    if tokens:
        try:
            weights, predicted = _forward(task, tokens, step)
        except (ValueError, OverflowError) as err:  # the model's message: range, length
            notes.append(Note("error", str(err) if isinstance(err, ValueError) else
                              f"symbols must be 0..{run.config['vocab'] - 1}"))
            tokens = ()
    right = correct_outputs(task, tokens, predicted)
    if task == "induction" and tokens and all(r is None for r in right):
        notes.append(Note("info", "no symbol occurs twice: nothing to copy, so no output "
                                  "is predictable"))
    steps, history = run.score_history()
    keys = HEADLINE_SCORES[task]
    curves = tuple(history[key].reshape(len(steps), -1)[:, i]  # (26, L h) -> (26,)
                   for i, key in enumerate(keys))  # n_heads of them
    last = step == run.steps[-1]
    return TrainingState(
        task=task, vocab=run.config["vocab"], checkpoint=checkpoint, step=step,
        steps=run.steps[-1], tokens=tokens,
        heads=tuple(f"layer {i}, head {j}" for i in range(L) for j in range(h)),
        weights=weights.reshape(L * h, len(tokens), len(tokens)),  # (L, h, s, s) -> (L h, s, s)
        predicted=tuple(int(p) for p in predicted), right=right,
        input_scores=(headline_scores(task, weights, tokens) if tokens
                      else (None,) * (L * h)),
        loss_steps=run.history["steps"], loss=run.history["loss"],
        score_steps=steps, score_curves=curves,
        score_names=tuple(key.replace("_", "-") for key in keys),
        loss_now=float(run.history["loss"][min(step, len(run.history["loss"]) - 1)]),
        accuracy_now=float(run.accuracy if last else run.history["accuracy"][step]),
        notes=tuple(notes))


SCENE = Scene(
    name="training",
    title="Training explorer: the heads at every checkpoint",
    controls=(
        choice("task", "task", [("reversal", "reverse"), ("induction", "induction")],
               "reverse"),
        slider("checkpoint", "checkpoint (0 = untrained)", range(TRAINING_CHECKPOINTS),
               TRAINING_CHECKPOINTS - 1),
        text("reverse_input", "reversal input (8 of 0..9)", REVERSE_INPUTS[0],
             suggestions=REVERSE_INPUTS, placeholder="8 symbols 0..9, e.g. 3 1 4 1 5 9 2 6",
             active_when=when("task", "reverse"), hint="used by the reversal task"),
        text("induction_input", "induction input (up to 24 of 0..31)", INDUCTION_INPUTS[0],
             suggestions=INDUCTION_INPUTS, placeholder="up to 24 symbols 0..31",
             active_when=when("task", "induction"), hint="used by the induction task"),
    ),
    state=training_state, web="training",
    warm=({"task": "induction"}, {"task": "reverse"}),  # both tasks' runs, loaded at once
    suggested=(
        {"task": "reverse", "checkpoint": 0},
        {"task": "reverse", "checkpoint": TRAINING_CHECKPOINTS - 1},
        {"task": "reverse", "reverse_input": REVERSE_INPUTS[2]},
        {"task": "induction", "checkpoint": 6},  # step 36: the heads are forming ...
        {"task": "induction", "checkpoint": 8},  # ... step 48: the loss is below 1
        {"task": "induction", "induction_input": INDUCTION_INPUTS[1]},
        {"task": "induction", "induction_input": INDUCTION_INPUTS[2]},
    ),
)
SCENES = (SCENE,)
