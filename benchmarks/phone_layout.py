"""Where a lab's figure is on a phone: each lab of a built book at 390 x 844 px (2x pixels),
in headless chromium, measured for the layouts a designer would weigh (issue 39, QA Q9).

For each lab, at its default state and with its most controls shown (:data:`MOST`), the
page prints, in CSS px:

* ``height``: the lab's height;
* ``figure``: the figure's top below the lab's top;
* ``reach``: the figure's top below the first control's top: with that control at the top of
  the screen (under the theme's 56 px header), the figure starts ``reach`` px down, so it is
  in view when ``reach`` < 788 px and shows ``788 - reach`` px of itself;
* ``middle``: the figure's middle below the first control's top (the QA's measure: the first
  control and the figure's middle are on screen together when it is under 788 px).

``--layout`` adds a layout to weigh, by a stylesheet put into the page over the book's own:

* ``book`` (the default): as the book is built;
* ``figure-first``: the figure above the controls (``reach`` is then negative: the first
  control is below the figure, and ``below`` says how far below the figure's top);
* ``sticky-controls``: the controls stick under the header while the figure scrolls under
  them (``window``: how many px of the screen are left to see the figure through).

Usage::

    python benchmarks/phone_layout.py --site _build/html [--layout book figure-first
                                      sticky-controls] [--width 390 375 360] [--json]

``--width`` measures other phones' widths (CSS px, 844 px tall): the labs' layout changes
with the width (chapter 4's check boxes go three a row under about 380 px).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
from pathlib import Path

PHONE = {"width": 390, "height": 844}
HEADER = 56  # px: the theme's header on a phone
SCREEN = PHONE["height"] - HEADER
#: A lab's state with its most controls shown (chapter 4's 16 heads' check boxes, the mask
#: editor's padding slider, chapter 8's sampling seed).
MOST = {"multihead": {"d": 64, "h": 16}, "masking": {"kind": "padding"},
        "generation": {"temperature": 1.0}}
LAYOUTS = {
    "book": "",
    "figure-first": ".ab-lab { display: flex; flex-direction: column; }"
                    " .ab-lab-figure { order: -1; } .ab-lab-title { order: -2; }",
    "sticky-controls": ".ab-lab-controls { position: sticky; top: 56px; z-index: 2;"
                       " background: var(--pst-color-background); }",
}
GEOMETRY_JS = """(id) => {
  const el = document.getElementById(id), lab = el.getBoundingClientRect();
  const first = el.querySelector('.ab-lab-control').getBoundingClientRect();
  const figure = el.querySelector('.ab-lab-figure').getBoundingClientRect();
  const controls = el.querySelector('.ab-lab-controls').getBoundingClientRect();
  return {height: lab.height, figure: figure.top - lab.top, reach: figure.top - first.top,
          middle: figure.top + figure.height / 2 - first.top, controls: controls.height,
          figureHeight: figure.height};
}"""
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def labs_of(site: Path) -> dict[str, str]:
    """lab name -> its chapter page."""
    out = {}
    for html in sorted((site / "chapters").glob("*.html")):
        for name in re.findall(r'data-ab-lab="([a-z]+)"', html.read_text(encoding="utf-8")):
            out[name] = f"chapters/{html.name}"
    return out


def measure(site: Path, layouts: list[str], widths: list[int]) -> dict:
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
    import functools
    import threading

    from playwright.sync_api import sync_playwright

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(
        type("Quiet", (SimpleHTTPRequestHandler,), {"log_message": lambda *a: None}), directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), args=FLAGS)
        for layout, width, (lab, page) in itertools.product(layouts, widths, labs_of(site).items()):
            context = browser.new_context(viewport={**PHONE, "width": width}, device_scale_factor=2)
            tab = context.new_page()
            tab.goto(f"{base}/{page}", wait_until="load")
            if LAYOUTS[layout]:
                tab.add_style_tag(content=LAYOUTS[layout])
            sel = f'.ab-lab[data-ab-lab="{lab}"]'
            tab.wait_for_function(f"document.querySelector('{sel}')?.abLab?.state")
            lab_id = tab.evaluate(f"document.querySelector('{sel}').id")
            tab.locator(sel).scroll_into_view_if_needed()
            for state, values in [("default", {}), *([("most", MOST[lab])] if lab in MOST else [])]:
                for name, value in values.items():
                    tab.evaluate("([id, n, v]) => document.getElementById(id).abLab.set(n, v)",
                                 [lab_id, name, value])
                tab.wait_for_timeout(200)
                g = {k: round(v) for k, v in tab.evaluate(GEOMETRY_JS, lab_id).items()}
                if layout == "sticky-controls":
                    g["window"] = SCREEN - g["controls"]
                out[layout, str(width), lab, state] = g
            context.close()
        browser.close()
    server.shutdown()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=Path("_build/html"))
    parser.add_argument("--layout", nargs="+", default=["book"], choices=sorted(LAYOUTS))
    parser.add_argument("--width", nargs="+", type=int, default=[PHONE["width"]])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    got = measure(args.site, args.layout, args.width)
    if args.json:
        print(json.dumps({" ".join(k): v for k, v in got.items()}, indent=1))
        return
    print(f"{'layout':16} {'width':>5} {'lab':12} {'state':8} {'height':>7} {'figure':>7} {'reach':>6} {'middle':>7} "
          f"{'controls':>8}{'  window' if 'sticky-controls' in args.layout else ''}")
    for (layout, width, lab, state), g in got.items():
        print(f"{layout:16} {width:>5} {lab:12} {state:8} {g['height']:7} {g['figure']:7} {g['reach']:6} "
              f"{g['middle']:7} {g['controls']:8}" + (f" {g['window']:7}" if "window" in g else ""))
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
