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
    before = torch.get_num_threads()
    # 2, not the environment's: `make test` exports OMP_NUM_THREADS=1, which would hide a
    # missing restore of the 1 thread deterministic_cpu sets
    torch.set_num_threads(threads := 2)
    try:
        rng = torch.get_rng_state()
        fill = torch.utils.deterministic.fill_uninitialized_memory
        with T.deterministic_cpu():
            assert torch.get_num_threads() == 1
            assert torch.are_deterministic_algorithms_enabled()
            assert not torch.utils.deterministic.fill_uninitialized_memory
            torch.manual_seed(123)
        assert torch.get_num_threads() == threads
        assert torch.equal(torch.get_rng_state(), rng)
        assert torch.utils.deterministic.fill_uninitialized_memory == fill
    finally:
        torch.set_num_threads(before)


@pytest.mark.slow  # trains the roll model
def test_roll_head_scores_exist(roll):
    scores = roll.head_scores(n=64)
    assert scores["anti_diagonal"].shape == (1, 2)
    # the roll target (i + 1) mod 8 is the mirror 7 - i at i = 3 and i = 7: 2 of 8 queries
    assert 0.15 <= scores["anti_diagonal"].mean() <= 0.3
    assert H.self_score(roll.attention(roll.example)).max() < 0.2


# ---------------------------------------------------------------- head by head, and decoding


def random_causal_net(n_layers=2, n_heads=2):
    """An untrained causal tiny model (fast: no training)."""
    config = dict(vocab=32, length=24, causal=True, d=64, n_layers=n_layers, n_heads=n_heads,
                  positions=True)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(5)
        model = T.TinyTransformer(32, 24, n_layers, n_heads, True).eval()
        state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    return T.NumpyModel.from_state(state, config)


def test_run_heads_is_the_forward_pass():
    net = random_causal_net()
    tokens = T.make_batch("induction", 16, 3).tokens
    logits, outputs = net.run_heads(tokens, True)
    np.testing.assert_allclose(logits, net.forward(tokens, True)[0], atol=1e-5)
    assert [z.shape for z in outputs] == [(16, 2, 24, 32)] * 2
    # replacing a head by its own output changes nothing; zeroing it changes the logits
    same, _ = net.run_heads(tokens, True, replace={(1, 0): outputs[1][:, 0]})
    np.testing.assert_allclose(same, logits, atol=1e-6)
    zeroed, after = net.run_heads(tokens, True, replace={(1, 0): 0.0})
    assert np.abs(zeroed - logits).max() > 1e-3
    np.testing.assert_array_equal(after[0], outputs[0])  # layer 0 comes before: untouched
    with pytest.raises(ValueError, match="no head 2 in layer 1"):
        net.run_heads(tokens, True, replace={(1, 2): 0.0})


@pytest.mark.parametrize("chunks", [[24], [5, 1, 1, 17], [1] * 24])
def test_cached_decoder_gives_the_full_pass(chunks):
    net = random_causal_net()
    tokens = T.make_batch("induction", 1, 4).tokens[0]  # (24,)
    full = net.forward(tokens, True)[0]  # (24, V)
    decoder, start, rows = net.decoder(), 0, []
    for n in chunks:
        assert decoder.length == start  # the next position is the cache length
        rows.append(decoder(tokens[start:start + n]))
        start += n
    np.testing.assert_allclose(np.concatenate(rows), full, atol=1e-5)
    assert decoder.caches[1].keys.shape == (2, 24, 32)
    with pytest.raises(ValueError, match="positions 0..23 only"):
        decoder(np.array([1]))


def test_cached_decoder_bad_input():
    net = random_causal_net()
    with pytest.raises(ValueError, match="symbols 0..31"):
        net.decoder()(np.array([32]))
    with pytest.raises(ValueError, match="non-empty"):
        net.decoder()(np.array([], dtype=np.int64))
    with pytest.raises(ValueError, match="NumpyModel"):
        T.CachedDecoder("model")


@pytest.mark.slow  # uses the trained induction model
def test_greedy_decoding_continues_patterns(induction):
    from attention_book.decoding import FullRerun, generate

    net = induction.numpy_model()
    batch = T.make_batch("induction", 40, 17)
    for tokens, targets, counted in zip(*batch):
        p = int(counted.argmax())  # the period: the prompt is one period and a symbol
        n_new = 24 - (p + 1)
        cached, from_cache = generate(net.decoder(), tokens[:p + 1], n_new)
        rerun, from_rerun = generate(FullRerun(lambda x: net.forward(x, True)[0]),
                                     tokens[:p + 1], n_new)
        np.testing.assert_array_equal(cached, rerun)
        np.testing.assert_allclose(from_cache, from_rerun, atol=1e-5)
        np.testing.assert_array_equal(cached, targets[p:p + n_new])


@pytest.mark.slow  # uses the trained induction model
def test_ablating_the_induction_head(induction):
    net = induction.numpy_model()
    batch = T.make_batch("induction", 500, 21)
    logits, outputs = net.run_heads(batch.tokens, True)

    def accuracy(lg):
        return (lg.argmax(-1) == batch.targets)[batch.counted].mean()

    assert accuracy(logits) > 0.99
    assert accuracy(net.run_heads(batch.tokens, True, replace={(1, 0): 0.0})[0]) < 0.2
    mean = outputs[1][:, 0].mean(axis=0)  # (s, d_k): the head's mean output per position
    assert accuracy(net.run_heads(batch.tokens, True, replace={(1, 0): mean})[0]) < 0.2
