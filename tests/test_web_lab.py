"""Labs computed in the reader's browser (controls/web.py, web/lab.js, web/positional.js).

- The declaration the browser gets is the scene's controls at their full live range.
- Parity: web/positional.js computes what scenes.positional.positional_state computes, within
  1e-5, on held-out values sampled over the whole live range (s 1..512, d even 2..512, every
  base, k -64..64): PE, the similarity, the wavelengths, the rotation check; the readout and
  the alt text of its own state equal to those of Python's state (``js_view``). In Node (fast,
  many samples) and in chromium (window.AttentionBook).
- In chromium, on a page opened as file:// (on a 2x screen: a sharp canvas): the held-out
  states computed in the page, every value of every control taken (set without events),
  the base slider disabled with its hint at d = 2, nothing requested from outside, no
  console error. On the built book (http and file://) the same parity and hint
  (browser_parity, check_disabled_base) run in tests/test_web_labs.py's drive of chapter 2,
  which moves every control through its range as a reader does, each drawing checked
  against Python (the slider's output and aria-valuetext, the picture redrawn at every
  change).
"""

from __future__ import annotations

import html
import json
import re

import matplotlib
import numpy as np
import pytest

from attention_book.controls import BrowserLab, lab, web_lab
from attention_book.controls.web import WEB_DIR, declaration, present, standalone_html
from attention_book.scenes import SCENES
from attention_book.scenes.core import Condition, Scene, compare, slider, when
from attention_book.scenes.positional import BASE_CHOICES, K_RANGE, positional_state
from close_all import assert_close
from js_view import alt, text_views
from node_driver import NODE, page_function
from node_driver import run as node

SCENE = SCENES["positional"]
TOL = 1e-5

# ------------------------------------------------------------------ held-out values


def held_out(n: int, seed: int) -> list[dict]:
    """``n`` values drawn over the live lab's full range, with
    the corners (s = 1, 512; d = 2, 512; k = -64, 64) among them."""
    rng = np.random.default_rng(seed)
    corners = [dict(s=1, d=2, base=10, k=-64), dict(s=512, d=512, base=100000, k=64),
               dict(s=2, d=512, base=10000, k=0), dict(s=511, d=4, base=1000, k=-1)]
    drawn = [dict(s=int(rng.integers(1, 513)), d=int(2 * rng.integers(1, 257)),
                  base=int(rng.choice(BASE_CHOICES)),
                  k=int(rng.integers(K_RANGE[0], K_RANGE[1] + 1))) for _ in range(n)]
    return corners + drawn


NOISE = re.compile(r"\d\.\de[+-]\d\d|\b\de[+-]\d\d")  # rounding error, printed


def readout_lines(body: str) -> list[str]:
    """The lines of text of the readout's HTML ``body``."""
    return [html.unescape(x) for x in re.findall(r'<div class="ab-mono">(.*?)</div>',
                                                 body)]


def same_text(js: str, py: str, js_error: float, py_error: float) -> None:
    """Equal texts, except the printed rounding error of the rotation check (1e-16..1e-12),
    which differs between two correct sin implementations; those numbers agree within TOL."""
    assert NOISE.sub("#", js) == NOISE.sub("#", py), (js, py)
    assert abs(js_error - py_error) < TOL


def check_parity(values: dict, got: dict, arrays: dict, st, view: dict) -> None:
    """``got`` (scalars and texts) and ``arrays`` (name -> flat float64) from JS against
    ``st``, positional_state(**values), and the module's ``view`` of it (readout, alt)."""
    where = f"{values}"
    assert_close(arrays["pe"], st.pe.ravel(), atol=TOL, err_msg=where)
    assert_close(arrays["similarity"], st.similarity.ravel(), atol=TOL, err_msg=where)
    assert_close(arrays["wavelengths"], st.wavelengths, rtol=TOL, err_msg=where)
    assert_close(arrays["shifted"], st.shifted, atol=TOL, err_msg=where)
    assert_close(arrays["rotated"], st.rotated, atol=TOL, err_msg=where)
    assert abs(got["maxError"] - st.max_error) < TOL and got["maxError"] < 1e-9, where
    if st.mean_similarity is None:
        assert got["meanSimilarity"] is None, where
    else:
        assert abs(got["meanSimilarity"] - st.mean_similarity) < TOL, where
    assert got["waveColumns"] == list(st.wave_columns) and got["p"] == st.p, where
    assert got["notes"] == [{"level": n.level, "text": n.text} for n in st.notes], where
    for js, py in zip(got["readout"], readout_lines(view["readout"]), strict=True):
        same_text(js, py, got["maxError"], st.max_error)
    same_text(got["alt"], view["alt"], got["maxError"], st.max_error)


