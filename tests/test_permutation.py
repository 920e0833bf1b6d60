"""Permutations of rows: matrix form, fancy-index form, inverse, validation. Exact checks."""

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
