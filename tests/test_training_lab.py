"""Chapter 8's lab's state function (scenes/training.py) and the chapter's figure functions.

Expected values come from the trained runs directly (TinyRun.attention, head_scores,
history), not from the state function under test. The reversal model trains in about a
second, the induction model in about 12 s of CPU (once per process): every test that needs
either is marked slow.
"""

from __future__ import annotations


import re
import numpy as np
import pytest

from attention_book.plots import heads_figure, loss_figure, training_curves_figure
from attention_book.scenes import (
    INDUCTION_INPUTS,
    REVERSE_INPUTS,
    SCENES,
    TRAINING_CHECKPOINTS,
    read_symbols,
    training_alt_text,
    training_readout_html,
    training_state,
)

SCENE = SCENES["training"]


def symbols(text):
    return np.array([int(w) for w in text.split()])


# ---------------------------------------------------------------- the state function


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
@pytest.mark.parametrize("checkpoint", [0, 7, TRAINING_CHECKPOINTS - 1])
def test_state_maps_are_the_runs_attention_at_that_step(reverse, checkpoint):
    st = training_state("reverse", checkpoint, REVERSE_INPUTS[0])
    step = reverse.steps[checkpoint]
    assert (st.step, st.steps, st.checkpoint, st.vocab) == (step, 60, checkpoint, 10)
    expected = reverse.attention(symbols(REVERSE_INPUTS[0]), step=step)  # (1, 2, 8, 8)
    np.testing.assert_array_equal(st.weights, expected.reshape(2, 8, 8))
    assert st.tokens == tuple(symbols(REVERSE_INPUTS[0]))
    assert st.heads == ("layer 0, head 0", "layer 0, head 1")
    np.testing.assert_array_equal(st.predicted,
                                  reverse.predict(symbols(REVERSE_INPUTS[0]), step=step))
    scores = reverse.head_scores(step=step)
    np.testing.assert_allclose(np.array(st.score_curves)[:, checkpoint],
                               scores["anti_diagonal"].ravel())
    # the loss-curve marker: this step's fresh batch, or the last step at the end
    np.testing.assert_array_equal(st.loss, reverse.history["loss"])
    assert st.loss_now == reverse.history["loss"][min(step, 59)]
    assert st.accuracy_now == (reverse.accuracy if step == 60
                               else reverse.history["accuracy"][step])
    np.testing.assert_array_equal(st.score_steps, reverse.steps)


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_trained_state_reverses_and_scores_high(reverse):
    st = training_state()
    assert st.task == "reverse" and st.checkpoint == TRAINING_CHECKPOINTS - 1
    assert st.predicted == st.tokens[::-1] and all(st.right)
    assert min(st.input_scores) >= 0.9 and np.array(st.score_curves)[:, -1].min() >= 0.9
    assert np.array(st.score_curves)[:, 0].max() <= 0.3  # untrained: near uniform, 1/8
    assert st.score_names == ("anti-diagonal", "anti-diagonal")


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_all_same_symbol_keeps_the_anti_diagonal():
    st = training_state("reverse", reverse_input=REVERSE_INPUTS[2])
    assert set(st.tokens) == {7}
    assert min(st.input_scores) >= 0.85  # the head reads positions, not symbols


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_readout_and_alt_text(reverse):
    st = training_state("reverse", 3)
    page = training_readout_html(st)
    assert f"step {reverse.steps[3]} of 60" in page and "anti-diagonal" in page
    assert "<code>3 1 4 1 5 9 2 6</code>" in page
    alt = training_alt_text(st)
    assert "reverse model, step 7 of 60" in alt and "3 1 4 1 5 9 2 6" in alt
    assert "<" not in alt
    last = training_readout_html(training_state("reverse"))
    assert "held-out accuracy (1000 sequences) 1.000" in last and "8 of 8 right" in last


# ---------------------------------------------------------------- bad input


def test_read_symbols():
    assert read_symbols("3, 1  4") == ((3, 1, 4), [])
    assert read_symbols(None)[0] == ()
    tokens, notes = read_symbols("a b")
    assert tokens == () and "'a'" in notes[0].text


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_the_other_tasks_input_is_not_read():
    st = training_state("reverse", induction_input="nonsense")
    assert not st.notes and st.tokens == tuple(symbols(REVERSE_INPUTS[0]))


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_checkpoint_out_of_range():
    with pytest.raises(ValueError, match="checkpoint must be 0..25"):
        training_state("reverse", 26)
    with pytest.raises(ValueError, match="checkpoint must be one of"):
        SCENE.values(checkpoint=40)
    with pytest.raises(ValueError, match="task must be one of"):
        training_state("rotate")