def checked(values: list, rows: list) -> None:
    """check_parity on each values' row, the module's views of Python's states in one run.

    The views are of each state without PE (s, d) and the similarity (s, s and its 2s - 1
    offsets), which the readout and the alt text do not read (js_view.text_views): whole,
    204 states were 321 MB of JSON for Node (3-4 s of CPU)."""
    states = [positional_state(**v) for v in values]
    for v, row, st, view in zip(values, rows, states, text_views("positional", *states),
                                strict=True):
        check_parity(v, row, decode(row), st, view)


PAGE_B64 = page_function("positionalBase64")  # spliced into browser_parity's program


def decode(row: dict) -> dict:
    import base64

    return {k: np.frombuffer(base64.b64decode(v), dtype=np.float64)
            for k, v in row["arrays"].items()}


def run_node(values: list[dict]) -> list[dict]:
    """The module's states of ``values`` (tests/js/positional.mjs's computeAll), in Node."""
    return node("positional.states", input=values, timeout=300)


# ------------------------------------------------------------------ declaration (fast)


def test_declaration_offers_every_value_of_the_live_lab():
    decl = declaration(SCENE)
    by_name = {c["name"]: c for c in decl["controls"]}
    assert [c["name"] for c in decl["controls"]] == ["s", "d", "base", "k"]
    assert by_name["s"]["range"] == [1, 512, 1] and by_name["s"]["default"] == 64
    assert by_name["d"]["range"] == [2, 512, 2]
    assert by_name["k"]["range"] == [K_RANGE[0], K_RANGE[1], 1]
    assert by_name["base"]["values"] == list(BASE_CHOICES) and by_name["base"]["range"] is None
    assert by_name["base"]["active_when"] == {"name": "d", "op": ">", "value": 2}
    assert by_name["base"]["hint"]
    for c in SCENE.controls:  # what the live lab accepts, the browser lab offers
        spec = by_name[c.name]
        offered = (list(range(spec["range"][0], spec["range"][1] + 1, spec["range"][2]))
                   if spec["range"] else spec["values"])
        assert offered == list(c.values), c.name
    assert decl["module"] == "positional" and (WEB_DIR / "positional.js").exists()


def test_conditions_are_data_and_behave_as_before():
    assert when("kind", "band")({"kind": "band"}) and not when("kind", "band")({"kind": "x"})
    assert compare("d", ">", 2)({"d": 4}) and not compare("d", ">", 2)({"d": 2})
    assert SCENE.active({**SCENE.defaults, "d": 2})["base"] is False
    with pytest.raises(ValueError, match="op must be one of"):
        Condition("d", "=>", 2)


def test_declaration_refuses_what_the_browser_cannot_evaluate():
    scene = Scene(name="x", title="x", state=lambda a, b: None, web="x",
                  controls=(slider("a", "a", (1, 2), 1),
                            slider("b", "b", (1, 2), 1, active_when=lambda v: v["a"] > 1)))
    with pytest.raises(ValueError, match="active_when must be a Condition"):
        declaration(scene)
    with pytest.raises(ValueError, match="no browser state function"):
        declaration(Scene(name="y", title="y", state=lambda a: None,
                          controls=(slider("a", "a", (1, 2), 1),)))


def test_without_node_the_texts_cannot_be_written_and_the_error_says_why(monkeypatch):
    monkeypatch.setattr("attention_book.controls.web.shutil.which", lambda name: None)
    with pytest.raises(RuntimeError, match="node is not on PATH"):
        present(SCENE, [positional_state()])


def test_a_readout_of_lines_is_written_as_the_front_end_writes_it():
    """positional.js's readout is lines and notes (html.js's linesHtml writes them): the
    <noscript> page gets them as HTML, each text escaped, the notes marked by symbol and word."""
    view = present(SCENE, [positional_state(8, 64, 10000, 16)])[0]
    assert view["readout"].startswith('<div class="ab-readout"><div class="ab-mono">'
                                      "PE : (s, d) = (8, 64)")
    assert '<li class="ab-note ab-note-info">' in view["readout"]  # coloured by lab.css
    assert "&#8505; <b>info:</b> p + k = 20 lies outside 0..7" in view["readout"]


