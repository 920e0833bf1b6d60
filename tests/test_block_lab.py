"""Chapter 7's lab (scenes/block.py, live_lab("block")) and its view (plots/block.py).

Expected values come from the math layer directly (encoder_stack, stack_trace,
stream_norms, EncoderBlock.trace), not from the state function under test.
"""

from __future__ import annotations

import math

import ipywidgets
import numpy as np
import pytest

from attention_book import block as B
from attention_book.attention import causal_mask
from attention_book.controls import live_lab
from attention_book.embedding import embed, embedding_table
from attention_book.plots import BlockView, block_view, gain_figure, stream_norm_figure
from attention_book.plots.multihead import mosaic_layout
from attention_book.positional import sinusoidal_encoding
from attention_book.scenes import (SCENES, BLOCK_SENTENCES, MAX_DEPTH, block_alt_text,
                                   block_readout_html, block_state)
from attention_book.tokens import RUNNING_IDS, RUNNING_SENTENCE, Vocabulary

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


@pytest.fixture
def lab():
    return live_lab("block")


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
    page = block_readout_html(st)
    assert "12 d\u00b2 + 13 d = 12\u00b764 + 13\u00b78 = 872" in page and "5,232" in page
    assert "(5, 32)" in page and "FFN hidden (d_ff)" in page
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
    assert "causal mask" in block_readout_html(st)
    assert "zero above the diagonal" in block_alt_text(st)


def test_the_state_is_pure_and_cached_arrays_are_read_only():
    a, b = block_state(depth=5, seed=3), block_state(depth=5, seed=3)
    np.testing.assert_array_equal(a.weights, b.weights)
    with pytest.raises(ValueError, match="read-only"):
        a.X[0, 0] = 1.0


def test_residual_depth_and_ln_toggles_reuse_the_blocks(lab, monkeypatch):
    import attention_book.scenes.block as scene_module

    calls = []
    real = scene_module.encoder_stack
    monkeypatch.setattr(scene_module, "encoder_stack",
                        lambda *a, **k: calls.append(a) or real(*a, **k))
    for name, value in (("residual", False), ("depth", 12), ("norm_first", True),
                        ("depth", 2), ("residual", True), ("text", "the cat")):
        lab.controls[name].value = value
    assert calls == []  # weights are built once per (seed, LN placement)


# ---------------------------------------------------------------- the view


