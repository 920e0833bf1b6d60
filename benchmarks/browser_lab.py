"""What a reader of the HTML book feels when a lab computes in the browser: from a control's
input event to the frame that shows the new state, per control, in headless chromium.

Every lab whose scene has a state module (``Scene.web``; drawn by ``web/lab.js``), or those
named with ``--labs``, is opened as a page of its own (``controls.web.standalone_html``: the
same element and scripts the book serves) or, with ``--site DIR``, in the built book over
http. For every control, at the default state and at the lab's largest state (:data:`LARGEST`:
the most tokens it shows, the widest d), the page changes the control ``--repeats`` times
(between two values, forward and back; a text between two sentences; each input at a random
moment within a frame, the next one only after the last was painted) and records with
``performance.now()``:

* ``input``: in the control's ``input`` listener (lab.js's own, which computes the state
  and draws it at once);
* ``drawn``: when that drawing is done (a state that arrives as a Promise, chapter 9's
  model in a worker: when it has arrived and been drawn), so input -> drawn is the work:
  the state function, the figure and the canvas draw;
* ``painted``: in the next ``requestAnimationFrame`` callback: the start of the frame that
  paints the change (the canvas was drawn before it), so input -> painted is what the
  reader waits for, up to the paint itself;
* with ``--cpu``, ``cpu``: from a chromium trace of the changes, the CPU time of the renderer
  main thread's task of each change (the one that dispatched ``ab-lab-drawn``) and of the
  canvas's raster run right after it (``CanvasRenderingContext2D::FinalizeFrame``), before
  the frame: wall times grow with the machine's load, this much less (``--controls`` picks
  controls by name).

Target: median input -> painted under 16 ms (one frame) for every control. Quote medians; the
machine is shared, so the load average is printed before and after.

``--pages`` (with ``--site``) measures instead each built page's load (every page of the
book, or those named): from navigation until the page is idle (every lab drawn, MathJax's
``startup.promise`` resolved, attention-book.js's tab stops done, and 1 s more), its longest
main-thread task, ``--loads`` times a page, the pages interleaved, each load in a fresh browser
context (a first visit: nothing cached). Two views of each load:

* ``longest``: the longest task the page itself sees (PerformanceObserver 'longtask',
  buffered), in wall-clock ms, which is what a reader waits; on a shared machine it grows
  with the load average, printed beside it;
* ``cpu``: from a chromium trace of the same load (devtools.timeline), the renderer main
  thread's CPU time of its costliest task, which the other processes on the machine inflate
  much less, and what that task was: its CPU split into script (by file; ``js`` alone is a
  callback of an inline script, MathJax's batches), style, layout, paint, gc.

The issue's target: no task over 100 ms; the pages whose median longest task exceeds it are
listed. ``--baseline DIR`` loads each page from a second build right after (an A/B under the
same load). ``--busy N`` runs N processes that spin on the CPU during the loads, as a reader's
other tabs and programs would (the machine has ``os.cpu_count()`` cores).

Usage::

    python benchmarks/browser_lab.py [--labs positional attention] [--controls d seed]
                                     [--repeats 20] [--site _build/html] [--cpu] [--json]
    python benchmarks/browser_lab.py --site _build/html --pages [chapters/03_attention ...]
                                     [--loads 5] [--busy 1] [--json]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from attention_book.controls import web_lab
from attention_book.controls.web import standalone_html
from attention_book.web_export import DATA, write_data
from attention_book.scenes import SCENES

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
WORDS = "the cat saw the dog near a river and the weather is lovely today so we".split()


def sentence(n: int) -> str:
    """A sentence of ``n`` words of the book's vocabulary."""
    return " ".join(WORDS[i % len(WORDS)] for i in range(n))


#: Each lab's largest state: the most tokens it shows, the widest model.
LARGEST = {
    "positional": {"s": 512, "d": 512},
    "embedding": {"text": sentence(32), "d": 64},
    "scaling": {"d_k": 512},
    "attention": {"text": sentence(128), "mode": "cross", "kv_text": sentence(128), "d_k": 64},
    "multihead": {"text": sentence(32), "d": 64, "h": 16, "heads_on": list(range(16)),
                  "positional": True},
    "permutation": {"text": sentence(128), "pe": True, "causal": True},
    "masking": {"text": sentence(32), "kind": "band", "lower": 16, "upper": 16},
    "block": {"text": sentence(32), "depth": 12},
    "training": {"task": "induction", "induction_input": " ".join(str(i % 32) for i in range(24))},
    "generation": {"prompt": "5", "n": 23, "t": 23, "temperature": 1.0},  # 24 positions, sampled
}

