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
    training_state,
)
from js_view import alt as alt_of, prefetch, readout as readout_of

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
    page = readout_of("training", st)
    assert f"step {reverse.steps[3]} of 60" in page and "anti-diagonal" in page
    assert "<code>3 1 4 1 5 9 2 6</code>" in page
    alt = alt_of("training", st)
    assert "reverse model, step 7 of 60" in alt and "3 1 4 1 5 9 2 6" in alt
    assert "<" not in alt
    last = readout_of("training", training_state("reverse"))
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
    with pytest.raises(ValueError, match="checkpoint must be a whole number in 0..25"):
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


def test_heads_figure_names_positions_and_their_symbols():
    """Figs 8.6 and 8.7 named only the symbols (31 29 28 ...) while the text says "query 11"
    and "6 positions back" (chapters 6-9 review, F6): every tick names its position and its
    symbol, "7: 31", and the axes say so; without symbols, the positions alone."""
    tokens = [31, 29, 28, 3, 10, 4, 12, 31, 29]
    maps = np.full((2, 9, 9), 1 / 9)
    fig = heads_figure(maps, ["head 0", "head 1"], tokens)
    fig.canvas.draw()
    for ax in fig.axes[:2]:
        want = [f"{i}: {t}" for i, t in enumerate(tokens)]
        assert [t.get_text() for t in ax.get_yticklabels()] == want
        assert [t.get_text() for t in ax.get_xticklabels()] == want
        assert ax.get_xlabel() == "key position j: its symbol"
    assert fig.axes[0].get_ylabel() == "query position i: its symbol"  # the row's first map
    fig = heads_figure(maps, ["head 0", "head 1"])
    fig.canvas.draw()
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [str(i) for i in range(9)]


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


BAD_REVERSE = [
    ("", "no symbols"),
    ("   ", "no symbols"),
    ("1 2 x 4", "'x' is not a symbol"),
    ("1.5 2 3 4 5 6 7 8", "'1.5' is not a symbol"),
    ("1 2 3", "exactly 8 symbols"),
    ("1 2 3 4 5 6 7 10", r"symbols 0..9 .* got 10"),
    ("-1 2 3 4 5 6 7 8", "got -1"),
    ("<b>1</b>", "is not a symbol"),
    ("1 2 3 4 5 6 7 99999999999999999999999", "symbols must be 0..9"),
]


@pytest.fixture(scope="module")
def bad_reverse_views():
    """Every case's readout and alt text, in one run of Node."""
    prefetch("training", [training_state("reverse", reverse_input=t) for t, _ in BAD_REVERSE])


@pytest.mark.parametrize("text,match", BAD_REVERSE)
def test_bad_reverse_input_gives_a_note_and_no_maps(text, match, bad_reverse_views):
    st = training_state("reverse", reverse_input=text)
    assert st.tokens == () and st.weights.shape == (2, 0, 0)
    assert any(n.level == "error" and re.search(match, n.text)
               for n in st.notes), st.notes
    page = readout_of("training", st)
    assert "<b>1" not in page  # escaped
    assert "not valid" in alt_of("training", st)


# ---------------------------------------------------------------- the generation lab

from attention_book.scenes import (
    GENERATION_PROMPTS,
    continuation_counts,
    generation_state,
)


def torch_greedy(run, step, prompt, n):
    """Greedy generation by the torch module with a run's weights at a checkpoint, rerun on
    the whole sequence."""
    import torch

    from attention_book.training import _new_model

    model = _new_model(run.config)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in run._state(step)[1].items()})
    model.eval()
    tokens = list(prompt)
    with torch.no_grad():
        for _ in range(n):
            logits = model(torch.tensor([tokens]))[0, -1]  # (V,)
            tokens.append(int(logits.argmax()))
    return tuple(tokens[len(prompt):])


def test_targets_are_the_keys_after_earlier_copies():
    from attention_book.scenes.generation import _targets

    assert _targets((5, 7, 5, 7, 5), 4) == (1, 3)
    assert _targets((5, 7, 5), 1) == () and _targets((5, 5), 1) == ()
    assert _targets((5, 5, 5), 2) == (1,)


