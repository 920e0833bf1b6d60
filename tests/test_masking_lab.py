"""Chapter 6's lab, the mask editor: its state function (scenes/masking.py), its view
(plots/masking.py) and the live lab (live_lab("masking")).

Expected values come from the math layer directly (embedding_table, projection_weights,
project_qkv, softmax and the masks of attention.py and masking.py), not from the state
function under test.
"""

from __future__ import annotations

import subprocess
import sys

import ipywidgets
import numpy as np
import pytest

from attention_book import attention as A
from attention_book import masking as K
from attention_book.controls import live_lab
from attention_book.embedding import embed, embedding_table
from attention_book.plots import MAX_CROSSED, figure_png, masking_view, weights_figure
from attention_book.scenes import (
    MASK_KINDS,
    MASKING_D,
    MASKING_D_K,
    MASKING_SENTENCES,
    MAX_WIDGET_TOKENS,
    SCENES,
    masking_alt_text,
    masking_readout_html,
    masking_state,
)
from attention_book.tokens import MAX_TEXT_CHARS, PAD_TOKEN, RUNNING_SENTENCE, Vocabulary, tokenize

SCENE = SCENES["masking"]
VOCAB = Vocabulary.default()
KINDS = [v for _, v in MASK_KINDS]
ATOL = 1e-12


def qkv(tokens):
    """Q, K, V:(s, d_k) and the unmasked scores (s, s), straight from the math layer."""
    X = embed(VOCAB.encode(list(tokens)), embedding_table(len(VOCAB), MASKING_D, 0))
    Q, K_, V = A.project_qkv(X, *A.projection_weights(MASKING_D, MASKING_D_K, seed=0))
    return Q, K_, V, A.attention_scores(Q, K_)


def expected_mask(kind, s, length=3, window=2, lower=1, upper=1):
    return {"none": np.ones((s, s), bool), "causal": A.causal_mask(s),
            "padding": np.broadcast_to(K.padding_mask(min(length, s), s), (s, s)),
            "window": K.sliding_window_mask(s, window),
            "band": K.band_mask(s, lower, upper)}[kind]


def notes(state, level=None):
    return " | ".join(n.text for n in state.notes if level in (None, n.level))


# ---------------------------------------------------------------- the state function


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("text", MASKING_SENTENCES)
def test_masks_weights_and_output_come_from_the_math_layer(kind, text):
    state = masking_state(text, kind)
    s = len(tokenize(text))
    mask = expected_mask(kind, s)
    np.testing.assert_array_equal(state.mask, mask)
    Q, K_, V, scores = qkv(state.tokens)
    np.testing.assert_allclose(state.scores, scores, atol=ATOL)
    weights = A.softmax(np.where(mask, scores, -np.inf))  # -inf before the softmax
    np.testing.assert_allclose(state.weights, weights, atol=ATOL)
    np.testing.assert_allclose(state.output, weights @ V, atol=ATOL)
    assert state.output.shape == (s, MASKING_D_K) and state.scores.shape == (s, s)
    assert (state.weights[~mask] == 0).all()
    live = mask.any(-1)
    np.testing.assert_allclose(state.row_sums[live], 1.0, atol=ATOL)  # renormalised


def test_each_row_is_renormalised_over_the_keys_it_may_see():
    state = masking_state(MASKING_SENTENCES[1], "band", lower=2, upper=1)
    for i in range(state.s):
        allowed = state.mask[i]
        np.testing.assert_allclose(state.weights[i, allowed], A.softmax(state.scores[i, allowed]),
                                   atol=ATOL)


