"""What the prose says about the labs is what the labs offer.

Every lab of the HTML book computes in the reader's browser at the live lab's full range
(tests/test_web_labs.py drives every control). So no chapter, and not the front page, may
say that a control or a panel needs a kernel or the live notebook, that the page offers only
some settings, or that its states were precomputed: those sentences were true of the
precomputed explorer and outlived it (chapter 3 said its lab offered "three preset
settings", chapter 7 that the page had neither the causal mask nor other seeds).
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import CHAPTERS, ROOT

#: A sentence that says the HTML book offers less than the live notebook.
LIMITING = re.compile(
    r"[^.\n]*(needs? (the|a) (live )?(notebook|kernel)|only (in|with) a (live notebook|kernel)"
    r"|with a kernel|this page (has|offers|lacks|shows) (neither|only|no|three|two|a few)"
    r"|precomputed|preset settings?|not (on|in) this page|not in the HTML)[^.\n]*", re.I)


def prose(path) -> list[str]:
    """The markdown of a chapter (one string a cell) or of a page."""
    if path.suffix == ".md":
        return [path.read_text(encoding="utf-8")]
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]


def limiting_sentences(texts) -> list[str]:
    return [m.group(0).strip() for text in texts for m in LIMITING.finditer(text)]


@pytest.mark.parametrize("path", [*CHAPTERS, ROOT / "intro.md"], ids=lambda p: p.stem)
def test_no_page_says_the_html_lab_offers_less_than_it_does(path):
    found = limiting_sentences(prose(path))
    assert not found, f"{path.name} says the HTML lab lacks what it offers: {found}"


def test_the_check_finds_what_the_explorer_era_prose_said():
    """The sentences the precomputed explorer left behind are caught: the test can fail."""
    old = ["Typing your own sentences, choosing $d_k$ or another seed needs the live notebook "
           "(run this chapter with a kernel); this page offers three preset settings.",
           "In a live notebook also try the causal mask and other seeds; this page has neither.",
           "The later chapters' labs switch between states precomputed by the same code."]
    assert len(limiting_sentences(old)) == len(old)
    assert not limiting_sentences(["Any typed order works, in a live notebook and in this "
                                   "HTML book.", "The lab is the same on this page."])


#: {ref} to a label, and the label's definition "(name)=", in MyST markdown.
REF = re.compile(r"\{ref\}`(?:[^`<]*<)?([^`>]+)>?`")
LABEL = re.compile(r"^\(([^)\s]+)\)=\s*$", re.M)


def test_no_chapter_refers_by_label_to_another_page():
    """A {ref} to a label on another page works in the built book but not in JupyterLab,
    whose jupyterlab-myst sees one notebook at a time and logs "Cross reference target was
    not found" (tests/test_jupyterlab.py fails on it): across pages, chapters link with
    {doc} and name the section."""
    labels = {path: set(LABEL.findall("\n".join(prose(path)))) for path in CHAPTERS}
    wrong = [(path.stem, ref) for path in CHAPTERS for ref in REF.findall("\n".join(prose(path)))
             if ref not in labels[path] and not ref.startswith(("eq-", "fig-"))]
    assert not wrong, wrong
