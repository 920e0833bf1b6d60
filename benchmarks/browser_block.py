"""Time of one change in chapter 7's block lab computed in the reader's browser
(``src/attention_book/web/block.js``), by kind of change, at the largest setting (32 tokens,
depth 12):

- ``seed``: a new seed draws its 12 blocks (24 numpy generators, 10,080 normals) and runs
  the stack for post-LN and pre-LN (every cache emptied first, chapter 1's embedding table
  too: an upper bound);
- ``text, depth, residual or mask``: the blocks are cached, the stack runs for both LN
  settings (a new sentence each time, so the run's cache never answers);
- ``LayerNorm (or back)``: the run of both settings is cached, only the readout and the
  alt text are made.

Each is the state, the readout's HTML and the alt text, as the page computes them, in Node,
after a warm-up: the median wall ms and the mean CPU ms of ``--repeats`` runs. Drawing is
not included (``web/lab.js``'s business). ``benchmarks/browser_states.py`` times every lab
with warm and emptied caches.

Usage::

    python benchmarks/browser_block.py [--repeats 50] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK_JS = ROOT / "src" / "attention_book" / "web" / "src" / "labs" / "block.js"
MATRICES_JS = ROOT / "src" / "attention_book" / "web" / "src" / "shared" / "matrices.js"

SCRIPT = r"""
const load = async (file) => (await import(require("url").pathToFileURL(file).href)).default;
(async () => {
const B = await load(process.argv[1]);
const core = await import(require("url").pathToFileURL(process.argv[2]).href);
const repeats = parseInt(process.argv[3], 10);
const words = ("the quick brown fox jumps over the lazy dog while the weather is lovely " +
  "today and we walk to the river to read a book under a big green tree in the morning sun " +
  "and then").split(" ");  // 40 words: rotations give distinct 32-token sentences
const text = k => words.slice(k % 40).concat(words.slice(0, k % 40)).join(" ") + " " + k;
const base = {norm_first: true, residual: true, depth: 12, seed: 20, causal: true};
function change(values) { const st = B.state(values); B.readoutHtml(st); B.alt(st); }
function measure(before, valuesOf) {
  const ms = [];
  let cpu = 0;
  for (let i = 0; i < repeats; i++) {
    before(i);
    const v = valuesOf(i), c0 = process.cpuUsage(), t0 = process.hrtime.bigint();
    change(v);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const c = process.cpuUsage(c0);
    cpu += (c.user + c.system) / 1000;
  }
  ms.sort((a, b) => a - b);
  return {wall_ms: ms[ms.length >> 1], cpu_ms: cpu / repeats};
}
const kinds = {
  "seed": [() => core.clearCaches(), i => Object.assign({}, base, {text: text(i)})],
  "text, depth, residual or mask": [() => {}, i => Object.assign({}, base, {text: text(1000 + i)})],
  "LayerNorm (or back)": [() => {}, i => Object.assign({}, base, {text: text(0), norm_first: i % 2 === 0})],
};
const out = {};
for (const [name, [before, valuesOf]] of Object.entries(kinds)) {
  measure(before, valuesOf);  // warm-up: the JIT compiles
  out[name] = measure(before, valuesOf);
}
process.stdout.write(JSON.stringify(out));
})();
"""


def measure(repeats: int) -> dict:
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is not on PATH")
    done = subprocess.run([node, "-e", SCRIPT, str(BLOCK_JS), str(MATRICES_JS), str(repeats)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = measure(args.repeats)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print("chapter 7 block, 32 tokens, depth 12, pre-LN, causal: one change")
    print(f"{'change':32} {'wall ms':>8} {'CPU ms':>8}")
    for name, r in rows.items():
        print(f"{name:32} {r['wall_ms']:8.3f} {r['cpu_ms']:8.3f}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
