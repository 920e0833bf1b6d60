"""How long a reader waits after moving a control: widget latency, live vs re-plot.

For each lab in :data:`REGISTRY` this measures, over ``--repeats`` control changes after a
warm-up, the time from setting a control's ``.value`` to a finished canvas draw: the
observers run (state function, ``view.update``, readout), then ``figure.canvas.draw()``,
which is what ipympl does when the front end asks for the frame that ``draw_idle``
announced (an Agg draw plus the PNG of the changed pixels). The canvas is first told that
a front end is connected (the "initialized" message), as in a live notebook.

The naive baseline is measured in the same run for the same states: a fresh Figure and
view built and drawn from scratch for each state, what a widget that re-plots per event
does. It draws with plain Agg and encodes no PNG, so it flatters the baseline.

Usage::

    python benchmarks/widget_latency.py [--json] [--repeats N]

Later chapters add their lab to :data:`REGISTRY`: a name, a factory, the control changes
to cycle through, and the naive "build from scratch" function for a dict of control values.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg

from attention_book.plots import embedding_view
from attention_book.tokens import RUNNING_SENTENCE
from attention_book.widgets import embedding_state, embedding_widget


@dataclass(frozen=True)
class Case:
    """One lab to measure.

    Attributes
    ----------
    name : str
    factory : callable returning a Lab
    changes : list of (control name, value)
        Cycled through in order; consecutive changes must change the value.
    naive : callable taking a dict of control values
        Builds a fresh figure and view for those values and draws it.
    """

    name: str
    factory: Callable
    changes: list
    naive: Callable[[dict], None]


def _naive_embedding(values: dict) -> None:
    state = embedding_state(values["text"], values["d"], values["seed"])
    view = embedding_view()
    view.update(state.tokens, state.X, state.similarity)
    FigureCanvasAgg(view.figure).draw()


_TYPED = "the dog saw"  # typed one keystroke at a time
_LONG = " ".join(["the cat saw the dog and the dog saw the cat"] * 4)  # 44 tokens: truncated

REGISTRY: list[Case] = [
    Case(
        name="embedding",
        factory=embedding_widget,
        changes=(
            [("d", d) for d in (2, 4, 16, 32, 64, 8)]
            + [("seed", 1), ("seed", 0)]
            + [("text", _TYPED[: k + 1]) for k in range(len(_TYPED))]
            + [("text", "THE WEATHER IS GLORIOUS TODAY"), ("text", _LONG), ("text", ""),
               ("text", RUNNING_SENTENCE)]
        ),
        naive=_naive_embedding,
    ),
]


# Longer sentences for the "stays under 100 ms" cases of later chapters.
_TEXT_128 = " ".join(["the weather is lovely today and the dog saw the cat"] * 12)  # 132 tokens
_TEXT_64 = " ".join(("the weather is lovely today and the dog bit the man " * 6).split()[:64])  # 64 tokens


# ---- chapter 2: the positional encoding explorer


def _naive_positional(values: dict) -> None:
    from attention_book.plots import positional_view
    from attention_book.widgets import positional_state

    state = positional_state(values["s"], values["d"], values["base"], values["k"])
    view = positional_view()
    view.update(state.pe, state.wave_columns, state.similarity, state.p, state.k,
                state.shifted, state.rotated, state.max_error)
    FigureCanvasAgg(view.figure).draw()


def _positional_factory(**kwargs):
    def factory():
        from attention_book.widgets import positional_widget

        return positional_widget(**kwargs)
    return factory


def _positional_changes(s: int, d: int) -> list:
    """Every control, each change back to (s, d) so the size stays the one measured."""
    return ([("k", k) for k in (1, 8, -5, 3)]
            + [("base", b) for b in (100, 1000, 100000, 10000)]
            + [("d", d // 2), ("d", d)]
            + [("s", s - 1), ("s", s)])


REGISTRY.extend([
    Case(name="positional", factory=_positional_factory(),
         changes=_positional_changes(64, 64), naive=_naive_positional),
    Case(name="pos s=128", factory=_positional_factory(s=128),
         changes=_positional_changes(128, 64), naive=_naive_positional),
    Case(name="pos s=d=512", factory=_positional_factory(s=512, d=512),
         changes=_positional_changes(512, 512), naive=_naive_positional),
])


# ---- chapter 3: the sqrt(d_k) lab and the attention explorer


def _naive_scaling(values: dict) -> None:
    from attention_book.widgets import scaling_state
    from attention_book.widgets.attention import _scaling_view

    state = scaling_state(values["d_k"], values["scaled"])
    view = _scaling_view()
    view.update(state.d_k, state.scaled)
    FigureCanvasAgg(view.figure).draw()


def _naive_attention(values: dict) -> None:
    from attention_book.plots import attention_view
    from attention_book.widgets import attention_state

    state = attention_state(values["text"], values["d_k"], values["temperature"],
                            values["seed"], values["query"], values["mode"], values["kv_text"])
    view = attention_view()
    view.update(state.query_tokens, state.key_tokens, state.weights, state.query)
    FigureCanvasAgg(view.figure).draw()


def _attention_128():
    from attention_book.widgets import attention_widget

    return attention_widget(text=_TEXT_128)




def _attention_changes() -> list:
    return ([("query", q) for q in (1, 2, 3, 4, 0)]
            + [("temperature", t) for t in (0.5, 2.0, 4.0, 1.0)]
            + [("d_k", k) for k in (8, 16, 2, 4)]
            + [("seed", 1), ("seed", 0)]
            + [("mode", "cross"), ("mode", "self")])


from attention_book.widgets import scaling_widget as _scaling_widget  # noqa: E402
from attention_book.widgets import attention_widget as _attention_widget  # noqa: E402

REGISTRY.extend([
    Case(name="scaling", factory=_scaling_widget,
         changes=([("d_k", k) for k in (1, 4, 16, 128, 512, 64)]
                  + [("scaled", True), ("scaled", False)]),
         naive=_naive_scaling),
    Case(name="attention", factory=_attention_widget,
         changes=(_attention_changes()
                  + [("text", "the dog saw the cat"), ("text", RUNNING_SENTENCE)]),
         naive=_naive_attention),
    Case(name="attention s=128", factory=_attention_128, changes=_attention_changes(),
         naive=_naive_attention),
])


# ---- chapter 4: the multi-head grid lab


def _naive_multihead(values: dict) -> None:
    from attention_book.plots import multihead_view
    from attention_book.widgets import multihead_state

    state = multihead_state(values["text"], values["d"], values["h"], values["seed"],
                            values["heads_on"], values["positional"], max_tokens=64)
    view = multihead_view()
    view.update(state.tokens, state.weights, state.on, state.on_output, state.off_output)
    FigureCanvasAgg(view.figure).draw()


def _multihead_factory(**kwargs):
    def factory():
        from attention_book.widgets import multihead_widget

        return multihead_widget(**kwargs)
    return factory


def _multihead_changes(d: int, h: int) -> list:
    """Every control; each change comes back so the size stays the one measured."""
    return ([("seed", 1), ("seed", 0), ("positional", True), ("positional", False)]
            + [("heads_on", tuple(range(1, h))), ("heads_on", (0,)),
               ("heads_on", tuple(range(h)))]
            + [("h", 1), ("h", h), ("d", d // 2 if d > 8 else 16), ("d", d),
               ("h", h), ("text", "the dog saw the cat"), ("text", RUNNING_SENTENCE)])




def _multihead_64_changes() -> list:
    """s = 64 tokens (the widget keeps MAX_WIDGET_TOKENS of them unless asked), h = 16."""
    return ([("seed", 1), ("seed", 0), ("positional", True), ("positional", False)]
            + [("heads_on", tuple(range(1, 16))), ("heads_on", (0,)),
               ("heads_on", tuple(range(16)))])


REGISTRY.extend([
    Case(name="multihead", factory=_multihead_factory(), changes=_multihead_changes(8, 2),
         naive=_naive_multihead),
    Case(name="mh s=64 h=16", factory=_multihead_factory(text=_TEXT_64, d=64, h=16,
                                                                  max_tokens=64),
         changes=_multihead_64_changes(), naive=_naive_multihead),
])


# ---- chapter 5: the permutation playground


def _naive_permutation(values: dict) -> None:
    from attention_book.plots import permutation_view
    from attention_book.widgets import permutation_state

    state = permutation_state(values["text"], values["order"], values["custom"],
                              values["seed"], values["pe"], values["causal"])
    view = permutation_view()
    view.update(state.permuted_tokens, state.after, state.before, state.difference,
                pe=state.pe)
    FigureCanvasAgg(view.figure).draw()


def _permutation_factory(**kwargs):
    def factory():
        from attention_book.widgets import permutation_widget

        return permutation_widget(**kwargs)
    return factory


def _permutation_changes(custom: bool = True) -> list:
    """Every control; the custom order is typed one keystroke at a time (s = 5 only)."""
    changes = ([("order", o) for o in ("identity", "rotate", "swap", "shuffle", "reverse")]
               + [("pe", True), ("causal", True), ("pe", False), ("causal", False)]
               + [("seed", 1), ("order", "shuffle"), ("seed", 0), ("order", "reverse")])
    if custom:
        typed = "4 3 2 1 0"
        changes += ([("order", "custom")]
                    + [("custom", typed[: k + 1]) for k in range(len(typed))]
                    + [("custom", ""), ("order", "reverse"),
                       ("text", "the dog bit the man"), ("text", RUNNING_SENTENCE)])
    return changes



REGISTRY.extend([
    Case(name="permutation", factory=_permutation_factory(), changes=_permutation_changes(),
         naive=_naive_permutation),
    Case(name="perm s=64", factory=_permutation_factory(text=_TEXT_64),
         changes=_permutation_changes(custom=False), naive=_naive_permutation),
    Case(name="perm s=128", factory=_permutation_factory(text=_TEXT_128),
         changes=_permutation_changes(custom=False), naive=_naive_permutation),
])


def _connect_front_end(canvas) -> None:
    """Tell an ipympl canvas that a front end is there, as a live notebook does."""
    canvas._handle_message(canvas, {"type": "initialized"}, [])


def measure(case: Case, repeats: int = 60) -> dict:
    """Median and 95th percentile latency (ms) of ``case`` and of its naive baseline."""
    lab = case.factory()
    canvas = lab.figure.canvas
    _connect_front_end(canvas)
    canvas.draw()

    def apply(change):
        name, value = change
        lab.controls[name].value = value

    for change in case.changes:  # warm-up: every change once
        apply(change)
        canvas.draw()

    times, states = [], []
    for k in range(repeats):
        change = case.changes[k % len(case.changes)]
        start = time.perf_counter()
        apply(change)
        canvas.draw()
        times.append(time.perf_counter() - start)
        states.append(dict(lab.values))

    case.naive(states[0])  # warm-up
    naive_times = []
    for values in states:
        start = time.perf_counter()
        case.naive(values)
        naive_times.append(time.perf_counter() - start)

    median = statistics.median(times) * 1e3
    naive_median = statistics.median(naive_times) * 1e3
    return {
        "name": case.name,
        "median_ms": round(median, 2),
        "p95_ms": round(float(np.percentile(times, 95)) * 1e3, 2),
        "naive_median_ms": round(naive_median, 2),
        "speedup": round(naive_median / median, 2),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--repeats", type=int, default=60, help="timed events per widget")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="measure only these widgets (names as in the table)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    cases = [c for c in REGISTRY if not args.only or c.name in args.only]
    if not cases:
        parser.error(f"no widget named {args.only}; known: {[c.name for c in REGISTRY]}")
    rows = [measure(case, args.repeats) for case in cases]
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    header = f"{'widget':<14}{'median ms':>11}{'p95 ms':>9}{'naive median ms':>17}{'speed-up':>10}"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['name']:<14}{r['median_ms']:>11.1f}{r['p95_ms']:>9.1f}"
              f"{r['naive_median_ms']:>17.1f}{r['speedup']:>9.1f}x")
    print(f"({args.repeats} events per widget after a warm-up; goal: median < 30 ms and "
          ">= 5x the naive re-plot)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
