"""Permutations of rows: matrix form, fancy-index form, inverse, validation. Exact checks."""

import re

import numpy as np
import pytest

from attention_book import permutation as Pm


def test_matrix_permutes_rows_like_permute_rows():
    x = np.arange(15, dtype=float).reshape(5, 3)
    perm = np.array([2, 0, 4, 1, 3])
    p = Pm.permutation_matrix(perm)
    assert p.shape == (5, 5)
    np.testing.assert_array_equal(p @ x, Pm.permute_rows(x, perm))
    np.testing.assert_array_equal(p @ x, x[perm])
    for i in range(5):
        np.testing.assert_array_equal((p @ x)[i], x[perm[i]])


def test_matrix_is_orthogonal_and_transpose_is_inverse():
    perm = Pm.random_permutation(7, seed=3)
    p = Pm.permutation_matrix(perm)
    np.testing.assert_array_equal(p.T @ p, np.eye(7))
    np.testing.assert_array_equal(p.T, Pm.permutation_matrix(Pm.inverse_permutation(perm)))
    assert Pm.permutation_matrix(perm, dtype=np.float32).dtype == np.float32


def test_inverse():
    perm = np.array([3, 0, 1, 4, 2])
    inv = Pm.inverse_permutation(perm)
    np.testing.assert_array_equal(inv, [1, 2, 4, 0, 3])
    np.testing.assert_array_equal(perm[inv], np.arange(5))
    np.testing.assert_array_equal(inv[perm], np.arange(5))
    x = np.random.default_rng(0).normal(size=(2, 5, 3))
    np.testing.assert_array_equal(Pm.permute_rows(Pm.permute_rows(x, perm), inv), x)


def test_random_permutation_deterministic():
    a, b = Pm.random_permutation(10, seed=1), Pm.random_permutation(10, seed=1)
    np.testing.assert_array_equal(a, b)
    assert Pm.is_permutation(a) and a.dtype == np.int64
    assert not np.array_equal(a, Pm.random_permutation(10, seed=2))


def test_permute_rows_other_axis_and_dtypes():
    x = np.arange(24).reshape(2, 3, 4)
    perm = [2, 0, 1]
    np.testing.assert_array_equal(Pm.permute_rows(x, perm, axis=1), x[:, perm])
    np.testing.assert_array_equal(Pm.permute_rows(x, [1, 0], axis=0), x[::-1])
    assert Pm.permute_rows(x.astype(np.float32), perm, axis=1).dtype == np.float32
    mask = np.tril(np.ones((3, 3), bool))
    assert Pm.permute_rows(mask, perm).dtype == bool


def test_is_permutation():
    assert Pm.is_permutation([0]) and Pm.is_permutation([1, 0, 2])
    for bad in ([0, 0, 2], [1, 2, 3], [], [[0, 1]], [0.0, 1.0], [True, False], "01", None):
        assert not Pm.is_permutation(bad)


@pytest.mark.parametrize(
    "perm,match",
    [
        ([0, 0, 2, 3, 4], r"perm must contain each of 0\.\.4 exactly once, got \[0, 0, 2, 3, 4\]"),
        ([1, 2, 3], r"perm must contain each of 0\.\.2 exactly once, got \[1, 2, 3\]"),
        ([0, -1], r"each of 0\.\.1 exactly once"),
        ([], r"non-empty 1-D array \(s,\), got shape \(0,\)"),
        ([[0, 1], [1, 0]], r"1-D array \(s,\), got shape \(2, 2\)"),
        ([0.0, 1.0], r"whole numbers \(int dtype\), got dtype float64"),
        ([True, False], r"whole numbers"),
    ],
)
def test_invalid_perms(perm, match):
    for f in (Pm.permutation_matrix, Pm.inverse_permutation, lambda p: Pm.permute_rows(np.ones((2, 3)), p)):
        with pytest.raises(ValueError, match=match):
            f(perm)


def test_permute_rows_errors():
    with pytest.raises(ValueError, match=r"x has shape \(4, 3\), so axis -2 has length 4, but perm permutes s=3"):
        Pm.permute_rows(np.ones((4, 3)), [0, 1, 2])
    with pytest.raises(ValueError, match="axis=2 is out of range"):
        Pm.permute_rows(np.ones((3, 3)), [0, 1, 2], axis=2)
    with pytest.raises(ValueError, match="s must be at least 1"):
        Pm.random_permutation(0)


# ------------------------------------------------ equivariance / invariance helpers

from hypothesis import given, settings
from hypothesis import strategies as st

from attention_book.attention import causal_mask, scaled_dot_product_attention
from attention_book.multihead import MultiHeadAttention
from attention_book.positional import sinusoidal_encoding


def _self_attention(W, mask=None, pe=None):
    """f(X) = SDPA(X_in W_q, X_in W_k, X_in W_v) with X_in = X (+ PE)."""
    W_q, W_k, W_v = W

    def f(x):
        x_in = x if pe is None else x + pe
        return scaled_dot_product_attention(x_in @ W_q, x_in @ W_k, x_in @ W_v, mask=mask)
    return f


