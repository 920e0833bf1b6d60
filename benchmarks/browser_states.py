"""Time of one change in the labs whose state the reader's browser computes (issue 17).

For each lab with a state module in ``src/attention_book/web/`` (embedding.js, attention.js,
...), Node runs the state function, the readout's HTML and the alt text at the lab's
largest setting (the most tokens and the largest dimensions its controls offer) through
``tests/web_states_driver.js``: the median wall time of ``--repeats`` runs with the caches
warm (a change of text, query, temperature...) and with every cache emptied first (a
change of seed or dimension: the random numbers drawn afresh). Drawing the picture is not
included (``web/lab.js``'s business); the target is well under one frame, 16 ms.

Usage::

    python benchmarks/browser_states.py [--repeats 25] [--json]
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "tests" / "web_states_driver.js"

LONG = ("the quick brown fox jumps over the lazy dog while the weather is lovely today and "
        "we walk to the river to read a book under a big green tree in the morning sun ") * 4

#: (lab, module, label, values): each lab at its largest setting
CASES = [
    ("chapter 1 embedding", "embedding", "32 tokens (of 136), d = 64",
     {"text": LONG, "d": 64, "seed": 20}),
    ("chapter 1 embedding", "embedding", "5 tokens, d = 8 (the default)",
     {"text": "THE WEATHER IS LOVELY TODAY", "d": 8, "seed": 0}),
]


def measure(repeats: int) -> list[dict]:
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is not on PATH")
    rows = []
    for lab, module, label, values in CASES:
        done = subprocess.run([node, str(DRIVER), module, "--time", str(repeats)],
                              input=json.dumps([values]), capture_output=True, text=True,
                              check=True)
        got = json.loads(done.stdout)[0]
        if "error" in got:
            raise SystemExit(f"{lab} {label}: {got['error']}")
        rows.append({"lab": lab, "module": module, "setting": label,
                     "warm_ms": got["warm_ms"], "cold_ms": got["cold_ms"]})
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
    print(f"{'lab':24} {'setting':40} {'warm ms':>8} {'cold ms':>8}")
    for r in rows:
        print(f"{r['lab']:24} {r['setting']:40} {r['warm_ms']:8.3f} {r['cold_ms']:8.3f}")


if __name__ == "__main__":
    main()