@pytest.mark.slow  # the trained induction model (about 12 s once)
@pytest.mark.parametrize("checkpoint", [0, 8, TRAINING_CHECKPOINTS - 1])
def test_generation_is_the_torch_models_greedy_generation(induction, checkpoint):
    """On the weights the page runs (the lab's), and the same loop on the float32 run."""
    from attention_book.scenes.generation import _generate, generation_run

    page, step = generation_run("page"), induction.steps[checkpoint]
    for prompt in [*GENERATION_PROMPTS, "7", "1 2 3 4 5 6 1 2 3 4 5 6 1"]:
        st = generation_state(prompt, checkpoint, n=23, t=23)
        n = 24 - len(st.prompt)
        assert len(st.generated) == n and st.t == n
        assert st.generated == torch_greedy(page, step, st.prompt, n), (prompt, checkpoint)
        trained = _generate(st.prompt, step, n, 0.0, 0, "float32")[0]
        assert trained == torch_greedy(induction, step, st.prompt, n), (prompt, checkpoint)


@pytest.mark.slow
def test_page_weights_generate_as_the_float32_model():
    """The lab's (page's) weights against the float32 run: every generated token at the
    trained checkpoint, and nearly every one on the way (greedy, 40 held-out prompts)."""
    from attention_book.scenes.generation import _generate, generation_run
    from attention_book.training import make_batch

    run = generation_run("float32")
    prompts = [tuple(int(v) for v in row[:int(k)]) for row, k in
               zip(make_batch("induction", 40, 99).tokens, np.linspace(2, 16, 40))]
    same = total = 0
    for c in (0, 6, 8, 12, 25):
        for prompt in prompts:
            a = _generate(prompt, run.steps[c], 24 - len(prompt), 0.0, 0, "page")
            b = _generate(prompt, run.steps[c], 24 - len(prompt), 0.0, 0, "float32")
            if c == 25:
                assert a[0] == b[0]
                np.testing.assert_allclose(np.concatenate(a[1], axis=1),
                                           np.concatenate(b[1], axis=1), atol=1e-4)
            # tokens up to the first difference (after it, the sequences differ)
            k = next((i for i, (x, y) in enumerate(zip(a[0], b[0])) if x != y), len(a[0]))
            same += k
            total += len(a[0])
    assert same >= 0.95 * total, (same, total)


@pytest.mark.slow
def test_generation_rows_are_the_full_causal_pass(induction):
    """Each step's row (from the cached decoder) is that query's row of one full pass."""
    from attention_book.scenes.generation import generation_run

    for checkpoint in (0, 25):
        st = generation_state(GENERATION_PROMPTS[0], checkpoint, n=15, t=15)
        sequence = np.array(st.tokens)
        page = generation_run("page")  # the weights the lab (and the page) runs
        _, full = page.forward(sequence[:-1], page.steps[checkpoint])  # (2, 1, s-1, s-1)
        s0 = len(st.prompt)
        for k in range(st.t):
            q = s0 + k - 1
            np.testing.assert_allclose(st.weights[:, k, :q + 1], full[:, 0, q, :q + 1], atol=1e-6)
            assert np.all(st.weights[:, k, q + 1:] == 0)
        np.testing.assert_allclose(st.weights.sum(axis=-1), 1, atol=1e-5)
        assert st.top == tuple(int(np.argmax(st.weights[i, -1])) for i in range(2))


@pytest.mark.slow
def test_generation_state_scrubs_one_generation(induction):
    whole = generation_state(n=12, t=12)
    for t in (1, 5, 12):
        st = generation_state(n=12, t=t)
        assert st.generated == whole.generated and st.t == t
        assert st.tokens == whole.prompt + whole.generated[:t]
        np.testing.assert_array_equal(st.weights, whole.weights[:, :t, :len(st.tokens)])
    # the trained model continues the period-7 pattern, its induction head on the copy
    assert whole.generated == whole.expected
    assert all(whole.top[1] in whole.targets[-1] for _ in [0])
    html = readout_of("generation", whole)
    assert "12 of 12 right" in html and "chose <b>12</b>" in html
    alt = alt_of("generation", whole)
    assert "rows the steps 1 to 12" in alt and "layer 1, head 0 weighs key" in alt
    assert alt.endswith("12 generated tokens: the probability it was chosen with, 0.99 at step 12.")


@pytest.mark.slow
def test_sampling_is_seeded_and_greedy_ignores_the_seed(induction):
    a = generation_state(temperature=2.0, seed=1, checkpoint=4)
    assert a.generated == generation_state(temperature=2.0, seed=1, checkpoint=4).generated
    b = generation_state(temperature=2.0, seed=2, checkpoint=4)
    assert a.generated != b.generated
    assert generation_state(seed=5).generated == generation_state(seed=6).generated
    assert "sampled at T = 2, seed 1" in readout_of("generation", a)