# In the page: set the lab to `start`, then change control `name` between the two values of
# `pair` `repeats` times; each change fires "input" at a random moment of a frame and waits
# until the frame after the draw.
TIME_JS = r"""async ([labId, name, start, pair, repeats]) => {
  const el = document.getElementById(labId), lab = el.abLab;
  const frame = () => new Promise(r => requestAnimationFrame(r));
  async function change(control, value) {
    const drawn = new Promise(r => el.addEventListener("ab-lab-drawn", e => r(e.detail), {once: true}));
    lab.set(control, value);
    const d = await drawn;
    await frame();
    return {input: d.input, drawn: d.drawn, painted: performance.now()};
  }
  for (const [control, value] of Object.entries(start)) { await change(control, value); }
  await change(name, pair[1]);  // warm-up, forward and back
  await change(name, pair[0]);
  const rows = [];
  for (let n = 0; n < repeats; n++) {
    await new Promise(r => setTimeout(r, Math.random() * 16));
    const t = await change(name, pair[(n + 1) % 2]);
    rows.push({drawn: t.drawn - t.input, painted: t.painted - t.input});
  }
  return rows;
}"""


def pair_for(scene, control, start: dict) -> tuple:
    """Two values of ``control`` to move between: where ``start`` has it and a neighbour (a
    text: that text and one word more; a selection: all but the last, and all)."""
    at_start = start.get(control.name, control.default)
    if control.kind == "text":
        return (at_start, at_start + " again")
    if control.kind == "multi":
        every = list(start.get(control.name, control.default))
        return (every[:-1] or every, every)
    if control.options_for is not None:  # the choices follow other controls: the first two
        values = [v for _, v in control.options_for({**scene.defaults, **start})]
    else:
        values = list(control.values)
    at = values.index(at_start) if at_start in values else 0
    return (values[at], values[at - 1] if at == len(values) - 1 else values[at + 1])


#: Every long task (over 50 ms) of the page, from its first script on.
LONG_TASKS_JS = r"""
globalThis.__abLongTasks = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) { globalThis.__abLongTasks.push(e.duration); }
}).observe({type: "longtask", buffered: true});
"""


def serve(folder: Path):
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def chapter_of(name: str, site: Path) -> str:
    """The built page that shows lab ``name``."""
    for page in sorted((site / "chapters").glob("*.html")):
        if f'data-ab-lab="{name}"' in page.read_text(encoding="utf-8"):
            return f"chapters/{page.name}"
    raise SystemExit(f"no built page shows the lab {name!r} in {site}")


#: What --cpu traces: the tasks, and (blink) the canvas's raster after each task.
CPU_CATEGORIES = "devtools.timeline,toplevel,blink"
FINALIZE = "CanvasRenderingContext2D::FinalizeFrame"


def change_cpu(events: list[dict]) -> list[float]:
    """The CPU ms of each change: the renderer main thread's task that dispatched
    ``ab-lab-drawn`` (the state, the drawing) and the canvas's raster that follows it before
    the next task (FinalizeFrame: run once a task is done, outside its trace event), in order."""
    drawn = [e for e in events if e.get("name") == "EventDispatch"
             and ((e.get("args") or {}).get("data") or {}).get("type") == "ab-lab-drawn"]
    if not drawn:
        return []
    thread = (drawn[0]["pid"], drawn[0]["tid"])
    tops = []  # the outermost events: tasks, and the rasters between them
    for e in sorted((e for e in events if (e.get("pid"), e.get("tid")) == thread
                     and e.get("ph") == "X" and e.get("name") in (*TASK, FINALIZE)),
                    key=lambda e: (e["ts"], -e["dur"])):
        if not tops or e["ts"] >= tops[-1]["ts"] + tops[-1]["dur"]:
            tops.append(e)
    cpu = []
    for k, t in enumerate(tops):
        if t["name"] in TASK and any(t["ts"] <= d["ts"] <= t["ts"] + t["dur"] for d in drawn):
            after = tops[k + 1] if k + 1 < len(tops) else None
            raster = after.get("tdur", 0) if after and after["name"] == FINALIZE else 0
            cpu.append((t.get("tdur", 0) + raster) / 1000)
    return cpu


