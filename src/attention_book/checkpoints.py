"""Chapter 8's checkpoint codec: the form ``training-checkpoints.js`` stores the tiny models'
weights in, and what a reader's browser decodes from it (the reference layer: the scenes run
the very weights the page runs, :func:`page_checkpoints`, and :mod:`attention_book.web_export`
writes the file). Each matrix is stored as its change from the previous checkpoint in
:data:`TRAINING_BITS` bits with a scale per :data:`TRAINING_GROUP` numbers of a row.
"""

from __future__ import annotations

import base64

import numpy as np

__all__ = ["TRAINING_BITS", "TRAINING_GROUP", "quantize_groups", "pack_bits", "encode_checkpoints",
           "page_checkpoints"]


def _b64(a: np.ndarray) -> str:
    """Base64 of ``a``'s numbers in C order, little-endian (the file's tensors)."""
    return base64.b64encode(np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"),
                                                           copy=False).tobytes()).decode("ascii")


#: Bits of each stored change of a weight between two checkpoints (the first checkpoint: 8).
TRAINING_BITS = 5
#: Numbers of a row that share one scale in ``training-checkpoints.js``.
TRAINING_GROUP = 64


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


def encode_checkpoints(checkpoints, bits: int) -> tuple[list, list]:
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
                entry[name] = {"shape": list(w.shape), "f32": _b64(w)}
                now[name] = w.copy()
                continue
            n_bits = 8 if previous is None else bits
            base = np.zeros_like(w) if previous is None else previous[name]
            q, r = quantize_groups(w - base, n_bits)  # (rows, cols), (rows, cols / group)
            step = (q.astype(np.float32).reshape(*r.shape, -1) * r[:, :, None]).reshape(w.shape)
            now[name] = (base + step).astype(np.float32)  # float32, as the browser adds
            entry[name] = {"shape": list(w.shape), "bits": n_bits, "delta": previous is not None,
                           "q": base64.b64encode(pack_bits(q, n_bits)).decode("ascii"),
                           "scale": _b64(r)}
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
    return list(zip(run.steps, encode_checkpoints(run.checkpoints, bits)[1]))
