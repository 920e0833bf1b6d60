"""Every built page as a reader meets it, in Debian chromium: one visit per page and width.

The site is served on 127.0.0.1 and each page opened on a phone (390 px, 2x pixels) and a
desktop (1280 px), in the theme's light mode, then switched to dark mode by the theme's
button in the same tab (which finds what a page loaded in dark mode finds, on today's
site: test_the_axe_plan_finds_what_the_whole_set_finds_in_every_setting). In each of the
four settings every check runs:

- **it loads cleanly and offline**: no console error or warning, no request that leaves
  127.0.0.1, no failed request, every image loaded;
- **its math is typeset by the MathJax the site serves** (``_static/vendor``), with the
  hidden MathML screen readers read, and no raw LaTeX delimiter left on the page; a file
  MathJax starts to need (a TeX extension, a font) shows up as a failed request there;
- **axe-core finds no WCAG 2 A/AA violation** (the rules tagged ``wcag2a``, ``wcag2aa``,
  ``wcag21a``, ``wcag21aa``, ``wcag22aa``; axe comes from npm, injected from
  ``node_modules``, never served to readers): every rule at each width in light mode, and in
  dark mode the rules that read colours (axe_plan, with the evidence that this finds what
  every rule in every setting finds);
- **it reads**: the page is no wider than the screen; text in a lab or a cell output has a
  contrast of at least 4.5:1 with what is behind it (WCAG AA), the background found by
  compositing every ancestor's colour; a figure's smallest text is at least 9 CSS px as
  shown, or once its "Enlarge figure" button opens it. Every figure states its smallest
  text's height in its own pixels (``data-text-px`` on a lab's canvas, a PNG text chunk in
  the chapters' figures: ``plots.core.TEXT_SIZE_KEY``);
- **its figures keep their shape**: every chapter figure, shown and enlarged, within 2% of
  its file's width / height (in light mode: dark mode pads a figure, not its shape);
- on the 2x phone, **every lab canvas is sharp**: 2 canvas pixels per CSS pixel.

Then, on a page with labs, in the same tab, **the labs' design**: on the phone each figure
starts within reach of the lab's first control; at 1280 px every download holds what the
figure draws (dark mode), the masked cells have the one masked style (dark, then light
mode) and no control's change runs a task over 50 ms (lab_problems).

The site's root, ``index.html``, is a meta refresh to ``intro.html``: it is checked to get
there cleanly, once, rather than read as a fifth copy of the first page.

And in print a lab shows its figure and readout only, on one page, and code wraps.

One test a page (its two visits), so that pytest-xdist's workers share them out. These
tests fail (they never skip) when the browser is missing: ``make test`` installs it.
"""

from __future__ import annotations

import base64
import re
from urllib.parse import urlparse

import pytest
import yaml

from attention_book.plots.core import text_px
from conftest import ROOT, PageWatch, built_pages
from node_driver import page_function

pytestmark = [pytest.mark.slow, pytest.mark.browser]

WIDTHS = (390, 1280)
#: Pages of the theme's own (search, index) have no lab or figure of the book's to read.
THEME_PAGES = ("search.html", "genindex.html")
#: The site's root: a meta refresh to the first page (a visit would read intro.html again).
REDIRECT = ("index.html", "intro.html")


def book_pages() -> list[str]:
    """The pages to visit, from the table of contents (the build's, _toc.yml) and the
    theme's own pages; a test checks that they are every built page."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"], *(c["file"] for part in toc["parts"] for c in part["chapters"])]
    return sorted([f"{f}.html" for f in files] + list(THEME_PAGES))


PAGES = book_pages()
MIN_CONTRAST = 4.5
MIN_TEXT_PX = 9.0

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]

SAME_STYLE_JS = page_function("markSameStyles")

# Axe's rules in three kinds (axe-core 4.14's own metadata: each rule's selector, whether it
# leaves hidden elements out, and what its checks read), and where each runs:
# - LAYOUT_FREE: rules that read the markup only (the root's lang and title, <meta>, ids,
#   <body>'s aria-hidden), never what is shown: the same verdict at every width and mode;
# - MODE_RULES: the rules that read colours: what the colour mode can change;
# - every other rule leaves out hidden elements or reads sizes, overflow, focusability: what
#   the theme's responsive CSS changes. On today's site 16 of them check other elements at
#   390 px than at 1280 px (the sidebars, the phone's header buttons), and none checks other
#   elements in dark mode than in light (measured with the whole set in every setting).
# So each page runs the whole set at 1280 px, light; all but LAYOUT_FREE at 390 px, light;
# and MODE_RULES in dark mode, as long as the page shows the same elements as it did in light
# at that width (VISIBLE_JS); if not, the whole set. The evidence, on today's site:
# test_the_axe_plan_finds_what_the_whole_set_finds_in_every_setting, and
# test_the_axe_plan_catches_what_one_width_or_mode_shows for what a later page could show.
# The renderer's CPU for axe on chapter 6's four visits, each setting's plan run after the
# whole set in one visit: 21.0 -> 13.4 s (a visit's second run is about 20% cheaper: the same
# rules at 1280 px took 5.3 then 4.3 s); on intro.html 5.1 -> 3.0 s.
LAYOUT_FREE = ["document-title", "html-has-lang", "html-lang-valid", "html-xml-lang-mismatch",
               "meta-refresh", "meta-viewport", "duplicate-id-aria", "aria-hidden-body"]
MODE_RULES = ["color-contrast", "link-in-text-block"]
WHOLE = (1280, "light")  # the setting that runs every rule

VISIBLE_JS = page_function("visibleElements")
RUN_AXE = page_function("runAxe")
SETTLE = page_function("settle")
BROKEN_IMAGES = page_function("brokenImages")
CONTRAST_JS = page_function("textContrasts")
FIGURES_JS = page_function("figures")
CANVAS_RATIOS = page_function("canvasRatios")


def open_page(browser, site, page, width, mode, idle=True):
    """``page`` on a ``width`` px screen (2x pixels on a phone) in the theme's ``mode``;
    ``idle``: as :meth:`PageWatch.open`."""
    watch = PageWatch(browser, width=width, scale=2 if width < 600 else 1,
                      init_script=f'localStorage.setItem("mode", "{mode}");')
    tab = watch.open(f"{site}/{page}", idle=idle)
    assert tab.evaluate("document.documentElement.dataset.theme") == mode
    return watch, tab


TO_MODE = page_function("toMode")


def switch_mode(tab, mode: str) -> None:
    """The page switched to the theme's ``mode`` ("light", "dark") by its button."""
    assert tab.evaluate(TO_MODE, mode) == [mode, mode]


