"""Chapter 3's other views of attention: additive (Bahdanau) scores, the saturation of each
score function, and Gaussian-kernel (Nadaraya-Watson) regression as attention. Checked
against a direct loop, against PyTorch, and as hypothesis properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_book.attention import (
    SCORE_KINDS,
    additive_attention,
    additive_parameters,
    additive_scores,
    attention_scores,
    gaussian_kernel_weights,
    nadaraya_watson,
    scaled_dot_product_attention,
    score_saturation,
    softmax,
    softmax_jacobian_norm,
    softmax_saturation,
)
from attention_book.reference import additive_attention_torch, nadaraya_watson_torch

finite = st.floats(-5, 5, allow_nan=False, allow_infinity=False)


# ------------------------------------------------ additive attention


def test_additive_scores_are_the_formula_pair_by_pair():
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((3, 5)), rng.standard_normal((4, 6))  # d_q != d_k is allowed
    W_q, W_k, w = additive_parameters(5, 6, 7, seed=1)
    scores = additive_scores(q, k, W_q, W_k, w)
    loop = [[w @ np.tanh(q[i] @ W_q + k[j] @ W_k) for j in range(4)] for i in range(3)]
    assert scores.shape == (3, 4) and np.allclose(scores, loop)


def test_additive_attention_matches_torch_with_batch_and_mask():
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 3))
    params = additive_parameters(4, 4, 8, seed=2)
    out, w = additive_attention(q, k, v, *params)
    out_t, w_t = additive_attention_torch(q, k, v, *params)
    assert out.shape == (2, 3, 3) and w.shape == (2, 3, 5)
    assert np.allclose(out, out_t, atol=1e-12) and np.allclose(w, w_t, atol=1e-12)
    mask = np.tril(np.ones((3, 5), dtype=bool))  # (s_q, s_k), True = may attend
    out_m, w_m = additive_attention(q, k, v, *params, mask=mask)
    assert (w_m[..., ~mask] == 0).all() and np.allclose(w_m.sum(-1), 1)


def test_additive_parameters_have_the_stated_shapes_and_scale():
    W_q, W_k, w = additive_parameters(256, 64, 512, seed=0)
    assert W_q.shape == (256, 512) and W_k.shape == (64, 512) and w.shape == (512,)
    assert abs(W_q.var() * 256 - 1) < 0.05 and abs(w.var() * 512 - 1) < 0.2


def test_additive_bad_input_is_explained():
    q, k = np.ones((3, 4)), np.ones((5, 4))
    W_q, W_k, w = additive_parameters(4, 4, 6)
    with pytest.raises(ValueError, match="W_q must be"):
        additive_scores(np.ones((3, 5)), k, W_q, W_k, w)
    with pytest.raises(ValueError, match="W_k must be"):
        additive_scores(q, np.ones((5, 3)), W_q, W_k, w)
    with pytest.raises(ValueError, match="share the hidden width"):
        additive_scores(q, k, W_q, W_k, np.ones(5))
    with pytest.raises(ValueError, match="w a vector"):
        additive_scores(q, k, W_q, W_k, np.ones((6, 1)))
    with pytest.raises(ValueError, match="one row per key"):
        additive_attention(q, k, np.ones((4, 2)), W_q, W_k, w)
    with pytest.raises(ValueError, match="d_h must be"):
        additive_parameters(4, 4, 0)


@settings(max_examples=40, deadline=None)
@given(q=arrays(np.float64, (3, 4), elements=finite), k=arrays(np.float64, (5, 4), elements=finite),
       seed=st.integers(0, 1000))
def test_additive_weights_are_convex_and_scores_bounded(q, k, seed):
    W_q, W_k, w = additive_parameters(4, 4, 6, seed=seed)
    v = np.arange(10.0).reshape(5, 2)  # (s_k, d_v)
    out, weights = additive_attention(q, k, v, W_q, W_k, w)
    assert (weights >= 0).all() and np.allclose(weights.sum(axis=-1), 1)  # rows sum to one
    assert (out >= v.min(0) - 1e-9).all() and (out <= v.max(0) + 1e-9).all()  # convex
    assert (np.abs(additive_scores(q, k, W_q, W_k, w)) <= np.abs(w).sum() + 1e-12).all()


# ------------------------------------------------ saturation of each score function


def test_softmax_jacobian_norm_is_the_frobenius_norm_of_diag_p_minus_ppT():
    p = softmax(np.array([[0.3, -1.2, 2.0, 0.1], [0.0, 0.0, 0.0, 0.0]]))  # (2, 4)
    direct = [np.linalg.norm(np.diag(r) - np.outer(r, r)) for r in p]
    assert np.allclose(softmax_jacobian_norm(p), direct)
    assert math.isclose(softmax_jacobian_norm(p)[1], math.sqrt(3) / 4)  # uniform: sqrt(n-1)/n
    assert softmax_jacobian_norm(np.array([0.0, 1.0, 0.0])) == 0  # one-hot: no gradient
    with pytest.raises(ValueError, match="summing to 1"):
        softmax_jacobian_norm(np.array([0.5, 0.6]))


def test_the_papers_reason_for_the_scale():
    """Unscaled dot products grow like sqrt(d_k) and saturate the softmax (small Jacobian);
    scaled ones and additive scores stay of size 1 at every d_k."""
    at = {dk: {kind: score_saturation(dk, kind, n=300) for kind in SCORE_KINDS} for dk in (4, 512)}
    assert at[512]["dot"]["score_std"] > 20 and at[512]["dot"]["max_weight"] > 0.9
    assert at[512]["dot"]["jacobian_norm"] < 0.25 * at[512]["scaled dot"]["jacobian_norm"]
    for kind in ("scaled dot", "additive"):
        assert at[512][kind]["score_std"] < 1.1 and at[512][kind]["max_weight"] < 0.4
        ratio = at[512][kind]["jacobian_norm"] / at[4][kind]["jacobian_norm"]
        assert 0.9 < ratio < 1.1  # level as d_k grows
    # the dot-product rows are softmax_saturation's samples
    for scaled, kind in ((False, "dot"), (True, "scaled dot")):
        assert math.isclose(at[512][kind]["max_weight"],
                            softmax_saturation(512, scaled, n=300)["max_weight"])


def test_score_saturation_bad_input():
    with pytest.raises(ValueError, match="score must be one of"):
        score_saturation(4, "cosine")
    with pytest.raises(ValueError, match="s_k must be at least 2"):
        score_saturation(4, "dot", s_k=1)


# ------------------------------------------------ kernel regression


def test_gaussian_weights_are_attention_with_a_bias_a_key():
    rng = np.random.default_rng(3)
    x_q, x_k = rng.standard_normal((4, 3)), rng.standard_normal((6, 3))  # (s_q, d), (s_k, d)
    sigma = 0.7
    w = gaussian_kernel_weights(x_q, x_k, sigma)
    kernel = np.exp(-((x_q[:, None] - x_k[None]) ** 2).sum(-1) / (2 * sigma**2))  # (s_q, s_k)
    assert np.allclose(w, kernel / kernel.sum(axis=1, keepdims=True))
    bias = -(x_k**2).sum(-1) / (2 * sigma**2)  # (s_k,)
    assert np.allclose(w, softmax(attention_scores(x_q, x_k, 1 / sigma**2) + bias))
    # keys of one length: exactly scaled dot-product attention's weights
    unit = x_k / np.linalg.norm(x_k, axis=1, keepdims=True)
    _, w_sdpa = scaled_dot_product_attention(x_q, unit, unit, scale=1 / sigma**2)
    assert np.allclose(gaussian_kernel_weights(x_q, unit, sigma), w_sdpa)
    # keys of different lengths: not without the bias
    _, w_plain = scaled_dot_product_attention(x_q, x_k, x_k, scale=1 / sigma**2)
    assert not np.allclose(w, w_plain)


def test_nadaraya_watson_matches_torch_sdpa_with_a_float_mask():
    rng = np.random.default_rng(4)
    x = np.sort(rng.uniform(0, 5, 30))
    y = 2 * np.sin(x) + x**0.8 + rng.normal(0, 0.5, 30)
    x_q = np.linspace(0, 5, 11)
    pred, w = nadaraya_watson(x_q, x, y, 0.5)
    assert pred.shape == (11,) and w.shape == (11, 30)
    assert np.allclose(pred, nadaraya_watson_torch(x_q, x, y, 0.5), atol=1e-12)
    y2 = np.stack([y, -y], axis=1)  # (s_k, d_v)
    assert np.allclose(nadaraya_watson(x_q, x, y2, 0.5)[0], nadaraya_watson_torch(x_q, x, y2, 0.5))


def test_kernel_regression_bad_input():
    with pytest.raises(ValueError, match="bandwidth must be a positive"):
        gaussian_kernel_weights([0.0], [1.0], 0)
    with pytest.raises(ValueError, match="same dimension"):
        gaussian_kernel_weights(np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"shape \(s,\) or \(s, d\)"):
        gaussian_kernel_weights(np.ones((2, 3, 1)), np.ones((4, 3)))
    with pytest.raises(ValueError, match="values must be"):
        nadaraya_watson([0.0], [1.0, 2.0], [1.0, 2.0, 3.0])


@settings(max_examples=50, deadline=None)
@given(x=arrays(np.float64, 6, elements=finite), x_q=arrays(np.float64, 3, elements=finite),
       shift=finite, sigma=st.floats(0.1, 3))
def test_kernel_weights_are_convex_and_translation_invariant(x, x_q, shift, sigma):
    y = np.arange(6.0)
    pred, w = nadaraya_watson(x_q, x, y, sigma)
    assert (w >= 0).all() and np.allclose(w.sum(axis=1), 1)  # rows sum to one
    assert (pred >= y.min() - 1e-9).all() and (pred <= y.max() + 1e-9).all()
    assert np.allclose(gaussian_kernel_weights(x_q + shift, x + shift, sigma), w, atol=1e-9)
