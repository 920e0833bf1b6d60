"""Draws per second of the browser's random generator, ``src/attention_book/web/src/shared/rng.js``.

The HTML book draws the labs' random weights in the reader's browser with rng.js, numpy's
``default_rng`` ported exactly (``tests/test_web_rng.py``). This times it on ``--n`` draws
(default 10^5, more than any lab draws for one state; chapter 3's sqrt(d_k) curves, drawn
once, take 2.6 million), in Node and, with ``--chromium``, in headless chromium (the
page's own engine), by ``benchmarks/browser_rng.js``: the median and minimum wall time of
``--repeats`` runs after a warm-up run, the median CPU time (Node only: on a shared
machine the wall time grows with the load, the CPU time hardly does), and draws per
second from the median wall time. The row "random, BigInt PCG64" is the same generator
with BigInt arithmetic instead of rng.js's 16-bit limbs: the choice rng.js made.

Usage::

    python benchmarks/browser_rng.py [--n 100000] [--repeats 15] [--chromium] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RNG_JS = ROOT / "src" / "attention_book" / "web" / "src" / "shared" / "rng.js"
BENCH_JS = ROOT / "benchmarks" / "browser_rng.js"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def in_node(n: int, repeats: int) -> list[dict]:
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is not on PATH")
    done = subprocess.run([node, str(BENCH_JS), str(n), str(repeats)], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def in_chromium(n: int, repeats: int) -> list[dict]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        page = browser.new_page()
        classic = subprocess.run(  # rng.js bundled into a classic script, as the labs' bundles hold it
            ["node", "--input-type=module", "-e",
             f"const b = await import({json.dumps((RNG_JS.parents[2] / 'build.mjs').as_uri())});"
             "process.stdout.write(await b.classicScript('shared/rng.js', 'rng'));"],
            check=True, capture_output=True, text=True).stdout
        page.add_script_tag(content=classic)
        page.add_script_tag(content=BENCH_JS.read_text())
        rows = page.evaluate("([n, r]) => browserRngBenchmark(AttentionBook.rng, n, r)",
                             [n, repeats])
        browser.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="draws a run")
    parser.add_argument("--repeats", type=int, default=15, help="timed runs a case")
    parser.add_argument("--chromium", action="store_true", help="also in headless chromium")
    parser.add_argument("--json", action="store_true", help="one JSON object a row")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = [dict(row, where="node") for row in in_node(args.n, args.repeats)]
    if args.chromium:
        rows += [dict(row, where="chromium") for row in in_chromium(args.n, args.repeats)]
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return
    print(f"{'where':9s} {'what':30s} {'n':>7s} {'median ms':>10s} {'min ms':>8s} "
          f"{'cpu ms':>7s} {'M draws/s':>10s}")
    for r in rows:
        cpu = f"{r['cpu_median_ms']:7.2f}" if r.get("cpu_median_ms") is not None else "      -"
        print(f"{r['where']:9s} {r['what']:30s} {r['n']:7d} {r['median_ms']:10.3f} "
              f"{r['min_ms']:8.3f} {cpu} {r['draws_per_s'] / 1e6:10.2f}")
    print(f"load average (1 min) before: {load:.2f}, after: {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
