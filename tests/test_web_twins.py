"""The twin contract: for every lab, the scene's Python state, serialised as the live lab
sends it (:func:`attention_book.scenes.core.to_js`), equals the state the browser's module
``web/<lab>.js`` computes (``state(values)`` run in Node), key by key, on held-out values.

The notebook's lab (:class:`attention_book.controls.widget.LabWidget`) draws Python's state
with the module's own ``figure``, ``readoutHtml``/``readout`` and ``alt``; the built book
draws the module's state with the same functions. So wherever the two states agree the
notebook draws what the book draws. Checked:

- every key of the module's state is a key of the serialised Python state (Python may send
  more: its readout's helpers, never read by the page);
- texts, numbers, flags and lists equal (numbers within TOL = 1e-5), arrays of the same
  length within TOL, a typed array where the module has one (so that ``subarray`` and the
  like work on what the kernel sends).

And the drawing itself (:func:`test_the_widget_and_the_page_draw_the_same`): the module's
``figure``, readout and ``alt`` of Python's state decoded as the widget decodes it equal
those of the module's own state, as the page computes it (the same panel spec; numbers,
also those printed in texts, within TOL; compared in Node by ``tests/js/twin.mjs`` (``twin.draw``), which
decodes Python's state with the widget's own ``decode.js``).
"""
from __future__ import annotations

import base64
import functools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from attention_book.scenes import SCENES
from attention_book.scenes.core import js_name, to_js
from node_driver import NODE, run as node, wire

from test_web_block import block_values
from test_web_lab import held_out as positional_values
from test_web_states import (attention_values, embedding_values, masking_values,
                             multihead_values, permutation_values)

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "src" / "attention_book" / "web"
TOL = 1e-5

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH: the contract runs "
                                "the browser's state modules in Node.js")

def run(module: str, values: list, data: Path | None = None) -> list[dict]:
    """The module's state of each values (tests/js/twin.mjs's ``twin.state``)."""
    return node("twin.state", module, *([data] if data else []), input=values)