def maths_problems(tab) -> list[str]:
    """Whether every formula is typeset, with assistive MathML, and no raw TeX is left."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    found = []
    if tab.locator(".math").count():
        # A TeX extension MathJax cannot load (a 404) stops it typesetting the whole page.
        try:
            tab.wait_for_selector("mjx-container", state="attached", timeout=15_000)
            tab.evaluate("() => MathJax.startup.promise")
            tab.evaluate("() => document.fonts.ready.then(() => true)")  # the fonts it asked for
        except PlaywrightTimeoutError:
            found.append("no math typeset in 15 s")
        unrendered = tab.locator(".math:not(:has(mjx-container))").count()
        if unrendered:
            found.append(f"{unrendered} math elements not typeset")
        unreadable = tab.locator("mjx-container:not(:has(mjx-assistive-mml math))").count()
        if unreadable:
            found.append(f"{unreadable} formulas without assistive MathML")
    if tab.evaluate(r"() => /\\\(|\\\[|\$\$/.test(document.body.innerText)"):
        found.append("raw LaTeX delimiters visible: math left untypeset")
    return found


def lay_out_every_section(tab) -> None:
    """Every section laid out, as a reader who scrolled to it sees it: a section not yet shown
    (content-visibility: auto, attention-book.css) lays an element out on its own, past the
    section's stand-in height (where axe misread a link's background), and clips what is
    wider than the section (which the overflow check would miss)."""
    tab.evaluate(LAY_OUT_JS, True)


LAY_OUT_JS = page_function("layOut")


def prepare_axe(tab) -> None:
    """Settle the page, mark the code styles (SAME_STYLE_JS) and inject axe (once a tab)."""
    assert tab.evaluate(SETTLE) == "done", "the book's script did not run"
    lay_out_every_section(tab)
    tab.evaluate(SAME_STYLE_JS)
    if not tab.evaluate("() => !!window.axe"):
        tab.add_script_tag(path=str(AXE))


def axe_plan(tab, width: int, mode: str, memo: dict | None) -> tuple[list | None, list]:
    """The rules to run in this setting, as RUN_AXE takes them (``only``, ``off``): see
    LAYOUT_FREE. ``memo``: what the page's visits so far noted (the elements each light
    visit showed); without it, every rule."""
    if memo is None:
        return None, []
    visible = tab.evaluate(VISIBLE_JS)
    if mode == "light":
        memo["visible", width] = visible
        return None, ([] if (width, mode) == WHOLE else LAYOUT_FREE)
    if memo.get(("visible", width)) == visible:  # light's visit ran the other rules on them
        return MODE_RULES, []
    return None, []


def axe_violations(tab, width: int = 1280, mode: str = "light",
                   memo: dict | None = None) -> list[dict]:
    """The violations axe finds on the page once it has settled (colour contrast on one
    element of each style of highlighted code: SAME_STYLE_JS), with the rules of the
    setting's plan (axe_plan), or every rule."""
    prepare_axe(tab)
    only, off = axe_plan(tab, width, mode, memo)
    return tab.evaluate(RUN_AXE, [AXE_TAGS, only, off, False])["violations"]


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


def figure_problems(tab, page: str, figure: dict, built_book, width: int = 0,
                    memo: dict | None = None) -> list[str]:
    """Whether the figure's smallest text is 9 CSS px as shown, or once enlarged. The
    enlarged size depends on the screen's width only: with ``memo``, a page's second visit
    at a width (the other mode) reads it from the first instead of opening it again."""
    if not figure["shown"]:
        return []  # not on screen (inside a closed dropdown): measured when opened
    px = stored_text_px(figure, built_book)
    shown = px * figure["shown"] / figure["natural"]
    if shown >= MIN_TEXT_PX:
        return []
    where = f"figure {figure['i']} ({figure['src'][-30:]})"
    if not figure["zoom"]:
        return [f"{where}: smallest text {shown:.1f} CSS px and no way to enlarge it"]
    memo = {} if memo is None else memo
    key = ("enlarged", width, figure["i"], figure["src"], figure["natural"])
    if key not in memo:
        tab.click(f'[data-readable-zoom="{figure["i"]}"]')
        dialog = tab.locator("dialog.ab-zoom[open]")
        dialog.wait_for()
        memo[key] = dialog.locator("img").first.evaluate("img => img.getBoundingClientRect().width")
        tab.keyboard.press("Escape")
        tab.locator("dialog.ab-zoom").wait_for(state="detached")
        # the pointer off the page, as before the click: left on the figure, its hover showed
        # the figure's link, and the dark visit's axe_plan saw other elements (every rule)
        tab.mouse.move(-1, -1)
    enlarged = px * memo[key] / figure["natural"]
    if enlarged < MIN_TEXT_PX:
        return [f"{where}: smallest text {shown:.1f} CSS px, {enlarged:.1f} enlarged"]
    return []


def reading_problems(tab, page: str, width: int, built_book, memo: dict | None = None) -> list[str]:
    """Overflow, contrast and the size of every figure's smallest text (``memo``: as
    figure_problems)."""
    found = []
    lay_out_every_section(tab)
    overflow = tab.evaluate("document.documentElement.scrollWidth - innerWidth")
    if overflow > 0:
        found.append(f"{overflow} px wider than the {width} px viewport")
    contrast = tab.evaluate(CONTRAST_JS, [False, MIN_CONTRAST])
    found += [f"contrast {b}" for b in contrast["bad"]]
    if page.startswith("chapters/") and contrast["checked"] <= 20:
        found.append("no lab or output text found")
    for figure in tab.evaluate(FIGURES_JS):
        found += figure_problems(tab, page, figure, built_book, width, memo)
    return found


def test_axe_core_is_installed_from_the_lock_file():
    assert AXE.exists(), "no axe-core in node_modules: run `make test` (it runs npm ci)"


