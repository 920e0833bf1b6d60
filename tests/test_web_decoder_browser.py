"""Chapter 10's lab in chromium (slow), as a reader uses it: the lab's own page
(``controls.web.standalone_html``, its scripts and the tiny model's gallery inlined) with
the tiny GGUF beside it where the site keeps SmolLM2's (``_static/ab-web/``).

- Over http: the first state is the gallery's; "Load" fetches the file in the Worker, with
  its progress said; then held-out prompts, a chat turn, sampling and heads switched off
  draw Python's states within the engine's parity bounds (maps 1e-4, probabilities 1e-3),
  the same tokens; a stop button ends a generation between two steps.
- As ``file://``: the file picker loads the same file and the states are the same.
- Bad input, each a message in the page and no console error: an empty prompt, one past 128
  tokens, markup (shown as text, nothing run), files that are no GGUF the engine runs.
- No request leaves the page's own files.

SmolLM2 itself, in the built book: ``test_smollm2_in_the_built_book`` (needs `make book`).
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from attention_book import smollm
from attention_book.controls import web_lab
from attention_book.controls.web import standalone_html
from attention_book.scenes import decoder as lab
from attention_book.scenes.core import to_js
from conftest import PageWatch
from llama_js import serve
from node_driver import page_function
from test_web_decoder import HELD_OUT, MAPS_TOL, P_TOL, close, python, values

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")]

#: In the page: set every control to `values` (one drawing), wait until the model has
#: nothing under way (a generation, a logit lens), and return the state shown, its arrays
#: as {typed, f8} (float64 bytes, base64), the readout's text and elements, the status line.
SHOW_JS = page_function("decoderShow")

STATUS_JS = "() => AttentionBook.decoder.model.status"


@pytest.fixture(scope="module")
def page_folder(tiny_decoder, tmp_path_factory):
    """The lab's page and the tiny GGUF where the built site keeps the model."""
    path, model, gallery = tiny_decoder
    folder = tmp_path_factory.mktemp("decoder-page")
    (folder / "data").mkdir()
    shutil.copy(gallery, folder / "data" / "decoder-gallery.js")
    (folder / "_static" / "ab-web").mkdir(parents=True)
    shutil.copy(path, folder / "_static" / "ab-web" / path.name)
    (folder / "favicon.ico").write_bytes(b"")  # chromium asks a server for one
    (folder / "decoder.html").write_text(
        standalone_html(web_lab("decoder", layer=1, head=2), title="decoder", data=folder / "data"),
        encoding="utf-8")
    return folder


def show(page, v: dict) -> dict:
    shown = page.evaluate(SHOW_JS, [{k: v[k] for k in v}])
    assert shown["elements"] == 0 and shown["title"] != "ran", shown  # nothing typed ran
    return shown


def check_states(page, scene, rows) -> None:
    for v in rows:
        shown = show(page, v)
        close(shown["state"], to_js(python(scene, v)), json.dumps(v)[:120], MAPS_TOL, P_TOL)


def loaded(page) -> str:
    page.wait_for_function(f"({STATUS_JS})() === 'ready' || ({STATUS_JS})() === 'failed'", timeout=120_000)
    return page.evaluate(STATUS_JS)


def test_over_http(browser, page_folder, decoder_scene, tiny_decoder, tmp_path):
    watch = PageWatch(browser)
    try:
        with serve(page_folder) as base:
            page = watch.open(f"{base}/decoder.html")
            page.wait_for_function("document.querySelector('.ab-lab').abLab?.draws > 0")
            first = show(page, values())
            assert first["state"]["T"] > 0 and "book's own numbers" in first["status"]
            close(first["state"], to_js(python(decoder_scene, values())), "first", 1e-5, 1e-5)
            page.evaluate(page_function("decoderRecordProgress"))
            page.click("button.ab-load-model")
            assert loaded(page) == "ready"
            seen = page.evaluate("window.seen")
            assert seen and seen[-1][0] == seen[-1][1] == tiny_decoder[0].stat().st_size  # progress, to the end
            status = page.text_content(".ab-model-status")
            assert "tiny.gguf is loaded (2 layers" in status and "Type any prompt" in status
            check_states(page, decoder_scene, [
                values(prompt=HELD_OUT[0], n_new=8, t=5),
                values(prompt=HELD_OUT[1], n_new=8, t=8, view="model", head=3),
                values(prompt=HELD_OUT[2], n_new=6, t=2, view="lens", layer=0),
                values(prompt="Hi, who are you?", chat=True, n_new=6, t=4),
                values(prompt=HELD_OUT[0], decoding="sampled", temperature=0.7, top_k=20,
                       top_p=0.9, seed=5, n_new=10, t=7),
                values(prompt=HELD_OUT[1], off="group", head=3, n_new=6, t=6),
                values(prompt=HELD_OUT[1], off="induction", n_new=6, t=6)])
            # the stop button, between two steps. The tiny model writes its 24 tokens in a few
            # ms, faster than a "stop" reaches its worker (a fresh-clone run saw all 24
            # written): the check runs a larger random model (8 layers, d = 512; ~6 ms a
            # token), read from the file picker as a reader's own GGUF.
            heavy = smollm.write_tiny_gguf(tmp_path / "larger.gguf", seed=3, n_layers=8, d=512,
                                           h=8, g=4, d_ff=1536, context=256)
            page.set_input_files("input.ab-gguf-file", str(heavy))
            assert loaded(page) == "ready"
            page.evaluate(page_function("decoderStopEarly"))
            stopped = show(page, values(prompt="A prompt to stop early.", n_new=24, t=24, layer=7))
            notes = [n["text"] for n in stopped["state"]["notes"]]
            assert any(t.startswith("stopped after ") for t in notes), notes
            assert 1 <= stopped["state"]["t"] < 24
            watch.settle()
        assert not watch.console_errors and not watch.outside, (watch.console_errors, watch.outside)
    finally:
        watch.close()


