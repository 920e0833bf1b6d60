"""Chapter 10's lab in the browser (``web/src/labs/decoder.js``) against the package's scene
(``scenes/decoder.py``), on the tests' tiny llama GGUF (``smollm.write_tiny_gguf``): the
scene runs it in numpy (its model swapped in), the page in the llama engine.

In Node (tests/js/decoder.mjs's ``decoder.run``), the default tier:

- the gallery file (``web_export.export_decoder_gallery`` of the tiny model): every preset at
  several steps, layers, heads and views is Python's state within 1e-5 (its maps are uint16);
  the module draws Python's state (decoded as the notebook's widget decodes it) as its own;
- the model loaded in the page (the engine in the same thread, as the page's Worker runs it):
  held-out prompts, a chat turn, sampling and every way of switching heads off give Python's
  tokens, ids and text exactly, and maps within 1e-4, probabilities within 1e-3 (the
  engine's parity bounds: it computes from the quantised blocks);
- bad input: an empty or blank prompt, one past the lab's 128 tokens, markup (shown as text,
  escaped), a layer or head outside the model, each with Python's message; before the model
  is loaded a prompt of the reader's says how to load it;
- a reader's own GGUF that is not one the engine runs gets the engine's message, and the lab
  still shows the gallery.

In chromium (slow): tests/test_web_decoder_browser.py.
"""
from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest

from attention_book import smollm
from attention_book.scenes import decoder as lab
from attention_book.scenes.core import to_js
from attention_book.web_export import DATA, export_decoder_gallery
from conftest import TINY_INDUCTION as INDUCTION
from node_driver import NODE, wire
from node_driver import run as node

ROOT = Path(__file__).resolve().parents[1]
#: The tiny model's shape (write_tiny_gguf): 2 layers of 4 query heads over 2 key/value heads.
LAYERS, HEADS = 2, 4
#: The page's numbers from the gallery: Python's float32 maps as uint16 (7.7e-6 at most).
GALLERY_TOL = 1e-5
#: The page's numbers from its model: the engine's parity bounds against numpy.
MAPS_TOL, P_TOL = 1e-4, 1e-3
MAP_KEYS = {"weights", "row", "rows", "group_rows"}

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH: these tests run "
                                "web/src/labs/decoder.js in Node.js")


def values(**kw) -> dict:
    return {**lab.SCENE.defaults, "layer": 1, "head": 2, **kw}


def run(gallery: Path, rows: list, gguf: Path | None = None) -> dict:
    """The driver's answer for ``rows`` (values, or {values, py})."""
    rows = [r if "values" in r else {"values": r} for r in rows]
    return node("decoder.run", gallery, gguf or "-", input=rows)


def python(scene, v):
    """Python's state of ``v`` (as the live lab sends it), or its ValueError."""
    try:
        return scene.decoder_state(**v)
    except ValueError as err:
        return err


def close(js, py, where: str, maps: float, probabilities: float, key: str = "") -> None:
    """The page's value ``js`` (the driver's) is Python's ``py`` (to_js's): the same texts,
    flags, ids and lists; arrays of the same length, maps within ``maps``; other numbers
    (probabilities) within ``probabilities``."""
    if isinstance(js, dict) and "typed" in js:
        got = np.frombuffer(base64.b64decode(js["f8"]), dtype=np.float64)
        assert isinstance(py, dict) and "$array" in py, (where, py)
        want = np.frombuffer(py["buffer"], dtype=py["$array"]).astype(np.float64)
        assert got.shape == want.shape, (where, got.shape, want.shape)
        np.testing.assert_allclose(got, want, atol=maps, rtol=0, err_msg=where)
    elif isinstance(js, dict):
        assert isinstance(py, dict) and js.keys() <= py.keys(), (where, sorted(js.keys() - py.keys()))
        for k in js:
            close(js[k], py[k], f"{where}.{k}", maps, probabilities, k)
    elif isinstance(js, list):
        assert isinstance(py, list) and len(js) == len(py), (where, js, py)
        for i, (a, b) in enumerate(zip(js, py)):
            close(a, b, f"{where}[{i}]", maps, probabilities, key)
    elif isinstance(js, float) or isinstance(py, float):
        assert abs(js - py) <= (maps if key in MAP_KEYS else probabilities), (where, js, py)
    else:
        assert js == py and type(js) is type(py), (where, js, py)


NUMBER = re.compile(r"-?\d+\.\d+")


def same_text(a: str, b: str, where) -> None:
    """Two texts equal but for their printed decimals, each within one unit of its last
    digit (a number a hair from a rounding edge may print either way)."""
    pa, pb = NUMBER.split(a), NUMBER.split(b)
    assert pa == pb, (where, a, b)
    for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)):
        unit = 10.0 ** -len(x.split(".")[1])
        assert abs(float(x) - float(y)) <= unit * 1.001, (where, x, y)


