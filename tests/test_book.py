"""The built HTML book: strict build, nothing loaded from outside the site, configured as
readers expect."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from conftest import CHAPTERS

pytestmark = pytest.mark.slow

# An address outside the site: a scheme with a host, or protocol-relative.
EXTERNAL = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:)?//", re.I)
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")]+)""", re.I)
CSS_IMPORT = re.compile(r"""@import\s+['"]([^'"]+)""", re.I)


class _Resources(HTMLParser):
    """Collects every URL a browser would load (not mere links to follow)."""

    def __init__(self):
        super().__init__()
        self.urls: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "img", "iframe", "audio", "video", "source", "embed", "track"):
            self._add(tag, a.get("src"))
        if tag == "img" and a.get("srcset"):
            for part in a["srcset"].split(","):
                self._add("img srcset", part.strip().split(" ")[0])
        if tag == "link" and set((a.get("rel") or "").lower().split()) & {
            "stylesheet", "icon", "preload", "modulepreload", "prefetch", "manifest",
            "shortcut", "apple-touch-icon", "preconnect", "dns-prefetch",
        }:
            self._add("link", a.get("href"))
        if tag == "object":
            self._add(tag, a.get("data"))
        for match in CSS_URL.finditer(a.get("style") or ""):
            self._add("style", match.group(1))

    def handle_data(self, data):
        for rx in (CSS_URL, CSS_IMPORT):
            for match in rx.finditer(data):
                if match.group(1).startswith(("http", "//")):
                    self._add("inline css", match.group(1))

    def _add(self, where, url):
        if url:
            self.urls.append((where, url))


def _external_resources(html: str) -> list[tuple[str, str]]:
    parser = _Resources()
    parser.feed(html)
    return [(w, u) for w, u in parser.urls if EXTERNAL.match(u)]


def test_strict_build_has_no_warnings(built_book):
    log = (built_book.parent / "build.log").read_text()  # _build/build.log
    assert "WARNING" not in log.replace("[IPKernelApp] WARNING", ""), log[-4000:]
    assert (built_book / "index.html").exists()


def test_every_chapter_is_built(built_book):
    for nb in CHAPTERS:
        assert (built_book / "chapters" / f"{nb.stem}.html").exists(), nb.stem


def test_no_page_loads_anything_from_outside_the_site(built_book):
    offenders = {}
    for page in built_book.rglob("*.html"):
        found = _external_resources(page.read_text(errors="replace"))
        if found:
            offenders[str(page.relative_to(built_book))] = found
    assert not offenders, offenders


def test_no_stylesheet_loads_anything_from_outside_the_site(built_book):
    offenders = {}
    for css in built_book.rglob("*.css"):
        text = css.read_text(errors="replace")
        found = [u for rx in (CSS_URL, CSS_IMPORT) for u in rx.findall(text) if EXTERNAL.match(u)]
        if found:
            offenders[str(css.relative_to(built_book))] = found
    assert not offenders, offenders


def test_the_scanner_catches_what_it_should():
    """The offline scan above would be useless if it could not see these."""
    html = (
        '<script src="https://cdn.example/x.js"></script><img src="//cdn.example/i.png">'
        '<link rel="stylesheet" href="http://cdn.example/s.css"><div style="background:'
        'url(https://cdn.example/b.png)"></div><style>@import "https://cdn.example/f.css";'
        '</style><a href="https://example.org">a link is fine</a><script src="_static/ok.js">'
    )
    assert len(_external_resources(html)) == 5


def test_mathjax_is_served_locally_and_no_widget_manager_is_needed(built_book):
    page = (built_book / "intro.html").read_text()
    assert 'src="_static/vendor/mathjax/startup.js' in page
    for path in ("mathjax/startup.js", "mathjax/output/chtml/fonts/woff-v2"):
        assert (built_book / "_static" / "vendor" / path).exists(), path
    for page in built_book.rglob("*.html"):  # no page asks for the widget manager
        text = page.read_text(errors="replace")
        assert "embed-amd.js" not in text and "require.js" not in text, page.name


def test_no_inert_ipywidgets_in_the_html(built_book):
    for page in (built_book / "chapters").glob("*.html"):
        text = page.read_text()
        assert "application/vnd.jupyter.widget-view+json" not in text, page.name
        assert "application/vnd.jupyter.widget-state+json" not in text, page.name


def test_each_chapter_shows_a_lab_computed_in_the_browser(built_book):
    """Every chapter page has its lab as the browser computes it: a declaration and the
    scripts that compute it (the HTML has no kernel)."""
    for page in sorted((built_book / "chapters").glob("0*.html")):
        text = page.read_text()
        assert 'class="ab-lab-data"' in text and "ab-web/lab.js" in text, page.name


def test_reader_features(built_book):
    intro = (built_book / "intro.html").read_text()
    assert "How Transformers Attend" in intro  # the title
    assert (built_book / "search.html").exists() and (built_book / "searchindex.js").exists()
    chapter = (built_book / "chapters" / "01_embeddings.html").read_text()
    assert "_sources/chapters/01_embeddings.ipynb" in chapter  # the download-notebook button
    assert (built_book / "_sources" / "chapters" / "01_embeddings.ipynb").exists()
    assert re.search(r"1\.\s*Embeddings", intro), "chapters are numbered in the navigation"


def test_bibliography_is_cited_from_the_text(built_book):
    refs = (built_book / "references.html").read_text()
    assert "Attention is all you need" in refs  # the bibliography style sentence-cases titles
    intro = (built_book / "intro.html").read_text()
    assert 'href="references.html#id' in intro and "Vaswani" in intro
