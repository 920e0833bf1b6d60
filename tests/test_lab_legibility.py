"""Every browser lab is legible at a phone's width and a desktop's, in light and dark mode.

The page records every text the renderer draws: ``CanvasRenderingContext2D.fillText`` is
wrapped (an init script), and each call's box is computed from ``measureText`` (its glyphs'
extent around the anchor, for the alignment and baseline in force) and the transform, as
four corners in the canvas's pixels. For every lab at 390 and 1280 px, at its default and
with a held-out sentence of 10-16 tokens where it takes text, in both modes:

- no drawn text is cut with an ellipsis;
- no two drawn texts overlap (boxes turned with the text, separating-axis test);
- no drawn text reaches outside the visible canvas;
- every token of the sentence is named on at least one axis (a row of labels on one line,
  or a column of them, that holds every token), and no axis of tokens names only some of
  them (up to 16 tokens);
- nothing in the lab runs past its right edge, and the page does not scroll sideways.

One page a lab and width; the mode and the values change in the page. The page carries the
book's stylesheet (``_ext/static/attention-book.css``) and the theme's colour variables,
in a column as wide as the book's at that width. ``test_the_checker_finds_each_defect``
draws a figure with every defect and expects each one reported.

Also: the picture downloads as a PNG at twice its size, and chapter 3's sqrt(d_k) lab loads
without a task over 100 ms (its curves a table of Python's, checked here); the controls show
their true state to keys and a screen reader (the book's texts stepped by arrow keys, sliders
that end at what is generated, disabled boxes dimmed, one status line spoken); axes name
their last value (d_k = 512 on a phone) and whole blocks; past 16 keys only the 16 heaviest
arcs are drawn; the mask editor's panels keep their places while its slider moves; chapter
2's waves and rotation check are windows that say so; a tracer's shapes never break.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from attention_book.controls import web_lab
from attention_book.controls.web import standalone_html
from attention_book.scenes import SCENES
from node_driver import NODE, page_function
from node_driver import run as node

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[1]
LABS = sorted(name for name, scene in SCENES.items() if scene.web)
WIDTHS = (390, 1280)
#: the book's text column at each width (the theme's article column, CSS px)
COLUMN = {390: 390, 1280: 740}
#: a sentence of 14 tokens that appears nowhere in the book
HELD_OUT = "my neighbour's old parrot whistles a quiet tune every single morning before breakfast"
#: what each lab is set to besides its default: (control, value) pairs in order
HELD_OUT_VALUES = {
    "training": [("task", "induction"), ("induction_input", "5 17 2 9 30 11 5 17 2 9 30 11 5 17")],
    "pretrained": [("text", "the quiet fox crossed the frozen river before the storm came")],
    # 7 symbols and 9 sampled: 16 positions, the step in the middle
    "generation": [("prompt", "3 14 15 9 26 3 14"), ("n", 9), ("t", 5), ("temperature", 1.0),
                   ("seed", 4)],
    # chapter 10's repeat (12 tokens) at step 3: 14 keys; the gallery has it before the model
    "decoder": [("prompt", "The cat sat on the mat. The cat sat on the"), ("t", 3)],
}
#: The tokens a lab names on its axes, of those its state holds (LOOK_JS's): chapter 10's
#: decoder names the keys up to its query; the token written at step t is named by the
#: next-token bars and the titles ("it chose ' mat'").
NAMED = {"decoder": lambda tokens: tokens[:-1]}
#: every token is named on every axis of tokens up to this many
NAME_ALL = 16
TEXT_LABS = {"attention", "block", "embedding", "masking", "multihead", "permutation"}

#: Records each text drawn, per canvas; a fill of the whole canvas (a new drawing) starts
#: its list again. (The page programs are tests/js/pages.mjs's, linted there.)
RECORD_JS = f"({page_function('recordTexts')})();"  # an init script: run before the page's own

#: The theme's colour variables in both modes (pydata-sphinx-theme's), and the column.
THEME_CSS = """
html[data-theme=light] { --pst-color-background: #ffffff; --pst-color-text-base: #222832;
  --pst-color-text-muted: #48566b; --pst-color-border: #d1d5da; --pst-color-surface: #f3f4f5;
  color-scheme: light; }
html[data-theme=dark] { --pst-color-background: #121212; --pst-color-text-base: #ced6dd;
  --pst-color-text-muted: #9ca4af; --pst-color-border: #48566b; --pst-color-surface: #29313d;
  color-scheme: dark; }
body { background: var(--pst-color-background); color: var(--pst-color-text-base);
  margin: 0 auto; padding: 0 16px; font-family: system-ui, sans-serif; }
