"""Time of one change in the labs whose state the reader's browser computes.

For each lab with a state module in ``src/attention_book/web/`` (embedding.js, attention.js,
..., block.js), Node runs the state function, the readout's HTML and the alt text at the lab's
largest setting (the most tokens and the largest dimensions its controls offer) through
the tests' Node driver (``tests/js/driver.mjs states.run``), after a warm-up: the median wall time and the mean CPU
time of ``--repeats`` runs with the caches warm (a change of text, query, temperature...)
and with every cache emptied first (a change of seed or dimension: the random numbers
drawn afresh). On a shared machine the wall time grows with the load; the CPU time
hardly does. Drawing the picture is not
included (``web/lab.js``'s business); the target is well under one frame, 16 ms.

Usage::

    python benchmarks/browser_states.py [--repeats 25] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "tests" / "js" / "driver.mjs"  # its command states.run

LONG = ("the quick brown fox jumps over the lazy dog while the weather is lovely today and "
        "we walk to the river to read a book under a big green tree in the morning sun ") * 4

#: (lab, module, label, values): each lab at its largest setting
CASES = [
    ("chapter 1 embedding", "embedding", "32 tokens (of 136), d = 64",
     {"text": LONG, "d": 64, "seed": 20}),
    ("chapter 1 embedding", "embedding", "a pasted text at the limit: 100,000 chars",
     {"text": (LONG * 70)[:100_000], "d": 64, "seed": 20}),
    ("chapter 1 embedding", "embedding", "5 tokens, d = 8 (the default)",
     {"text": "THE WEATHER IS LOVELY TODAY", "d": 8, "seed": 0}),
    ("chapter 3 attention", "attention", "self, 128 tokens (of 136), d_k = 64",
     {"text": LONG, "kv_text": "", "mode": "self", "query": 127, "d_k": 64,
      "temperature": 0.125, "seed": 20}),
    ("chapter 3 attention", "attention", "cross, 128 x 128 tokens, d_k = 64",
     {"text": LONG, "kv_text": LONG, "mode": "cross", "query": 5, "d_k": 64,
      "temperature": 8.0, "seed": 20}),
    ("chapter 3 attention", "attention", "self, 5 tokens, d_k = 4 (the default)",
     {"text": "THE WEATHER IS LOVELY TODAY", "kv_text": "", "mode": "self", "query": 0,
      "d_k": 4, "temperature": 1.0, "seed": 0}),
    ("chapter 4 multi-head", "multihead", "32 tokens, d = 64, h = 16, + PE",
     {"text": LONG, "d": 64, "h": 16, "seed": 20, "heads_on": list(range(0, 16, 2)),
      "positional": True}),
    ("chapter 4 multi-head", "multihead", "5 tokens, d = 8, h = 2 (the default)",
     {"text": "THE WEATHER IS LOVELY TODAY", "d": 8, "h": 2, "seed": 10, "heads_on": None,
      "positional": False}),
    ("chapter 5 permutation", "permutation", "128 tokens, shuffle, PE and causal",
     {"text": LONG, "order": "shuffle", "custom": "", "seed": 99, "pe": True, "causal": True}),
    ("chapter 5 permutation", "permutation", "5 tokens, reverse (the default)",
     {"text": "THE WEATHER IS LOVELY TODAY", "order": "reverse", "custom": "", "seed": 0,
      "pe": False, "causal": False}),
    ("chapter 6 masking", "masking", "32 tokens, band 16/16, after the softmax",
     {"text": LONG, "kind": "band", "method": "after", "length": 3, "window": 2, "lower": 16,
      "upper": 16}),
    ("chapter 6 masking", "masking", "5 tokens, causal (the default)",
     {"text": "THE WEATHER IS LOVELY TODAY", "kind": "causal", "method": "before", "length": 3,
      "window": 2, "lower": 1, "upper": 1}),
    ("chapter 7 block", "block", "32 tokens, depth 12, pre-LN, causal",
     {"text": LONG, "norm_first": True, "residual": True, "depth": 12, "seed": 20,
      "causal": True}),
    ("chapter 7 block", "block", "5 tokens, depth 6, post-LN (the default)",
     {"text": "THE WEATHER IS LOVELY TODAY", "norm_first": False, "residual": True,
      "depth": 6, "seed": 0, "causal": False}),
    ("chapter 3 sqrt(d_k)", "scaling", "d_k = 512 (cold: its first visit)",
     {"d_k": 512, "scaled": True}),
    ("chapter 3 sqrt(d_k)", "scaling", "d_k = 64 (the default)", {"d_k": 64, "scaled": False}),
]


def measure(repeats: int, cases=CASES, driver_args: tuple = ()) -> list[dict]:
    """Time each of ``cases`` ((lab, module, label, values)) through the Node driver, given
    ``driver_args`` too (``("--data", path)``: a data script the module reads; its load time
    is then ``load_ms``)."""
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is not on PATH")
    rows = []
    for lab, module, label, values in cases:
        done = subprocess.run([node, str(DRIVER), "states.run", module, *driver_args, "--time", str(repeats)],
                              input=json.dumps([values]), capture_output=True, text=True,
                              check=True)
        got = json.loads(done.stdout)[0]
        if "error" in got:
            raise SystemExit(f"{lab} {label}: {got['error']}")
        rows.append({"lab": lab, "module": module, "setting": label, **{k: got[k] for k in (
            "warm_ms", "warm_cpu_ms", "cold_ms", "cold_cpu_ms", "load_ms")}})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=25)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = measure(args.repeats)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print_table(rows)


def print_table(rows: list[dict]) -> None:
    """The rows of :func:`measure` as a table, and the machine's load."""
    print(f"{'lab':22} {'setting':40} {'warm: wall':>10} {'CPU ms':>7} {'cold: wall':>10} "
          f"{'CPU ms':>7}")
    for r in rows:
        print(f"{r['lab']:22} {r['setting']:40} {r['warm_ms']:10.3f} {r['warm_cpu_ms']:7.3f} "
              f"{r['cold_ms']:10.3f} {r['cold_cpu_ms']:7.3f}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
