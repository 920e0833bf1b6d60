"""Chapter 1's lab in the built book as a reader uses it, in a real browser (Debian chromium
via playwright). That every control of every lab is labelled, a disabled one says why, and
moving one changes the picture and the alt text is tests/test_web_labs.py's drive of the
built book; every page's load, maths, reading and axe checks are tests/test_pages.py. These
tests fail (they never skip) when the browser is missing: `make test` installs it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from conftest import PageWatch
from node_driver import page_function

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def _lab_state(page, lab):
    """What the lab shows once the frame after a change is drawn: its canvas's pixels, its
    alt text and its readout."""
    return lab.evaluate(
        "async el => { const canvas = el.querySelector('canvas.ab-lab-canvas');"
        " await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));"
        " return {src: canvas.toDataURL(), alt: canvas.getAttribute('aria-label'),"
        " caption: el.querySelector('.ab-lab-readout').innerHTML}; }"
    )


def test_chapter1_lab_answers_its_controls(site, browser):
    """Chapter 1's lab, as a reader uses it: the book's sentences are suggested, a sentence
    of the reader's own is typed, and the d slider redraws."""
    watch = PageWatch(browser)
    page = watch.open(f"{site}/chapters/01_embeddings.html")
    lab = page.locator(".ab-lab").first
    lab.scroll_into_view_if_needed()
    before = _lab_state(page, lab)
    assert before["alt"], "the lab.s picture has alt text"

    box = lab.locator(".ab-lab-control-text textarea").first
    suggested = lab.locator("select.ab-suggest option").evaluate_all("os => os.map(o => o.value)")
    assert len(suggested) >= 3 and any("WEATHER" in o.upper() for o in suggested)
    box.fill("my own sentence about a marmot")
    after_text = _lab_state(page, lab)
    assert after_text["src"] != before["src"] and after_text["caption"] != before["caption"]
    assert "marmot" in after_text["alt"] and "marmot" in after_text["caption"]

    slider = lab.locator("input[type=range]").first
    assert lab.locator(f"label[for='{slider.get_attribute('id')}']").count() == 1
    new_value = str(int(slider.get_attribute("min") or 0) + 1)
    slider.fill(new_value)
    after_slider = _lab_state(page, lab)
    assert after_slider["src"] != after_text["src"]
    assert watch.console_errors == [] and watch.outside == []
    if os.environ.get("SCREENSHOT_DIR"):  # to look at the page as a reader does
        page.screenshot(path=str(Path(os.environ["SCREENSHOT_DIR"]) / "chapter1.png"))
    watch.close()


def test_a_request_off_the_machine_is_recorded_and_never_answered(site, browser):
    """PageWatch keeps a page offline: a fetch, an <img> and a <script> to a host off the
    machine, and a fetch of the site itself by the name localhost (not 127.0.0.1, which
    chromium would let past a proxy on its own), are each recorded in ``outside`` and fail,
    unanswered; the site on 127.0.0.1, a data: and a blob: URL load and are not recorded
    (file: pages: tests/test_web_labs.py and tests/test_web_lab.py)."""
    watch = PageWatch(browser)
    try:
        page = watch.open(f"{site}/search.html")
        port = site.rsplit(":", 1)[1]
        shown = page.evaluate(page_function("offTheMachine"), port)
        watch.settle()
    finally:
        watch.close()
    assert shown == {"fetch": "failed", "img": "failed", "script": "failed", "localhost": "failed",
                     "site": 200, "data": 200, "blob": 200}, shown
    outside = ["https://example.com/data.json", "http://example.org/picture.png",
               "https://cdn.example.net/library.js", f"http://localhost:{port}/search.html"]
    assert sorted(watch.outside) == sorted(outside), watch.outside
    # never answered: each failed at the proxy, with no response
    failed = {f.split(" ", 1)[0]: f for f in watch.failed}
    assert sorted(failed) == sorted(outside), watch.failed
    assert all("ERR_PROXY_CONNECTION_FAILED" in f or "ERR_TUNNEL_CONNECTION_FAILED" in f
               for f in failed.values()), watch.failed




def test_a_removed_notebook_lab_stops_watching_the_theme(browser):
    """anywidget calls render's cleanup when a view goes (its cell run again): the lab's
    element goes and so do its observers of the theme and its width, which kept a removed
    lab redrawing its detached picture at each change of theme. The view still shown
    notices the change (its theme read again), so the check can fail."""
    from attention_book.controls.web import WEB_DIR, declaration
    from attention_book.scenes import SCENES

    bundle = (WEB_DIR / "widget.mjs").read_text(encoding="utf-8")
    exports = bundle.rindex("export{")  # minified: export{x as default, ...}
    default = re.search(r"(\w+) as default\b", bundle[exports:]).group(1)
    bundle = bundle[:exports] + f"window.__widget = {default};"
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.set_content("<!doctype html><html><body></body></html>")
    page.add_script_tag(content=bundle, type="module")
    page.wait_for_function("!!window.__widget")
    removed, shown = page.evaluate(page_function("removedView"), declaration(SCENES["embedding"]))
    page.close()
    assert errors == []
    assert removed == [0, "before"], "a removed lab still follows the theme"
    assert shown[0] == 1 and shown[1] != "before", "the lab shown missed the change"
