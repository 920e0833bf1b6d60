"""Readable everywhere: every built page on a phone (390 px, 2x pixels) and a desktop
(1280 px), in the theme's light and dark modes, and in print.

On each page and in each of the four settings it fails on
- a page wider than its viewport (a reader would scroll sideways);
- text in a lab or a cell output whose contrast with what is behind it is under 4.5:1
  (WCAG AA), the background found by compositing every ancestor's colour;
- a figure whose smallest text renders under 9 CSS px where it is shown, unless its
  "Enlarge figure" button opens it with that text at 9 px or more. Every figure the book
  stores states its smallest text's height in its own pixels (``data-text-px`` on a lab's
  canvas, a PNG text chunk in the chapters' figures: ``plots.core.TEXT_SIZE_KEY``);
and that labs' canvases are sharp at 2x (drawn at the device's pixel ratio).
"""

from __future__ import annotations

import base64
from urllib.parse import urlparse

import pytest

from attention_book.plots.core import text_px
from conftest import PageWatch, built_pages

pytestmark = [pytest.mark.slow, pytest.mark.browser]

SETTINGS = [(390, "light"), (390, "dark"), (1280, "light"), (1280, "dark")]
MIN_CONTRAST = 4.5
MIN_TEXT_PX = 9.0

# Every element with its own text inside a lab or an output, with its colour composited
# over the colours behind it. Disabled controls are exempt (WCAG 1.4.3: inactive components).
CONTRAST_JS = r"""() => {
  function rgba(text) {
    const m = text.match(/rgba?\(([^)]+)\)/);
    if (!m) { return [0, 0, 0, 0]; }
    const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  }
  function over(top, bottom) {  // top composited over an opaque bottom
    const a = top[3];
    return [0, 1, 2].map(i => top[i] * a + bottom[i] * (1 - a)).concat([1]);
  }
  function background(el) {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) { layers.push(c); }
      if (c[3] >= 1) { break; }
    }
    let colour = [255, 255, 255, 1];  // the canvas behind everything
    for (let i = layers.length - 1; i >= 0; i--) { colour = over(layers[i], colour); }
    return colour;
  }
  function luminance(c) {
    const [r, g, b] = c.slice(0, 3).map(v => {
      v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }
  const bad = [];
  let checked = 0;
  document.querySelectorAll(".ab-lab *, .cell_output *").forEach(el => {
    const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length || el.closest(":disabled, [aria-hidden=true]")) { return; }
    const style = getComputedStyle(el);
    if (style.visibility !== "visible" || Number(style.opacity) === 0) { return; }
    const bg = background(el), fg = over(rgba(style.color), bg);
    const [hi, lo] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    checked += 1;
    if (ratio < %(min)s) {
      bad.push(`${el.tagName.toLowerCase()}.${el.className} "${el.textContent.trim().slice(0, 40)}"` +
               ` ${style.color} on rgb(${bg.slice(0, 3).map(Math.round)}): ${ratio.toFixed(2)}`);
    }
  });
  return {checked, bad};
}""".replace("%(min)s", str(MIN_CONTRAST))

# The figures a page shows: the canvases of labs computed in the browser (data-text-px in
# the canvas's pixels) and the outputs' images.
# Each one's "Enlarge figure" button, if it has one, is marked data-readable-zoom=i.
FIGURES_JS = """() => Array.from(document.querySelectorAll(
    ".ab-lab-figure > canvas, " +
    ".cell_output img:not(.ab-lab img)")).map(
    (img, i) => {
  const figure = img.closest(".ab-lab-figure, a.image-reference") || img;
  const next = figure.nextElementSibling;
  const zoom = !!next && next.classList.contains("ab-zoom-button");
  if (zoom) { next.setAttribute("data-readable-zoom", i); }
  const canvas = img.tagName === "CANVAS";
  return {i, zoom, src: canvas ? "canvas" : img.currentSrc || img.src,
          textPx: img.getAttribute("data-text-px"),
          shown: img.getBoundingClientRect().width, natural: canvas ? img.width : img.naturalWidth};
})"""


def stored_text_px(figure: dict, built_book) -> float:
    """The smallest text's height in the picture's own pixels, as the book stored it."""
    if figure["textPx"] not in (None, "None"):
        return float(figure["textPx"])
    src = figure["src"]
    if src.startswith("data:"):
        png = base64.b64decode(src.split(",", 1)[1])
    else:
        png = (built_book / urlparse(src).path.lstrip("/")).read_bytes()
    value = text_px(png)
    assert value is not None, f"{src[:80]} does not state its smallest text's size"
    return value


@pytest.fixture(scope="module")
def pages(built_book):
    return [p for p in built_pages(built_book) if p not in ("search.html", "genindex.html")]


