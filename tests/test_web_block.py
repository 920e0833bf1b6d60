"""Chapter 7's block lab computed in the reader's browser: ``web/block.js`` run in Node on
held-out control values over every control's full range (any sentence: ones that appear
nowhere in the book, unknown words, markup, empty and over-long text; post-LN and pre-LN,
residuals on and off, depth 1..12, seeds 0..20 and beyond, causal or not), compared with
:func:`attention_book.scenes.block.block_state`: every array within 1e-5, tokens, notes,
the shape tracer equal, the readout's HTML and the alt text equal to the module's of
Python's state (``js_view``), Python's error messages, the
random blocks numpy's bit for bit, and the figure's panels drawable by ``web/lab.js``."""
from __future__ import annotations

import numpy as np
import pytest

from attention_book.block import encoder_stack
from attention_book.scenes.block import BLOCK_SENTENCES, LN_LABELS, MAX_DEPTH, block_state
from close_all import assert_close
from js_view import views
from node_driver import run as node
from test_web_states import (FIXED_TEXTS, NODE, SEEDS, TOL, arr, close, figure_check, notes,
                             run, sentences)

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH: web/block.js runs "
                                "in Node.js, which the README's set-up (make test) expects")


def block_values(n: int, seed: int) -> list[dict]:
    """The fixed texts and the presets, then ``n`` random sentences (0..40 words, now and
    then up to 120: past the 32 tokens kept), each with random controls: every depth, the
    slider's seeds and now and then a far one (the package takes 0..999 999)."""
    rng = np.random.default_rng(seed)
    texts = [*FIXED_TEXTS, *BLOCK_SENTENCES, *sentences(rng, n)]
    out = []
    for k, text in enumerate(texts):
        far = k % 17 == 5
        out.append(dict(text=text, norm_first=bool(rng.random() < 0.5),
                        residual=bool(rng.random() < 0.7), depth=int(rng.integers(1, MAX_DEPTH + 1)),
                        seed=int(rng.integers(21, 1_000_000)) if far else int(rng.choice(SEEDS)),
                        causal=bool(rng.random() < 0.5)))
    return out


def check_block(values: dict, row: dict, st, view: dict) -> float:
    """Assert that Node's row equals Python's state ``st`` for ``values`` and the module's
    ``view`` of it; the largest difference."""
    js = row["state"]
    where = {k: (v[:60] if isinstance(v, str) else v) for k, v in values.items()}
    assert js["tokens"] == list(st.tokens) and js["notes"] == notes(st), where
    assert (js["depth"], js["seed"], js["d"], js["h"], js["d_ff"], js["n_parameters"]) == (
        st.depth, st.seed, st.d, st.h, st.d_ff, st.n_parameters), where
    assert [[name, list(shape)] for name, shape in st.trace] == js["trace"], where
    err = max(close(js["X"], st.X, (where, "X")), close(js["output"], st.output, (where, "output")),
              close(js["weights"], st.weights, (where, "weights")),
              close(js["normsPost"], st.norms[False], (where, "post-LN norms")),
              close(js["normsPre"], st.norms[True], (where, "pre-LN norms")))
    assert row["readout"] == view["readout"] and row["alt"] == view["alt"], where
    # the numbers a reader downloads: the tokens and each layer's weights as drawn
    got = row["numbers"]  # read from the driver's JSON.stringify: plain JSON (NaN is null)
    assert got["lab"] == "block" and got["tokens"] == list(st.tokens), where
    assert len(got["weights"]) == st.depth, where
    assert_close(np.array(got["weights"], dtype=float).reshape(st.weights.shape),
                 st.weights, atol=TOL, err_msg=where)
    for label, nf in (("post-LN", False), ("pre-LN", True)):
        assert_close(got["norms"][label], st.norms[nf], atol=TOL, err_msg=(where, label))
    return err


def checked(values: list) -> list[float]:
    """check_block on each values, in one run of Node for the states and one for the views."""
    states = [block_state(**v) for v in values]
    return [check_block(v, row, st, view) for v, row, st, view in
            zip(values, run("block", values), states, views("block", *states), strict=True)]


@pytest.mark.slow  # 78 states on both sides, 3-4 s of CPU: the edit loop's held-out parity
# of the block lab is the twin contract's (tests/test_web_twins.py: the first 10 of its
# held-out values, the edge texts among them), with check_block itself on every setting of
# the small controls below
def test_block_parity_on_held_out_values():
    checked(block_values(60, seed=707))


@pytest.mark.slow  # 1,219 states on both sides, about 20 s
def test_block_parity_on_many_held_out_values():
    values = block_values(1200, seed=7007)
    assert len(values) >= 1000
    errors = checked(values)
    assert max(errors) < 1e-12  # measured: rounding only


def test_every_setting_of_the_small_controls():
    """Every combination of LayerNorm, residual, causal and depth, on the running sentence."""
    values = [dict(text="THE WEATHER IS LOVELY TODAY", norm_first=nf, residual=r, causal=c,
                   depth=depth, seed=seed)
              for nf in (False, True) for r in (False, True) for c in (False, True)
              for depth, seed in ((1, 0), (2, 20), (6, 10), (12, 3))]
    checked(values)


