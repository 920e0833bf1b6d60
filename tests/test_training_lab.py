"""Chapter 8's lab (scenes/training.py, live_lab("training")), its view
(plots/training.py) and the chapter's figure functions.

Expected values come from the trained runs directly (TinyRun.attention, head_scores,
history), not from the state function under test. The reversal model trains in about a
second, the induction model in about 12 s of CPU (once per process): every test that needs
either is marked slow.
"""

from __future__ import annotations

import html
import io
import re

import ipywidgets
import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image

from attention_book import training as T
from attention_book.controls import live_lab
from attention_book.plots import (
    TrainingView,
    figure_png,
    heads_figure,
    loss_figure,
    training_curves_figure,
    training_view,
)
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


@pytest.fixture
def lab():
    return live_lab("training")


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
    np.testing.assert_allclose(np.array(st.score_curves)[:, checkpoint], scores["anti_diagonal"].ravel())
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


@pytest.mark.slow  # draws the view or figures (0.2-0.5 s a case)
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
    view = training_view()
    view.show(st)
    assert all(p.notice.get_visible() for p in view.panels)
    assert "not valid" in training_alt_text(st)


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


@pytest.mark.slow  # draws the view or figures (0.2-0.5 s a case)
def test_view_shows_the_state(reverse):
    view = training_view()
    st = training_state("reverse", 5)
    view.show(st)
    for panel, w in zip(view.panels, st.weights):
        np.testing.assert_array_equal(panel.image.get_array(), w)
        assert panel.row_labels.texts == tuple(str(t) for t in st.tokens)
    assert view.panels[0].title.texts[0].startswith("layer 0, head 0: anti-diagonal")
    loss_line = view.loss_lines[0]
    np.testing.assert_array_equal(loss_line.get_xdata(), reverse.history["steps"])
    np.testing.assert_array_equal(loss_line.get_ydata(), reverse.history["loss"])
    step = reverse.steps[5]
    assert list(view.markers[0].get_xdata()) == [step, step]  # the loss panel's line
    assert view.markers[1].get_ydata()[0] == reverse.history["loss"][step]
    assert list(view.markers[2].get_xdata()) == [step, step]  # the scores panel's line
    for marker, curve in zip(view.markers[3:], st.score_curves):
        assert marker.get_ydata()[0] == curve[5]
    np.testing.assert_array_equal(view.score_lines[1].get_ydata(), st.score_curves[1])
    assert view.score_lines[0].get_label() == "layer 0, head 0: anti-diagonal"


@pytest.mark.slow  # draws the view or figures (0.2-0.5 s a case)
def test_moving_the_step_redraws_only_the_marker_and_maps(monkeypatch):
    view = training_view()
    view.show(training_state("reverse", 5))
    redrawn = []
    monkeypatch.setattr(view.static, "invalidate", lambda **kw: redrawn.append(True))
    view.show(training_state("reverse", 6))
    view.show(training_state("reverse", 6, "0 1 2 3 4 5 6 7"))
    assert redrawn == []  # the curves stay pasted pixels
    assert list(view.markers[0].get_xdata()) == [T.train_tiny("reverse").steps[6]] * 2


@pytest.mark.slow  # draws the view or figures (0.2-0.5 s a case)
def test_view_rejects_mismatched_shapes():
    view = training_view()
    st = training_state("reverse")
    curves = (st.loss_steps, st.loss, st.score_steps, st.score_curves, ["a", "b"], 2.3)
    with pytest.raises(ValueError, match=r"\(2, s, s\) with s=3"):
        view.update((1, 2, 3), np.zeros((2, 4, 4)), ["a", "b"], 0, curves)
    with pytest.raises(ValueError, match="one title per head"):
        view.update((1,), np.ones((2, 1, 1)), ["a"], 0, curves)


@pytest.mark.slow  # draws the view or figures (0.2-0.5 s a case)
def test_view_builds_into_a_given_figure():
    figure = Figure(figsize=(10, 4), layout="constrained")
    assert isinstance(training_view(figure), TrainingView)


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


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_live_lab_has_labelled_controls(lab):
    assert set(lab.controls) == {"task", "checkpoint", "reverse_input", "induction_input"}
    for control in lab.controls.values():
        assert control.description
    assert isinstance(lab.controls["checkpoint"], ipywidgets.IntSlider)
    assert lab.controls["checkpoint"].max == TRAINING_CHECKPOINTS - 1
    assert lab.image.value[:4] == b"\x89PNG"
    assert lab.controls["induction_input"].disabled  # the reversal task is shown
    assert not lab.controls["reverse_input"].disabled


@pytest.mark.slow  # a live lab per case (0.2-0.5 s each); the fast loop keeps two lab tests per lab
@pytest.mark.parametrize("name,value", [("checkpoint", 4), ("reverse_input", "0 1 2 3 4 5 6 7")])
def test_every_reverse_control_changes_the_picture(lab, name, value):
    before, panels = lab.image.value, lab.view.panels
    lab.controls[name].value = value
    assert lab.image.value != before
    assert lab.view.panels is panels
    st = lab.state
    assert st.checkpoint == lab.values["checkpoint"]
    np.testing.assert_array_equal(lab.view.panels[0].image.get_array(), st.weights[0])


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_typing_bad_input_in_the_live_lab(lab):
    lab.controls["reverse_input"].value = "1 2 3"
    assert "exactly 8 symbols" in html.unescape(lab.readout.value)
    assert lab.view.panels[0].notice.get_visible()
    lab.controls["reverse_input"].value = ""
    assert "no symbols" in lab.readout.value
    lab.controls["checkpoint"].value = 0  # the curves still move
    assert lab.state.step == 0
    lab.controls["reverse_input"].value = "3 1 4 1 5 9 2 6"
    assert not lab.view.panels[0].notice.get_visible()


@pytest.mark.slow
def test_task_and_induction_input_change_the_picture(lab, induction):
    before = lab.image.value
    lab.controls["task"].value = "induction"
    assert lab.image.value != before and lab.state.task == "induction"
    assert lab.controls["reverse_input"].disabled and not lab.controls["induction_input"].disabled
    assert lab.state.weights.shape == (2, 24, 24)
    before = lab.image.value
    lab.controls["induction_input"].value = INDUCTION_INPUTS[1]
    assert lab.image.value != before and lab.state.s == 24
    lab.controls["induction_input"].value = " ".join(["1"] * 25)
    assert "at most 24 symbols" in lab.readout.value
    lab.controls["induction_input"].value = "1 2 40"
    assert "symbols 0..31" in lab.readout.value


@pytest.mark.slow
def test_switching_task_pastes_the_curves_drawn_when_the_lab_opened(lab, induction):
    """Both tasks' curves are drawn once when the lab opens (Scene.warm); switching the
    task then pastes them (it took 1.3 s in JupyterLab when it drew them), and the picture
    is the one a fresh view draws."""
    drawn = []
    real = lab.view.static._draw_static
    lab.view.static._draw_static = lambda renderer: (drawn.append(1), real(renderer))
    for task in ("induction", "reverse", "induction"):
        lab.controls["task"].value = task
    assert drawn == []
    fresh = training_view()
    fresh.show(lab.state)
    lab_pixels = np.asarray(Image.open(io.BytesIO(lab.image.value)).convert("RGB"))
    fresh_pixels = np.asarray(Image.open(io.BytesIO(figure_png(fresh.figure))).convert("RGB"))
    np.testing.assert_array_equal(lab_pixels, fresh_pixels)


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
