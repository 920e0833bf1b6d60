"""The kernel-free explorer (controls/static.py), shown here with chapter 1's scene:
self-contained, escaped, one source of truth."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from attention_book import controls as ex
from attention_book.controls import (BrowserLab, Explorer, is_static_build, lab,
                                     static_explorer, web_lab)
from attention_book.controls.live import LiveLab
from attention_book.controls.static import EXPLORER_DPI, SAME_LEVELS, Axis, Frame
from attention_book.plots import embedding_view, figure_png
from attention_book.scenes import (
    D_CHOICES,
    PRESET_SENTENCES,
    embedding_readout_html,
    embedding_state,
)
from attention_book.tokens import RUNNING_SENTENCE, Vocabulary, tokenize


def embedding_explorer(sentences=PRESET_SENTENCES, ds=D_CHOICES):
    return static_explorer("embedding", text=tuple(sentences), d=tuple(ds))

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def tiny_png(shade: int) -> bytes:
    """A 4 x 2 palette PNG of one grey, as :func:`figure_png` makes them."""
    image = Image.new("RGB", (4, 2), (shade,) * 3).quantize(colors=255)
    buffer = io.BytesIO()
    image.save(buffer, format="png")
    return buffer.getvalue()
#: A chapter page's explorers must stay under about 2 MB; one explorer gets most of it.
HTML_BUDGET_BYTES = 1_500_000


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text of each <script>."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self._in_script = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data

    def find(self, tag) -> list[dict]:
        return [attrs for t, attrs in self.tags if t == tag]


def script_data(html_text: str) -> dict:
    """The JSON the explorer's script carries."""
    (script,) = Elements(html_text).scripts
    match = re.search(r"var id = (\"[^\"]*\"), data = (\{.*?\});\n", script, re.S)
    assert match, script[:300]
    return json.loads(match.group(2))


def image_of(data_url: str) -> Image.Image:
    """The lossless WebP picture a data URL holds, checked."""
    prefix = "data:image/webp;base64,"
    assert data_url.startswith(prefix)
    image = Image.open(io.BytesIO(base64.b64decode(data_url[len(prefix):], validate=True)))
    assert image.format == "WEBP"
    image.load()
    return image


@pytest.fixture(scope="module")
def default_explorer():
    return embedding_explorer()


@pytest.fixture(scope="module")
def default_html(default_explorer):
    return default_explorer._repr_html_()


def test_presets_cover_the_cases_the_chapter_needs():
    vocab = Vocabulary.default()
    assert PRESET_SENTENCES[0] == RUNNING_SENTENCE
    token_lists = [tokenize(s) for s in PRESET_SENTENCES]
    assert any(not all(vocab.is_known(t) for t in toks) for toks in token_lists)  # unknown
    assert any(len(toks) > 12 for toks in token_lists)  # longer
    assert any(len(set(toks)) < len(toks) for toks in token_lists)  # repeated words


@pytest.mark.slow  # the default explorer: renders every state
def test_controls_are_real_labelled_inputs(default_html):
    elements = Elements(default_html)
    label_targets = {attrs["for"] for attrs in elements.find("label")}
    (select,) = elements.find("select")
    (slider,) = [a for a in elements.find("input") if a.get("type") == "range"]
    assert select["id"] in label_targets and slider["id"] in label_targets
    assert len(elements.find("option")) == len(PRESET_SENTENCES)
    assert (slider["min"], slider["max"], slider["step"]) == ("0", "5", "1")
    (output,) = elements.find("output")
    assert output["for"] == slider["id"]
    # d starts at 8 (index 2 of 2, 4, 8, 16, 32, 64), announced to screen readers as "8"
    assert slider["value"] == "2" and slider["aria-valuetext"] == "8"
    assert f'>8</output>' in default_html


