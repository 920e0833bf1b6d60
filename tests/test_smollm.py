"""SmolLM2-135M-Instruct run by the book's numpy code against Hugging Face transformers'
LlamaForCausalLM loaded from the same GGUF file (slow: loading it takes 10-30 s).

Parity, on held-out prompts (code, French with accents, digits, a chat turn):

- float64, both sides (transformers keeps its RMSNorm, softmax and RoPE angles in float32
  even then): logits within 1e-4, every layer's attention weights within 1e-5 (measured at
  most 4.3e-5 and 3.0e-6);
- float32, both sides: logits within 1e-3 and weights within 1e-4. They differ by 1.1e-4 to
  1.8e-4 and 8.5e-6 to 1.0e-5 (the largest over the prompts, in three runs), which is
  float32's rounding: against the book's float64 model, transformers' float32 logits are off
  by up to 1.6e-4 and the book's float32 logits by 0.7e-4 to 1.4e-4, depending on the order
  in which BLAS sums (asserted below 5e-4, and 5e-5 for the weights);
- the same greedy continuation for 32 tokens; token ids equal to transformers' tokenizer
  on held-out strings, except where white space stands before a digit: transformers'
  GGUF conversion does not know the file's ``smollm`` pre-tokenizer and splits as GPT-2
  does, while the book (like SmolLM2's own tokenizer.json, rebuilt here with
  ``tokenizers``) splits the digits first;
- both RoPE layouts: the file's W^Q and W^K permuted are transformers' q_proj and k_proj,
  exactly.
"""

import copy
import os

import gguf
import numpy as np
import pytest
import torch

from attention_book import smollm
from attention_book.bpe import ByteLevelBPE
from attention_book.decoding import top_k_top_p
from attention_book.llama import LlamaModel
from conftest import locked, run_folder

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_torch_thread")]

PROMPTS = ["def fibonacci(n):\n    if n < 2:\n        return n\n    return",
           "Les élèves ont étudié l'histoire de la Révolution française en 1789 et",
           "The year 2024 had 366 days because",
           "Once upon a time, in a small village by the sea, there lived"]
#: Held-out strings: punctuation, digits, code, accented letters, emoji, leading spaces.
STRINGS = ["Hello, world!", "  leading spaces", "x = [1,  2,   3]", "naïve café résumé Ærøskøbing",
           "emoji 😀👍🏽 and 🇫🇷", "def f(x):\n    return x**2  # square\n",
           "It's 3.14159; isn't it? I'll go, we've won, they'd've", "\t\ttabs\r\nand CRLF",
           "ümlaut Über straße", "日本語のテキスト", "a\u00a0b\u2003c", "1234567890", "  42",
           "what's up   ", "<|im_start|>user\nhi<|im_end|>", "x²+y³=z⁴ ½ Ⅻ",
           "«quotes» — dashes… “curly”", "http://example.com/a?b=1&c=2",
           "snake_case camelCase kebab-case", "    \n\n   \t x", "\x01\x04ctrl"]
#: Where transformers' tokenizer differs: white space before a digit (\p{N}).
DIFFER = {"x = [1,  2,   3]", "  42", "x²+y³=z⁴ ½ Ⅻ"}


@pytest.fixture(scope="module")
def book():
    return smollm.SmolLM.load()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """transformers' model and tokenizer from the GGUF, converted once a run (28-80 s of
    CPU). Under pytest-xdist a worker that steals some of this module's tests needs them
    too (in a fresh clone's run the second worker converted them again, 49 s): the first
    worker saves the model's config and weights and the tokenizer (torch.save, 0.5 GB,
    1-2 s) in the run's common temporary folder, under a lock, and the other builds the
    model from them (5 s; the same logits, bit for bit). (The model itself, pickled, lost
    its attention weights: transformers records them by hooks set up as it is built.)"""
    import transformers

    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return smollm.transformers_model()
    shared = run_folder(tmp_path_factory) / "smollm-transformers.pt"
    with locked(shared.with_suffix(".lock")):
        if not shared.exists():
            model, tokenizer = smollm.transformers_model()
            torch.save({"config": model.config, "weights": model.state_dict(),
                        "tokenizer": tokenizer}, shared)
            return model, tokenizer
    saved = torch.load(shared, weights_only=False)  # our own file, this run's
    model = transformers.LlamaForCausalLM(saved["config"])  # eager attention, float32
    model.load_state_dict(saved["weights"])
    return model.eval(), saved["tokenizer"]