def measure(labs, repeats: int = 20, site: Path | None = None, controls=None,
            cpu: bool = False) -> list[dict]:
    server = serve(site) if site is not None else None
    rows = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        for name in labs:
            scene = SCENES[name]
            if site is None:
                page_file = Path(tmp) / f"{name}.html"
                data = Path(tmp) / "data"
                if scene.web in DATA:  # the data scripts the book's build writes
                    write_data(scene.web, data)
                page_file.write_text(standalone_html(web_lab(name), data=data), encoding="utf-8")
                url = page_file.as_uri()
            else:
                url = f"http://127.0.0.1:{server.server_address[1]}/{chapter_of(name, site)}"
            page = browser.new_page(viewport={"width": 1280, "height": 900},
                                    device_scale_factor=2)
            page.add_init_script(LONG_TASKS_JS)
            page.goto(url)
            lab_id = page.locator(f".ab-lab[data-ab-lab={name}]").first.get_attribute("id")
            page.wait_for_function(f"document.getElementById('{lab_id}').abLab")
            page.evaluate("new Promise(r => setTimeout(r, 200))")
            # the page's load: its longest task (chapter 3's goal: at most 100 ms)
            rows.append({"lab": name, "state": "load", "control": "(page load)",
                         "longest_task_ms": max(page.evaluate("globalThis.__abLongTasks"),
                                                default=0)})
            largest = LARGEST.get(name, {})
            for where, start in (("default", {}), ("largest", largest)):
                for control in scene.controls:
                    if controls and control.name not in controls:
                        continue
                    if where == "largest" and control.name in largest and control.kind in (
                            "slider", "choice") and control.options_for is None:
                        values = list(control.values)  # down from the largest and back
                        at = values.index(largest[control.name])
                        pair = (values[at], values[at - 1] if at else values[1])
                    else:
                        pair = pair_for(scene, control, start)
                    if cpu:
                        cdp = page.context.new_cdp_session(page)
                        events, traced = [], threading.Event()
                        cdp.on("Tracing.dataCollected", lambda m, events=events: events.extend(m["value"]))
                        cdp.on("Tracing.tracingComplete", lambda m, traced=traced: traced.set())
                        cdp.send("Tracing.start", {"categories": CPU_CATEGORIES,
                                                   "transferMode": "ReportEvents"})
                    times = page.evaluate(TIME_JS, [lab_id, control.name, start, list(pair),
                                                    repeats])
                    if cpu:
                        cdp.send("Tracing.end")
                        while not traced.is_set():
                            page.wait_for_timeout(50)
                        cdp.detach()
                    row = {"lab": name, "state": where, "control": control.name,
                           "values": [str(v)[:12] for v in pair], "n": len(times)}
                    for key in ("drawn", "painted"):
                        series = [t[key] for t in times]
                        row[f"{key}_median_ms"] = round(statistics.median(series), 2)
                        row[f"{key}_max_ms"] = round(max(series), 2)
                    if cpu:  # the measured changes: the last ones traced
                        changes = change_cpu(events)[-repeats:]
                        row["cpu_median_ms"] = round(statistics.median(changes), 2) if changes else None
                    rows.append(row)
            page.close()
        browser.close()
    if server is not None:
        server.shutdown()
    return rows


#: Until the page is idle: every lab drawn, MathJax done, attention-book.js's tab stops set.
IDLE_JS = r"""async () => {
  const until = async (ok) => { while (!ok()) { await new Promise(r => setTimeout(r, 50)); } };
  await until(() => [...document.querySelectorAll('.ab-lab')].every(e => e.abLab && e.abLab.draws > 0));
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  await until(() => document.documentElement.dataset.abAccessible === "done");
  await new Promise(r => setTimeout(r, 1000));
}"""

TRACE_CATEGORIES = "devtools.timeline,toplevel"
TASK = ("ThreadControllerImpl::RunTask", "RunTask")
SCRIPTED = ("EvaluateScript", "FunctionCall", "TimerFire", "FireAnimationFrame", "EventDispatch",
            "RunMicrotasks")
KINDS = {"UpdateLayoutTree": "style", "ParseAuthorStyleSheet": "style", "Layout": "layout",
         "PrePaint": "paint", "Paint": "paint", "Layerize": "paint", "Commit": "paint",
         "HitTest": "paint", "ParseHTML": "html", "MinorGC": "gc", "MajorGC": "gc"}


def _script(event) -> str:
    data = (event.get("args") or {}).get("data") or {}
    url = data.get("url") or "" if isinstance(data, dict) else ""
    return url.split("?")[0].rsplit("/", 1)[-1]


