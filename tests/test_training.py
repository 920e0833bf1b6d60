"""The tiny transformers of chapter 8: they learn, their heads take the expected shapes,
the book's numpy code reproduces torch's attention, and training is deterministic.

The two default runs train once per process (train_tiny caches them), or load from the
checkout's disk cache (test_training_cache.py) if an earlier process trained them: about 1 s
for "reverse", 10-12 s of CPU for "induction" on one thread. Every test that trains (even the
reversal model, or 3 steps: a process's first training costs ~1 s) is marked slow, so
``pytest -m "not slow"`` runs only the batches and the argument checks here.

Tolerances: numpy attention vs the float32 torch model, atol 1e-5; logits, atol 1e-4.
Head-score thresholds sit well below what seeds 0-3 measured (reverse anti-diagonal
0.96 per head; induction: previous-token 0.88-0.94 in layer 0, induction 0.93-0.97 in
layer 1).
"""

import types

import numpy as np
import pytest
import torch

from attention_book import heads as H
from attention_book import training as T

TOL32 = dict(atol=1e-5, rtol=0)


@pytest.fixture(scope="module")
def short_induction():
    """6 steps: enough to check shapes, inputs and determinism, not learning."""
    return T.train_tiny("induction", steps=6)


@pytest.fixture(params=["reverse", pytest.param("induction", marks=pytest.mark.slow)])
def run(request):
    return request.getfixturevalue(request.param)


def torch_attention(model, tokens):
    """Torch's own per-head weights: each layer's self_attn on its normed input (pre-LN).

    Returns attention (b, n_layers, h, s, s) and logits (b, s, V) as numpy.
    """
    t = torch.as_tensor(tokens)
    s = t.shape[-1]
    mask = model.torch_mask(s)  # True = may NOT attend (torch's polarity)
    maps = []
    with torch.no_grad():
        x = model.embed(t) + model.position.weight[:s]  # (b, s, d)
        for layer in model.layers:
            normed = layer.norm1(x)  # norm_first: attention reads LN1(x)
            _, w = layer.self_attn(normed, normed, normed, attn_mask=mask,
                                   need_weights=True, average_attn_weights=False)
            maps.append(w)  # (b, h, s, s)
            x = layer(x, src_mask=mask)
        logits = model.unembed(model.norm(x))  # (b, s, V)
    return torch.stack(maps, dim=1).numpy(), logits.numpy()


def held_out(run, n=1000):
    return T.make_batch(run.task, n, T.HELD_OUT_SEED, period=run.config["period"])


# ---------------------------------------------------------------- they learn


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_reverse_learns(reverse):
    assert reverse.accuracy >= 0.99
    np.testing.assert_array_equal(reverse.predict(reverse.example), reverse.example[::-1])
    assert reverse.config["n_layers"] == 1 and reverse.config["n_heads"] == 2


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_reverse_heads_are_anti_diagonal(reverse):
    batch = T.make_batch("reverse", 256, 7)
    weights = reverse.attention(batch.tokens)  # (b, 1, 2, 8, 8)
    per_head = H.anti_diagonal_score(weights).mean(axis=0)  # (1, 2)
    assert per_head.max() >= 0.85
    assert per_head.mean() >= 0.8  # both heads, not just one
    np.testing.assert_allclose(reverse.head_scores()["anti_diagonal"], per_head, atol=0.02)


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_score_history_is_head_scores_at_every_checkpoint(reverse):
    steps, scores = reverse.score_history()
    assert reverse.score_history()[1] is scores  # computed once per run
    assert steps.tolist() == reverse.steps
    assert set(scores) == set(reverse.head_scores())
    assert all(v.shape == (len(steps), 1, 2) for v in scores.values())
    for c in (0, len(steps) - 1):
        for name, value in reverse.head_scores(step=steps[c]).items():
            np.testing.assert_array_equal(scores[name][c], value)
    assert scores["anti_diagonal"][-1].min() > scores["anti_diagonal"][0].max()  # learned


