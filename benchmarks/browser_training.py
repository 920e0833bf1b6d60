"""Time of one change in chapter 8's lab computed in the reader's browser (web/training.js).

Node runs the state function, the readout's HTML and the alt text through
``tests/js/driver.mjs states.run training --data`` on the book's ``training-checkpoints.js``, after a warm-up:
the median wall time and the mean CPU time of ``--repeats`` runs, warm (the checkpoint
already decoded: a change of input, or a checkpoint seen before) and cold (every decoded
checkpoint forgotten first: the first visit of checkpoint c decodes the chain 0..c, since
each checkpoint is stored as its change from the previous one). Also the file's size and
the time Node takes to load it (parse the script). Drawing is lab.js's business; the target
is well under a frame, 16 ms.

Usage::

    python benchmarks/browser_training.py [--data training-checkpoints.js] [--repeats 25]

Without ``--data`` it trains the two runs (about 20 s) and writes the file to a temporary
folder.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import browser_states  # this folder: the Node driver's timing of one lab's cases

PERIOD7 = " ".join(["31 29 28 3 10 4 12"] * 3 + ["31 29 28"])

#: (label, values)
CASES = [
    ("reversal, checkpoint 25 (trained)", {"task": "reverse", "checkpoint": 25,
                                           "reverse_input": "3 1 4 1 5 9 2 6"}),
    ("reversal, checkpoint 0", {"task": "reverse", "checkpoint": 0,
                                "reverse_input": "3 1 4 1 5 9 2 6"}),
    ("induction, 24 tokens, checkpoint 25", {"task": "induction", "checkpoint": 25,
                                              "induction_input": PERIOD7}),
    ("induction, 24 tokens, checkpoint 8", {"task": "induction", "checkpoint": 8,
                                             "induction_input": PERIOD7}),
    ("induction, 24 tokens, checkpoint 0", {"task": "induction", "checkpoint": 0,
                                             "induction_input": PERIOD7}),
    ("induction, bad input (no forward pass)", {"task": "induction", "checkpoint": 25,
                                                 "induction_input": "<b>x</b>"}),
]


def measure(data: Path, repeats: int) -> list[dict]:
    """browser_states.measure on training.js with ``data`` as its checkpoints."""
    return browser_states.measure(repeats, [("chapter 8 training", "training", label, values)
                                            for label, values in CASES], ("--data", str(data)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, help="a training-checkpoints.js (default: "
                        "train the runs and write one)")
    parser.add_argument("--repeats", type=int, default=25)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data
        if data is None:
            from attention_book.web_export import write_training_script

            data = Path(tmp) / "training-checkpoints.js"
            write_training_script(data)
        rows = measure(data, args.repeats)
        size = data.stat().st_size
    print(f"training-checkpoints.js: {size / 1e6:.2f} MB; Node loads it in "
          f"{min(r['load_ms'] for r in rows):.0f}-{max(r['load_ms'] for r in rows):.0f} ms")
    browser_states.print_table(rows)


if __name__ == "__main__":
    main()