# ---------------------------------------------------------------- the view


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_chapter_figures(reverse):
    w = reverse.attention(symbols(REVERSE_INPUTS[0]))[0]  # (2, 8, 8)
    fig = heads_figure(w, ["head 0", "head 1"], symbols(REVERSE_INPUTS[0]))
    assert fig._repr_png_()[0][:4] == b"\x89PNG" and len(fig.axes) == 3  # two maps, a bar
    with pytest.raises(ValueError, match="one title each"):
        heads_figure(w, ["only one"])
    fig = loss_figure({"reverse": (reverse.history["steps"], reverse.history["loss"])},
                      chance=np.log(10))
    assert fig._repr_png_()[0][:4] == b"\x89PNG"
    st = training_state()
    fig = training_curves_figure(st.loss_steps, st.loss, st.score_steps, st.score_curves,
                                 ["h0", "h1"], np.log(10))
    assert len(fig.axes) == 2 and fig._repr_png_()[0][:4] == b"\x89PNG"


# ---------------------------------------------------------------- the live lab


# ---------------------------------------------------------------- induction


@pytest.mark.slow
def test_induction_state(induction):
    st = training_state("induction")
    tokens = symbols(INDUCTION_INPUTS[0])
    np.testing.assert_array_equal(tokens, induction.example)  # the run's own probe
    expected = induction.attention(tokens)  # (2, 1, 24, 24)
    np.testing.assert_array_equal(st.weights, expected.reshape(2, 24, 24))
    assert st.heads == ("layer 0, head 0", "layer 1, head 0")
    assert st.score_names == ("previous-token", "induction")
    scores = induction.head_scores()
    np.testing.assert_allclose(np.array(st.score_curves)[:, -1], [scores["previous_token"][0, 0],
                                                          scores["induction"][1, 0]])
    assert st.input_scores[0] >= 0.8 and st.input_scores[1] >= 0.9
    right = [r for r in st.right if r is not None]
    assert len(right) == 24 - 7 - 1 and all(right)
    no_repeat = training_state("induction", induction_input=INDUCTION_INPUTS[2])
    assert no_repeat.input_scores[1] is None and all(r is None for r in no_repeat.right)
    assert any("nothing to copy" in n.text for n in no_repeat.notes)
    short = training_state("induction", induction_input="5")
    assert short.input_scores == (None, None) and short.weights.shape == (2, 1, 1)


def test_the_suggested_states_are_reachable_and_the_inputs_follow_the_task():
    for values in SCENE.suggested:
        SCENE.values(**values)  # each one the controls can show
    for task, used in (("reverse", "reverse_input"), ("induction", "induction_input")):
        active = SCENE.active(SCENE.values(task=task))
        assert active[used] and not active[({"reverse_input", "induction_input"} - {used}).pop()]
    assert SCENE.control("reverse_input").suggestions == REVERSE_INPUTS[1:]
    assert SCENE.control("induction_input").suggestions == INDUCTION_INPUTS[1:]


@pytest.mark.parametrize("text,match", [
    ("", "no symbols"),
    ("   ", "no symbols"),
    ("1 2 x 4", "'x' is not a symbol"),
    ("1.5 2 3 4 5 6 7 8", "'1.5' is not a symbol"),
    ("1 2 3", "exactly 8 symbols"),
    ("1 2 3 4 5 6 7 10", r"symbols 0..9 .* got 10"),
    ("-1 2 3 4 5 6 7 8", "got -1"),
    ("<b>1</b>", "is not a symbol"),
    ("1 2 3 4 5 6 7 99999999999999999999999", "symbols must be 0..9"),
])
def test_bad_reverse_input_gives_a_note_and_no_maps(text, match):
    st = training_state("reverse", reverse_input=text)
    assert st.tokens == () and st.weights.shape == (2, 0, 0)
    assert any(n.level == "error" and re.search(match, n.text)
               for n in st.notes), st.notes
    page = training_readout_html(st)
    assert "<b>1" not in page  # escaped
    assert "not valid" in training_alt_text(st)