@pytest.mark.slow  # needs the trained reversal model and the short induction run
def test_headline_scores_of_one_input(reverse, short_induction):
    tokens = reverse.example
    weights = reverse.attention(tokens)  # (1, 2, 8, 8)
    np.testing.assert_array_equal(T.headline_scores("reverse", weights, tokens),
                                  H.anti_diagonal_score(weights).ravel())
    tokens = np.array([5, 6, 7, 8, 5, 6, 7, 8])  # period 4: the first repeat at 4
    weights = short_induction.attention(tokens)  # (2, 1, 8, 8)
    previous, induction = T.headline_scores("induction", weights, tokens)
    per_query = H.previous_token_score(weights[0, 0], per_query=True)
    assert previous == pytest.approx(np.mean(per_query[1:4]))  # the first period only
    assert induction == pytest.approx(H.induction_score(weights[1, 0], tokens))
    distinct = np.arange(8)  # nothing repeats: no induction score
    weights = short_induction.attention(distinct)
    assert T.headline_scores("induction", weights, distinct)[1] is None
    with pytest.raises(ValueError, match="task must be one of"):
        T.headline_scores("roll", weights, tokens)
    with pytest.raises(ValueError, match="n_layers h = 2 heads"):
        T.headline_scores("induction", weights[:, :, :4, :4], tokens)


def test_correct_outputs():
    assert T.correct_outputs("reverse", [1, 2, 3], [3, 2, 9]) == (True, True, False)
    assert T.correct_outputs("roll", [1, 2, 3], [2, 3, 3]) == (True, True, False)
    # induction: only where the symbol occurred before and a next symbol exists
    assert T.correct_outputs("induction", [4, 5, 4, 5, 4], [0, 0, 5, 0, 1]) == (
        None, None, True, False, None)
    assert T.correct_outputs("reverse", (), ()) == ()
    with pytest.raises(ValueError, match="one output per input position"):
        T.correct_outputs("reverse", [1, 2], [2])
    with pytest.raises(ValueError, match="task must be one of"):
        T.correct_outputs("sort", [1], [1])


@pytest.mark.slow
def test_induction_learns(induction):
    assert induction.accuracy >= 0.95
    sample = T.sample("induction", 3)
    counted = sample.counted
    assert (induction.predict(sample.tokens)[counted] == sample.targets[counted]).mean() >= 0.95


@pytest.mark.slow
def test_induction_circuit(induction):
    scores = induction.head_scores()  # (n_layers, h) each
    assert scores["previous_token"].shape == (2, 1)
    assert scores["previous_token"][0, 0] >= 0.75  # layer 0: previous-token head
    assert scores["induction"][1, 0] >= 0.8  # layer 1: induction head
    assert scores["induction"][0, 0] <= 0.3  # ... and not the other way round
    assert scores["previous_token"][1, 0] <= 0.5


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_evaluate_agrees_with_torch_accuracy(run):
    """The numpy forward pass scores the held-out set as the torch model did."""
    assert run.evaluate(held_out(run)) == pytest.approx(run.accuracy, abs=2e-3)