def _weights(d, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(0, d ** -0.5, (d, d)) for _ in range(3))


def test_parse_permutation_accepts_spaces_and_commas():
    np.testing.assert_array_equal(Pm.parse_permutation("4 3 2 1 0", 5), [4, 3, 2, 1, 0])
    np.testing.assert_array_equal(Pm.parse_permutation(" 1, 0,2 ", 3), [1, 0, 2])
    assert Pm.parse_permutation("0", 1).dtype == np.int64


@pytest.mark.parametrize("text, s, words", [
    ("", 5, "type 5 positions"),
    ("4 3 x 1 0", 5, "'x' is not a position"),
    ("-1 0 1", 3, "'-1' is not a position"),
    ("1.5 0", 2, "'1.5' is not a position"),
    ("0 1 2", 5, "type 5 positions, got 3"),
    ("0 1 5 3 4", 5, "position 5 does not exist"),
    ("0 0 2 3 4", 5, "position 0 appears twice and 1 is missing"),
    (None, 3, "must be text"),
])
def test_parse_permutation_explains_bad_input(text, s, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        Pm.parse_permutation(text, s)


def test_equivariance_error_of_sdpa_and_multihead_is_rounding_only():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, 8))  # (s, d)
    perm = Pm.random_permutation(6, seed=4)
    assert Pm.equivariance_error(_self_attention(_weights(8)), x, perm) < 1e-12
    mha = MultiHeadAttention.from_seed(8, 2, seed=3, bias=True)
    assert Pm.equivariance_error(mha, x, perm) < 1e-12


def test_equivariance_error_detects_pe_and_causal_mask():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 8))
    perm = [4, 3, 2, 1, 0]
    W = _weights(8)
    assert Pm.equivariance_error(_self_attention(W, pe=sinusoidal_encoding(5, 8)), x, perm) > 1e-2
    assert Pm.equivariance_error(_self_attention(W, mask=causal_mask(5)), x, perm) > 1e-2
    # the identity moves nothing: zero error even with PE and a mask
    f = _self_attention(W, mask=causal_mask(5), pe=sinusoidal_encoding(5, 8))
    assert Pm.equivariance_error(f, x, np.arange(5)) == 0.0


def test_equivariance_error_measures_the_right_difference():
    x = np.arange(6.0).reshape(3, 2)
    # f adds the position index to each row: f(PX) - P f(X) = (arange - perm) in each column
    f = lambda a: a + np.arange(a.shape[0])[:, None]
    assert Pm.equivariance_error(f, x, [2, 1, 0]) == pytest.approx(2.0)
    assert Pm.equivariance_error(lambda a: 2 * a, x, [2, 0, 1]) == 0.0
    with pytest.raises(ValueError, match="lengths must match"):
        Pm.equivariance_error(f, x, [1, 0])
    with pytest.raises(ValueError, match="f must map"):
        Pm.equivariance_error(lambda a: a.sum(axis=0, keepdims=True), x, [1, 0, 2])


def test_invariance_error_joint_key_value_permutation():
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(6, 4)), rng.normal(size=(6, 5))
    perm = Pm.random_permutation(6, seed=1)
    assert Pm.invariance_error(scaled_dot_product_attention, q, k, v, perm) < 1e-12
    # permuting keys alone is not harmless: the pairing of keys and values breaks
    keys_only = lambda q_, k_, v_: scaled_dot_product_attention(q_, k_, v)
    assert Pm.invariance_error(keys_only, q, k, v, perm) > 1e-3
    with pytest.raises(ValueError, match="must match"):
        Pm.invariance_error(scaled_dot_product_attention, q, k, v, [1, 0])


def test_match_rows_and_same_rows_up_to_order():
    a = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]])
    b = np.array([[3.0, 4.0], [1.0, 2.0], [1.0, 2.0]])
    perm = Pm.match_rows(a, b)
    np.testing.assert_array_equal(Pm.permute_rows(b, perm), a)
    assert Pm.is_permutation(perm)
    assert Pm.same_rows_up_to_order(a, b)
    # same set of distinct rows but different multiplicities: not the same multiset
    c = np.array([[3.0, 4.0], [3.0, 4.0], [1.0, 2.0]])
    assert Pm.match_rows(a, c) is None and not Pm.same_rows_up_to_order(a, c)
    assert Pm.same_rows_up_to_order(a, a + 1e-12) and not Pm.same_rows_up_to_order(a, a + 1e-3)
    assert Pm.same_rows_up_to_order(a, a + 1e-3, atol=1e-2)
    with pytest.raises(ValueError, match="one shape"):
        Pm.match_rows(a, a[:2])
    with pytest.raises(ValueError, match="atol"):
        Pm.match_rows(a, a, atol=-1)


