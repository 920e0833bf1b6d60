"""Chapter 8's ``training-checkpoints.js`` read back in Python, as
``web/src/labs/training.js`` decodes it: the tests' reader of the page's file
(``attention_book.web_export.training`` writes it; nothing in the book reads it in Python)."""

from __future__ import annotations

import base64
import json

import numpy as np


def unpack_bits(data: bytes, bits: int, n: int) -> np.ndarray:
    """The inverse of ``web_export.training.pack_bits``: int8 levels (n,)."""
    level = 2 ** (bits - 1) - 1
    stream = np.unpackbits(np.frombuffer(data, np.uint8), bitorder="little")[:n * bits]
    u = np.packbits(stream.reshape(n, bits), axis=1, bitorder="little")[:, 0]  # (n,)
    return (u.astype(np.int16) - level).astype(np.int8)


def read_training_script(text: str) -> dict:
    """The data inside a ``training-checkpoints.js`` text (``web_export.training_script``)."""
    start = text.index("\n{") + 1
    return json.loads(text[start:text.rindex("});") + 1])


def decode_training_data(data: dict) -> dict:
    """What a reader's browser decodes: each task's checkpoints as float32 state dicts.

    Parameters
    ----------
    data : dict
        ``web_export.training_data``'s result (or :func:`read_training_script`'s).

    Returns
    -------
    dict of str to list of (int, dict of numpy.ndarray)
        ``{task: [(step, state), ...]}``, the form of ``TinyRun.checkpoints``.
    """
    out = {}
    for task, spec in data["tasks"].items():
        checkpoints, previous = [], None
        for step, entry in zip(spec["steps"], spec["checkpoints"]):
            now = {}
            for name, t in entry.items():
                shape = tuple(t["shape"])
                if "f32" in t:
                    raw = base64.b64decode(t["f32"])
                    now[name] = np.frombuffer(raw, "<f4").reshape(shape).copy()  # writable
                    continue
                q = unpack_bits(base64.b64decode(t["q"]), t["bits"], int(np.prod(shape)))
                r = np.frombuffer(base64.b64decode(t["scale"]), "<f4").reshape(shape[0], -1)
                step_ = (q.astype(np.float32).reshape(*r.shape, -1) * r[:, :, None]).reshape(shape)
                base = previous[name] if t["delta"] else np.zeros(shape, np.float32)
                now[name] = (base + step_).astype(np.float32)
            checkpoints.append((step, now))
            previous = now
        out[task] = checkpoints
    return out