def compare(scene, rows, out, maps, probabilities) -> int:
    """Each driver state against Python's; returns how many were states."""
    n = 0
    for v, got in zip(rows, out["states"], strict=True):
        v = v.get("values", v)
        want, where = python(scene, v), json.dumps(v)[:160]
        if isinstance(want, ValueError):
            assert got == {"error": str(want)}, where
            continue
        assert "state" in got, (where, got)
        close(got["state"], to_js(want), where, maps, probabilities)
        n += 1
    return n


# ------------------------------------------------------------------ the gallery


def gallery_values():
    """Every preset at several steps, layers, heads and views (and one past its end)."""
    out = []
    for k, (prompt, chat, decoding, temperature, top_k, top_p, seed, off) in enumerate(
            lab.DECODER_PRESETS):
        for t, layer, head, view in ((1, 0, 0, "head"), (5, 1, 3, "model"), (12, 1, 2, "lens"),
                                     (3, 0, 1, "lens"), (20, 1, 1, "head")):
            out.append(values(prompt=prompt, chat=chat, decoding=decoding, temperature=temperature,
                              top_k=top_k, top_p=top_p, seed=seed, off=off, t=t, layer=layer,
                              head=head, view=view, n_new=24 if k == 0 else 12))
    return out


def test_the_gallery_is_pythons_state(decoder_scene, tiny_decoder):
    """Without the model, the presets' states are Python's (within the gallery's uint16), and
    the module draws Python's state as it draws its own (what the notebook shows)."""
    _, _, gallery = tiny_decoder
    rows = [{"values": v, "py": wire(to_js(decoder_scene.decoder_state(**v)))}
            for v in gallery_values()]
    out = run(gallery, rows)
    assert out["load"] is None
    assert compare(decoder_scene, rows, out, GALLERY_TOL, GALLERY_TOL) == len(rows)
    for row, got in zip(rows, out["states"]):
        assert not any("load the model" in n["text"] for n in got["state"]["notes"]), row["values"]
        for part in ("readout", "alt", "kinds"):
            same_text(str(got["drawn"][part]), str(got[part]), (part, row["values"]))


def test_the_gallery_file(tiny_decoder, tmp_path):
    """Deterministic, light, and the file the lab's module and web_export.DATA name."""
    path, model, gallery = tiny_decoder
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lab, "induction_heads", lambda model=None: INDUCTION)
        info = export_decoder_gallery(tmp_path / "again.js", model=model)
    assert (tmp_path / "again.js").read_bytes() == gallery.read_bytes()
    assert info == {"bytes": gallery.stat().st_size, "presets": len(lab.DECODER_PRESETS)}
    data = json.loads(gallery.read_text().split("\n", 6)[6].rstrip(");\n"))
    assert data["model"] == {"file": "tiny.gguf", "bytes": path.stat().st_size, "n_layers": 2,
                             "h": 4, "g": 2, "d": 64, "vocab": 299}
    assert data["induction"] == [[1, 2]] and data["max_lab_tokens"] == lab.MAX_LAB_TOKENS
    assert [p["n_new"] for p in data["presets"]] == [24] + [12] * (len(lab.DECODER_PRESETS) - 1)
    assert DATA["decoder"][0] == ("decoder-gallery.js", smollm.GGUF_FILE)
    module = (ROOT / "src/attention_book/web/src/labs/decoder.js").read_text()
    assert f'requestData: ["{smollm.GGUF_FILE}"]' in module


# ------------------------------------------------------------------ the model in the page

#: Prompts that appear nowhere in the book, with markup, accents, emoji and spacing.
HELD_OUT = ["My grandmother keeps her buttons in an old biscuit tin.",
            "naïve café 😀 <b>x</b> and   spaces", "def f(x):\n    return x ** 2  # 42"]


def model_values():
    out = []
    for k, prompt in enumerate(HELD_OUT):
        out += [values(prompt=prompt, n_new=8, t=t, view=view, layer=t % 2, head=(t + k) % 4)
                for t, view in ((1, "head"), (4, "model"), (8, "lens"))]
    out += [values(prompt="Hi, who are you?", chat=True, n_new=6, t=3),
            values(prompt=HELD_OUT[0], decoding="sampled", temperature=0.7, top_k=20, top_p=0.9,
                   seed=5, n_new=10, t=7, view="lens"),
            values(prompt=HELD_OUT[0], decoding="sampled", temperature=1.5, top_k=5, seed=1,
                   n_new=10, t=10)]
    out += [values(prompt=HELD_OUT[1], off=off, head=3, n_new=6, t=6, view="model")
            for off in ("head", "group", "layer", "induction")]
    out.append(values(prompt=lab.DECODER_PROMPTS[1], n_new=20, t=18))  # a preset, past the gallery
    return out


