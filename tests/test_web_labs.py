"""Every lab that computes in the reader's browser, driven as a reader drives it.

For each scene with a state module (``Scene.web``), in chromium, in the built book over
http; as ``file://``, the built book and the lab's own page (its scripts inlined, as
``controls.web.standalone_html`` writes it), three values a control, each drawn as over http:

- every control is set to every value the live lab accepts (long ranges sampled; a control
  whose choices follow other controls, to every choice it offers then), through the page's
  own input events; each change draws the state the scene's Python state function gives for
  the values the page shows: the alt text and the readout's text equal to the lab's module's
  of Python's state (``controls.web.present``: what the live lab shows), a slider's output and
  aria-valuetext its value's label, the picture
  redrawn whenever an active control changed the values, and the alt text changed by it;
- in the built book, every select and slider has one label and a disabled one its hint;
- every text control takes a sentence that appears nowhere in the book, an empty text, a
  text over the lab's limit and markup, which stays text (no element, nothing run);
- the numbers shown download as JSON with ``tokens`` and the weights (or main matrix);
- no request leaves the page's own files, and no console error.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from attention_book.controls import web_lab
from attention_book.controls.web import declaration, present, standalone_html
from attention_book.scenes import SCENES
from attention_book.scenes.core import MAX_WIDGET_TOKENS
from node_driver import page_function

pytestmark = [pytest.mark.slow, pytest.mark.browser]

BROWSER_LABS = sorted(name for name, scene in SCENES.items() if scene.web)
#: sentences a reader might type: none of them appears in the book
NOVEL = "a quokka juggles seven lanterns beside the quiet fjord"
MARKUP = "<b>x</b><script>document.title='ran'</script><img src=x onerror=\"document.title='ran'\">"
LONG = " ".join(f"w{i}" for i in range(MAX_WIDGET_TOKENS + 9))  # over every lab's token limit
TYPED = (NOVEL, "", LONG, MARKUP)
#: Labs whose other sentences need a model the reader loads first (chapter 9's MiniLM:
#: tests/test_web_pretrained.py loads it and checks new sentences; chapter 10's SmolLM2:
#: tests/test_web_decoder*.py); here their presets
MODEL_LABS = {"pretrained", "decoder"}
#: Of those, the labs whose notebook lab takes the reader's texts here too (the kernel has
#: the model). Chapter 9's kernel refuses an empty text before its query's range, which its
#: page's gallery never reaches: tests/test_pretrained_lab.py types its bad texts.
KERNEL_TYPED = {"decoder"}
#: What such a lab's page computes before the reader loads its model, where its other
#: controls reach further: chapter 10's gallery holds its suggested prompts as plain text,
#: greedy, with no head switched off (tests/test_web_decoder*.py drive the model itself). A
#: notebook's kernel has the model: there every value is driven.
WITHOUT_MODEL = {"decoder": {"chat": [False], "decoding": ["greedy"], "off": ["none"]}}
NOISE = re.compile(r"\d\.\de[+-]\d\d|\b\de[+-]\d\d")  # rounding errors, printed

MOVES_JS = page_function("driveControls")
TEXT_OF_JS = page_function("fragmentTexts")


def fold(text: str) -> str:
    return NOISE.sub("#", " ".join(text.split()))


def takes_typed(scene, kernel: bool) -> bool:
    """Whether the lab's text box is driven with the reader's texts (TYPED) here."""
    return scene.web not in MODEL_LABS or (kernel and scene.web in KERNEL_TYPED)


def values_to_try(scene, control, kernel: bool = False) -> list | None:
    """What to set ``control`` to (in a notebook, where a ``kernel`` computes the states,
    or in the page); None: every choice the page offers at that time."""
    if not kernel and control.name in WITHOUT_MODEL.get(scene.web, {}):
        return WITHOUT_MODEL[scene.web][control.name]
    if control.kind == "text":  # the book's sentences (suggested), then the reader's
        typed = TYPED if takes_typed(scene, kernel) else ()
        suggested = declaration(scene)["controls"][scene.controls.index(control)]["suggestions"]
        return [*dict.fromkeys([*suggested, *typed]), control.default]
    if control.kind == "multi":  # subsets of what it offers at the defaults
        options = control.options_for(scene.defaults) if control.options_for else control.options
        values = [v for _, v in options]
        return [values[:1], [], values[1:], list(control.default)]
    if control.options_for is not None:
        return None
    values = list(control.values)
    if len(values) > 16:  # the ends and 12 between, drawn once
        rng = np.random.default_rng(len(values))
        values = [values[0], *sorted(rng.choice(values[1:-1], 12, replace=False).tolist()),
                  values[-1]]
    return [*values, control.default]


#: (scene, values as JSON) -> (alt, readout HTML) or (None, Python's error): the views
#: python_views gave, for the other drives of the same lab in this process (over http and
#: file://, standalone, in JupyterLab): they are a function of the values.
_VIEWS: dict = {}


def python_views(scene, shown: list[dict]) -> list[tuple]:
    """For each values the page shows: (alt, readout HTML) of Python's state as the lab's
    module presents it (what the live lab shows), or (None, Python's error). The states not
    seen before are presented in one run of Node.js (0.1 s of CPU a run)."""
    keys = [(scene.name, json.dumps(values, sort_keys=True)) for values in shown]
    new = {key: values for key, values in zip(keys, shown) if key not in _VIEWS}
    states = {}
    for key, values in new.items():
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
        try:
            states[key] = scene.compute(scene.values(**values))
        except ValueError as err:
            _VIEWS[key] = (None, str(err))
    if states:
        for key, view in zip(states, present(scene, list(states.values())), strict=True):
            _VIEWS[key] = tuple(view.values())
    return [_VIEWS[key] for key in keys]


def drive(page, lab_id: str, scene, controls=None, most: int | None = None,
          kernel: bool = False) -> int:
    """Move every control (or those named) through its values from the defaults; check each
    drawing against Python. With ``most``: at most that many values a control, the first and
    the last among them (a text box: the reader's texts, not the book's sentences). With
    ``kernel``: a notebook's lab (values_to_try). Returns the number of changes checked."""
    return drawings(page, lab_id, scene, controls, most, kernel)[0]


def same_drawings(drawn: dict, reference: dict, where) -> int:
    """Assert each of ``drawn`` (values -> (alt, text, (canvas size, pixels))) drew what
    ``reference`` did for the same values: the same alt text and readout, and the same
    pixels wherever the canvas had the same size (a canvas keeps the tallest height it was
    given: the size compared is the figure's, shownRows). Returns how many pictures were
    compared, and fails when none was: a comparison that never runs checks nothing."""
    compared = 0
    for values, (alt, text, picture) in drawn.items():
        ref_alt, ref_text, ref_picture = reference[values]
        assert (alt, text) == (ref_alt, ref_text), (where, values)
        if picture[0] == ref_picture[0]:  # on a canvas of the same size
            assert picture == ref_picture, (where, values)
            compared += 1
    assert compared > 0, (where, "no picture was compared: every canvas size differed",
                          [(drawn[v][2][0], reference[v][2][0]) for v in list(drawn)[:4]])
    return compared


def drawings(page, lab_id: str, scene, controls=None, most: int | None = None,
             kernel: bool = False) -> tuple:
    """:func:`drive`'s drive and checks: the number of changes checked, and what each values
    checked drew (their JSON -> alt text and readout's text, rounding errors folded, and the
    size and fingerprint of the pixels shown: pages.mjs's driveControls)."""
    moves = []
    for control in scene.controls:
        if controls is not None and control.name not in controls:
            continue
        values = values_to_try(scene, control, kernel)
        if most is not None and control.kind == "text" and takes_typed(scene, kernel):
            values = [*TYPED, control.default]
        elif most is not None and values is not None and len(values) > most:
            values = [values[round(k * (len(values) - 1) / (most - 1))] for k in range(most)]
        moves.append((control, values))
    drives = page.evaluate(MOVES_JS, [lab_id, [[c.name, values] for c, values in moves]])
    expected = python_views(scene, [row["values"] for rows in drives for row in rows])
    texts = iter(page.evaluate(TEXT_OF_JS, [readout for _, readout in expected]))
    expected = iter(expected)
    checked, drawn = 0, {}
    for (control, _), rows in zip(moves, drives, strict=True):
        pictures, alts, previous = set(), set(), None
        for row in rows:
            (alt, readout), text = next(expected), next(texts)
            where = (scene.name, control.name, row["value"])
            if alt is None:  # Python refuses these values: the page says why
                assert readout in row["caption"], (where, readout, row["caption"])
                continue
            if control.kind != "multi" and row["value"] is not None and (
                    control.options_for is None):
                assert row["values"][control.name] == row["value"], where
            assert fold(row["alt"]) == fold(alt), (where, row["alt"], alt)
            assert fold(row["caption"]) == fold(text), (where, row["caption"], text)
            assert row["elements"] == 0, where  # reader text never became markup
            if control.kind == "slider":  # its <output> and what a screen reader says
                value = next(v for v in control.values if v == row["values"][control.name])
                assert row["output"] == row["valuetext"], (where, row["valuetext"])
                if isinstance(value, float) and control.label_of(value) == str(value):
                    assert float(row["output"]) == value, where  # JavaScript's "1" for 1.0
                else:
                    assert row["output"] == control.label_of(value), (where, row["output"])
            if not row["disabled"]:
                pictures.add(row["pixels"])
                alts.add(row["alt"])
                if previous is not None and previous["values"] != row["values"] and (
                        control.kind != "text"):  # a text can mean what the one before did
                    assert row["pixels"] != previous["pixels"], (where, "picture unchanged")
                previous = row
            drawn[json.dumps(row["values"], sort_keys=True)] = (
                fold(row["alt"]), fold(row["caption"]), (row["size"], row["pixels"]))
            checked += 1
        if not all(r["disabled"] for r in rows) and len(rows) > 1:
            assert len(pictures) >= 2, (scene.name, control.name, "the picture never changed")
            assert len(alts) >= 2, (scene.name, control.name, "the alt text never changed")
    return checked, drawn


#: For check_labels, read in one round trip (it took 3-6 a control): the lab's alt text, and
#: for each select and slider its id, class, aria-label, whether it is disabled, its labels
#: and whether its hint is shown (non-empty box, not visibility: hidden, as playwright's
#: is_visible).
LABELS_JS = page_function("labLabels")


def check_labels(page, lab_id: str) -> None:
    """As the page opened, once the lab drew its first state: the picture has alt text, one
    label names each select and slider (a text box's list of suggestions: its aria-label),
    and a disabled one says why beside it (its ``-hint``). (Chapter 3's sqrt(d_k) lab
    computes its first state in steps, after the page's load: read before it, its picture
    had no alt yet, in 1 of about 20 fresh-clone runs.)"""
    page.wait_for_function(f"document.getElementById('{lab_id}').abLab?.draws > 0")
    found = page.evaluate(LABELS_JS, lab_id)
    assert found["alt"], f"{lab_id}: no alt"
    for control in found["controls"]:
        cid = control["id"]
        if "ab-suggest" in control["cls"]:
            # A text box's list of the book's sentences: named by its aria-label, beside the box.
            assert control["aria"].startswith("texts the book suggests"), cid
            continue
        assert control["labels"] == 1, f"{cid} unlabelled"
        if control["disabled"]:
            assert control["hints"] == 1 and control["hintShown"], f"{cid} disabled, no hint"


def check_download(page, lab_id: str) -> dict:
    """Click the lab's download button: the file is the numbers shown, as JSON, with the
    settings and the figure's arrays beside them (tests/test_pages.py checks those)."""
    with page.expect_download() as info:
        page.click(f"#{lab_id} button.ab-download")
    data = json.loads(open(info.value.path(), encoding="utf-8").read())
    shown = page.evaluate(
        "([id]) => { const lab = document.getElementById(id).abLab;"
        " return JSON.parse(JSON.stringify(lab.module.numbers(lab.state))); }", [lab_id])
    assert isinstance(data, dict) and {k: data[k] for k in shown} == shown
    assert set(data) - set(shown) == {"title", "settings", "figure"}
    return data


@pytest.fixture(scope="module")
def pages(tmp_path_factory, web_data):
    folder = tmp_path_factory.mktemp("labs")
    out = {}
    for name in BROWSER_LABS:
        path = folder / f"{name}.html"
        path.write_text(standalone_html(web_lab(name), title=name, data=web_data),
                        encoding="utf-8")
        out[name] = path
    return out


#: Draw the lab's figure as wide as a canvas ``width`` device pixels wide (the book's column).
SAME_WIDTH_JS = page_function("sameWidth")


def check_standalone(watch, path, name: str, over_http: dict) -> None:
    """The lab's page as ``controls.web.standalone_html`` writes it (its scripts and data
    inlined), opened as ``file://``: the drive's checks on three values a control (first,
    middle, last; a text box, the reader's texts), each drawn as the built book drew it over
    http (``over_http``: values -> what they drew, the same alt text and readout, the same
    pixels on a canvas of the same size); a label names every control; the numbers download
    as JSON; nothing typed ran (the title); only the page's own files are requested.
    Every value of every control is driven over http, and the labs' code reads nothing of
    where the page came from (test_lab_code_reads_nothing_of_where_the_page_came_from): a
    standalone page drove every value too before, another 40 s of chromium's CPU."""
    scene = SCENES[name]
    page = watch.open(path.as_uri())
    lab_id = page.locator(".ab-lab").get_attribute("id")
    page.wait_for_function(f"document.getElementById('{lab_id}').abLab")
    assert page.is_visible(f"#{lab_id}-controls")
    # as wide as the book's column drew it, so that the pixels can be compared
    widths = {picture[0][0] for _, _, picture in over_http.values()}
    assert len(widths) == 1, (name, widths)
    page.evaluate(SAME_WIDTH_JS, [lab_id, widths.pop()])
    checked, drawn = drawings(page, lab_id, scene, most=3)
    assert checked >= 2 * len(scene.controls), (name, checked)
    assert drawn.keys() <= over_http.keys(), (name, sorted(drawn.keys() - over_http.keys()))
    same_drawings(drawn, over_http, name)
    for control in scene.controls:  # labelled controls: a label names every input
        if control.kind != "multi":
            assert page.locator(f"#{lab_id} label", has_text=control.label).count() >= 1
    data = check_download(page, lab_id)
    assert data and ("tokens" in data or name in ("positional", "scaling")), sorted(data)
    assert page.title() == name  # nothing typed ran
    watch.settle()
    assert watch.console_errors == [] and watch.outside == [] and watch.failed == [], (
        name, watch.console_errors, watch.outside, watch.failed)
    assert all(u.startswith(("file:", "blob:", "data:")) for u in watch.requested), watch.requested
    page.goto("about:blank")
    for seen in (watch.console_errors, watch.outside, watch.failed, watch.requested):
        seen.clear()


def chapter_labs() -> dict:
    """Built page -> the browser labs it shows (read off the chapters' ``lab("...")`` calls)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "chapters"
    out = {}
    for nb in sorted(root.glob("*.ipynb")):
        names = re.findall(r'lab\(\\?"(\w+)\\?"', nb.read_text(encoding="utf-8"))
        names = [n for n in dict.fromkeys(names) if n in BROWSER_LABS]
        if names:
            out[f"chapters/{nb.stem}.html"] = names
    return out


def sources(page) -> list[str]:
    """The page's scripts from the site's ``ab-web/`` folder, as their ``src`` says."""
    return page.evaluate("[...document.scripts].map(s => s.getAttribute('src'))"
                         ".filter(s => s && s.includes('ab-web/'))")


def check_chapter_2(page, lab_id: str, how: str, count: int, scripts: list[str]) -> None:
    """Chapter 2's page (once over http, once as file://): one positional lab, its scripts
    lab.js and positional.js, held-out states computed in the page equal to Python's
    (test_web_lab.browser_parity), the base slider disabled with its hint at d = 2. Was
    test_web_lab's test_built_chapter_2_computes_in_the_browser, which opened the page
    twice more (14 s of chromium's CPU)."""
    from test_web_lab import browser_parity, check_disabled_base

    assert count == 1, count
    assert [s.split("?")[0].split("/")[-1] for s in scripts] == ["lab.js", "positional.js"]
    browser_parity(page, 12, seed=11 if how == "http" else 12)
    check_disabled_base(page, lab_id)


def test_built_book_computes_every_lab_in_the_browser(browser, site, built_book, pages):
    """In the built book, every lab whose scene has a state module computes in the page:
    every control is labelled (a disabled one with its hint), takes every value (long ranges
    sampled) and a novel sentence, each drawn as Python's state, and moving it changes the
    picture and the alt text; nothing is fetched from outside; the scripts come from the site.
    Every lab on a chapter page is such a lab (the first assertion).

    Over http every value; as ``file://`` the same checks on three values a control (its
    first, middle and last; a text box, the reader's texts), each drawn as over http: the
    same alt text and readout, and the same pixels on a canvas of the same size (a canvas
    keeps the tallest height it was given: chapter 8's generation lab). What differs between
    the two is how the page and its scripts load, which every page's load shows; the labs'
    code reads nothing of where the page came from (test_lab_code_reads_nothing_of_where_
    the_page_came_from), so the other values draw as over http. Chapter 2's page both ways
    also computes held-out states in the page (check_chapter_2). One tab for every page: a
    new context a page cost 0.2-0.7 s of chromium's CPU. (Chromium's CPU, at a load of 20:
    the whole drive both ways, a context a page, 67 s; this, 53 s.)"""
    from conftest import PageWatch

    found = chapter_labs()
    assert sorted({n for names in found.values() for n in names}) == BROWSER_LABS
    watch = PageWatch(browser)
    over_http = {}  # (page, lab) -> what each values drew over http
    for how in ("http", "file"):  # all of one, then the other: one renderer for each
        for rel, names in found.items():
            url = f"{site}/{rel}" if how == "http" else (built_book / rel).as_uri()
            page = watch.open(url, idle=False)  # watch.settle() below, before the requests
            shown = page.locator(".ab-lab").evaluate_all("els => els.map(e => e.dataset.abLab)")
            assert set(shown) == set(names), (rel, shown)
            for name in names:
                scene = SCENES[name]
                labs = page.locator(f".ab-lab[data-ab-lab={name}]")
                assert labs.count() >= 1, (rel, name)
                lab_id = labs.first.get_attribute("id")
                page.wait_for_function(f"document.getElementById('{lab_id}').abLab")
                if name == "positional":  # what test_web_lab checks of chapter 2's lab
                    check_chapter_2(page, lab_id, how, labs.count(), sources(page))
                if how == "http":  # the page's markup, the same over file://
                    for lab in labs.all():
                        check_labels(page, lab.get_attribute("id"))
                    checked, over_http[rel, name] = drawings(page, lab_id, scene)
                else:
                    checked, drawn = drawings(page, lab_id, scene, most=3)
                    assert drawn.keys() <= over_http[rel, name].keys(), (rel, name)
                    same_drawings(drawn, over_http[rel, name], (rel, name))
                assert checked >= 2 * len(scene.controls), (rel, name, how)
            scripts = sources(page)
            assert scripts and all(s.split("?")[0].endswith(".js") for s in scripts), scripts
            watch.settle()
            assert watch.console_errors == [] and watch.outside == [] and watch.failed == [], (
                rel, how, watch.console_errors, watch.outside, watch.failed)
            page.goto("about:blank")  # this page's late requests (a font) end here, unrecorded
            for seen in (watch.console_errors, watch.outside, watch.failed, watch.requested):
                seen.clear()
    watch.close()
    watch = PageWatch(browser, width=1100)  # each lab's standalone page, in one tab
    for name in BROWSER_LABS:
        drawn = {}  # what each values drew over http, on any page with the lab
        for (_, lab), seen in over_http.items():
            drawn.update(seen if lab == name else {})
        check_standalone(watch, pages[name], name, drawn)
    watch.close()


def test_lab_code_reads_nothing_of_where_the_page_came_from(built_book):
    """The built book's lab scripts (not their data files) read nothing that differs between
    a page over http and one opened as ``file://`` (its URL, storage, requests of their own),
    except the models' loading: chapter 9's, which test_built_chapter_9_runs_the_model_on_a_
    sentence_of_the_readers drives both ways, and chapter 10's (its Worker fetches the GGUF
    over http; a page on disk offers the file picker instead: test_web_decoder_browser.py):
    what a lab draws for given values is the same either way. It can fail: it finds them."""
    from attention_book.web_export import DATA

    data = {n for names, _ in DATA.values() for n in names}
    where = re.compile(r"\b(location|fetch|XMLHttpRequest|baseURI|documentURI|document\.URL|"
                       r"document\.domain|origin|localStorage|sessionStorage|indexedDB|cookie|"
                       r"currentScript|Worker)\b|\bimport\s*\(|createElement\(\W?script")
    scripts = sorted((built_book / "_static" / "ab-web").glob("*.js"))
    found = {p.name: sorted({m.group() for m in where.finditer(p.read_text(encoding="utf-8"))})
             for p in scripts if p.name not in data}
    assert set(found) >= {"lab.js", *(f"{SCENES[n].web}.js" for n in BROWSER_LABS)}, sorted(found)
    assert {name: hits for name, hits in found.items() if hits} == {
        "pretrained.js": ["Worker", 'createElement("script', "currentScript"],
        "decoder.js": ["Worker", "currentScript", "fetch", "location"]}, found


#: typed into chapter 9 key by key (60 ms a key, as the QA did)
KEY_BY_KEY = "a small sparrow sang on the old fence at dawn"


@pytest.mark.parametrize("how", ["http", "file"])
def test_built_chapter_9_runs_the_model_on_a_sentence_of_the_readers(browser, site, built_book,
                                                                      how):
    """In the built book, chapter 9's button loads the model file that lies beside the site,
    and the lab then runs all-MiniLM-L6-v2 on a sentence that appears nowhere in the book:
    the tokens are Python's, the maps come from the browser, and a layer change is drawn.
    A sentence typed key by key runs the model once the reader pauses (every key ran it)."""
    from attention_book.scenes.pretrained import pretrained_state

    from conftest import PageWatch

    rel = "chapters/09_pretrained.html"
    watch = PageWatch(browser)
    page = watch.open(f"{site}/{rel}" if how == "http" else (built_book / rel).as_uri())
    lab_id = page.locator(".ab-lab[data-ab-lab=pretrained]").first.get_attribute("id")
    page.wait_for_function(f"document.getElementById('{lab_id}').abLab")
    button = page.locator(f"#{lab_id} button.ab-load-model")
    assert button.text_content() == "Load the model (32.5 MB)"
    button.click()
    page.wait_for_function("AttentionBook.pretrained.modelStatus().status === 'ready'",
                           timeout=120_000)
    if how == "http":  # QA Q20: typed key by key, the model runs once the reader pauses
        cached = "AttentionBook.pretrained.modelStatus().cached"
        before = page.evaluate(cached)
        page.locator(f"#{lab_id} [name=text]").fill("")
        page.locator(f"#{lab_id} [name=text]").press_sequentially(KEY_BY_KEY, delay=60)
        page.wait_for_function(f"(document.getElementById('{lab_id}').abLab.state.tokens || [])"
                               f".includes('sparrow') && {cached} > {before}", timeout=60_000)
        page.wait_for_timeout(600)  # a later run would have started by now
        # every key ran it before: 41-66 runs for 70 characters; a stall of the machine over
        # the 300 ms pause between two keys may add one
        assert page.evaluate(cached) - before <= 3, page.evaluate(cached) - before
    typed, layer = page.evaluate(MOVES_JS, [lab_id, [["text", [NOVEL]], ["layer", [3]]]])
    rows = typed + layer
    shown = page.evaluate(f"document.getElementById('{lab_id}').abLab.state")
    st = pretrained_state(NOVEL, 3, rows[-1]["values"]["head"], rows[-1]["values"]["query"])
    assert shown["tokens"] == list(st.tokens) and shown["source"] == "browser", shown["source"]
    assert rows[0]["pixels"] != rows[1]["pixels"] and "##kka" in rows[0]["alt"]  # WordPiece
    assert "int8 weights" in rows[1]["caption"]
    assert watch.console_errors == [] and watch.outside == [] and watch.failed == [], (
        watch.console_errors, watch.outside, watch.failed)
    watch.close()
