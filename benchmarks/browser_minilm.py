"""all-MiniLM-L6-v2 in the browser engine (``attention_book/web/minilm.js``): size, load, speed, loss.

For each storage format of the weights file (``web_export.export_browser_weights``:
int8, float16, mixed = float16 layers with int8 embeddings) it prints

- the file's size (base64 in a classic script) and the tensors' bytes before base64;
- in Node: the time to run the weights script (the engine parses 30-60 MB of string
  literals) and to decode base64 and dequantise (``minilm.load``), median of
  ``--loads`` fresh processes;
- in Node: the forward pass on texts of 8, 16, 32, 64 and 128 word pieces (T = pieces + 2
  with [CLS] and [SEP]), median of ``--repeats`` passes after one warm-up;
- with ``--parity``: what the format loses, against the float32 Python model
  (``MiniLM.attention``) over every gallery sentence (``load_sentences``, 157) and the
  held-out sentences below (:data:`HELD_OUT`): the largest and the mean absolute
  difference of the attention weights, and how often a query's most-attended key is the
  same;
- with ``--chromium``: load and forward times in headless chromium, the page opened as
  ``file://`` (the weights arrive as a classic ``<script>``, as in the book).

Usage::

    python benchmarks/browser_minilm.py                    # int8, Node
    python benchmarks/browser_minilm.py --dtypes int8 float16 mixed --parity --chromium

Medians on a 2-core machine shared with other work: compare runs made under the same load
(the load average is printed before and after).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from attention_book.pretrained import MiniLM, load_sentences
from attention_book.web_export import MINILM_JS, export_browser_weights

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from minilm_node import run_in_node  # noqa: E402  (the tests' harness)

PIECES = (8, 16, 32, 64, 128)
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")

#: Sentences of no gallery or chapter: everyday text, names, numbers, quotes, questions,
#: accents, markup, code, lists, long words.
HELD_OUT = [
    "My grandmother keeps her buttons in an old biscuit tin on the kitchen shelf.",
    "The train to Edinburgh was cancelled, so we took the bus and arrived at midnight.",
    "Can you tell me why the printer only works when nobody is looking at it?",
    "She painted the fence blue, but her neighbour insisted it looked green.",
    "After three failed attempts, the climbers finally reached the summit at dawn.",
    "Photosynthesis turns sunlight, water and carbon dioxide into sugar and oxygen.",
    "The committee postponed its decision until the auditors had checked the accounts.",
    "If the river floods again, the village will need a higher wall.",
    "He said he would call back in five minutes; that was two hours ago.",
    "Our cat ignores the expensive toy and plays with the cardboard box it came in.",
    "The recipe asks for 250 g of flour, 3 eggs and a pinch of salt.",
    "Which of these two paintings did the museum buy in 1987?",
    "The lighthouse keeper wrote a letter to his daughter every Sunday.",
    "Despite the rain, thousands of fans waited outside the stadium for hours.",
    "A good night's sleep improves memory, mood and concentration.",
    "The software update broke the login page, so the team rolled it back.",
    "When the power went out, the children lit candles and told ghost stories.",
    "The bridge that the engineers designed can carry twice the expected load.",
    "Nobody expected the quiet intern to solve the problem before lunch.",
    "The old map showed a road that no longer exists.",
    "Paris, Berlin and Madrid are capitals; Zurich is not.",
    "Dr. Okafor's lab published three papers on antibiotic resistance this year.",
    "The dog chased the ball, and then it rolled under the car.",
    "I asked the librarian for a book about volcanoes, and she gave me two.",
    "Although the film was long, nobody in the audience left early.",
    "Le café était fermé, alors nous sommes allés au marché.",
    "Der Zug fährt um 8:15 Uhr vom Hauptbahnhof ab.",
    "naïve résumé of a façade in São Paulo",
    "東京は日本の首都です。",
    "The emoji 🙂 and the symbol ∑ are not words.",
    "<b>Bold</b> text and a <script>alert('x')</script> tag, shown as text.",
    "def attention(q, k, v): return softmax(q @ k.T / sqrt(d_k)) @ v",
    "antidisestablishmentarianism is longer than most words",
    "Wait... what?! No -- really???",
    "Email me at someone@example.com or call +44 20 7946 0958.",
    "The quick brown fox jumps over the lazy dog.",
    "The teacher praised the student because she had worked hard.",
    "The trophy didn't fit in the suitcase because it was too big.",
    "Rain is forecast for Tuesday, sunshine for the weekend.",
    "The pianist played the sonata from memory, without a single mistake.",
    "Every morning the baker opens the shop at six and sells out by ten.",
    "They planted two hundred trees along the motorway last spring.",
    "The astronaut floated past the window, waving at the camera.",
    "What time does the pharmacy close on public holidays?",
    "Interest rates rose again, and house prices fell for the third month.",
    "The violinist tuned her instrument while the audience found their seats.",
    "Tomatoes grow best in warm soil with plenty of water.",
    "The detective noticed that the clock in the hall had stopped at 3:17.",
    "My brother borrowed my bicycle and returned it with a flat tyre.",
    "The hikers followed the river until they found the waterfall.",
    "Wait... what?! No -- really??? (yes) [MASK] [mask] hello[SEP]world",
    "ΟΔΟΣ İstanbul ǅemal ﬁne Straße naïve Å Ω K",
    "Email me at someone@example.com or call +44 20 7946 0958 😀👍🏽",
    "antidisestablishmentarianism " + "x" * 100 + " " + "y" * 101,
]


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def texts_of_pieces(model: MiniLM, pieces: int) -> str:
    """A text of exactly ``pieces`` word pieces (held-out sentences joined, then cut)."""
    long = " ".join(HELD_OUT * 4)
    tokens = model.tokenizer.encode(long).tokens[1:-1]
    text, kept, _ = model.cut(long, pieces + 2)
    while kept < pieces + 2:  # the cut fell inside a word: add single-piece words
        text += " the"
        kept += 1
    assert len(model.tokenize(text)) == pieces + 2, (pieces, len(tokens))
    return text


def node_times(weights: Path, model: MiniLM, loads: int, repeats: int) -> dict:
    """parse/decode ms (medians over ``loads`` processes) and forward ms per size."""
    texts = [texts_of_pieces(model, n) for n in PIECES]
    parse, decode, forward = [], [], {n: [] for n in PIECES}
    for i in range(loads):
        answer = run_in_node(weights, texts if i == 0 else texts[:1], repeats=repeats + 1)
        parse.append(answer["timing"]["parse_ms"])
        decode.append(answer["timing"]["decode_ms"])
        if i == 0:
            for n, result in zip(PIECES, answer["results"]):
                forward[n] = result["forward_ms"][1:]  # the first pass warms the JIT up
    return {"parse_ms": statistics.median(parse), "decode_ms": statistics.median(decode),
            "forward_ms": {n: statistics.median(v) for n, v in forward.items()}}


def parity(weights: Path, model: MiniLM) -> dict:
    """Attention maps from the file's weights against the float32 Python model."""
    texts = load_sentences() + HELD_OUT
    answer = run_in_node(weights, texts)
    largest, means, agree, rows = 0.0, [], 0, 0
    for text, result in zip(texts, answer["results"]):
        reference = model.attention(text)  # (L, h, T, T)
        assert result["tokens"] == model.tokenize(text), text
        diff = np.abs(result["attention"] - reference)
        largest = max(largest, float(diff.max()))
        means.append(float(diff.mean()))
        agree += int((result["attention"].argmax(-1) == reference.argmax(-1)).sum())
        rows += reference.shape[0] * reference.shape[1] * reference.shape[2]
    return {"sentences": len(texts), "max_abs": largest, "mean_abs": float(np.mean(means)),
            "argmax_agree": agree / rows}