def test_the_model_in_the_page_is_pythons(decoder_scene, tiny_decoder):
    """The tiny GGUF loaded by the page's engine: every state Python's within the engine's
    parity bounds, with the same tokens; the gallery's model recognised."""
    path, _, gallery = tiny_decoder
    rows = model_values()
    out = run(gallery, rows, path)
    assert out["load"]["status"] == "ready" and out["load"]["isGallery"], out["load"]
    assert compare(decoder_scene, rows, out, MAPS_TOL, P_TOL) == len(rows)
    sampled = [s["state"] for s in out["states"][10:12]]
    assert sampled[0]["ids"] != sampled[1]["ids"]
    assert [s["state"]["off"] for s in out["states"][12:16]] == [
        [[1, 3]], [[1, 2], [1, 3]], [[1, 0], [1, 1], [1, 2], [1, 3]], [list(INDUCTION[0])]]


# ------------------------------------------------------------------ bad input


def test_bad_input_gets_pythons_message(decoder_scene, tiny_decoder):
    """An empty, blank or missing prompt, one past 128 tokens, markup, a layer or head the
    model has not: Python's note or error, with and without the model; markup stays text."""
    path, _, gallery = tiny_decoder
    markup = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    rows = [values(prompt=p) for p in ("", "   \n\t", None)]
    rows += [values(prompt="word " * 200), values(prompt=markup, n_new=3, t=2),
             values(layer=LAYERS), values(head=HEADS), values(view="table"), values(t=0),
             values(seed=-1)]
    loaded = run(gallery, rows, path)
    assert compare(decoder_scene, rows, loaded, MAPS_TOL, P_TOL) == 5
    texts = [s["state"]["notes"][0]["text"] for s in loaded["states"][:4]]
    assert texts[:3] == ["Type a prompt for the model to continue."] * 3
    assert texts[3].startswith("The prompt has ") and "the limit is 128" in texts[3]
    shown = loaded["states"][4]
    assert "<script>" not in shown["readout"] and "&lt;script&gt;" in shown["readout"]
    assert "".join(shown["state"]["tokens"]).startswith(markup[:10])
    before = run(gallery, rows[:5])  # no model: a prompt of the reader's says how to load it
    assert [s["state"]["notes"][0]["text"] for s in before["states"][:3]] == texts[:3]
    for got in before["states"][3:5]:
        assert got["state"]["T"] == 0
        assert "load the model (0.1 MB) to run it in your browser" in got["state"]["notes"][0]["text"]


def test_a_file_the_engine_does_not_run(tiny_decoder, tmp_path):
    """A reader's own file that is not a llama GGUF of the types the engine reads: its
    message, and the gallery still answers."""
    path, _, gallery = tiny_decoder
    bad = {"not-gguf.gguf": b"<html>404</html>" * 64, "cut.gguf": path.read_bytes()[:5000]}
    smollm.write_tiny_gguf(tmp_path / "q5.gguf", types=("Q5_0",))
    smollm.write_tiny_gguf(tmp_path / "gpt2.gguf", architecture="gpt2")
    for name, data in bad.items():
        (tmp_path / name).write_bytes(data)
    want = {"not-gguf.gguf": "not a GGUF file", "cut.gguf": "truncated",
            "q5.gguf": "is Q5_0; the book computes with", "gpt2.gguf": '"gpt2" model'}
    for name, words in want.items():
        out = run(gallery, [values()], tmp_path / name)
        assert out["load"]["status"] == "failed" and words in out["load"]["message"], (name, out["load"])
        assert out["load"]["message"].startswith(name + ": ")
        assert out["states"][0]["state"]["T"] > 0  # the gallery's first state


# ------------------------------------------------------------------ token spellings


def readable_in_node(pieces: list[str]) -> list[str]:
    return node("decoder.readable", input=pieces, timeout=120)


def spelled(data: bytes) -> str:
    from attention_book.bpe import bytes_to_unicode

    table = bytes_to_unicode()
    return "".join(table[b] for b in data)


def test_token_spellings_are_pythons(tiny_decoder):
    """The page spells tokens as the scene does (_readable): every piece of the tiny
    vocabulary (its 256 bytes, merges and special tokens) and byte strings that are text,
    halves of characters, overlong forms, surrogates and control characters."""
    pieces = list(tiny_decoder[1].tokenizer.tokens)
    pieces += [spelled(b) for b in (
        "naïve – “quoted” 😀 東京".encode(), "😀".encode()[:2], "😀".encode()[1:], b"\xc0\xaf",
        b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x00\x07\t\r\n\x7f", b"a\xe2\x82", "\u0085\u00a0".encode())]
    pieces += ["<|im_start|>", "plain ascii", "not bytes: \u4e00"]
    assert readable_in_node(pieces) == [lab._readable(p) for p in pieces]
    assert lab._readable(spelled("😀".encode()[:2])) == "\\xf0\\x9f"
    assert lab._readable(spelled(" – ".encode())) == " – " and lab._readable("Ċ") == "\\n"
