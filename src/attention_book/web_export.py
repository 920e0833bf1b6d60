"""all-MiniLM-L6-v2 for the reader's browser: the weights file and the tokenizer's tables.

The HTML book runs the model with ``attention_book/web/minilm.js``. Pages
opened as ``file://`` refuse ``fetch()`` and ES modules, so the weights reach the page as
a classic script, ``minilm-weights.js``, that sets ``AttentionBook.minilmWeights =
{format, config, tokenizer, dtype, tensors}``; :func:`export_browser_weights` writes it.
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
left out: neither the book nor sentence-transformers uses it.

The tokenizer's character tables (which code points ``tokenizers`` drops, turns into a
space, pads as CJK, or splits off as punctuation) are measured from the installed
``tokenizers`` over all 1,112,064 code points by :func:`bert_char_tables` and written as
the whole file ``shared/bert-tables.js`` (which ``wordpiece.js``, minilm.js's tokenizer,
imports) by :func:`write_char_tables` (``python -m attention_book.web_export tables``).

Chapter 8's two tiny transformers reach ``attention_book/web/training.js`` the same way, as
``training-checkpoints.js`` (:func:`training_script`, :func:`write_training_script`,
``python -m attention_book.web_export training OUT.js [bits]``): all 26 checkpoints of both
runs, each matrix stored as its change from the previous checkpoint in 5 bits with a scale
per 64 numbers (4.25 MB), and the loss, accuracy and head-score curves the lab draws.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from .pretrained import MiniLM

__all__ = [
    "DTYPES",
    "MINILM_JS",
    "BERT_TABLES_JS",
    "export_browser_weights",
    "quantize_int8",
    "bert_char_tables",
    "char_tables_js",
    "write_char_tables",
    "export_pretrained_gallery",
    "run_in_node",
    "TRAINING_BITS",
    "TRAINING_GROUP",
    "quantize_groups",
    "training_data",
    "training_script",
    "write_training_script",
    "read_training_script",
    "decode_training_data",
    "page_checkpoints",
]

#: The storage formats :func:`export_browser_weights` writes.
DTYPES = ("int8", "float16", "mixed", "float32")
#: The browser's engine (an ES module; its tokenizer is wordpiece.js).
MINILM_JS = Path(__file__).resolve().parent / "web" / "src" / "shared" / "minilm.js"
#: The tokenizer's character tables, a file :func:`write_char_tables` writes whole.
BERT_TABLES_JS = MINILM_JS.with_name("bert-tables.js")
FORMAT = 1
#: Numbers of a row that share one int8 scale.
INT8_GROUP = 64
#: The version of ``pretrained-gallery.js``'s layout (web/pretrained.js checks it).
GALLERY_FORMAT = 2


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


def _b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"),
                                                           copy=False).tobytes()).decode("ascii")


def _tensor(w: np.ndarray, dtype: str) -> dict:
    """One tensor in the weights file's form: {shape, dtype, data[, scale]}."""
    w = np.asarray(w, dtype=np.float32)
    if dtype == "int8":
        q, r, c = quantize_int8(w, group=INT8_GROUP)  # (rows, cols), (rows, groups), (cols,)
        return {"shape": list(w.shape), "dtype": "int8", "data": _b64(q), "scale": _b64(r),
                "group": INT8_GROUP, "col_scale": _b64(c)}
    if dtype == "float16":
        half = w.astype(np.float16)
        if not np.isfinite(half).all():
            raise ValueError("a weight overflows float16 (|w| > 65504): store it as int8")
        return {"shape": list(w.shape), "dtype": "float16", "data": _b64(half)}
    return {"shape": list(w.shape), "dtype": "float32", "data": _b64(w)}