def test_dog_bites_man_same_rows_without_pe_not_with_pe():
    from attention_book.embedding import embed, embedding_table
    from attention_book.tokens import Vocabulary, tokenize

    vocab = Vocabulary.default()
    E = embedding_table(len(vocab), 8, 0)
    x1 = embed(vocab.encode(tokenize("the dog bit the man")), E)  # (5, 8)
    x2 = embed(vocab.encode(tokenize("the man bit the dog")), E)
    W = _weights(8)
    y1, y2 = _self_attention(W)(x1)[0], _self_attention(W)(x2)[0]
    assert not np.allclose(y1, y2) and Pm.same_rows_up_to_order(y1, y2, atol=1e-9)
    pe = sinusoidal_encoding(5, 8)
    z1, z2 = _self_attention(W, pe=pe)(x1)[0], _self_attention(W, pe=pe)(x2)[0]
    assert not Pm.same_rows_up_to_order(z1, z2, atol=1e-6)


# ---- properties

_sizes = st.tuples(st.integers(2, 7), st.sampled_from([2, 4, 8]))


@settings(max_examples=40, deadline=None)
@given(_sizes, st.integers(0, 10_000), st.integers(0, 10_000))
def test_property_attention_is_equivariant_without_positions(size, seed, pseed):
    s, d = size
    x = np.random.default_rng(seed).normal(size=(s, d))
    perm = Pm.random_permutation(s, pseed)
    assert Pm.equivariance_error(_self_attention(_weights(d, seed)), x, perm) < 1e-10
    mha = MultiHeadAttention.from_seed(d, 2, seed=seed)
    assert Pm.equivariance_error(mha, x, perm) < 1e-10
    # and its output rows are the same multiset as the original's
    f = _self_attention(_weights(d, seed))
    assert Pm.same_rows_up_to_order(f(Pm.permute_rows(x, perm))[0], f(x)[0], atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(_sizes, st.integers(0, 10_000), st.integers(0, 10_000))
def test_property_pe_and_causal_mask_break_equivariance(size, seed, pseed):
    s, d = size
    x = np.random.default_rng(seed).normal(size=(s, d))  # generic: distinct rows
    perm = Pm.random_permutation(s, pseed)
    if np.array_equal(perm, np.arange(s)):
        perm = np.roll(np.arange(s), 1)  # a non-identity permutation
    W = _weights(d, seed)
    assert Pm.equivariance_error(_self_attention(W, pe=sinusoidal_encoding(s, d)), x,
                                 perm) > 1e-8
    assert Pm.equivariance_error(_self_attention(W, mask=causal_mask(s)), x, perm) > 1e-8


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 7), st.integers(0, 10_000))
def test_property_joint_key_value_invariance(s_q, s_k, seed):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(s_q, 4)), rng.normal(size=(s_k, 4)), rng.normal(size=(s_k, 3))
    perm = Pm.random_permutation(s_k, seed)
    assert Pm.invariance_error(scaled_dot_product_attention, q, k, v, perm) < 1e-10


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 9), st.integers(0, 10_000))
def test_property_parse_roundtrip(s, seed):
    perm = Pm.random_permutation(s, seed)
    np.testing.assert_array_equal(Pm.parse_permutation(" ".join(map(str, perm)), s), perm)


def test_named_permutations():
    np.testing.assert_array_equal(Pm.named_permutation("identity", 4), [0, 1, 2, 3])
    np.testing.assert_array_equal(Pm.named_permutation("reverse", 4), [3, 2, 1, 0])
    np.testing.assert_array_equal(Pm.named_permutation("rotate", 4), [1, 2, 3, 0])
    np.testing.assert_array_equal(Pm.named_permutation("swap", 4), [3, 1, 2, 0])
    a, b = Pm.named_permutation("shuffle", 6, 1), Pm.named_permutation("shuffle", 6, 2)
    np.testing.assert_array_equal(a, Pm.random_permutation(6, 1))
    assert not np.array_equal(a, b)
    for s in (1, 2, 5, 9):  # every name gives a permutation of 0..s-1, int64
        for name in Pm.PERMUTATION_NAMES:
            perm = Pm.named_permutation(name, s, seed=3)
            assert perm.dtype == np.int64 and perm.shape == (s,) and Pm.is_permutation(perm)
    x = np.arange(12.0).reshape(4, 3)  # rotate: new row i is old row i+1, the first last
    np.testing.assert_array_equal(Pm.permute_rows(x, Pm.named_permutation("rotate", 4)),
                                  np.roll(x, -1, axis=0))


def test_named_permutation_refuses_bad_input():
    with pytest.raises(ValueError, match=re.escape(
            "unknown permutation 'sideways': choose one of ['identity', 'reverse', "
            "'rotate', 'swap', 'shuffle']")):
        Pm.named_permutation("sideways", 4)
    with pytest.raises(ValueError, match="unknown permutation 3"):
        Pm.named_permutation(3, 4)
    with pytest.raises(ValueError, match="s must be at least 1"):
        Pm.named_permutation("reverse", 0)
