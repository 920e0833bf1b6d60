"""all-MiniLM-L6-v2 for the reader's browser: the weights file ``minilm-weights.js``.

The HTML book runs the model with ``web/src/shared/minilm.js``. Pages opened as ``file://``
refuse ``fetch()`` and ES modules, so the weights reach the page as a classic script,
``minilm-weights.js``, that sets ``AttentionBook.minilmWeights = {format, config,
tokenizer, dtype, tensors}``; :func:`export_browser_weights` writes it.
Each tensor is base64 of its numbers in C order, little-endian:

``"int8"``
    One byte a number, with a float32 scale for each run of 64 numbers of a row and one
    a column, ``w[i, j] = q[i, j] * r[i, j // 64] * c[j]`` (:func:`quantize_int8`). Rows
    are output channels: a linear layer is stored as ``nn.Linear`` keeps it,
    W^T:(out, in), and an embedding table's row is one token's (or position's) vector.
``"float16"``
    IEEE half precision.
``"mixed"``
    float16 for the encoder layers, int8 for the embedding tables (three quarters of the
    bytes of all-float16, since the word table is half the model).
``"float32"``
    The weights as they are: for the parity tests (about 120 MB).

Biases and LayerNorm parameters (0.1 % of the numbers) are always float32. BERT's pooler is
left out: neither the book nor sentence-transformers uses it. ``tests/minilm_node.py`` runs
minilm.js on such a file in Node.js (tests, benchmarks).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np

from ..pretrained import MiniLM

__all__ = ["DTYPES", "INT8_GROUP", "quantize_int8", "b64", "tokenizer_spec", "model_config",
           "folder_checked", "classic_script", "export_browser_weights"]

#: The storage formats :func:`export_browser_weights` writes.
DTYPES = ("int8", "float16", "mixed", "float32")
FORMAT = 1
#: Numbers of a row that share one int8 scale.
INT8_GROUP = 64


def quantize_int8(w, alpha: float = 0.5, group: int = 64
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Symmetric int8 quantisation with a scale per column and per group of a row.

    A column that holds large numbers (BERT's embeddings and layers have a few such
    dimensions) would set its rows' scales and flatten the rest of each row to a few
    levels. So the columns are first evened out, as SmoothQuant does: divide column j by
    ``c[j] = max_i |w[i, j]| ** alpha``; then each run of ``group`` numbers of a row gets
    its own scale ``r = max |w'| / 127`` over the run. The attention maps' largest loss,
    measured in Node (the largest absolute difference from the float32 model): on 20
    gallery sentences 0.059 with a scale per row alone and 0.031 with the columns evened
    out (alpha = 0.5; the layers alone quantised: 0.037, 0.034, 0.053 and 0.071 at
    alpha 0.25, 0.5, 0.75 and 1); over 211 sentences
    (benchmarks/browser_minilm.py --parity), whose odd ones ("[MASK] [mask]
    hello[SEP]world") are harder, 0.083 with a scale per row and 0.032 with groups of
    64, whose scales add 6 % to the bytes.

    Parameters
    ----------
    w : array_like of float, shape (rows, cols)
        A weight matrix stored as W^T:(out, in) (one row per output channel) or an
        embedding table (one row per token).
    alpha : float
        How far the columns are evened out, 0 (not at all) .. 1 (fully).
    group : int
        Numbers of a row that share a scale (the last run of a row may be shorter).

    Returns
    -------
    q : numpy.ndarray of int8, shape (rows, cols)
        ``round(w[i, j] / (r[i, j // group] * c[j]))``, in -127..127.
    r : numpy.ndarray of float32, shape (rows, ceil(cols / group))
        Group scales (1 for an all-zero group).
    c : numpy.ndarray of float32, shape (cols,)
        Column scales (1 for an all-zero column). ``q[i, j] * r[i, j // group] * c[j]``
        is within half a step, ``r[i, j // group] c[j] / 2``, of ``w[i, j]``.
    """
    w = np.asarray(w, dtype=np.float32)
    if w.ndim != 2 or w.size == 0:
        raise ValueError(f"w must be a non-empty 2-D matrix (rows, cols), got shape {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("w holds NaN or infinity: it cannot be quantised")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must lie in 0..1, got {alpha}")
    if not isinstance(group, (int, np.integer)) or group < 1:
        raise ValueError(f"group must be a whole number >= 1, got {group!r}")
    rows, cols = w.shape
    column_peak = np.abs(w).max(axis=0)  # (cols,)
    c = np.where(column_peak > 0, column_peak, 1.0).astype(np.float32) ** np.float32(alpha)
    even = w / c  # (rows, cols) / (cols,) -> (rows, cols)
    n_groups = -(-cols // group)
    padded = np.zeros((rows, n_groups * group), np.float32)
    padded[:, :cols] = even
    runs = padded.reshape(rows, n_groups, group)  # (rows, cols) -> (rows, n_groups, group)
    peak = np.abs(runs).max(axis=2)  # (rows, n_groups)
    r = (peak / np.float32(127.0)).astype(np.float32)  # (rows, n_groups)
    r[r == 0] = 1.0  # an all-zero group, or one so small that its step underflows
    q = np.clip(np.rint(runs / r[:, :, None]), -127, 127).astype(np.int8)
    q = q.reshape(rows, n_groups * group)[:, :cols]  # (rows, n_groups, group) -> (rows, cols)
    return np.ascontiguousarray(q), r, c.astype(np.float32)



def b64(a: np.ndarray) -> str:
    """Base64 of ``a``'s numbers in C order, little-endian (the files' tensors)."""
    return base64.b64encode(np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"),
                                                           copy=False).tobytes()).decode("ascii")


