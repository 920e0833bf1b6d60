"""What a reader feels: from moving a lab's control to the first changed pixel of its figure.

The in-kernel benchmark (``widget_latency.py``) times the kernel's share only. This one
times the whole path in a real browser: JupyterLab from the project's venv, headless
chromium driven by playwright, each chapter opened and run (*Run All*), and then every
control of every lab on the page changed ``--repeats`` times (after a warm-up change
forward and back), each change timed in the page:

* t0: ``performance.now()`` just before the input is dispatched (select, toggle buttons,
  checkbox, multiple select, button: dispatched from the page) or in a capturing
  ``keydown`` listener (slider handle: ArrowRight/ArrowLeft; text box: one character,
  then Backspace; both pressed with the keyboard);
* t1: the first ``requestAnimationFrame`` callback in which the figure's pixels differ from
  those before the change. An ipympl ``<canvas>`` is compared with ``getImageData`` after
  each draw on it; an ``<img>`` (``ipywidgets.Image``) after its ``src`` changed and the new
  image decoded (drawn into an offscreen canvas). Polling runs in the page, so
  playwright's round trips are not in the figure.

Changes go forward then back, so a lab returns to its state after every pair, and the
controls are measured in interleaved rounds (every control once a round), so a slow spell
of a shared machine falls on all of them alike. Between changes the script waits until the
kernel is idle and the websocket has been quiet for 150 ms.

Where the time goes, as the page sees it: the kernel websocket is wrapped (an init script)
and every frame is stamped with ``performance.now()`` on arrival in, or departure from,
the page. The spans reported (medians) are

* ``in>sent``: input -> the comm message with the new value leaves the page;
* ``sent>rep``: -> the first message back about it (the kernel's "busy" status: it has
  started on it): the page, the server, the kernel's queue;
* ``rep>img``: -> the figure's image data arrives (ipympl's binary frame, or the
  ``Image`` widget's ``value``): the lab's work, the Agg draw, the encoding, the way back;
  for ipympl also its extra round trip (the kernel announces "draw", the page asks for
  the frame), which ``rep>drw`` (until the announcement) and ``drw>img`` split;
* ``img>px``: -> pixels changed: blob, decode, draw in the page.

``--json`` rows also hold every step's median time after the input (``marks_ms``).

A control whose change does not change the picture in the current state is reported as
"no visible change", or "disabled" when the page disables it (decided on its warm-up
change); a change that times out
(``--timeout``) is counted as a failure and reported, never dropped.

The notebooks are copied to a temporary folder (nothing is written back), JupyterLab runs
there on a free 127.0.0.1 port with a token, and it is shut down at the end, also on an
error or Ctrl-C.

Usage::

    python benchmarks/lab_latency.py [--chapters 01 03] [--repeats 8] [--timeout 3]
        [--json] [--pythonpath DIR] [--setup-code CODE | --setup-code @file.py]
        [--chapters-dir DIR | --notebooks NB.ipynb ...]

``--pythonpath DIR`` puts DIR first on the kernel's ``PYTHONPATH`` (measure an older copy
of the package: ``git archive HEAD | tar -x -C /tmp/base``, then ``--chapters-dir
/tmp/base/chapters --pythonpath /tmp/base/src``). ``--setup-code`` inserts a code cell at
the top of every notebook, e.g. to monkeypatch something for an A/B measurement.
``--notebooks`` measures any notebooks (prototypes) instead of the chapters: a lab is any
widget output whose root is a VBox holding controls and a figure (ipympl canvas,
``ipywidgets.Image``, or the canvas ``web/lab.js`` draws in an anywidget: ``canvas.ab-lab-canvas``).
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
QUIET_MS = 150  # kernel idle and no websocket frame for this long = settled
RUN_ALL_MS = 600_000  # a notebook's Run All (chapter 8 trains two models) or it counts as hung

# ------------------------------------------------------------------ in-page JavaScript

# Installed before any page script: stamps every kernel websocket frame.
WS_HOOK = r"""
(() => {
  const Native = window.WebSocket;
  const ws = {log: [], recording: false, lastFrame: 0, status: 'unknown'};
  window.__labws = ws;
  const dec = new TextDecoder();
  const part = (buf, off, i) => dec.decode(new Uint8Array(buf, off[i], off[i + 1] - off[i]));
  function parse(data) {
    if (typeof data === 'string') {
      const m = JSON.parse(data);
      return {channel: m.channel, header: m.header, parent: m.parent_header,
              content: m.content, nbuf: (m.buffers || []).length};
    }
    const buf = ArrayBuffer.isView(data) ? data.buffer.slice(data.byteOffset,
      data.byteOffset + data.byteLength) : data;
    const view = new DataView(buf), n = Number(view.getBigUint64(0, true)), off = [];
    for (let i = 0; i < n; i++) off.push(Number(view.getBigUint64(8 * (i + 1), true)));
    return {channel: part(buf, off, 0), header: JSON.parse(part(buf, off, 1)),
            parent: JSON.parse(part(buf, off, 2)), content: JSON.parse(part(buf, off, 4)),
            nbuf: Math.max(0, n - 6)};  // v1.kernel.websocket.jupyter.org
  }
  function record(dir, data) {
    const t = performance.now();
    ws.lastFrame = t;
    let m;
    try { m = parse(data); } catch (e) { return; }
    const type = m.header && m.header.msg_type;
    if (type === 'status') ws.status = m.content.execution_state;
    if (!ws.recording) return;
    const e = {t, dir, type, id: m.header && m.header.msg_id,
               parent: m.parent && m.parent.msg_id, nbuf: m.nbuf};
    if (type === 'comm_msg') {
      const d = m.content.data || {};
      e.method = d.method;
      if (d.method === 'custom') {
        const c = JSON.stringify(d.content || {});
        if (/\\?"type\\?":\s*\\?"draw\\?"/.test(c)) e.method = 'draw';
        else if (/binary/.test(c)) e.method = 'binary';
      }
    }
    ws.log.push(e);
  }
  class StampedWebSocket extends Native {
    constructor(url, protocols) {
      super(url, protocols);
      this.__kernel = /\/api\/kernels\/[^/]+\/channels/.test(String(url));
      if (this.__kernel) this.addEventListener('message', ev => record('in', ev.data));
    }
    send(data) {
      if (this.__kernel) record('out', data);
      return super.send(data);
    }
  }
  window.WebSocket = StampedWebSocket;
})();
"""

# The harness: finds the labs, changes controls, watches the figures' pixels.
HARNESS = r"""
(() => {
  if (window.__lab) return;
  const ws = window.__labws;
  const CONTROLS = '.widget-slider, .widget-dropdown, .widget-select, .widget-toggle-buttons,'
    + ' .widget-checkbox, .widget-text, .widget-textarea, .widget-button';
  const rec = {armed: false, t0: null};
  const labs = [];
  let pending = null;
  document.addEventListener('keydown', () => {
    if (rec.armed && rec.t0 === null) rec.t0 = performance.now();
  }, true);

  function kindOf(c) {
    if (c.querySelector('.noUi-handle')) return 'slider';
    if (c.querySelector('select[multiple]')) return 'multiselect';
    if (c.querySelector('select')) return 'dropdown';
    if (c.matches('.widget-toggle-buttons')) return 'toggle';
    if (c.querySelector('input[type=checkbox]')) return 'checkbox';
    if (c.querySelector('input[type=text], input:not([type]), textarea')) return 'text';
    if (c.tagName === 'BUTTON') return 'button';
    return null;
  }
  function labelOf(c, kind) {
    const texts = [...c.querySelectorAll('.widget-label, .widget-label-basic span')]
      .map(e => e.textContent.replace(/[\u200b\s]+/g, ' ').trim()).filter(Boolean);
    if (texts.length) return texts[0];
    if (kind === 'button') return c.textContent.trim() || c.title || 'button';
    return kind;
  }
  function watchFigure(lab) {
    if (lab.kind === 'canvas') {
      const ctx = lab.canvas.getContext('2d');
      for (const name of ['drawImage', 'putImageData', 'clearRect', 'fillRect']) {
        const orig = ctx[name];
        ctx[name] = function (...a) { lab.dirty = true; return orig.apply(this, a); };
      }
    } else {
      lab.off = document.createElement('canvas');
      new MutationObserver(() => {
        lab.dirty = true; lab.decoded = false;
        const src = lab.img.src;
        lab.img.decode().then(() => { if (lab.img.src === src) lab.decoded = true; }, () => {});
      }).observe(lab.img, {attributes: true, attributeFilter: ['src']});
    }
  }
  function discover() {
    const figures = document.querySelectorAll(
      '.jp-OutputArea-output .jupyter-matplotlib, .jp-OutputArea-output img.widget-image, ' +
      '.jp-OutputArea-output canvas.ab-lab-canvas');
    for (const fig of figures) {
      const out = fig.closest('.jp-OutputArea-output');
      let root = null;
      for (let el = fig.parentElement; el && el !== out; el = el.parentElement)
        if (el.classList.contains('widget-vbox')) root = el;
      if (!root || labs.some(l => l.root === root)) continue;
      const controls = [...root.querySelectorAll(CONTROLS)]
        .filter(c => !c.closest('.jupyter-matplotlib')
                && !(c.parentElement && c.parentElement.closest(CONTROLS)))
        .map(el => ({el, kind: kindOf(el)})).filter(c => c.kind)
        .map(c => ({...c, label: labelOf(c.el, c.kind)}));
      if (!controls.length) continue;
      const lab = {root, controls, dirty: false, decoded: false};
      if (fig.tagName === 'IMG') { lab.kind = 'img'; lab.img = fig; }
      else { lab.kind = 'canvas'; lab.canvas = fig.tagName === 'CANVAS' ? fig : fig.querySelector('canvas'); }
      watchFigure(lab);
      labs.push(lab);
    }
    return labs.map(l => ({figure: l.kind,
                           controls: l.controls.map(c => ({kind: c.kind, label: c.label}))}));
  }

  function pixels(lab) {
    let c = lab.canvas, ctx;
    if (lab.kind === 'img') {
      const img = lab.img;
      if (!img.complete || !img.naturalWidth) return null;
      c = lab.off; c.width = img.naturalWidth; c.height = img.naturalHeight;
      ctx = c.getContext('2d', {willReadFrequently: true});
      ctx.drawImage(img, 0, 0);
    } else ctx = c.getContext('2d');
    if (!c.width || !c.height) return null;
    const data = ctx.getImageData(0, 0, c.width, c.height).data;
    return {w: c.width, h: c.height, px: new Uint32Array(data.buffer)};
  }
  function differ(a, b) {
    if (!a || !b) return a !== b;
    if (a.w !== b.w || a.h !== b.h) return true;
    const x = a.px, y = b.px;
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return true;
    return false;
  }
  function drawn(lab) {
    const p = pixels(lab);
    return !!p && p.px.some(v => v !== 0);
  }

  function prepare(l, c, dir) {
    const ctl = labs[l].controls[c], el = ctl.el;
    const disabled = el.matches(':disabled') || !!el.querySelector(':disabled, [disabled]');
    if (ctl.kind === 'slider') {
      const h = el.querySelector('.noUi-handle');
      if (ctl.flip === undefined)
        ctl.flip = +h.getAttribute('aria-valuenow') >= +h.getAttribute('aria-valuemax');
      h.focus({preventScroll: true});
      return {disabled, key: (dir > 0) !== ctl.flip ? 'ArrowRight' : 'ArrowLeft'};
    }
    if (ctl.kind === 'text') {
      const input = el.querySelector('input, textarea');
      input.focus({preventScroll: true});
      input.setSelectionRange(input.value.length, input.value.length);
      return {disabled, key: dir > 0 ? 'q' : 'Backspace', value: input.value};
    }
    if (ctl.a === undefined && (ctl.kind === 'dropdown' || ctl.kind === 'toggle')) {
      const items = ctl.kind === 'dropdown' ? [...el.querySelector('select').options]
        : [...el.querySelectorAll('button')];
      ctl.a = ctl.kind === 'dropdown' ? el.querySelector('select').selectedIndex
        : items.findIndex(b => b.classList.contains('mod-active'));
      ctl.b = ctl.a + 1 < items.length ? ctl.a + 1 : ctl.a - 1;
    }
    return {disabled};
  }
  function dispatch(l, c, dir) {
    const ctl = labs[l].controls[c], el = ctl.el;
    const change = target => target.dispatchEvent(new Event('change', {bubbles: true}));
    const index = dir > 0 ? ctl.b : ctl.a;
    if (ctl.kind === 'dropdown') {
      const s = el.querySelector('select');
      rec.t0 = performance.now(); s.selectedIndex = index; change(s);
    } else if (ctl.kind === 'toggle') {
      const b = el.querySelectorAll('button')[index];
      rec.t0 = performance.now(); b.click();
    } else if (ctl.kind === 'checkbox') {
      const box = el.querySelector('input[type=checkbox]');
      rec.t0 = performance.now(); box.click();
    } else if (ctl.kind === 'multiselect') {
      const s = el.querySelector('select');
      const o = s.options[s.options.length - 1];
      rec.t0 = performance.now(); o.selected = !o.selected; change(s);
    } else if (ctl.kind === 'button') {
      rec.t0 = performance.now(); el.click();
    }
  }
  function arm(l, timeout) {
    const lab = labs[l];
    lab.dirty = false;
    const before = pixels(lab);
    Object.assign(rec, {armed: true, t0: null, tArm: performance.now()});
    ws.log.length = 0; ws.recording = true;
    pending = new Promise(resolve => {
      const finish = (t1, why) => {
        rec.armed = false; ws.recording = false;
        resolve({t0: rec.t0, t1, why, events: ws.log.slice()});
      };
      const tick = () => {
        const now = performance.now();
        if (now - (rec.t0 === null ? rec.tArm : rec.t0) > timeout) return finish(null, 'timeout');
        if (rec.t0 !== null && lab.dirty && (lab.kind === 'canvas' || lab.decoded)) {
          lab.dirty = false;
          if (differ(before, pixels(lab))) return finish(now, 'changed');
        }
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
  }
  function quiet(ms, timeout) {
    const start = performance.now();
    return new Promise(resolve => {
      const poll = () => {
        const now = performance.now();
        if (ws.status === 'idle' && now - ws.lastFrame >= ms) return resolve(true);
        if (now - start > timeout) return resolve(false);
        setTimeout(poll, 10);
      };
      poll();
    });
  }
  function textValue(l, c) {
    const input = labs[l].controls[c].el.querySelector('input, textarea');
    return input ? input.value : null;
  }
  function show(l) {
    const lab = labs[l];
    (lab.kind === 'img' ? lab.img : lab.canvas).scrollIntoView({block: 'center'});
  }
  window.__lab = {discover, prepare, dispatch, arm, quiet, show, textValue,
                  drawn: () => labs.every(drawn), result: () => pending};
})();
"""

# Opens the notebook's session, runs every cell, and says which cells failed or never ran:
# Run All stops at a cell error, and a kernel that dies leaves the cells after it unrun with
# no error output. Gives up after ``ms`` (a cell that never returns).
RUN_ALL = r"""
async (ms) => {
  const app = window.jupyterapp;
  await app.restored;
  let panel = null;
  for (let i = 0; i < 600 && !panel; i++) {
    const w = app.shell.currentWidget;
    if (w && w.sessionContext && w.content && w.content.widgets) panel = w;
    else await new Promise(r => setTimeout(r, 100));
  }
  if (!panel) return {error: 'no notebook panel opened'};
  await panel.context.ready;
  await panel.sessionContext.ready;
  const finished = await Promise.race([
    app.commands.execute('notebook:run-all-cells').then(() => true),
    new Promise(resolve => setTimeout(() => resolve(false), ms))]);
  if (!finished) return {error: `Run All did not finish in ${ms / 1000} s`};
  const errors = [];
  panel.content.widgets.forEach((cell, i) => {
    if (cell.model.type !== 'code') return;
    for (const out of cell.model.outputs.toJSON())
      if (out.output_type === 'error') errors.push(`cell ${i}: ${out.ename}: ${out.evalue}`);
    if (cell.model.executionCount === null && cell.model.sharedModel.getSource().trim())
      errors.push(`cell ${i}: not run`);
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

    def api(self, method: str, path: str):
        request = urllib.request.Request(
            f"{self.url}{path}", method=method,
            headers={"Authorization": f"token {self.token}"},
            data=b"" if method == "POST" else None)
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


def shutdown_sessions(server: Server) -> None:
    for session in server.api("GET", "/api/sessions") or []:
        with contextlib.suppress(Exception):
            server.api("DELETE", f"/api/sessions/{session['id']}")


# ------------------------------------------------------------------ notebooks


def pick_notebooks(args) -> list[Path]:
    if args.notebooks:
        return [Path(p) for p in args.notebooks]
    found = sorted(Path(args.chapters_dir).glob("*.ipynb"))
    if args.chapters:
        found = [p for p in found if any(p.name.startswith(c) for c in args.chapters)]
    return found


def copy_notebooks(sources: list[Path], root: Path, setup_code: str | None) -> list[Path]:
    """Copies of ``sources`` in ``root``, each with ``setup_code`` as a first cell."""
    copies = []
    for source in sources:
        notebook = json.loads(source.read_text())
        if setup_code:
            cell = {"cell_type": "code", "metadata": {}, "source": setup_code,
                    "outputs": [], "execution_count": None}
            if notebook.get("nbformat_minor", 0) >= 5:
                cell["id"] = "lab-latency-setup"
            notebook["cells"].insert(0, cell)
        copy = root / source.name
        copy.write_text(json.dumps(notebook))
        copies.append(copy)
    return copies


# ------------------------------------------------------------------ measuring


@dataclass
class Options:
    repeats: int
    timeout_ms: float


def open_and_run(context, server: Server, notebook: Path, index: int, errors: list):
    """A page with ``notebook`` open, all cells run, the kernel idle, the figures drawn.

    Every uncaught page error and console error of the page, from opening on, is appended
    to ``errors`` (a reader sees none of them, but each is a bug: the test fails on them).
    """
    page = context.new_page()
    page.on("pageerror", lambda err: errors.append(f"page error: {err}"))
    page.on("console", lambda msg: msg.type == "error" and errors.append(
        f"console error: {msg.text} ({msg.location.get('url', '')})"))
    page.goto(f"{server.url}/lab/workspaces/bench{index}/tree/{notebook.name}"
              f"?token={server.token}", wait_until="load")
    page.wait_for_function("() => window.jupyterapp", timeout=120_000)
    outcome = page.evaluate(RUN_ALL, RUN_ALL_MS)
    if outcome.get("error") or outcome.get("errors"):
        raise RuntimeError(f"{notebook.name}: {outcome.get('error') or outcome['errors']}")
    page.evaluate(HARNESS)
    page.evaluate("([ms, t]) => __lab.quiet(ms, t)", [1000, 60_000])
    labs = page.evaluate("() => __lab.discover()")
    page.wait_for_function("() => __lab.drawn()", timeout=60_000, polling=200)
    return page, labs


def change(page, lab: int, control: int, direction: int, options: Options) -> dict:
    """One control change, timed in the page; returns t0, t1 (None on timeout), events."""
    prep = page.evaluate("([l, c, d]) => __lab.prepare(l, c, d)", [lab, control, direction])
    if prep["disabled"]:  # nothing can change: do not wait for the timeout
        return {"t0": None, "t1": None, "why": "disabled", "events": [], "disabled": True}
    page.evaluate("([l, t]) => __lab.arm(l, t)", [lab, options.timeout_ms])
    if "key" in prep:
        page.keyboard.press(prep["key"])
    else:
        page.evaluate("([l, c, d]) => __lab.dispatch(l, c, d)", [lab, control, direction])
    result = page.evaluate("() => __lab.result()")
    page.evaluate("([ms, t]) => __lab.quiet(ms, t)", [QUIET_MS, 30_000])
    if "value" in prep and page.evaluate("([l, c]) => __lab.textValue(l, c)",
                                         [lab, control]) == prep["value"]:
        result["why"] = "input not accepted"
        result["t1"] = None
    result["disabled"] = prep["disabled"]
    return result


def _first(events, **match):
    return next((e for e in events if all(e.get(k) == v for k, v in match.items())), None)


def marks(result: dict) -> dict:
    """When each step of one change happened, in ms after the input (steps not seen: absent).

    sent: the comm message with the new value left the page; rep: the first message back
    about it (the kernel's "busy": it started on it); echo: ipywidgets' ``echo_update`` of
    the value; drw: ipympl's "draw" announcement; dreq, dbusy: the page's request for the
    frame left, the kernel started on it; img: the figure's image data arrived; px: the
    pixels changed.
    """
    t0 = result["t0"]
    events = [e for e in result["events"] if e["t"] >= t0]
    found = {"sent": _first(events, dir="out", type="comm_msg")}
    if found["sent"]:
        sent_id = found["sent"]["id"]
        inbound = [e for e in events if e["dir"] == "in" and e["t"] >= found["sent"]["t"]]
        found["rep"] = _first(inbound, parent=sent_id)
        found["echo"] = _first(inbound, method="echo_update", parent=sent_id)
        found["drw"] = _first(inbound, method="draw")
        found["img"] = next((e for e in inbound if e["type"] == "comm_msg" and e["nbuf"]), None)
        found["dreq"] = _first(events, dir="out", method="draw")
        if found["dreq"]:
            found["dbusy"] = _first(inbound, type="status", parent=found["dreq"]["id"])
    steps = {name: e["t"] - t0 for name, e in found.items() if e}
    steps["px"] = result["t1"] - t0
    return steps


SPANS = {"in>sent": ("t0", "sent"), "sent>rep": ("sent", "rep"), "rep>img": ("rep", "img"),
         "img>px": ("img", "px"), "rep>drw": ("rep", "drw"), "drw>img": ("drw", "img")}


def segments(steps: dict) -> dict:
    """The table's spans (ms) between the steps of :func:`marks`."""
    steps = {"t0": 0.0, **steps}
    return {name: steps[b] - steps[a] for name, (a, b) in SPANS.items()
            if a in steps and b in steps}


@dataclass
class Control:
    """One control of one lab and what was measured on it."""

    lab: int
    index: int
    row: dict
    times: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    steps: list = field(default_factory=list)

    def record(self, result: dict) -> None:
        if result["t1"] is None:
            self.failures.append(result["why"])
        else:
            self.times.append(round(result["t1"] - result["t0"], 1))
            self.steps.append(marks(result))

    def summary(self) -> dict:
        if self.failures and not self.times:
            self.row["status"] = "failed"
        return {**self.row, "times": self.times, "failures": self.failures,
                "segments": _medians([segments(m) for m in self.steps]),
                "marks": _medians(self.steps)}


def _medians(dicts: list[dict]) -> dict:
    keys = dict.fromkeys(k for d in dicts for k in d)
    return {k: round(statistics.median(d[k] for d in dicts if k in d), 1) for k in keys}


def measure_labs(page, controls: list[Control], options: Options) -> None:
    """Warm up every control, then measure them in rounds, interleaved.

    Each control changes forward then back (the lab returns to its state after every
    pair), and one round visits every control, so a slow spell of the machine is shared
    by all of them instead of falling on one.
    """
    def step(control, direction, keep):
        page.evaluate("(l) => __lab.show(l)", control.lab)
        result = change(page, control.lab, control.index, direction, options)
        if keep:
            control.record(result)
        return result

    active = []
    for control in controls:  # warm-up: forward and back, unmeasured
        warm, back = step(control, +1, False), step(control, -1, False)
        if warm["t1"] is None:
            control.row["status"] = "disabled" if warm["disabled"] else "no visible change"
        else:
            active.append(control)
            control.row["status"] = "ok" if back["t1"] is not None else "failed (back)"
    for k in range(0, options.repeats, 2):
        for control in active:
            step(control, +1, True)
            step(control, -1, k + 1 < options.repeats)


def measure_notebook(context, server: Server, notebook: Path, index: int,
                     options: Options, errors: list) -> list[dict]:
    page, labs = open_and_run(context, server, notebook, index, errors)
    controls = []
    for l, lab in enumerate(labs):
        name = f"{l + 1}: {lab['controls'][0]['label']}"
        for c, control in enumerate(lab["controls"]):
            controls.append(Control(l, c, {
                "chapter": notebook.stem, "lab": name, "figure": lab["figure"],
                "control": control["label"], "kind": control["kind"]}))
    try:
        measure_labs(page, controls, options)
    finally:
        page.close()
    if not labs:
        return [{"chapter": notebook.stem, "lab": "-", "figure": "-", "control": "-",
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
            "chapter", "lab", "figure", "control", "kind", "status")},
            "n": len(times), "failures": len(row.get("failures", [])),
            "median_ms": statistics.median(times) if times else None,
            "min_ms": min(times) if times else None, "max_ms": max(times) if times else None,
            "segments_ms": row.get("segments", {}), "marks_ms": row.get("marks", {}),
            "times_ms": times}
        out.append(summary)
        if times:
            labs.setdefault((row["chapter"], row["lab"]), []).append(summary)
            chapters.setdefault(row["chapter"], []).extend(times)
    for (chapter, lab), controls in labs.items():
        times = [t for c in controls for t in c["times_ms"]]
        out.append({"row": "lab", "chapter": chapter, "lab": lab,
                    "median_ms": statistics.median(c["median_ms"] for c in controls),
                    "min_ms": min(times), "max_ms": max(times), "n": len(times)})
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
    head = (f"{'chapter':<24}{'lab':<22}{'control':<22}{'n':>3}{'fail':>5}{'median':>8}"
            f"{'min':>6}{'max':>6}  " + "".join(f"{s:>9}" for s in SPANS))
    print(head)
    print("-" * len(head))
    for r in summary:
        if r["row"] == "control":
            segs = "".join(f"{_ms(r['segments_ms'].get(s)):>9}" for s in SPANS)
            note = "" if r["status"] == "ok" else f"  ({r['status']})"
            print(f"{r['chapter'][:23]:<24}{r['lab'][:21]:<22}{r['control'][:21]:<22}"
                  f"{r['n']:>3}{r['failures']:>5}{_ms(r['median_ms']):>8}{_ms(r['min_ms']):>6}"
                  f"{_ms(r['max_ms']):>6}  {segs}{note}")
    print("\nper lab: median of its controls' medians (min, max over all its changes)")
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
    parser.add_argument("--pythonpath", metavar="DIR", help="put DIR first on the kernel's path")
    parser.add_argument("--setup-code", metavar="CODE",
                        help="a first code cell for every notebook (@FILE reads it from FILE)")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    args = parser.parse_args(argv)
    if args.repeats < 0:
        parser.error("--repeats must be 0 or more")
    if args.setup_code and args.setup_code.startswith("@"):
        args.setup_code = Path(args.setup_code[1:]).read_text()
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
            setup_code: str | None = None, browser=None) -> tuple[list[dict], dict]:
    """Open and run each notebook in JupyterLab, then change every control of its labs.

    Returns the control rows (for :func:`summarize`) and, per notebook stem, the page's
    uncaught errors and console errors (empty lists when there were none). With
    ``options.repeats`` 0 every control is still moved forward and back once (the warm-up),
    unmeasured: what tests/test_jupyterlab.py runs. ``browser``: a playwright chromium to
    use instead of launching one.
    """
    rows, errors = [], {}
    with tempfile.TemporaryDirectory(prefix="lab-latency-") as tmp:
        root, state = Path(tmp) / "notebooks", Path(tmp) / "state"
        root.mkdir()
        state.mkdir()
        copies = copy_notebooks(notebooks, root, setup_code)
        with jupyter_lab(root, state, pythonpath) as server, chromium(browser) as browser:
            for index, notebook in enumerate(copies):
                context = browser.new_context(viewport=VIEWPORT)
                context.add_init_script(WS_HOOK)
                found = errors.setdefault(notebook.stem, [])
                try:
                    rows += measure_notebook(context, server, notebook, index, options,
                                             found)
                except (RuntimeError, PlaywrightError) as err:  # report it, go on
                    print(err, file=sys.stderr)
                    rows.append({"chapter": notebook.stem, "lab": "-", "figure": "-",
                                 "control": "-", "kind": "-",
                                 "status": f"error: {str(err).splitlines()[0][:120]}"})
                finally:
                    context.close()
                    shutdown_sessions(server)
    return rows, errors


def main(argv=None) -> int:
    args = parse_args(argv)
    notebooks = pick_notebooks(args)
    if not notebooks:
        print("no notebooks to measure", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _terminate)
    load_before = os.getloadavg()
    rows, errors = measure(notebooks, Options(args.repeats, args.timeout * 1000),
                           pythonpath=args.pythonpath, setup_code=args.setup_code)
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
        raise SystemExit(130)
