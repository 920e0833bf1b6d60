"""axe-core on every built page: no WCAG 2 A/AA violation, on a phone and a desktop, in the
theme's light and dark modes.

axe-core comes from npm (``package-lock.json``, a dev dependency installed by ``npm ci``) and
is injected into each page from ``node_modules``: nothing is fetched from outside, and the
site does not serve it to readers. The rules are those axe tags ``wcag2a``, ``wcag2aa``,
``wcag21a``, ``wcag21aa`` and ``wcag22aa``. Among them ``scrollable-region-focusable``: a
region that scrolls (a wide table, a long output) must be reachable and scrollable with
the keyboard.
"""

from __future__ import annotations

import pytest

from conftest import ROOT, PageWatch, built_pages

pytestmark = [pytest.mark.slow, pytest.mark.browser]

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
SETTINGS = [(390, "light"), (390, "dark"), (1280, "light"), (1280, "dark")]

RUN_AXE = """async (tags) => {
  const result = await axe.run(document, {runOnly: {type: "tag", values: tags},
                                          resultTypes: ["violations"]});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ") + ": " +
                                        n.failureSummary.split("\\n").slice(1, 2).join(""))}));
}"""


# The page as a reader meets it: MathJax has typeset, and the book's script has run its fixes
# (attention-book.js: tab stops on wide maths, names of the theme's buttons) after that,
# which it does 100 ms after the last change to the page.
SETTLE = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  await new Promise(r => setTimeout(r, 300));
  return document.documentElement.dataset.abAccessible;
}"""


def axe_violations(tab) -> list[dict]:
    """The violations axe finds on the page once it has settled."""
    assert tab.evaluate(SETTLE) == "done", "the book's script did not run"
    tab.add_script_tag(path=str(AXE))
    return tab.evaluate(RUN_AXE, TAGS)


def test_axe_core_is_installed_from_the_lock_file():
    assert AXE.exists(), "no axe-core in node_modules: run `make test` (it runs npm ci)"


@pytest.mark.parametrize("width,mode", SETTINGS, ids=[f"{w}px-{m}" for w, m in SETTINGS])
def test_no_wcag_violation_on_any_page(browser, site, built_book, width, mode):
    found = []
    for page in built_pages(built_book):
        watch = PageWatch(browser, width=width, scale=2 if width < 600 else 1,
                          init_script=f'localStorage.setItem("mode", "{mode}");')
        try:
            tab = watch.open(f"{site}/{page}")
            assert tab.evaluate("document.documentElement.dataset.theme") == mode
            found += [f"{page}: {v['id']} ({v['impact']}): {v['help']}; {v['nodes']}"
                      for v in axe_violations(tab)]
            assert watch.outside == [], f"{page} asked for {watch.outside}"
        finally:
            watch.close()
    assert not found, "\n".join(found)


def test_the_check_finds_a_violation(browser, site):
    """A page made to break the scrolling rule is caught: the test can fail."""
    watch = PageWatch(browser)
    try:
        tab = watch.open(f"{site}/intro.html")
        tab.evaluate("""() => {
          const box = document.createElement("div");
          box.style.cssText = "overflow-x: auto; width: 100px";
          box.innerHTML = "<p style='width: 900px'>" + "wide text ".repeat(90) + "</p>";
          document.querySelector("main").append(box);
        }""")
        ids = {v["id"] for v in axe_violations(tab)}
    finally:
        watch.close()
    assert "scrollable-region-focusable" in ids
