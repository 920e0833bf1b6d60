"""Chapter 8's two tiny transformers for the reader's browser: ``training-checkpoints.js``.

All 26 checkpoints of both runs (:func:`training_script`, :func:`write_training_script`),
each matrix stored as its change from the previous checkpoint in 5 bits with a scale per
64 numbers (4.25 MB), and the loss, accuracy and head-score curves the lab draws;
``web/src/labs/training.js`` decodes them (and so does ``tests/training_file.py``, the tests'
reader); the codec is :mod:`attention_book.checkpoints`, whose :func:`page_checkpoints` gives
the generation lab the very weights the page runs.
"""

from __future__ import annotations

import numpy as np

from ..checkpoints import (TRAINING_BITS, TRAINING_GROUP, encode_checkpoints, pack_bits,
                           page_checkpoints, quantize_groups)
from .minilm import classic_script, folder_checked

# the codec (attention_book.checkpoints) re-exported: the file's form is written here
__all__ = ["TRAINING_BITS", "TRAINING_GROUP", "quantize_groups", "pack_bits",
           "page_checkpoints", "training_data", "training_script", "write_training_script"]

TRAINING_FORMAT = 1


def _floats(values) -> list:
    values = [float(v) for v in np.asarray(values, dtype=np.float64).ravel()]
    if not all(np.isfinite(values)):
        raise ValueError("a curve holds NaN or infinity: JSON cannot carry it")
    return values


def training_data(runs: dict | None = None, bits: int = TRAINING_BITS) -> dict:
    """Chapter 8's two trained runs as the data ``web/training.js`` computes from.

    Parameters
    ----------
    runs : dict of str to TinyRun, optional
        ``{"reverse": run, "induction": run}``; default the lab's memoised runs
        (``scenes.training.training_run``: trained once per process, about 20 s).
    bits : int
        Bits of each change between two checkpoints (2..8).

    Returns
    -------
    dict
        JSON-able: ``format``, ``bits``, ``group`` and ``tasks``, each task's ``config``
        (vocab, length, causal, d, n_layers, n_heads, eps), checkpoint ``steps`` (26),
        ``loss`` and ``accuracy`` of every step, the ``held_out`` accuracy, its head
        names, ``score_names`` and ``score_curves`` (n_heads lists of 26 held-out headline
        scores, as ``training_state`` reads them) and ``checkpoints`` (see
        :func:`attention_book.checkpoints.encode_checkpoints`).
    """
    from ..scenes.training import TRAINING_TASKS, training_run  # the runs, trained once a process
    from ..training import HEADLINE_SCORES

    runs = {task: training_run(task) for task in TRAINING_TASKS} if runs is None else runs
    tasks = {}
    for task, run in runs.items():
        if task not in HEADLINE_SCORES:
            raise ValueError(f"runs must be of the tasks {list(HEADLINE_SCORES)}, got {task!r}")
        L, h = run.config["n_layers"], run.config["n_heads"]
        steps, history = run.score_history()
        curves = [history[key].reshape(len(steps), -1)[:, i]  # (26, L h) -> (26,)
                  for i, key in enumerate(HEADLINE_SCORES[task])]
        stored, _ = encode_checkpoints(run.checkpoints, bits)
        tasks[task] = {
            "config": {"vocab": run.config["vocab"], "length": run.config["length"],
                       "causal": bool(run.config["causal"]), "d": run.config["d"],
                       "n_layers": L, "n_heads": h, "eps": float(run.model.norm.eps)},
            "steps": [int(s) for s in run.steps],
            "loss": _floats(run.history["loss"]),
            "accuracy": _floats(run.history["accuracy"]),
            "held_out": float(run.accuracy),
            "heads": [f"layer {i}, head {j}" for i in range(L) for j in range(h)],
            "score_names": [key.replace("_", "-") for key in HEADLINE_SCORES[task]],
            "score_curves": [_floats(c) for c in curves],
            "checkpoints": stored,
        }
    return {"format": TRAINING_FORMAT, "bits": bits, "group": TRAINING_GROUP, "tasks": tasks}


def training_script(runs: dict | None = None, bits: int = TRAINING_BITS,
                    data: dict | None = None) -> str:
    """``training-checkpoints.js``: :func:`training_data` as one classic script.

    It sets ``globalThis.AttentionBook.trainingData`` in a browser and is
    ``module.exports`` in Node. The same runs give the same text, byte for byte.

    About the numbers (chapter 8's runs, measured by ``tests/test_web_training.py`` and
    ``benchmarks/browser_training.py``): 2 x 26 checkpoints, 4.07 million weights. As
    float32 in base64 they would take 21.7 MB, float16 11.1 MB, int8 with a scale per 64
    numbers 6.1 MB; the changes between checkpoints, quantised with the previous decoded
    checkpoint as base, take 3.5 MB at 4 bits, 4.2 MB at 5 bits (the default) and 4.8 MB
    at 6 bits. Against the float32 model, over 400 inputs at all 52 checkpoints, the
    attention weights' largest error is 0.040 / 0.013 / 0.007 (4 / 5 / 6 bits; mean
    1e-4 / 5e-5 / 3e-5; int8: 0.037, mean 2.5e-4), and the predicted symbol differs
    at 0.37 / 0.19 / 0.11 % of positions (int8: 0.57 %), all at near-ties of barely
    trained checkpoints. The last checkpoint of each run is within 1e-4 (the one-cycle
    schedule ends with a learning rate near 0, so its last change is tiny).

    Parameters
    ----------
    runs : dict of str to TinyRun, optional
        As :func:`training_data`.
    bits : int
    data : dict, optional
        :func:`training_data`'s result, if already computed (then runs and bits are unused).

    Returns
    -------
    str
        ASCII.
    """
    data = training_data(runs, bits) if data is None else data
    return classic_script("trainingData", data, (
        "training-checkpoints.js: chapter 8's two tiny transformers at their 26 checkpoints"
        f" ({data['bits']}-bit changes between checkpoints), for training.js; written by "
        "attention_book.web_export.training_script."))


def write_training_script(path, runs: dict | None = None, bits: int = TRAINING_BITS) -> dict:
    """Write :func:`training_script` to ``path`` (its folder must exist).

    Returns
    -------
    dict
        ``bytes`` (the file's size), ``bits``.
    """
    path = folder_checked(path)
    text = training_script(runs, bits)
    path.write_text(text, "ascii")
    return {"bytes": len(text), "bits": bits}
