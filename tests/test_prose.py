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


#: What the prose of a lab's section must say the reader can do with a control (a regular
#: expression, case-insensitive), where the control's label alone is too weak a check. A
#: control not listed here must have every word of its label (outside parentheses) in the
#: section: a new lab needs no line here. The section is the chapter's markdown from the
#: heading above the ``lab(...)`` cell to the next heading.
SAYS = {
    "embedding": {"text": r"type any sentence", "d": r"\$d\$ slider", "seed": r"seed"},
    "positional": {"s": r"move \$s\$", "d": r"\$d\$ \(even", "base": r"the base",
                   "k": r"offset\s+\$k\$"},
    "scaling": {"scaled": r"switch the scale", "d_k": r"move \$d_k\$"},
    "attention": {"text": r"sentence of\s+your own", "mode": r"cross-attention",
                  "kv_text": r"keys and\s+values from another", "query": r"pick a query",
                  "d_k": r"\$d_k\$ from 1", "temperature": r"temperature", "seed": r"seed"},
    "multihead": {"text": r"type any sentence", "d": r"change \$d\$", "h": r"\$h\$",
                  "seed": r"the seed", "heads_on": r"switch\s+heads off",
                  "positional": r"add positional encoding"},
    "permutation": {"text": r"type any sentence", "order": r"named permutation",
                    "custom": r"custom order", "seed": r"shuffle seed",
                    "pe": r"positional encoding", "causal": r"causal mask"},
    "masking": {"text": r"type any\s+sentence", "kind": r"sliding window",
                "length": r"padding", "window": r"window", "lower": r"band",
                "upper": r"band", "method": r"apply the mask"},
    "block": {"text": r"type any sentence", "norm_first": r"choose the form",
              "residual": r"residual connections off", "depth": r"set the depth",
              "seed": r"the seed", "causal": r"causal mask"},
    "training": {"task": r"either model", "checkpoint": r"26 checkpoints",
                 "reverse_input": r"8 symbols from 0\.\.9", "induction_input": r"up to 24"},
    "generation": {"prompt": r"\*\*prompt\*\* \(up to 23", "checkpoint": r"\*\*checkpoint\*\*",
                   "n": r"\*\*tokens to generate\*\*", "t": r"\*\*step t\*\*",
                   "temperature": r"\*\*decoding\*\* \(greedy, or sampling", "seed": r"\*\*seed\*\*"},
    "decoder": {"prompt": r"type a \*\*prompt\*\*", "chat": r"\*\*as\*\* plain text",
                "decoding": r"\*\*decoding\*\* is greedy", "temperature": r"\*\*temperature\*\*",
                "top_k": r"\*\*top-k\*\*", "top_p": r"\*\*top-p\*\*", "seed": r"\*\*seed\*\*",
                "n_new": r"\*\*tokens to write\*\*", "t": r"\*\*step t shown\*\*",
                "layer": r"\*\*layer\*\*", "head": r"\*\*head\*\*", "view": r"\*\*view\*\*",
                "off": r"\*\*heads switched off\*\*"},
    "pretrained": {"text": r"type any sentence", "layer": r"layer", "head": r"head",
                   "query": r"any query token", "measure": r"switch \*\*maps show\*\*",
                   "view": r"view \*\*all 72 heads\*\*"},
}

LAB_CALL = re.compile(r'\blab\("(\w+)"')
HEADING = re.compile(r"^#{1,4} ", re.M)


def lab_sections(path) -> list[tuple[str, str]]:
    """(lab name, the markdown of its section) for every ``lab(...)`` cell of a chapter."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    text = ["".join(c["source"]) for c in cells]
    heading = [c["cell_type"] == "markdown" and bool(HEADING.search(t))
               for c, t in zip(cells, text)]
    found = []
    for i, cell in enumerate(cells):
        call = LAB_CALL.search(text[i]) if cell["cell_type"] == "code" else None
        if call:
            lo = max([k for k in range(i) if heading[k]], default=0)
            hi = min([k for k in range(i + 1, len(cells)) if heading[k]], default=len(cells))
            found.append((call.group(1), "\n".join(
                text[k] for k in range(lo, hi) if cells[k]["cell_type"] == "markdown")))
    return found


def said(name: str, control) -> str:
    """The pattern the section of lab ``name`` must match for ``control``: SAYS's, else
    every word of its label (outside parentheses), anywhere in the section."""
    if control.name in SAYS.get(name, {}):
        return SAYS[name][control.name]
    words = re.sub(r"\(.*?\)", " ", control.label).split()
    return "".join(rf"(?=.*\b{re.escape(word)}\b)" for word in words) or re.escape(control.name)


def unsaid(name: str, section: str) -> list[str]:
    """The controls of lab ``name`` whose use its section does not mention."""
    from attention_book.scenes import SCENES

    controls = SCENES[name].controls
    assert set(SAYS.get(name, {})) <= {c.name for c in controls}, (name, sorted(SAYS[name]))
    section = " ".join(section.split())
    return [c.name for c in controls if not re.search(said(name, c), section, re.I | re.S)]


def test_every_lab_section_says_what_each_of_its_controls_offers():
    """Issue 25, item 5: the prose says what each lab offers. Every lab of every chapter is
    listed, every control it declares is named by its section (a new control fails the
    set comparison until its sentence is written)."""
    from attention_book.scenes import SCENES

    labs = {name: (path.stem, section) for path in CHAPTERS
            for name, section in lab_sections(path)}
    assert set(labs) == set(SCENES) and set(SAYS) <= set(labs)
    missing = {name: unsaid(name, section) for name, (_, section) in labs.items()}
    assert not any(missing.values()), {labs[n][0]: m for n, m in missing.items() if m}


def test_the_control_check_can_fail():
    """A section that leaves out the sentence box and the seed is caught."""
    assert unsaid("embedding", "Move the $d$ slider.") == ["text", "seed"]
    assert unsaid("training", "Pick either model.") == ["checkpoint", "reverse_input",
                                                         "induction_input"]
    SAYS_TRAINING = SAYS.pop("training")  # the label check, as a lab without SAYS gets
    try:
        assert unsaid("training", "Pick the task.") == ["checkpoint", "reverse_input",
                                                         "induction_input"]
    finally:
        SAYS["training"] = SAYS_TRAINING
