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
- a preset sentence before any model (the gallery file's maps);
- the weighted value norms: minilm.js's ||f_h(x_j)|| through W^O (``writeNorms``, part of
  each forward pass) for a sentence of T tokens, and the lab's 72 maps of norm shares
  (``state`` with measure "norm" and view "model" on a sentence just run);
- the lab's frames (``--frames``): the lab as the book mounts it (``controls.web``'s page),
  the model loaded, at the running sentence and at ``--pieces`` + 2 tokens, in the model
  view with the norms shown: each control changed 20 times, from its input event to its
  drawing (median and largest), and the figure alone redrawn (72 thumbnails, the opened
  head and its arcs).

Both with the Web Worker (what the book does) and with the model on the page's thread
(``startModel(weights, {worker: false})``), to show what the worker costs and saves.

Usage::

    python benchmarks/browser_pretrained.py [--pieces 32] [--sentences 6] [--frames-only]

Medians on a 2-core machine shared with other work: compare runs made under the same load
(the load average is printed before and after).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
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
    const tick = setInterval(() => {
      const now = performance.now(); stall = Math.max(stall, now - last); last = now;
    }, 5);
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


#: minilm.js's writeNorms alone on random values of T tokens, for 6 layers (the Gram
#: matrices made once, as the forward pass keeps them), in Node: median ms of 7.
WRITE_NORMS = """
const M = await import(process.argv[1]), T = Number(process.argv[2]), d = 384, h = 12, dK = 32;
const v = new Float32Array(T * d).map(() => Math.random() - 0.5);
const W = new Float32Array(d * d).map(() => Math.random() - 0.5), out = new Float32Array(h * T);
const G = M.headGrams(W, d, h, dK), times = [];
for (let i = 0; i < 7; i++) {
  const t = performance.now();
  for (let l = 0; l < 6; l++) { M.writeNorms(v, T, d, h, dK, G, out, 0); }
  times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
process.stdout.write(String(times[3]));
"""

#: The model view's 72 maps of norm shares on a sentence just run: once, then a change.
NORMS = """async (text) => {
  const P = AttentionBook.pretrained;
  await P.state({text, layer: 0, head: 0});
  const t = performance.now();
  const st = P.state({text, layer: 0, head: 0, measure: "norm", view: "model"});
  const shares = performance.now() - t;
  const t2 = performance.now();
  P.state({text, layer: 1, head: 3, measure: "norm", view: "model"});
  return {shares, cached: performance.now() - t2, T: st.T};
}"""

#: Change control `name` between two values `n` times: input event -> drawn (ms), and the
#: figure alone redrawn.
FRAMES = """async ([name, values, n]) => {
  const el = document.querySelector(".ab-lab"), lab = el.abLab, times = [];
  for (let i = 0; i < n; i++) {
    const drawn = new Promise((r) => el.addEventListener("ab-lab-drawn", (e) => r(e.detail), {once: true}));
    const t = performance.now();
    lab.set(name, values[i % 2]);
    const d = await drawn;
    times.push(d.drawn - t);
    await new Promise((r) => requestAnimationFrame(() => r()));
  }
  const redraws = [];
  for (let i = 0; i < n; i++) { const t = performance.now(); lab.redraw(); redraws.push(performance.now() - t); }
  const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
  return {median: med(times), max: Math.max(...times), redraw: med(redraws)};
}"""

SET = """async ([name, value]) => {
  const el = document.querySelector(".ab-lab");
  const drawn = new Promise((r) => el.addEventListener("ab-lab-drawn", r, {once: true}));
  el.abLab.set(name, value);
  await drawn;
}"""


def frames(texts: list[str], n: int = 20) -> None:
    """Print each control's frame of the lab in the model view with norms (see the module's
    docstring), at the running sentence and at the long sentence ``texts[0]``."""
    from playwright.sync_api import sync_playwright

    from attention_book.controls import web_lab
    from attention_book.controls.web import standalone_html
    from attention_book.web_export import write_data
    from attention_book.tokens import RUNNING_SENTENCE

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        folder = Path(tmp)
        write_data("pretrained", folder / "data")
        (folder / "lab.html").write_text(standalone_html(web_lab("pretrained"), title="lab",
                                                         data=folder / "data"), "utf-8")
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto((folder / "lab.html").as_uri())
        page.wait_for_function("document.querySelector('.ab-lab').abLab?.draws > 0")
        page.evaluate("(url) => AttentionBook.pretrained.setWeightsUrl(url)",
                      (folder / "data" / "minilm-weights.js").as_uri())
        page.click("button.ab-load-model")
        page.wait_for_function("AttentionBook.pretrained.modelStatus().status === 'ready'",
                               timeout=300_000, polling=50)
        norms = page.evaluate(NORMS, texts[0])
        node = subprocess.run(["node", "--input-type=module", "-e", WRITE_NORMS,
                               (WEB / "src" / "shared" / "minilm.js").as_uri(), str(norms["T"])],
                              capture_output=True, text=True, check=True).stdout
        print(f"\nnorms of a sentence of T = {norms['T']}: writeNorms for 6 layers (Gram matrices "
              f"ready) {float(node):.1f} ms in Node (in the worker's forward pass); the 72 maps "
              f"of norm shares {norms['shares']:.1f} ms once, then {norms['cached']:.2f} ms a change")
        for text in (RUNNING_SENTENCE, texts[0]):
            page.evaluate(SET, ["text", text])
            for name, value in (("view", "model"), ("measure", "norm")):
                page.evaluate(SET, [name, value])
            T = page.evaluate("document.querySelector('.ab-lab').abLab.state.T")
            print(f"lab frames, model view with norms, T = {T} (chromium, 1280 px, input -> drawn):")
            for name, values in (("layer", [3, 4]), ("head", [1, 9]), ("query", [1, 2]),
                                 ("measure", ["weight", "norm"]), ("view", ["head", "model"]),
                                 ("text", [text, RUNNING_SENTENCE if text != RUNNING_SENTENCE
                                           else texts[0]])):
                r = page.evaluate(FRAMES, [name, values, n])
                print(f"  {name:8} median {r['median']:6.2f} ms, largest {r['max']:6.2f} ms; "
                      f"figure alone {r['redraw']:.2f} ms")
                if name == "text":  # back to this sentence, for the next sentence's rows
                    page.evaluate(SET, ["text", text])
        browser.close()


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
    parser.add_argument("--frames-only", action="store_true",
                        help="only the lab's frames and the norms (no worker comparison)")
    args = parser.parse_args()
    texts = sentences(MiniLM.load(), args.pieces, args.sentences)
    print(f"load average before: {load_average()}")
    frames(texts)
    if args.frames_only:
        print(f"\nload average after: {load_average()}")
        return
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