# ---------------------------------------------------------------- numpy == torch


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_numpy_attention_matches_torch(run):
    batch = T.make_batch(run.task, 64, 11, period=run.config["period"])
    ours = run.attention(batch.tokens)
    theirs, logits = torch_attention(run.model, batch.tokens)
    assert ours.shape == (64, run.config["n_layers"], run.config["n_heads"],
                          run.config["length"], run.config["length"])
    np.testing.assert_allclose(ours, theirs, **TOL32)
    np.testing.assert_allclose(run.forward(batch.tokens)[0], logits, atol=1e-4, rtol=0)
    single = run.attention(run.example)  # (n_layers, h, s, s)
    np.testing.assert_allclose(single, torch_attention(run.model, run.example[None])[0][0],
                               **TOL32)


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_checkpoint_attention_matches_torch(run):
    """A checkpoint's numpy state, loaded into a fresh torch model, gives the same maps."""
    step, state = run.checkpoints[len(run.checkpoints) // 2]
    c = run.config
    model = T.TinyTransformer(c["vocab"], c["length"], c["n_layers"], c["n_heads"],
                              c["causal"], c["d"]).eval()
    model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    tokens = T.make_batch(run.task, 16, 12, period=c["period"]).tokens
    np.testing.assert_allclose(run.attention(tokens, step=step),
                               torch_attention(model, tokens)[0], **TOL32)


@pytest.mark.slow  # trains the short induction run
def test_induction_attention_is_causal_and_shorter_inputs_work(short_induction):
    weights = short_induction.attention(short_induction.example[:10])  # (2, 1, 10, 10)
    assert weights.shape == (2, 1, 10, 10)
    assert np.all(np.triu(weights, k=1) == 0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)


# ---------------------------------------------------------------- checkpoints, history


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_checkpoints_span_training(run):
    steps = run.steps
    assert steps[0] == 0 and steps[-1] == run.config["steps"]
    assert 20 <= len(steps) <= 30 and steps == sorted(set(steps))
    for name in ("steps", "loss", "accuracy"):
        assert run.history[name].shape == (run.config["steps"],)
    assert run.history["loss"][-10:].mean() < run.history["loss"][:10].mean() / 5
    final = run.attention(run.example)
    assert np.array_equal(run.attention(run.example, step=steps[-1]), final)
    assert not np.allclose(run.attention(run.example, step=0), final, atol=0.05)
    middle = steps[len(steps) // 2]
    assert run.attention(run.example, step=middle).shape == final.shape
    assert run.evaluate(held_out(run, 200), step=0) < 0.5  # untrained: chance


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_checkpoint_states_are_numpy(reverse):
    step, state = reverse.checkpoints[-1]
    assert all(isinstance(v, np.ndarray) for v in state.values())
    assert state["embed.weight"].shape == (10, 64)
    assert state["position.weight"].shape == (8, 64)


# ---------------------------------------------------------------- determinism, cache


@pytest.mark.slow  # trains two more models
def test_same_seed_same_attention_other_seed_different(reverse):
    x = T.make_batch("reverse", 32, 1).tokens
    again = T.train_tiny("reverse", cache=False)  # trained afresh, not the cached run
    assert again is not reverse
    assert np.array_equal(reverse.attention(x), again.attention(x))
    assert np.array_equal(reverse.history["loss"], again.history["loss"])
    other = T.train_tiny("reverse", seed=1, cache=False)
    assert other.accuracy >= 0.99  # another seed learns too ...
    assert not np.allclose(other.attention(x), reverse.attention(x), atol=1e-3)  # differently


@pytest.mark.slow  # trains the model again
def test_induction_deterministic_short_run(short_induction, monkeypatch):
    first = short_induction
    # trained again with torch's NaN fills of new tensors left on (deterministic_cpu turns
    # them off, writing to this stand-in instead): the same bits, so no kernel reads
    # memory it did not write, and the training is deterministic
    assert torch.utils.deterministic.fill_uninitialized_memory
    monkeypatch.setattr(torch.utils, "deterministic", types.SimpleNamespace(
        fill_uninitialized_memory=True))
    again = T.train_tiny("induction", steps=6, cache=False)
    x = T.make_batch("induction", 8, 2).tokens
    for (s1, a), (s2, b) in zip(first.checkpoints, again.checkpoints):
        assert s1 == s2 and all(np.array_equal(a[k], b[k]) for k in a)
    assert np.array_equal(first.attention(x, step=6), again.attention(x, step=6))


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_cache_fills_in_defaults(reverse):
    assert T.train_tiny("reverse", seed=0, n_layers=1, n_heads=2, steps=60) is reverse
    assert T.train_tiny("reverse") is reverse


@pytest.mark.slow  # trains (3 steps; a process's first training costs ~1 s)
def test_global_torch_settings_restored():
    before = torch.get_num_threads()
    # 2, not the environment's: `make test` exports OMP_NUM_THREADS=1, which would hide a
    # missing restore of the 1 thread training sets
    torch.set_num_threads(threads := 2)
    try:
        deterministic = torch.are_deterministic_algorithms_enabled()
        rng = torch.get_rng_state()
        T.train_tiny("reverse", seed=9, steps=3, checkpoints=2, cache=False)
        assert torch.get_num_threads() == threads
        assert torch.are_deterministic_algorithms_enabled() == deterministic
        assert torch.equal(torch.get_rng_state(), rng)
    finally:
        torch.set_num_threads(before)


@pytest.mark.slow  # trains (3 steps; a process's first training costs ~1 s)
def test_checkpoint_choices():
    run = T.train_tiny("reverse", seed=9, steps=3, checkpoints=[1], cache=False)
    assert run.steps == [1, 3]  # the final weights are always kept
    assert T.train_tiny("reverse", seed=9, steps=3, checkpoints=2, cache=False).steps == [0, 3]


# ---------------------------------------------------------------- data


def test_reverse_batches():
    batch = T.make_batch("reverse", 5, 0)
    assert batch.tokens.shape == (5, 8) and batch.tokens.max() < 10
    np.testing.assert_array_equal(batch.targets, batch.tokens[:, ::-1])
    assert batch.counted.all()


def test_induction_batches():
    batch = T.make_batch("induction", 50, torch.Generator().manual_seed(0))
    assert batch.tokens.shape == (50, 24) and batch.tokens.max() < 32
    np.testing.assert_array_equal(batch.targets[:, :-1], batch.tokens[:, 1:])  # next symbol
    for tokens, targets, counted in zip(*batch):
        p = int(np.argmax(counted))  # the first counted position is the period
        assert 6 <= p <= 12 and counted[p:].all()
        assert len(set(tokens[:p])) == p  # distinct symbols in a period
        np.testing.assert_array_equal(tokens[p:], tokens[:-p])
        assert targets[-1] == tokens[24 - p]
    fixed = T.make_batch("induction", 4, 0, period=8)
    assert (np.argmax(fixed.counted, axis=1) == 8).all()


def test_sample_is_reproducible():
    a, b = T.sample("induction", 4), T.sample("induction", 4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert a.tokens.shape == (24,)
    assert not np.array_equal(T.sample("induction", 5).tokens, a.tokens)


@pytest.mark.slow  # needs the trained reversal model and the short induction run
def test_example_probes(reverse, short_induction):
    assert reverse.example.shape == (8,)
    example = short_induction.example
    assert example.shape == (24,)
    np.testing.assert_array_equal(example[7:], example[:-7])  # period 7
    assert len(set(example[:7])) == 7


# ---------------------------------------------------------------- bad input


def test_bad_task():
    with pytest.raises(ValueError, match="task must be one of .*'rotate'"):
        T.train_tiny("rotate")
    with pytest.raises(ValueError, match="task must be one of"):
        T.make_batch("rotate", 2, 0)


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
@pytest.mark.parametrize("tokens,match", [
    ([1, 2, 3, 4, 5, 6, 7, 10], r"symbols 0..9 .* got 10"),
    ([-1, 2, 3, 4, 5, 6, 7, 8], "got -1"),
    ([1, 2, 3], "exactly 8 symbols"),
    ([], "empty"),
    ([[]], "empty"),
    ([1.0] * 8, "whole numbers"),
    (np.zeros((2, 2, 8), int), r"shape \(s,\) or \(b, s\)"),
])
def test_bad_tokens_reverse(reverse, tokens, match):
    with pytest.raises(ValueError, match=match):
        reverse.attention(tokens)
    with pytest.raises(ValueError, match=match):
        reverse.predict(tokens)


@pytest.mark.slow  # trains the short induction run
def test_bad_tokens_induction(short_induction):
    with pytest.raises(ValueError, match="at most 24 symbols"):
        short_induction.attention(np.zeros(25, int))
    with pytest.raises(ValueError, match=r"symbols 0..31"):
        short_induction.attention([32])


@pytest.mark.slow  # needs the trained reversal model (train_tiny, 1-2 s once)
def test_bad_options(reverse):
    with pytest.raises(ValueError, match="period only applies to the induction task"):
        T.train_tiny("reverse", period=4)
    with pytest.raises(ValueError, match="period must be a whole number in 2..23"):
        T.train_tiny("induction", period=24)
    with pytest.raises(ValueError, match="n_heads=3 does not divide d=64"):
        T.train_tiny("reverse", n_heads=3)
    with pytest.raises(ValueError, match="seed must be a whole number >= 0"):
        T.train_tiny("reverse", seed=-1)
    with pytest.raises(ValueError, match="steps must be a whole number >= 1"):
        T.train_tiny("reverse", steps=0)
    with pytest.raises(ValueError, match="checkpoints must be a count"):
        T.train_tiny("reverse", checkpoints="all")
    with pytest.raises(ValueError, match="no checkpoint at step 1;"):
        reverse.attention(reverse.example, step=1)
    with pytest.raises(ValueError, match="step must be a whole number"):
        reverse.attention(reverse.example, step=2.0)
    with pytest.raises(ValueError, match="batch must be a Batch"):
        reverse.evaluate(reverse.example)
    with pytest.raises(ValueError, match="cache must be True or False"):
        T.train_tiny("reverse", cache="no")


# ---------------------------------------------------------------- the chapter's ablations


@pytest.mark.slow
def test_one_layer_cannot_do_induction():
    run = T.train_tiny("induction", n_layers=1)
    assert run.accuracy < 0.5


@pytest.mark.slow
def test_fixed_period_learns_positional_heads():
    run = T.train_tiny("induction", period=8)
    assert run.accuracy >= 0.95  # it solves the task it was given ...
    assert run.evaluate(T.make_batch("induction", 1000, T.HELD_OUT_SEED)) < 0.5  # not others
    weights = run.attention(T.make_batch("induction", 256, 3, period=8).tokens)
    # a head looks 7 back (the symbol after the last copy), whatever the symbols ...
    assert H.offset_score(weights, 7).mean(axis=0).max() >= 0.6
    # ... so on period-7 sequences nothing follows the earlier copies: no induction head
    assert run.head_scores(period=7)["induction"].max() <= 0.2
    assert run.head_scores()["previous_token"].max() <= 0.6