def test_browser_lab_html_is_escaped_and_names_its_scripts(monkeypatch):
    made = BrowserLab(SCENE)
    page = made._repr_html_()
    assert 'data-ab-scripts="lab.js positional.js"' in page
    assert made.scripts == ("lab.js", "positional.js")
    data = re.search(r'<script type="application/json" class="ab-lab-data">(.*?)</script>',
                     page).group(1)
    assert "<" not in data and json.loads(data) == {**json.loads(json.dumps(declaration(SCENE))),
                                                    "note": made.note}
    assert made.reachable({"s": 511, "d": 510, "base": 100000, "k": -64})
    assert not made.reachable({"d": 3}) and not made.reachable({"s": 513})
    for values in SCENE.suggested:
        assert made.reachable(values), values
    # the built book shows every scene's lab computed in the browser
    monkeypatch.setenv("ATTENTION_BOOK_STATIC", "1")
    monkeypatch.setattr("attention_book.controls.web_lab", lambda name, **v: ("web", name, v))
    for name, scene in SCENES.items():
        assert scene.web and lab(name) == ("web", name, {})
    assert lab("positional", s=9) == ("web", "positional", {"s": 9})


def test_a_book_lab_starts_where_the_chapter_says():
    """lab(name, **values) starts the book's lab at those values, as the notebook's: the
    declaration's defaults are them, the <noscript> shows their state, and a value the live
    lab refuses is refused here too."""
    made = BrowserLab(SCENE, s=9, k=3)
    start = {c["name"]: c["default"] for c in made.declaration["controls"]}
    assert start == {**SCENE.defaults, "s": 9, "k": 3}
    assert "(9, " in made._repr_html_().split("<noscript>")[1]
    with pytest.raises(ValueError):
        BrowserLab(SCENE, s=513)


def test_colour_maps_are_matplotlibs():
    text = (WEB_DIR / "src" / "colormaps.js").read_text()  # the source (the bundles are minified)
    for name in ("viridis", "RdBu_r"):
        hexes = re.search(name + r': *"([0-9a-f]{1536})"', text).group(1)
        table = np.array([int(hexes[i:i + 2], 16) for i in range(0, 1536, 2)]).reshape(256, 3)
        ref = np.asarray(matplotlib.colormaps[name].resampled(256)(np.arange(256)))[:, :3] * 255
        assert np.abs(table - ref).max() <= 0.5, name


# ------------------------------------------------------------------ parity in Node


@pytest.mark.skipif(NODE is None, reason="no node")
def test_node_parity_on_held_out_values():
    values = held_out(6, seed=2026)
    checked(values, run_node(values))


@pytest.mark.slow
@pytest.mark.skipif(NODE is None, reason="no node")
def test_node_parity_on_many_held_out_values():
    values = held_out(200, seed=17)
    checked(values, run_node(values))


@pytest.mark.skipif(NODE is None, reason="no node")
def test_node_formats_numbers_as_python():
    cases = [(x, spec) for x in (0.0, -0.0, 1e-13, 5.25e-15, 0.1251, 6.283185307179586, 628318.53,
                                 47117.2, 1e5, 10.0, 316.2277, 1.0180, 2.0, 0.42, -0.006, 123456.7,
                                 0.125, 0.375, 2.5)  # exact ties: Python rounds them to even
             for spec in (".2f", ".1f", ",.0f", ",.1f", ".1e", ".0e", ".3g", "g")]
    got = node("states.format", input=cases, timeout=60)  # format.js, as the bundle imports it
    for (x, spec), js in zip(cases, got, strict=True):
        assert js == format(x, spec), (x, spec, js)


def test_state_errors_are_the_math_layers():
    if NODE is None:
        pytest.skip("no node")
    out = node("states.errors", "positional", input=[
        {"s": 8, "d": 3, "base": 10, "k": 1}, {"s": 0, "d": 4, "base": 10, "k": 1},
        {"s": 8, "d": 4, "base": 1, "k": 1}, {"s": 8, "d": 4, "base": 10, "k": 0.5}])
    for message, values in zip(out, ({"s": 8, "d": 3, "base": 10, "k": 1},
                                     {"s": 0, "d": 4, "base": 10, "k": 1},
                                     {"s": 8, "d": 4, "base": 1, "k": 1},
                                     {"s": 8, "d": 4, "base": 10, "k": 0.5})):
        with pytest.raises(ValueError) as err:
            positional_state(**values)
        assert message and message.split(",")[0] == str(err.value).split(",")[0], (message, err.value)


# ------------------------------------------------------------------ in chromium

MOVE_JS = page_function("positionalMove")  # a control moved by its input's "input" event


def check_disabled_base(page, lab_id: str) -> None:
    """d = 2: the base has no effect; its slider is disabled and says why."""
    d_index = [c.name for c in SCENE.controls].index("d")
    row = page.evaluate(MOVE_JS, [lab_id, d_index, [2]])[0]
    assert row["got"] == 2
    base = page.locator(f"#{lab_id}-c{[c.name for c in SCENE.controls].index('base')}")
    assert base.is_disabled() and page.locator(f"#{base.get_attribute('id')}-hint").is_visible()
    assert "one frequency pair" in row["caption"]
    page.evaluate(MOVE_JS, [lab_id, d_index, [SCENE.defaults["d"]]])
    assert not base.is_disabled()