@pytest.mark.slow  # the default explorer: renders every state
def test_one_state_per_combination_with_valid_pngs_and_alt_text(default_explorer, default_html):
    assert len(default_explorer) == len(PRESET_SENTENCES) * 6
    data = script_data(default_html)
    keys = {f"{i},{j}" for i in range(len(PRESET_SENTENCES)) for j in range(6)}
    assert set(data["frames"]) == keys
    assert data["labels"] == [list(PRESET_SENTENCES), ["2", "4", "8", "16", "32", "64"]]
    # the first state is the img; every other state an overlay on it (all look different)
    assert len(data["images"]) == len(keys) - 1
    (img, over) = Elements(default_html).find("img")
    first = data["frames"]["0,2"]
    assert first[0] == -1 and over["hidden"] is None and over["aria-hidden"] == "true"
    base = image_of(img["src"]).convert("RGB")
    assert base.size == (int(img["width"]), int(img["height"]))
    assert base.size[0] % 2 == 0 and base.size[1] % 2 == 0
    assert f"width:{base.size[0] // 2}px" in default_html  # shown at half: sharp at 2x
    for index, (n, alt, caption, inactive, text_px) in data["frames"].items():
        shown = base.copy()
        if n >= 0:
            overlay = image_of(data["images"][n])
            assert overlay.mode == "RGBA" and overlay.size == base.size
            shown.paste(overlay, mask=overlay)
        # what the reader sees is the state's own picture (up to the palettes' rounding)
        i, j = map(int, index.split(","))
        own = np.asarray(Image.open(io.BytesIO(default_explorer.frames[(i, j)].png)).convert("RGB"))
        height, width, _ = own.shape  # (the picture is padded to even sizes)
        assert np.abs(np.asarray(shown, dtype=int)[:height, :width] - own).max() <= SAME_LEVELS
        assert text_px >= 12  # its smallest text, in picture pixels
        assert len(alt) > 40 and "heatmap" in alt
        assert "X : (s, d) = (" in caption
    assert img["alt"] == first[1]  # the initial state: running sentence, d=8
    assert "5 rows (tokens: the, weather, is, lovely, today) and 8 columns" in img["alt"]


@pytest.mark.slow  # the default explorer: renders every state
def test_states_come_from_the_shared_state_function_and_view(default_explorer):
    # one source of truth: frame (sentence k, d) == what a fresh view draws for that state
    for (k, j) in [(0, 2), (3, 4), (1, 0)]:
        text, d = PRESET_SENTENCES[k], D_CHOICES[j]
        state = embedding_state(text, d, 0)
        frame = default_explorer.frames[(k, j)]
        assert frame.caption_html == embedding_readout_html(state)
        view = embedding_view()
        view.update(state.tokens, state.X, state.similarity)
        # updating one view in place draws exactly what a fresh view draws
        assert figure_png(view.figure, dpi=EXPLORER_DPI, palette=True, compress_level=9) == frame.png


@pytest.mark.slow  # the default explorer: renders every state
def test_repeated_words_and_unknown_words_are_explained(default_explorer):
    k_unknown = PRESET_SENTENCES.index("THE WEATHER IS GLORIOUS TODAY")
    caption = default_explorer.frames[(k_unknown, 2)].caption_html
    assert "&#x27;glorious&#x27; is not in the vocabulary: it maps to &lt;unk&gt; (id 1)" in caption
    k_repeat = PRESET_SENTENCES.index("the cat saw the dog and the dog saw the cat")
    frame = default_explorer.frames[(k_repeat, 2)]
    assert "repeated tokens" in frame.caption_html and "similarity 1" in frame.alt


@pytest.mark.slow  # the default explorer: renders every state
def test_no_external_resources(default_html):
    assert not re.search(r"https?://", default_html)
    elements = Elements(default_html)
    for tag, attrs in elements.tags:
        for name in ("src", "href"):
            if name in attrs:
                assert attrs[name].startswith("data:"), (tag, attrs[name][:60])
    (script,) = elements.scripts
    assert script.strip().startswith("(function () {") and script.strip().endswith("})();")
    assert "eval(" not in script and "new Function" not in script