"""

#: In the page: what lab element `id` shows now (the texts of its canvas, its visible size,
#: the tokens of its state, what runs past its right edge).
LOOK_JS = page_function("look")
SET_JS = page_function("setControl")  # set a control, and wait for the drawing
MODE_JS = page_function("setMode")  # light or dark, and wait for the redraw


# ------------------------------------------------------------------ the checks


def _overlap(a: list, b: list, slack: float = 0.5) -> bool:
    """Whether convex quadrilaterals ``a`` and ``b`` (corners in order) overlap by more than
    ``slack`` px along every axis of their edges (separating-axis test)."""
    for quad in (a, b):
        for k in range(4):
            (x0, y0), (x1, y1) = quad[k], quad[(k + 1) % 4]
            nx, ny = y0 - y1, x1 - x0
            norm = (nx * nx + ny * ny) ** 0.5
            if norm == 0:
                continue
            pa = [(x * nx + y * ny) / norm for x, y in a]
            pb = [(x * nx + y * ny) / norm for x, y in b]
            if min(max(pa), max(pb)) - max(min(pa), min(pb)) <= slack:
                return False
    return True


def _bare(label: str) -> str:
    """A tick label without its position ("3: weather" -> "weather")."""
    head, sep, tail = label.partition(": ")
    return tail if sep and head.isdigit() else label


def _axes(texts: list) -> list[list[str]]:
    """The rows and columns of labels: texts drawn the same way (turn, alignment) with their
    anchors on one line, across or down."""
    groups: dict = {}
    for t in texts:
        turn = tuple(round(v, 3) for v in t["matrix"])
        x, y = t["anchor"]
        for key in (("across", round(y), turn, t["align"], t["baseline"]),
                    ("down", round(x), turn, t["align"], t["baseline"])):
            groups.setdefault(key, []).append(_bare(t["text"]))
    return list(groups.values())


def problems(look: dict, names: bool = True) -> list[str]:
    """Every defect of one drawing (LOOK_JS's answer), as sentences; ``names``: also the
    tokens' names on the axes (for the states of at most NAME_ALL tokens the naming is
    designed for: a stress state's 23-40 tokens are named every few rows, by design)."""
    out = []
    texts = [t for t in look["texts"] if t["text"].strip()]
    lost = [t for t in texts if any(v != v for corner in t["corners"] for v in corner)]
    out += [f"drawn at no place (NaN): {t['text']!r}" for t in lost]
    texts = [t for t in texts if t not in lost]
    for t in texts:
        if "\u2026" in t["text"] or t["text"].endswith("..."):
            out.append(f"cut: {t['text']!r}")
        xs = [x for x, _ in t["corners"]]
        ys = [y for _, y in t["corners"]]
        if min(xs) < -0.5 or min(ys) < -0.5 or max(xs) > look["width"] + 0.5 or (
                max(ys) > look["height"] + 0.5):
            out.append(f"outside the canvas ({look['width']} x {look['height']}): {t['text']!r} "
                       f"x {min(xs):.0f}..{max(xs):.0f}, y {min(ys):.0f}..{max(ys):.0f}")
    # QA Q8: an axis whose ticks thin out says so after its title, "query i (every 2nd
    # named)"; the thinning alone ("1 in 4 named") replaced "query" and "key"
    out += [f"an axis titled only by its thinning: {t['text']!r}" for t in texts
            if re.fullmatch(r"\(?(every 2nd|1 in \d+) named\)?", t["text"].strip())]
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            if _overlap(a["corners"], b["corners"]):
                out.append(f"overlap: {a['text']!r} and {b['text']!r} at "
                           f"({a['corners'][0][0]:.0f}, {a['corners'][0][1]:.0f})")
    tokens = look["tokens"] if names else []
    if tokens:
        need: dict = {}
        for tok in tokens:
            need[tok] = need.get(tok, 0) + 1
        axes = _axes(texts)
        if not any(all(axis.count(tok) >= k for tok, k in need.items()) for axis in axes):
            named = {t["text"] for t in texts}
            joined = " ".join(named)
            missing = [tok for tok in need if tok not in named and f": {tok}" not in joined]
            out.append(f"no axis names every token of {tokens}; never named: {missing}")
        if len(tokens) <= NAME_ALL:  # and no axis of tokens leaves some out
            for axis in axes:
                named = sum(min(axis.count(tok), k) for tok, k in need.items())
                if 3 <= named < len(tokens) and len(axis) < 2 * len(tokens):
                    out.append(f"an axis names {named} of the {len(tokens)} tokens: {axis}")
    out.extend(f"past the lab's right edge: {p}" for p in look["past"])
    return out


# ------------------------------------------------------------------ the pages


@pytest.fixture(scope="module")
def lab_pages(tmp_path_factory, web_data):
    """Each lab's standalone page, its data scripts those of the run (conftest's web_data:
    under `make test` the build's, not MiniLM's export and the gallery made again here)."""
    folder = tmp_path_factory.mktemp("legible")
    pages = {}
    for name in LABS:
        html = standalone_html(web_lab(name), title=name, data=web_data)
        pages[name] = folder / f"{name}.html"
        pages[name].write_text(html, encoding="utf-8")
    return pages


def open_lab(browser, path: Path, width: int):
    """A page of ``width`` CSS px with the lab of ``path`` in the book's column and styles,
    its texts recorded. Returns (watch, page, the lab's element id)."""
    from conftest import PageWatch

    watch = PageWatch(browser, width=width, init_script=RECORD_JS)
    page = watch.page
    page.goto(path.as_uri(), wait_until="load")
    page.evaluate("document.documentElement.setAttribute('data-theme', 'light')")
    css = (ROOT / "_ext" / "static" / "attention-book.css").read_text(encoding="utf-8")
    page.add_style_tag(content=css + THEME_CSS + f"body {{ max-width: {COLUMN[width]}px; }}")
    lab_id = page.locator(".ab-lab").get_attribute("id")
    # drawn once: a state that comes as a Promise (chapter 3's sqrt(d_k) lab measures its
    # first d_k in steps) may land after the first frames; CI run 2 of stop 27 looked too
    # early on a busy machine and recorded no text
    page.wait_for_function(f"document.getElementById('{lab_id}').abLab?.draws > 0")
    page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    return watch, page, lab_id


#: further views of a lab: chapter 9's model view (72 thumbnails, the chosen head opened
#: under them) on its 16-token preset, in both measures
MORE_VIEWS = {
    "decoder": [("model view", [("view", "model")]), ("logit lens", [("view", "lens")])],
    "pretrained": [("model view", [("text", "The animal didn't cross the street because it was too tired."),
                                   ("view", "model"), ("query", 10)]),
                   ("model view, norms", [("measure", "norm")])],
}


#: the far ends of each lab's controls, each from the lab's defaults (the states the
#: matplotlib views were checked in: long and many tokens, the widest d, the most heads,
#: the deepest stack, an empty sentence)
CAT_DOG = "the cat saw the dog and the dog saw the cat"
FORTY = " ".join(["tok"] * 40)  # past NAME_ALL: labels thinned
STRESS = {
    "scaling": [[("d_k", 512), ("scaled", True)], [("d_k", 1)]],
    "attention": [[("mode", "cross"), ("query", 4)],
                  [("text", "extraordinarily complicated internationalisation")],
                  [("text", FORTY)]],
    "block": [[("depth", 12), ("norm_first", True)],
              [("text", "in the morning the sun was warm, so we went to the river")]],
    "embedding": [[("d", 64)], [("text", "In the morning the sun was warm, so we went to the "
                                         "river and read a book under a big tree.")],
                  [("text", "")]],
    "masking": [[("kind", "causal"), ("method", "after")],
                [("text", CAT_DOG), ("kind", "window")],
                [("text", CAT_DOG), ("kind", "padding"), ("length", 0)]],
    "multihead": [[("h", 8), ("heads_on", [0, 1, 2, 3])], [("d", 64), ("h", 16)],
                  [("text", FORTY)]],
    "permutation": [[("order", "rotate"), ("pe", True)], [("order", "reverse"), ("causal", True)],
                    [("text", FORTY)]],
    "positional": [[("s", 64), ("d", 512)], [("d", 2)], [("s", 8), ("k", 16)]],
    "training": [[("task", "induction"), ("checkpoint", 6)]],
    "decoder": [[("n_new", 24), ("t", 24)],  # 28 tokens
                [("prompt", "What is the capital of France?"), ("chat", True), ("t", 8),
                 ("view", "model")],  # the chat template's 37 tokens and 7 written
                [("prompt", "")]],
}


def scenarios(name: str) -> list[tuple[str, list]]:
    """(what, the controls to set) for each view of lab ``name`` the test looks at: its
    default, a held-out sentence, more views, and STRESS (each from the defaults)."""
    out = [("default", [])]
    if name in HELD_OUT_VALUES:
        out.append(("held-out", HELD_OUT_VALUES[name]))
    elif name in TEXT_LABS:
        out.append(("held-out", [("text", HELD_OUT)]))
    out += MORE_VIEWS.get(name, [])
    defaults = SCENES[name].defaults
    for k, settings in enumerate(STRESS.get(name, [])):
        touched = dict.fromkeys(c for _, earlier in out for c, _ in earlier)
        reset = [(c, list(defaults[c]) if isinstance(defaults[c], tuple) else defaults[c])
                 for c in touched if c not in dict(settings)]
        out.append((f"stress {k}", reset + settings))
    return out


def look_at(page, lab_id: str, settings: list) -> dict:
    """What the lab shows in light and dark mode after ``settings``: mode -> LOOK_JS's answer."""
    for control, value in settings:
        page.evaluate(SET_JS, [lab_id, control, value])
    seen = {}
    for mode in ("dark", "light"):
        page.evaluate(MODE_JS, [mode])
        seen[mode] = page.evaluate(LOOK_JS, [lab_id])
    return seen


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", LABS)
def test_every_text_of_every_lab_is_whole_apart_and_inside(browser, lab_pages, name, width):
    watch, page, lab_id = open_lab(browser, lab_pages[name], width)
    found = []
    for what, settings in scenarios(name):
        for mode, look in look_at(page, lab_id, settings).items():
            assert look["texts"], (name, width, what, mode, "no text recorded")
            if what == "held-out" and name in TEXT_LABS | {"pretrained"}:
                assert 10 <= len(look["tokens"]) <= 16, look["tokens"]
            if name in NAMED:
                look["tokens"] = NAMED[name](look["tokens"])
            found += [f"{name} {width}px {what} {mode}: {p}"
                      for p in problems(look, names=not what.startswith("stress"))]
    assert watch.console_errors == [], watch.console_errors
    watch.close()
    assert not found, "\n".join(found)


BAD_JS = page_function("badFigure")


def test_the_checker_finds_each_defect(browser):
    """A figure drawn with every defect: each is reported, and a clean one passes."""
    from conftest import PageWatch

    watch = PageWatch(browser, width=390, init_script=RECORD_JS)
    page = watch.page
    page.set_content("<!doctype html><body></body>")
    page.evaluate(BAD_JS)
    found = problems(page.evaluate(LOOK_JS, ["bad"]))
    text = "\n".join(found)
    assert "cut: 'weights" in text, text
    assert "overlap: 'overlapping' and 'overlapped'" in text, text
    assert "outside the canvas" in text and "'weather'" in text, text
    assert "no axis names every token" in text, text  # "the" twice, named once
    assert "an axis names 3 of the 4 tokens" in text, text
    assert "past the lab's right edge: CODE" in text, text
    assert "an axis titled only by its thinning: '1 in 4 named'" in text, text
    clean = {"texts": [t for t in page.evaluate(LOOK_JS, ["bad"])["texts"]
                       if t["text"] in ("the", "cat", "sat")], "width": 200, "height": 100,
             "tokens": ["the", "cat", "sat"], "past": []}
    assert problems(clean) == []
    watch.close()


def test_axes_group_rows_and_columns_of_labels():
    row = [{"text": t, "matrix": [1, 0, 0, 1], "anchor": [10 * k, 50], "align": "center",
            "baseline": "top", "corners": []} for k, t in enumerate(["0: a", "1: b"])]
    assert ["a", "b"] in _axes(row)
    assert json.dumps(_bare("12: x")) == '"x"' and _bare("a: b") == "a: b"


def test_the_picture_downloads_as_a_png_that_stands_alone(browser, lab_pages):
    """The button under the figure saves a PNG of 2 pixels a CSS px at a fixed width (760 CSS
    px, whatever the screen: a phone's was 672 px wide and up to 2,370 tall), a header of
    the lab's title and its settings over the figure, in the light theme even on a dark
    page (QA Q18), named after the lab and its settings; the button is named for its lab."""
    import struct

    watch, page, lab_id = open_lab(browser, lab_pages["attention"], 390)
    page.evaluate("() => { document.documentElement.dataset.theme = 'dark'; }")
    button = page.locator(f"#{lab_id} button.ab-download-picture")
    assert button.text_content() == "Download the picture (PNG)"
    assert button.get_attribute("aria-label") == "Download the picture (PNG): Attention explorer"
    with page.expect_download() as info:
        button.click()
    name = info.value.suggested_filename
    assert name == ("attention_the-weather-is-lovely_mode-self_in-the-morning-the-sun_query0_dk4_"
                    "temperature1_seed0.png"), name
    data = Path(info.value.path()).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width == 2 * 760 and height > 400, (width, height)
    top_left = page.evaluate(page_function("pngCorner"), __import__("base64").b64encode(data).decode())
    assert top_left == [255, 255, 255], top_left  # light, though the page is dark
    assert watch.console_errors == []
    watch.close()


def test_chapter_3_scaling_lab_looks_its_states_up():
    """The sqrt(d_k) lab's 20 states are Python's (labs/scaling/table.js, generated: its freshness
    is tests/test_web_states.py's), looked up, not measured in the page: its module draws no
    random numbers at all (a first d_k = 512 held the page 0.2-0.8 s, QA Q4)."""
    from attention_book.controls.web import WEB_DIR

    source = (WEB_DIR / "src" / "labs" / "scaling.js").read_text()
    assert "rng.js" not in source and "scaling/table.js" in source
    assert "defaultRng" not in (WEB_DIR / "scaling.js").read_text()


def test_thin_lines_keep_three_to_one_contrast():
    """theme.contrasted: a line colour too faint on the page (a yellow or pale grey on white,
    a navy on near black) is mixed toward the text's end until WCAG's 3:1 for graphics, and
    one that already contrasts is left alone."""
    if NODE is None:
        pytest.skip("no node")
    faint = {"#ffffff": ["#c9a227", "#b0b0b0", "#35b779", "#ffe945", "#e0c050"],
             "#121212": ["#00204c", "#1f3a5f", "#595959"]}
    kept = {"#ffffff": ["#00204c", "#d55e00", "#595959"],
            "#121212": ["#e0c050", "#a6a6a6", "#31688e"]}
    cases = [[c, bg] for table in (faint, kept) for bg, cs in table.items() for c in cs]
    got = node("theme.contrasted", input=cases)
    n_faint = sum(len(cs) for cs in faint.values())
    for k, ((colour, bg), (out, before, after)) in enumerate(zip(cases, got, strict=True)):
        assert after >= 3, (colour, bg, out, after)
        if k < n_faint:
            assert before < 3 and out != colour, (colour, bg, before)
        else:
            assert out == colour, (colour, bg, out)


def test_the_query_the_reader_chose_survives_a_cleared_box(browser, lab_pages):
    """QA 9: chapter 9's query, chosen in one sentence, is the query again when the box is
    cleared and another sentence typed; the choices it passed through meanwhile ([CLS] and
    [SEP] alone, then each longer prefix) were no choice of the reader's."""
    watch, page, lab_id = open_lab(browser, lab_pages["pretrained"], 1280)
    query = page.locator(f"#{lab_id} select[name=query]")
    box = page.locator(f"#{lab_id} [name=text]")
    values = f"document.getElementById('{lab_id}').abLab.values"
    query.select_option(index=5)
    assert page.evaluate(values)["query"] == 5
    box.fill("")
    assert page.evaluate(values)["query"] < 5  # [CLS] and [SEP] only: shown clamped
    box.press_sequentially("the quiet fox crossed the frozen river")
    assert page.evaluate(values)["query"] == 5, "the reader's query was lost"
    box.fill("a fox")  # shorter again: the largest query below it, the choice still kept
    assert page.evaluate(values)["query"] == 3
    box.fill("the quiet fox crossed the frozen river")
    assert page.evaluate(values)["query"] == 5
    assert watch.console_errors == [], watch.console_errors
    watch.close()


#: In the page: an arcs panel of `weights` drawn by the front end at `dpr` on `background`;
#: for each arc, the contrast against the background of its most contrasting pixel where it
#: crosses the panel's middle row (within 3 CSS px of the curve across, and 3 up or down:
#: an arc runs flat there, and its halo is above and below its colour).
ARC_PIXELS_JS = page_function("arcContrasts")


def test_every_arc_of_a_weight_shown_keeps_three_to_one(browser):
    """QA 18: the arcs' light weights were navy on the dark page (1.7:1 at weight 0.01, drawn
    0.6 px wide), their heaviest yellow on white (2.4:1). Every arc of a weight the numbers
    show (0.01 to two decimals: 0.005 and up) now has a drawn pixel of 3:1 or more against
    the page (its halo in the page's text colour, round its colour from the weights' map),
    at 1 and 2 device px a CSS px, in both modes, at every slant; weight 0 may stay faint.
    The arcs cross the middle row apart: the weights are in the order of their keys, each
    key 24 px from the next."""
    from conftest import PageWatch

    from attention_book.controls.web import WEB_DIR

    weights = [0.3, 0.0, 0.002, 0.005, 0.006, 0.008, 0.01, 0.02, 0.05, 0.1, 0.199, 0.3]
    watch = PageWatch(browser, width=600)
    watch.page.set_content("<!doctype html><body><script>"
                           + (WEB_DIR / "lab.js").read_text(encoding="utf-8") + "</script></body>")
    faint = []
    for background, dark in (("#121212", True), ("#ffffff", False)):
        for dpr in (1, 2):
            ratios = watch.page.evaluate(ARC_PIXELS_JS, [dpr, background, dark, weights])
            faint += [f"{background} at {dpr} px: weight {w} {r:.2f}:1"
                      for w, r in zip(weights, ratios, strict=True) if w >= 0.005 and r < 3]
    assert watch.console_errors == []
    watch.close()
    assert not faint, faint


@pytest.mark.parametrize("width", WIDTHS)
def test_every_symbol_typed_stays_in_view(browser, lab_pages, width):
    """Chapter 8's induction box with its most (24 symbols, each of two digits): the box
    wraps its text, so that nothing of it is scrolled out of view (a one-line <input> showed
    about 19 of 24 at 390 px); a short text keeps one line. The book's inputs are offered
    beside it, and choosing one puts it in the box."""
    watch, page, lab_id = open_lab(browser, lab_pages["training"], width)
    longest = " ".join(str(31 - k) for k in range(24))
    page.evaluate(SET_JS, [lab_id, "task", "induction"])
    page.evaluate(SET_JS, [lab_id, "induction_input", longest])
    box = page.locator(f"#{lab_id} [name=induction_input]")
    seen = box.evaluate("b => [b.value, b.scrollWidth, b.clientWidth, b.scrollHeight, b.clientHeight,"
                        " parseFloat(getComputedStyle(b).fontSize)]")
    value, scroll_w, client_w, scroll_h, client_h, font_px = seen
    assert value == longest
    assert scroll_w <= client_w and scroll_h <= client_h + 1, seen  # nothing hidden
    short = page.locator(f"#{lab_id} [name=reverse_input]")
    # one line (a phone's box is 44 px at least, to touch); the long text two or more
    assert short.evaluate("b => b.scrollHeight") <= max(44, 2 * font_px + 8)
    assert scroll_h >= 2 * font_px, seen
    offered = page.locator(f"#{lab_id} select.ab-suggest").nth(1)
    choice = offered.locator("option").nth(2).get_attribute("value")
    offered.select_option(value=choice)
    page.evaluate("new Promise(r => requestAnimationFrame(r))")
    assert page.evaluate(f"document.getElementById('{lab_id}').abLab.values.induction_input") == choice
    assert watch.console_errors == [], watch.console_errors
    watch.close()


#: Before any script: each lab's mount (its element's abLab set) and each drawing, with the
#: other lab that did either in the same task (a microtask clears the mark at the end of the
#: callback).
SAME_TASK_JS = f"({page_function('sameTask')})();"  # an init script: run before the page's own


def test_no_task_of_a_page_load_mounts_two_labs(browser, tmp_path):
    """Chapter 3's page (the sqrt(d_k) lab and the attention lab): each lab is mounted, its
    first state computed and drawn, in a task of its own, not both in the DOMContentLoaded
    task that also runs the theme's deferred scripts (163 ms of CPU in a chromium trace of
    the built page, 50 of them the two labs'). How long the tasks take is a speed figure:
    ``benchmarks/browser_lab.py --pages`` prints each built chapter's longest."""
    from conftest import PageWatch

    from attention_book.controls.web import WEB_DIR

    labs = [web_lab("scaling"), web_lab("attention")]
    scripts = dict.fromkeys(name for lab in labs for name in lab.scripts)
    page_file = tmp_path / "chapter3.html"
    page_file.write_text(
        "<!doctype html><html lang='en'><head><meta charset='utf-8'></head><body>"
        + "".join(lab._repr_html_() for lab in labs)
        + "".join(f"<script>{(WEB_DIR / name).read_text(encoding='utf-8')}</script>"
                  for name in scripts) + "</body></html>", encoding="utf-8")
    watch = PageWatch(browser, width=1280, init_script=SAME_TASK_JS)
    page = watch.page
    page.goto(page_file.as_uri(), wait_until="load")
    page.wait_for_function("[...document.querySelectorAll('.ab-lab')].every(e => e.abLab?.draws > 0)")
    work = page.evaluate("__abWork")
    assert {(w["what"], w["lab"]) for w in work} >= {
        ("mount", "scaling"), ("mount", "attention"), ("draw", "scaling"), ("draw", "attention")}, work
    assert all(w["with"] is None for w in work), work
    assert watch.console_errors == [], watch.console_errors
    watch.close()


#: In the page: a dense line (`n` points of `f` over `w` CSS px) stroked with a round pen and
#: filled by the lines panel's columns, at `dpr`; the pixels each covers (alpha over half).
DENSE_JS = page_function("denseLineCover")


def test_a_dense_line_fills_what_its_stroke_covers(browser):
    """The lines panel draws a line of more points than its pixels as columns (a stroke of a
    long zigzag rasterised in 9-12 ms a panel at s = d = 512): the pixels they cover are
    those a round pen's stroke covers, within a pixel at the edges (intersection over union
    0.85 or more, thin and thick, slow and fast, at 1 and 2 device px a CSS px)."""
    from conftest import PageWatch

    from attention_book.controls.web import WEB_DIR

    watch = PageWatch(browser, width=600)
    watch.page.set_content("<!doctype html><body><script>"
                           + (WEB_DIR / "lab.js").read_text(encoding="utf-8") + "</script></body>")
    low = []
    for n, f in ((512, 1.0), (512, 0.05), (900, 0.3)):
        for width in (1.2, 3.84):
            for dpr in (1, 2):
                iou = watch.page.evaluate(DENSE_JS, [n, 250, width, dpr, f])
                if iou < 0.85:
                    low.append((n, f, width, dpr, round(iou, 3)))
    assert watch.console_errors == []
    watch.close()
    assert not low, low


#: The multi-head lab's h and its choices, the heads switched on and the state's h.
HEADS_JS = page_function("heads")


def test_a_new_width_keeps_the_readers_heads_or_the_most_below(browser, lab_pages):
    """Chapter 4's lab: a new d offers h the divisors of d (16 heads at most), keeps the
    reader's h when it divides d, else takes the largest divisor below it, and switches
    every head on (the matplotlib lab's test, now of the front end both pages share)."""
    watch, page, lab_id = open_lab(browser, lab_pages["multihead"], 1280)
    for control, value, h, options in [
            ("h", 4, 4, [1, 2, 4, 8]), ("d", 12, 4, [1, 2, 3, 4, 6, 12]),
            ("h", 6, 6, [1, 2, 3, 4, 6, 12]), ("d", 8, 4, [1, 2, 4, 8]),
            ("d", 64, 4, [1, 2, 4, 8, 16])]:
        page.evaluate(SET_JS, [lab_id, control, value])
        seen = page.evaluate(HEADS_JS, lab_id)
        assert seen == {"h": h, "options": options, "on": list(range(h)), "state": h}, \
            (control, value, seen)
    assert watch.console_errors == [], watch.console_errors
    watch.close()


def test_controls_show_their_true_state_and_speak_once(browser, lab_pages):
    """QA Q1, Q2, Q17, Q19 in the page, as a reader's keys leave it:

    - arrow keys on a closed list of the book's texts step through them (each press filled
      the box with the first one again: the list went back to "suggested…");
    - chapter 8's n and t sliders end at what is generated (24 positions less the prompt's
      9: End read 23 while the picture showed step 15);
    - a text box that has no effect now is dimmed as a disabled slider is;
    - a screen reader hears one short line once the reader pauses, not the readout at every
      step (it was live: up to 1,436 characters), and a slider's value once (its <output>
      was a second live status); the buttons name their lab."""
    # Q1: chapter 1's sentence list, walked with ArrowDown on the closed list
    watch, page, lab_id = open_lab(browser, lab_pages["embedding"], 390)
    listed = page.locator(f"#{lab_id} select.ab-suggest")
    texts = listed.evaluate("s => Array.from(s.options, (o) => o.value)")
    box = page.locator(f"#{lab_id} [name=text]")
    assert listed.evaluate("s => s.selectedIndex") == 1 and box.input_value() == texts[1]
    seen = []
    for _ in range(3):
        listed.press("ArrowDown")
        seen.append(page.evaluate(f"document.getElementById('{lab_id}').abLab.values.text"))
    assert seen == texts[2:5], seen
    assert box.input_value() == texts[4]

    # Q19: one live region a lab, its status line; the readout and the values not live
    live = page.evaluate(f"""Array.from(document.getElementById('{lab_id}').querySelectorAll(
        '[aria-live], [role=status], output:not([aria-hidden=true])'), (e) => e.className)""")
    assert live == ["ab-lab-status"], live
    slider = page.locator(f"#{lab_id} input[type=range][name=d]")
    slider.press("End")
    slider.press("Home")
    slider.press("ArrowRight")
    status = page.locator(f"#{lab_id} .ab-lab-status")
    page.wait_for_function(f"document.querySelector('#{lab_id} .ab-lab-status').textContent.length > 0")
    said = status.text_content()
    assert said.startswith("d (dimension) ") and len(said) < 120 and "\n" not in said, said
    names = page.locator(f"#{lab_id} .ab-lab-downloads button").evaluate_all(
        "bs => bs.map((b) => b.getAttribute('aria-label'))")
    assert len(names) == 2 and all(":" in n and n.split(":")[0] in ("Download the numbers (JSON)",
                                   "Download the picture (PNG)") for n in names), names
    watch.close()

    # Q17: the attention explorer's keys/values box in self-attention mode
    watch, page, lab_id = open_lab(browser, lab_pages["attention"], 1280)
    kv, text = (page.locator(f"#{lab_id} [name={n}]") for n in ("kv_text", "text"))
    assert kv.is_disabled() and text.is_enabled()
    opacity = "e => parseFloat(getComputedStyle(e).opacity)"
    assert kv.evaluate(opacity) <= 0.6 and text.evaluate(opacity) == 1
    watch.close()

    # Q2: chapter 8's generation after a 9-symbol prompt: 15 tokens fit, t <= n
    watch, page, lab_id = open_lab(browser, lab_pages["generation"], 390)
    page.locator(f"#{lab_id} [name=prompt]").fill("3 14 15 9 26 5 30 8 9")
    values = f"document.getElementById('{lab_id}').abLab.values"
    for name in ("n", "t"):
        page.locator(f"#{lab_id} input[type=range][name={name}]").press("End")
    assert (page.evaluate(values)["n"], page.evaluate(values)["t"]) == (15, 15)
    shown = page.locator(f"#{lab_id} output").evaluate_all("os => os.map((o) => o.textContent)")
    assert shown.count("15") == 2, shown
    page.locator(f"#{lab_id} input[type=range][name=n]").press("Home")  # n = 1: t follows
    assert (page.evaluate(values)["n"], page.evaluate(values)["t"]) == (1, 1)
    assert watch.console_errors == [], watch.console_errors
    watch.close()


def test_axes_name_their_last_value_and_whole_blocks(browser, lab_pages):
    """QA Q22, chapters 1-5 review F8, chapters 6-9 review F7: at 390 px the sqrt(d_k) lab's
    log axes named only 1 and 32, so d_k = 512 was past the last label; chapter 7's stream
    plot at L = 12 put ticks at 2.5 and 7.5 blocks. Every x axis of the sqrt(d_k) lab names
    512 on a phone, and chapter 7's names whole blocks at every depth up to 12, at both widths."""
    watch, page, lab_id = open_lab(browser, lab_pages["scaling"], 390)
    texts = [t["text"].strip() for t in page.evaluate(LOOK_JS, [lab_id])["texts"]]
    assert texts.count("512") >= 4, texts  # the four panels' x axes (and one y axis)
    watch.close()
    for width in WIDTHS:
        watch, page, lab_id = open_lab(browser, lab_pages["block"], width)
        for depth in (5, 7, 9, 12):
            rows: dict = {}  # the drawn texts by the row they stand on
            for t in look_at(page, lab_id, [("depth", depth)])["light"]["texts"]:
                rows.setdefault(round(max(y for _, y in t["corners"])), []).append(t["text"].strip())
            [ticks] = [row for row in rows.values() if "0" in row and str(depth) in row]  # blocks
            assert not [t for t in ticks if not t.isdigit()], (width, depth, ticks)
        watch.close()


#: In the page: the keys an arcs panel of `weights` draws an arc to (each arc's end, matched
#: to the key it lands on).
ARC_KEYS_JS = page_function("arcKeys")


def test_past_16_keys_only_the_16_heaviest_arcs_are_drawn(browser):
    """QA Q6: with 49 or 55 tokens the arcs were a solid fan from which no key could be read.
    Up to 16 keys every key of a weight gets its arc; past 16, only the 16 heaviest."""
    import numpy as np

    from conftest import PageWatch

    from attention_book.controls.web import WEB_DIR

    watch = PageWatch(browser, width=800)
    watch.page.set_content("<!doctype html><body><script>"
                           + (WEB_DIR / "lab.js").read_text(encoding="utf-8") + "</script></body>")
    rng = np.random.default_rng(39)
    for n in (5, 16, 17, 55, 128):
        weights = rng.dirichlet(np.ones(n) * 0.5)
        keys = watch.page.evaluate(ARC_KEYS_JS, [weights.tolist()])
        assert -1 not in keys and len(set(keys)) == len(keys), keys
        assert sorted(keys) == sorted(np.argsort(-weights, kind="stable")[:16].tolist()), (n, keys)
    assert watch.console_errors == []
    watch.close()


#: In the page: the lab's figure laid out as drawn at its width: each panel's region, CSS px.
REGIONS_JS = page_function("figureRegions")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_mask_editors_columns_hold_still(browser, lab_pages, width):
    """QA Q15: masking the padding, then "real tokens" to 0, turned the mask editor's 2 x 2
    grid into 3 + 1 (the <pad> labels changed the measured widths), and back when a token
    was real: a reader scrubbing the slider lost their place. The columns come from the lab
    and the width: every state the slider passes through, and a long sentence, lays the
    four panels out in the same places."""
    watch, page, lab_id = open_lab(browser, lab_pages["masking"], width)
    first = page.evaluate(REGIONS_JS, [lab_id])
    seen = {}
    page.evaluate(SET_JS, [lab_id, "kind", "padding"])
    for length in (3, 2, 1, 0, 5):
        page.evaluate(SET_JS, [lab_id, "length", length])
        seen[f"padding, {length} real"] = page.evaluate(REGIONS_JS, [lab_id])
    page.evaluate(SET_JS, [lab_id, "text", HELD_OUT])
    seen["14 tokens"] = page.evaluate(REGIONS_JS, [lab_id])
    assert len(first) == 4 and len({x for x, _ in first}) == (2 if width > 600 else 1), first
    assert {k: v for k, v in seen.items() if v != first} == {}, first
    watch.close()


def test_positional_waves_are_a_window_that_says_so(browser, lab_pages):
    """QA Q13, chapters 1-5 review F7: at s = d = 512 the i = 0 wave over 512 positions and
    the rotation check over 512 dimensions were solid blocks of ink. The waves show the first
    64 positions and the check the first 32 dimensions, each title saying which ("positions
    0-63 of 512"); below that every point is drawn, down to s = 1."""
    watch, page, lab_id = open_lab(browser, lab_pages["positional"], 1280)
    lines = ("([id]) => { const lab = document.getElementById(id).abLab;"
             " return lab.spec.panels.filter((p) => p.kind === 'lines')"
             ".map((p) => [p.title, p.n, p.lines.map((l) => l.y.length)]); }")
    for (s, d), (waves, dims) in {(512, 512): (64, 32), (40, 24): (40, 24), (1, 2): (1, 2)}.items():
        page.evaluate(SET_JS, [lab_id, "s", s])
        page.evaluate(SET_JS, [lab_id, "d", d])
        (wave_title, wn, wlens), (check_title, cn, clens) = page.evaluate(lines, [lab_id])
        assert wn == waves and set(wlens) == {waves}, (s, d, wave_title, wn, wlens)
        assert cn == dims and set(clens) == {dims}, (s, d, check_title, cn, clens)
        assert (f"positions 0\u201363 of {s}" in wave_title) == (s > 64), wave_title
        assert (f"dimensions 0\u201331 of {d}" in check_title) == (d > 32), check_title
    assert watch.console_errors == [], watch.console_errors
    watch.close()


@pytest.mark.parametrize("name", ["multihead", "block"])
def test_a_tracers_shapes_never_break_on_a_phone(browser, lab_pages, name):
    """QA Q10, chapters 1-5 review F2: at 390 px the shapes wrapped inside their parentheses,
    "(1, 16, / 5, 4)" (the readout's code rule, white-space: normal, won over the tracer's).
    Every shape of chapter 4's and chapter 7's tracers is one line, at their widest states;
    its notation typeset (no raw ^ or _{ left)."""
    watch, page, lab_id = open_lab(browser, lab_pages[name], 390)
    for control, value in {"multihead": [("d", 64), ("h", 16)], "block": [("depth", 12)]}[name]:
        page.evaluate(SET_JS, [lab_id, control, value])
    cells = page.evaluate(f"""Array.from(document.querySelectorAll('#{lab_id} .ab-trace table.ab-shape tr'),
        (tr) => [tr.cells[0].textContent, tr.cells[1].textContent,
                 tr.cells[1].querySelector('code').getClientRects().length])""")
    assert len(cells) >= 8, cells
    broken = [(n, shape) for n, shape, lines in cells if lines != 1]
    raw = [n for n, _, _ in cells if "^" in n or "_{" in n]
    assert not broken and not raw, (broken, raw)
    watch.close()