def main_thread_tasks(events: list[dict], page_url: str) -> list[dict]:
    """The top-level tasks of the page's renderer main thread in a chromium trace: each one's
    wall and CPU ms and its CPU split by kind (script by file, style, layout, paint, gc)."""
    mains = {(e["pid"], e["tid"]) for e in events if e.get("ph") == "M"
             and e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}
    mine = {(e["pid"], e["tid"]) for e in events if e.get("name") == "ParseHTML"
            and page_url in str((e.get("args") or {}).get("beginData", {}).get("url", ""))}
    evs = sorted((e for e in events if (e.get("pid"), e.get("tid")) in mains & mine
                  and e.get("ph") == "X" and "dur" in e), key=lambda e: (e["ts"], -e["dur"]))
    roots, stack = [], []
    for e in evs:  # nest by time
        e["kids"] = []
        while stack and e["ts"] + e["dur"] > stack[-1]["ts"] + stack[-1]["dur"] + 1:
            stack.pop()
        (stack[-1]["kids"] if stack else roots).append(e)
        stack.append(e)

    def split(event, script, into):
        name = event["name"]
        script = (_script(event) or script) if name in SCRIPTED else script
        kind = KINDS.get(name) or ("gc" if name.startswith("V8.GC") else None)
        if kind is None:
            kind = (f"js {script or '(promise callbacks)'}" if script or name in SCRIPTED
                    else "other")
        own = event.get("tdur", 0) - sum(k.get("tdur", 0) for k in event["kids"])
        into[kind] = into.get(kind, 0) + max(own, 0) / 1000
        for kid in event["kids"]:
            split(kid, script, into)
        return into

    return [{"wall_ms": e["dur"] / 1000, "cpu_ms": e.get("tdur", 0) / 1000,
             "what": {k: round(v, 1) for k, v in sorted(split(e, "", {}).items(),
                                                       key=lambda kv: -kv[1]) if v >= 1}}
            for e in roots if e["name"] in TASK]


def describe(task: dict, parts: int = 4) -> str:
    return ", ".join(f"{k} {v:.0f}" for k, v in list(task["what"].items())[:parts])


def book_pages(site: Path) -> list[str]:
    """Every page of the book: the site's pages but the theme's own and the root's redirect."""
    return sorted(str(p.relative_to(site).with_suffix("")) for p in
                  [*site.glob("*.html"), *site.glob("chapters/*.html")]
                  if p.name not in ("index.html", "search.html", "genindex.html"))


def spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def page_loads(site: Path, pages: list[str], loads: int = 5, busy: int = 0,
               baseline: Path | None = None) -> list[dict]:
    """Each page's load ``loads`` times (pages interleaved, and with a ``baseline`` site each
    load of a page is followed by the same page's load from it): its longest task, wall and
    CPU."""
    import multiprocessing

    sites = {"": site, **({"baseline": baseline} if baseline else {})}
    servers = {label: serve(folder) for label, folder in sites.items()}
    names = pages or book_pages(site)
    spinners = [multiprocessing.Process(target=spin, args=(24 * 3600,), daemon=True)
                for _ in range(busy)]
    for s in spinners:
        s.start()
    rows = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            for n in range(loads):
                for name, label in ((name, label) for name in names for label in sites):
                    path = f"{name}.html"
                    port = servers[label].server_address[1]
                    context = browser.new_context(viewport={"width": 1280, "height": 900})
                    page = context.new_page()
                    page.add_init_script(LONG_TASKS_JS)
                    cdp = context.new_cdp_session(page)
                    events, traced = [], threading.Event()
                    cdp.on("Tracing.dataCollected", lambda m, events=events: events.extend(m["value"]))
                    cdp.on("Tracing.tracingComplete", lambda m, traced=traced: traced.set())
                    cdp.send("Tracing.start", {"categories": TRACE_CATEGORIES,
                                               "transferMode": "ReportEvents"})
                    load = os.getloadavg()[0]
                    page.goto(f"http://127.0.0.1:{port}/{path}",
                              wait_until="load", timeout=120_000)
                    page.evaluate(IDLE_JS)
                    long_tasks = page.evaluate("globalThis.__abLongTasks")
                    cdp.send("Tracing.end")
                    while not traced.is_set():
                        page.wait_for_timeout(50)
                    tasks = main_thread_tasks(events, path)
                    wall = max(tasks, key=lambda t: t["wall_ms"])
                    cpu = max(tasks, key=lambda t: t["cpu_ms"])
                    rows.append({"page": name, "site": label, "load_n": n,
                                 "loadavg": round(load, 2),
                                 "long_tasks": len(long_tasks),
                                 "longest_task_ms": round(max(long_tasks, default=0)),
                                 "longest_traced_ms": round(wall["wall_ms"]),
                                 "longest_was": describe(wall),
                                 "cpu_ms": round(cpu["cpu_ms"]), "cpu_was": describe(cpu)})
                    context.close()
            browser.close()
    finally:
        for s in spinners:
            s.terminate()
        for server in servers.values():
            server.shutdown()
    return rows


