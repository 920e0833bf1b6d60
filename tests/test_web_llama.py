"""The browser's llama engine (``web/src/llama/``, issue 42) against the book's Python, in
Node.js, on tiny random llama GGUF files that the tests write with gguf's GGUFWriter
(``attention_book.smollm.write_tiny_gguf``): every tensor type the engine reads (Q4_0, Q4_1,
Q8_0, F16, F32), SmolLM2's tokenizer kind, pre-tokenizer and chat template.

- Kernels: y = x W^T from the blocks, WebAssembly and JavaScript, one token and several,
  against ``gguf.quants.dequantize`` and numpy in float64.
- Tokenizer: ids equal to the numpy model's byte-level BPE (``SmolLM.tokenizer``) and to
  Hugging Face ``tokenizers`` built from the same vocabulary and merges, on held-out
  strings; the chat template's text equal to ``SmolLM.chat``.
- Model: logits within 1e-3 and attention weights within 1e-4 of ``LlamaModel.forward``,
  the hidden states and the logit lens too, with heads switched off; the KV cache's steps
  equal to a whole pass; the same greedy tokens for 32 steps on held-out prompts; sampled
  tokens equal to ``decoding.next_token``'s with the same seed.
- Bad input: a file that is not GGUF, a truncated one, another architecture, an unsupported
  tensor type, another GGUF version, a damaged header; an empty or too long prompt, an id
  outside the vocabulary, bad sampling settings: each with its code and message.

The real SmolLM2 file is tests/test_web_llama_smollm.py's (slow tier).
"""
from __future__ import annotations

import struct

import numpy as np
import pytest

from attention_book.decoding import next_token
from attention_book.smollm import SmolLM, write_tiny_gguf
from llama_js import NODE, run_files, run_node

pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js (node) is not installed")

TYPES = ("Q4_1", "Q8_0", "Q4_0", "F16", "F32")
#: The parity bounds of issue 42 (the JS model against the numpy one on the same weights).
LOGITS_TOL = 1e-3
ATTENTION_TOL = 1e-4