def _tokenizer_spec(path: Path) -> dict:
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
    path = Path(path)
    if not path.parent.is_dir():
        raise ValueError(f"the folder {path.parent} does not exist")
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
    cfg = model.config
    config = {k: cfg[k] for k in (
        "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
        "max_position_embeddings", "layer_norm_eps", "vocab_size", "hidden_act")}
    weights = {
        "format": FORMAT,
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "license": model.license,
        "dtype": dtype,
        "config": config,
        "tokenizer": _tokenizer_spec(model.path),
        "tensors": stored,
    }
    body = json.dumps(weights, ensure_ascii=True, separators=(",", ":"))
    text = (
        "/* minilm-weights.js: all-MiniLM-L6-v2 (Apache-2.0) for minilm.js, weights as "
        f"{dtype}; written by attention_book.web_export.export_browser_weights. */\n"
        "(function (root) {\n"
        "  root.AttentionBook = root.AttentionBook || {};\n"
        f"  root.AttentionBook.minilmWeights = {body};\n"
        '})(typeof globalThis !== "undefined" ? globalThis : this);\n'
    )
    path.write_text(text, "ascii")
    payload = sum(len(t[k]) * 3 // 4 for t in stored.values()
                  for k in ("data", "scale", "col_scale") if k in t)
    return {"bytes": len(text), "payload_bytes": payload, "dtype": dtype,
            "n_numbers": int(sum(np.prod(t["shape"]) for t in stored.values()))}


# ------------------------------------------------------------------ the tokenizer's tables


def _ranges(code_points) -> str:
    """Sorted code points -> "lo-hi,lo-hi,..." in hex ("c" alone for one)."""
    runs = []
    for c in code_points:
        if runs and runs[-1][1] == c - 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join(f"{a:x}" if a == b else f"{a:x}-{b:x}" for a, b in runs)


def bert_char_tables(tokenizer: Tokenizer | None = None) -> dict:
    """What BertNormalizer and BertPreTokenizer do to each code point, measured.

    Every code point but the surrogates (1,112,064) goes through the tokenizer's
    normalizer alone, and between two letters through its pre-tokenizer alone (about 6 s).

    Parameters
    ----------
    tokenizer : tokenizers.Tokenizer, optional
        Default the installed all-MiniLM-L6-v2's.

    Returns
    -------
    dict of str to str
        Code point ranges ("lo-hi,..." in hex): ``drop`` (normalised to nothing: controls,
        format and private-use characters, and non-spacing marks of the crate's Unicode),
        ``space`` (normalised to " "), ``cjk`` (padded with spaces), ``punct`` (split off
        as a token of its own by the pre-tokenizer), ``split`` (whitespace to the
        pre-tokenizer).
    """
    tokenizer = MiniLM.load().tokenizer if tokenizer is None else tokenizer
    norm, pre = tokenizer.normalizer, tokenizer.pre_tokenizer
    drop, space, cjk, punct, split = [], [], [], [], []
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF:
            continue  # surrogates: not characters (Python str holds them, UTF-8 does not)
        ch = chr(c)
        out = norm.normalize_str(ch)
        if out == "":
            drop.append(c)
        elif out == " " and ch != " ":
            space.append(c)
        elif len(out) >= 3 and out[0] == out[-1] == " ":
            cjk.append(c)  # " " + the ideograph's NFD (U+F900 -> U+8C48) + " "
        parts = len(pre.pre_tokenize_str(f"a{ch}a"))
        if parts == 3:
            punct.append(c)
        elif parts == 2:
            split.append(c)
    return {"drop": _ranges(drop), "space": _ranges(space), "cjk": _ranges(cjk),
            "punct": _ranges(punct), "split": _ranges(split)}


def char_tables_js(tables: dict, source: str) -> str:
    """The text of ``shared/bert-tables.js``: an ES module exporting ``TABLES``."""
    lines = ["// GENERATED by attention_book.web_export.write_char_tables (python -m",
             "// attention_book.web_export tables); do not edit. What BertNormalizer and",
             "// BertPreTokenizer do to each code point, for wordpiece.js, as code point",
             f"// ranges (hex), measured by bert_char_tables from {source}.",
             "export const TABLES = {"]
    for name in ("drop", "space", "cjk", "punct", "split"):
        text = tables[name]
        lines.append(f"  {name}:")
        chunks = [text[i:i + 88] for i in range(0, len(text), 88)] or [""]
        lines.append(" +\n".join(f'    "{chunk}"' for chunk in chunks) + ",")
    lines.append("};")
    return "\n".join(lines) + "\n"


def _tables_source() -> str:
    import tokenizers

    return f"tokenizers {tokenizers.__version__} (all-MiniLM-L6-v2's tokenizer.json)"


