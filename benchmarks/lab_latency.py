"""What a reader feels: from moving a lab's control to the first changed pixel of its figure.

The whole path in a real browser: JupyterLab from the project's venv, headless chromium
driven by playwright, each chapter opened and run (*Run All*), and then every control of
every live lab on the page (``controls/widget.py``'s LabWidget: the page draws on a canvas
with the book's front end what the kernel computes) changed ``--repeats`` times (after a
warm-up change forward and back), each change timed in the page:

* t0: in a capturing ``keydown`` listener. Every control is moved with the key a reader
  presses on it, focused: a slider's ArrowRight/ArrowLeft, a character typed into a text
  box then Backspace, Space on a check box (on a group's last box), a drop-down's
  ArrowDown/ArrowUp (the next option, then back). That also checks that JupyterLab leaves
  the lab its keys: a change whose key leaves the control's value as it was is a failure
  ("key ... not accepted");
* t1: the first ``requestAnimationFrame`` callback, after the lab drew, in which the
  canvas's pixels differ from those before the change. Polling runs in the page, so
  playwright's round trips are not in the figure.

Changes go forward then back, so a lab returns to its state after every pair, and the
controls are measured in interleaved rounds (every control once a round), so a slow spell
of a shared machine falls on all of them alike. Between changes the script waits until no
lab has a request in flight for 60 ms. The timed changes start once JupyterLab has rendered
every cell (it renders the cells out of view in idle time, which stalled the changes
made meanwhile: ``RENDERED``).

A control whose change does not change the picture in the current state is reported as
"no visible change", or "disabled" when the page disables it (decided on its warm-up
change); a change that times out (``--timeout``) is counted as a failure and reported,
never dropped.

The notebooks are copied to a temporary folder (nothing is written back), JupyterLab runs
there on a free 127.0.0.1 port with a token, and it is shut down at the end, also on an
error or Ctrl-C.

Usage::

    python benchmarks/lab_latency.py [--chapters 01 03] [--repeats 8] [--timeout 3]
        [--json] [--pythonpath DIR] [--chapters-dir DIR | --notebooks NB.ipynb ...]

``--pythonpath DIR`` puts DIR first on the kernel's ``PYTHONPATH`` (measure an older copy
of the package: ``git archive HEAD | tar -x -C /tmp/base``, then ``--chapters-dir
/tmp/base/chapters --pythonpath /tmp/base/src``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
VIEWPORT = {"width": 1280, "height": 900}
QUIET_MS = 60  # no lab has a request in flight for this long = settled
RUN_ALL_MS = 600_000  # a notebook's Run All (chapter 8 trains two models) or it counts as hung

# ------------------------------------------------------------------ in-page JavaScript

# The harness: finds the live labs (anywidget outputs of controls/widget.py, each with its
# front end's Lab as `element.abLab`, the handle tests/test_web_labs.py drives in the book),
# moves their controls and watches their canvases' pixels. It is the notebook panel's
# (window.__panel): a page that opens notebooks in turn (Tab) installs it again for each,
# and the one before lets go of the page's keys.
HARNESS = r"""
(() => {
  if (window.__lab && window.__lab.panel === window.__panel) return;
  if (window.__lab) window.__lab.stop();
  const panel = window.__panel;
  const labs = [];
  const rec = {armed: false, t0: null};
  let pending = null;
  // a key pressed (a slider's arrow, a character typed): the change starts here
  const keydown = (event) => {
    if (rec.armed && rec.t0 === null) {
      rec.t0 = performance.now();
      rec.hit = event.target === rec.input;  // not: the app took the focus before the key
    }
  };
  document.addEventListener('keydown', keydown, true);
  const stop = () => document.removeEventListener('keydown', keydown, true);

  function discover() {
    for (const el of panel.node.querySelectorAll('.jp-OutputArea-output .ab-lab[data-ab-widget]')) {
      if (!el.abLab || labs.some(l => l.el === el)) continue;
      const lab = {el, lab: el.abLab, dirty: false};
      el.addEventListener('ab-lab-drawn', () => { lab.dirty = true; });
      labs.push(lab);
    }
    return labs.map(({lab}) => ({name: lab.declaration.name, id: lab.element.id,
      controls: lab.controls.map(c => ({name: c.name, kind: c.declaration.kind, label: c.declaration.label,
                                        disabled: !!c.disabled}))}));
  }
  // how many widgets the notebook shows (each renders its lab a moment after its output)
  const outputs = () => panel.content.widgets.reduce((n, cell) => n + (
    cell.model.type !== 'code' ? 0 : cell.model.outputs.toJSON().filter(
      o => o.data && o.data['application/vnd.jupyter.widget-view+json']).length), 0);
  function pixels(l) {
    const c = labs[l].lab.canvas;
    if (!c.width || !c.height) return null;
    return {w: c.width, h: c.height,
            px: new Uint32Array(c.getContext('2d').getImageData(0, 0, c.width, c.height).data.buffer)};
  }
  function differ(a, b) {
    if (!a || !b) return a !== b;
    if (a.w !== b.w || a.h !== b.h) return true;
    for (let i = 0; i < a.px.length; i++) if (a.px[i] !== b.px[i]) return true;
    return false;
  }
  const drawn = () => labs.every((l, k) => { const p = pixels(k); return !!p && p.px.some(v => v !== 0); });

  // How to move control c of lab l forward (dir 1) or back (-1) with the key a reader
  // presses on its focused input: a slider's arrows, a character typed into a text box (then
  // Backspace), Space on a check box (a group's last box), a drop-down's arrows (the next
  // option, then back). `before`: the value, which the key must change.
  function prepare(l, c, dir) {
    const control = labs[l].lab.controls[c], kind = control.declaration.kind;
    const out = {disabled: !!control.disabled, before: String(JSON.stringify(control.value))};
    let input = control.input;
    if (kind === 'slider') {
      if (control.flip === undefined) control.flip = +input.value >= +input.max;
      out.key = (dir > 0) !== control.flip ? 'ArrowRight' : 'ArrowLeft';
    } else if (kind === 'text') {
      input.setSelectionRange(input.value.length, input.value.length);
      out.key = dir > 0 ? 'q' : 'Backspace';
    } else if (kind === 'toggle') {
      out.key = ' ';
    } else if (kind === 'multi') {
      const boxes = control.boxes;
      input = boxes[boxes.length - 1];
      out.key = ' ';
    } else {  // choice: the next option (the one before, at the last), then back
      if (control.down === undefined) control.down = input.selectedIndex + 1 < input.options.length;
      out.key = (dir > 0) === control.down ? 'ArrowDown' : 'ArrowUp';
    }
    input.focus({preventScroll: true});
    rec.input = input;
    out.focused = document.activeElement === input;
    return out;
  }
  function value(l, c) { return String(JSON.stringify(labs[l].lab.controls[c].value)); }
  function arm(l, timeout) {
    const lab = labs[l], before = pixels(l);
    lab.dirty = false;
    Object.assign(rec, {armed: true, t0: null, tArm: performance.now()});
    pending = new Promise(resolve => {
      const finish = (t1, why) => { rec.armed = false; resolve({t0: rec.t0, t1, why}); };
      const tick = () => {
        const now = performance.now();
        if (now - (rec.t0 === null ? rec.tArm : rec.t0) > timeout) return finish(null, 'timeout');
        if (rec.t0 !== null && lab.dirty) {
          lab.dirty = false;
          if (differ(before, pixels(l))) return finish(now, 'changed');
        }
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
  }
  // settled: the lab's model has no request in flight and nothing waits
  function quiet(ms, timeout) {
    const start = performance.now();
    let since = null;
    return new Promise(resolve => {
      const poll = () => {
        const now = performance.now();
        const busy = labs.some(l => l.lab.model.inFlight || l.lab.waiting.length);
        since = busy ? null : (since === null ? now : since);
        if (since !== null && now - since >= ms) return resolve(true);
        if (now - start > timeout) return resolve(false);
        setTimeout(poll, 10);
      };
      poll();
    });
  }
  const frames = n => new Promise(r => n ? requestAnimationFrame(() => frames(n - 1).then(r)) : r());
  function show(l) { labs[l].lab.canvas.scrollIntoView({block: 'center'}); }
  // A change in two round trips: before the key, the lab shown, the input focused and the
  // timing armed (unless the control is disabled or cannot take the focus); after it, the
  // result once the labs settled, with the control's value then.
  async function begin(l, c, dir, timeout) {
    show(l);
    const out = prepare(l, c, dir);
    // two frames for the scroll and the focus to be drawn (and what JupyterLab does on a
    // scroll, such as rendering cells that came into view): a reader's key comes later
    await frames(2);
    if (!out.disabled && out.focused) arm(l, timeout);
    return out;
  }
  async function end(l, c, ms, timeout) {
    const result = await pending;
    await quiet(ms, timeout);
    return {...result, value: value(l, c), hit: rec.hit};
  }
  // a state to measure from: each control set as a reader sets it, in order
  function start(l, values) {
    for (const [name, value] of Object.entries(values)) labs[l].lab.set(name, value);
  }
  window.__lab = {panel, stop, discover, outputs, begin, end, quiet, drawn, start};
})();
"""

# The notebook's panel, once its document and kernel session are ready (window.__panel):
# the current one whose path is ``path`` (a name in the server's root; any, if null).
# JupyterLab and Notebook 7 (both expose their app as window.jupyterapp) alike.
READY = r"""
async (path) => {
  const app = window.jupyterapp;
  await app.restored;
  let panel = null;
  for (let i = 0; i < 600 && !panel; i++) {
    const w = app.shell.currentWidget;
    if (w && w.sessionContext && w.content && w.content.widgets
        && (!path || w.context.path === path)) panel = w;
    else await new Promise(r => setTimeout(r, 100));
  }
  if (!panel) return 'no notebook panel opened';
  await panel.context.ready;
  await panel.sessionContext.ready;
  window.__panel = panel;
  return null;
}
"""

# JupyterLab, already booted in the page (Tab), opens notebook ``path`` as a reader does from
# its file browser; READY then waits for its panel.
OPEN = "async (path) => { await window.jupyterapp.commands.execute('docmanager:open', {path}); }"

# The notebook of window.__panel closed (Tab): its panel disposed, and no notebook, output
# area or lab left in the page, so that the next notebook's harness sees only its own. It
# is closed as it is, unsaved, with no "Save your work?" dialog (its copy is thrown away).
# Its kernel is left running, as JupyterLab's default ("kernelShutdown": false) does;
# measure() shuts it down. False if it is still there after ``ms``.
CLOSE = r"""
async (ms) => {
  const panel = window.__panel;
  window.__panel = null;
  if (window.__lab) window.__lab.stop();
  window.__lab = null;
  if (!panel) return true;
  panel.context.model.dirty = false;
  panel.close();
  const start = performance.now();
  const gone = () => panel.isDisposed && !panel.node.isConnected
    && !document.querySelector('.jp-NotebookPanel, .jp-OutputArea, .ab-lab');
  while (!gone()) {
    if (performance.now() - start > ms) return false;
    await new Promise(r => setTimeout(r, 50));
  }
  return true;
}
"""

# Every cell rendered: JupyterLab 4's default windowing ("contentVisibility", Notebook 7's
# too) leaves the cells out of view as placeholders and renders them in idle callbacks,
# after a 3 s timeout when the page is never idle, a whole cell at once (a MyST cell with
# its formulas, a CodeMirror editor). A change made meanwhile waits behind that work: after
# Run All, chapter 3 still had 29 of 69 cells to render, done 23 s later (load 13-17), and
# the kernel's answer, sent 2-30 ms after the key, sat in the page's socket behind long
# tasks of 0.3-1.6 s (benchmarks/README.md). The timed changes start when it is done.
# ("windowingMode": "none", every cell rendered as the notebook opens, was tried for `make
# lab`: chapter 3 then took 12-18 s to open instead of 2-5, load 13-16.)
RENDERED = "() => window.__panel.content.widgets.every(cell => !cell.isPlaceholder())"

# Runs every cell (``command``: JupyterLab's Run All command; otherwise Run All was chosen
# from the menu, and this waits until the kernel is idle with every cell run or one failed),
# and says which cells failed or never ran: Run All stops at a cell error, and a kernel that
# dies leaves the cells after it unrun with no error output. Gives up after ``ms``.
RUN_ALL = r"""
async ([ms, command]) => {
  const panel = window.__panel;
  const code = () => panel.content.widgets.filter(c => c.model.type === 'code');
  const failed = () => code().some(c => c.model.outputs.toJSON().some(o => o.output_type === 'error'));
  const unrun = c => c.model.executionCount === null && c.model.sharedModel.getSource().trim();
  const settled = async () => {  // idle, nothing running, all run (or one failed), for 500 ms
    let since = null;
    for (;;) {
      const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
      const done = kernel && kernel.status === 'idle'
        && !code().some(c => c.model.executionState === 'running')
        && (failed() || !code().some(unrun));
      since = done ? (since === null ? performance.now() : since) : null;
      if (since !== null && performance.now() - since >= 500) return true;
      await new Promise(r => setTimeout(r, 100));
    }
  };
  const finished = await Promise.race([
    command ? window.jupyterapp.commands.execute('notebook:run-all-cells').then(() => true)
            : settled(),
    new Promise(resolve => setTimeout(() => resolve(false), ms))]);
  if (!finished) return {error: `Run All did not finish in ${ms / 1000} s`};
  const errors = [];
  panel.content.widgets.forEach((cell, i) => {
    if (cell.model.type !== 'code') return;
    for (const out of cell.model.outputs.toJSON())
      if (out.output_type === 'error') errors.push(`cell ${i}: ${out.ename}: ${out.evalue}`);
    if (unrun(cell)) errors.push(`cell ${i}: not run`);
  });
  return {errors};
}
"""

# ------------------------------------------------------------------ JupyterLab server


@dataclass
class Server:
    url: str
    token: str
    process: subprocess.Popen
    log: Path

    def api(self, method: str, path: str, body: dict | None = None):
        request = urllib.request.Request(
            f"{self.url}{path}", method=method,
            headers={"Authorization": f"token {self.token}"},
            data=json.dumps(body).encode() if body is not None
            else b"" if method == "POST" else None)
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def lab_command(port: int, token: str, root: Path, state: Path) -> list[str]:
    python = str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable
    command = [
        python, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        "--ServerApp.port_retries=0", f"--ServerApp.token={token}",
        f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
        "--JupyterNotebookApp.expose_app_in_browser=True",  # Notebook 7's /notebooks/ pages
        f"--LabApp.workspaces_dir={state / 'workspaces'}",
        f"--LabApp.user_settings_dir={state / 'settings'}",
        # nothing in the background: no news, update check or extension manager
        "--LabApp.news_url=None", "--LabApp.extension_manager=readonly",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    return command


@contextlib.contextmanager
def jupyter_lab(root: Path, state: Path, pythonpath: str | None):
    """JupyterLab serving ``root``; always shut down on leaving (error, Ctrl-C too)."""
    port, token = free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(state / "runtime"),
               IPYTHONDIR=str(state / "ipython"))
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(Path(pythonpath).resolve()), os.environ.get("PYTHONPATH")) if p)
    log = state / "jupyterlab.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(lab_command(port, token, root, state), env=env,
                                   stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    server = Server(f"http://127.0.0.1:{port}", token, process, log)
    try:
        wait_until_up(server)
        yield server
    finally:
        stop(server)


def wait_until_up(server: Server, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            break
        with contextlib.suppress(OSError):
            server.api("GET", "/api/status")
            return
        time.sleep(0.3)
    raise RuntimeError(f"JupyterLab did not start; its log:\n{server.log.read_text()[-3000:]}")


def stop(server: Server) -> None:
    with contextlib.suppress(Exception):
        server.api("POST", "/api/shutdown")
    try:
        server.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.process.pid, signal.SIGTERM)
        try:
            server.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.process.pid, signal.SIGKILL)
            server.process.wait()


def start_kernel(server: Server, notebook: str) -> None:
    """Start the kernel of ``notebook`` (a name in the server's root) before a page opens
    it: the page's notebook then joins that session, as it does one left running."""
    server.api("POST", "/api/sessions", {"path": notebook, "type": "notebook",
                                         "name": notebook, "kernel": {"name": "python3"}})


def shutdown_sessions(server: Server, notebook: str | None = None, *,
                      wait: bool = True) -> threading.Thread | None:
    """Shut down the kernel of ``notebook`` (a name in the server's root), or every one.
    ``wait=False``: the sessions are found now and shut down by a thread (returned), while
    the caller goes on (a session started meanwhile for the same notebook is left alone)."""
    ids = [session["id"] for session in server.api("GET", "/api/sessions") or []
           if notebook is None or session["path"] == notebook]

    def delete():
        for session in ids:
            with contextlib.suppress(Exception):
                server.api("DELETE", f"/api/sessions/{session}")

    if wait:
        delete()
        return None
    thread = threading.Thread(target=delete, daemon=True)
    thread.start()
    return thread


# ------------------------------------------------------------------ notebooks


def pick_notebooks(args) -> list[Path]:
    if args.notebooks:
        return [Path(p) for p in args.notebooks]
    found = sorted(Path(args.chapters_dir).glob("*.ipynb"))
    if args.chapters:
        found = [p for p in found if any(p.name.startswith(c) for c in args.chapters)]
    return found


def write_windowing(settings: Path, mode: str) -> None:
    """JupyterLab's notebook windowing mode ``mode`` in the user settings folder
    ``settings`` (the server's is ``state/settings``, :func:`lab_command`); Notebook 7
    keeps its own."""
    folder = settings / "@jupyterlab" / "notebook-extension"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": mode}))


def copy_notebook(source: Path, root: Path) -> Path:
    """A fresh copy of ``source`` in ``root``."""
    copy = root / source.name
    copy.write_bytes(source.read_bytes())
    return copy


# ------------------------------------------------------------------ measuring


@dataclass
class Options:
    repeats: int
    timeout_ms: float
    app: str = "lab"  # or "notebook": Notebook 7 (open_and_run)
    # move only a lab's first control of each kind (slider, text, ...), enabled if one is
    each_kind: bool = False
    start: dict = field(default_factory=dict)  # lab name -> the values to measure from
    # JupyterLab's notebook windowing mode (None: its default, "defer", what `make lab` has)
    windowing: str | None = None
    # JupyterLab booted once, in one page that opens the notebooks in turn (Tab); False: a
    # page a notebook (Notebook 7's pages are one a notebook either way)
    one_page: bool = False


#: Uncaught errors of Notebook 7 itself, not of the book, ignored on its pages (message, and
#: where it is thrown): a race of its keyboard-shortcuts plugin with an early settings load
#: (jupyterlab-myst's), jupyter/notebook#7862, harmless (the shortcuts load anyway).
NOTEBOOK7_KNOWN = [("Cannot read properties of undefined (reading 'schema')",
                    "/static/notebook/notebook_core.")]


def _known(app: str, err) -> bool:
    return app == "notebook" and any(message in str(err) and where in (err.stack or "")
                                     for message, where in NOTEBOOK7_KNOWN)


def new_page(context, server: Server, notebook: Path, index: int, errors, app: str = "lab"):
    """A new page of ``context`` with ``app`` booted on ``notebook`` (JupyterLab in a
    workspace of its own, ``bench<index>``). Every uncaught page error and console error of
    the page, from opening on, is appended to ``errors()`` (the list it gives then)."""
    page = context.new_page()
    try:  # the page closed on a failure too (its context serves the next ones)
        page.on("pageerror", lambda err: _known(app, err) or errors().append(f"page error: {err}"))
        page.on("console", lambda msg: msg.type == "error" and errors().append(
            f"console error: {msg.text} ({msg.location.get('url', '')})"))
        path = (f"lab/workspaces/bench{index}/tree/{notebook.name}" if app == "lab"
                else f"notebooks/{notebook.name}")
        page.goto(f"{server.url}/{path}?token={server.token}", wait_until="load")
        page.wait_for_function("() => window.jupyterapp", timeout=120_000)
    except BaseException:
        page.close()
        raise
    return page


class Tab:
    """JupyterLab booted once, in one page that opens the notebooks in turn (``Options.
    one_page``): each opened from the app (``docmanager:open``, as from its file browser)
    once the one before is closed, its panel, outputs and labs gone (CLOSE), so that READY,
    RUN_ALL and the HARNESS see only the current notebook. The page's uncaught errors and
    console errors go to the current notebook's list, from its opening until the next one
    opens (its closing included). After a failure the page is closed: the next notebook
    boots JupyterLab in a new page, as every notebook does without a Tab.

    JupyterLab's boot was 3-5 s of CPU (renderer and server) a notebook (stop 34's
    measures): 7 of the 9 in the two runs of tests/test_jupyterlab.py. What a closed
    notebook leaves: its panel's elements, detached, are still reachable (JupyterLab's;
    disconnecting the labs' observers of the document did not free them), and the JS heap
    after a garbage collection grew 55 -> 62 -> 64 MB over chapters 1, 4 and 5; nothing of
    it is in the document, which the harness and the tests' drive search. The benchmark
    keeps a page a notebook (the default), so that its timings do not depend on the
    notebooks measured before.
    """

    def __init__(self, context):
        self.context = context
        self.page = None
        self.errors: list = []  # the current notebook's

    def open(self, server: Server, notebook: Path, index: int, errors: list):
        """The page, with ``notebook`` opening in it (READY waits for its panel)."""
        self.errors = errors
        if self.page is None:
            self.page = new_page(self.context, server, notebook, index, lambda: self.errors)
        else:
            try:
                self.page.evaluate(OPEN, notebook.name)
            except BaseException:
                self.discard()
                raise
        return self.page

    def done(self, ok: bool) -> None:
        """The notebook closed; after a failure (``ok`` False), or if it would not close,
        the page."""
        if self.page is None:
            return
        if ok:
            with contextlib.suppress(PlaywrightError):
                if self.page.evaluate(CLOSE, 30_000):
                    return
            self.errors.append("the notebook did not close in 30 s")
        self.discard()

    def discard(self) -> None:
        if self.page is not None:
            page, self.page = self.page, None
            page.close()


def open_and_run(context, server: Server, notebook: Path, index: int, errors: list,
                 app: str = "lab", tab: Tab | None = None):
    """A page with ``notebook`` open, all cells run, the labs drawn.

    ``app``: "lab" (JupyterLab, Run All by its command) or "notebook" (Notebook 7's page
    ``/notebooks/<name>``, Run All chosen from its Run menu, as a reader does). Every
    uncaught page error and console error of the page, from opening on, is appended to
    ``errors`` (a reader sees none of them, but each is a bug: the test fails on them).
    ``tab``: JupyterLab's page that opens the notebooks in turn (else a new page of
    ``context``); on a failure it closes its page, as a new page is closed.
    """
    page = (tab.open(server, notebook, index, errors) if tab is not None
            else new_page(context, server, notebook, index, lambda: errors, app))
    try:
        problem = page.evaluate(READY, notebook.name)
        if problem is None and app == "notebook":
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        outcome = ({"error": problem} if problem
                   else page.evaluate(RUN_ALL, [RUN_ALL_MS, app == "lab"]))
        if outcome.get("error") or outcome.get("errors"):
            raise RuntimeError(f"{notebook.name}: {outcome.get('error') or outcome['errors']}")
        page.evaluate(HARNESS)
        page.wait_for_function("() => __lab.discover().length >= __lab.outputs()",
                               timeout=60_000, polling=50)
        labs = page.evaluate("() => __lab.discover()")
        page.wait_for_function("() => __lab.drawn()", timeout=60_000, polling=50)
    except BaseException:
        tab.discard() if tab is not None else page.close()
        raise
    return page, labs


def change(page, lab: int, control: int, direction: int, options: Options,
           tries: int = 2) -> dict:
    """One control change by a key, timed in the page; returns t0, t1 (None on timeout,
    or when the key did not change the control's value), why. A key that reached another
    element (the app moved the focus between focusing the input and the key: Notebook 7
    does, after Run All) is pressed again, ``tries`` times in all."""
    prep = page.evaluate("([l, c, d, t]) => __lab.begin(l, c, d, t)",
                         [lab, control, direction, options.timeout_ms])
    if prep["disabled"]:  # nothing can change: do not wait for the timeout
        return {"t0": None, "t1": None, "why": "disabled", "disabled": True}
    if not prep["focused"]:
        return {"t0": None, "t1": None, "why": "input not focusable", "disabled": False}
    page.keyboard.press(prep["key"])
    result = page.evaluate("([l, c, ms, t]) => __lab.end(l, c, ms, t)",
                           [lab, control, QUIET_MS, 30_000])
    if result.pop("value") == prep["before"]:
        if tries > 1 and not result["hit"]:
            return change(page, lab, control, direction, options, tries - 1)
        result["why"] = f"key {prep['key']!r} not accepted"
        result["t1"] = None
    result["disabled"] = prep["disabled"]
    return result


@dataclass
class Control:
    """One control of one lab and what was measured on it."""

    lab: int
    index: int
    row: dict
    times: list = field(default_factory=list)
    failures: list = field(default_factory=list)

    def record(self, result: dict) -> None:
        if result["t1"] is None:
            self.failures.append(result["why"])
        else:
            self.times.append(round(result["t1"] - result["t0"], 1))

    def summary(self) -> dict:
        if self.failures and not self.times:
            self.row["status"] = "failed"
        return {**self.row, "times": self.times, "failures": self.failures}


def measure_labs(page, controls: list[Control], options: Options) -> None:
    """Warm up every control, then measure them in rounds, interleaved.

    Each control changes forward then back (the lab returns to its state after every
    pair), and one round visits every control, so a slow spell of the machine is shared
    by all of them instead of falling on one.
    """
    def step(control, direction, keep):
        result = change(page, control.lab, control.index, direction, options)
        if keep:
            control.record(result)
        return result

    active = []
    for control in controls:  # warm-up: forward and back, unmeasured
        warm, back = step(control, +1, False), step(control, -1, False)
        if warm["t1"] is None:
            control.row["status"] = ("disabled" if warm["disabled"] else "no visible change"
                                     if warm["why"] == "timeout" else warm["why"])
        else:
            active.append(control)
            control.row["status"] = "ok" if back["t1"] is not None else "failed (back)"
    for k in range(0, options.repeats, 2):
        for control in active:
            step(control, +1, True)
            step(control, -1, k + 1 < options.repeats)


def measure_notebook(context, server: Server, notebook: Path, index: int,
                     options: Options, errors: list, then=None, tab: Tab | None = None
                     ) -> list[dict]:
    """Run ``notebook`` and move every control of its labs; ``then(page, labs)``, if
    given, runs on the page before the notebook closes (a test's own checks). ``tab``:
    JupyterLab's page that opens the notebooks in turn (else a new page of ``context``)."""
    page, labs = open_and_run(context, server, notebook, index, errors, options.app, tab=tab)
    ok = False
    try:
        rows = _measure_page(page, notebook, labs, options, then)
        ok = True
    finally:
        tab.done(ok) if tab is not None else page.close()
    return rows


def _measure_page(page, notebook: Path, labs: list[dict], options: Options, then) -> list[dict]:
    """measure_notebook's changes on the page of ``notebook`` (open, run, its labs drawn)."""
    if options.repeats:  # time the labs, not JupyterLab's rendering of the cells it deferred
        page.wait_for_function(RENDERED, timeout=RUN_ALL_MS, polling=250)
    for l, lab in enumerate(labs):
        if lab["name"] in options.start:
            page.evaluate("([l, values]) => __lab.start(l, values)", [l, options.start[lab["name"]]])
            page.evaluate("([ms, t]) => __lab.quiet(ms, t)", [QUIET_MS, 60_000])
    controls = []
    for l, lab in enumerate(labs):
        name = f"{l + 1}: {lab['name']}"
        kinds = set()
        # with each_kind, the enabled controls first: a kind's key is pressed on an enabled one
        order = sorted(range(len(lab["controls"])), key=lambda c: (
            options.each_kind and lab["controls"][c]["disabled"], c))
        for c in order:
            control = lab["controls"][c]
            if options.each_kind and control["kind"] in kinds:
                continue
            kinds.add(control["kind"])
            controls.append(Control(l, c, {
                "chapter": notebook.stem, "app": options.app, "lab": name, "id": lab["id"],
                "control": control["label"], "kind": control["kind"]}))
    measure_labs(page, controls, options)
    if then is not None:
        then(page, labs)
    if not labs:
        return [{"chapter": notebook.stem, "app": options.app, "lab": "-", "control": "-",
                 "kind": "-", "status": "no labs found"}]
    return [control.summary() for control in controls]


# ------------------------------------------------------------------ reporting


def _ms(value) -> str:
    return "" if value is None else f"{value:.0f}"


def summarize(rows: list[dict]) -> list[dict]:
    """Control rows with median/min/max, a row per lab, a row per chapter, one overall."""
    out, labs, chapters = [], {}, {}
    for row in rows:
        times = row.get("times", [])
        summary = {"row": "control", **{k: row[k] for k in (
            "chapter", "lab", "control", "kind", "status")},
            "n": len(times), "failures": len(row.get("failures", [])),
            "median_ms": statistics.median(times) if times else None,
            "min_ms": min(times) if times else None, "max_ms": max(times) if times else None,
            "times_ms": times}
        out.append(summary)
        if times:
            labs.setdefault((row["chapter"], row["lab"]), []).append(summary)
            chapters.setdefault(row["chapter"], []).extend(times)
    for (chapter, lab), controls in labs.items():
        times = [t for c in controls for t in c["times_ms"]]
        out.append({"row": "lab", "chapter": chapter, "lab": lab,
                    "median_ms": statistics.median(times), "min_ms": min(times),
                    "max_ms": max(times), "n": len(times)})
    for chapter, times in chapters.items():
        out.append({"row": "chapter", "chapter": chapter, "n": len(times),
                    "median_ms": statistics.median(times), "min_ms": min(times),
                    "max_ms": max(times)})
    every = [t for times in chapters.values() for t in times]
    if every:
        out.append({"row": "overall", "n": len(every), "median_ms": statistics.median(every),
                    "min_ms": min(every), "max_ms": max(every)})
    return out


def print_table(summary: list[dict]) -> None:
    head = (f"{'chapter':<24}{'lab':<18}{'control':<26}{'n':>3}{'fail':>5}{'median':>8}"
            f"{'min':>6}{'max':>6}")
    print(head)
    print("-" * len(head))
    for r in summary:
        if r["row"] == "control":
            note = "" if r["status"] == "ok" else f"  ({r['status']})"
            print(f"{r['chapter'][:23]:<24}{r['lab'][:17]:<18}{r['control'][:25]:<26}"
                  f"{r['n']:>3}{r['failures']:>5}{_ms(r['median_ms']):>8}{_ms(r['min_ms']):>6}"
                  f"{_ms(r['max_ms']):>6}{note}")
    print("\nper lab: median of all its changes (min, max)")
    for r in summary:
        if r["row"] == "lab":
            print(f"  {r['chapter'][:23]:<24}{r['lab'][:30]:<31}{_ms(r['median_ms']):>6} ms"
                  f"   ({_ms(r['min_ms'])}-{_ms(r['max_ms'])}, n={r['n']})")
    measured = [r for r in summary if r["row"] == "control" and r["median_ms"] is not None]
    if measured:
        slow = max(measured, key=lambda r: r["median_ms"])
        print(f"slowest control (by median): {slow['chapter']} / {slow['lab']} / "
              f"{slow['control']}: {_ms(slow['median_ms'])} ms (max {_ms(slow['max_ms'])})")
    print("per chapter: median of all its changes")
    for r in summary:
        if r["row"] in ("chapter", "overall"):
            name = r.get("chapter", "overall")
            print(f"  {name[:54]:<55}{_ms(r['median_ms']):>6} ms"
                  f"   ({_ms(r['min_ms'])}-{_ms(r['max_ms'])}, n={r['n']})")


def print_errors(errors: dict) -> None:
    found = {name: found for name, found in errors.items() if found}
    if not found:
        print("page and console errors: none")
    for name, messages in found.items():
        print(f"page and console errors in {name}:")
        for message in messages:
            print(f"  {message[:300]}")


# ------------------------------------------------------------------ main


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapters", nargs="+", metavar="NN",
                        help="chapter prefixes to measure, e.g. 01 03 (default: all)")
    parser.add_argument("--chapters-dir", default=str(ROOT / "chapters"), metavar="DIR")
    parser.add_argument("--notebooks", nargs="+", metavar="NB",
                        help="measure these notebooks instead of the chapters")
    parser.add_argument("--repeats", type=int, default=8,
                        help="timed changes per control (0: move each once, time nothing)")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds per change")
    parser.add_argument("--app", choices=("lab", "notebook"), default="lab",
                        help="JupyterLab (default) or Jupyter Notebook 7 (its /notebooks/ page)")
    parser.add_argument("--start", type=json.loads, default={}, metavar="JSON",
                        help="the state to measure each named lab from, e.g. "
                             "'{\"positional\": {\"s\": 512, \"d\": 512}}'")
    parser.add_argument("--pythonpath", metavar="DIR", help="put DIR first on the kernel's path")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    args = parser.parse_args(argv)
    if args.repeats < 0:
        parser.error("--repeats must be 0 or more")
    return args


def _terminate(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def chromium(browser=None):
    """``browser`` if given (a test's), else a chromium launched here and closed after.

    Playwright's sync API cannot start inside another sync_playwright() of the same thread,
    so a caller that already has a browser open must pass it.
    """
    if browser is not None:
        yield browser
        return
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()


def measure(notebooks: list[Path], options: Options, *, pythonpath: str | None = None,
            browser=None, then=None, more=()) -> tuple[list[dict], dict]:
    """Open and run each notebook in JupyterLab, then change every control of its labs.

    Returns the control rows (for :func:`summarize`) and, per notebook stem, the page's
    uncaught errors and console errors (empty lists when there were none). With
    ``options.repeats`` 0 every control is still moved forward and back once (the warm-up),
    unmeasured: what tests/test_jupyterlab.py runs. ``browser``: a playwright chromium to
    use instead of launching one; ``then(page, labs)``: run on each notebook's page after
    its controls were moved. ``more``: further ``(notebooks, options)`` run first on the
    same server (Notebook 7's page, say: ``Options(app="notebook")``), without ``then``;
    their rows say their ``app``, their errors are under ``"<stem> (<app>)"``. (Notebook
    7 opened after JupyterLab's pages on one server threw "Command 'filebrowser:open-path'
    not registered"; JupyterLab after Notebook 7 throws nothing.) Every notebook is opened
    from a fresh copy, over the one a page before may have saved, in a page of its own (an
    app's pages share a browser context: its scripts come from the cache after the first)
    or, with ``one_page`` (JupyterLab), in the page of the notebook before once that one is
    closed (:class:`Tab`), and with a kernel of its own; untimed, the next notebook's kernel
    starts meanwhile, and a notebook's kernel shuts down (once its page or panel closed)
    while the next one runs (2-3 s each, at load 15-20).
    """
    rows, errors = [], {}
    with tempfile.TemporaryDirectory(prefix="lab-latency-") as tmp:
        root, state = Path(tmp) / "notebooks", Path(tmp) / "state"
        root.mkdir()
        state.mkdir()
        if options.windowing:
            write_windowing(state / "settings", options.windowing)
        jobs = [(source, how, None) for group, how in more for source in group]
        jobs += [(source, options, then) for source in notebooks]
        with jupyter_lab(root, state, pythonpath) as server, chromium(browser) as browser, \
                contextlib.ExitStack() as stack:
            contexts = {}  # one an app: its pages load the app's scripts from its cache
            tabs = {}  # the Options whose JupyterLab opens its notebooks in one page -> its Tab
            closing = []  # untimed: kernels that shut down while the next notebook runs
            stack.callback(lambda: [thread.join(30) for thread in closing if thread])
            for index, (source, how, after) in enumerate(jobs):
                notebook = copy_notebook(source, root)
                following = jobs[index + 1][0].name if index + 1 < len(jobs) else None
                if not how.repeats and following not in (None, notebook.name):
                    # untimed: the next notebook's kernel starts while this one runs
                    start_kernel(server, following)
                if how.app not in contexts:
                    contexts[how.app] = browser.new_context(viewport=VIEWPORT)
                    stack.callback(contexts[how.app].close)
                if how.app == "lab" and how.one_page and id(how) not in tabs:
                    tabs[id(how)] = Tab(contexts[how.app])
                    stack.callback(tabs[id(how)].discard)
                key = notebook.stem if how.app == "lab" else f"{notebook.stem} ({how.app})"
                found = errors.setdefault(key, [])
                try:
                    rows += measure_notebook(contexts[how.app], server, notebook, index, how,
                                             found, after, tab=tabs.get(id(how)))
                except (RuntimeError, PlaywrightError) as err:  # report it, go on
                    print(err, file=sys.stderr)
                    rows.append({"chapter": notebook.stem, "app": how.app, "lab": "-",
                                 "control": "-", "kind": "-",
                                 "status": f"error: {str(err).splitlines()[0][:120]}"})
                finally:
                    closing.append(shutdown_sessions(server, notebook.name,
                                                     wait=bool(how.repeats)))
    return rows, errors


def main(argv=None) -> int:
    args = parse_args(argv)
    notebooks = pick_notebooks(args)
    if not notebooks:
        print("no notebooks to measure", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _terminate)
    load_before = os.getloadavg()
    rows, errors = measure(notebooks, Options(args.repeats, args.timeout * 1000, args.app,
                                                    start=args.start),
                           pythonpath=args.pythonpath)
    load_after = os.getloadavg()
    summary = summarize(rows)
    if args.json:
        for row in summary:
            print(json.dumps(row))
        print(json.dumps({"row": "errors", "errors": errors}))
    else:
        print_table(summary)
        print_errors(errors)
    print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}"
          f"; after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}"
          f" ({os.cpu_count()} CPUs)", file=sys.stderr if args.json else sys.stdout)
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:  # the server and the browser are already stopped
        print("interrupted", file=sys.stderr)
        raise SystemExit(130) from None
