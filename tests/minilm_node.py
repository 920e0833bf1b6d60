"""minilm.js (``web/src/shared/minilm.js``) run in Node.js on a weights file that
:func:`attention_book.web_export.export_browser_weights` wrote: the tests' and benchmarks'
harness (it was ``web_export.run_in_node``), through the tests' Node driver
(``tests/js/minilm.mjs``'s ``minilm.run``)."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np

import node_driver


def run_in_node(weights_js, texts, *, mode: str = "forward", max_tokens: int | None = None,
                cut: bool = False, hidden: bool = False, repeats: int = 1,
                workdir=None) -> dict:
    """Run minilm.js in Node.js on ``texts`` with the weights file ``weights_js``.

    Parameters
    ----------
    weights_js : str or pathlib.Path
        A file written by :func:`attention_book.web_export.export_browser_weights`.
    texts : list of str
    mode : {"forward", "tokenize", "encode"}
        ``"forward"``: ``model.tokenize`` then ``model.forward`` on each text.
        ``"tokenize"``: ``model.tokenize`` alone (its limits and ``cut``; no tensors needed).
        ``"encode"``: the tokenizer alone (``Tokenizer.encode``: every token, no limits).
        A refused text comes back as ``{"error": code, "message": ...}``.
    max_tokens : int, optional
        ``maxTokens`` (default the model's 512); ``cut`` keeps the beginning that fits.
    hidden : bool
        Also return the hidden states.
    repeats : int
        Forward passes per text (for timing).
    workdir : str or pathlib.Path, optional
        Where to put the runner's files (default a temporary folder).

    Returns
    -------
    dict
        ``timing`` (``parse_ms``: running the weights script, ``decode_ms``: base64 and
        dequantisation), ``results`` (one dict per text: ``tokens``, ``ids``, ``offsets``,
        ``T`` and, with mode ``"forward"``, ``attention`` (n_layers, h, T, T) float32,
        ``hidden`` (n_layers + 1, T, d), ``value_norms`` (n_layers, h, T): ||f_h(x_j)||,
        ``forward_ms``).
    """
    if mode not in ("forward", "tokenize", "encode"):
        raise ValueError(f"mode must be 'forward', 'tokenize' or 'encode', got {mode!r}")
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        out = Path(tmp) / "out.bin"
        request = {"texts": list(texts), "mode": mode, "maxTokens": max_tokens, "cut": cut,
                   "hidden": hidden, "repeats": repeats}
        answer = node_driver.run("minilm.run", Path(weights_js).resolve(), out, input=request)
        data = np.fromfile(out, dtype="<f4")
    at = 0
    cfg = None
    for result in answer["results"]:
        if "T" not in result or mode != "forward":
            continue
        if cfg is None:
            cfg = _config_of(weights_js)
        L, h, d, T = cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["hidden_size"], result["T"]
        n = L * h * T * T
        result["attention"] = data[at:at + n].reshape(L, h, T, T)  # (L, h, T, T)
        at += n
        if hidden:
            m = (L + 1) * T * d
            result["hidden"] = data[at:at + m].reshape(L + 1, T, d)  # (L + 1, T, d)
            at += m
        result["value_norms"] = data[at:at + L * h * T].reshape(L, h, T)  # (L, h, T)
        at += L * h * T
    return answer


def _config_of(weights_js) -> dict:
    """The config object of a weights file (read from its start, without the tensors)."""
    with open(weights_js, encoding="ascii") as f:
        head = f.read(4096)
    start = head.index('"config":') + len('"config":')
    return json.loads(head[start:head.index("}", start) + 1])