BLOCK_BAD = [dict(depth=0), dict(depth=13), dict(depth=2.5), dict(depth=True), dict(seed=-1),
             dict(seed="3"), dict(seed=1_000_000), dict(seed=None), dict(norm_first="yes"),
             dict(norm_first=None), dict(text="", depth=0), dict(text="", seed=-2)]


def test_bad_values_give_pythons_messages():
    for v, row in zip(BLOCK_BAD, run("block", BLOCK_BAD), strict=True):
        with pytest.raises(ValueError) as err:
            block_state(**v)
        assert row.get("error") == str(err.value), v


def test_blocks_are_numpys_bit_for_bit():
    """encoder_stack's weights: the attention's draws from default_rng(1000 seed + i), the
    feed-forward network's from default_rng([1000 seed + i, 1]), in numpy's order."""
    seeds = [0, 1, 20, 999_999]
    got = node("block.stack", input=seeds)
    for seed, blocks in zip(seeds, got, strict=True):
        want = encoder_stack(MAX_DEPTH, 8, 2, seed)
        assert len(blocks) == MAX_DEPTH
        for i, (js, py) in enumerate(zip(blocks, want, strict=True)):
            a = py.attention
            for name, value in (("W_q", a.W_q), ("W_k", a.W_k), ("W_v", a.W_v), ("W_o", a.W_o),
                                ("b_q", a.b_q), ("b_k", a.b_k), ("b_v", a.b_v), ("b_o", a.b_o),
                                ("W_1", py.W_1), ("b_1", py.b_1), ("W_2", py.W_2),
                                ("b_2", py.b_2)):
                assert np.array_equal(arr({"f8": js[name]}), value.ravel()), (seed, i, name)
            assert all(np.array_equal(n, e) for n, e in zip(py.norm1 + py.norm2, (
                np.ones(8), np.zeros(8), np.ones(8), np.zeros(8))))  # fresh LayerNorms


def test_moving_depth_residual_or_layernorm_draws_no_blocks():
    """The blocks are drawn once per seed (scenes.block._stack's cache): the other controls,
    the text included, reuse them; a new seed draws its 12, and clearCaches empties it."""
    got = node("block.drawn")
    assert got == [12, 12, 12, 12, 12, 12, 24, 24, 36], got


def test_figures_are_panels_lab_js_can_draw():
    """A lines panel (both LN settings' norms and sqrt(d), 2 L + 1 points, the
    matplotlib view's limits, ticks and colours; ticks at whole blocks), then a grid of one
    map per layer at one size, on one scale: data fill rows x cols with finite numbers,
    tokens as labels, weights within [0, 1], a causal mask's cells masked; no tokens too."""
    values = [*block_values(6, seed=31), dict(text="", depth=4),
              dict(text="cat " * 40, depth=12, norm_first=True, causal=True)]
    rows = figure_check({"block": values}, "--figure")["block"]  # one run of Node
    for v, row in zip(values, rows, strict=True):
        assert row["bad"] == [] and row["panels"] == 2, (v, row["bad"], row["panels"])
    for v, fig in zip(values, (row["figure"] for row in rows), strict=True):
        st = block_state(**v)
        lines, *maps = fig["panels"]
        assert 1 <= fig["columns"] <= 3
        assert lines["kind"] == "lines" and lines["n"] == 2 * st.depth + 1
        assert lines["ylim"] == [0.25, 64.0] and lines["ylog"] is True  # the norms, seeds 0..20
        assert lines["yticks"] == [0.25, 1.0, 4.0, 16.0, 64.0]
        assert lines["xs"] == [i / 2 for i in range(2 * st.depth + 1)]
        labels = [line["label"] for line in lines["lines"]]
        if st.s:
            # LN_LABELS shortened to fit a third of the figure: "post-LN (BERT)"
            assert labels == [LN_LABELS[False].replace("the paper, ", ""), LN_LABELS[True],
                              "\u221ad"], v
            for line, nf in zip(lines["lines"], (False, True)):
                assert line["color"] == {False: "#00204c", True: "#c9a227"}[nf]  # cividis
                assert line["width"] == (2.4 if nf == st.norm_first else 1.0)
                np.testing.assert_allclose(line["y"], st.norms[nf], atol=TOL, rtol=0)
            assert all(min(line["y"]) > 0 for line in lines["lines"])  # log scale
        else:
            assert labels == ["\u221ad"], v
        np.testing.assert_allclose(lines["lines"][-1]["y"], np.sqrt(8))
        assert lines["xstep"] == 2  # whole blocks: never a tick at 2.5
        [grid] = maps
        assert grid["kind"] == "grid" and len(grid["maps"]) == st.depth
        assert grid["rowLabels"] == grid["colLabels"] == list(st.tokens)  # every layer's axes
        assert (grid["rows"], grid["cols"], grid["vmin"], grid["vmax"]) == (st.s, st.s, 0, 1)
        if st.causal and st.s:
            np.testing.assert_array_equal(np.reshape(grid["masked"], (st.s, st.s)),
                                          np.triu(np.ones((st.s, st.s)), 1))
        for i, p in enumerate(grid["maps"]):
            assert p["title"] == f"layer {i + 1}"
            np.testing.assert_allclose(np.reshape(p["data"], (st.s, st.s)), st.weights[i],
                                       atol=TOL, rtol=0)
