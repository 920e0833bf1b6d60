"""How long the book build waits for chapter 8's training, and what the training gives.

For each case in :data:`CASES` (the chapter's two runs, "reverse" and "induction", and
its two ablations) this trains ``--repeats`` times, each time in a fresh Python
subprocess, so that nothing is cached and torch's one-time set-up is paid as in a book
build, and reports:

- ``setup s``: the median one-time cost a process pays first: importing
  ``attention_book.training`` (and torch) and the first
  ``torch.use_deterministic_algorithms`` call (it imports torch's compiler stack);
- ``train s``: the median of ``TinyRun.train_seconds``, the training itself (one thread);
- ``cpu s``: the median CPU time of the ``train_tiny`` call (what the training takes on
  an idle machine; on a busy one the wall time grows, the CPU time hardly does);
- the steps, the held-out accuracy and the head scores (``TinyRun.head_scores``: layer
  L head H as ``L0H1``), which are the same in every repeat (training is deterministic;
  ``same`` checks it from a fingerprint of the final attention).

Usage::

    python benchmarks/training_time.py [--json] [--repeats N] [--only NAME ...]

The chapter's two runs must train in under 30 s together (the goal printed below the
table).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

GOAL_SECONDS = 30.0  # both of the book's trainings together


@dataclass(frozen=True)
class Case:
    """One training to measure.

    Attributes
    ----------
    name : str
    options : dict
        Keyword arguments of ``train_tiny`` (``task`` included).
    scores : tuple of str
        The ``head_scores`` to print.
    book : bool
        Whether the book build trains it (counts towards the 30 s goal).
    extra : callable taking a TinyRun, optional
        More numbers to report, as a dict of name -> float.
    """

    name: str
    options: dict
    scores: tuple
    book: bool = False
    extra: Callable | None = field(default=None, compare=False)


def _fixed_period_extra(run) -> dict:
    """What a model trained on period 8 does with other periods."""
    from attention_book import heads, training

    random_periods = training.make_batch("induction", 1000, training.HELD_OUT_SEED)
    period_8 = training.make_batch("induction", 256, 3, period=8)
    offset_7 = heads.offset_score(run.attention(period_8.tokens), 7).mean(axis=0)  # (L, h)
    return {
        "accuracy, periods 6-12": run.evaluate(random_periods),
        "induction score, period 7 (max)": float(run.head_scores(period=7)["induction"].max()),
        "offset-7 score, period 8 (max)": float(offset_7.max()),
    }


CASES: list[Case] = [
    Case("reverse", {"task": "reverse"}, ("anti_diagonal",), book=True),
    Case("induction", {"task": "induction"}, ("previous_token", "induction"), book=True),
    Case("induction 1 layer", {"task": "induction", "n_layers": 1},
         ("previous_token", "induction")),
    Case("induction period 8", {"task": "induction", "period": 8},
         ("previous_token", "induction"), extra=_fixed_period_extra),
]


def _by_name(name: str) -> Case:
    for case in CASES:
        if case.name == name:
            return case
    raise SystemExit(f"no case named {name!r}; known: {[c.name for c in CASES]}")


def worker(name: str) -> dict:
    """Train one case in this (fresh) process; the numbers as a dict."""
    case = _by_name(name)
    setup = time.perf_counter()
    import torch

    from attention_book.training import train_tiny

    torch.use_deterministic_algorithms(torch.are_deterministic_algorithms_enabled())
    setup = time.perf_counter() - setup
    cpu = time.process_time()
    run = train_tiny(**case.options)
    cpu = time.process_time() - cpu
    scores = run.head_scores()  # name -> (n_layers, h)
    heads = {f"L{layer}H{head}": {s: round(float(scores[s][layer, head]), 3)
                                  for s in case.scores}
             for layer in range(run.config["n_layers"]) for head in range(run.config["n_heads"])}
    fingerprint = hashlib.sha256(run.attention(run.example).tobytes()).hexdigest()[:16]
    return {
        "name": name,
        "steps": run.config["steps"],
        "setup_s": setup,
        "train_s": run.train_seconds,
        "cpu_s": cpu,
        "accuracy": run.accuracy,
        "heads": heads,
        "extra": {k: round(v, 4) for k, v in (case.extra(run) if case.extra else {}).items()},
        "fingerprint": fingerprint,
    }


def measure(case: Case, repeats: int = 3) -> dict:
    """Train ``case`` ``repeats`` times, each in a fresh subprocess; the medians."""
    runs = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker",
                              case.name], capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    first = runs[0]
    return {
        "name": case.name,
        "book": case.book,
        "steps": first["steps"],
        "setup_s": round(statistics.median(r["setup_s"] for r in runs), 2),
        "train_s": round(statistics.median(r["train_s"] for r in runs), 2),
        "cpu_s": round(statistics.median(r["cpu_s"] for r in runs), 2),
        "accuracy": round(first["accuracy"], 4),
        "heads": first["heads"],
        "extra": first["extra"],
        "same": all(r["fingerprint"] == first["fingerprint"] for r in runs),
        "repeats": repeats,
    }


def _heads_text(heads: dict) -> str:
    names = {"previous_token": "prev", "induction": "ind", "anti_diagonal": "anti"}
    return "  ".join(f"{h} " + " ".join(f"{names.get(k, k)} {v:.2f}" for k, v in s.items())
                     for h, s in heads.items())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--repeats", type=int, default=3, help="fresh trainings per case")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="measure only these cases (names as in the table)")
    parser.add_argument("--worker", metavar="NAME", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker)))
        return 0
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    cases = [c for c in CASES if not args.only or c.name in args.only]
    if not cases:
        parser.error(f"no case named {args.only}; known: {[c.name for c in CASES]}")
    rows = [measure(case, args.repeats) for case in cases]
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    header = (f"{'case':<20}{'steps':>6}{'setup s':>9}{'train s':>9}{'cpu s':>7}"
              f"{'accuracy':>10}{'same':>6}  head scores")
    print(header)
    print("-" * (len(header) + 30))
    for r in rows:
        print(f"{r['name']:<20}{r['steps']:>6}{r['setup_s']:>9.2f}{r['train_s']:>9.2f}"
              f"{r['cpu_s']:>7.2f}{r['accuracy']:>10.4f}{'yes' if r['same'] else 'NO':>6}  "
              f"{_heads_text(r['heads'])}")
        for name, value in r["extra"].items():
            print(f"{'':<20}  {name}: {value:.4f}")
    book = [r for r in rows if r["book"]]
    if book:
        total = sum(r["train_s"] for r in book)
        cpu = sum(r["cpu_s"] for r in book)
        print(f"the book's runs ({', '.join(r['name'] for r in book)}): {total:.1f} s of "
              f"training, {cpu:.1f} s CPU (goal: < {GOAL_SECONDS:.0f} s together)")
    print(f"(median of {args.repeats} trainings per case, each in a fresh process; "
          f"accuracy on 1000 held-out sequences; prev = previous-token score, first "
          f"period only for induction; ind = induction score; anti = anti-diagonal)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
