"""Chapter 9's browser lab (``attention_book/web/pretrained.js``) in headless chromium: what a
reader waits for.

The page is opened as ``file://`` with the lab's scripts, ``pretrained-gallery.js`` and the
int8 ``minilm-weights.js`` in one folder (as ``_static/ab-web/``). It prints

- loading the model: the button's click until the model is ready (running the weights
  script, then decoding it in the worker, or on the page's thread);
- a new sentence of ``--pieces`` word pieces through ``state()``: the call until its
  Promise gives the state (tokenizing, the forward pass in the worker, the message back, the
  head's scores), median and largest over ``--sentences`` distinct sentences, and the page's
  longest stall meanwhile (the largest gap between 5 ms timer ticks on the page's thread:
  how long a keystroke would wait);
- a layer/head switch on a sentence already run: ``state()``, ``readoutHtml``, ``alt`` and
  ``figure`` for all 72 heads in turn, median and largest;
- a preset sentence before any model (the gallery file's maps).

Both with the Web Worker (what the book does) and with the model on the page's thread
(``startModel(weights, {worker: false})``), to show what the worker costs and saves.

Usage::

    python benchmarks/browser_pretrained.py [--pieces 32] [--sentences 6]

Medians on a 2-core machine shared with other work: compare runs made under the same load
(the load average is printed before and after).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

from attention_book.pretrained import MiniLM
from attention_book.scenes.pretrained import MAX_PRETRAINED_TOKENS, PRETRAINED_PRESETS
from attention_book.web_export import export_browser_weights, export_pretrained_gallery

from browser_minilm import CHROMIUM, HELD_OUT, load_average

WEB = Path(__file__).resolve().parents[1] / "src" / "attention_book" / "web"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]

PAGE = """<!doctype html><meta charset="utf-8"><title>pretrained</title><div id="extra"></div>
<script src="lab.js"></script><script src="pretrained-gallery.js"></script><script src="pretrained.js"></script>
<script>AttentionBook.pretrained.mountExtra({update: function () {}}, document.getElementById("extra"));</script>
"""

#: Start the model on the page's thread: the weights script by hand, then startModel.
MAIN_THREAD = """() => new Promise((resolve, reject) => {
  const t = performance.now(), s = document.createElement("script");
  s.src = "minilm-weights.js";
  s.onload = () => { const load = performance.now() - t;
    AttentionBook.pretrained.startModel(AttentionBook.minilmWeights, {worker: false})
      .then(() => resolve({load, total: performance.now() - t}), reject); };
  s.onerror = reject;
  document.head.appendChild(s);
})"""

RUN = """async (texts) => {
  const P = AttentionBook.pretrained, median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
  const fresh = [], stalls = [], switches = [];
  for (const text of texts) {
    let last = performance.now(), stall = 0;
    const tick = setInterval(() => { const now = performance.now(); stall = Math.max(stall, now - last); last = now; }, 5);
    const t = performance.now();
    const st = await P.state({text, layer: 0, head: 0, query: 1});
    fresh.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 20));
    clearInterval(tick);
    stalls.push(stall);
    if (st.source !== "browser") { throw new Error("not computed: " + st.source); }
    for (let l = 0; l < 6; l++) {
      for (let h = 0; h < 12; h++) {
        const s = performance.now();
        const x = P.state({text, layer: l, head: h, query: 3});
        P.readoutHtml(x); P.alt(x); P.figure(x);
        switches.push(performance.now() - s);
      }
    }
  }
  return {T: (await P.state({text: texts[0]})).T, fresh_median: median(fresh), fresh_max: Math.max(...fresh),
          stall_median: median(stalls), stall_max: Math.max(...stalls), switch_median: median(switches),
          switch_max: Math.max(...switches), status: P.modelStatus()};
}"""

PRESET = """(text) => { const P = AttentionBook.pretrained, times = [];
  for (let i = 0; i < 20; i++) { const t = performance.now(); const st = P.state({text, layer: i % 6, head: i % 12});
    P.readoutHtml(st); P.alt(st); P.figure(st); times.push(performance.now() - t); }
  times.sort((a, b) => a - b); return {first: times[0], median: times[10]}; }"""


def sentences(model: MiniLM, pieces: int, n: int) -> list[str]:
    """``n`` distinct texts of exactly ``pieces`` word pieces, from held-out sentences."""
    out = []
    for k in range(n):
        long = " ".join(HELD_OUT[k:] + HELD_OUT[:k])
        text, kept, _ = model.cut(long, pieces + 2)
        while kept < pieces + 2:  # the cut fell inside a word: add one-piece words
            text += " the"
            kept += 1
        assert len(model.tokenize(text)) == pieces + 2
        out.append(text)
    return out


def measure(folder: Path, texts: list[str], worker: bool) -> dict:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((folder / "index.html").as_uri())
        preset = page.evaluate(PRESET, PRETRAINED_PRESETS[1][1])
        if worker:
            t = page.evaluate("performance.now()")
            page.click("button.ab-load-model")
            page.wait_for_function("AttentionBook.pretrained.modelStatus().status === 'ready'",
                                   timeout=300_000, polling=20)
            loaded = {"total": page.evaluate("performance.now()") - t}
        else:
            loaded = page.evaluate(MAIN_THREAD)
        result = page.evaluate(RUN, texts)
        browser.close()
    if errors:
        raise RuntimeError(f"page errors: {errors}")
    result.update(loaded=loaded, preset=preset)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pieces", type=int, default=32)
    parser.add_argument("--sentences", type=int, default=6)
    args = parser.parse_args()
    texts = sentences(MiniLM.load(), args.pieces, args.sentences)
    print(f"load average before: {load_average()}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in ("lab.js", "pretrained.js"):  # the front end, the lab's bundle
            shutil.copy(WEB / name, folder / name)
        export_browser_weights(folder / "minilm-weights.js", "int8")
        info = export_pretrained_gallery(folder / "pretrained-gallery.js", PRETRAINED_PRESETS,
                                         weights_js=folder / "minilm-weights.js",
                                         max_tokens=MAX_PRETRAINED_TOKENS)
        (folder / "index.html").write_text(PAGE, "utf-8")
        size = (folder / "minilm-weights.js").stat().st_size
        print(f"pretrained-gallery.js {info['bytes'] / 1e3:.0f} kB, minilm-weights.js "
              f"{size / 1e6:.1f} MB (int8)")
        for worker in (True, False):
            r = measure(folder, texts, worker)
            timing = r["status"]["timing"]
            where = "Web Worker" if worker else "page's thread"
            print(f"\n{where} (chromium, file://):")
            print(f"  preset sentence, no model: state + readout + alt + figure median "
                  f"{r['preset']['median']:.2f} ms")
            print(f"  load the model: {r['loaded']['total']:.0f} ms (script "
                  f"{timing.get('load', r['loaded'].get('load', 0)):.0f} ms, decode "
                  f"{timing.get('prepare', 0):.0f} ms)")
            print(f"  new sentence of {args.pieces} pieces (T = {r['T']}) through state(): median "
                  f"{r['fresh_median']:.0f} ms, largest {r['fresh_max']:.0f} ms over "
                  f"{args.sentences}; page stalled at most {r['stall_median']:.0f} ms (median), "
                  f"{r['stall_max']:.0f} ms (largest)")
            print(f"  layer/head switch (cached): median {r['switch_median']:.2f} ms, largest "
                  f"{r['switch_max']:.2f} ms over {72 * args.sentences}")
    print(f"\nload average after: {load_average()}")


if __name__ == "__main__":
    main()