def setting_problems(watch, tab, page: str, width: int, mode: str, built_book,
                     memo: dict) -> tuple[list[str], dict]:
    """Every check of the module docstring on the page as the tab shows it now: what it
    found, and what the page showed (``typeset``: formulas typeset; ``vendor``: the files
    requested from _static/vendor; ``ratios``: the lab canvases' pixels per CSS pixel).
    ``memo``: what the page's earlier settings noted (axe_plan, figure_problems). The
    console errors and requests are those since the tab's last setting."""
    before = [len(watch.console_errors), len(watch.outside), len(watch.failed),
              len(watch.console_warnings)]
    found = maths_problems(tab)
    shown = {"typeset": tab.locator("mjx-container").count()}
    found += [f"broken image {src}" for src in tab.evaluate(BROKEN_IMAGES)]
    found += [f"axe: {v['id']} ({v['impact']}): {v['help']}; {v['nodes']}"
              for v in axe_violations(tab, width, mode, memo)]
    if page not in THEME_PAGES:
        found += reading_problems(tab, page, width, built_book, memo)
    shown["ratios"] = tab.evaluate(CANVAS_RATIOS)
    if width < 600:
        found += [f"a lab canvas has {r:.2f} pixels per CSS pixel on a 2x screen"
                  for r in shown["ratios"] if r < 2 - 1e-6]
    watch.settle()  # every request answered: the lists below are complete
    found += [f"console error: {e}" for e in watch.console_errors[before[0]:]]
    found += [f"console warning: {e}" for e in watch.console_warnings[before[3]:]]
    found += [f"request outside 127.0.0.1: {u}" for u in watch.outside[before[1]:]]
    found += [f"failed request: {f}" for f in watch.failed[before[2]:]]
    shown["vendor"] = {urlparse(u).path.split("/_static/vendor/", 1)[1]
                       for u in watch.requested if "/_static/vendor/" in u}
    return [f"{width}px {mode}: {f}" for f in found], shown


ASPECTS_JS = page_function("aspects")


def aspect_problems(tab, width: int) -> tuple[list[str], int]:
    """Chapters 6-9 review, F1: an inline height on each <img> gave 0.71-0.93 of the
    figure's aspect ratio at 1280 px and 0.36-0.57 on a phone, and "Enlarge" stretched it 2x
    the other way. Every chapter figure the page shows, shown and enlarged, within 2% of its
    file's width / height: what it found, and how many figures it measured (the page's
    sections laid out: prepare_axe)."""
    bad, rows = [], tab.evaluate(ASPECTS_JS)
    for row in rows:
        for key in ("shown", "enlarged"):
            if key in row and abs(row[key] / row["natural"] - 1) > 0.02:
                bad.append(f"{width}px: aspect ratio of {row['src']} {key}: "
                           f"{row[key] / row['natural']:.3f} of its shape")
    return bad, len(rows)


def output_images(built_book, page: str) -> int:
    """How many images the built page's article holds (every one a cell output's figure)."""
    html = (built_book / page).read_text(encoding="utf-8")
    return len(re.findall(r"<img\b", html[html.index("<article"):html.index("</article>")]))


def visit(browser, site, built_book, page: str, width: int,
          memo: dict) -> tuple[list[str], list[dict]]:
    """One visit a width: the page loaded in light mode and checked (setting_problems), then
    switched to dark mode by the theme's button and checked again, in the same tab: what
    each mode found and showed (a load in dark mode finds the same on today's site:
    test_the_axe_plan_finds_what_the_whole_set_finds_in_every_setting). The CPU (pytest and
    chromium, sampled) of the 12 page tests, four loads a page -> two: 333 -> 258 s (-22%;
    chapter 3 30.8 -> 24.3 s; both modules run side by side, load 11-24): the dark visit's
    load, MathJax, the labs' first drawing and axe's injection are saved; axe's four runs
    a page, most of what is left, are not.

    Then, on a page with labs, the labs' design checks of this width (lab_problems), in
    the same tab: the figures in reach on the phone; the downloads, the masked style and
    the long tasks at 1280 px. Each was a test of its own that loaded every lab's page
    again, 50 loads in all."""
    watch, tab = open_page(browser, site, page, width, "light", idle=False)
    found, shown = [], []
    try:
        for mode in ("light", "dark"):  # light first: axe_plan
            if mode == "dark":
                switch_mode(tab, "dark")
            problems, seen = setting_problems(watch, tab, page, width, mode, built_book, memo)
            if mode == "light" and page.startswith("chapters/"):  # (dark draws the same shapes)
                bad, seen["aspects"] = aspect_problems(tab, width)
                problems += bad
            found += problems
            shown.append(seen)
        labs = tab.evaluate(LAB_PAGES_JS)
        if labs:
            before = len(watch.console_errors)
            bad, shown[-1]["labs"] = lab_problems(tab, width, labs)
            found += [f"{width}px: {b}" for b in bad]
            watch.settle()
            found += [f"{width}px, the labs' checks: console error: {e}"
                      for e in watch.console_errors[before:]]
    finally:
        watch.close()
    return found, shown


def test_the_visits_cover_every_built_page(built_book):
    assert sorted([*PAGES, REDIRECT[0]]) == built_pages(built_book)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_loads_reads_and_passes_axe(browser, site, built_book, page):
    problems, shown, memo = [], [], {}
    for width in WIDTHS:
        found, seen = visit(browser, site, built_book, page, width, memo)
        problems += found
        shown += seen
    assert not problems, "\n".join(problems[:40])
    if page.startswith("chapters/") or page == "intro.html":  # the pages with maths
        assert all(s["typeset"] for s in shown), "no math typeset: is MathJax on the page?"
        assert all("mathjax/startup.js" in s["vendor"] for s in shown)
    if page[len("chapters/"):][:2].isdigit():  # a numbered chapter shows a lab, measured
        assert all(s["ratios"] for s in shown), "no lab canvas on the page"
    if page.startswith("chapters/"):  # every figure's shape measured at both widths
        assert [s["aspects"] for s in shown if "aspects" in s] == [output_images(built_book, page)] * 2
    labs = sorted(lab for lab, on in labs_of_the_book(built_book).items() if on == page)
    if labs:  # each design check ran on every lab of the page (lab_problems' floors)
        measured = {key: n for s in shown if "labs" in s for key, n in s["labs"].items()}
        assert measured == expected_lab_checks(labs), (measured, expected_lab_checks(labs))


def test_the_chapters_show_figures_whose_shapes_the_visits_measure(built_book):
    """A floor under the visits' aspect-ratio check (aspect_problems): the chapters' pages
    hold at least 20 figures (29 today), each measured at both widths."""
    assert sum(output_images(built_book, p) for p in PAGES if p.startswith("chapters/")) >= 20


def test_the_labs_design_checks_name_labs_of_the_book(built_book):
    """The labs lab_problems sets to other values (the masked style's, the downloads' other
    state, the phone's most controls) are labs of the built book: a lab renamed or removed
    would otherwise leave its check with nothing to read."""
    named = {*MASKING_LABS, *DOWNLOAD_OTHER, *MOST_CONTROLS}
    assert named <= set(labs_of_the_book(built_book)), named - set(labs_of_the_book(built_book))


def test_the_root_redirects_to_the_first_page(browser, site, built_book):
    """index.html is a meta refresh to intro.html: visiting it reads intro.html, which the
    test above visits; here, that it gets there, cleanly. Its icon is inline: without one
    chromium asked for /favicon.ico (a 404) when the redirect was slow, and a file's fetch
    is aborted by the redirect."""
    root = (built_book / REDIRECT[0]).read_text()
    assert '<link rel="icon" href="data:,">' in root and "<title>" in root
    watch = PageWatch(browser)
    try:
        tab = watch.open(f"{site}/{REDIRECT[0]}")
        tab.wait_for_url(f"**/{REDIRECT[1]}")
        assert watch.console_errors == [] and watch.outside == [] and watch.failed == []
    finally:
        watch.close()