@pytest.fixture(scope="module")
def reference64(reference):
    """transformers' model in float64 (its norms, softmax and RoPE angles stay float32)."""
    return copy.deepcopy(reference[0]).to(torch.float64)


@pytest.fixture(scope="module")
def book64(book):
    return LlamaModel.from_weights(book.config, {k: v.astype(np.float64)
                                                 for k, v in book.model.weights().items()})


def chat_prompt(book):
    return book.chat("What is the capital of France? Answer in one sentence.")


def test_every_tensor_decodes_as_gguf_does(book):
    reader = gguf.GGUFReader(book.path)
    weights = smollm.read_weights(reader)
    for t in reader.tensors[::7]:  # every seventh of the 272 (the quants tests cover the rest)
        want = gguf.quants.dequantize(t.data, t.tensor_type)
        name = t.name.removesuffix(".weight")
        key = {"token_embd": "embedding", "output_norm": "final_norm"}.get(name)
        if key is None:
            _, layer, part = name.split(".", 2)
            key = f"{layer}.{smollm.BLOCK_TENSORS[part][0]}"
        got = weights[key]
        np.testing.assert_array_equal(got.T if got.ndim == 2 and key != "embedding" else got,
                                      want.reshape([int(n) for n in reversed(t.shape)]))
    for k, v in weights.items():
        np.testing.assert_array_equal(book.model.weights()[k], v)  # the disk cache's copy


def test_the_file_is_designs(book):
    c = book.config
    assert (c.n_layers, c.d, c.h, c.g, c.d_head, c.d_ff, c.vocab_size, c.context) == (
        30, 576, 9, 3, 64, 1536, 49152, 8192)
    assert c.rope_theta == 100000.0 and book.model.output is None
    types = list(book.contents.tensor_types.values())
    assert (types.count("Q4_1"), types.count("F32"), types.count("Q8_0")) == (210, 61, 1)
    assert len(book.tokenizer.ranks) == 48900 and (book.bos, book.eos) == (1, 2)
    assert book.model.n_parameters == 134_515_008 and book.license == "apache-2.0"


def test_tokens_equal_smollm2s_own_tokenizer(book):
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers

    t = book.tokenizer
    merges = [tuple(p) for p in sorted(t.ranks, key=t.ranks.get)]
    own = Tokenizer(models.BPE(dict(t.vocab), merges))
    own.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    own.add_special_tokens([AddedToken(t.tokens[i], special=True, normalized=False)
                            for i in t.special])
    for s in STRINGS:
        assert t.encode(s) == own.encode(s).ids, s


def test_tokens_equal_transformers(book, reference):
    _, tok = reference
    gpt2 = ByteLevelBPE(book.tokenizer.tokens, [" ".join(p) for p in sorted(
        book.tokenizer.ranks, key=book.tokenizer.ranks.get)], book.tokenizer.special, "gpt2")
    for s in STRINGS:
        ours, theirs = book.tokenizer.encode(s), tok(s).input_ids
        assert (ours == theirs) == (s not in DIFFER), s
        assert gpt2.encode(s) == theirs, s  # transformers splits as GPT-2 does
        assert book.decode(ours) == tok.decode(ours), s


def test_the_chat_template_equals_transformers(book, reference):
    _, tok = reference
    messages = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"},
                {"role": "user", "content": "And 3+3?"}]
    for prompt in (True, False):
        want = tok.apply_chat_template(messages, add_generation_prompt=prompt, tokenize=False)
        assert book.chat(messages, add_generation_prompt=prompt) == want
    assert book.encode(chat_prompt(book)).tolist() == tok(chat_prompt(book)).input_ids


