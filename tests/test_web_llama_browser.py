"""The llama engine in chromium, in its Worker, as the page lab will run it (issue 42): over
http (the file fetched from the site, with progress) and from a page opened as file://
(the file from the picker, as a reader's own GGUF), on a tiny random llama GGUF.

- The same greedy tokens and attention rows as the numpy model, both ways.
- A stop between two steps ends the generation ("stopped").
- A bad file comes back from the worker as an error with its code, not a console error.
- No request leaves the machine (offline_context).

The real SmolLM2 file runs in tests/test_web_llama_smollm.py.
"""
from __future__ import annotations

import numpy as np
import pytest

from attention_book.smollm import SmolLM, write_tiny_gguf
from conftest import offline_context
from llama_js import NODE, RUN_IN_PAGE, serve, write_page

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(NODE is None, reason="Node.js (node) is not installed")]

ATTENTION_TOL = 1e-4


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The harness page and a tiny GGUF in one folder, served on 127.0.0.1."""
    folder = tmp_path_factory.mktemp("llama-page")
    write_page(folder)
    path = write_tiny_gguf(folder / "tiny.gguf", types=("Q4_1", "Q8_0", "Q4_0", "F16", "F32"),
                           context=256)  # room for the chat template's 63 tokens
    (folder / "not-a-model.gguf").write_bytes(b"<html>404</html>")
    (folder / "cut.gguf").write_bytes(path.read_bytes()[:5000])
    with serve(folder) as base:
        yield folder, base, SmolLM.load(path, cache=False)


def _page(browser, outside):
    context = offline_context(browser, outside)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return context, page, errors


def _run(page, *, url=None, ids=None, prompt=None, options=None, keep=False, stop_at=None,
         lens_at=None):
    return page.evaluate(RUN_IN_PAGE, {"url": url, "ids": ids, "prompt": prompt, "options": options or {},
                                       "keep": keep, "stopAt": stop_at, "lensAt": lens_at})


def _check_against_numpy(out, model, ids, n_new):
    assert "error" not in out, out.get("error")
    assert out["info"]["backend"] == "wasm"
    tokens = [s["id"] for s in out["steps"] if s["kind"] == "token"]
    assert tokens == list(model.model.generate(ids, n_new).tokens)
    full = model.model.forward(list(ids) + tokens)
    maps = np.stack(full.weights)  # (L, h, S, S)
    c = model.config
    for k, step in enumerate(s for s in out["steps"] if s["kind"] == "token"):
        S = len(ids) + k + 1
        row = np.array(step["attention"]).reshape(c.n_layers, c.h, S)
        assert np.abs(row - maps[:, :, S - 1, :S]).max() < ATTENTION_TOL


def test_over_http(browser, served):
    folder, base, model = served
    outside = []
    context, page, errors = _page(browser, outside)
    try:
        page.goto(f"{base}/index.html")
        ids = list(model.tokenizer.encode("The cat sat on the"))
        out = _run(page, url=f"{base}/tiny.gguf", ids=ids, keep=True,
                   options={"generate": {"maxNew": 16, "stop": None}})
        _check_against_numpy(out, model, ids, 16)
        size = (folder / "tiny.gguf").stat().st_size
        assert out["progress"][-1] == [size, size]  # the worker fetched it, telling the page
        # the tokenizer and the chat template run in the worker too: the numpy model's ids;
        # and the logit lens of a step: each layer's top token, as LlamaModel.logit_lens
        again = _run(page, url=f"{base}/tiny.gguf", prompt={"text": "The cat sat on the"},
                     options={"generate": {"maxNew": 1}})
        assert again["ids"] == ids
        messages = [{"role": "user", "content": "Hi <b>there</b>"}]
        chat = _run(page, url=f"{base}/tiny.gguf", prompt={"messages": messages}, lens_at=1,
                    options={"generate": {"maxNew": 3, "stop": None, "hidden": True}})
        assert "error" not in chat, chat.get("error")
        assert chat["ids"] == list(model.tokenizer.encode(model.chat(messages)))
        written = [s["id"] for s in chat["steps"] if s["kind"] == "token"]
        hidden = model.model.forward(chat["ids"] + written[:2], hidden=True).hidden[:, -1]
        top, p = model.model.logit_lens(hidden, 3)
        assert [[t["id"] for t in layer] for layer in chat["lens"]["layers"]] == top.tolist()
        assert np.allclose([[t["p"] for t in layer] for layer in chat["lens"]["layers"]], p, atol=1e-4)
        for name, code in [("not-a-model.gguf", "not-gguf"), ("cut.gguf", "truncated")]:
            bad = _run(page, url=f"{base}/{name}", ids=ids)
            assert bad["error"]["code"] == code, bad
        # text past the worker's limit, and a prompt of markup: refused, and kept as text
        long = _run(page, url=f"{base}/tiny.gguf", prompt={"text": "word " * 5000})
        assert long["error"]["code"] == "long-prompt" and "at most 20,000" in long["error"]["message"]
        markup = _run(page, url=f"{base}/tiny.gguf", prompt={"text": "<img src=x onerror=alert(1)>"},
                      options={"generate": {"maxNew": 2}})
        assert markup["ids"] == list(model.tokenizer.encode("<img src=x onerror=alert(1)>"))
        stopped = _run(page, url=f"{base}/tiny.gguf", ids=ids, stop_at=2,
                       options={"generate": {"maxNew": 40, "stop": None}})
        assert stopped["reason"] == "stopped"
        # the worker runs on while the stop travels (a tiny model's step is ~1 ms): it ends
        # at the first step boundary after the message arrives, well before the 40th token
        assert 3 <= sum(s["kind"] == "token" for s in stopped["steps"]) < 20
    finally:
        context.close()
    assert errors == [] and outside == []


def test_from_file_url_with_the_picker(browser, served):
    folder, _, model = served
    outside = []
    context, page, errors = _page(browser, outside)
    try:
        page.goto((folder / "index.html").as_uri())
        page.set_input_files("#file", str(folder / "tiny.gguf"))
        ids = list(model.tokenizer.encode("What is the capital of France?"))
        out = _run(page, ids=ids, keep=True, options={"generate": {"maxNew": 12, "stop": None}})
        _check_against_numpy(out, model, ids, 12)
        page.set_input_files("#file", str(folder / "not-a-model.gguf"))
        assert _run(page, ids=ids)["error"]["code"] == "not-gguf"
    finally:
        context.close()
    assert errors == [] and outside == []


def test_a_missing_model_file(browser, served):
    """A site without the model file: the worker's fetch answers code "fetch" (HTTP 404); the
    browser's own network line is the only console error."""
    folder, base, model = served
    outside = []
    context, page, errors = _page(browser, outside)
    try:
        page.goto(f"{base}/index.html")
        out = _run(page, url=f"{base}/missing.gguf", ids=[5])
        assert out["error"]["code"] == "fetch" and "HTTP 404" in out["error"]["message"]
    finally:
        context.close()
    assert all("404" in e for e in errors) and outside == []