def write_char_tables(js_path=BERT_TABLES_JS, tables: dict | None = None) -> bool:
    """Write ``shared/bert-tables.js`` whole, from freshly measured tables (or ``tables``).

    Returns
    -------
    bool
        Whether the file changed.
    """
    js_path = Path(js_path)
    tables = bert_char_tables() if tables is None else tables
    new = char_tables_js(tables, _tables_source())
    changed = not js_path.exists() or js_path.read_text("utf-8") != new
    if changed:
        js_path.write_text(new, "utf-8")
    return changed


# ------------------------------------------------------------------ chapter 9's first view


def export_pretrained_gallery(path, presets, *, weights_js=None, max_tokens: int = 128,
                              model: MiniLM | None = None) -> dict:
    """Write ``pretrained-gallery.js``: what chapter 9's browser lab shows before the
    reader loads the model (``web/pretrained.js`` reads it).

    A classic script setting ``AttentionBook.pretrainedGallery`` to
    ``{format, model, weights, config, tokenizer, max_tokens, max_text_chars,
    running_sentence, gallery, presets}``:

    - ``tokenizer``: minilm.js's tokenizer spec, the vocabulary as one string of pieces
      joined by newlines (the lab tokenizes any text without the weights file);
    - ``gallery``: the number of gallery sentences and each head score
      (:func:`attention_book.heads.head_scores`) averaged over them, (n_layers * h)
      float64 in C order of (layer, head), as
      :func:`~attention_book.pretrained.gallery_scores` gives them;
    - ``presets``: for each (label, text, query), the text's tokens, all 72 maps,
      :func:`~attention_book.pretrained.single_thread_attention` (the numbers the scene's
      state uses), base64 of float32 (n_layers, h, T, T) in C order, and ``norms``, the
      lengths ||f_h(x_j)|| of what each head writes from each token,
      :func:`~attention_book.pretrained.single_thread_value_norms`, base64 of float32
      (n_layers, h, T) (with the maps they give the lab's ||alpha f(x)|| view: 72 T floats,
      against 72 T^2 for the maps);
    - ``weights``: ``{file, bytes, dtype}`` of ``weights_js`` (the size the lab's button
      announces), or null when no weights file is given.

    Deterministic: the same model and presets give the same bytes.

    Parameters
    ----------
    path : str or pathlib.Path
        The file to write (its folder must exist).
    presets : sequence of (str, str, int)
        (label, text, query), e.g. ``scenes.pretrained.PRETRAINED_PRESETS``; each text
        must fit in ``max_tokens`` tokens.
    weights_js : str or pathlib.Path, optional
        The weights file written by :func:`export_browser_weights` beside it.
    max_tokens : int
        The lab's cap on tokens (``scenes.pretrained.MAX_PRETRAINED_TOKENS``).
    model : MiniLM, optional
        Default :meth:`MiniLM.load`.

    Returns
    -------
    dict
        ``bytes`` (the file's size) and ``presets`` (how many).
    """
    from .pretrained import gallery_scores, single_thread_attention, single_thread_value_norms
    from .tokens import MAX_TEXT_CHARS, RUNNING_SENTENCE

    path = Path(path)
    if not path.parent.is_dir():
        raise ValueError(f"the folder {path.parent} does not exist")
    model = MiniLM.load() if model is None else model
    weights = None
    if weights_js is not None:
        weights_js = Path(weights_js)
        if not weights_js.is_file():
            raise ValueError(f"no weights file at {weights_js}: write it first with "
                             f"export_browser_weights")
        with open(weights_js, encoding="ascii") as f:
            head = f.read(4096)
        dtype = head.split('"dtype":"', 1)[1].split('"', 1)[0] if '"dtype":"' in head else None
        weights = {"file": weights_js.name, "bytes": weights_js.stat().st_size, "dtype": dtype}
    spec = _tokenizer_spec(model.path)
    if any("\n" in piece for piece in spec["vocab"]):
        raise ValueError("a vocabulary piece holds a newline: it cannot be joined by newlines")
    spec["vocab"] = "\n".join(spec["vocab"])
    stored = []
    for label, text, query in presets:
        tokens = model.tokenize(text)
        if len(tokens) > max_tokens:
            raise ValueError(f"preset {label!r} is {len(tokens)} tokens long; the lab shows "
                             f"at most {max_tokens}")
        maps = np.asarray(single_thread_attention(text), dtype=np.float32)  # (L, h, T, T)
        norms = np.asarray(single_thread_value_norms(text), dtype=np.float32)  # (L, h, T)
        stored.append({"label": label, "text": text, "query": int(query), "tokens": tokens,
                       "maps": _b64(maps), "norms": _b64(norms)})
    scores = gallery_scores()
    means = scores.mean  # name -> (L, h) float64
    cfg = model.config
    gallery = {
        "format": GALLERY_FORMAT,
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "license": model.license,
        "weights": weights,
        "config": {k: cfg[k] for k in (
            "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
            "max_position_embeddings", "layer_norm_eps", "vocab_size", "hidden_act")},
        "tokenizer": spec,
        "max_tokens": int(max_tokens),
        "max_text_chars": MAX_TEXT_CHARS,
        "running_sentence": RUNNING_SENTENCE,
        "gallery": {"sentences": len(scores.sentences),
                    "mean": {name: [float(v) for v in means[name].ravel()]
                             for name in means}},
        "presets": stored,
    }
    body = json.dumps(gallery, ensure_ascii=True, separators=(",", ":"))
    text = (
        "/* pretrained-gallery.js: chapter 9's lab before the model is loaded (tokenizer, the "
        "preset sentences' maps, the gallery's head scores); written by "
        "attention_book.web_export.export_pretrained_gallery. */\n"
        "(function (root) {\n"
        "  root.AttentionBook = root.AttentionBook || {};\n"
        f"  root.AttentionBook.pretrainedGallery = {body};\n"
        '})(typeof globalThis !== "undefined" ? globalThis : this);\n'
    )
    path.write_text(text, "ascii")
    return {"bytes": len(text), "presets": len(stored)}