def model_config(model: MiniLM) -> dict:
    """The part of ``model``'s configuration that minilm.js reads."""
    return {k: model.config[k] for k in (
        "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
        "max_position_embeddings", "layer_norm_eps", "vocab_size", "hidden_act")}


def folder_checked(path) -> Path:
    """``path`` as a Path; ValueError if its folder does not exist."""
    path = Path(path)
    if not path.parent.is_dir():
        raise ValueError(f"the folder {path.parent} does not exist")
    return path


def classic_script(name: str, data: dict, comment: str) -> str:
    """The text of a data file the pages read: a classic script (which a ``file://`` page
    can load) setting ``globalThis.AttentionBook[name]`` to ``data``, and in Node also
    ``module.exports``; ``comment`` opens it. ASCII; the same data, the same bytes."""
    body = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return (f"/* {comment} */\n"
            "(function (root, data) {\n"
            "  root.AttentionBook = root.AttentionBook || {};\n"
            f"  root.AttentionBook.{name} = data;\n"
            '  if (typeof module === "object" && module && module.exports) { module.exports = data; }\n'
            '})(typeof globalThis !== "undefined" ? globalThis : this,\n'
            f"{body});\n")


def _tensor(w: np.ndarray, dtype: str) -> dict:
    """One tensor in the weights file's form: {shape, dtype, data[, scale]}."""
    w = np.asarray(w, dtype=np.float32)
    if dtype == "int8":
        q, r, c = quantize_int8(w, group=INT8_GROUP)  # (rows, cols), (rows, groups), (cols,)
        return {"shape": list(w.shape), "dtype": "int8", "data": b64(q), "scale": b64(r),
                "group": INT8_GROUP, "col_scale": b64(c)}
    if dtype == "float16":
        half = w.astype(np.float16)
        if not np.isfinite(half).all():
            raise ValueError("a weight overflows float16 (|w| > 65504): store it as int8")
        return {"shape": list(w.shape), "dtype": "float16", "data": b64(half)}
    return {"shape": list(w.shape), "dtype": "float32", "data": b64(w)}