def open_page(browser, site, page, width, mode):
    """``page`` on a ``width`` px screen (2x pixels on a phone) in the theme's ``mode``."""
    watch = PageWatch(browser, width=width, scale=2 if width < 600 else 1,
                      init_script=f'localStorage.setItem("mode", "{mode}");')
    tab = watch.open(f"{site}/{page}")
    assert tab.evaluate("document.documentElement.dataset.theme") == mode
    return watch, tab


@pytest.mark.parametrize("width,mode", SETTINGS, ids=[f"{w}px-{m}" for w, m in SETTINGS])
def test_every_page_fits_and_reads(browser, site, built_book, pages, width, mode):
    problems = []
    for page in pages:
        watch, tab = open_page(browser, site, page, width, mode)
        try:
            overflow = tab.evaluate("document.documentElement.scrollWidth - innerWidth")
            if overflow > 0:
                problems.append(f"{page}: {overflow} px wider than the {width} px viewport")
            contrast = tab.evaluate(CONTRAST_JS)
            problems += [f"{page}: contrast {b}" for b in contrast["bad"]]
            if page.startswith("chapters/"):
                assert contrast["checked"] > 20, f"{page}: no lab or output text found"
            for figure in tab.evaluate(FIGURES_JS):
                problems += figure_problems(tab, page, figure, built_book)
        finally:
            watch.close()
    assert not problems, "\n".join(problems[:40])


def figure_problems(tab, page: str, figure: dict, built_book) -> list[str]:
    """Whether the figure's smallest text is 9 CSS px as shown, or once enlarged."""
    if not figure["shown"]:
        return []  # not on screen (inside a closed dropdown): measured when opened
    px = stored_text_px(figure, built_book)
    shown = px * figure["shown"] / figure["natural"]
    if shown >= MIN_TEXT_PX:
        return []
    where = f"{page}: figure {figure['i']} ({figure['src'][-30:]})"
    if not figure["zoom"]:
        return [f"{where}: smallest text {shown:.1f} CSS px and no way to enlarge it"]
    tab.click(f'[data-readable-zoom="{figure["i"]}"]')
    dialog = tab.locator("dialog.ab-zoom[open]")
    dialog.wait_for()
    width = dialog.locator("img").first.evaluate("img => img.getBoundingClientRect().width")
    tab.keyboard.press("Escape")
    tab.locator("dialog.ab-zoom").wait_for(state="detached")
    enlarged = px * width / figure["natural"]
    if enlarged < MIN_TEXT_PX:
        return [f"{where}: smallest text {shown:.1f} CSS px, {enlarged:.1f} enlarged"]
    return []


def test_lab_canvases_are_sharp_at_2x(browser, site, pages):
    """On a 2x screen a lab's canvas has 2 pixels per CSS pixel (lab.js draws at the device
    pixel ratio)."""
    ratios = []
    for page in pages:
        watch, tab = open_page(browser, site, page, 390, "light")  # a 2x phone
        try:
            ratios += tab.evaluate("""() => Array.from(document.querySelectorAll(
                ".ab-lab-figure > canvas")).map(i =>
                i.width / i.getBoundingClientRect().width)""")
        finally:
            watch.close()
    assert len(ratios) >= 9 and all(r >= 2 - 1e-6 for r in ratios), ratios


def test_print_shows_each_lab_figure_only_and_wraps_code(browser, site):
    watch, tab = open_page(browser, site, "chapters/03_attention.html", 1280, "light")
    try:
        tab.emulate_media(media="print")
        styles = tab.evaluate("""() => ({
          hidden: Array.from(document.querySelectorAll(
            ".ab-lab-controls, .ab-lab-note, .ab-zoom-button")).map(
            e => getComputedStyle(e).display),
          whole: Array.from(document.querySelectorAll(".ab-lab")).map(
            e => getComputedStyle(e).breakInside),
          pictures: Array.from(document.querySelectorAll(".ab-lab-figure")).map(
            e => e.getBoundingClientRect().height),
          wraps: Array.from(document.querySelectorAll("pre")).map(
            e => getComputedStyle(e).whiteSpace),
          empty: Array.from(document.querySelectorAll(".cell_input, .cell_output, pre")).filter(
            e => getComputedStyle(e).display !== "none" && e.getClientRects().length &&
                 !e.textContent.trim() && !e.querySelector("img")).length,
        })""")
    finally:
        watch.close()
    assert styles["hidden"] and set(styles["hidden"]) == {"none"}, styles["hidden"]
    assert styles["whole"] and set(styles["whole"]) == {"avoid"}
    assert all(h > 100 for h in styles["pictures"])  # the picture itself still prints
    assert styles["wraps"] and set(styles["wraps"]) == {"pre-wrap"}
    assert styles["empty"] == 0
