"""Embedding table, one-hot, lookup and cosine similarity."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_book.tokens import RUNNING_IDS
from attention_book.embedding import (chance_similarities, cosine_similarity, embed,
                                      embedding_table, one_hot)


def test_table_is_seeded_and_shaped():
    a, b, c = embedding_table(10, 4, seed=0), embedding_table(10, 4, seed=0), embedding_table(10, 4, seed=1)
    assert a.shape == (10, 4) and a.dtype == np.float64
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_one_hot_rows():
    o = one_hot([2, 0, 2], 4)
    assert o.tolist() == [[0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 1, 0]]


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 30), st.integers(1, 16), st.data())
def test_one_hot_times_table_is_the_lookup(vocab_size, d, data):
    ids = np.array(data.draw(st.lists(st.integers(0, vocab_size - 1), min_size=1, max_size=12)))
    table = embedding_table(vocab_size, d, seed=vocab_size)
    x = embed(ids, table)
    assert x.shape == (len(ids), d)
    # (s, V) @ (V, d) -> (s, d); exact, since each product picks one row and adds zeros
    assert np.array_equal(one_hot(ids, vocab_size) @ table, x)


def test_cosine_similarity_known_values():
    x = np.array([[1.0, 0.0], [0.0, 2.0], [-3.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    s = cosine_similarity(x)
    assert s.shape == (5, 5)
    assert np.allclose(s[0, :4], [1, 0, -1, 2 ** -0.5])
    assert np.all(s[4] == 0) and np.all(s[:, 4] == 0)  # a zero row: no direction


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 8), st.integers(1, 8), st.integers(0, 1000))
def test_cosine_similarity_properties(s, d, seed):
    x = np.random.default_rng(seed).standard_normal((s, d))
    sim = cosine_similarity(x)
    assert np.allclose(sim, sim.T) and np.allclose(np.diag(sim), 1.0)
    assert np.all(np.abs(sim) <= 1.0)


@pytest.mark.parametrize("call, message", [
    (lambda: embedding_table(0, 4), "vocab_size must be at least 1"),
    (lambda: embedding_table(10, 2.5), "d must be a whole number"),
    (lambda: one_hot([0, 5], 5), r"0\.\.4"),
    (lambda: one_hot([], 5), "non-empty"),
    (lambda: one_hot([0.5], 5), "integers"),
    (lambda: embed([0, 1], np.zeros(4)), "at least 2 axes"),
    (lambda: embed([0, 1], np.zeros((2, 3, 4))), r"\(V, d\)"),
    (lambda: embed([7], np.zeros((5, 4))), r"0\.\.4"),
    (lambda: embed([0], np.full((5, 4), np.nan)), "NaN"),
    (lambda: cosine_similarity(np.zeros(3)), "at least 2 axes"),
    (lambda: cosine_similarity([[np.inf, 0]]), "infinity"),
    (lambda: chance_similarities([3], 5, 4, [0]), "s >= 2"),
    (lambda: chance_similarities([0, 9], 5, 4, [0]), r"0\.\.4"),
    (lambda: chance_similarities([0, 1], 5, 4, []), "seeds is empty"),
    (lambda: chance_similarities([0, 1], 5, 0, [0]), "d must be at least 1"),
])
def test_bad_input_is_refused_clearly(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_float32_table_stays_float32():
    table = embedding_table(5, 3).astype(np.float32)
    assert embed([1, 2], table).dtype == np.float32


def test_chance_similarities_are_the_pairs_of_each_table():
    ids = [4, 1, 7, 2]
    sims = chance_similarities(ids, 10, 8, seeds=[0, 3, 5])  # (n, s (s - 1) / 2)
    assert sims.shape == (3, 6)
    upper = np.triu_indices(4, 1)
    for row, seed in zip(sims, (0, 3, 5)):
        assert np.allclose(row, cosine_similarity(embed(ids, embedding_table(10, 8, seed)))[upper])


@pytest.mark.parametrize("ids, vocab_size, d", [(RUNNING_IDS, 246, 8), (RUNNING_IDS, 246, 64),
                                                ([9, 0], 10, 3), ([0, 0, 1], 10, 5)])
def test_chance_similarities_draw_the_tables_first_rows_bit_for_bit(ids, vocab_size, d):
    # chance_similarities draws only rows 0..max(ids) of each table: the same numbers as the
    # whole table's (chapter 1's 1000 tables of the running sentence, at d = 8 and 64)
    upper = np.triu_indices(len(ids), 1)
    seeds = [0, 1, 7, 999]
    whole = [cosine_similarity(embed(ids, embedding_table(vocab_size, d, seed)))[upper]
             for seed in seeds]
    assert np.array_equal(chance_similarities(ids, vocab_size, d, seeds), np.stack(whole))


def test_chance_similarities_match_torch():
    torch = pytest.importorskip("torch")
    ids = np.array([4, 1, 7])
    x = torch.from_numpy(embed(ids, embedding_table(10, 8, 2)))  # (s, d)
    theirs = torch.nn.functional.cosine_similarity(x[:, None], x[None], dim=-1)  # (s, s)
    assert np.allclose(chance_similarities(ids, 10, 8, [2])[0],
                       theirs.numpy()[np.triu_indices(3, 1)], atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 6), st.integers(1, 16), st.integers(0, 1000))
def test_chance_similarities_lie_in_range_and_repeats_are_one(s, d, seed):
    ids = np.arange(s) % 3  # ids repeat from the fourth token on
    sims = chance_similarities(ids, 5, d, [seed])[0]
    assert np.all(np.abs(sims) <= 1.0)
    i, j = np.triu_indices(s, 1)
    assert np.allclose(sims[ids[i] == ids[j]], 1.0)


# ---------------------------------------------------------------- weight tying

from attention_book.embedding import tied_logits


def test_tied_logits_are_dot_products_with_every_embedding():
    table = embedding_table(12, 6, seed=3)  # (V, d)
    x = np.random.default_rng(0).standard_normal((4, 6))  # (s, d)
    logits = tied_logits(x, table)
    assert logits.shape == (4, 12)
    assert np.isclose(logits[2, 7], x[2] @ table[7])
    assert tied_logits(x[None], table).shape == (1, 4, 12)  # leading axes pass through


def test_tied_logits_match_an_embedding_and_a_linear_sharing_one_weight():
    torch = pytest.importorskip("torch")
    V, d = 30, 8
    emb = torch.nn.Embedding(V, d, dtype=torch.float64)
    out = torch.nn.Linear(d, V, bias=False, dtype=torch.float64)
    out.weight = emb.weight  # tying: one Parameter, used twice
    ids = torch.tensor([3, 1, 29, 3])
    theirs = out(emb(ids)).detach().numpy()  # (s,) -> (s, d) -> (s, V)
    table = emb.weight.detach().numpy()
    assert np.allclose(tied_logits(embed(ids.numpy(), table), table), theirs, atol=1e-12)
    model = torch.nn.ModuleList([emb, out])
    assert sum(p.numel() for p in model.parameters()) == V * d  # counted once
    untied = torch.nn.ModuleList([torch.nn.Embedding(V, d), torch.nn.Linear(d, V, bias=False)])
    assert sum(p.numel() for p in untied.parameters()) == 2 * V * d


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 40), st.integers(1, 16), st.integers(0, 100))
def test_own_token_has_the_largest_expected_logit(vocab_size, d, seed):
    """x = E[t] gives logit |E[t]|^2 >= |E[t]| |E[u]| cos for t itself: its own token wins
    over every token whose row is no longer than its own (Cauchy-Schwarz)."""
    table = embedding_table(vocab_size, d, seed)
    logits = tied_logits(table, table)  # (V, V)
    norms = np.linalg.norm(table, axis=1)
    for t in range(vocab_size):
        shorter = norms <= norms[t]
        assert logits[t, t] >= logits[t, shorter].max() - 1e-9


@pytest.mark.parametrize("x, table, message", [
    (np.zeros((2, 3)), np.zeros((5, 4)), "d=3 columns"),
    (np.zeros((2, 4)), np.zeros(4), "at least 2 axes"),
    (np.zeros((2, 4)), np.zeros((1, 5, 4)), r"shape \(V, d\)"),
    (np.full((2, 4), np.nan), np.zeros((5, 4)), "x contains NaN"),
])
def test_tied_logits_refuse_bad_input(x, table, message):
    with pytest.raises(ValueError, match=message):
        tied_logits(x, table)