@pytest.mark.slow
@pytest.mark.parametrize("prompt, match", [
    ("", "no symbols"), ("   ", "no symbols"), ("3 x 4", "'x' is not a symbol"),
    ("1 32", "symbols 0..31"), ("-1 2", "symbols 0..31"),
    (" ".join(["1"] * 24), "at most 23 symbols"), (" ".join(["1"] * 25), "at most 24"),
    ("99999999999999999999999", "symbols must be 0..31"),
])
def test_bad_prompt_gives_a_note_and_nothing_generated(induction, prompt, match):
    st = generation_state(prompt)
    assert st.generated == () and st.t == 0 and st.tokens == () and st.weights.shape == (2, 0, 0)
    assert st.notes[-1].level == "error" and re.search(re.escape(match), st.notes[-1].text)
    assert "the prompt is not valid" in alt_of("generation", st)
    assert "step t =" not in readout_of("generation", st)


@pytest.mark.slow
def test_too_many_tokens_are_cut_to_fit_and_t_to_the_last(induction):
    st = generation_state("1 2 3", n=23, t=23)
    assert len(st.generated) == 21 and st.t == 21 and len(st.tokens) == 24
    assert [n.level for n in st.notes] == ["warning", "info"]
    assert "generating 21, not 23" in st.notes[0].text


@pytest.mark.slow
@pytest.mark.parametrize("values, match", [
    (dict(n=0), "n must be a whole number in 1..23"), (dict(n=24), "n must be"),
    (dict(n=2.0), "n must be"), (dict(t=0), "t must be a whole number in 1..23"),
    (dict(checkpoint=26), "checkpoint must be a whole number in 0..25"),
    (dict(checkpoint=True), "checkpoint must be"), (dict(seed=21), "seed must be"),
    (dict(temperature=0.7), "temperature must be one of"),
    (dict(temperature=True), "temperature must be one of"),
])
def test_out_of_range_values_raise(induction, values, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        generation_state(**values)


@pytest.mark.slow
def test_generation_scene_suggestions_are_reachable():
    scene = SCENES["generation"]
    for values in scene.suggested:
        scene.values(**values)
    with pytest.raises(ValueError):
        scene.values(n=24)
    assert scene.active(scene.values())["seed"] is False
    assert scene.active(scene.values(temperature=1.0))["seed"] is True


@pytest.mark.slow
def test_continuation_counts_trained_against_untrained(induction):
    from attention_book.training import make_batch

    batch = make_batch("induction", 40, 4242)
    prompts = []
    for row in batch.tokens:
        p = next(i for i in range(1, 24) if row[i] == row[0])  # the period
        prompts.append((tuple(row[:p + 2]), 22 - p))
    trained, untrained = continuation_counts(prompts, 25), continuation_counts(prompts, 0)
    assert trained["prompts"] == untrained["prompts"] == 40
    assert trained["whole"] >= 38 and trained["top"][1] >= 0.9 * trained["steps"]
    assert untrained["whole"] <= 2 and untrained["top"][1] <= 0.5 * untrained["steps"]


@pytest.mark.slow
def test_cached_decoder_keeps_each_calls_weights(induction):
    """CachedDecoder.weights: one (h, t_new, length) a layer, the full causal pass's rows."""
    x = induction.example[:12]  # (12,)
    _, full = induction.forward(x)  # (L, h, s, s) = (2, 1, 12, 12)
    decoder = induction.numpy_model().decoder()
    assert decoder.weights == []
    decoder(x[:5])
    assert [w.shape for w in decoder.weights] == [(1, 5, 5)] * 2
    np.testing.assert_allclose(np.stack(decoder.weights), full[:, :, :5, :5], atol=1e-6)
    for i in range(5, 12):
        decoder(x[i:i + 1])
        assert [w.shape for w in decoder.weights] == [(1, 1, i + 1)] * 2
        np.testing.assert_allclose(np.stack(decoder.weights)[:, :, 0], full[:, :, i, :i + 1],
                                   atol=1e-6)


def test_the_generation_scene_knows_the_induction_models_shape_without_torch():
    """scenes.generation keeps the induction task's positions and symbols as constants (the
    training module imports torch, which no scene does): they are the task's."""
    from attention_book.scenes import generation
    from attention_book.training import TASKS

    task = TASKS["induction"]
    assert (generation._LENGTH, generation._VOCAB) == (task.length, task.vocab)