def tiles(view: BlockView, n, s):
    rgba = view.mosaic.get_array()
    rows, cols, gap, size = mosaic_layout(n, s, view.box)
    assert rgba.shape == (rows * size, cols * size, 4)
    return [rgba[(i // cols) * size + gap:(i // cols + 1) * size,
                 (i % cols) * size:(i % cols) * size + s] for i in range(n)]


def check_view(view: BlockView, st):
    for nf, line in view.lines.items():
        x, y = line.get_data()
        np.testing.assert_array_equal(y, st.norms[nf])
        np.testing.assert_array_equal(x, np.arange(2 * st.depth + 1))
        assert line.get_linewidth() == (2.4 if nf == st.norm_first else 1.0)
    for i, tile in enumerate(tiles(view, st.depth, st.s)):
        np.testing.assert_array_equal(tile, view.cmap(np.clip(st.weights[i], 0, 1),
                                                      bytes=True))
    assert view.tile_labels.texts[0] in ("layer 1", "L1")
    assert len(view.tile_labels.texts) == st.depth
    assert f"({st.depth}, {st.s}, {st.s})" in view.maps_panel.title.texts[0]
    assert f"L = {st.depth}" in view.norm_title.texts[0]


@pytest.mark.slow  # draws the view or figures (0.2-0.5 s a case)
@pytest.mark.parametrize("values", [{}, {"depth": 12, "norm_first": True},
                                    {"depth": 1, "residual": False},
                                    {"text": BLOCK_SENTENCES[2], "depth": 7}])
def test_view_shows_the_state(values):
    view = block_view()
    st = block_state(**{**SCENE.defaults, **values})
    view.show(st)
    check_view(view, st)
    assert view.x_labels.texts[0] == "0" and view.x_labels.texts[-1] == str(st.depth)
    assert view.y_labels.texts == ("0.25", "1", "4", "16", "64")


@pytest.mark.slow  # draws the view or figures (0.2-0.5 s a case)
def test_view_rejects_mismatched_shapes():
    view = block_view()
    norms = {False: np.ones(3), True: np.ones(3)}
    with pytest.raises(ValueError, match=r"weights must have shape \(L, s, s\) with s=2"):
        view.update(["a", "b"], norms, False, np.zeros((1, 3, 3)))
    with pytest.raises(ValueError, match="1 to 12 layers, got L=13"):
        view.update(["a"], norms, False, np.zeros((13, 1, 1)))
    with pytest.raises(ValueError, match=r"norms\[False\] must have shape \(2 L \+ 1,\) = \(5,\)"):
        view.update(["a"], norms, False, np.zeros((2, 1, 1)))


# ---------------------------------------------------------------- the live lab


def test_lab_is_a_widget_with_labelled_controls(lab):
    assert isinstance(lab, ipywidgets.VBox)
    assert set(lab.controls) == {"text", "norm_first", "residual", "depth", "seed", "causal"}
    assert all(c.description for c in lab.controls.values())
    assert lab.controls["depth"].min == 1 and lab.controls["depth"].max == MAX_DEPTH
    assert lab.image.value[:4] == b"\x89PNG"
    check_view(lab.view, lab.state)
    assert "Describe the picture" in lab.description.value


@pytest.mark.slow  # a live lab per case (0.2-0.5 s each); the fast loop keeps two lab tests per lab
@pytest.mark.parametrize("name,value", [
    ("text", "the dog saw the cat"), ("norm_first", True), ("residual", False),
    ("depth", 12), ("seed", 5), ("causal", True),
])
def test_every_control_changes_the_picture_in_place(lab, name, value):
    artists = (lab.view.mosaic, *lab.view.lines.values(), lab.view.tile_labels)
    axes = list(lab.figure.axes)
    png, mosaic = lab.image.value, lab.view.mosaic.get_array().copy()
    lines = {nf: line.get_ydata().copy() for nf, line in lab.view.lines.items()}
    lab.controls[name].value = value
    assert all(a is b for a, b in zip(artists, (lab.view.mosaic, *lab.view.lines.values(),
                                                lab.view.tile_labels)))
    assert list(lab.figure.axes) == axes  # no new axes: nothing re-plotted
    assert lab.image.value != png
    v = lab.values
    st = lab.state
    assert (st.norm_first, st.residual, st.depth, st.seed, st.causal) == (
        v["norm_first"], v["residual"], v["depth"], v["seed"], v["causal"])
    check_view(lab.view, st)
    if name == "norm_first":  # the same norms, the other line highlighted
        assert all(np.array_equal(lines[nf], line.get_ydata())
                   for nf, line in lab.view.lines.items())
        assert lab.view.lines[True].get_linewidth() == 2.4
    else:
        changed = not np.array_equal(lab.view.mosaic.get_array(), mosaic) or any(
            not np.array_equal(lines[nf], line.get_ydata())
            for nf, line in lab.view.lines.items())
        assert changed


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_bad_input_is_explained_not_raised():
    empty = live_lab("block", text="")
    assert empty.state.s == 0 and "no tokens" in empty.readout.value.lower()
    assert empty.view.maps_panel.notice.get_visible() and not empty.view.mosaic.get_visible()
    assert all(len(line.get_xdata()) == 0 for line in empty.view.lines.values())
    assert block_alt_text(empty.state).startswith("Empty panels")
    long = block_state(" ".join(["dog"] * 50))
    assert long.s == 32 and any("showing the first 32 of 50 tokens" in n.text
                                for n in long.notes)
    view = block_view()
    view.show(block_state(" ".join(["dog"] * 32), depth=12))  # labels that do not fit: none
    assert view.maps_panel.row_labels.texts == ()
    st = block_state("<script>alert(1)</script> & b")
    page = block_readout_html(st)
    assert "<script>" not in page and "&lt;" in page
    assert st.s > 0 and "script" in st.tokens


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


def test_every_suggested_state_is_a_valid_state():
    for values in SCENE.suggested:
        st = block_state(**{**SCENE.defaults, **values})
        assert st.depth == values.get("depth", 6)


# ---------------------------------------------------------------- the chapter's figures


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
