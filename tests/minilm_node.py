"""minilm.js (``web/src/shared/minilm.js``) run in Node.js on a weights file that
:func:`attention_book.web_export.export_browser_weights` wrote: the tests' and benchmarks'
harness (it was ``web_export.run_in_node``)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from attention_book.web_export import MINILM_JS

#: A Node.js script: minilm.js on a weights file and a list of texts (tests, benchmarks).
NODE_RUNNER = r"""
import fs from "node:fs";
import {createRequire} from "node:module";
import {pathToFileURL} from "node:url";
const require = createRequire(import.meta.url);
const [minilmPath, weightsPath, requestPath, outPath] = process.argv.slice(2);
const request = JSON.parse(fs.readFileSync(requestPath, "utf-8"));
const minilm = await import(pathToFileURL(minilmPath).href);  // an ES module
const ms = () => Number(process.hrtime.bigint()) / 1e6;
let t = ms();
require(weightsPath);  // a classic script: sets globalThis.AttentionBook.minilmWeights
const weights = globalThis.AttentionBook.minilmWeights;
const timing = {parse_ms: ms() - t};
t = ms();
const model = new minilm.Model(weights);  // config and vocabulary
if (request.mode === "forward") model.prepare();  // base64 and dequantisation
timing.decode_ms = ms() - t;
const out = fs.openSync(outPath, "w");
const results = [];
for (const text of request.texts) {
  try {
    if (request.mode === "encode") {
      const enc = model.tokenizer.encode(text);
      results.push({tokens: enc.tokens, ids: Array.from(enc.ids), offsets: enc.offsets});
      continue;
    }
    const enc = model.tokenize(text, {maxTokens: request.maxTokens, cut: request.cut});
    if (request.mode === "tokenize") {
      results.push({tokens: enc.tokens, ids: Array.from(enc.ids), offsets: enc.offsets,
                    kept: enc.kept, total: enc.total, text: enc.text});
      continue;
    }
    const times = [];
    let run;
    for (let r = 0; r < (request.repeats || 1); r++) {
      t = ms();
      run = model.forward(enc.ids);
      times.push(ms() - t);
    }
    fs.writeSync(out, new Uint8Array(run.attention.buffer));
    if (request.hidden) fs.writeSync(out, new Uint8Array(run.hidden.buffer));
    fs.writeSync(out, new Uint8Array(run.valueNorms.buffer));
    results.push({tokens: enc.tokens, ids: Array.from(enc.ids), offsets: enc.offsets,
                  T: run.T, kept: enc.kept, total: enc.total, text: enc.text,
                  forward_ms: times});
  } catch (error) {
    if (error.name !== "MiniLMError") throw error;
    results.push({error: error.code, message: error.message});
  }
}
fs.closeSync(out);
process.stdout.write(JSON.stringify({timing, results, dtype: weights.dtype}));
"""


def run_in_node(weights_js, texts, *, mode: str = "forward", max_tokens: int | None = None,
                cut: bool = False, hidden: bool = False, repeats: int = 1,
                node: str = "node", workdir=None) -> dict:
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
    node : str
        The Node.js executable.
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
    import subprocess
    import tempfile

    if mode not in ("forward", "tokenize", "encode"):
        raise ValueError(f"mode must be 'forward', 'tokenize' or 'encode', got {mode!r}")
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        tmp = Path(tmp)
        (tmp / "runner.mjs").write_text(NODE_RUNNER, "utf-8")
        (tmp / "request.json").write_text(json.dumps({
            "texts": list(texts), "mode": mode, "maxTokens": max_tokens, "cut": cut,
            "hidden": hidden, "repeats": repeats}), "utf-8")
        done = subprocess.run(
            [node, str(tmp / "runner.mjs"), str(MINILM_JS), str(Path(weights_js).resolve()),
             str(tmp / "request.json"), str(tmp / "out.bin")],
            capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"node failed ({done.returncode}): {done.stderr[-2000:]}")
        answer = json.loads(done.stdout)
        data = np.fromfile(tmp / "out.bin", dtype="<f4")
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
