"""The chapters in JupyterLab (what `make lab` opens) render their MyST as the book does.

jupyterlab-myst (a prebuilt labextension installed from requirements.txt) replaces
JupyterLab's markdown renderer. Without it a chapter's admonitions, dropdown solutions and
citations show as raw ```{admonition} fences. This test starts JupyterLab from the venv on a
free port of 127.0.0.1, on a temporary copy of chapters/ (so nothing is written back) and with
no kernel (it renders markdown only; no cell runs), opens chapter 1 in Debian chromium and
checks what a reader sees. It fails (never skips) when JupyterLab, jupyterlab-myst or the
browser is missing.

The last test runs every chapter in JupyterLab with a kernel and moves the first control of
each kind of every lab forward and back with the key a reader presses on it (the harness of
benchmarks/lab_latency.py, untimed: a slider's arrows, typing and Backspace in a text box,
Space on a check box, a drop-down's arrows; a key that leaves the value unchanged fails),
failing on any cell error or unrun cell, a chapter without a live lab, an uncaught page
error or a console error: the one run of the chapters as live notebooks. Then it drives
every lab as tests/test_web_labs.py drives the book's (its driver, through the lab's handle
``element.abLab``): 3 values of every control and the reader's texts (the book's page takes
every value; the kernel computes with the same Python), each drawing's alt text and readout
those Python gives for the values shown, the picture changing, typed markup staying text,
and the download equal to the numbers shown. The live lab is the book's front end drawing
what the kernel computes (controls/widget.py).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import CHAPTERS, ROOT, offline_context

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHAPTER = "01_embeddings.ipynb"
TOKEN = "attention-book-test"
#: A markdown cell rendered by jupyterlab-myst.
MYST_CELLS = ".jp-Notebook .jp-MarkdownCell .myst"
# Text that only shows when MyST is left unrendered.
RAW_MYST = ["{admonition}", "```{", ":::", "{math}", "{cite:p}", "{ref}", "{numref}",
            ":class:", "$$"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 5) -> int:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on a temporary copy of chapters/; yields its base URL; shut down after."""
    home = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "chapters", home / "chapters",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    config = home / "config"
    # Render every cell, not only those scrolled into view (JupyterLab 4's windowing).
    _lab_latency().write_windowing(config / "lab" / "user-settings", "none")

    port = _free_port()
    jupyter = Path(sys.executable).with_name("jupyter")
    assert jupyter.exists(), f"no {jupyter}: run `make env`"
    cmd = [
        str(jupyter), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        "--ServerApp.port_retries=0", f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={home}",
        # No kernel: JupyterLab finds no kernelspec and opens the notebook with "No Kernel".
        "--KernelSpecManager.allowed_kernelspecs=no-kernel",
        # Nothing fetched from the internet by the server either.
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime")}
    log = (home / "lab.log").open("w")
    server = subprocess.Popen(cmd, cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if server.poll() is not None:
                pytest.fail(f"JupyterLab exited ({server.returncode}):\n"
                            f"{(home / 'lab.log').read_text()[-4000:]}")
            try:
                if _get(f"{base}/api/status?token={TOKEN}") == 200:
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"JupyterLab did not answer in 60 s:\n"
                            f"{(home / 'lab.log').read_text()[-4000:]}")
            time.sleep(0.5)
        yield base
    finally:
        try:
            request = urllib.request.Request(f"{base}/api/shutdown", method="POST",
                                             headers={"Authorization": f"token {TOKEN}"})
            urllib.request.urlopen(request, timeout=5).close()
            server.wait(timeout=20)
        except Exception:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        log.close()


@pytest.fixture(scope="module")
def chapter(lab, browser):
    """Chapter 1 open in JupyterLab, with every request that left 127.0.0.1 recorded, once
    its markdown cells are rendered by jupyterlab-myst (or 30 s passed)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    outside: list[str] = []
    context = offline_context(browser, outside, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(f"{lab}/lab/tree/chapters/{CHAPTER}?token={TOKEN}", wait_until="load")
    # With no kernelspec JupyterLab asks which kernel to use; "No Kernel" is the only choice.
    page.locator(".jp-Dialog").get_by_role("button", name="Select").click(timeout=60_000)
    page.wait_for_selector(".jp-Notebook .jp-MarkdownCell", timeout=60_000)
    expected = sum(c["cell_type"] == "markdown"
                   for c in json.loads((ROOT / "chapters" / CHAPTER).read_text())["cells"])
    page.wait_for_function(
        "n => document.querySelectorAll('.jp-Notebook .jp-MarkdownCell').length >= n",
        arg=expected, timeout=30_000,
    )
    try:  # cells render one after another: whichever test runs first sees them all rendered
        page.wait_for_function(
            "([s, n]) => document.querySelectorAll(s).length >= n",
            arg=[MYST_CELLS, expected], timeout=30_000)
    except PlaywrightTimeoutError:
        pass  # test_every_markdown_cell_is_rendered_by_jupyterlab_myst says how many rendered
    yield SimpleNamespace(page=page, outside=outside, markdown_cells=expected, base=lab)
    context.close()


def _rendered_markdown(page) -> list[str]:
    """The text a reader sees in each markdown cell (rendered, not its source)."""
    return page.evaluate(
        "() => [...document.querySelectorAll('.jp-Notebook .jp-MarkdownCell')]"
        ".map(c => (c.querySelector('.myst') || c.querySelector('.jp-RenderedMarkdown')"
        " || c).innerText)"
    )


def test_every_markdown_cell_is_rendered_by_jupyterlab_myst(chapter):
    rendered = chapter.page.locator(MYST_CELLS).count()
    assert rendered == chapter.markdown_cells, (
        f"{rendered} of {chapter.markdown_cells} markdown cells rendered by jupyterlab-myst: "
        "is it installed and enabled (`jupyter labextension list`)?"
    )


def test_admonitions_render_as_admonitions(chapter):
    pitfalls = chapter.page.locator("aside.myst-admonition").filter(has_text="Common pitfall")
    assert pitfalls.count() >= 1, "the chapter's warning admonition is not rendered as one"
    pitfall = pitfalls.first
    pitfall.scroll_into_view_if_needed()
    assert pitfall.is_visible()
    assert "warning" in pitfall.get_attribute("class")
    header = pitfall.locator(".myst-admonition-header").inner_text()
    assert "Common pitfall" in header and "{admonition}" not in header
    assert pitfall.locator(".myst-admonition-body").inner_text().strip()
    assert pitfall.locator(".katex").count() > 0, "the math in the admonition is not typeset"


def test_dropdown_solutions_are_hidden_until_clicked(chapter):
    # the exercises' solutions (chapter 1 also folds the study notes' notations into one)
    solutions = chapter.page.locator("details.myst-admonition.dropdown").filter(
        has=chapter.page.locator("summary", has_text="Solution"))
    assert solutions.count() >= 4, "the exercises' dropdown solutions are not rendered"
    solution = solutions.first
    solution.scroll_into_view_if_needed()
    summary, body = solution.locator("summary"), solution.locator(".details-body")
    assert summary.inner_text().strip() == "Solution"
    assert solution.get_attribute("open") is None and not body.is_visible(), \
        "a solution is shown before it is asked for"
    summary.click()
    body.wait_for(state="visible", timeout=5_000)
    assert "shared by every sentence" in body.inner_text()


def test_no_raw_myst_or_latex_is_visible(chapter):
    leftovers = {}
    for i, text in enumerate(_rendered_markdown(chapter.page)):
        found = [raw for raw in RAW_MYST if raw in text]
        if found:
            leftovers[i] = found
    assert not leftovers, f"raw MyST in rendered markdown cells: {leftovers}"
    assert chapter.page.locator(".jp-MarkdownCell .katex").count() > 20, "math is not typeset"
    assert chapter.page.locator(".jp-MarkdownCell .katex-error").count() == 0


def test_no_kernel_ran_and_nothing_was_requested_outside_127_0_0_1(chapter):
    with urllib.request.urlopen(f"{chapter.base}/api/kernels?token={TOKEN}", timeout=5) as r:
        assert json.load(r) == [], "a kernel was started"
    assert chapter.outside == []


def _lab_latency():
    """benchmarks/lab_latency.py as a module: its harness opens a chapter in JupyterLab,
    runs every cell and moves every control of every lab, as a reader would."""
    import importlib.util

    path = ROOT / "benchmarks" / "lab_latency.py"
    spec = importlib.util.spec_from_file_location("lab_latency", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("lab_latency", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_timed_changes_start_when_jupyterlab_rendered_every_cell(monkeypatch):
    """JupyterLab renders the cells out of view in idle time after a notebook opens (its
    default windowing), a whole cell at a time; a change made meanwhile waits behind it.
    That was chapter 3's self/cross change of 1.2-2.7 s: the kernel answered in 2-30 ms,
    and the answer sat in the page's socket behind JupyterLab's long tasks. The benchmark
    times the changes once every cell is rendered; an untimed run (this module's) does not
    wait for it."""
    bench = _lab_latency()
    calls = []

    class Page:
        def wait_for_function(self, js, **_):
            calls.append(js)

        def close(self):
            pass

    monkeypatch.setattr(bench, "open_and_run", lambda *_, **__: (Page(), []))
    monkeypatch.setattr(bench, "measure_labs", lambda *_: calls.append("measure"))
    for repeats, expected in ((8, [bench.RENDERED, "measure"]), (0, ["measure"])):
        calls.clear()
        bench.measure_notebook(None, None, Path("03_attention.ipynb"), 0,
                               bench.Options(repeats=repeats, timeout_ms=3_000), [])
        assert calls == expected
    assert "isPlaceholder()" in bench.RENDERED


def test_one_page_opens_the_notebooks_in_turn_and_a_failure_boots_a_new_one():
    """With ``Options.one_page`` JupyterLab boots once and opens the notebooks in turn in
    its page (a notebook closed before the next opens); the page's errors go to the list of
    the notebook open then; a notebook that fails closes the page, it is reported, and the
    next one boots JupyterLab in a new page (as every notebook does without it)."""
    bench = _lab_latency()
    failing = "b.ipynb"

    class Page:
        def __init__(self):
            self.handlers, self.calls, self.closed = {}, [], False

        def on(self, event, handler):
            self.handlers[event] = handler

        def goto(self, url, **_):
            self.calls.append(("goto", url.split("?")[0].rsplit("/", 1)[-1]))

        def wait_for_function(self, *_, **__):
            pass

        def evaluate(self, js, arg=None):
            name = {bench.OPEN: "open", bench.READY: "ready", bench.RUN_ALL: "run",
                    bench.CLOSE: "close"}.get(js)
            if name:
                self.calls.append((name, arg if name in ("open", "ready") else None))
            if name == "run":  # an error while the notebook runs: the current one's
                self.handlers["pageerror"](f"thrown by {self.calls[-2][1]}")
                return {"errors": ["cell 3: ValueError"]} if self.calls[-2][1] == failing \
                    else {"errors": []}
            return True if name == "close" else [] if "discover()" in js else None

        def close(self):
            self.closed = True

    class Context:
        def __init__(self):
            self.pages = []

        def new_page(self):
            self.pages.append(Page())
            return self.pages[-1]

    context, errors, outcome = Context(), {}, {}
    tab = bench.Tab(context)
    server = SimpleNamespace(url="http://127.0.0.1:1", token="t")
    for index, name in enumerate(["a.ipynb", failing, "c.ipynb", "d.ipynb"]):
        try:
            outcome[name] = bench.measure_notebook(
                context, server, Path(name), index, bench.Options(0, 5_000, one_page=True),
                errors.setdefault(name, []), tab=tab)[0]["status"]
        except RuntimeError as err:
            outcome[name] = str(err)
    assert outcome == {"a.ipynb": "no labs found", failing: "b.ipynb: ['cell 3: ValueError']",
                       "c.ipynb": "no labs found", "d.ipynb": "no labs found"}
    assert errors == {name: [f"page error: thrown by {name}"] for name in errors}
    first, second = context.pages
    assert first.calls == [
        ("goto", "a.ipynb"), ("ready", "a.ipynb"), ("run", None), ("close", None),
        ("open", failing), ("ready", failing), ("run", None)] and first.closed
    assert second.calls == [
        ("goto", "c.ipynb"), ("ready", "c.ipynb"), ("run", None), ("close", None),
        ("open", "d.ipynb"), ("ready", "d.ipynb"), ("run", None), ("close", None)]
    assert not second.closed and tab.page is second
    tab.discard()
    assert second.closed and tab.page is None


#: The numbered chapters, each with a lab (an appendix, such as appendix_cost, has none: the
#: static build runs it).
NUMBERED = [c for c in CHAPTERS if c.stem[:2].isdigit()]

#: The chapters in two runs of about equal length, a JupyterLab server each, so that
#: pytest-xdist's two workers run them side by side. Measured on a quiet machine (Run All
#: and the drive, s): 01 10, 02 17, 03 20, 04 15, 05 11, 06 15, 07 15, 08 41, 09 60-75
#: (its head ablations); 1-3-5-8 against 2-4-6-7-9 was 90 s against 168 s. With chapter
#: 9's removals cached, on a fresh clone in CI (load 2-4): 2-4-6-7-8 160 s, 1-3-5-9 121 s,
#: and Notebook 7's chapters 1 and 3 34 s on a server of their own, now run first by 1-3-5-9.
#: Then per notebook, from opening it to the next (the two runs side by side; s at load
#: 8-15 twice, then 1-5): 01 28 29 18, 02 49 52 24, 03 52 54 29, 04 43 43 43, 05 27 23 21,
#: 06 51 50 31, 07 51 54 29, 08 141 135 100, 09 96 108 47, and in Notebook 7 01 28 28 24,
#: 03 53 44 30. The loaded machine slows chapter 9 most, so the split that holds at
#: both loads: 1-3-4-9 300 306 191 s against 2-5-6-7-8 319 314 206 s; run so at load 2-6,
#: 153 s against 158 s. Notebook 7's chapters then became 4 and 5 (in the run of both),
#: and JupyterLab's key pass one control of each kind: 1-3-4-5-9 511 693 409 s against
#: 2-6-7-8 517 762 408 s (side by side, load 13-19, 12-32, 9-32; beside the first two,
#: started with them, 1-3-4-9 496 673 s against 2-5-6-7-8 543 811 s).
#: Chapter 10 (SmolLM2 in the kernel: Run All, then every control of its lab, each new
#: generation about a second) joined the second run.
RUNS = {"1-3-4-5-9": [c for c in NUMBERED if c.stem[:2] in ("01", "03", "04", "05", "09")],
        "2-6-7-8-10": [c for c in NUMBERED if c.stem[:2] not in ("01", "03", "04", "05", "09")]}

#: The chapters also run in Jupyter Notebook 7 (what `make notebook` opens), on the server
#: of the run that has them: chapters 4 and 5, the cheapest pair whose labs have every kind
#: of control a lab of the book has (no one chapter has them all: only chapter 4's has check
#: boxes, a toggle only chapters 5 and 7; test_notebook7_moves_every_kind_of_control). Every
#: chapter's live lab is the one widget module (test_every_live_lab_is_the_one_widget_module)
#: with the same handlers for every control, so what Notebook 7 can break is its page
#: loading the widget, its Run menu running a chapter and its shortcuts taking a kind's key.
#: Every lab of every chapter ran there by hand (benchmarks/lab_latency.py --app notebook
#: --repeats 0).
NOTEBOOK7 = [c for c in NUMBERED if c.stem[:2] in ("04", "05")]


def chapter_labs() -> dict[str, list[str]]:
    """Each numbered chapter's stem -> the labs it shows (its code cells' ``lab("...")``)."""
    import re

    out = {}
    for chapter in NUMBERED:
        cells = json.loads(chapter.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        out[chapter.stem] = list(dict.fromkeys(re.findall(r"\blab\(\s*\"(\w+)\"", code)))
    return out


def harness_kinds() -> set[str]:
    """The kinds of control the harness presses a key on: its ``prepare``'s branches
    (``kind === '...'``) and the last one, a drop-down ("choice")."""
    import re

    return set(re.findall(r"kind === '(\w+)'", _lab_latency().HARNESS)) | {"choice"}


def lab_kinds(name: str) -> set[str]:
    """The kinds of control of lab ``name`` as the harness's discover() reports them (the
    page's declaration, controls.web.declaration)."""
    from attention_book.controls.web import declaration
    from attention_book.scenes import SCENES

    return {c["kind"] for c in declaration(SCENES[name])["controls"]}


def test_notebook7_moves_every_kind_of_control():
    """Notebook 7's chapters have, between their labs, every kind of control of every lab of
    every chapter, and each kind is one the harness presses a key on."""
    from attention_book.scenes import SCENES

    shown = chapter_labs()
    assert sorted(n for names in shown.values() for n in names) == sorted(SCENES), shown
    every = {kind for names in shown.values() for name in names for kind in lab_kinds(name)}
    assert every == harness_kinds() == {"text", "slider", "choice", "toggle", "multi"}
    assert {kind for c in NOTEBOOK7 for name in shown[c.stem] for kind in lab_kinds(name)} \
        == every
    # and none of the chapters alone has them all: a pair is the least
    assert all(set().union(*map(lab_kinds, names)) < every for names in shown.values())


def test_every_live_lab_is_the_one_widget_module(monkeypatch):
    """Every chapter's ``lab(...)`` is, in a notebook, a LabWidget whose page is the one
    self-contained ES module web/widget.mjs (no import of its own: nothing a lab loads
    differs), which draws each lab with its state module bundled in it."""
    import re

    from attention_book import controls
    from attention_book.controls.web import WEB_DIR, declaration
    from attention_book.controls.widget import LabWidget
    from attention_book.scenes import SCENES

    monkeypatch.delenv(controls.STATIC_ENV_VAR, raising=False)
    made = []  # the widgets, not computed (chapter 8's would train)
    monkeypatch.setattr(LabWidget, "__init__", lambda self, scene, **_: made.append(scene.name))
    shown = sorted(n for names in chapter_labs().values() for n in names)
    widgets = [controls.lab(name) for name in shown]
    assert made == shown and all(type(w) is LabWidget for w in widgets)
    bundle = (WEB_DIR / "widget.mjs").read_text(encoding="utf-8")
    assert {str(w._esm) for w in widgets} == {bundle}  # what anywidget sends each page
    assert not re.search(r"\bimport\s*\(|^\s*import\s|\bfrom\s*[\"']\S+[\"'];", bundle, re.M)
    from attention_book.bundles import registry

    for name in shown:  # the page takes modules[declaration.module]: each is bundled
        assert declaration(SCENES[name])["module"] in registry(), name  # build.mjs's LABS


def test_a_key_reaches_every_control_of_a_kind_alike():
    """Why one control of each kind takes its key in the runs: a control is the front end's
    class of its kind (controls.js's KINDS), the widget keeps the keys and the focus on the
    lab's element for all of its controls alike (entries/widget.js), and every control's
    change reaches the lab as its input's "input" event (lab.js), the event the drive
    (``lab.set``) dispatches on every control of every lab."""
    import re

    src = ROOT / "src" / "attention_book" / "web" / "src"
    controls = (src / "controls.js").read_text(encoding="utf-8")
    kinds = re.search(r"const KINDS = \{([^}]*)\}", controls).group(1)
    assert {k for k, _ in re.findall(r"(\w+): (\w+Control)", kinds)} == harness_kinds()
    assert "return new Kind(c, id);" in controls
    widget = (src / "entries" / "widget.js").read_text(encoding="utf-8")
    assert re.findall(r"(\w+)\.addEventListener\(\"(\w+)\"", widget) == [
        ("lab", "keydown"), ("lab", "focusin"), ("lab", "focusout")]
    lab = (src / "lab.js").read_text(encoding="utf-8")
    assert re.search(r"for \(const control of this\.controls\) \{\s*(//.*\s*)*"
                     r"control\.input\.addEventListener\(\"input\", \(\) => this\.changed\(control\)\)",
                     lab)
    assert "control.input.dispatchEvent(new Event(\"input\", {bubbles: true}));" in lab


def test_the_runs_cover_every_chapter_once():
    assert len(NUMBERED) == 10 and sorted(c for run in RUNS.values() for c in run) == NUMBERED


#: How long a control's key waits for the picture to change before the control counts as
#: "no visible change" (a failure): a bound for a broken control, not a latency goal (the
#: benchmark's, benchmarks/lab_latency.py). Chapter 10's "tokens to write", one more token,
#: generates again with SmolLM2 in the kernel: 1.35 s on a quiet core, and more than 5 s (the
#: bound before) in a fresh clone's make test with more load beside it.
ANSWER_MS = 30_000


@pytest.mark.parametrize("run", sorted(RUNS))
def test_run_all_and_every_control_without_page_errors(browser, monkeypatch, run):
    """*Run All* in every chapter, then the first control of each kind of every lab (text,
    slider, drop-down, check box, toggle; an enabled one if there is) moved forward and back
    by the key a reader presses on it, then every control of every lab driven through 3
    values: no uncaught page error, no console error, no cell error, every code cell run (a
    dead kernel leaves cells unrun without an error), every chapter showing at least one live
    lab, every key taken and every control redrawing the picture.

    One control of each kind takes a key: the widget handles the keys and the focus on the
    lab's element, the same for every control (web/src/entries/widget.js), so whether
    JupyterLab leaves a key to the lab depends on the input's kind; a key's change reaches
    the lab by the input's "input" event, the one the drive dispatches on every control
    (lab.set), which checks every control's drawings against Python and that each changes
    the picture (test_web_labs.drawings).

    This is the one run of the chapters as live notebooks (there is no separate nbclient
    run): the static build executes them in the book's other mode.

    JupyterLab's cell toolbar threw on every jupyterlab-myst markdown cell until `make env`
    disabled it (the Makefile says why); this is the test that saw it.

    First, on the same server, the run's chapters of :data:`NOTEBOOK7` in Notebook 7's page
    (``/notebooks/<chapter>.ipynb``, served by the same jupyter-server as JupyterLab): *Run
    All Cells* from its Run menu, every lab drawn, the first control of each kind of every
    lab moved forward and back by its key until the picture changes, no cell error, no page
    or console error. (Notebook 7 runs its shortcuts before the lab sees a key, ArrowRight on
    a slider included: the widget marks a focused input so that they leave it alone.)

    JupyterLab renders every cell as a chapter opens (its windowingMode "none", as the
    markdown tests' server): jupyterlab-myst re-renders every rendered markdown cell of the
    notebook each time one more renders (its renderNotebook), and JupyterLab's default
    ("defer", `make lab`'s and the benchmark's) renders the cells one an idle callback, so
    that a chapter's markdown was rendered over and over. Opening chapters 2, 6, 7 and 8
    with every cell rendered, chromium's renderer: 49-58 s by default, 39 s so, 26 s without
    jupyterlab-myst; this test side by side, renderer (the whole tree): 2-6-7-8 80 -> 70 s
    and 82 -> 72 (168 -> 155, 167 -> 157), 1-3-4-5-9 110 -> 94. Every cell is rendered
    either way; Notebook 7 keeps its default.

    JupyterLab boots once a run, in one page that opens the chapters in turn, each closed
    (its panel, outputs and labs gone) before the next opens, with the page's errors going
    to the chapter open then (``Options.one_page``, lab_latency.Tab; a chapter that fails
    closes the page and the next boots JupyterLab in a new one, as each chapter did in a
    page of its own before): the whole tree side by side, three times, 2-6-7-8 131 -> 111,
    154 -> 135 and 148 -> 130 CPU-s, 1-3-4-5-9 161 -> 134, 164 -> 139 and 175 -> 152
    (chromium's renderer -11 to -17 s a run, jupyter-server -4 to -6, chromium's browser
    and gpu -2 to -4).
    """
    # as a reader runs them: live labs, whatever the environment says about a static build
    monkeypatch.delenv("ATTENTION_BOOK_STATIC", raising=False)
    from attention_book.scenes import SCENES
    from test_web_labs import check_download, drive

    driven = []

    def drive_every_lab(page, labs):  # the book's driver, on the notebook's labs
        for found in labs:
            scene = SCENES[found["name"]]
            # 3 values a control (the first and last among them; a text box: the reader's
            # texts, markup too; a drop-down whose choices follow other controls: every
            # choice): the book's page takes every value (test_web_labs.py)
            checked = drive(page, found["id"], scene, most=3, kernel=True)
            assert checked >= 2 * len(scene.controls), (found["name"], checked)
            assert check_download(page, found["id"])
            driven.append(found["name"])

    bench = _lab_latency()
    chapters = RUNS[run]
    notebook7 = [c for c in NOTEBOOK7 if c in chapters]
    rows, errors = bench.measure(
        chapters, bench.Options(repeats=0, timeout_ms=ANSWER_MS, each_kind=True, windowing="none",
                                one_page=True),
        browser=browser,
        then=drive_every_lab,
        more=[(notebook7, bench.Options(repeats=0, timeout_ms=ANSWER_MS, app="notebook",
                                        each_kind=True))] if notebook7 else [])
    assert {name: found for name, found in errors.items() if found} == {}, \
        "uncaught page errors or console errors in JupyterLab or Notebook 7"
    in_lab = [r for r in rows if r["app"] == "lab"]
    broken = [r for r in in_lab if r["status"] not in ("ok", "disabled")]
    assert not broken, f"chapters that failed to run, or controls that did not answer: {broken}"
    labs = {(r["chapter"], r["lab"]) for r in in_lab if r["lab"] != "-"}  # "-": no lab found
    without = sorted({c.stem for c in chapters} - {chapter for chapter, _ in labs})
    assert not without, f"chapters that show no live lab: {without}"
    # every lab has at least one control that changes its picture
    assert all(any(r["status"] == "ok" for r in in_lab if (r["chapter"], r["lab"]) == lab)
               for lab in labs)
    assert len(driven) == len(labs), (driven, labs)
    shown = chapter_labs()

    def check_kinds(rows, labs, chapters):
        """Every lab of the chapters moved, by a key on every kind of its controls (on a
        disabled one where the lab has no enabled one of that kind now, as chapter 5's
        seed), and each kind's key taken in one of them."""
        name = {lab: lab[1].split(": ", 1)[1] for lab in labs}  # "1: attention"
        assert sorted(name.values()) == sorted(n for c in chapters for n in shown[c.stem])
        assert all({r["kind"] for r in rows if (r["chapter"], r["lab"]) == lab}
                   == lab_kinds(name[lab]) for lab in labs), rows
        assert {r["kind"] for r in rows if r["status"] == "ok"} == {
            kind for lab in labs for kind in lab_kinds(name[lab])}

    check_kinds(in_lab, labs, chapters)

    in_notebook7 = [r for r in rows if r["app"] == "notebook"]
    assert {r["chapter"] for r in in_notebook7 if r["lab"] != "-"} == {
        c.stem for c in notebook7}, in_notebook7
    broken = [(r["chapter"], r["control"], r["status"], r.get("failures")) for r in in_notebook7
              if r["status"] not in ("ok", "disabled")]
    assert not broken, f"controls that did not answer their key in Notebook 7: {broken}"
    # (Notebook 7's chapters together: every kind of the book's)
    check_kinds(in_notebook7, {(r["chapter"], r["lab"]) for r in in_notebook7
                               if r["lab"] != "-"}, notebook7)
