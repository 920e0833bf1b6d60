"""How long the kernel takes to answer a control, for every live lab, against two baselines.

For each case (a scene, its starting values and the control changes to cycle through) this
builds the book's live lab (``controls.live_lab``) and measures, over ``--repeats`` changes
after a warm-up, the time from setting a control's ``.value`` until the lab has the new
PNG ready for the page: the state function, ``view.show``, the readout, the Agg draw and
the PNG encoding. (What the reader waits for in the browser is measured end to end by
``benchmarks/lab_latency.py``.)

Two baselines, measured in the same run for the same sequence of states:

- *plain ipympl*: the idiom of the ipympl examples. The same panels built once inside
  ``plots.core.plain_matplotlib()`` (constrained layout on every draw, texts drawn as text,
  nothing pasted as pixels, matplotlib's own image resampling), on ipympl's canvas; per
  change ``view.show(state)``, then the draw and the diff PNG that ipympl sends.
- *rebuild*: a fresh figure and view built, shown and encoded per change, as a widget that
  re-plots on every event does.

Usage::

    python benchmarks/widget_latency.py [--json] [--repeats N] [--only NAME ...]

A new lab adds a :class:`Case` to :data:`CASES`: a name, its scene and starting values; the
changes are derived from the scene's controls unless given.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from attention_book.controls import live_lab
from attention_book.plots import VIEWS, figure_png
from attention_book.plots.core import plain_matplotlib
from attention_book.scenes import SCENES

_TYPED = "the dog saw"  # typed one keystroke at a time
_TEXT_64 = " ".join(("the weather is lovely today and the dog bit the man " * 6).split()[:64])
_TEXT_128 = " ".join(["the weather is lovely today and the dog saw the cat"] * 12)


@dataclass(frozen=True)
class Case:
    """One lab to measure: scene ``scene`` from ``start`` values, through ``changes``
    ((control, value) pairs; derived from the scene's controls when empty)."""

    name: str
    scene: str
    start: dict = field(default_factory=dict)
    changes: tuple = ()


def derived_changes(scene, start: dict) -> list:
    """Every control moved a few steps and back, in display order, so the size measured
    stays the one of ``start``. Dependent choices take only values allowed at that time."""
    values = scene.values(**start)
    changes = []
    for c in scene.controls:
        here = values[c.name]
        if c.kind == "text":
            steps = [_TYPED[: k + 1] for k in range(len(_TYPED))]
        elif c.kind == "multi":
            options = [v for _, v in (c.options_for(values) if c.options_for else c.options)]
            steps = [tuple(options[1:]) or tuple(options), (options[0],)]
        else:
            options = [v for _, v in (c.options_for(values) if c.options_for else c.options)]
            k = options.index(here) if here in options else 0
            steps = [options[j] for j in (k + 1, k - 1, k + 2) if 0 <= j < len(options)]
        changes += [(c.name, v) for v in steps if v != here] + [(c.name, here)]
    return changes


CASES = [
    Case("embedding", "embedding"),
    Case("positional", "positional"),
    Case("pos s=128", "positional", {"s": 128}),
    Case("pos s=d=512", "positional", {"s": 512, "d": 512}),
    Case("scaling", "scaling"),
    Case("attention", "attention"),
    Case("attention s=128", "attention", {"text": _TEXT_128}),
    Case("multihead", "multihead"),
    Case("permutation", "permutation"),
    Case("perm s=64", "permutation", {"text": _TEXT_64}),
    Case("masking", "masking"),
    Case("block", "block"),
    Case("training", "training"),
    Case("pretrained", "pretrained"),
]


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _plain_ipympl(scene_name: str):
    """The plain idiom's figure on ipympl's canvas, and a function showing one state."""
    from ipympl.backend_nbagg import Canvas, FigureManager

    with plain_matplotlib():
        view = VIEWS[scene_name]()
    canvas = Canvas(view.figure)
    FigureManager(canvas, 0)
    canvas._handle_message(canvas, {"type": "initialized"}, [])  # a page is listening

    def show(state) -> None:
        view.show(state)
        canvas.draw()  # what draw_idle leads to once the page asks for the frame
        canvas.get_diff_image()  # the PNG ipympl sends

    return show


def _rebuild(scene_name: str, state) -> None:
    view = VIEWS[scene_name]()
    view.show(state)
    figure_png(view.figure, compress_level=1)


def measure(case: Case, repeats: int = 60) -> dict:
    """Median and 95th percentile (ms) of the lab, and the medians of both baselines."""
    scene = SCENES[case.scene]
    lab = live_lab(case.scene, **case.start)
    changes = list(case.changes) or derived_changes(scene, case.start)

    def apply(change):
        name, value = change
        lab.controls[name].value = value

    for change in changes:  # warm-up: every change once
        apply(change)
    times, states = [], []
    for k in range(repeats):
        change = changes[k % len(changes)]
        times.append(_timed(lambda: apply(change)))
        states.append(lab.state)

    plain = _plain_ipympl(case.scene)
    plain(states[0])  # warm-up
    plain_times = [_timed(lambda: plain(s)) for s in states]
    _rebuild(case.scene, states[0])
    rebuild_times = [_timed(lambda: _rebuild(case.scene, s)) for s in states]

    median = statistics.median(times) * 1e3
    plain_median = statistics.median(plain_times) * 1e3
    rebuild_median = statistics.median(rebuild_times) * 1e3
    return {
        "name": case.name,
        "median_ms": round(median, 2),
        "p95_ms": round(float(np.percentile(times, 95)) * 1e3, 2),
        "plain_ipympl_median_ms": round(plain_median, 2),
        "rebuild_median_ms": round(rebuild_median, 2),
        "vs_plain": round(plain_median / median, 2),
        "vs_rebuild": round(rebuild_median / median, 2),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--repeats", type=int, default=60, help="timed changes per lab")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="measure only these cases (names as in the table)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    cases = [c for c in CASES if c.scene in SCENES and (not args.only or c.name in args.only)]
    if not cases:
        parser.error(f"no case named {args.only}; known: {[c.name for c in CASES]}")
    rows = []
    for case in cases:
        rows.append(measure(case, args.repeats))
        if args.json:
            print(json.dumps(rows[-1]), flush=True)
    if args.json:
        return 0
    header = (f"{'lab':<16}{'median ms':>10}{'p95 ms':>8}{'plain ipympl':>14}"
              f"{'rebuild':>9}{'vs plain':>10}{'vs rebuild':>12}")
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['name']:<16}{r['median_ms']:>10.1f}{r['p95_ms']:>8.1f}"
              f"{r['plain_ipympl_median_ms']:>14.1f}{r['rebuild_median_ms']:>9.1f}"
              f"{r['vs_plain']:>9.1f}x{r['vs_rebuild']:>11.1f}x")
    print(f"({args.repeats} changes per lab after a warm-up, each until the PNG for the page "
          "is ready; goal: median < 30 ms and >= 5x the plain ipympl idiom)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