# ------------------------------------------------------------------ chapter 8's tiny models

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


def _pack_bits(q: np.ndarray, bits: int) -> bytes:
    """Levels -L..L as unsigned ``q + L``, ``bits`` bits each, first number in the lowest bits."""
    level = 2 ** (bits - 1) - 1
    u = (q.ravel().astype(np.int64) + level).astype(np.uint8)  # (n,) in 0..2L
    stream = np.unpackbits(u[:, None], axis=1, bitorder="little")[:, :bits]  # (n, bits)
    return np.packbits(stream.ravel(), bitorder="little").tobytes()


def _unpack_bits(data: bytes, bits: int, n: int) -> np.ndarray:
    """The inverse of :func:`_pack_bits`: int8 levels (n,)."""
    level = 2 ** (bits - 1) - 1
    stream = np.unpackbits(np.frombuffer(data, np.uint8), bitorder="little")[:n * bits]
    u = np.packbits(stream.reshape(n, bits), axis=1, bitorder="little")[:, 0]  # (n,)
    return (u.astype(np.int16) - level).astype(np.int8)


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
                entry[name] = {"shape": list(w.shape), "f32": _b64(w)}
                now[name] = w.copy()
                continue
            n_bits = 8 if previous is None else bits
            base = np.zeros_like(w) if previous is None else previous[name]
            q, r = quantize_groups(w - base, n_bits)  # (rows, cols), (rows, cols / group)
            step = (q.astype(np.float32).reshape(*r.shape, -1) * r[:, :, None]).reshape(w.shape)
            now[name] = (base + step).astype(np.float32)  # float32, as the browser adds
            entry[name] = {"shape": list(w.shape), "bits": n_bits, "delta": previous is not None,
                           "q": base64.b64encode(_pack_bits(q, n_bits)).decode("ascii"),
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
        to :func:`decode_training_data` of the file (tests/test_web_training.py).
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
    from .scenes.training import TRAINING_TASKS, training_run  # torch: reference layer
    from .training import HEADLINE_SCORES

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
    body = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return (
        "/* training-checkpoints.js: chapter 8's two tiny transformers at their 26 checkpoints"
        f" ({data['bits']}-bit changes between checkpoints), for training.js; written by "
        "attention_book.web_export.training_script. */\n"
        "(function (root, data) {\n"
        '  if (typeof module === "object" && module && module.exports) {\n'
        "    module.exports = data;\n"
        "  } else {\n"
        "    root.AttentionBook = root.AttentionBook || {};\n"
        "    root.AttentionBook.trainingData = data;\n"
        "  }\n"
        '})(typeof globalThis !== "undefined" ? globalThis : this,\n'
        f"{body});\n"
    )


def write_training_script(path, runs: dict | None = None, bits: int = TRAINING_BITS) -> dict:
    """Write :func:`training_script` to ``path`` (its folder must exist).

    Returns
    -------
    dict
        ``bytes`` (the file's size), ``bits``.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise ValueError(f"the folder {path.parent} does not exist")
    text = training_script(runs, bits)
    path.write_text(text, "ascii")
    return {"bytes": len(text), "bits": bits}


def read_training_script(text: str) -> dict:
    """The data inside a ``training-checkpoints.js`` text (:func:`training_script`)."""
    start = text.index("\n{") + 1
    return json.loads(text[start:text.rindex("});") + 1])


def decode_training_data(data: dict) -> dict:
    """What a reader's browser decodes: each task's checkpoints as float32 state dicts.

    Parameters
    ----------
    data : dict
        :func:`training_data`'s result (or :func:`read_training_script`'s).

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
                q = _unpack_bits(base64.b64decode(t["q"]), t["bits"], int(np.prod(shape)))
                r = np.frombuffer(base64.b64decode(t["scale"]), "<f4").reshape(shape[0], -1)
                step_ = (q.astype(np.float32).reshape(*r.shape, -1) * r[:, :, None]).reshape(shape)
                base = previous[name] if t["delta"] else np.zeros(shape, np.float32)
                now[name] = (base + step_).astype(np.float32)
            checkpoints.append((step, now))
            previous = now
        out[task] = checkpoints
    return out