@pytest.mark.parametrize("kind", ["causal", "window", "band", "padding"])
def test_masking_after_the_softmax_is_the_wrong_way(kind):
    right = masking_state(RUNNING_SENTENCE, kind, method="before")
    wrong = masking_state(RUNNING_SENTENCE, kind, method="after")
    np.testing.assert_allclose(wrong.weights, A.softmax(right.scores) * right.mask, atol=ATOL)
    np.testing.assert_array_equal(wrong.mask, right.mask)
    blocked = (~right.mask).any(-1) & right.mask.any(-1)  # rows that lost some keys
    assert (wrong.row_sums[blocked] < 1 - 1e-6).all()
    np.testing.assert_allclose(wrong.row_sums[~(~right.mask).any(-1)], 1.0, atol=ATOL)
    assert "not 1" in notes(wrong, "warning") and "not 1" not in notes(right)
    assert "0 after softmax" in _shown_title(wrong)


def _shown_title(state):
    view = masking_view()
    view.show(state)
    return view.weights_panel.ax.get_title()


def test_padding_hides_pad_keys_and_pad_rows_still_compute():
    text = MASKING_SENTENCES[1]  # 11 tokens
    state = masking_state(text, "padding", length=4)
    words = tokenize(text)
    assert state.tokens == tuple(words[:4]) + (PAD_TOKEN,) * 7
    np.testing.assert_array_equal(state.real, np.arange(11) < 4)
    assert (state.weights[:, 4:] == 0).all()  # no query looks at a <pad> key
    # the <pad> query rows compute something finite and non-zero (the loss ignores it)
    assert np.isfinite(state.output).all() and (np.abs(state.output[4:]).sum(-1) > 0).all()
    # real rows equal the real prefix alone, unpadded and unmasked
    _, _, V, scores = qkv(words[:4])
    np.testing.assert_allclose(state.output[:4], A.softmax(scores) @ V, atol=ATOL)
    assert "<pad> query rows 4..10" in notes(state, "info")
    assert not state.fully_masked.any()


def test_padding_everything_gives_fully_masked_zero_rows_not_nan():
    state = masking_state(RUNNING_SENTENCE, "padding", length=0)
    assert state.tokens == (PAD_TOKEN,) * 5
    assert state.fully_masked.all() and not state.mask.any()
    assert (state.weights == 0).all() and (state.output == 0).all()
    assert not np.isnan(state.weights).any()
    np.testing.assert_array_equal(state.row_sums, 0.0)
    assert "rows 0, 1, 2, 3, 4 may attend to nothing" in notes(state, "warning")
    assert "zero" in masking_alt_text(state) and "fully masked" in masking_alt_text(state)
    assert _shown_title(state).endswith("all rows empty: 0")
    left = masking_state(RUNNING_SENTENCE, "band", lower=0, upper=0)  # each token: itself
    assert _shown_title(left).endswith("rows sum to 1")


def test_length_beyond_the_sentence_means_no_padding():
    state = masking_state(RUNNING_SENTENCE, "padding", length=20)
    assert state.real.all() and PAD_TOKEN not in state.tokens and state.mask.all()
    assert "every token is real" in notes(state, "info")


def test_window_and_band_that_reach_everything_are_causal():
    wide = masking_state(RUNNING_SENTENCE, "window", window=9)
    np.testing.assert_array_equal(wide.mask, A.causal_mask(5))
    assert "the same as the causal mask" in notes(wide)
    band = masking_state(RUNNING_SENTENCE, "band", lower=4, upper=0)
    np.testing.assert_array_equal(band.mask, A.causal_mask(5))
    assert "is the causal mask" in notes(band)


def test_controls_without_effect_change_nothing():
    base = masking_state(RUNNING_SENTENCE, "causal")
    for other in ({"length": 0}, {"window": 5}, {"lower": 0, "upper": 3}):
        np.testing.assert_array_equal(masking_state(RUNNING_SENTENCE, "causal", **other).weights,
                                      base.weights)
    none = masking_state(RUNNING_SENTENCE, "none")
    np.testing.assert_array_equal(masking_state(RUNNING_SENTENCE, "none", method="after").weights,
                                  none.weights)
    assert SCENE.active(SCENE.values(kind="none"))["method"] is False
    active = {k: SCENE.active(SCENE.values(kind=k)) for k in KINDS}
    assert [k for k in KINDS if active[k]["length"]] == ["padding"]
    assert [k for k in KINDS if active[k]["window"]] == ["window"]
    assert [k for k in KINDS if active[k]["lower"] and active[k]["upper"]] == ["band"]


