"""Every text a figure draws is readable: big enough, not on top of another text or another
panel, and an axis label next to the tick labels it names.

A figure shown at 72 dpi has one CSS pixel per point, so the checks run at
72 dpi: (a) no two drawn texts' boxes overlap (nor touch, but for neighbouring tick
labels), no text runs into a panel it does not belong to or off the figure; (b) every text
is at least 9 pt, tick labels of a dense axis (more than 12 labels) at least 6 pt; (c) an
axis label is at most 12 px from its tick labels; and no figure is wider than 9.5 inches.
What is checked is what is drawn: each text is recorded as the canvas draws it. (The labs
are drawn by the browser front end: tests/test_lab_legibility.py checks their text.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from unittest import mock

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from attention_book import plots

# Draws every chapter figure (one trains chapter 8's model): part of `make test`, not of the
# fast loop.
pytestmark = pytest.mark.slow

MIN_PT, MIN_DENSE_PT, DENSE = 9.0, 6.0, 12  # sizes; more than DENSE labels make an axis dense
MAX_LABEL_GAP = 12.0  # px at 72 dpi between an axis label and its tick labels
MAX_WIDTH = 9.5  # inches: wider figures are shrunk to fit the book's column
MIN_GAP = 1.0  # px at 72 dpi between texts that are not neighbours on one axis


@dataclass
class Drawn:
    """One text as drawn: its string, size (pt), box (px), the axes it belongs to (None for
    the figure's own), its role ("tick", "label", "title" or "other"), its axis ("x", "y"
    or "") and the group it is one of (an Axis)."""

    text: str
    size: float
    bbox: Bbox
    owner: object
    role: str
    axis: str
    group: object


def _roles(figure) -> dict:
    """id(text) -> (owner, role, axis, group) for the texts axes own."""
    roles = {}
    for ax in figure.axes:
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            roles[id(axis.label)] = (ax, "label", name, axis)
            for tick in [*axis.majorTicks, *axis.minorTicks]:
                for label in (tick.label1, tick.label2):
                    roles[id(label)] = (ax, "tick", name, axis)
        for title in (ax.title, ax._left_title, ax._right_title):
            roles[id(title)] = (ax, "title", "", ax)
    return roles


def drawn_texts(figure, dpi: float = 72.0) -> tuple[list[Drawn], dict]:
    """Every text ``figure`` draws at ``dpi``, with its box in pixels, and the box of each
    visible axes (in pixels at ``dpi``)."""
    records = []
    draw_text = Text.draw

    def text_draw(self, renderer):  # into the figure's pixels
        size = canvas.get_renderer().get_canvas_width_height()
        whole = renderer.get_canvas_width_height() == size
        if whole and self.get_visible() and self.get_text().strip():
            records.append((self, self.get_window_extent(renderer)))
        return draw_text(self, renderer)

    old_dpi = figure.dpi
    with mock.patch.object(Text, "draw", text_draw):
        figure.set_dpi(dpi)
        canvas = figure.canvas if isinstance(figure.canvas, FigureCanvasAgg) else (
            FigureCanvasAgg(figure))
        canvas.draw()
        boxes = {ax: ax.bbox.frozen() for ax in figure.axes if ax.get_visible()}
    figure.set_dpi(old_dpi)
    roles, out = _roles(figure), []
    for text, bbox in records:
        if id(text) in roles:
            owner, *role, group = roles[id(text)]
        else:
            owner, role, group = text.axes, ("other", ""), None
        out.append(Drawn(text.get_text(), text.get_fontsize(), bbox, owner, *role, group))
    return out, boxes


def _gap(a: Bbox, b: Bbox, axis: str) -> float:
    """The distance between two boxes across ``axis`` ("x": vertically), < 0 if they meet."""
    if axis == "x":
        return max(a.y0 - b.y1, b.y0 - a.y1)
    return max(a.x0 - b.x1, b.x0 - a.x1)


def _meet(a: Bbox, b: Bbox, margin: float = 0.5) -> bool:
    """Whether two boxes share more than a hairline."""
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > margin
            and min(a.y1, b.y1) - max(a.y0, b.y0) > margin)


def problems(figure, dpi: float = 72.0) -> list[str]:
    """Everything unreadable about the texts ``figure`` draws (empty if all is well)."""
    texts, boxes = drawn_texts(figure, dpi)
    found = []
    width = figure.get_size_inches()[0]
    if width > MAX_WIDTH + 1e-9:
        found.append(f"figure {width:.2f} in wide (> {MAX_WIDTH})")
    whole = Bbox.from_bounds(0, 0, *figure.get_size_inches() * dpi)
    counts: dict = {}
    for t in texts:
        if t.role == "tick":
            counts[id(t.group)] = counts.get(id(t.group), 0) + 1
    for t in texts:
        # (b) sizes
        dense = t.role == "tick" and counts[id(t.group)] > DENSE
        least = MIN_DENSE_PT if dense else MIN_PT
        if t.size < least - 1e-9:
            found.append(f"{t.role} {t.text!r} is {t.size:g} pt (< {least:g})")
        # (a) inside the figure, off other panels
        if not (t.bbox.x0 >= whole.x0 - 0.5 and t.bbox.x1 <= whole.x1 + 0.5
                and t.bbox.y0 >= whole.y0 - 0.5 and t.bbox.y1 <= whole.y1 + 0.5):
            found.append(f"{t.role} {t.text!r} runs off the figure")
        own = boxes.get(t.owner)
        for ax, box in boxes.items():
            if ax is t.owner or (own is not None and _meet(own, box, 0.0)):
                continue  # its own axes, or one stacked on it (a twin, an overlay)
            if _meet(t.bbox, box, 1.0):
                found.append(f"{t.role} {t.text!r} runs into another panel")
    # (a) no two texts overlap; texts of different groups do not even touch
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            apart = 0.5 if a.group is b.group and a.group is not None else -MIN_GAP
            if _meet(a.bbox, b.bbox, apart):
                found.append(f"{a.role} {a.text!r} overlaps {b.role} {b.text!r}")
    # (c) axis labels next to their tick labels
    for label in (t for t in texts if t.role == "label"):
        ticks = [t.bbox for t in texts if t.role == "tick" and t.owner is label.owner
                 and t.axis == label.axis]
        if not ticks:
            continue
        gap = _gap(label.bbox, Bbox.union(ticks), label.axis) * 72.0 / dpi
        if gap > MAX_LABEL_GAP:
            found.append(f"label {label.text!r} is {gap:.0f} px from its tick labels")
    return sorted(set(found))


# ------------------------------------------------------------------ what is checked



def chapter_figures() -> dict:
    """Figure name -> a function making the chapter figure from data shaped like the
    chapter's (the chapters' own numbers need trained and pretrained models)."""
    from attention_book.positional import (concatenated_encoding, position_similarity,
                                           sinusoidal_encoding, wavelengths)

    rng = np.random.default_rng(0)
    tokens = ["THE", "WEATHER", "IS", "LOVELY", "TODAY"]
    pe64 = sinusoidal_encoding(64, 64)

    def causal(s):
        return np.tril(np.ones((s, s), dtype=bool))

    def weights(s, mask=None):
        w = np.exp(rng.normal(size=(s, s))) * (causal(s) if mask is None else mask)
        return w / np.maximum(w.sum(-1, keepdims=True), 1e-12)

    def bands(n, k):
        return {name: np.exp(rng.normal(size=(20, n)).cumsum(-1) * 0.1)
                for name in ("post-LN", "pre-LN", "post-LN, no residual", "pre-LN, no "
                             "residual")[:k]}

    sizes = np.array([128, 256, 512, 1024, 2048, 4096])
    times = {"numpy (ours)": 2e-10 * sizes ** 2 * 64,
             "torch, (s, d_k): math kernel": 1e-10 * sizes ** 2 * 64,
             "torch, (1, 1, s, d_k): fused kernel": 5e-11 * sizes ** 2 * 64}
    pieces = ["[CLS]", "the", "weather", "is", "lovely", "today", "[SEP]"]
    animal = ["[CLS]", "the", "animal", "didn", "'", "t", "cross", "the", "street",
              "because", "it", "was", "too", "tired", ".", "[SEP]"]
    padded = [tokens, ["the", "sun", "is", "warm", "<pad>"],
              ["good", "morning", "<pad>", "<pad>", "<pad>"]]
    pad_masks = [np.broadcast_to(np.arange(5) < n, (5, 5)) for n in (5, 4, 2)]
    from attention_book.scenes.pretrained import SCORE_LABELS
    return {
        "layouts": lambda: plots.layouts_figure(sinusoidal_encoding(64, 16),
                                                concatenated_encoding(64, 16)),
        "encoding": lambda: plots.encoding_figure(pe64, (0, 8, 16, 32)),
        "wavelengths": lambda: plots.wavelengths_figure(wavelengths(512), 10000),
        "similarity": lambda: plots.similarity_figure(position_similarity(pe64) / 32),
        "sum": lambda: plots.sum_figure(rng.normal(size=(5, 8)), sinusoidal_encoding(5, 8),
                                        tokens),
        "cost": lambda: plots.cost_figure(sizes, times, {"L1d": 48 * 2**10,
                                                         "L2": 2 * 2**20, "L3": 32 * 2**20}),
        "masks": lambda: plots.weights_figure(
            [causal(5).astype(float), weights(5), np.tril(weights(5, np.ones((5, 5))))],
            ["causal mask (1 = may attend)", "\u2212\u221e before the softmax (right)",
             "zeroed after the softmax (wrong)"], tokens, masks=[None, causal(5), causal(5)],
            label="weight (the mask: 1 = may attend)"),
        "padded": lambda: plots.weights_figure(
            [weights(5, m) for m in pad_masks], ["'the weather is lovely today' (head 0)",
                                                 "'the sun is warm' (head 0)",
                                                 "'good morning' (head 0)"],
            padded, masks=pad_masks),
        "gain": lambda: plots.gain_figure(bands(7, 4)),
        "stream_norm": lambda: plots.stream_norm_figure(bands(13, 2), 8),
        "loss": lambda: plots.loss_figure(
            {"with position embeddings": (np.arange(600), np.exp(-np.arange(600) / 150) + .01),
             "without (P = 0)": (np.arange(600), 1.7 + np.exp(-np.arange(600) / 100))},
            chance=math.log(10), title="reversal with and without positions"),
        "heads_8": lambda: plots.heads_figure(np.stack([weights(8, np.ones((8, 8)))] * 2),
                                              ["head 0", "head 1"], [3, 1, 4, 1, 5, 9, 2, 6]),
        "heads_24": lambda: plots.heads_figure(
            np.stack([weights(24)] * 2), ["layer 0: previous-token head",
                                          "layer 1: induction head"], rng.integers(0, 32, 24)),
        "heads_3": lambda: plots.heads_figure(
            np.stack([weights(24)] * 3), ["as trained", "keys without layer 0's write",
                                          "queries without layer 0's write"],
            rng.integers(0, 32, 24)),
        "heads_plain": lambda: plots.heads_figure(
            np.stack([weights(24)] * 2), ["fixed-period model, period 8",
                                          "same head, period 7"]),
        "training_curves": lambda: plots.training_curves_figure(
            np.arange(3000), np.exp(-np.arange(3000) / 900) * 3 + 0.1, np.arange(0, 3001, 300),
            rng.uniform(size=(2, 11)), ["layer 0: previous-token score",
                                        "layer 1: induction score"], chance=math.log(32)),
        "head_scores": lambda: plots.head_scores_figure(
            {name: rng.uniform(size=(6, 12)) for name in SCORE_LABELS}),
        "head_maps": lambda: plots.head_maps_figure(
            [("L0 H2: previous token", pieces, weights(7, np.ones((7, 7)))),
             ("L1 H8: next token", pieces, weights(7, np.ones((7, 7)))),
             ("L2 H9: [CLS]", pieces, weights(7, np.ones((7, 7)))),
             ("L3 H1: 'it' \u2192 'animal'", animal, weights(16, np.ones((16, 16))))]),
        "neuron_view": lambda: plots.neuron_view_figure(
            rng.normal(size=32), rng.normal(size=32), rng.normal(size=32),
            ("animal", "street"), "it"),
        "entropy": lambda: plots.entropy_figure(
            {"random, chapter 4": rng.uniform(size=40),
             "trained to reverse, chapter 8": rng.uniform(size=2),
             "all-MiniLM-L6-v2": rng.uniform(size=72)}),
    }


@pytest.mark.parametrize("name", sorted(chapter_figures()))
def test_chapter_figure_texts_are_readable(name):
    assert problems(chapter_figures()[name]()) == []


def test_the_check_sees_overlaps_and_small_texts():
    figure = chapter_figures()["cost"]()
    assert not problems(figure)
    ax = figure.axes[0]  # a tiny text, and a text on the title, are caught
    ax.text(0.5, 0.5, "tiny text", fontsize=5, transform=ax.transAxes)
    ax.text(0.5, 1.0, "on the title", transform=ax.transAxes, ha="center", va="bottom")
    found = problems(figure)
    assert any("overlaps" in p for p in found) and any("5 pt" in p for p in found)