def test_script_data_cannot_close_the_script_or_open_a_comment():
    hostile = "</script><script>alert(1)</script><!-- & >"
    explorer = Explorer(
        [Axis("a", "A " + hostile, (hostile, "plain"), ({"a": 1}, {"a": 2})),
         Axis("b", "B", ("1", "2"), ({"b": 1}, {"b": 2}), slider=True)],
        lambda v: Frame(tiny_png(v["a"] * 50), f"alt {hostile} {v['a']}", "<i>caption</i>", v),
    )
    page = explorer._repr_html_()
    assert page.count("</script") == 1  # only the script's own end tag
    assert page.count("<script") == 1
    assert "<!--" not in page
    data = script_data(page)
    assert data["labels"][0][0] == hostile  # escaped for the script, intact for JS
    assert data["frames"]["0,0"][1] == f"alt {hostile} 1"
    # the label, option and alt attribute are escaped in the markup
    assert "A &lt;/script&gt;" in page and "<option value=\"0\" selected>&lt;/script&gt;" in page
    assert 'alt="alt &lt;/script&gt;' in page


def test_captions_and_options_are_escaped():
    sentences = ("<b>bold</b> the dog", "<script>alert(1)</script>")
    page = embedding_explorer(sentences=sentences, ds=(2,))._repr_html_()
    assert "<b>bold" not in page and "<script>alert" not in page
    assert "&lt;b&gt;bold&lt;/b&gt; the dog</option>" in page
    data = script_data(page)
    for _, alt, caption, _, _ in data["frames"].values():
        assert "<script" not in caption and "<b>bold" not in caption
        assert "&lt;" in caption


@pytest.mark.slow  # the default explorer: renders every state
def test_html_size_is_within_the_page_budget(default_html):
    assert len(default_html.encode()) < HTML_BUDGET_BYTES


@pytest.mark.slow  # renders every state of an explorer
def test_explorers_get_distinct_deterministic_ids():
    a = embedding_explorer(sentences=("the dog",), ds=(2,))
    b = embedding_explorer(sentences=("the dog",), ds=(2,))
    assert a.id != b.id
    page_a, page_b = a._repr_html_(), b._repr_html_()
    assert page_a == a._repr_html_()  # stable
    ids_a = {attrs["id"] for _, attrs in Elements(page_a).tags if "id" in attrs}
    ids_b = {attrs["id"] for _, attrs in Elements(page_b).tags if "id" in attrs}
    assert ids_a and not ids_a & ids_b
    assert all(i.startswith(a.id) for i in ids_a)
    assert a.id.split("-")[-1] == b.id.split("-")[-1]  # same content, same hash part


@pytest.mark.slow  # the default explorer: renders every state
def test_controls_hidden_until_the_script_runs(default_explorer, default_html):
    (controls,) = [a for t, a in Elements(default_html).tags
                   if a.get("id") == f"{default_explorer.id}-controls"]
    assert "hidden" in controls


def test_explorer_checks_its_controls():
    with pytest.raises(ValueError, match="distinct"):
        Explorer([Axis("a", "A", ("1",), ({},)), Axis("a", "A", ("2",), ({},))], lambda v: None)
    with pytest.raises(ValueError, match="one label per value"):
        Explorer([Axis("a", "A", (), ())], lambda v: None)
    with pytest.raises(ValueError, match="no control 'dd'"):
        static_explorer("embedding", dd=(2,))
    with pytest.raises(ValueError, match="no lab called"):
        static_explorer("embeddings")


@pytest.mark.slow  # builds the default explorer again (as the static build does)
def test_lab_picks_the_form_from_the_environment(monkeypatch):
    monkeypatch.setenv(ex.STATIC_ENV_VAR, "1")
    assert is_static_build()
    assert isinstance(lab("embedding"), BrowserLab)  # chapter 1 computes in the browser
    for value in ("0", ""):
        monkeypatch.setenv(ex.STATIC_ENV_VAR, value)
        assert not is_static_build()
        assert isinstance(lab("embedding"), LiveLab)
    monkeypatch.delenv(ex.STATIC_ENV_VAR)
    live = lab("embedding", d=16, text="the cat")
    assert isinstance(live, LiveLab)
    assert live.controls["d"].value == 16 and live.controls["text"].value == "the cat"


