"""The built site stays small: it serves only the JavaScript its pages load.

The book is read offline and copied around as a folder, so its weight matters. MathJax is
copied from node_modules by _ext/ab_theme_fixes.py, which names the files the pages load (not
whole packages). The browser test of every page (tests/test_pages.py) is what keeps that
list honest: it fails on any request to _static/vendor/ that fails, which is how a file
MathJax starts to need (a TeX extension, a font) shows up.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest


pytestmark = pytest.mark.slow

MB = 1000 * 1000
SITE_BUDGET = 15 * MB
PAGE_BUDGET = 5 * MB
#: Pages allowed more, each with its reason. Chapter 8 carries its two models' 26
#: checkpoints (training-checkpoints.js, 4.25 MB of 5-bit changes) beside its two labs; its
#: figures 8.6/8.7 naming each position (the chapters 6-9 review, F6) took the page to
#: 5.032 MB, and minifying the bundles' local names to 5.011 MB.
PAGE_BUDGETS = {"08_training.html": 5.05 * MB}
MATHJAX_BUDGET = 2 * MB


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _heaviest(root: Path, n: int = 12) -> str:
    """The folders and files that weigh most, two levels down, for failure messages."""
    weights: dict[str, int] = {}
    for f in root.rglob("*"):
        if f.is_file():
            key = "/".join(f.relative_to(root).parts[:3])
            weights[key] = weights.get(key, 0) + f.stat().st_size
    top = sorted(weights.items(), key=lambda kv: -kv[1])[:n]
    return "\n".join(f"{size / MB:8.2f} MB  {name}" for name, size in top)


#: the models a reader loads only on request, beside the site and outside its budget, each
#: with its own: chapter 9's (all-MiniLM-L6-v2, int8; the lab says how to get it back if it
#: is missing) and chapter 10's (SmolLM2-135M-Instruct's GGUF file, as the package ships it)
MODEL_FILES = {Path("_static") / "ab-web" / "minilm-weights.js": 40 * MB,
               Path("_static") / "ab-web" / "SmolLM2-135M-Instruct.Q4_1.gguf": 100 * MB}


def test_site_is_at_most_15_mb(built_book):
    models = 0
    for name, budget in MODEL_FILES.items():
        model = built_book / name
        assert model.is_file(), f"{name} is not beside the site"
        assert model.stat().st_size <= budget, f"{name}: {model.stat().st_size / MB:.1f} MB"
        models += model.stat().st_size
    total = _size(built_book) - models
    assert total <= SITE_BUDGET, (
        f"_build/html is {total / MB:.2f} MB (budget {SITE_BUDGET / MB:.0f} MB); heaviest:\n"
        + _heaviest(built_book)
    )


def page_weight(page: Path) -> int:
    """A page's bytes and those of every picture it shows (its figures) and of the lab scripts
    it loads (``_static/ab-web``: the state modules and their data)."""
    text = page.read_text(encoding="utf-8")
    names = set(re.findall(r'(?:\.\./)?(_images/[\w./-]+\.(?:png|webp))', text))
    names |= set(re.findall(r'(?:\.\./)?(_static/ab-web/[\w.-]+\.js)', text))
    return page.stat().st_size + sum((page.parent / "../" / n).resolve().stat().st_size
                                     for n in names)


def test_every_chapter_page_is_under_5_mb(built_book):
    pages = sorted((built_book / "chapters").glob("*.html"))
    assert pages
    weights = {p.name: page_weight(p) for p in pages}
    assert weights["09_pretrained.html"] > 2 * (built_book / "chapters" / "09_pretrained.html"
                                                 ).stat().st_size  # its figures and data count
    heavy = {name: f"{w / MB:.3f} MB" for name, w in weights.items()
             if w >= PAGE_BUDGETS.get(name, PAGE_BUDGET)}
    assert not heavy, heavy


def test_only_the_mathjax_the_pages_load_is_served(built_book):
    mathjax = built_book / "_static" / "vendor" / "mathjax"
    assert (mathjax / "startup.js").is_file()
    assert any((mathjax / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
    # The whole package (speech rule engine, explorer, menu, every input and output) is 8 MB.
    for unused in ("sre", "ui", "adaptors", "output/svg", "input/mml", "tex-chtml.js"):
        assert not (mathjax / unused).exists(), f"mathjax/{unused} is served but no page loads it"
    assert [p.name for p in (mathjax / "a11y").iterdir()] == ["assistive-mml.js"]
    assert _size(mathjax) <= MATHJAX_BUDGET, f"mathjax is {_size(mathjax) / MB:.2f} MB"


