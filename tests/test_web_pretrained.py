"""Chapter 9's lab in the browser (``src/attention_book/web/pretrained.js``) against the
package's scene (``scenes/pretrained.py``).

In Node, with ``pretrained-gallery.js`` (:func:`attention_book.web_export.export_pretrained_gallery`)
and no model weights:

- the preset sentences at every layer and head and several queries: the head's weights
  within 1e-5 of ``pretrained_state``'s (they are its float32 numbers), the scores within
  1e-12, the downloaded numbers equal to Python's, the readout's HTML and the alt text equal
  to the module's of Python's state (``js_view``);
- text that the lab refuses (empty, blank, control characters only, over-long, not a string)
  and text cut to 128 tokens: the same tokens and notes as Python, and readout and alt text;
- any other sentence (held out: it appears nowhere in the book; unknown characters give
  [UNK]): Python's tokens and the query's choices, a note saying how to load the model;
- bad layer, head or query: Python's message.

In chromium (slow), from a page opened as file:// with the scripts beside it: the button
announces the weights file's size, loads the int8 file and starts the Web Worker; maps of
held-out sentences within the int8 file's measured loss of Python's (tests/test_web_minilm.py:
INT8_MAX_ABS); and a copy of the book without the weights file says how to get it back.
"""
from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from attention_book import web_export as W
from attention_book.pretrained import single_thread_attention
from attention_book.scenes.pretrained import (MAX_PRETRAINED_TOKENS, PRETRAINED_PRESETS,
                                              pretrained_query_options, pretrained_state,
                                              read_pieces)
from close_all import assert_close
from js_view import readout, views
from node_driver import NODE, page_function
from node_driver import run as node

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "src" / "attention_book" / "web"
TOL = 1e-5
#: tests/test_web_minilm.py's bound on the int8 file's loss (measured largest 0.032).
INT8_MAX_ABS = 0.05
INT8_MEAN_ABS = 0.001
INT8_NORM_MAX_ABS = 0.08  # tests/test_web_minilm.py: the norms' shares lose a little more

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH: these tests run "
                                "web/pretrained.js in Node.js")

#: Sentences that appear nowhere in the book, with markup, unknown characters and odd spacing.
HELD_OUT = [
    "My grandmother keeps her buttons in an old biscuit tin.",
    "The pianist played the sonata from memory, without a single mistake.",
    "pizza😀 is great, but 🫠 is not a word",
    "<b>x</b><script>alert(1)</script>",
    "Zebras eat 42 naïve cafés, don't they?",
    "ΣΟΦΙΑΣ ΟΔΟΣ İstanbul ﬁne Straße",
    "東京は日本の首都です。",
    "hello[SEP]world [MASK]",
    "  leading and trailing spaces  ",
]
#: Text the lab refuses or cuts.
BAD_TEXT = ["", "   ", "\n\t", "\x1c\x1f", "\x00\u200b\ufeff", "\ue000\u0301", "\U000e0001\u200d",
            "a" * 100_001, "😀" * 60_000, "the cat sat on the mat. " * 40, None, 42]

@pytest.fixture(scope="module")
def gallery_js(tmp_path_factory):
    path = tmp_path_factory.mktemp("gallery") / "pretrained-gallery.js"
    W.export_pretrained_gallery(path, PRETRAINED_PRESETS, max_tokens=MAX_PRETRAINED_TOKENS)
    return path


def run(gallery_js: Path, values: list) -> list[dict]:
    """What the page shows of each values (tests/js/pretrained.mjs's ``pretrained.states``)."""
    return node("pretrained.states", gallery_js, input=values)


def arr(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=np.float64)


def notes(state) -> list[dict]:
    return [{"level": n.level, "text": n.text} for n in state.notes]


def python_values(values: dict) -> dict:
    return {k: v for k, v in values.items() if k in ("text", "layer", "head", "query", "measure",
                                                      "view")}


