"""Chapter 8's two tiny transformers for the reader's browser: ``training-checkpoints.js``.

All 26 checkpoints of both runs (:func:`training_script`, :func:`write_training_script`),
each matrix stored as its change from the previous checkpoint in 5 bits with a scale per
64 numbers (4.25 MB), and the loss, accuracy and head-score curves the lab draws;
``web/src/labs/training.js`` decodes them (and so does ``tests/training_file.py``, the tests'
reader), and :func:`page_checkpoints` gives the generation lab the very weights the page runs.
"""

from __future__ import annotations

import base64

import numpy as np

from .minilm import b64, classic_script, folder_checked

__all__ = ["TRAINING_BITS", "TRAINING_GROUP", "quantize_groups", "pack_bits",
           "page_checkpoints", "training_data", "training_script", "write_training_script"]

#: Bits of each stored change of a weight between two checkpoints (the first checkpoint: 8).
TRAINING_BITS = 5
#: Numbers of a row that share one scale in ``training-checkpoints.js``.
TRAINING_GROUP = 64
TRAINING_FORMAT = 1


def quantize_groups(w, bits: int, group: int = TRAINING_GROUP) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric ``bits``-bit quantisation with one scale per run of ``group`` numbers of a row.

    Parameters
    ----------
    w : array_like of float, shape (rows, cols)
        cols a multiple of ``group``.
    bits : int
        2..8: the levels are ``-L..L`` with ``L = 2 ** (bits - 1) - 1``.
    group : int

    Returns
    -------
    q : numpy.ndarray of int8, shape (rows, cols)
        ``round(w[i, j] / r[i, j // group])`` in -L..L.
    r : numpy.ndarray of float32, shape (rows, cols // group)
        ``max |w|`` of the run over L (1 for an all-zero run). ``q * r`` (in float32) is
        within ``r / 2`` of w.
    """
    w = np.asarray(w, dtype=np.float32)
    if not isinstance(bits, (int, np.integer)) or not 2 <= bits <= 8:
        raise ValueError(f"bits must be a whole number 2..8, got {bits!r}")
    if w.ndim != 2 or w.size == 0 or w.shape[1] % group:
        raise ValueError(f"w must be a non-empty matrix (rows, cols) with cols a multiple of "
                         f"{group}, got shape {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("w holds NaN or infinity: it cannot be quantised")
    rows, cols = w.shape
    level = 2 ** (bits - 1) - 1
    runs = w.reshape(rows, cols // group, group)  # (rows, cols) -> (rows, n_groups, group)
    r = (np.abs(runs).max(axis=2) / np.float32(level)).astype(np.float32)  # (rows, n_groups)
    r[r == 0] = 1.0  # an all-zero run (a change that is exactly nothing)
    q = np.clip(np.rint(runs / r[:, :, None]), -level, level).astype(np.int8)
    return q.reshape(rows, cols), r


def pack_bits(q: np.ndarray, bits: int) -> bytes:
    """Levels -L..L as unsigned ``q + L``, ``bits`` bits each, first number in the lowest bits."""
    level = 2 ** (bits - 1) - 1
    u = (q.ravel().astype(np.int64) + level).astype(np.uint8)  # (n,) in 0..2L
    stream = np.unpackbits(u[:, None], axis=1, bitorder="little")[:, :bits]  # (n, bits)
    return np.packbits(stream.ravel(), bitorder="little").tobytes()


def _encode_checkpoints(checkpoints, bits: int) -> tuple[list, list]:
    """Every checkpoint's tensors in the file's form, and what a reader decodes from them.

    A matrix (rows, cols) is stored at the first checkpoint as 8-bit levels of itself and at
    every later one as ``bits``-bit levels of its change from the previous checkpoint AS
    DECODED (so rounding errors do not add up along the checkpoints): ``w_c = w_{c-1} +
    q * r`` in float32. Vectors (biases, LayerNorms: 3 % of the numbers) are stored
    as float32, exactly.
    """
    stored, decoded, previous = [], [], None
    for _, state in checkpoints:
        entry, now = {}, {}
        for name, value in state.items():
            w = np.asarray(value, dtype=np.float32)
            if w.ndim == 1:
                entry[name] = {"shape": list(w.shape), "f32": b64(w)}
                now[name] = w.copy()
                continue
            n_bits = 8 if previous is None else bits
            base = np.zeros_like(w) if previous is None else previous[name]
            q, r = quantize_groups(w - base, n_bits)  # (rows, cols), (rows, cols / group)
            step = (q.astype(np.float32).reshape(*r.shape, -1) * r[:, :, None]).reshape(w.shape)
            now[name] = (base + step).astype(np.float32)  # float32, as the browser adds
            entry[name] = {"shape": list(w.shape), "bits": n_bits, "delta": previous is not None,
                           "q": base64.b64encode(pack_bits(q, n_bits)).decode("ascii"),
                           "scale": b64(r)}
        stored.append(entry)
        decoded.append(now)
        previous = now
    return stored, decoded


def page_checkpoints(run, bits: int = TRAINING_BITS) -> list:
    """A run's checkpoints as a reader's browser decodes them from ``training-checkpoints.js``.

    Parameters
    ----------
    run : TinyRun
    bits : int
        Bits per change between checkpoints (the file's).

    Returns
    -------
    list of (int, dict of numpy.ndarray)
        (step, float32 state), the form of ``TinyRun.checkpoints``; equal, array for array,
        to what the file decodes to (tests/test_web_training.py).
    """
    return list(zip(run.steps, _encode_checkpoints(run.checkpoints, bits)[1]))


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
        :func:`_encode_checkpoints`).
    """
    from ..scenes.training import TRAINING_TASKS, training_run  # torch: reference layer
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
        stored, _ = _encode_checkpoints(run.checkpoints, bits)
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