def _python(value):
    """to_js's output with its binary arrays as flat float64 numpy arrays."""
    if isinstance(value, dict):
        if "$array" in value:
            return np.frombuffer(value["buffer"], dtype=value["$array"]).astype(np.float64)
        return {k: _python(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_python(v) for v in value]
    return value


def same(js, py, where: str) -> None:
    """Assert the module's value ``js`` (from the driver) equals Python's ``py`` (to_js)."""
    if isinstance(js, dict) and "typed" in js:
        got = np.frombuffer(base64.b64decode(js["f8"]), dtype=np.float64)
        assert isinstance(py, np.ndarray), (where, "the module has a typed array", type(py))
        assert got.shape == py.shape, (where, got.shape, py.shape)
        np.testing.assert_allclose(got, py, atol=TOL, rtol=0, err_msg=where)
    elif isinstance(js, dict):
        assert isinstance(py, dict), (where, type(py))
        assert js.keys() <= py.keys(), (where, sorted(js.keys() - py.keys()))
        for k in js:
            same(js[k], py[k], f"{where}.{k}")
    elif isinstance(js, list):
        if isinstance(py, np.ndarray):  # numbers the module keeps in a plain array
            py = py.tolist()
        assert isinstance(py, list) and len(js) == len(py), (where, js, py)
        for k, (a, b) in enumerate(zip(js, py)):
            same(a, b, f"{where}[{k}]")
    elif isinstance(js, bool) or isinstance(py, bool):  # JS true is not Python's 1
        assert isinstance(js, bool) and isinstance(py, bool) and js == py, (where, js, py)
    elif js is None or isinstance(js, str):
        assert js == py, (where, js, py)
    else:
        assert isinstance(py, (int, float)), (where, js, py)
        assert math.isclose(js, py, rel_tol=0, abs_tol=TOL * max(1, abs(py))), (where, js, py)


def same_as_python(js: dict, state, where: str) -> None:
    """Assert the module's state ``js`` (from the driver) is the state function's ``state``
    as the live lab sends it: for the labs that read data, whose tests
    (test_web_training, ...) run the module on their own data files."""
    same(js, _python(to_js(state)), where)


def computed(lab: str, values: list) -> list:
    """What the live lab sends of each values' state (to_js), or the ValueError it raises."""
    out = []
    for v in values:
        try:
            out.append(to_js(SCENES[lab].compute(v)))
        except ValueError as err:
            out.append(err)
    return out


@functools.cache
def held_out(lab: str, part: str = "first") -> tuple[list, list]:
    """The ``part`` of the lab's held-out values and :func:`computed` of them: Python
    computes them once for both tests of a lab (its state and its drawing). ``"first"``:
    the first EDIT_LOOP, which the edit loop checks; ``"others"``: the rest (slow tier)."""
    values = HELD_OUT[lab]()
    values = values[:EDIT_LOOP] if part == "first" else values[EDIT_LOOP:]
    return values, computed(lab, values)


def check(lab: str, values: list, data: Path | None = None, sent: list | None = None) -> int:
    """Compare every values' states (``sent``: :func:`computed` of them, if known); return
    how many were states (not refusals)."""
    scene, n = SCENES[lab], 0
    sent = computed(lab, values) if sent is None else sent
    for v, row, py in zip(values, run(scene.web, values, data), sent, strict=True):
        where = f"{lab} {json.dumps(v)[:120]}"
        if isinstance(py, ValueError):
            assert row == {"error": str(py)}, where
            continue
        assert "state" in row, (where, row)
        same(row["state"], _python(py), where)
        n += 1
    return n


def drawn(lab: str, perturb=None, first: int | None = None, part: str = "first") -> list[dict]:
    """The module's drawings of Python's state (``perturb``-ed) and of its own state, on the
    lab's (``first``) held-out values of ``part``, compared in Node: per values that Python
    accepts, {leaves, diff} (tests/js/twin.mjs's ``twin.draw``)."""
    values, sent = (x[:first] for x in held_out(lab, part))
    rows = [{"values": v, "py": wire(perturb(py) if perturb else py)}
            for v, py in zip(values, sent) if not isinstance(py, ValueError)]
    return node("twin.draw", SCENES[lab].web, repr(TOL), input=rows)


def test_js_names():
    assert [js_name(n) for n in ("max_error", "kv_text", "on_output", "d_k", "X_kv",
                                 "n_parameters", "s", "score_curves")] == [
        "maxError", "kvText", "onOutput", "d_k", "X_kv", "n_parameters", "s", "scoreCurves"]


def test_to_js_sends_arrays_as_binary():
    from attention_book.scenes.core import Note

    sent = to_js({"a": np.arange(6.0).reshape(2, 3), "b": np.array([True, False]),
                  "c": np.eye(2, dtype=bool), "n": Note("info", "x"), "t": (1, np.int64(2)),
                  "nan": float("nan")})
    assert sent["a"]["$array"] == "float64" and sent["a"]["shape"] == [2, 3]
    assert sent["a"]["buffer"] == np.arange(6.0).tobytes()
    assert sent["b"] == [True, False] and sent["c"]["$array"] == "uint8"
    assert sent["n"] == {"level": "info", "text": "x"} and sent["t"] == [1, 2]
    assert sent["nan"] is None
    with pytest.raises(TypeError, match="cannot send a object"):
        to_js(object())


#: Each lab's held-out values (a lab that reads no data: web/labs.json's pageData is empty;
#: those that do are checked on their data in test_web_training and test_web_pretrained).
#: A new lab adds its line here: one of the four files a lab is (docs/architecture.md).
HELD_OUT = {
    "embedding": lambda: embedding_values(30, 11),
    "positional": lambda: positional_values(30, 12),
    "attention": lambda: attention_values(30, 13),
    "multihead": lambda: multihead_values(30, 14),
    "permutation": lambda: permutation_values(30, 15),
    "masking": lambda: masking_values(30, 16),
    "block": lambda: block_values(20, 17),
    "scaling": lambda: [dict(d_k=1, scaled=False), dict(d_k=16, scaled=True)],
}
#: The edit loop checks each lab on its first EDIT_LOOP held-out values, the slow tier on the
#: others (20 a lab): a third of the values, 3 s of CPU instead of 7.5.
EDIT_LOOP = 10
PARTS = [pytest.param(lab, "first", id=lab) for lab in HELD_OUT] + [
    pytest.param(lab, "others", id=f"{lab}-others", marks=pytest.mark.slow)
    for lab in HELD_OUT if len(HELD_OUT[lab]()) > EDIT_LOOP]  # a lab of <= 10 has no others


@pytest.mark.parametrize("lab, part", PARTS)
def test_python_state_is_the_modules(lab, part):
    values, sent = held_out(lab, part)
    assert check(lab, values, sent=sent) >= 2


@pytest.mark.parametrize("lab, part", PARTS)
def test_the_widget_and_the_page_draw_the_same(lab, part):
    """For every held-out values: the notebook's drawing (Python's state through to_js) is
    the book page's (the module's own state)."""
    rows = drawn(lab, part=part)
    assert len(rows) >= 2
    for k, row in enumerate(rows):
        assert row["diff"] is None, (lab, k, row["diff"])
        assert row["leaves"] > 10, (lab, k, row)  # a figure, a readout and an alt text


def _arrays_plus_half(sent):
    """Python's state with every float64 array moved by 0.5 (a wrong twin)."""
    if isinstance(sent, list):
        return [_arrays_plus_half(v) for v in sent]
    if not isinstance(sent, dict):
        return sent
    if sent.get("$array") == "float64":
        moved = np.frombuffer(sent["buffer"], dtype=np.float64) + 0.5
        return {**sent, "buffer": moved.tobytes()}
    return {k: _arrays_plus_half(v) for k, v in sent.items()}


@pytest.mark.parametrize("lab", ["positional"])
def test_the_drawing_check_can_fail(lab):
    rows = drawn(lab, perturb=_arrays_plus_half, first=3)
    assert len(rows) == 3 and all(row["diff"] is not None for row in rows), rows


def test_every_lab_is_under_contract():
    """Every lab module build.mjs found (web/labs.json) is a scene's, and every one that
    reads no data has held-out values here; those that read data are the data tests'."""
    from attention_book.bundles import registry

    labs = registry()
    assert {scene.web for scene in SCENES.values()} == set(labs)
    assert set(HELD_OUT) == {lab for lab, entry in labs.items() if not entry["pageData"]}
    assert {lab for lab, entry in labs.items() if entry["pageData"]} == {
        "training", "generation", "pretrained", "decoder"}  # test_web_training,
    # test_web_pretrained, test_web_decoder


@pytest.mark.slow  # MiniLM's gallery: about 10 s
def test_pretrained_state_is_the_modules(tmp_path):
    """Chapter 9 on its preset sentences (the page has their maps without the model)."""
    from attention_book import web_export
    from attention_book.scenes.pretrained import MAX_PRETRAINED_TOKENS, PRETRAINED_PRESETS

    path = tmp_path / "pretrained-gallery.js"
    web_export.export_pretrained_gallery(path, PRETRAINED_PRESETS,
                                         max_tokens=MAX_PRETRAINED_TOKENS)
    values = [{"text": text, "layer": layer, "head": head, "query": query, "measure": measure,
               "view": view}
              for _, text, query in PRETRAINED_PRESETS
              for layer, head, measure, view in ((0, 0, "weight", "head"), (3, 7, "norm", "head"),
                                                 (4, 10, "norm", "model"), (1, 5, "weight", "model"))]
    values += [{"text": "", "layer": 1, "head": 1, "query": 0, "measure": "norm", "view": "model"},
               {"text": "", "layer": 1, "head": 1, "query": 0, "measure": "weight", "view": "head"},
               {"text": PRETRAINED_PRESETS[0][1], "layer": 0, "head": 0, "query": 0,
                "measure": "alpha", "view": "head"}]
    assert check("pretrained", values, path) >= 12


@pytest.mark.parametrize("js, py", [(True, 1), (1, True), (False, 0), ([True], [1]), ("1", 1)])
def test_the_value_check_tells_a_flag_from_a_number(js, py):
    """JS ``true`` and Python's ``1`` are different states, although ``True == 1``."""
    with pytest.raises(AssertionError):
        same(js, py, "x")