# ------------------------------------------------------------------ the gallery file


def test_gallery_file_is_deterministic(gallery_js, tmp_path):
    again = tmp_path / "again.js"
    info = W.export_pretrained_gallery(again, PRETRAINED_PRESETS, max_tokens=MAX_PRETRAINED_TOKENS)
    assert again.read_bytes() == gallery_js.read_bytes()
    assert info == {"bytes": again.stat().st_size, "presets": len(PRETRAINED_PRESETS)}
    assert info["bytes"] < 600_000  # the page stays light until the reader asks for the model


def test_gallery_file_errors(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        W.export_pretrained_gallery(tmp_path / "no" / "g.js", PRETRAINED_PRESETS)
    with pytest.raises(ValueError, match="no weights file"):
        W.export_pretrained_gallery(tmp_path / "g.js", PRETRAINED_PRESETS,
                                    weights_js=tmp_path / "missing.js")
    with pytest.raises(ValueError, match="tokens long; the lab shows at most 5"):
        W.export_pretrained_gallery(tmp_path / "g.js", PRETRAINED_PRESETS, max_tokens=5)


def test_one_grid_size_checked_against_the_gallery(gallery_js):
    """The model's grid is written once (LAYERS, HEADS in labs/pretrained/data.js): it is the
    gallery file's model, and a gallery of another model is refused with a clear message."""
    out = node("pretrained.grid", gallery_js, timeout=120)
    assert out["grid"] == out["file"] == [6, 12], out
    assert "holds a model of 5 layers and 12 heads, but this pretrained.js draws 6 layers" in out["error"]


# ------------------------------------------------------------------ presets: equal to Python


@pytest.mark.parametrize("share", [pytest.param("one query a head", id="one-query-a-head"),
                                   pytest.param("the others", id="the-other-queries",
                                                marks=pytest.mark.slow)])
def test_presets_equal_python(gallery_js, share):
    """Every preset, layer and head at 4-5 queries; the edit loop takes one query of each
    head (in turn, so every kind of query, both measures and both views come up: 216
    states, 0.9 s of CPU), the slow tier the others (about 800 states)."""
    values = []
    for _, text, preset_query in PRETRAINED_PRESETS:
        T = len(read_pieces(text)[1])
        for layer in range(6):
            for head in range(12):
                queries = sorted({0, preset_query, T - 1, (layer * 12 + head) % T, 500})
                for k, query in enumerate(queries):
                    if (k == (layer * 12 + head) % len(queries)) != (share == "one query a head"):
                        continue
                    # both measures on every head; the model view on one head in five
                    values.append({"text": text, "layer": layer, "head": head, "query": query,
                                   "measure": ("weight", "norm")[(head + k) % 2],
                                   "view": "model" if (layer * 12 + head + k) % 5 == 0 else "head"})
    assert {v["measure"] for v in values} == {"weight", "norm"}
    assert {v["view"] for v in values} == {"head", "model"} and 500 in {v["query"] for v in values}
    assert len({(v["text"], v["layer"], v["head"]) for v in values}) == 3 * 72
    got = run(gallery_js, values)
    assert len(got) == len(values) >= 3 * 72 * (1 if share == "one query a head" else 3)
    states = [pretrained_state(**v) for v in values]
    for v, g, st, view in zip(values, got, states, views("pretrained", *states), strict=True):
        assert g["source"] == "package", v
        assert g["tokens"] == list(st.tokens) and g["query"] == st.query, v
        assert_close(arr(g["weights"]), st.weights.ravel(), atol=TOL, err_msg=v)
        for name in ("norms", "shown", "thumbs"):
            assert_close(arr(g[name]), getattr(st, name).ravel(), atol=TOL, err_msg=(v, name))
        assert_close(arr(g["valueNorms"]), st.value_norms, atol=TOL, err_msg=v)
        assert g["differs"] == st.differs, v
        for name, value in st.scores.items():
            assert abs(g["scores"][name] - value) <= 1e-12, (v, name)
        for name, value in st.gallery.items():
            assert g["gallery"][name] == value, (v, name)
        assert g["notes"] == notes(st), v
        assert g["readout"] == view["readout"] and g["alt"] == view["alt"], v
        assert g["numbers"]["tokens"] == list(st.tokens)
        assert_close(np.array(g["numbers"]["weights"]), st.weights, atol=TOL, err_msg=v)
        assert g["choices"] == [list(c) for c in pretrained_query_options(v)]
        assert_close(np.array(g["numbers"]["weighted_norms"]), st.norms, atol=TOL, err_msg=v)
        if st.view == "model":
            assert g["figure"] == [["thumbs", 6, 12], ["heatmap", st.T, st.T], ["arcs", None, None]]
        else:
            assert g["figure"] == [["heatmap", st.T, st.T], ["arcs", None, None], ["bars", 2, 6]]
    assert {(v["measure"], v["view"]) for v in values} == {
        (m, w) for m in ("weight", "norm") for w in ("head", "model")}


# ------------------------------------------------------------------ refused and cut text


def test_bad_and_cut_text_equal_python(gallery_js):
    values = [{"text": t, "layer": 2, "head": 5, "query": 3} for t in BAD_TEXT]
    got = run(gallery_js, values)
    states = [pretrained_state(**v) for v in values]
    refused = iter(views("pretrained", *[st for st in states if not st.T]))  # one Node run
    for v, g, st in zip(values, got, states, strict=True):
        assert g["tokens"] == list(st.tokens), v["text"] if isinstance(v["text"], int) else repr(v["text"])[:60]
        assert g["notes"][:len(st.notes)] == notes(st), repr(v["text"])[:60]
        if not st.T:  # refused: the very readout and alt text
            assert st.notes and st.notes[0].level == "error"
            view = next(refused)
            assert g["readout"] == view["readout"], repr(v["text"])[:60]
            assert g["alt"] == view["alt"], repr(v["text"])[:60]
            assert g["figure"] == [["heatmap", 0, 0], ["arcs", None, None], ["bars", 1, 6]]
        else:  # read (60,000 emoji: 120,000 UTF-16 units but 60,000 characters) or cut to
            # 128 tokens (Python's warning): then how to load the model
            assert g["source"] == "pending" and "Load the model" in g["notes"][-1]["text"]
            assert len(st.notes) == (st.total_tokens > MAX_PRETRAINED_TOKENS)
        assert g["choices"] == [list(c) for c in pretrained_query_options(
            {"text": v["text"] if isinstance(v["text"], str) else v["text"]})]
    assert sum(1 for st in states if not st.T) >= 10


def test_held_out_sentences_before_the_model(gallery_js):
    """Any other sentence: Python's tokens ([UNK] for unknown characters), its query
    choices, and a note on how to load the model, its size included when known."""
    values = [{"text": t, "layer": 4, "head": 7, "query": 1} for t in HELD_OUT]
    got = run(gallery_js, values)
    for v, g in zip(values, got):
        st = pretrained_state(**v)
        assert g["tokens"] == list(st.tokens), v["text"]
        assert g["source"] == "pending"
        assert g["notes"][-1]["level"] == "info" and "Load the model" in g["notes"][-1]["text"]
        assert g["choices"] == [list(c) for c in pretrained_query_options(v)]
        assert g["numbers"]["weights"] == [] and g["numbers"]["tokens"] == list(st.tokens)
        assert "the model has not run on this sentence yet" in g["alt"]
        assert g["figure"][0] == ["heatmap", 0, 0]
    assert "[UNK]" in got[2]["tokens"]
    # the model view before the model: an empty grid, said so (the twin of Python's no-token alt)
    [pending] = run(gallery_js, [{"text": HELD_OUT[0], "layer": 4, "head": 7, "query": 1,
                                  "measure": "norm", "view": "model"}])
    assert pending["figure"] == [["thumbs", 6, 12], ["heatmap", 0, 0], ["arcs", None, None]]
    assert pending["alt"].startswith("Panel 1: the model view's grid of 72 heads (6 layers by "
                                     "12 heads), empty. Empty heatmap and arcs (panels 2 and 3)")
    assert arr(pending["thumbs"]).size == 0 and "Load the model" in pending["notes"][-1]["text"]
    assert "0:[CLS] 1:&lt; 2:b 3:&gt;" in got[3]["readout"] and "<script" not in got[3]["readout"]


def test_bad_values_same_message(gallery_js):
    text = PRETRAINED_PRESETS[0][1]
    bad = [{"layer": 6}, {"layer": -1}, {"head": 12}, {"head": 2.5}, {"query": -1},
           {"layer": True}, {"head": "3"}, {"query": None}, {"layer": [1]},
           {"measure": "weights"}, {"measure": None}, {"view": "all"}, {"view": 72},
           {"view": ["model"]}]
    values = [{"text": text, "layer": 0, "head": 0, "query": 0, **b} for b in bad]
    got = run(gallery_js, values)
    for v, g in zip(values, got):
        with pytest.raises(ValueError) as err:
            pretrained_state(**v)
        assert g == {"error": str(err.value)}, v


def test_python_repr_of_odd_text(gallery_js):
    """The refusal of text with no readable character quotes it as Python's repr does."""
    rng = np.random.default_rng(3)
    pieces = ["\x00", "\x07", "\x1b", "\x7f", "\x85", "\xad", "\u200b", "\u200d", "\u2028",
              "\ufeff", "\ue000", "\U000e0001", "\U000f0000", "\u0301", "\u0308", "'", '"',
              "\\", "\t", "\r", "\u3000", "\u00a0"]
    texts = ["".join(rng.choice(pieces, size=int(rng.integers(1, 8)))) for _ in range(150)]
    texts = [t for t in texts if t.strip()]
    out = node("pretrained.pyRepr", input=texts)
    assert out == [repr(t) for t in texts]


def test_pairwise_sum_is_numpys(gallery_js):
    rng = np.random.default_rng(5)
    arrays = [rng.random(n) for n in (1, 5, 7, 8, 9, 16, 17, 31, 64, 127, 128, 129, 130, 300)]
    out = node("pretrained.pairwiseSum", input=[a.tolist() for a in arrays])
    assert out == [float(a.sum()) for a in arrays]  # bit for bit


# ------------------------------------------------------------------ in chromium, with the model

PAGE = """<!doctype html><meta charset="utf-8"><title>pretrained</title>
<div id="extra"></div>
<script src="lab.js"></script><script src="pretrained-gallery.js"></script><script src="pretrained.js"></script>
<script>
window.updates = 0;
AttentionBook.pretrained.mountExtra({update: function () { window.updates++; }},
                                    document.getElementById("extra"));
</script>
"""



def _site(folder: Path, *, weights: Path | None) -> Path:
    """The lab's scripts in one folder (as _static/ab-web/), with or without the weights."""
    for name in ("lab.js", "pretrained.js"):  # the front end, the lab's bundle
        shutil.copy(WEB / name, folder / name)
    if weights is not None:
        shutil.copy(weights, folder / "minilm-weights.js")
    W.export_pretrained_gallery(folder / "pretrained-gallery.js", PRETRAINED_PRESETS,
                                weights_js=weights, max_tokens=MAX_PRETRAINED_TOKENS)
    (folder / "index.html").write_text(PAGE, "utf-8")
    return folder / "index.html"


@pytest.fixture(scope="module")
def int8_js(web_data):
    """MiniLM's int8 weights as the book ships them (export_browser_weights(path, "int8"))."""
    return web_data / "minilm-weights.js"


@pytest.mark.slow
@pytest.mark.browser
def test_chromium_loads_the_model_and_runs_new_sentences(browser, tmp_path, int8_js):
    page_path = _site(tmp_path, weights=int8_js)
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(page_path.as_uri())
    button = page.locator("button.ab-load-model")
    size = f"{int8_js.stat().st_size / 1e6:.1f} MB"
    assert button.text_content() == f"Load the model ({size})"
    before = page.evaluate("AttentionBook.pretrained.state({text: 'A quiet harbour at dusk.'}).source")
    assert before == "pending"
    button.click()
    page.wait_for_function("AttentionBook.pretrained.modelStatus().status === 'ready'", timeout=180_000)
    assert "Model loaded" in page.locator(".ab-model-status").text_content()
    assert page.evaluate("window.updates") >= 1  # the lab was told to redraw
    texts = HELD_OUT[:4] + [PRETRAINED_PRESETS[1][1]]
    reply = page.evaluate(page_function("pretrainedMaps"), texts)
    page.close()
    assert errors == []
    assert reply["status"]["worker"] is True and reply["status"]["dtype"] == "int8"
    diffs = []
    for text, got in zip(texts, reply["out"]):
        st = pretrained_state(text, 0, 0, 0)
        assert got["tokens"] == list(st.tokens), text
        assert got["lookups"] == 72  # a change of layer or head is a lookup, no model run
        maps = np.frombuffer(base64.b64decode(got["maps"]), "<f4").reshape(6, 12, st.T, st.T)
        shares = np.frombuffer(base64.b64decode(got["shares"]), "<f4").reshape(6, 12, st.T, st.T)
        want = single_thread_attention(text)
        model_view = pretrained_state(text, 3, 1, 1, measure="norm", view="model")
        want_shares = model_view.thumbs.reshape(6, 12, st.T, st.T)
        if text == PRETRAINED_PRESETS[1][1]:  # a preset: the package's own numbers
            assert got["source"] == "package" and not got["promised"]
            np.testing.assert_allclose(maps, want, atol=TOL, rtol=0)
            np.testing.assert_allclose(shares, want_shares, atol=TOL, rtol=0)
            assert got["readout"] == readout("pretrained", st)
            continue
        assert got["source"] == "browser" and got["promised"], text
        diff = np.abs(maps - want)
        assert diff.max() <= INT8_MAX_ABS, text
        assert np.abs(shares - want_shares).max() <= INT8_NORM_MAX_ABS, text  # the norms' view
        diffs.append(diff.mean())
        assert "int8 weights" in got["readout"]
    assert np.mean(diffs) <= INT8_MEAN_ABS


@pytest.mark.slow
@pytest.mark.browser
def test_chromium_missing_weights_file(browser, tmp_path):
    """A copy of the book without minilm-weights.js: the page says so once, to the reader,
    and tells a developer in the console how to make the file."""
    page_path = _site(tmp_path, weights=None)
    page = browser.new_page()
    warnings = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    page.goto(page_path.as_uri())
    button = page.locator("button.ab-load-model")
    assert button.text_content() == "Load the model"  # no size known without the file
    button.click()
    page.wait_for_function("AttentionBook.pretrained.modelStatus().status === 'missing'", timeout=30_000)
    status = page.locator(".ab-model-status").text_content()
    readout = page.evaluate("AttentionBook.pretrained.readoutHtml("
                            "AttentionBook.pretrained.state({text: 'A quiet harbour at dusk.'}))")
    preset = page.evaluate("AttentionBook.pretrained.state({text: %s}).source"
                           % json.dumps(PRETRAINED_PRESETS[0][1]))
    page.close()
    # said once, to the reader (the developer's details go to the console)
    assert "could not be loaded" in status and "not part of this copy" not in status
    assert "not part of this copy of the book" in readout and "make book" not in readout
    assert preset == "package"  # the presets still work
    told = [w for w in warnings if "minilm-weights.js is missing" in w]
    assert told and "make book" in told[0] and "export_browser_weights" in told[0], \
        warnings