def test_readout_shapes_row_sums_and_escaping():
    state = masking_state(RUNNING_SENTENCE, "causal", method="after")
    out = masking_readout_html(state)
    assert "mask, scores, weights : (5, 5); output : (5, 4)" in out
    assert "keys each query may see: 1, 2, 3, 4, 5" in out
    sums = ", ".join(f"{x:.2f}" for x in state.row_sums)
    assert f"row sums of the weights: {sums}" in out
    padded = masking_readout_html(masking_state(RUNNING_SENTENCE, "padding", length=2))
    assert "&lt;pad&gt;" in padded and "<pad>" not in padded


# ---------------------------------------------------------------- bad input


@pytest.mark.slow  # draws the view or figures (0.2-0.5 s a case)
@pytest.mark.parametrize("text, level, words", [
    ("", "error", "empty"),
    ("   ", "error", "empty"),
    (42, "error", "string"),
    ("x" * (MAX_TEXT_CHARS + 1), "error", "limit"),
])
def test_bad_text_gives_an_empty_state_and_a_note(text, level, words):
    state = masking_state(text, "causal")
    assert state.s == 0 and state.weights.shape == (0, 0) and state.output.shape == (0, 4)
    assert words in notes(state, level).lower()
    view = masking_view()
    view.show(state)  # the empty picture: the panels' notices, no crosses
    assert view.scores_panel.notice.get_visible() and not view.scores_panel.image.get_visible()
    assert len(view.score_crosses.get_xdata()) == 0
    assert "no tokens" in masking_alt_text(state)
    assert figure_png(view.figure)[:4] == b"\x89PNG"


@pytest.mark.slow  # draws the view or figures (0.2-0.5 s a case)
def test_long_text_is_truncated_with_a_note():
    state = masking_state("the dog saw the cat " * 20, "causal")
    assert state.s == MAX_WIDGET_TOKENS and state.mask.shape == (32, 32)
    assert f"showing the first {MAX_WIDGET_TOKENS} of 100 tokens" in notes(state, "warning")
    view = masking_view()
    view.show(state)  # 32 x 32: the grey marks the masked scores, crosses would blur
    assert MAX_CROSSED < 32 and len(view.score_crosses.get_xdata()) == 0
    assert np.isnan(np.asarray(view.scores_panel.image.get_array(), float)).sum() == 32 * 31 // 2


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_html_in_the_text_is_shown_as_text():
    text = "<script>alert(1)</script> <b>the</b> dog"
    state = masking_state(text, "padding", length=2)
    readout = masking_readout_html(state)
    assert "<script" not in readout and "<b>the" not in readout
    lab = live_lab("masking", text=text)
    assert "<script" not in lab.readout.value and "<script" not in lab.description.value
    assert "&lt;" in lab.description.value  # the alt text names the tokens, escaped


@pytest.mark.parametrize("values, match", [
    ({"window": 0}, r"window must be a whole number >= 1, got 0"),
    ({"window": 2.5}, r"window must be a whole number"),
    ({"lower": -1}, r"lower must be a whole number >= 0, got -1"),
    ({"upper": True}, r"upper must be a whole number"),
    ({"length": -2}, r"length \(real tokens\) must be a whole number >= 0, got -2"),
    ({"kind": "diagonal"}, r"kind must be one of \['none', 'causal', 'padding', 'window', "
                           r"'band'\], got 'diagonal'"),
    ({"method": "during"}, r"method must be 'before' or 'after'"),
])
def test_invalid_numbers_are_rejected_by_the_state_function(values, match):
    with pytest.raises(ValueError, match=match):
        masking_state(RUNNING_SENTENCE, **{"kind": "band", **values})


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_the_controls_ranges_prevent_invalid_values():
    assert min(SCENE.control("window").values) == 1
    assert min(SCENE.control("lower").values) == min(SCENE.control("upper").values) == 0
    assert min(SCENE.control("length").values) == 0
    for values in ({"window": 0}, {"lower": -1}, {"kind": "diagonal"}, {"length": -1}):
        with pytest.raises(ValueError, match="must be one of"):
            SCENE.values(**values)
    lab = live_lab("masking")
    assert lab.controls["window"].min == 1 and lab.controls["lower"].min == 0
    assert lab.controls["length"].min == 0