def test_as_file_with_the_picker(browser, page_folder, decoder_scene, tiny_decoder):
    watch = PageWatch(browser)
    try:
        page = watch.open((page_folder / "decoder.html").as_uri())
        page.wait_for_function("document.querySelector('.ab-lab').abLab?.draws > 0")
        assert page.is_hidden("button.ab-load-model")  # no fetch from a page on disk
        assert "opened from your disk" in page.text_content(".ab-model-status")
        page.set_input_files("input.ab-gguf-file", str(tiny_decoder[0]))
        assert loaded(page) == "ready"
        check_states(page, decoder_scene, [values(prompt=HELD_OUT[0], n_new=8, t=5, view="model"),
                                   values(prompt=HELD_OUT[2], n_new=6, t=3, view="lens")])
        assert not watch.console_errors and not watch.outside, (watch.console_errors, watch.outside)
    finally:
        watch.close()


def test_bad_input_in_the_page(browser, page_folder, decoder_scene, tiny_decoder, tmp_path):
    """Each a message in the page (the readout or the status line), never an error."""
    watch = PageWatch(browser)
    try:
        with serve(page_folder) as base:
            page = watch.open(f"{base}/decoder.html")
            page.wait_for_function("document.querySelector('.ab-lab').abLab?.draws > 0")
            novel = show(page, values(prompt=HELD_OUT[0]))  # before the model: how to load it
            assert "load the model" in novel["caption"] and novel["state"]["T"] == 0
            for bad, words in (("not-gguf.gguf", "not a GGUF file"), ("q5.gguf", "is Q5_0")):
                if bad == "q5.gguf":
                    smollm.write_tiny_gguf(tmp_path / bad, types=("Q5_0",))
                else:
                    (tmp_path / bad).write_bytes(b"<html>404</html>" * 64)
                page.set_input_files("input.ab-gguf-file", str(tmp_path / bad))
                assert loaded(page) == "failed"
                assert words in page.text_content(".ab-model-status")
            page.set_input_files("input.ab-gguf-file", str(tiny_decoder[0]))
            assert loaded(page) == "ready"
            for prompt, words in (("", "Type a prompt for the model to continue."),
                                  ("word " * 200, "the limit is 128"),
                                  ("<script>document.title='ran'</script><b>x</b>", "<script>")):
                shown = show(page, values(prompt=prompt, n_new=3, t=1))
                assert words in shown["caption"], (prompt[:20], shown["caption"])
            assert show(page, values(layer=5))["caption"].endswith("layer must be a whole number in 0..1, got 5")
        assert not watch.console_errors and not watch.outside, (watch.console_errors, watch.outside)
    finally:
        watch.close()


@pytest.mark.skipif(not os.environ.get("ATTENTION_BOOK_BUILT"), reason="needs the built book "
                    "(make book; ATTENTION_BOOK_BUILT)")
def test_smollm2_in_the_built_book(browser, site, built_book):
    """Chapter 10's page over http: the lab fetches SmolLM2's 98 MB file from beside the site,
    and its states are the scene's (the numpy model) within the engine's bounds, its greedy
    tokens the same for the 24 steps the lab writes, on held-out prompts."""
    lab.decoder_generation.cache_clear()
    watch = PageWatch(browser)
    try:
        page = watch.open(f"{site}/chapters/10_decoder.html", idle=False)
        page.wait_for_function("document.querySelector('.ab-lab[data-ab-lab]')?.abLab?.draws > 0",
                               timeout=60_000)
        page.click("button.ab-load-model")
        assert loaded(page) == "ready", page.text_content(".ab-model-status")
        for v in (dict(lab.SCENE.defaults, prompt="My grandmother keeps her buttons in an old",
                       n_new=24, t=24, layer=18, head=6),
                  dict(lab.SCENE.defaults, prompt="Name three colours.", chat=True, n_new=16,
                       t=9, view="model"),
                  dict(lab.SCENE.defaults, prompt="The cat sat on the mat. The dog sat on the",
                       off="induction", view="lens", n_new=4, t=2)):
            shown = show(page, v)
            close(shown["state"], to_js(lab.decoder_state(**v)), json.dumps(v)[:100], MAPS_TOL, P_TOL)
        watch.settle()
        assert not watch.console_errors and not watch.outside, (watch.console_errors, watch.outside)
        assert Path(built_book / "_static" / "ab-web" / smollm.GGUF_FILE).stat().st_size > 90e6
    finally:
        watch.close()