def browser_parity(page, n: int, seed: int) -> None:
    values = held_out(n, seed)
    rows = page.evaluate("([list]) => { const computeAll = " + node("positional.source") + ";"
                         " return computeAll(window.AttentionBook.positional, list, " + PAGE_B64 + "); }",
                         [values])
    checked(values, rows)


@pytest.fixture(scope="module")
def standalone_page(tmp_path_factory):
    path = tmp_path_factory.mktemp("web") / "positional.html"
    path.write_text(standalone_html(web_lab("positional")), encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.browser
def test_standalone_lab_in_chromium(browser, standalone_page):
    from conftest import PageWatch

    watch = PageWatch(browser, scale=2)
    page = watch.open(standalone_page.as_uri())
    lab_id = page.locator(".ab-lab").get_attribute("id")
    assert page.is_visible(f"#{lab_id}-controls")
    canvas = page.locator(f"#{lab_id} canvas")
    assert canvas.get_attribute("role") == "img"
    assert canvas.evaluate("c => c.width") == 2 * round(canvas.bounding_box()["width"])  # 2x screen
    browser_parity(page, 16, seed=7)
    swept = page.evaluate(page_function("positionalSweep"), [lab_id])  # every value of every control
    assert swept["problems"] == [] and swept["n"] == sum(len(c.values) for c in SCENE.controls)
    check_disabled_base(page, lab_id)
    assert watch.console_errors == [] and watch.outside == [] and watch.failed == []
    assert all(u.startswith("file:") for u in watch.requested), watch.requested
    watch.close()


@pytest.mark.slow
@pytest.mark.browser
def test_without_javascript_the_default_state_is_described(browser, built_book):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto((built_book / "chapters" / "02_positional_encoding.html").as_uri())
    lab_id = page.locator(".ab-lab").get_attribute("id")
    # as a reader who scrolled to it: a section is laid out once near the screen
    # (content-visibility: auto, _ext/static/attention-book.css)
    page.goto((built_book / "chapters" / "02_positional_encoding.html").as_uri() + f"#{lab_id}")
    assert not page.is_visible(f"#{lab_id}-controls")  # no inert control
    described = page.locator(f"#{lab_id} .ab-lab-figure .ab-lab-alt")
    assert described.count() == 1 and described.is_visible()
    st = positional_state(**SCENE.defaults)
    assert described.text_content() == alt("positional", st)
    assert "rotation check" in page.text_content(f"#{lab_id}-caption")
    context.close()


@pytest.mark.skipif(NODE is None, reason="no node")
def test_numbers_download_is_pythons_pe_and_similarity():
    """numbers(state): the JSON a reader downloads holds PE (s, d) as its main matrix and the
    similarity (s, s), equal to Python's."""
    values = held_out(3, seed=99)[:4]
    [got] = node("states.numbers", input=[["positional", values]])
    for v, row in zip(values, got, strict=True):
        st = positional_state(**v)
        assert row["lab"] == "positional" and row["tokens"] == []
        np.testing.assert_allclose(np.array(row["weights"]), st.pe, atol=TOL, rtol=0)
        np.testing.assert_allclose(np.array(row["similarity"]), st.similarity, atol=TOL, rtol=0)


@pytest.mark.skipif(NODE is None, reason="no node")
@pytest.mark.parametrize("s,d", [(64, 64), (300, 258), (512, 512)])
def test_strided_pe_heatmap_keeps_whole_sin_cos_pairs(s, d):
    """Past 256 columns the PE heatmap shows every other (sin, cos) pair whole: every other
    column alone was the sines only, and the slow
    half of PE (sin near 0, cos near 1) looked empty (chapters-1-5 review, M2)."""
    from attention_book.scenes.positional import image_stride, shown_columns

    columns = shown_columns(d)
    assert (columns[::2] % 2 == 0).all() and (columns[1::2] == columns[::2] + 1).all()
    assert len(columns) <= 256 and (len(columns) == d) == (d <= 256)
    [shown] = node("states.figures", "positional", 0, input=[{"s": s, "d": d, "base": 10000, "k": 3}])
    st = positional_state(s, d, 10000, 3)
    expected = st.pe[::image_stride(s)][:, columns]  # (rows shown, columns shown)
    np.testing.assert_allclose(np.array(shown["data"]).reshape(expected.shape), expected, atol=1e-12)