def test_math_is_typeset_by_the_local_mathjax(built_book, site, browser):
    watch = PageWatch(browser)
    page = watch.open(f"{site}/intro.html")
    page.wait_for_selector("mjx-container")
    assert page.evaluate("() => window.MathJax && window.MathJax.version").startswith("3.")
    assert page.locator("mjx-container").count() >= 3
    watch.close()


def test_mathjax_typesets_a_page_in_batches(site, browser):
    """Chapter 3's formulas are typeset in several batches of at most BATCH, each its own task
    (``_ext/ab_theme_fixes.py``, MATHJAX_IN_BATCHES), which together cover every outermost
    element MathJax processes: in one call they blocked the page for 398-523 ms (issue 23).
    The page's own pageReady is run again with MathJax's typesetPromise counted."""
    import re

    batch = int(re.search(r"const BATCH = (\d+);", (ROOT / "_ext/ab_theme_fixes.py").read_text())[1])
    watch = PageWatch(browser)
    try:
        page = watch.open(f"{site}/chapters/03_attention.html")
        page.evaluate("() => MathJax.startup.promise")
        roots, sizes = page.evaluate(page_function("mathjaxBatches"))
        assert watch.console_errors == []
    finally:
        watch.close()
    assert roots > batch and "all" not in sizes, sizes
    assert len(sizes) > 1 and max(sizes) <= batch and sum(sizes) == roots, (roots, sizes)


def test_the_axe_check_finds_a_violation(browser, site):
    """A page made to break the scrolling rule is caught: the test can fail."""
    watch = PageWatch(browser)
    try:
        tab = watch.open(f"{site}/intro.html")
        tab.evaluate(page_function("addWideBox"))
        ids = {v["id"] for v in axe_violations(tab)}
    finally:
        watch.close()
    assert "scrollable-region-focusable" in ids


def axe_nodes(tab, only, off) -> tuple[set, set]:
    """The rules axe ran, and every (rule, kind of result, node's target) it gave."""
    result = tab.evaluate(RUN_AXE, [AXE_TAGS, only, off, True])
    return set(result["ran"]), {tuple(node) for node in result["nodes"]}


def dark_findings(watch, tab, axe_found: set) -> tuple[dict, set]:
    """What the checks read on a page in dark mode (``axe_found``: axe's nodes there), to
    compare a tab switched to dark with one loaded in dark; and the paths it requested."""
    lay_out_every_section(tab)
    found = {"axe": axe_found, "visible": tab.evaluate(VISIBLE_JS),
             "contrast": tab.evaluate(CONTRAST_JS, [True, MIN_CONTRAST])["all"],
             "overflow": tab.evaluate("document.documentElement.scrollWidth - innerWidth"),
             "figures": tab.evaluate(FIGURES_JS), "ratios": tab.evaluate(CANVAS_RATIOS),
             "broken": tab.evaluate(BROKEN_IMAGES), "maths": maths_problems(tab),
             "typeset": tab.locator("mjx-container").count()}
    watch.settle()
    found |= {"errors": watch.console_errors, "failed": watch.failed, "outside": watch.outside}
    return found, {urlparse(u).path for u in watch.requested}


#: What a setting's plan leaves to the plans of other settings (axe_plan).
RELIES_ON = {(1280, "light"): [], (390, "light"): [(1280, "light")],
             (1280, "dark"): [(1280, "light")], (390, "dark"): [(390, "light"), (1280, "light")]}


def not_found(plan: dict, whole: dict) -> dict:
    """Per setting, what the whole set finds there (``whole``: its nodes) that the setting's
    plan and the plans it relies on (``plan``: their nodes) do not."""
    return {setting: sorted(whole[setting] - set().union(
                *(plan[other] for other in [setting, *RELIES_ON[setting]])))
            for setting in whole}


@pytest.mark.parametrize("page", ["chapters/01_embeddings.html", "search.html"])
def test_the_axe_plan_finds_what_the_whole_set_finds_in_every_setting(browser, site, page):
    """The evidence for axe_plan and for the visits' switch to dark mode, on today's site: on
    a chapter with a lab, maths, code and figures, and on a theme page, visited as the test
    above visits them (loaded in light mode, then switched to dark), the whole rule set in
    each setting (in dark mode, on the page loaded in dark mode, as the visits were until
    now) finds no node, or kind of result (passes, violations, incomplete) on it, that the
    setting's plan (axe_plan) and the plans it relies on (RELIES_ON: at 390 px, light, the
    run at 1280 px) do not find, and no rule they do not run; the guard did not fall back
    on the whole set in dark mode. The plan runs fewer rules than the whole set, and they
    check other nodes at the other width; on a chapter, the check fails without
    scrollable-region-focusable at 390 px. And the tab
    switched to dark mode shows what the page loaded in dark mode shows, as each check
    reads it (axe's nodes, the elements shown, every text's contrast, the overflow, the
    figures, the canvases, the maths, the console), and the load in dark mode asks for no
    file the switched tab did not."""
    plan, whole, memo, ran, dark = {}, {}, {}, [], {}
    for width in WIDTHS:
        watch, tab = open_page(browser, site, page, width, "light", idle=False)
        try:
            for mode in ("light", "dark"):
                if mode == "dark":
                    switch_mode(tab, "dark")
                prepare_axe(tab)
                only, off = axe_plan(tab, width, mode, memo)
                rules, nodes = axe_nodes(tab, only, off)
                plan[width, mode] = {(rule, "ran", "") for rule in rules} | nodes
                ran.append((only, off, len(rules)))
                if mode == "dark":  # the whole set runs on a page loaded in dark, below
                    dark["switched", width] = dark_findings(watch, tab, nodes)
                    continue
                if only is not None or off:  # else the plan's run was the whole set's (WHOLE)
                    rules, nodes = axe_nodes(tab, None, [])
                whole[width, mode] = {(rule, "ran", "") for rule in rules} | nodes
        finally:
            watch.close()
        watch, tab = open_page(browser, site, page, width, "dark", idle=False)  # as visits were
        try:
            prepare_axe(tab)
            rules, nodes = axe_nodes(tab, None, [])
            whole[width, "dark"] = {(rule, "ran", "") for rule in rules} | nodes
            mode_nodes = {node for node in nodes if node[0] in MODE_RULES}
            dark["loaded", width] = dark_findings(watch, tab, mode_nodes)
        finally:
            watch.close()
    missing = not_found(plan, whole)
    assert not any(missing.values()), {setting: m[:10] for setting, m in missing.items()}
    extra = set().union(*plan.values()) - set().union(*whole.values())
    assert not extra, sorted(extra)[:10]
    assert [only for only, _, _ in ran] == [None, MODE_RULES, None, MODE_RULES], ran
    assert ran[0][1] == LAYOUT_FREE and ran[2][1] == [] and ran[0][2] < ran[2][2], ran
    assert len({rule for rule, kind, _ in whole[WHOLE] if kind == "passes"}) >= 20
    assert whole[390, "light"] != whole[WHOLE]  # the widths show other elements
    if page.startswith("chapters/"):  # and the check can fail: a rule left out at 390 px
        light = {node for node in plan[390, "light"] if node[0] != "scrollable-region-focusable"}
        assert not_found({**plan, (390, "light"): light}, whole)[390, "light"]
    for width in WIDTHS:
        (switched, asked), (loaded, asked_loaded) = dark["switched", width], dark["loaded", width]
        assert len(switched["axe"]) >= 5 and switched["visible"] == memo["visible", width]
        if page.startswith("chapters/"):
            assert len(switched["contrast"]) >= 20 and switched["figures"] and switched["ratios"]
        differ = {key: (switched[key], loaded[key]) for key in loaded if switched[key] != loaded[key]}
        assert not differ, {key: str(pair)[:600] for key, pair in differ.items()}
        assert asked_loaded <= asked, sorted(asked_loaded - asked)


