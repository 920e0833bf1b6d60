"""Chapter 7's lab's state function (scenes/block.py) and the chapter's figures.

Expected values come from the math layer directly (encoder_stack, stack_trace,
stream_norms, EncoderBlock.trace), not from the state function under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_book import block as B
from attention_book.attention import causal_mask
from attention_book.embedding import embed, embedding_table
from attention_book.plots import gain_figure, stream_norm_figure
from attention_book.positional import sinusoidal_encoding
from attention_book.scenes import SCENES, block_state
from attention_book.tokens import RUNNING_IDS, RUNNING_SENTENCE, Vocabulary
from attention_book.controls import live_lab
from js_view import alt as alt_of, readout as readout_of

SCENE = SCENES["block"]


def expected(depth=6, seed=0, norm_first=False, residual=True, causal=False,
             ids=RUNNING_IDS):
    """X, the stream and the weights of the stack, from the math layer."""
    X = embed(np.array(ids), embedding_table(len(Vocabulary.default()), 8, 0))
    X = X + sinusoidal_encoding(len(ids), 8)
    blocks = B.encoder_stack(depth, 8, 2, seed, norm_first=norm_first)
    mask = causal_mask(len(ids)) if causal else None
    stream, weights = B.stack_trace(blocks, X, mask=mask, residual=residual)
    return X, blocks, stream, weights


# ---------------------------------------------------------------- the state, no figure


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("residual", [True, False])
def test_state_matches_the_math_layer(norm_first, residual):
    st = block_state(RUNNING_SENTENCE, norm_first, residual, depth=4, seed=2)
    X, blocks, stream, weights = expected(4, 2, norm_first, residual)
    np.testing.assert_array_equal(st.X, X)
    for nf in (False, True):  # both LayerNorm placements, the same weights
        _, _, s_nf, _ = expected(4, 2, nf, residual)
        np.testing.assert_allclose(st.norms[nf], B.stream_norms(s_nf), rtol=1e-12)
    np.testing.assert_allclose(st.chosen_norms, B.stream_norms(stream), rtol=1e-12)
    np.testing.assert_allclose(st.weights, np.stack([w.mean(axis=0) for w in weights]))
    np.testing.assert_allclose(st.output, stream[-1][1])
    trace = blocks[0].trace(X, residual=residual)
    assert st.trace == tuple((n, a.shape) for n, a in trace)
    assert (st.s, st.d, st.h, st.d_ff, st.depth) == (5, 8, 2, 32, 4)
    assert st.weights.shape == (4, 5, 5) and st.output.shape == (5, 8)


def test_shapes_parameters_and_post_ln_norms():
    st = block_state()
    assert st.n_parameters == B.encoder_block_parameters(8) == 12 * 64 + 13 * 8 == 872
    assert all(shape[-1] in (8, 32) and shape[0] == 5 for _, shape in st.trace)
    assert ("FFN hidden (d_ff)", (5, 32)) in st.trace and st.trace[-1] == ("output", (5, 8))
    np.testing.assert_allclose(st.norms[False][1:], math.sqrt(8), atol=1e-3)
    assert st.norms[True][-1] > st.norms[True][0]  # pre-LN grows
    page = readout_of("block", st)
    assert "12 d\u00b2 + 13 d = 12\u00b764 + 13\u00b78 = 872" in page and "5,232" in page
    assert "(5, 32)" in page and "FFN hidden (d<sub>ff</sub>)" in page  # typeset
    np.testing.assert_allclose(st.weights.sum(axis=-1), 1.0)


def test_causal_mask_and_notes():
    st = block_state(causal=True, depth=3)
    assert (st.weights[:, ~causal_mask(5)] == 0).all()
    _, _, stream, _ = expected(3, causal=True)
    np.testing.assert_allclose(st.chosen_norms, B.stream_norms(stream))
    off = block_state(residual=False)
    assert any("residual connections are off" in n.text for n in off.notes)
    pre = block_state(norm_first=True, depth=12)
    assert any("pre-LN: the stream's norm grew" in n.text for n in pre.notes)
    assert "causal mask" in readout_of("block", st)
    assert "zero above the diagonal" in alt_of("block", st)


def test_the_state_is_pure_and_cached_arrays_are_read_only():
    a, b = block_state(depth=5, seed=3), block_state(depth=5, seed=3)
    np.testing.assert_array_equal(a.weights, b.weights)
    with pytest.raises(ValueError, match="read-only"):
        a.X[0, 0] = 1.0


# ---------------------------------------------------------------- the view


# ---------------------------------------------------------------- the live lab


def test_every_suggested_state_is_a_valid_state():
    for values in SCENE.suggested:
        st = block_state(**{**SCENE.defaults, **values})
        assert st.depth == values.get("depth", 6)


# ---------------------------------------------------------------- the chapter's figures


@pytest.mark.slow  # a chapter's figures drawn to PNG (0.4 s); the build draws them too
def test_chapter_figures_are_pngs_without_pyplot():
    import attention_book.plots.block as module

    rng = np.random.default_rng(0)
    fig = gain_figure({"pre-LN, residuals": 1 + rng.random((5, 4)),
                       "pre-LN, no residuals": rng.random((5, 4))})
    assert fig._repr_png_()[0][:4] == b"\x89PNG"
    assert len(fig.axes[0].get_lines()) == 3  # two medians and the identity line
    fig = stream_norm_figure({"post-LN": np.full((3, 5), math.sqrt(8))}, d=8)
    assert fig._repr_png_()[0][:4] == b"\x89PNG"
    assert "import matplotlib.pyplot" not in open(module.__file__).read()


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_bad_input_is_explained_not_raised():
    empty = live_lab("block", text="")
    assert empty.state["state"]["s"] == 0
    assert alt_of("block", block_state("")).startswith("Empty panels")
    long = block_state(" ".join(["dog"] * 50))
    assert long.s == 32 and any("showing the first 32 of 50 tokens" in n.text
                                for n in long.notes)
    st = block_state("<script>alert(1)</script> & b")
    page = readout_of("block", st)
    assert "<script>" not in page and "&lt;" in page
    # the markup's words are outside chapter 1's vocabulary: <unk> on the axes, named in a note
    assert st.s > 0 and set(st.tokens) == {"<unk>"}
    assert any("'script'" in n.text for n in st.notes) and "&lt;" in page


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_depth_and_seed_out_of_range_are_rejected():
    for depth in (0, 13, 2.5):
        with pytest.raises(ValueError, match=r"depth must be a whole number in 1..12, got"):
            block_state(depth=depth)
    with pytest.raises(ValueError, match=r"depth must be one of \[1, 2, .*12\], got 13"):
        SCENE.values(depth=13)
    with pytest.raises(ValueError, match=r"depth must be one of"):
        live_lab("block", depth=13)
    with pytest.raises(ValueError, match="seed must be a whole number >= 0, got -1"):
        block_state(seed=-1)
    with pytest.raises(ValueError, match="norm_first must be True or False"):
        block_state(norm_first="pre")
