"""What chapter 8 added to training.py: the "roll" task, training without position
embeddings, the public NumpyModel, and deterministic_cpu (the chapter's own loop gives
train_tiny's losses bit for bit).

Each training here is a 60-step run of the 8-symbol tasks (about 1 s of CPU each).
Thresholds sit below what seed 0 measured: roll score 0.97 per head; without positions the
per-position accuracy is 0.317 on 20 000 sequences, the best any permutation-equivariant
model can do (0.3177 there).
"""

import numpy as np
import pytest
import torch
from torch import nn

from attention_book import heads as H
from attention_book import training as T
from attention_book.block import EncoderBlock


@pytest.fixture(scope="module")
def roll():
    return T.train_tiny("roll")


@pytest.fixture(scope="module")
def blind():
    """The reversal model trained without position embeddings."""
    return T.train_tiny("reverse", positions=False)


def roll_score(weights):
    """Mean weight on key (i + 1) mod s: (..., s, s) -> (...)."""
    s = weights.shape[-1]
    return weights[..., np.arange(s), (np.arange(s) + 1) % s].mean(axis=-1)


def best_equivariant_accuracy(tokens):
    """Per-position accuracy of guessing the most common of the other 7 symbols: the best
    a model that cannot see positions can do on reversal (the target is a uniformly
    random one of the others)."""
    best = []
    for i in range(tokens.shape[1]):
        others = np.delete(tokens, i, axis=1)  # (n, s-1)
        counts = np.stack([(others == v).sum(axis=1) for v in range(10)], axis=1)  # (n, V)
        best.append(counts.max(axis=1) / others.shape[1])
    return float(np.mean(best))


# ---------------------------------------------------------------- the roll task


def test_roll_batches():
    batch = T.make_batch("roll", 5, 0)
    np.testing.assert_array_equal(batch.targets, np.roll(batch.tokens, -1, axis=1))
    assert batch.counted.all() and batch.tokens.shape == (5, 8)
    assert T.sample("roll", 3).tokens.shape == (8,)


@pytest.mark.slow  # trains the roll model
def test_roll_learns_a_wrapped_diagonal(roll):
    assert roll.accuracy >= 0.99
    assert roll.config["n_layers"] == 1 and roll.config["n_heads"] == 2
    x = T.make_batch("roll", 256, 7).tokens
    np.testing.assert_array_equal(roll.predict(x), np.roll(x, -1, axis=1))
    per_head = roll_score(roll.attention(x)).mean(axis=0)  # (b, 1, 2) -> (1, 2)
    assert per_head.min() >= 0.85


@pytest.mark.slow  # trains the roll model
def test_roll_input_length(roll):
    with pytest.raises(ValueError, match=r"roll model reads exactly 8 symbols .*\(i \+ 1\) mod 8"):
        roll.attention([1, 2, 3])


# ---------------------------------------------------------------- no position embeddings


@pytest.mark.slow  # trains a model without positions
def test_without_positions_the_table_stays_zero(blind):
    assert blind.config["positions"] is False
    for _, state in blind.checkpoints:
        assert not state["position.weight"].any()
    assert not blind.numpy_model().position.any()
    # every other initial weight is the one of the run with positions
    start = dict(T.train_tiny("reverse").checkpoints[0][1])
    for name, value in blind.checkpoints[0][1].items():
        if name != "position.weight":
            np.testing.assert_array_equal(value, start[name])


@pytest.mark.slow  # trains a model without positions
def test_without_positions_the_model_is_equivariant_and_cannot_reverse(blind):
    tokens = T.make_batch("reverse", 4000, 5).tokens
    perm = np.array([3, 0, 7, 1, 6, 2, 5, 4])
    logits = blind.forward(tokens)[0]  # (n, s, V)
    np.testing.assert_allclose(blind.forward(tokens[:, perm])[0], logits[:, perm], atol=1e-4)
    assert blind.accuracy <= 0.01  # whole sequences: none
    per_position = (logits.argmax(-1) == tokens[:, ::-1]).mean()
    bound = best_equivariant_accuracy(tokens)
    assert 0.28 <= bound <= 0.35
    assert bound - 0.04 <= per_position <= bound + 0.02


def test_positions_must_be_a_flag():
    with pytest.raises(ValueError, match="positions must be True or False"):
        T.train_tiny("reverse", positions="no")


# ---------------------------------------------------------------- NumpyModel


@pytest.mark.slow  # trains the roll model
def test_numpy_model_is_the_books_blocks(roll):
    model = roll.numpy_model()
    assert isinstance(model, T.NumpyModel)
    assert model is roll.numpy_model(roll.steps[-1])  # built once per checkpoint
    assert len(model.blocks) == 1 and isinstance(model.blocks[0], EncoderBlock)
    assert model.blocks[0].norm_first and model.embed.shape == (10, 64)
    assert model.W_u.shape == (64, 10) and model.position.shape == (8, 64)
    x = T.make_batch("roll", 4, 1).tokens
    logits, weights = model.forward(x, causal=False)
    np.testing.assert_array_equal(logits, roll.forward(x)[0])
    np.testing.assert_array_equal(weights, roll.attention(x))
    assert roll.numpy_model(0) is not model


# ---------------------------------------------------------------- the chapter's loop


@pytest.mark.slow  # trains a model (the chapter's loop)
def test_the_chapter_loop_reproduces_train_tiny_bit_for_bit():
    run = T.train_tiny("reverse")
    with T.deterministic_cpu():
        torch.manual_seed(0)
        model = T.TinyTransformer(vocab=10, length=8, n_layers=1, n_heads=2, causal=False)
        data = torch.Generator().manual_seed(0)
        optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
        schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=3e-3,
                                                       total_steps=60, pct_start=0.1)
        losses = []
        for _ in range(60):
            tokens, targets, _ = (torch.from_numpy(a) for a in T.make_batch("reverse", 256, data))
            loss = nn.functional.cross_entropy(model(tokens).reshape(-1, 10), targets.reshape(-1))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            losses.append(loss.item())
    np.testing.assert_array_equal(losses, run.history["loss"])
    final = run.checkpoints[-1][1]
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), final[name])


@pytest.mark.slow  # a process's first deterministic_cpu() costs ~1.5 s (torch's lazy imports)
def test_deterministic_cpu_restores_the_settings():
    threads = torch.get_num_threads()
    rng = torch.get_rng_state()
    with T.deterministic_cpu():
        assert torch.get_num_threads() == 1
        assert torch.are_deterministic_algorithms_enabled()
        torch.manual_seed(123)
    assert torch.get_num_threads() == threads
    assert torch.equal(torch.get_rng_state(), rng)


@pytest.mark.slow  # trains the roll model
def test_roll_head_scores_exist(roll):
    scores = roll.head_scores(n=64)
    assert scores["anti_diagonal"].shape == (1, 2)
    # the roll target (i + 1) mod 8 is the mirror 7 - i at i = 3 and i = 7: 2 of 8 queries
    assert 0.15 <= scores["anti_diagonal"].mean() <= 0.3
    assert H.self_score(roll.attention(roll.example)).max() < 0.2