def test_the_axe_plan_catches_what_one_width_or_mode_shows(browser, site):
    """What a page shows in one setting only, and breaks there, is caught by that setting's
    visit: a button without a name shown on phones only, and a button shown at both widths
    whose name is hidden on phones (390 px, light: every rule but the markup-only ones),
    grey text on grey in dark mode only (MODE_RULES), and a nameless button shown in dark
    mode only (the guard sees other elements shown than in light: every rule)."""
    found, named, memo = {}, {}, {}
    for width in WIDTHS:
        watch, tab = open_page(browser, site, "search.html", width, "light", idle=False)
        try:
            tab.evaluate(page_function("addSettingOnlyButtons"))
            for mode in ("light", "dark"):
                if mode == "dark":
                    switch_mode(tab, "dark")
                violations = axe_violations(tab, width, mode, memo)
                found[width, mode] = {v["id"] for v in violations}
                named[width, mode] = " ".join(node for v in violations for node in v["nodes"])
        finally:
            watch.close()
    assert found == {(390, "light"): {"button-name"},
                     (390, "dark"): {"button-name", "color-contrast"},
                     (1280, "light"): set(),
                     (1280, "dark"): {"button-name", "color-contrast"}}, found
    assert ".ab-t-phone" in named[390, "light"] and ".ab-t-icon" in named[390, "light"], named


FULL_CONTRAST_JS = page_function("fullContrast")


@pytest.mark.parametrize("width, mode", [(1280, "light"), (390, "dark")])
def test_one_span_a_code_style_finds_what_every_span_finds(browser, site, width, mode):
    """The evidence for SAME_STYLE_JS, on today's site, in both themes: on a page with every
    style of highlighted code the chapters show (22 pygments classes), with one span deep in
    the page made grey, axe's colour-contrast rule run on every element gives each span of a
    style the verdict (and colours, ratio and font) it gives the first one, the one still
    checked; and the page's check (axe_violations) catches the grey span, its own style,
    though a one-letter span made grey before it is incomplete to axe."""
    watch, tab = open_page(browser, site, "chapters/04_multi_head.html", width, "light", idle=False)
    try:
        if mode == "dark":
            switch_mode(tab, "dark")  # as the visits do
        assert tab.evaluate(SETTLE) == "done"
        # under 4.5:1 on both: a long name deep in the page, and before it in its block a
        # one-letter name (axe: incomplete, not a violation), which must not stand for it
        tab.evaluate(page_function("greySpans"))
        found = axe_violations(tab)  # marks the styles, then axe as each visit runs it
        first, others = {}, {}
        for style, is_first, verdict, text in tab.evaluate(FULL_CONTRAST_JS):
            if is_first:
                first[style] = verdict
            else:
                others.setdefault(verdict, []).append((style, text))
    finally:
        watch.close()
    assert [v["id"] for v in found] == ["color-contrast"], found
    assert len(found[0]["nodes"]) == 1 and "#777777" in found[0]["nodes"][0], found
    assert len(first) >= 15 and sum(map(len, others.values())) >= 2000  # 2,124 today
    # and axe checked them (FULL_CONTRAST_JS resets what RUN_AXE configured): 1,953 today
    checked = sum(len(spans) for verdict, spans in others.items() if verdict != "not checked")
    assert checked >= 1800, checked
    # every verdict axe gives a span, it gives the first of the span's style
    odd = [(style, text, verdict[:120], first[style][:120])
           for verdict, spans in others.items() for style, text in spans
           if verdict != "not checked" and verdict != first[style]]
    assert not odd, odd[:5]
    assert sum(v.startswith("passes") for v in first.values()) >= 10, first  # 13-20 today
    assert sum(v.startswith("violations") for v in first.values()) == 1, first  # the grey one


def test_print_shows_each_lab_figure_only_and_wraps_code(browser, site):
    watch, tab = open_page(browser, site, "chapters/03_attention.html", 1280, "light")
    try:
        tab.emulate_media(media="print")
        styles = tab.evaluate(page_function("printStyles"))
    finally:
        watch.close()
    assert styles["hidden"] and set(styles["hidden"]) == {"none"}, styles["hidden"]
    assert styles["whole"] and set(styles["whole"]) == {"avoid"}
    assert all(h > 100 for h in styles["pictures"])  # the picture itself still prints
    assert styles["wraps"] and set(styles["wraps"]) == {"pre-wrap"}
    assert styles["empty"] == 0


def test_the_reading_checks_find_overflow_low_contrast_and_small_text(browser, site, built_book):
    """A page made wider than the screen, with grey-on-white text in an output and a lab
    canvas whose text is stated at 4 px, is caught: the checks can fail."""
    watch, tab = open_page(browser, site, "chapters/01_embeddings.html", 390, "light")
    try:
        tab.evaluate(page_function("spoilReading"))
        found = reading_problems(tab, "chapters/01_embeddings.html", 390, built_book)
    finally:
        watch.close()
    assert any("wider than the 390 px viewport" in f for f in found), found
    assert any("contrast" in f and "hard to read" in f for f in found), found
    assert any("smallest text" in f for f in found), found


LAZY_TAB_STOPS_JS = page_function("lazyTabStops")