def _main(argv: list[str]) -> int:
    if argv[:1] == ["training"] and len(argv) in (2, 3):
        info = write_training_script(argv[1], bits=int(argv[2]) if len(argv) == 3 else
                                     TRAINING_BITS)
        print(f"{argv[1]}: {info['bytes'] / 1e6:.2f} MB ({info['bits']}-bit deltas)")
        return 0
    if argv[:1] == ["tables"]:
        print(BERT_TABLES_JS.name, "updated" if write_char_tables() else "unchanged")
        return 0
    if argv[:1] == ["gallery"] and len(argv) in (2, 3):
        from .scenes.pretrained import MAX_PRETRAINED_TOKENS, PRETRAINED_PRESETS  # the lab's

        info = export_pretrained_gallery(argv[1], PRETRAINED_PRESETS, weights_js=(
            argv[2] if len(argv) == 3 else None), max_tokens=MAX_PRETRAINED_TOKENS)
        print(f"{argv[1]}: {info['bytes'] / 1e3:.0f} kB ({info['presets']} presets)")
        return 0
    if len(argv) in (1, 2) and not argv[0].startswith("-"):
        info = export_browser_weights(argv[0], *argv[1:])
        print(f"{argv[0]}: {info['bytes'] / 1e6:.1f} MB ({info['dtype']})")
        return 0
    print("usage: python -m attention_book.web_export tables\n"
          "       python -m attention_book.web_export OUT.js [int8|float16|mixed|float32]\n"
          "       python -m attention_book.web_export gallery OUT.js [WEIGHTS.js]\n"
          "       python -m attention_book.web_export training OUT.js [bits]")
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))


# ------------------------------------------------------------------ running it in Node

#: A Node.js script: minilm.js on a weights file and a list of texts (tests, benchmarks).
NODE_RUNNER = r"""
import fs from "node:fs";
import {createRequire} from "node:module";
import {pathToFileURL} from "node:url";
const require = createRequire(import.meta.url);
const [minilmPath, weightsPath, requestPath, outPath] = process.argv.slice(2);
const request = JSON.parse(fs.readFileSync(requestPath, "utf-8"));
const minilm = (await import(pathToFileURL(minilmPath).href)).default;  // an ES module
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
        A file written by :func:`export_browser_weights`.
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
