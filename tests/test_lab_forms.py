"""How a chapter shows a lab (controls/__init__.py, controls/web.py): ``lab(name)`` is the
live lab in a notebook and the lab computed in the reader's browser in the built book; the
browser lab's element is self-contained and escaped, and offers every state its chapter
suggests."""

from __future__ import annotations

import dataclasses
import html
import json
import re
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from attention_book import controls
from attention_book.controls import BrowserLab, is_static_build, lab, web_lab
from attention_book.controls.widget import LabWidget
from attention_book.scenes import PRESET_SENTENCES, SCENES, embedding_state
from attention_book.scenes.core import text
from attention_book.tokens import RUNNING_SENTENCE, Vocabulary, tokenize
from js_view import alt

HOSTILE = "</script><script>alert(1)</script><!-- & >"


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text of each <script>."""

    def __init__(self, html_text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self._in_script = False
        self.feed(html_text)

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


def hostile_embedding_lab() -> BrowserLab:
    """Chapter 1's lab with markup as its title, default sentence and a suggestion."""
    scene = SCENES["embedding"]
    typed = text("text", "sentence " + HOSTILE, HOSTILE, suggestions=("<b>bold</b> the dog",))
    return BrowserLab(dataclasses.replace(
        scene, title="Embeddings " + HOSTILE,
        controls=tuple(typed if c.name == "text" else c for c in scene.controls)))


def test_suggested_sentences_cover_the_cases_the_chapter_needs():
    vocab = Vocabulary.default()
    assert PRESET_SENTENCES[0] == RUNNING_SENTENCE
    token_lists = [tokenize(s) for s in PRESET_SENTENCES]
    assert any(not all(vocab.is_known(t) for t in toks) for toks in token_lists)  # unknown
    assert any(len(toks) > 12 for toks in token_lists)  # longer
    assert any(len(set(toks)) < len(toks) for toks in token_lists)  # repeated words
    offered = SCENES["embedding"].control("text").suggestions
    assert set(offered) == set(PRESET_SENTENCES) - {RUNNING_SENTENCE}  # the default aside


def test_lab_picks_the_form_from_the_environment(monkeypatch):
    monkeypatch.setenv(controls.STATIC_ENV_VAR, "1")
    assert is_static_build()
    assert isinstance(lab("embedding"), BrowserLab)  # the built book computes in the browser
    for value in ("0", ""):
        monkeypatch.setenv(controls.STATIC_ENV_VAR, value)
        assert not is_static_build()
        assert isinstance(lab("embedding"), LabWidget)
    monkeypatch.delenv(controls.STATIC_ENV_VAR)
    live = lab("embedding", d=16, text="the cat")
    assert isinstance(live, LabWidget)
    assert live.values["d"] == 16 and live.values["text"] == "the cat"
    with pytest.raises(ValueError, match="no lab called"):
        lab("embeddings")


def test_script_data_cannot_close_the_script_or_open_a_comment():
    made = hostile_embedding_lab()
    page = made._repr_html_()
    assert page.count("</script") == 1  # only the declaration's own end tag
    assert page.count("<script") == 1 and "<!--" not in page and "<b>bold" not in page
    (script,) = Elements(page).scripts
    decl = json.loads(script)
    (typed,) = [c for c in decl["controls"] if c["name"] == "text"]
    assert typed["default"] == HOSTILE and typed["label"] == "sentence " + HOSTILE  # intact
    assert typed["suggestions"] == ["<b>bold</b> the dog"]
    assert "Embeddings &lt;/script&gt;" in page  # the title, escaped in the markup


def test_without_javascript_the_default_state_is_described_and_escaped():
    made = hostile_embedding_lab()
    page = made._repr_html_()
    state = embedding_state(HOSTILE, **{k: v for k, v in made.scene.defaults.items()
                                        if k != "text"})
    described = re.search(r'<noscript>.*?<p class="ab-lab-alt">(.*?)</p>.*?</noscript>', page, re.S)
    assert described, page[:500]
    assert "<" not in described.group(1)
    assert html.unescape(described.group(1)) == alt("embedding", state)
    readout = re.search(r'class="ab-lab-readout"[^>]*>(.*?)</div></noscript><script', page, re.S).group(1)
    assert "<script" not in readout and "&lt; &rarr;" in readout  # the token "<", escaped


def test_labs_get_distinct_deterministic_ids_and_hide_controls_until_scripts_run():
    a, b = web_lab("embedding"), web_lab("embedding")
    assert a.id != b.id
    page_a, page_b = a._repr_html_(), b._repr_html_()
    assert page_a == a._repr_html_()  # stable
    ids_a = {attrs["id"] for _, attrs in Elements(page_a).tags if "id" in attrs}
    ids_b = {attrs["id"] for _, attrs in Elements(page_b).tags if "id" in attrs}
    # the <noscript> readout's, and lab.js's skeleton names its parts after it
    assert ids_a == {a.id, f"{a.id}-caption"} and ids_b == {b.id, f"{b.id}-caption"}
    assert a.id.split("-")[-1] == b.id.split("-")[-1]  # same declaration, same hash part
    # no inert control without JavaScript: lab.js builds the controls when it runs
    assert not [tag for tag, _ in Elements(page_a).tags if tag in ("input", "select", "textarea")]
    assert "ab-lab-controls" not in page_a


def test_every_suggested_state_is_reachable_in_the_html():
    """What a chapter's "things to try" and exercises name, the browser lab offers."""
    for name, scene in SCENES.items():
        made = web_lab(name)
        for values in scene.suggested:
            assert made.reachable(values), (name, values)


@pytest.mark.slow  # a fresh interpreter
def test_the_static_build_never_imports_widget_libraries():
    code = (
        "import os, sys\n"
        "os.environ['ATTENTION_BOOK_STATIC'] = '1'\n"
        "from attention_book.controls import lab\n"
        "from attention_book.scenes import SCENES\n"
        "for name in SCENES:\n"
        "    lab(name)._repr_html_()\n"
        "bad = [m for m in ('ipywidgets', 'anywidget', 'matplotlib.pyplot') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_picture_comparison_runs_and_can_fail():
    """test_web_labs's same_drawings (its browser tests are the slow tier) compares pixels
    where the sizes match, fails on a different picture, and fails when no picture could be
    compared (its floor)."""
    from test_web_labs import same_drawings

    a, b = ("alt", "text", ((600, 300), "f1")), ("alt", "text", ((600, 400), "f2"))
    assert same_drawings({"x": a, "y": b}, {"x": a, "y": ("alt", "text", ((600, 500), "f3"))},
                         "t") == 1
    with pytest.raises(AssertionError):
        same_drawings({"x": a}, {"x": ("alt", "text", ((600, 300), "other"))}, "t")
    with pytest.raises(AssertionError, match="no picture was compared"):
        same_drawings({"y": b}, {"y": ("alt", "text", ((600, 500), "f2"))}, "t")
    with pytest.raises(AssertionError):
        same_drawings({"x": a}, {"x": ("other alt", "text", a[2])}, "t")