def lazy_tab_stops(tab, spoil: bool = False) -> dict:
    tab.evaluate("() => MathJax.startup.promise")
    tab.evaluate("() => document.fonts.ready.then(() => new Promise(r => setTimeout(r, 300)))")
    return tab.evaluate(LAZY_TAB_STOPS_JS, spoil)


def test_sections_off_screen_wait_to_be_laid_out_and_keep_their_tab_stops(browser, site):
    """Chapter 3's load (issue 23: no task over 100 ms): its sections are laid out when the
    reader nears them, not all at first, yet each code block, output and display formula
    that scrolls has its tab stop, and none that does not; in print every section shows; the
    page loads no fontawesome.js and MathJax as components, not tex-chtml.js."""
    watch, tab = open_page(browser, site, "chapters/03_attention.html", 390, "light")
    try:
        found = lazy_tab_stops(tab)
        tab.emulate_media(media="print")
        printed = tab.evaluate(page_function("printedSections"))
        watch.settle()
        requested = [urlparse(u).path for u in watch.requested]
    finally:
        watch.close()
    assert found["sections"] >= 10 and found["skipped"] >= 5, found  # a 28-screen page
    assert found["scrolling"] >= 3, found  # formulas and code wider than a phone
    assert found["wrong"] == [], found["wrong"]
    assert set(printed) == {"visible"}, printed
    assert not any(path.endswith(("/fontawesome.js", "/tex-chtml.js")) for path in requested)
    assert any(path.endswith("/mathjax/startup.js") for path in requested)


def test_the_lazy_tab_stop_check_finds_a_missing_one(browser, site):
    """A scrolling formula off screen left without its tab stop, and the theme's rule
    undone on a code block, are caught: the test above can fail."""
    watch, tab = open_page(browser, site, "chapters/03_attention.html", 390, "light")
    try:
        found = lazy_tab_stops(tab, spoil=True)
    finally:
        watch.close()
    wrong = found["wrong"]
    assert any(w.startswith("mjx-container") and "tabindex null" in w for w in wrong), found
    assert any(w.startswith("pre") and "scrolls false, tabindex 0" in w for w in wrong), found


# ------------------------------------------------------------------ design (issue 39)
#
# What the readers' designer checked by hand (../shared/reviews/html-labs-qa.md) and the two
# chapter reviewers measured, on the built site: figures true to shape (the visits'
# aspect_problems), the reader's colour scheme, and on each lab's page, in the visits' tabs
# (lab_problems): a phone's figure in reach of its controls, downloads that hold what the
# figure draws, one masked style, no long task on a control change.

LAB_PAGES_JS = page_function("labPages")


def labs_of_the_book(built_book) -> dict[str, str]:
    """lab name -> the page it is on, from the built chapters."""
    import re

    out = {}
    for html in sorted((built_book / "chapters").glob("*.html")):
        for name in re.findall(r'data-ab-lab="([a-z]+)"', html.read_text(encoding="utf-8")):
            out[name] = f"chapters/{html.name}"
    return out


def open_lab_page(browser, site, page: str, width: int, mode: str = "light", height: int = 844):
    """``page`` at ``width`` px (a phone's 2x pixels under 600), its labs mounted; the page
    as a reader has it (sections laid out as they near the screen: laid out all at once, a
    change of a readout's height laid the whole chapter out again, 100-300 ms)."""
    watch = PageWatch(browser, width=width, scale=2 if width < 600 else 1,
                      init_script=f'localStorage.setItem("mode", "{mode}");')
    watch.page.set_viewport_size({"width": width, "height": height})
    tab = watch.open(f"{site}/{page}", idle=False)
    tab.wait_for_function(LABS_READY_JS)
    return watch, tab


SET_VALUES_JS = page_function("setValues")
LABS_READY_JS = page_function("labsReady")


def set_values(tab, lab_id: str, values: dict | None) -> None:
    """Set the lab's controls to ``values``, or back to where the page started them (None)."""
    if values != {}:
        tab.evaluate(SET_VALUES_JS, [lab_id, values])


def lab_problems(tab, width: int, labs: list[dict]) -> tuple[list[str], dict]:
    """The labs' design checks, on a page a visit has read in light and then dark mode, its
    labs (``labs``: LAB_PAGES_JS's) still at the values it started them at: on the phone,
    each figure in reach of its first control (phone_problems); at 1280 px, the downloads
    (in dark mode: download_problems), the masked style in dark and then light mode
    (masked_problems), and no long task on a control change (long_task_problems). Each
    starts from the labs as the page started them (the last two set them back first).
    The page's sections are laid out as they near the screen again, as a reader has them
    (laid out all at once, a change of a readout's height laid the whole chapter out again,
    100-300 ms). What they found, and how many of each they measured
    (expected_lab_checks)."""
    tab.evaluate(LAY_OUT_JS, False)
    tab.wait_for_function(LABS_READY_JS)
    if width < 600:
        found, n = phone_problems(tab, labs)
        return found, {"phone": n}
    found, counts = download_problems(tab, labs)
    for mode in ("dark", "light"):
        if mode == "light":
            switch_mode(tab, "light")
        bad, counts[f"masked {mode}"] = masked_problems(tab, labs, mode)
        found += bad
    bad, counts["long-task changes"] = long_task_problems(tab, labs)
    return found + bad, counts


def expected_lab_checks(labs: list[str]) -> dict:
    """How many of each design check lab_problems makes on a page with ``labs``."""
    from attention_book.controls.web import declaration
    from attention_book.scenes import SCENES

    masking = sum(lab in MASKING_LABS for lab in labs)
    return {"phone": len(labs) + sum(lab in MOST_CONTROLS for lab in labs),
            "downloads": 2 * len(labs), "pictures": len(labs), "labs with arrays": len(labs),
            "masked dark": masking, "masked light": masking,
            "long-task changes": sum(len(_extremes(c)) for lab in labs
                                     for c in declaration(SCENES[lab])["controls"])}


def test_the_site_opens_in_the_readers_colour_scheme(browser, site):
    """QA Q16, F1/F3 of both reviews: with prefers-color-scheme dark, every page opened light
    (default_mode: light). A reader who never touched the switch gets their system's scheme,
    in the page and in a lab's note boxes (dark tints, not the light pastels); one who chose
    a mode keeps it."""
    from conftest import PageWatch as Watch

    found = {}
    for scheme in ("dark", "light"):
        watch = Watch(browser)
        try:
            watch.page.emulate_media(color_scheme=scheme)
            tab = watch.open(f"{site}/chapters/01_embeddings.html", idle=False)
            tab.wait_for_function("document.querySelector('.ab-lab').abLab?.state")
            tab.evaluate("() => document.querySelector('.ab-lab').abLab.set('text', 'my own zyxt words')")
            found[scheme] = tab.evaluate(page_function("themeAndNote"))
            tab.evaluate("() => localStorage.setItem('mode', 'light')")
            tab.reload()
            found[scheme + " chose light"] = tab.evaluate("document.documentElement.dataset.theme")
        finally:
            watch.close()
    assert found["dark"]["theme"] == "dark" and found["light"]["theme"] == "light", found
    lum = [sum(int(v) for v in found[s]["note"][found[s]["note"].index("(") + 1:-1].split(",")[:3])
           for s in ("dark", "light")]
    assert lum[0] < 3 * 80 < lum[1], found  # a dark note box in dark mode, a light one in light
    assert found["dark chose light"] == "light", found


