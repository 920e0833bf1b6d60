"""What a reader of the HTML book feels when a lab computes in the browser: from a control's
input event to the frame that shows the new state, per control, in headless chromium.

The lab (chapter 2's, ``web/positional.js`` drawn by ``web/lab.js``) is opened as a page of
its own (``controls.web.standalone_html``: the same element and scripts the book serves) or,
with ``--site DIR``, in the built book over http. For every control, at the default state
and at the largest state (s = 512, d = 512), the page changes the control ``--repeats``
times (forward and back, each input at a random moment within a frame, the next one only
after the last was painted) and records with ``performance.now()``:

* ``input``: in the control's ``input`` listener (lab.js's own);
* ``drawn``: at the end of the lab's ``requestAnimationFrame`` callback that computed the
  state and drew it (the frame that paints it starts right after);
* ``painted``: in the next ``requestAnimationFrame`` callback (the frame after the drawn one:
  an upper bound, one frame late at most);
* ``work``: ``drawn`` minus the callback's start: the state function, the figure and the
  canvas draw, without the wait for the frame.

Target: median input -> drawn under 16 ms (one frame) for every control. Quote medians; the
machine is shared, so the load average is printed before and after.

Usage::

    python benchmarks/browser_lab.py [--repeats 20] [--site _build/html] [--json]
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
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from attention_book.controls import web_lab  # noqa: E402
from attention_book.controls.web import standalone_html  # noqa: E402
from attention_book.scenes import SCENES  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
LARGEST = {"s": 512, "d": 512}

# In the page: set the lab to `start`, then change control `index` between two values
# `repeats` times; each change fires "input" at a random moment of a frame and waits until
# the frame after the draw.
TIME_JS = r"""async ([labId, index, start, pair, repeats]) => {
  const el = document.getElementById(labId), lab = el.abLab, decl = lab.declaration;
  const frame = () => new Promise(r => requestAnimationFrame(r));
  function set(i, value) {
    const c = decl.controls[i], input = lab.controls[i];
    input.value = String(c.range ? value : c.values.indexOf(value));
    input.dispatchEvent(new Event("input", {bubbles: true}));
  }
  async function change(i, value) {
    const drawn = new Promise(r => el.addEventListener("ab-lab-drawn", e => r(e.detail), {once: true}));
    set(i, value);
    const d = await drawn;
    await frame();
    return {input: d.input, drawn: d.drawn, work: d.drawn - d.frame, painted: performance.now()};
  }
  for (const [name, value] of Object.entries(start)) {
    const i = decl.controls.findIndex(c => c.name === name);
    await change(i, value);
  }
  await change(index, pair[1]);  // warm-up, forward and back
  await change(index, pair[0]);
  const rows = [];
  for (let n = 0; n < repeats; n++) {
    await new Promise(r => setTimeout(r, Math.random() * 16));
    const t = await change(index, pair[(n + 1) % 2]);
    rows.push({drawn: t.drawn - t.input, painted: t.painted - t.input, work: t.work});
  }
  return rows;
}"""


def pair_for(control, start: dict) -> tuple:
    """Two values of ``control``: where ``start`` has it, and a neighbour."""
    values = list(control.values)
    at = values.index(start.get(control.name, control.default))
    return (values[at], values[at - 1] if at == len(values) - 1 else values[at + 1])


def serve(folder: Path):
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def measure(repeats: int = 20, site: Path | None = None) -> list[dict]:
    scene = SCENES["positional"]
    server = None
    with tempfile.TemporaryDirectory() as tmp:
        if site is None:
            page_file = Path(tmp) / "positional.html"
            page_file.write_text(standalone_html(web_lab("positional")), encoding="utf-8")
            url = page_file.as_uri()
        else:
            server = serve(site)
            url = f"http://127.0.0.1:{server.server_address[1]}/chapters/02_positional_encoding.html"
        rows = []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900},
                                    device_scale_factor=2)
            page.goto(url)
            lab_id = page.locator(".ab-lab[data-ab-lab=positional]").get_attribute("id")
            page.wait_for_function(f"document.getElementById('{lab_id}').abLab")
            for where, start in (("default", dict(scene.defaults)),
                                 ("largest", {**scene.defaults, **LARGEST})):
                for index, control in enumerate(scene.controls):
                    if control.name in LARGEST and where == "largest":
                        # move the size control down from the largest state and back
                        pair = (LARGEST[control.name], LARGEST[control.name] - control.values[1]
                                + control.values[0])
                    else:
                        pair = pair_for(control, start)
                    times = page.evaluate(TIME_JS, [lab_id, index, start, list(pair), repeats])
                    row = {"state": where, "control": control.name, "values": list(pair),
                           "n": len(times)}
                    for key in ("drawn", "painted", "work"):
                        series = [t[key] for t in times]
                        row[f"{key}_median_ms"] = round(statistics.median(series), 2)
                        row[f"{key}_max_ms"] = round(max(series), 2)
                    rows.append(row)
            browser.close()
    if server is not None:
        server.shutdown()
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--site", type=Path, help="a built book's _build/html")
    parser.add_argument("--json", action="store_true", help="one JSON object a row")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    rows = measure(args.repeats, args.site)
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    print(f"chapter 2's lab in chromium, {args.repeats} changes a control "
          f"(load {load:.2f} -> {os.getloadavg()[0]:.2f})")
    print(f"{'state':8} {'control':8} {'values':>12} | {'input->drawn':>18} | "
          f"{'input->painted':>18} | {'work in frame':>18}")
    print(f"{'':8} {'':8} {'':>12} | {'median':>8} {'max':>9} | {'median':>8} {'max':>9} | "
          f"{'median':>8} {'max':>9}")
    for r in rows:
        print(f"{r['state']:8} {r['control']:8} {str(r['values']):>12} | "
              f"{r['drawn_median_ms']:8.1f} {r['drawn_max_ms']:9.1f} | "
              f"{r['painted_median_ms']:8.1f} {r['painted_max_ms']:9.1f} | "
              f"{r['work_median_ms']:8.1f} {r['work_max_ms']:9.1f}")
    slow = [r for r in rows if r["drawn_median_ms"] >= 16]
    print("every median input->drawn under 16 ms" if not slow else
          f"{len(slow)} controls at or over 16 ms median")
    return 0


if __name__ == "__main__":
    sys.exit(main())