def test_rope_layouts_are_transformers_projections(book, reference):
    model, _ = reference
    halves = book.model.with_rope_pairs("halves")
    for i in (0, 17, 29):
        attn = model.model.layers[i].self_attn
        np.testing.assert_array_equal(halves.blocks[i].attention.W_q.T, attn.q_proj.weight.detach().numpy())
        np.testing.assert_array_equal(halves.blocks[i].attention.W_k.T, attn.k_proj.weight.detach().numpy())
    ids = book.encode(PROMPTS[0])
    np.testing.assert_allclose(halves.forward(ids).logits, book.model.forward(ids).logits,
                               atol=1e-3)


def _maps(out):
    return np.stack(out.weights)  # (n_layers, h, s, s)


@pytest.mark.parametrize("which", range(len(PROMPTS) + 1))
def test_parity_in_float64(book, book64, reference64, which):
    text = PROMPTS[which] if which < len(PROMPTS) else chat_prompt(book)
    ids = book.encode(text)
    logits, maps = smollm.torch_logits(reference64, ids)
    out = book64.forward(ids)
    assert np.abs(out.logits - logits).max() < 1e-4
    assert np.abs(_maps(out) - maps).max() < 1e-5


@pytest.mark.parametrize("which", range(len(PROMPTS) + 1))
def test_parity_in_float32(book, book64, reference, which):
    model, _ = reference
    text = PROMPTS[which] if which < len(PROMPTS) else chat_prompt(book)
    ids = book.encode(text)
    logits, maps = smollm.torch_logits(model, ids)
    out, exact = book.model.forward(ids), book64.forward(ids)
    assert np.abs(out.logits - logits).max() < 1e-3
    assert np.abs(_maps(out) - maps).max() < 1e-4
    # the book's float32 model is off exact arithmetic by float32's rounding only
    assert np.abs(out.logits - exact.logits).max() < 5e-4
    assert np.abs(_maps(out) - _maps(exact)).max() < 5e-5


@pytest.mark.parametrize("which", range(len(PROMPTS) + 1))
def test_the_same_greedy_continuation(book, reference, which):
    model, _ = reference
    text = PROMPTS[which] if which < len(PROMPTS) else chat_prompt(book)
    ids = book.encode(text)
    ours = book.model.generate(ids, 32)  # no stop token: 32 tokens, past the end of a turn
    with torch.no_grad():  # nor for transformers (eos_token_id=None)
        theirs = model.generate(torch.as_tensor(ids)[None], max_new_tokens=32, do_sample=False,
                                eos_token_id=None, pad_token_id=2)[0, len(ids):].numpy()
    np.testing.assert_array_equal(ours.tokens, theirs)
    top2 = np.sort(ours.logits, axis=-1)[:, -2:]
    assert (top2[:, 1] - top2[:, 0]).min() > 1e-3  # no step was a near-tie


def test_designs_answers(book):
    g = book.generate(chat_prompt(book), 20)
    assert book.decode(g.tokens, skip_special=True).startswith("The capital of France is Paris")
    last = book.model.forward(book.encode("The cat sat on the mat. The cat sat on the"),
                              logits_from=-1).logits[0]
    assert book.tokenizer.tokens[int(last.argmax())] == "Ġmat"


def test_top_k_top_p_are_transformers_warpers():
    from transformers.generation.logits_process import TopKLogitsWarper, TopPLogitsWarper

    logits = np.random.default_rng(0).normal(scale=2, size=(4, 50))
    for k, p in ((5, None), (None, 0.8), (10, 0.5), (1, 0.3)):
        z = torch.from_numpy(logits.copy())
        if k is not None:
            z = TopKLogitsWarper(k)(None, z)
        if p is not None:
            z = TopPLogitsWarper(p)(None, z)
        np.testing.assert_array_equal(top_k_top_p(logits, k, p), z.numpy())


def test_the_tiny_model_too(tmp_path):
    path = smollm.write_tiny_gguf(tmp_path / "tiny.gguf", seed=5)
    book = smollm.SmolLM.load(path, cache=False)
    model, tok = smollm.transformers_model(path)
    for text in ("The cat sat on the mat.", "x = [1, 2, 3] 😀"):
        ids = book.encode(text)
        assert ids.tolist() == tok(text).input_ids
        logits, maps = smollm.torch_logits(model, ids)
        out = book.model.forward(ids)
        assert np.abs(out.logits - logits).max() < 1e-3 and np.abs(_maps(out) - maps).max() < 1e-4