#: At 390 x 844, the reader's first control at the top of the screen (under the theme's
#: 56 px header): the figure must start within 0.6 of the 788 px left, so that the figure
#: and the control that changes it are on screen together. Before issue 39 it started 296-
#: 656 px below the first control (800 px for the mask editor's top); 9 of 11 labs put the
#: figure's middle out of reach of the first control.
PHONE = {"width": 390, "height": 844, "header": 56}
FIGURE_REACH = 0.6 * (PHONE["height"] - PHONE["header"])  # 473 px
#: The labs' states with the most controls shown (chapter 4's 16 heads' check boxes, the
#: mask editor's padding slider), besides every default.
MOST_CONTROLS = {"multihead": {"d": 64, "h": 16}, "masking": {"kind": "padding"},
                 "generation": {"temperature": 1.0}}

GEOMETRY_JS = page_function("geometry")


def phone_problems(tab, labs: list[dict]) -> tuple[list[str], int]:
    """QA Q9 and the chapters 6-9 review, F4: on a phone the controls pushed the figure
    313-800 px below the lab's top. Now (the controls two a row, inactive ones folded, the
    downloads and chapter 9's model button under the figure) each lab's figure starts
    within FIGURE_REACH of its first control, at its default and with its most controls:
    what it found, and how many states it measured."""
    tab.set_viewport_size({"width": PHONE["width"], "height": PHONE["height"]})
    far, measured = [], 0
    for lab in labs:
        states = [("default", {})] + ([("most", MOST_CONTROLS[lab["lab"]])]
                                      if lab["lab"] in MOST_CONTROLS else [])
        tab.locator(f"#{lab['id']}").scroll_into_view_if_needed()  # as a reader reaches it
        for name, values in states:
            set_values(tab, lab["id"], values)
            g = tab.evaluate(GEOMETRY_JS, lab["id"])
            measured += 1
            if g["fromControl"] > FIGURE_REACH:
                far.append(f"{lab['lab']} ({name}): figure {g['fromControl']:.0f} px below its "
                           "first control")
    return far, measured


DRAWN_ARRAYS_JS = page_function("drawnArrays")


def _numbers_in(tree) -> list:
    """Every number of a JSON tree, in order (lists flattened)."""
    if isinstance(tree, dict):
        return [v for value in tree.values() for v in _numbers_in(value)]
    if isinstance(tree, list):
        return [v for value in tree for v in _numbers_in(value)]
    return [tree] if isinstance(tree, (int, float)) or tree is None else []


#: For the downloads, each lab's other state (besides its default).
DOWNLOAD_OTHER = {"pretrained": {"view": "model"}, "scaling": {"d_k": 512},
                  "training": {"task": "induction"}, "positional": {"s": 100},
                  "masking": {"kind": "padding"}}


def download_problems(tab, labs: list[dict]) -> tuple[list[str], dict]:
    """QA Q3, Q18: the JSON lacked the curves the figure draws (chapter 3's four, chapter 8's
    loss), the view and the measure (chapter 9's model view saved the one-head file), and
    every file had the same name whatever the state. For every lab, at its default and at
    another state: the JSON holds, under each panel's drawn name, every array the panel was
    drawn from, with every control's setting; the file's name holds the settings; and the
    picture, downloaded from the page in dark mode, is drawn at a fixed width. What it found,
    and how many files and arrays it checked."""
    import json
    import struct
    from pathlib import Path

    missing, counts = [], {"downloads": 0, "pictures": 0, "labs with arrays": 0}
    for lab in labs:
        arrays = 0
        for values in ({}, DOWNLOAD_OTHER.get(lab["lab"], {})):
            set_values(tab, lab["id"], values)
            want = tab.evaluate(DRAWN_ARRAYS_JS, lab["id"])
            with tab.expect_download() as info:
                tab.click(f"#{lab['id']} button.ab-download")
            data = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
            name = info.value.suggested_filename
            counts["downloads"] += 1
            if not (name.startswith(lab["lab"] + "_") and name.endswith(".json")):
                missing.append(f"{lab['lab']}: file name {name}")
            for control, value in want["values"].items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    key = re.sub(r"[^a-z0-9]", "", control.lower()) + f"{value:g}"
                    if f"_{key}_" not in name and f"_{key}." not in name:
                        missing.append(f"{lab['lab']}: {name} lacks {control} = {value}")
            if {s["name"]: s["value"] for s in data["settings"]} != want["values"]:
                missing.append(f"{lab['lab']} {values}: settings {data['settings']}")
            panels = {p["panel"]: p for p in data["figure"]}
            for title, drawn in want["drawn"].items():
                got = _numbers_in(panels.get(title, {}))
                for array in drawn:
                    arrays += 1
                    if not _contains(got, array):
                        missing.append(f"{lab['lab']} {values}: '{title}' lacks an array of "
                                       f"{len(array)} it draws")
        counts["labs with arrays"] += arrays > 0
        with tab.expect_download() as info:
            tab.click(f"#{lab['id']} button.ab-download-picture")
        png = Path(info.value.path()).read_bytes()
        width = struct.unpack(">II", png[16:24])[0]
        counts["pictures"] += 1
        if width != 2 * 760 or not info.value.suggested_filename.endswith(".png"):
            missing.append(f"{lab['lab']}: picture {info.value.suggested_filename}, {width} px")
    return missing, counts


def _contains(haystack: list, needle: list) -> bool:
    """Whether ``needle`` appears in ``haystack`` as a run, number for number."""
    n = len(needle)
    if n == 0:
        return True
    first = needle[0]
    for i in range(len(haystack) - n + 1):
        if haystack[i] == first and haystack[i:i + n] == needle:
            return True
    return False


LONG_TASKS_JS = page_function("longTasks")


def _extremes(control: dict) -> list:
    """A control's last and first value (a text: a new sentence), as a reader moves it."""
    if control["kind"] == "text":
        return ["a quokka juggles seven lanterns beside the quiet fjord"]
    if control["kind"] == "multi":
        return [[]]
    values = control.get("values") or [control["range"][0], control["range"][1]]
    return [values[-1], values[0]]