@pytest.mark.slow  # starts a fresh Python (0.5-1 s)
def test_the_scene_imports_neither_matplotlib_nor_ipywidgets():
    code = ("import sys, attention_book.scenes.masking as m\n"
            "m.masking_state('the dog', 'padding', length=1)\n"
            "bad = [x for x in ('matplotlib', 'ipywidgets', 'torch') if x in sys.modules]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


# ---------------------------------------------------------------- the view


@pytest.mark.slow  # draws the view or figures (0.2-0.5 s a case)
def test_view_artists_after_show():
    state = masking_state(MASKING_SENTENCES[1], "window", window=3)
    view = masking_view()
    figure = view.figure
    artists = (view.scores_panel.image, view.weights_panel.image, view.output_panel.image,
               view.score_crosses, view.weight_crosses, list(figure.axes))
    view.show(state)
    shown = np.asarray(view.scores_panel.image.get_array(), dtype=float)
    np.testing.assert_array_equal(np.isnan(shown), ~state.mask)  # masked: NaN, drawn grey
    np.testing.assert_allclose(shown[state.mask], state.scores[state.mask])
    np.testing.assert_allclose(view.weights_panel.image.get_array(), state.weights)
    np.testing.assert_allclose(view.output_panel.image.get_array(), state.output)
    rows, cols = np.nonzero(~state.mask)
    for crosses in (view.score_crosses, view.weight_crosses):
        np.testing.assert_array_equal(crosses.get_xdata(), cols)
        np.testing.assert_array_equal(crosses.get_ydata(), rows)
    s = state.s
    assert view.scores_panel.image.get_extent() == [-0.5, s - 0.5, s - 0.5, -0.5]
    assert view.output_panel.image.get_extent() == [-0.5, MASKING_D_K - 0.5, s - 0.5, -0.5]
    assert list(view.weights_panel.row_labels.texts) == list(state.tokens)
    assert list(view.scores_panel.col_labels.texts) == list(state.tokens)
    assert view.scores_panel.ax.get_title() == f"scores (11, 11): {int((~state.mask).sum())} masked"
    assert view.weights_panel.ax.get_title().endswith("rows sum to 1")
    assert view.output_panel.ax.get_title() == "output (11, 4)"
    # shown again: the same artists, nothing re-plotted
    view.show(masking_state(RUNNING_SENTENCE, "none"))
    assert (view.scores_panel.image, view.weights_panel.image, view.output_panel.image,
            view.score_crosses, view.weight_crosses, list(figure.axes)) == artists
    assert len(view.score_crosses.get_xdata()) == 0
    with pytest.raises(ValueError, match="expected scores, mask, weights"):
        view.update(["a"], np.zeros((2, 2)), np.ones((2, 2), bool), np.zeros((2, 2)),
                    np.zeros((2, 4)))


def test_weights_figure_writes_row_sums_and_crosses_masked_cells():
    mask = A.causal_mask(3)
    weights = A.softmax(np.where(mask, np.zeros((3, 3)), -np.inf))
    fig = weights_figure([mask, weights], ["mask", "weights"], ["a", "b", "c"],
                         masks=[None, mask])
    assert fig._repr_png_()[0][:4] == b"\x89PNG"
    texts = [t.get_text() for t in fig.axes[1].texts]
    assert texts == ["\u03a3 1", "\u03a3 1", "\u03a3 1"]
    assert [t.get_text() for t in fig.axes[0].texts] == ["\u03a3 1", "\u03a3 2", "\u03a3 3"]
    (crosses,) = fig.axes[1].lines
    np.testing.assert_array_equal(crosses.get_xdata(), [1, 2, 2])
    with pytest.raises(ValueError, match="one title"):
        weights_figure([weights], ["a", "b"], ["a", "b", "c"])


# ---------------------------------------------------------------- the live lab


@pytest.fixture
def lab():
    return live_lab("masking")


def test_lab_has_labelled_controls_and_starts_at_the_running_example(lab):
    assert set(lab.controls) == {"text", "kind", "length", "window", "lower", "upper", "method"}
    assert isinstance(lab.controls["kind"], ipywidgets.ToggleButtons)
    assert isinstance(lab.controls["window"], ipywidgets.IntSlider)
    for control in lab.controls.values():
        assert control.description.strip()
    assert lab.state.tokens == tuple(tokenize(RUNNING_SENTENCE)) and lab.state.kind == "causal"
    np.testing.assert_array_equal(lab.state.mask, A.causal_mask(5))
    assert lab.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Describe the picture" in lab.description.value


# Each step: (control, value, the values that make it have an effect first).
STEPS = [
    ("text", "the dog saw the cat", {}),
    ("kind", "none", {}),
    ("kind", "padding", {}),
    ("length", 1, {"kind": "padding"}),
    ("length", 0, {"kind": "padding"}),
    ("kind", "window", {}),
    ("window", 3, {"kind": "window"}),
    ("kind", "band", {}),
    ("lower", 0, {"kind": "band"}),
    ("upper", 3, {"kind": "band"}),
    ("method", "after", {"kind": "causal"}),
]


@pytest.mark.slow  # a live lab per case (0.2-0.5 s each); the fast loop keeps two lab tests per lab
@pytest.mark.parametrize("name, value, first", STEPS, ids=[f"{n}={v}" for n, v, _ in STEPS])
def test_every_control_changes_the_picture(lab, name, value, first):
    lab.set_values(first)
    before = lab.image.value
    images = (lab.view.scores_panel.image, lab.view.weights_panel.image)
    lab.controls[name].value = value
    assert lab.image.value != before, f"{name}={value!r} left the picture unchanged"
    assert (lab.view.scores_panel.image, lab.view.weights_panel.image) == images  # in place
    values = {**SCENE.defaults, **first, name: value}
    expected = masking_state(**values)
    np.testing.assert_array_equal(lab.state.mask, expected.mask)
    np.testing.assert_allclose(lab.view.weights_panel.image.get_array(), expected.weights)
    assert lab.readout.value == masking_readout_html(expected)


def test_inactive_controls_are_disabled_with_a_hint(lab):
    assert lab.controls["length"].disabled and lab.controls["window"].disabled
    assert "padding mask only" in lab.hints["length"].value
    assert not lab.controls["method"].disabled
    lab.controls["kind"].value = "padding"
    assert not lab.controls["length"].disabled and lab.hints["length"].value == ""
    assert lab.controls["lower"].disabled and lab.controls["upper"].disabled
    lab.controls["kind"].value = "none"
    assert lab.controls["method"].disabled and "no mask" in lab.hints["method"].value
    lab.controls["kind"].value = "band"
    assert not lab.controls["lower"].disabled and not lab.controls["upper"].disabled


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_lab_padding_everything_shows_zero_rows(lab):
    lab.set_values({"kind": "padding", "length": 0})
    assert lab.state.fully_masked.all()
    assert (np.asarray(lab.view.weights_panel.image.get_array()) == 0).all()
    assert "may attend to nothing" in lab.readout.value
    assert "row sums of the weights: 0.00, 0.00" in lab.readout.value


def test_every_kind_and_suggested_state_is_reachable_and_the_method_follows_the_kind():
    for kind in KINDS:
        values = SCENE.values(kind=kind)
        assert SCENE.active(values)["method"] == (kind != "none"), kind
    for values in SCENE.suggested:
        SCENE.values(**values)  # each one the controls can show
    assert SCENE.control("method").hint == "there is no mask to apply"
