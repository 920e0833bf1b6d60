"""Chapter 6's lab, the mask editor: its state function (scenes/masking.py) and the
chapter's weight figures.

Expected values come from the math layer directly (embedding_table, projection_weights,
project_qkv, softmax and the masks of attention.py and masking.py), not from the state
function under test.
"""

from __future__ import annotations


import subprocess
import sys
import numpy as np
import pytest

from attention_book import attention as A
from attention_book import masking as K
from attention_book.embedding import embed, embedding_table
from attention_book.plots import weights_figure
from attention_book.scenes import (MASK_KINDS, MASKING_D, MASKING_D_K, MASKING_SENTENCES, SCENES,
                                   masking_state)
from attention_book.tokens import PAD_TOKEN, RUNNING_SENTENCE, Vocabulary, tokenize
from attention_book.tokens import MAX_TEXT_CHARS
from attention_book.scenes.core import MAX_WIDGET_TOKENS
from js_view import alt as alt_of, prefetch, readout as readout_of

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
    alt = alt_of("masking", state)
    assert "zero" in alt and "fully masked" in alt
    # the figure draws four panels (scores, mask, weights, output) and the alt says so
    assert alt.startswith("Four heatmaps") and "Second: the mask" in alt


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


@pytest.mark.parametrize("lower, upper", [(3, 5), (16, 1), (0, 16), (4, 4), (16, 16)])
def test_band_sliders_past_the_sentence_say_so(lower, upper):
    """The band sliders run to 16 on any sentence (QA #17): past s - 1 = 4 the mask stops
    changing, and a note says so; covering every key on both sides is no mask."""
    state = masking_state(RUNNING_SENTENCE, "band", lower=lower, upper=upper)
    np.testing.assert_array_equal(
        state.mask, masking_state(RUNNING_SENTENCE, "band", lower=min(lower, 4),
                                  upper=min(upper, 4)).mask)
    assert "values past 4 draw the same mask" in notes(state, "info")
    assert ("covers every key" in notes(state, "info")) == (min(lower, upper) >= 4)
    if min(lower, upper) >= 4:
        assert state.mask.all()
    quiet = masking_state(RUNNING_SENTENCE, "band", lower=min(lower, 3), upper=min(upper, 3))
    assert "draw the same mask" not in notes(quiet)


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
    out = readout_of("masking", state)
    assert "mask, scores, weights : (5, 5); output : (5, 4)" in out
    assert "keys each query may see: 1, 2, 3, 4, 5" in out
    sums = ", ".join(f"{x:.2f}" for x in state.row_sums)
    assert f"row sums of the weights: {sums}" in out
    padded = readout_of("masking", masking_state(RUNNING_SENTENCE, "padding", length=2))
    assert "&lt;pad&gt;" in padded and "<pad>" not in padded


# ---------------------------------------------------------------- bad input


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


# ---------------------------------------------------------------- the view


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


def test_every_kind_and_suggested_state_is_reachable_and_the_method_follows_the_kind():
    for kind in KINDS:
        values = SCENE.values(kind=kind)
        assert SCENE.active(values)["method"] == (kind != "none"), kind
    for values in SCENE.suggested:
        SCENE.values(**values)  # each one the controls can show
    assert SCENE.control("method").hint == "there is no mask to apply"


BAD_TEXT = [
    ("", "error", "empty"),
    ("   ", "error", "empty"),
    (42, "error", "string"),
    ("x" * (MAX_TEXT_CHARS + 1), "error", "limit"),
]


@pytest.fixture(scope="module")
def bad_text_views():
    """Every case's alt text, in one run of Node."""
    prefetch("masking", [masking_state(text, "causal") for text, _, _ in BAD_TEXT])


@pytest.mark.parametrize("text, level, words", BAD_TEXT)
def test_bad_text_gives_an_empty_state_and_a_note(text, level, words, bad_text_views):
    state = masking_state(text, "causal")
    assert state.s == 0 and state.weights.shape == (0, 0) and state.output.shape == (0, 4)
    assert words in notes(state, level).lower()
    assert "no tokens" in alt_of("masking", state)


def test_long_text_is_truncated_with_a_note():
    state = masking_state("the dog saw the cat " * 20, "causal")
    assert state.s == MAX_WIDGET_TOKENS and state.mask.shape == (32, 32)
    assert f"showing the first {MAX_WIDGET_TOKENS} of 100 tokens" in notes(state, "warning")


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_html_in_the_text_is_shown_as_text():
    text = "<script>alert(1)</script> <b>the</b> dog"
    state = masking_state(text, "padding", length=2)
    readout = readout_of("masking", state)
    assert "<script" not in readout and "<b>the" not in readout


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_the_controls_ranges_prevent_invalid_values():
    assert min(SCENE.control("window").values) == 1
    assert min(SCENE.control("lower").values) == min(SCENE.control("upper").values) == 0
    assert min(SCENE.control("length").values) == 0
    for values in ({"window": 0}, {"lower": -1}, {"kind": "diagonal"}, {"length": -1}):
        with pytest.raises(ValueError, match="must be one of"):
            SCENE.values(**values)


@pytest.mark.slow  # starts a fresh Python (0.5-1 s)
def test_the_scene_imports_neither_matplotlib_nor_ipywidgets():
    code = ("import sys, attention_book.scenes.masking as m\n"
            "m.masking_state('the dog', 'padding', length=1)\n"
            "bad = [x for x in ('matplotlib', 'ipywidgets', 'torch') if x in sys.modules]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