def long_task_problems(tab, labs: list[dict]) -> tuple[list[str], int]:
    """QA Q4: chapter 3's first move to d_k = 512 blocked the page for 0.8 s. Every control
    of every lab, moved to its last and first value: no task over 50 ms (Long Tasks API),
    with LONG_TASKS_JS's margin; the machine's load is printed beside any failure. What it
    found, and how many changes it made."""
    import os

    blocked, changes = [], 0
    for lab in labs:  # from where the page started them
        set_values(tab, lab["id"], None)
    tab.wait_for_timeout(500)  # the page's own work (the mode switch's redrawing), done
    for lab in labs:
        tab.locator(f"#{lab['id']}").scroll_into_view_if_needed()  # as a reader reaches it
        tab.wait_for_timeout(300)
        controls = tab.evaluate("(id) => document.getElementById(id).abLab.declaration.controls",
                                lab["id"])
        for control in controls:
            for value in _extremes(control):
                most = long_task_margin()
                tries = tab.evaluate(LONG_TASKS_JS, [lab["id"], control["name"], value])
                changes += 1
                if all(any(ms > most for ms in t) for t in tries):
                    blocked.append(f"{lab['lab']}.{control['name']} = {value!r}: long tasks "
                                   f"{tries} ms (over {most:.0f} ms; load average "
                                   f"{os.getloadavg()})")
    return blocked, changes


def long_task_margin() -> float:
    """50 ms, grown with the machine's load: 50 x (1 + load / cores) (see LONG_TASKS_JS)."""
    import os

    return 50.0 * (1 + os.getloadavg()[0] / (os.cpu_count() or 1))


MASKED_PIXELS_JS = page_function("maskedPixels")
MASKING_LABS = {"masking": {}, "block": {"causal": True}, "training": {"task": "induction"},
                "generation": {}, "permutation": {"causal": True}}


def masked_problems(tab, labs: list[dict], mode: str) -> tuple[list[str], int]:
    """QA Q7, chapters 6-9 review F5: "masked" was grey, as was a score of 0 (1.2-1.5:1 in
    dark mode), the mask panel showed it dark purple, and chapter 8's training lab did not
    mark it at all. In every lab that masks (MASKING_LABS, at the values given there), in
    the page's ``mode``, the masked cells' pixels are the one reserved style: MASKED's grey
    and its hatch (and their blend at the lines' edges), neutral grey, in no colour map of
    the labs, the same in every lab. What it found, and how many labs it read."""
    fill, hatch = (154, 154, 154), (69, 69, 69)  # panels/style.js's MASKED
    found, read = [], 0
    for lab in labs:
        if lab["lab"] not in MASKING_LABS:
            continue
        set_values(tab, lab["id"], None)  # from where the page started it
        set_values(tab, lab["id"], MASKING_LABS[lab["lab"]])
        seen = tab.evaluate(MASKED_PIXELS_JS, lab["id"])
        read += 1
        where = f"{lab['lab']} ({mode})"
        if not seen["panels"]:
            found.append(f"{where}: no masked cells drawn")
            continue
        total = sum(seen["colours"].values())
        rgb = {tuple(map(int, k.split(","))): n for k, n in seen["colours"].items()}
        odd = {k: n for k, n in rgb.items()
               if not (k[0] == k[1] == k[2] and hatch[0] <= k[0] <= fill[0])}
        if odd:
            found.append(f"{where}: masked pixels off the masked style: {sorted(odd.items())[:5]}")
        if not (rgb.get(fill, 0) > 0.3 * total and rgb.get(hatch, 0) > 0.05 * total):
            found.append(f"{where}: too little of the fill or the hatch: {sorted(rgb.items())[:6]}")
    return found, read


LINK_COLOURS_JS = page_function("linkColours")


def _contrast(a: str, b: str) -> float:
    """WCAG's contrast of two CSS colours ("#rrggbb", "#rgb" or "rgb(r, g, b)")."""
    def rgb(c):
        c = c.strip()
        if c.startswith("#"):
            c = c[1:] if len(c) == 7 else "".join(ch * 2 for ch in c[1:])
            return [int(c[i:i + 2], 16) for i in (0, 2, 4)]
        return [int(float(x)) for x in c[c.index("(") + 1:c.index(")")].split(",")[:3]]

    def lum(c):
        v = [x / 255 for x in rgb(c)]
        v = [x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4 for x in v]
        return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]
    hi, lo = sorted([lum(a), lum(b)], reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_links_keep_their_contrast_on_every_box_the_theme_paints(browser, site):
    """Why the page tests' axe run missed chapter 7's citation at 4.34:1 (#176de8 on
    #f3f4f5): they lay every section out before axe runs (content-visibility: auto leaves
    a section the reader has not reached unlaid, and axe then read backgrounds wrong), so
    axe saw the link on the white page, where it passed at 4.78:1 (4.5 needed); a held-out
    run on the page as loaded read it against the code block above, #f3f4f5, where it fails.
    Either way the theme's link colour passed on white only, and a link in any of the
    theme's boxes (code, topics, field lists: #f3f4f5) would fail. So here, in both modes,
    the link and hover colours pass 4.5:1 on every background the theme paints text on,
    wherever a link lands."""
    found = []
    for mode in ("light", "dark"):
        watch, tab = open_page(browser, site, "chapters/07_block.html", 1280, mode)
        try:
            c = tab.evaluate(LINK_COLOURS_JS)
        finally:
            watch.close()
        assert _contrast(c["link"], c["vars"][0]) < 1.01, c  # a citation is drawn in it
        for colour in c["vars"]:
            for name, box in c["boxes"]:
                ratio = _contrast(colour, box)
                if ratio < MIN_CONTRAST:
                    found.append(f"{mode}: {colour} on {name} {box}: {ratio:.2f}:1")
    assert not found, found


def test_the_long_task_check_catches_a_change_that_blocks(browser, site):
    """The check above can fail: a state function made to block the page for twice the
    margin (the margin of the load at the time) shows a long task past the margin in every
    try. (A fixed amount of work, 60 million square roots, took 178-190 ms in a fresh-clone
    run whose margin was 198 ms: the work did not grow with the load as the margin did.)"""
    watch, tab = open_lab_page(browser, site, "chapters/01_embeddings.html", 1280)
    try:
        most = long_task_margin()
        lab_id = tab.evaluate(page_function("blockingState"), 2 * most)
        tries = tab.evaluate(LONG_TASKS_JS, [lab_id, "d", 64])
    finally:
        watch.close()
    assert len(tries) == 3 and all(any(ms > most for ms in t) for t in tries), (tries, most)
