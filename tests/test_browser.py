"""The built book as a reader sees it, in a real browser (Debian chromium via playwright).

Every page is served on 127.0.0.1 and opened: it loads, logs no console error, makes no
request that leaves 127.0.0.1, renders its math with MathJax and loads every image; and
each chapter's lab answers its controls. These tests fail (they never skip) when the
browser is missing: `make test` installs it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import PageWatch, built_pages

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def test_every_page_loads_cleanly_and_offline(built_book, site, browser):
    problems = {}
    for rel in built_pages(built_book):
        watch = PageWatch(browser)
        page = watch.open(f"{site}/{rel}")
        if page.locator(".math").count():
            page.wait_for_selector("mjx-container", state="attached", timeout=15_000)
            unrendered = page.locator(".math:not(:has(mjx-container))").count()
            if unrendered:
                watch.console_errors.append(f"{unrendered} math elements not typeset")
        raw = page.evaluate(r"() => /\\\(|\\\[|\$\$/.test(document.body.innerText)")
        if raw:
            watch.console_errors.append("raw LaTeX delimiters visible: math left untypeset")
        broken = page.evaluate(
            "() => [...document.images].filter(i => i.getAttribute('src') !== null"
            " && !(i.complete && i.naturalWidth > 0))"
            ".map(i => i.src.slice(0, 80))"
        )
        found = {
            "console errors": watch.console_errors,
            "requests outside 127.0.0.1": watch.outside,
            "failed requests": watch.failed,
            "broken images": broken,
        }
        found = {k: v for k, v in found.items() if v}
        if found:
            problems[rel] = found
        watch.close()
    assert not problems, problems


def test_math_is_typeset_by_the_local_mathjax(built_book, site, browser):
    watch = PageWatch(browser)
    page = watch.open(f"{site}/intro.html")
    page.wait_for_selector("mjx-container")
    assert page.evaluate("() => window.MathJax && window.MathJax.version").startswith("3.")
    assert page.locator("mjx-container").count() >= 3
    watch.close()


def _lab_state(page, lab):
    """What the lab shows once the frame after a change is drawn: its canvas's pixels, its
    alt text and its readout."""
    return lab.evaluate(
        "async el => { const canvas = el.querySelector('canvas.ab-lab-canvas');"
        " await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));"
        " return {src: canvas.toDataURL(), alt: canvas.getAttribute('aria-label'),"
        " caption: el.querySelector('.ab-lab-readout').innerHTML}; }"
    )


def _chapterbuilt_pages(built_book):
    return sorted(str(p.relative_to(built_book)) for p in (built_book / "chapters").glob("*.html"))


def test_every_lab_answers_every_control(built_book, site, browser):
    """On every chapter page, moving any control of any lab changes its picture."""
    seen = disabled = 0
    for rel in _chapterbuilt_pages(built_book):
        watch = PageWatch(browser)
        page = watch.open(f"{site}/{rel}")
        for lab in page.locator(".ab-lab").all():
            lab.scroll_into_view_if_needed()
            assert _lab_state(page, lab)["alt"], f"{rel}: a lab lacks alt text"
            for control in lab.locator("select, input[type=range]").all():
                cid = control.get_attribute("id")
                assert lab.locator(f"label[for='{cid}']").count() == 1, f"{rel}: {cid} unlabelled"
                if control.is_disabled():
                    # no effect in this state: it must say why, next to it
                    hint = lab.locator(f"#{cid}-hint")
                    assert hint.count() == 1 and hint.is_visible(), f"{rel}: {cid} disabled, no hint"
                    disabled += 1
                    continue
                before = _lab_state(page, lab)
                if control.evaluate("el => el.tagName") == "SELECT":
                    n = control.locator("option").count()
                    current = int(control.evaluate("el => el.selectedIndex"))
                    control.select_option(index=(current + 1) % n)
                else:
                    low, high = int(control.get_attribute("min")), int(control.get_attribute("max"))
                    current = int(control.input_value())
                    control.fill(str(low if current != low else high))
                after = _lab_state(page, lab)
                assert after["src"] != before["src"], f"{rel}: {cid} did not change the picture"
                assert after["alt"] != before["alt"], f"{rel}: {cid} did not change the alt text"
                seen += 1
        # every picture a control asked for was served
        assert watch.console_errors == [] and watch.outside == [] and watch.failed == [], rel
        watch.close()
    assert seen >= 2


def test_chapter1_lab_answers_its_controls(site, browser):
    """Chapter 1's lab, as a reader uses it: the book's sentences are suggested, a sentence
    of the reader's own is typed, and the d slider redraws."""
    watch = PageWatch(browser)
    page = watch.open(f"{site}/chapters/01_embeddings.html")
    lab = page.locator(".ab-lab").first
    lab.scroll_into_view_if_needed()
    before = _lab_state(page, lab)
    assert before["alt"], "the lab.s picture has alt text"

    box = lab.locator("input[type=text]").first
    suggested = lab.locator("datalist option").evaluate_all("os => os.map(o => o.value)")
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