CHROMIUM_PAGE = """<!doctype html><meta charset="utf-8"><title>minilm</title>
<script>window.t0 = performance.now();</script>
<script src="minilm.js"></script>
<script src="weights.js"></script>
<script>window.tParsed = performance.now();</script>
"""

CHROMIUM_RUN = """([texts, repeats]) => {
  const t = performance.now();
  const model = AttentionBook.minilm.load(AttentionBook.minilmWeights);
  const decode = performance.now() - t;
  const forward = texts.map((text) => {
    const ids = model.tokenize(text).ids;
    const times = [];
    for (let r = 0; r < repeats + 1; r++) {
      const s = performance.now();
      model.forward(ids);
      times.push(performance.now() - s);
    }
    times.shift();
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)];
  });
  return {parse_ms: window.tParsed - window.t0, decode_ms: decode, forward_ms: forward};
}"""


def chromium_times(weights: Path, model: MiniLM, repeats: int) -> dict:
    """Load and forward times in headless chromium, the page opened as file://."""
    from playwright.sync_api import sync_playwright

    texts = [texts_of_pieces(model, n) for n in PIECES]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "minilm.js").write_text(subprocess.run(  # bundled as the page's classic script
            ["node", "--input-type=module", "-e",
             f"const b = await import({json.dumps((MINILM_JS.parents[2] / 'build.mjs').as_uri())});"
             "process.stdout.write(await b.classicScript('shared/minilm.js', 'minilm'));"],
            check=True, capture_output=True, text=True).stdout, "utf-8")
        os.symlink(weights.resolve(), tmp / "weights.js")
        (tmp / "index.html").write_text(CHROMIUM_PAGE, "utf-8")
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=CHROMIUM,
                args=["--headless", "--no-sandbox", "--disable-gpu",
                      "--disable-background-networking", "--disable-component-update",
                      "--disable-sync", "--no-first-run", "--allow-file-access-from-files"])
            page = browser.new_page()
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto((tmp / "index.html").as_uri(), timeout=120_000)
            page.wait_for_function("window.tParsed !== undefined", timeout=120_000)
            result = page.evaluate(CHROMIUM_RUN, [texts, repeats])
            browser.close()
    if errors:
        raise RuntimeError(f"page errors in chromium: {errors}")
    result["forward_ms"] = dict(zip(PIECES, result["forward_ms"]))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dtypes", nargs="+", default=["int8"],
                        choices=["int8", "float16", "mixed", "float32"])
    parser.add_argument("--loads", type=int, default=3, help="fresh Node processes timed")
    parser.add_argument("--repeats", type=int, default=3, help="forward passes a size")
    parser.add_argument("--parity", action="store_true",
                        help="attention maps against the float32 Python model")
    parser.add_argument("--chromium", action="store_true", help="also time headless chromium")
    parser.add_argument("--json", action="store_true", help="one JSON object a format")
    args = parser.parse_args()

    model = MiniLM.load()
    print(f"load average before: {load_average()}")
    with tempfile.TemporaryDirectory() as tmp:
        for dtype in args.dtypes:
            weights = Path(tmp) / f"minilm-weights-{dtype}.js"
            t = time.perf_counter()
            info = export_browser_weights(weights, dtype)
            row = {"dtype": dtype, "file_mb": info["bytes"] / 1e6,
                   "payload_mb": info["payload_bytes"] / 1e6,
                   "export_s": time.perf_counter() - t,
                   "node": node_times(weights, model, args.loads, args.repeats)}
            if args.parity:
                row["parity"] = parity(weights, model)
            if args.chromium:
                row["chromium"] = chromium_times(weights, model, args.repeats)
            if args.json:
                print(json.dumps(row))
                continue
            print(f"\n{dtype}: {row['file_mb']:.1f} MB file ({row['payload_mb']:.1f} MB "
                  f"before base64), exported in {row['export_s']:.1f} s")
            for where in ("node", "chromium"):
                if where not in row:
                    continue
                r = row[where]
                print(f"  {where}: run the weights script {r['parse_ms']:.0f} ms, decode + "
                      f"dequantise {r['decode_ms']:.0f} ms")
                for n, ms in r["forward_ms"].items():
                    print(f"    forward, {int(n):3d} word pieces (T = {int(n) + 2:3d}): "
                          f"{ms:7.0f} ms")
            if "parity" in row:
                p = row["parity"]
                print(f"  attention vs float32 Python over {p['sentences']} sentences: "
                      f"max |diff| {p['max_abs']:.2e}, mean |diff| {p['mean_abs']:.2e}, "
                      f"same most-attended key {100 * p['argmax_agree']:.2f} %")
    print(f"\nload average after: {load_average()}")


if __name__ == "__main__":
    main()