def tokenizer_spec(path: Path) -> dict:
    """What minilm.js's Tokenizer needs from ``tokenizer.json``, checked to be what it
    implements (BertNormalizer lower-casing, BertPreTokenizer, WordPiece, [CLS] A [SEP])."""
    spec = json.loads((path / "tokenizer.json").read_text("utf-8"))
    norm, pre, model = spec["normalizer"], spec["pre_tokenizer"], spec["model"]
    expected = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                "lowercase": True}
    if ({k: norm.get(k) for k in expected} != expected
            or norm.get("strip_accents") not in (None, True)
            or pre.get("type") != "BertPreTokenizer" or model.get("type") != "WordPiece"):
        raise ValueError(
            f"{path / 'tokenizer.json'} is not an uncased BERT WordPiece tokenizer "
            f"(normalizer {norm}, pre_tokenizer {pre.get('type')}, model {model.get('type')}); "
            f"minilm.js implements only that one"
        )
    template = spec["post_processor"]["single"]
    cls, sep = template[0]["SpecialToken"]["id"], template[-1]["SpecialToken"]["id"]
    vocab = [None] * len(model["vocab"])
    for piece, i in model["vocab"].items():
        vocab[i] = piece
    if any(piece is None for piece in vocab):
        raise ValueError("tokenizer.json's vocabulary has gaps in its ids")
    return {
        "vocab": vocab,
        "unk_token": model["unk_token"],
        "cls_token": cls,
        "sep_token": sep,
        "continuing_subword_prefix": model["continuing_subword_prefix"],
        "max_input_chars_per_word": model["max_input_chars_per_word"],
        "special_tokens": [t["content"] for t in spec["added_tokens"]
                           if t["special"] and not t["normalized"]],
    }


def export_browser_weights(path, dtype: str = "int8", model: MiniLM | None = None,
                           tensors: bool = True) -> dict:
    """Write all-MiniLM-L6-v2 as one classic script, ``minilm-weights.js``, for minilm.js.

    Parameters
    ----------
    path : str or pathlib.Path
        The file to write (its folder must exist).
    dtype : {"int8", "float16", "mixed", "float32"}
        How the weight matrices and embedding tables are stored (module docstring).
    model : MiniLM, optional
        Default :meth:`MiniLM.load` (the installed model).
    tensors : bool
        False writes the config and the tokenizer only (0.5 MB): enough for minilm.js's
        ``Model.tokenize``, not for ``forward`` (the tests' tokenizer file).

    Returns
    -------
    dict
        ``bytes`` (the file's size), ``payload_bytes`` (the tensors' bytes before base64),
        ``dtype`` and ``n_numbers`` (numbers stored: 22,564,992, all but the pooler and the
        second token type).
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    path = folder_checked(path)
    model = MiniLM.load() if model is None else model
    layer_dtype = {"mixed": "float16"}.get(dtype, dtype)
    table_dtype = {"mixed": "int8"}.get(dtype, dtype)
    stored = {
        "embeddings.word": _tensor(model.word_embeddings, table_dtype),  # (V, d)
        "embeddings.position": _tensor(model.position_embeddings, table_dtype),  # (P, d)
        "embeddings.token_type": _tensor(model.token_type_embedding, "float32"),  # (d,)
        "embeddings.norm.gamma": _tensor(model.embedding_norm[0], "float32"),  # (d,)
        "embeddings.norm.beta": _tensor(model.embedding_norm[1], "float32"),  # (d,)
    }
    for l, block in enumerate(model.blocks):
        mha, p = block.attention, f"layers.{l}."
        for name, w, b in (("q", mha.W_q, mha.b_q), ("k", mha.W_k, mha.b_k),
                           ("v", mha.W_v, mha.b_v), ("o", mha.W_o, mha.b_o),
                           ("1", block.W_1, block.b_1), ("2", block.W_2, block.b_2)):
            stored[p + "W_" + name] = _tensor(w.T, layer_dtype)  # (in, out).T -> (out, in)
            stored[p + "b_" + name] = _tensor(b, "float32")  # (out,)
        for norm, (gamma, beta) in (("norm1", block.norm1), ("norm2", block.norm2)):
            stored[p + norm + ".gamma"] = _tensor(gamma, "float32")  # (d,)
            stored[p + norm + ".beta"] = _tensor(beta, "float32")  # (d,)
    if not tensors:
        stored = {}
    weights = {
        "format": FORMAT,
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "license": model.license,
        "dtype": dtype,
        "config": model_config(model),
        "tokenizer": tokenizer_spec(model.path),
        "tensors": stored,
    }
    text = classic_script("minilmWeights", weights, (
        "minilm-weights.js: all-MiniLM-L6-v2 (Apache-2.0) for minilm.js, weights as "
        f"{dtype}; written by attention_book.web_export.export_browser_weights."))
    path.write_text(text, "ascii")
    payload = sum(len(t[k]) * 3 // 4 for t in stored.values()
                  for k in ("data", "scale", "col_scale") if k in t)
    return {"bytes": len(text), "payload_bytes": payload, "dtype": dtype,
            "n_numbers": int(sum(np.prod(t["shape"]) for t in stored.values()))}