def test_the_live_lab_costs_no_precomputation(monkeypatch):
    monkeypatch.delenv(ex.STATIC_ENV_VAR, raising=False)

    def never(*args, **kwargs):
        raise AssertionError("the explorer was built in a live notebook")

    monkeypatch.setattr(ex, "explorer", never)
    assert isinstance(lab("embedding"), LiveLab)


@pytest.mark.slow  # builds every scene's explorer
def test_the_static_build_never_imports_ipywidgets_or_ipympl():
    code = (
        "import os, sys\n"
        "os.environ['ATTENTION_BOOK_STATIC'] = '1'\n"
        "from attention_book.controls import lab, static_explorer\n"
        "from attention_book.scenes import SCENES\n"
        "for name, scene in SCENES.items():\n"
        "    explore = {c.name: c.explore[:1] for c in scene.controls}\n"
        "    static_explorer(name, **explore)._repr_html_()\n"
        "lab('embedding')\n"
        "bad = [m for m in ('ipywidgets', 'ipympl', 'matplotlib.pyplot') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow  # builds every scene's explorer
def test_every_suggested_state_is_reachable_in_the_html():
    """What a chapter's "things to try" and exercises name, the explorer offers."""
    from attention_book.scenes import SCENES

    for name, scene in SCENES.items():
        if scene.suggested:  # what the book shows: computed in the browser, or precomputed
            made = web_lab(name) if scene.web else static_explorer(name)
            for values in scene.suggested:
                assert made.reachable(values), (name, values)


@pytest.mark.slow
@pytest.mark.browser
def test_explorer_switches_states_in_a_browser(tmp_path, default_explorer, default_html):
    from playwright import sync_api

    chromium = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    assert chromium.exists(), f"no browser at {chromium}: run `make test` (it installs chromium)"
    other = embedding_explorer(sentences=("the dog",), ds=(2, 4))
    page_file = tmp_path / "page.html"
    page_file.write_text(f"<!doctype html><html><body>{default_html}{other._repr_html_()}"
                         "</body></html>")
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"]
    eid = default_explorer.id
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=args)
        try:
            page = browser.new_page(device_scale_factor=2)  # a sharp screen: 1:1 pixels
            errors, requests = [], []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: m.type == "error" and errors.append(m.text))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(page_file.as_uri())
            assert page.is_visible(f"#{eid}-controls")
            page.select_option(f"#{eid}-c0", "3")
            page.fill(f"#{eid}-c1", "4")  # d = 32
            frame = default_explorer.frames[(3, 4)]
            assert page.get_attribute(f"#{eid}-img", "alt") == frame.alt
            assert page.text_content(f"#{eid}-c1-out") == "32"
            assert page.get_attribute(f"#{eid}-c1", "aria-valuetext") == "32"
            assert "X : (s, d) = (11, 32)" in page.text_content(f"#{eid}-caption")
            # on screen: the first picture with this state's overlay = this state's picture
            page.wait_for_function(f"document.getElementById('{eid}-over').complete")
            shot = page.locator(f"#{eid}-img").locator("xpath=..").screenshot()
            seen = np.asarray(Image.open(io.BytesIO(shot)).convert("RGB"), dtype=int)
            own = np.asarray(Image.open(io.BytesIO(frame.png)).convert("RGB"))
            height, width, _ = own.shape
            off = (np.abs(seen[:height, :width] - own).max(axis=2) > SAME_LEVELS).mean()
            assert off == 0, f"{off:.1%} of the pixels differ from the state's picture"
            # the other explorer on the page is untouched
            assert page.get_attribute(f"#{other.id}-img", "alt") == other.frames[(0,)].alt
            assert not errors
            assert all(u.startswith(("file:", "data:")) for u in requests)
            # without JavaScript the controls would be inert: they stay hidden
            no_js = browser.new_context(java_script_enabled=False).new_page()
            no_js.goto(page_file.as_uri())
            assert not no_js.is_visible(f"#{eid}-controls")
            assert not no_js.is_visible(f"#{eid}-c0")
            assert no_js.is_visible(f"#{eid}-img")
        finally:
            browser.close()