HELD_OUT_TEXT = [
    "The cat sat on the mat.",
    "  leading spaces, and trailing ones   ",
    "Digits: 3.14159, 1,000,000 and 2024-12-01!",
    "def f(x):\n    return x**2  # code\n\tindented",
    "Naïve café, señor, Ærøskøbing, İstanbul, ΑΒΓ, Привет",
    "Emoji: 😀👍🏽🫠 ❤️ and CJK 東京 and \u0301 combining",
    "What's up? I'm fine; they'll go, we've been, you'd say, it's 'quoted'.",
    "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
    "odd spaces:\u00a0\u2003\u3000\x85\ufeff\u200b end",
    "<b>markup</b> &amp; <script>alert(1)</script>",
    "x" * 300,
    "".join(np.random.default_rng(5).choice(list("abcdefghijklmnopqrstuvwxyz"), 700)),  # one long piece
    "",
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny random llama GGUF with every type the engine reads, and its numpy model."""
    path = write_tiny_gguf(tmp_path_factory.mktemp("llama") / "tiny.gguf", types=TYPES)
    return path, SmolLM.load(path, cache=False)


def _check(result):
    assert "error" not in result, result
    return result


# ------------------------------------------------------------------ kernels


def test_kernels_match_dequantized_products(tiny, tmp_path):
    """Every matrix of the file, each type, WebAssembly and JS, T = 1 (matvec) and T = 2, 5, 9
    (the tiled kernel, with a tail), against x @ dequantize(W).T in float64."""
    import gguf

    path, _ = tiny
    reader = gguf.GGUFReader(path)
    rng = np.random.default_rng(0)
    seen, ops, cases = set(), [], []
    for t in reader.tensors:
        kind = t.tensor_type.name
        if len(t.shape) != 2 or kind in seen:
            continue
        seen.add(kind)
        cols, rows = (int(n) for n in t.shape)
        W = gguf.quants.dequantize(t.data, t.tensor_type).reshape(rows, cols).astype(np.float64)
        for T in (1, 2, 5, 9):
            x = rng.standard_normal((T, cols)).astype(np.float32)
            xfile = tmp_path / f"x-{kind}-{T}.f32"
            x.tofile(xfile)
            for backend in ("wasm", "js"):
                ops.append({"op": "matmul", "tensor": t.name, "xFile": str(xfile), "T": T, "backend": backend})
                cases.append((kind, T, backend, x.astype(np.float64) @ W.T, np.abs(x) @ np.abs(W).T))
    assert seen == set(TYPES)
    for (kind, T, backend, want, scale), got in zip(cases, run_node(path, ops)):
        got = _check(got)
        assert got["backend"] == backend and got["type"] == kind
        err = np.abs(got["y"].reshape(T, -1) - want) / scale
        # float32 sums of 32-64 products: a few units of float32's 6e-8 relative to sum |w x|
        assert err.max() < 2e-6, (kind, T, backend, err.max())


def test_f16_blocks_with_zeros_subnormals_and_both_signs(tmp_path):
    """The WebAssembly F16 kernel reads a block fast by bits when no half in it has exponent 0,
    and exactly otherwise: rows with zeros, subnormals (down to 2^-24), the largest half and
    signed values, against numpy's float16 -> float64."""
    import gguf

    rng = np.random.default_rng(3)
    W = (rng.standard_normal((6, 96)) * 0.5).astype(np.float16)
    W[1, 5] = 0.0                               # one zero: its block goes the exact way
    W[2, 40:48] = np.float16(2.0**-24) * np.arange(1, 9)  # subnormals, both signs below
    W[2, 44:48] *= -1
    W[3, :] = -W[3, :]                          # a row of negated normals
    W[4, 64:] = np.float16(65504.0)             # the largest finite half
    W[5, :] = np.float16(-0.0)                  # negative zeros
    path = tmp_path / "f16.gguf"
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_tensor("w", W, raw_shape=W.shape, raw_dtype=gguf.GGMLQuantizationType.F16)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    ops, want = [], []
    for T in (1, 3):
        x = rng.standard_normal((T, 96)).astype(np.float32)
        x.tofile(tmp_path / f"x{T}.f32")
        for backend in ("wasm", "js"):
            ops.append({"op": "matmul", "tensor": "w", "xFile": str(tmp_path / f"x{T}.f32"), "T": T,
                        "backend": backend})
            want.append((x.astype(np.float64) @ W.astype(np.float64).T,
                         np.abs(x.astype(np.float64)) @ np.abs(W.astype(np.float64)).T))
    for (exact, scale), got in zip(want, run_node(path, ops)):
        err = np.abs(_check(got)["y"].reshape(exact.shape) - exact) / np.maximum(scale, 1e-30)
        assert err.max() < 2e-6, (got["backend"], err.max())


# ------------------------------------------------------------------ tokenizer


def test_tokenizer_matches_python(tiny):
    """The same ids as the numpy model's tokenizer and as HF tokenizers on held-out text,
    the text back from decode(), and the chat template as SmolLM.chat renders it."""
    path, model = tiny
    chats = [[{"role": "user", "content": "What is the capital of France?"}],
             [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi <b>"}]]
    [out] = run_node(path, [{"op": "encode", "texts": HELD_OUT_TEXT, "chats": chats}])
    out = _check(out)
    hf = _hf_tokenizer(path)
    for text, ids, back in zip(HELD_OUT_TEXT, out["ids"], out["decoded"]):
        assert ids == list(model.tokenizer.encode(text)), text
        assert ids == hf.encode(text).ids, text
        assert back == text
    for messages, text in zip(chats, out["chats"]):
        assert text == model.chat(messages)


def _hf_tokenizer(path):
    """Hugging Face tokenizers with the file's vocabulary and merges, SmolLM2's pipeline
    (Digits(individual_digits=True), ByteLevel without a prefix space), special tokens."""
    import gguf
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    reader = gguf.GGUFReader(path)
    tokens = reader.fields["tokenizer.ggml.tokens"].contents()
    merges = [tuple(m.split(" ")) for m in reader.fields["tokenizer.ggml.merges"].contents()]
    types = reader.fields["tokenizer.ggml.token_type"].contents()
    tok = Tokenizer(models.BPE({t: i for i, t in enumerate(tokens)}, merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([t for t, k in zip(tokens, types) if k == 3])
    return tok


# ------------------------------------------------------------------ the model


def _heads_off(config, pairs):
    mask = np.zeros((config.n_layers, config.h), dtype=np.uint8)
    for layer, head in pairs:
        mask[layer, head] = 1
    return mask


@pytest.mark.parametrize("backend", ["wasm", "js"])
def test_forward_matches_numpy(tiny, backend):
    """Logits (every position), attention (every layer, head, row), the hidden states and the
    logit lens of one pass; then three tokens one at a time through the KV cache, whose logits
    and attention rows equal the whole sequence's; and with two heads switched off."""
    path, model = tiny
    c = model.config
    ids = list(model.tokenizer.encode("The cat sat on the mat. The cat"))
    more = [5, 77, 200]
    off = _heads_off(c, [(0, 1), (1, 3)])
    ops = [{"op": "forward", "ids": ids, "more": more, "hidden": True},
           {"op": "forward", "ids": ids, "headMask": off.ravel().tolist()},
           {"op": "lens", "ids": ids}]
    plain, masked, lens = (_check(r) for r in run_node(path, ops, backend=backend))
    T, L, h = len(ids), c.n_layers, c.h

    ref = model.model.forward(ids, hidden=True)
    assert np.abs(plain["logits"].reshape(T, -1) - ref.logits).max() < LOGITS_TOL
    att = np.stack(ref.weights)  # (L, h, T, T)
    assert np.abs(plain["attention"].reshape(L, h, T, T) - att).max() < ATTENTION_TOL
    hidden = plain["hidden"].reshape(L + 1, c.d)
    assert np.abs(hidden - ref.hidden[:, -1]).max() < 1e-3 * np.abs(ref.hidden).max()

    full = model.model.forward(ids + more)
    for k, step in enumerate(plain["steps"]):
        S = T + k + 1
        assert np.abs(step["logits"] - full.logits[S - 1]).max() < LOGITS_TOL
        row = np.stack(full.weights)[:, :, S - 1, :S]  # (L, h, S)
        assert np.abs(step["attention"].reshape(L, h, S) - row).max() < ATTENTION_TOL

    ref_off = model.model.forward(ids, heads_off=off.astype(bool))
    assert np.abs(masked["logits"].reshape(T, -1) - ref_off.logits).max() < LOGITS_TOL
    assert np.abs(masked["logits"].reshape(T, -1) - ref.logits).max() > 10 * LOGITS_TOL

    lens_ref = model.model.unembed(ref.hidden[:, -1])  # (L + 1, V)
    for got, want in zip(lens["layers"], lens_ref):
        assert np.abs(got - want).max() < LOGITS_TOL


PROMPTS = ["The cat sat on the", "What is the capital of France? Paris is",
           "I think that 42", "Ærø 😀 then the others went in"]


def test_greedy_32_tokens_match_numpy(tiny):
    """The same 32 greedy tokens as LlamaModel.generate on held-out prompts (no stop)."""
    path, model = tiny
    prompts = [list(model.tokenizer.encode(p)) for p in PROMPTS]
    ops = [{"op": "generate", "ids": ids, "options": {"maxNew": 32, "stop": None}} for ids in prompts]
    for ids, got in zip(prompts, run_node(path, ops)):
        want = model.model.generate(ids, 32).tokens
        assert _check(got)["tokens"] == list(want)


@pytest.mark.parametrize("settings", [
    {"temperature": 1.0}, {"temperature": 0.7, "top_k": 5}, {"temperature": 1.3, "top_p": 0.9},
    {"temperature": 0.9, "top_k": 40, "top_p": 0.5},
])
def test_sampling_matches_numpy(tiny, tmp_path, settings):
    """On the same logits, the JS sampler draws numpy's tokens seed for seed (rng.js is
    default_rng); and a whole sampled generation equals LlamaModel.generate's."""
    path, model = tiny
    rng = np.random.default_rng(1)
    V = model.config.vocab_size
    rows = (3 * rng.standard_normal((40, V))).astype(np.float32)
    rows[3, :] = rows[3, 0]  # a row of ties
    logits_file = tmp_path / "logits.f32"
    rows.tofile(logits_file)
    options = {"temperature": settings["temperature"], "topK": settings.get("top_k"),
               "topP": settings.get("top_p")}
    seeds = [0, 1, 7, 2**40 + 3]
    ops = [{"op": "sample", "logitsFile": str(logits_file), "V": V, "options": {**options, "seed": s}}
           for s in seeds]
    prompt = list(model.tokenizer.encode("The weather is"))
    ops += [{"op": "generate", "ids": prompt, "options": {"maxNew": 24, "stop": None, **options, "seed": s}}
            for s in seeds[:2]]
    results = [_check(r) for r in run_node(path, ops)]
    for seed, got in zip(seeds, results):
        g = np.random.default_rng(seed)
        want = [next_token(row, settings["temperature"], g, top_k=settings.get("top_k"),
                           top_p=settings.get("top_p")) for row in rows]
        assert got["ids"] == want
    for seed, got in zip(seeds[:2], results[len(seeds):]):
        want = model.model.generate(prompt, 24, seed=seed, **settings).tokens
        assert got["tokens"] == list(want)


# ------------------------------------------------------------------ bad input


def _errors(path, ops):
    return [r.get("error") for r in run_node(path, ops)]


def test_files_the_engine_refuses(tiny, tmp_path):
    """Each bad file gets its code and a message that says what is wrong."""
    good = tiny[0].read_bytes()
    cases = {
        "empty": (b"", "not-gguf", "not a GGUF file"),
        "text": (b"hello, I am not a model\n" * 10, "not-gguf", "not a GGUF file"),
        "zip": (b"PK\x03\x04" + good[4:200], "not-gguf", "not a GGUF file"),
        "header": (good[:10], "truncated", "truncated"),
        "metadata": (good[:300], "truncated", "truncated"),
        "data": (good[:len(good) // 2], "truncated", "truncated"),
        "last byte": (good[:-1], "truncated", "truncated"),
        "version": (good[:4] + struct.pack("<I", 1) + good[8:], "version", "version 1"),
        "counts": (good[:8] + struct.pack("<Q", 2**40) + good[16:], "corrupt", "damaged"),
        # the tokenizer's kind and pre-tokenizer, renamed in place (same lengths)
        "tokenizer": (good.replace(b"gpt2", b"bert", 1), "tokenizer", 'tokenizer is "bert"'),
        "pre": (good.replace(b"smollm", b"smolxx", 1), "tokenizer", 'pre-tokenizer "smolxx"'),
    }
    files = {}
    for name, (data, _, _) in cases.items():
        files[name] = tmp_path / f"{name.replace(' ', '-')}.gguf"
        files[name].write_bytes(data)
    made = [("architecture", "architecture", '"gpt2" model'),
            ("types", "tensor-type", "is Q5_0; the book computes with"),
            ("bf16", "tensor-type", "is BF16")]
    for kind, _, _ in made:
        files[kind] = tmp_path / f"{kind}.gguf"
        if kind == "architecture":
            write_tiny_gguf(files[kind], architecture="gpt2")
        else:
            write_tiny_gguf(files[kind], types=("Q5_0",) if kind == "types" else ("BF16",))
    # every file in one run of Node, each loaded afresh
    loaded = run_files([{"gguf": f, "ops": [{"op": "load"}]} for f in files.values()])
    errors = {name: result.get("error") for name, [result] in zip(files, loaded, strict=True)}
    for name, (_, code, words) in cases.items():
        err = errors[name]
        assert err is not None, name
        assert (err["code"], words in err["message"]) == (code, True), (name, err)
    for kind, code, words in made:
        err = errors[kind]
        assert err and err["code"] == code and words in err["message"], (kind, err)


def test_a_model_past_webassembly_memory(tmp_path):
    """A KV cache past 4 GiB (a huge context asked for) is refused with code "memory"; by
    default the cache holds 2048 positions, whatever context the file declares."""
    path = write_tiny_gguf(tmp_path / "long.gguf", context=2**30)
    [err] = [r.get("error") for r in run_node(path, [{"op": "load"}], max_context=2**28)]
    assert err["code"] == "memory" and "past WebAssembly's 4 GiB" in err["message"], err
    [ok] = run_node(path, [{"op": "load"}])
    assert ok["info"]["maxContext"] == 2048


def test_prompts_and_settings_the_engine_refuses(tiny):
    """An empty prompt, too long a prompt, an id outside the vocabulary, bad sampling."""
    path, model = tiny
    V = model.config.vocab_size
    cases = [
        ({"op": "generate", "ids": []}, "empty-prompt", "the prompt is empty"),
        ({"op": "generate", "ids": [5] * 600}, "long-prompt", "the lab takes at most 512"),
        ({"op": "generate", "ids": [5] * 40, "options": {"maxNew": 30}}, "context", "exceed the 64 positions"),
        ({"op": "forward", "ids": [V]}, "token", f"token id {V} is outside the vocabulary"),
        ({"op": "forward", "ids": [-1]}, "token", "outside the vocabulary"),
        ({"op": "generate", "ids": [5], "options": {"temperature": 0.5}}, "sampling", "needs a seed"),
        ({"op": "generate", "ids": [5], "options": {"temperature": -1}}, "sampling", "temperature must be"),
        ({"op": "generate", "ids": [5], "options": {"temperature": 1, "seed": 0, "topK": 0}},
         "sampling", "top_k must be"),
        ({"op": "generate", "ids": [5], "options": {"temperature": 1, "seed": 0, "topP": 1.5}},
         "sampling", "top_p must be"),
    ]
    for (op, code, words), err in zip(cases, _errors(path, [op for op, _, _ in cases])):
        assert err is not None and err["code"] == code and words in err["message"], (op, err)