def summarise_loads(rows: list[dict], limit: float = 100) -> list[str]:
    """A line a page: the median longest task [min-max] and CPU, what the costliest was."""
    lines = [f"{'page':36} {'longest task ms':>20} {'its CPU ms':>16}  load   "
             "costliest task (CPU ms)"]
    over = []
    for name, label in dict.fromkeys((r["page"], r.get("site", "")) for r in rows):
        mine = [r for r in rows if r["page"] == name and r.get("site", "") == label]
        name = f"{name} ({label})" if label else name
        wall = [r["longest_task_ms"] for r in mine]
        cpu = [r["cpu_ms"] for r in mine]
        worst = max(mine, key=lambda r: r["cpu_ms"])
        loadavg = statistics.median(r["loadavg"] for r in mine)
        if statistics.median(wall) > limit:
            over.append(name)
        lines.append(f"{name:36} {statistics.median(wall):6.0f} [{min(wall):4}-{max(wall):4}] "
                     f"{statistics.median(cpu):5.0f} [{min(cpu):3}-{max(cpu):3}] {loadavg:5.1f}  "
                     f"{worst['cpu_was']}")
    lines.append(f"median longest task over {limit:.0f} ms: {', '.join(over) or 'none'}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labs", nargs="*", help="scene names (default: every browser lab)")
    parser.add_argument("--controls", nargs="*", help="control names (default: every one)")
    parser.add_argument("--cpu", action="store_true",
                        help="also each change's CPU ms on the page's main thread (a trace)")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--site", type=Path, help="a built book's _build/html")
    parser.add_argument("--json", action="store_true", help="one JSON object a row")
    parser.add_argument("--pages", nargs="*", help="with --site: the load of these pages (paths "
                        "without .html, e.g. chapters/03_attention; none named: every page)")
    parser.add_argument("--loads", type=int, default=5, help="--pages: loads of each page")
    parser.add_argument("--busy", type=int, default=0,
                        help="--pages: processes spinning on the CPU during the loads")
    parser.add_argument("--baseline", type=Path, help="--pages: another build of the book "
                        "(e.g. main's _build/html), each page loaded from it after --site's")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    if args.pages is not None:
        if args.site is None:
            parser.error("--pages needs --site")
        rows = page_loads(args.site.resolve(), args.pages, args.loads, args.busy,
                          args.baseline.resolve() if args.baseline else None)
        print(f"page loads over http, {args.loads} each, {args.busy} busy processes, "
              f"{os.cpu_count()} cores (load {load:.2f} -> {os.getloadavg()[0]:.2f}): the longest "
              "task (longtask observer, median [min-max]), the CPU of the costliest (trace)")
        if args.json:
            for r in rows:
                print(json.dumps(r))
        print("\n".join(summarise_loads(rows)))
        return 0
    labs = args.labs or [name for name, scene in SCENES.items() if scene.web]
    rows = measure(labs, args.repeats, args.site, args.controls, args.cpu)
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    print(f"{len(labs)} labs in chromium, {args.repeats} changes a control "
          f"(load {load:.2f} -> {os.getloadavg()[0]:.2f})")
    print(f"{'lab':12} {'state':8} {'control':15} | {'input->drawn (work)':>19} | "
          f"{'input->painted':>18}" + (" | task CPU" if args.cpu else ""))
    print(f"{'':12} {'':8} {'':15} | {'median':>9} {'max':>9} | {'median':>8} {'max':>9}"
          + (" |   median" if args.cpu else ""))
    for r in rows:
        if r["state"] == "load":
            print(f"{r['lab']:12} {'load':8} {'longest task':15} | {r['longest_task_ms']:9.0f} ms")
            continue
        cpu = r.get("cpu_median_ms")
        print(f"{r['lab']:12} {r['state']:8} {r['control']:15} | "
              f"{r['drawn_median_ms']:9.1f} {r['drawn_max_ms']:9.1f} | "
              f"{r['painted_median_ms']:8.1f} {r['painted_max_ms']:9.1f}"
              + (f" | {cpu:8.1f}" if cpu is not None else ""))
    slow = [r for r in rows if r.get("painted_median_ms", 0) >= 16]
    print("every median input->painted under 16 ms" if not slow else
          f"{len(slow)} controls at or over 16 ms median")
    return 0


if __name__ == "__main__":
    sys.exit(main())
