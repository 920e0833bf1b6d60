"""Scaled dot-product attention and softmax, checked by hand and against PyTorch.

Tolerances: vs hand values and vs torch in float64, atol 1e-12 (a few roundings of numbers
of size ~1); vs torch in float32, atol 1e-5 and rtol 1e-5.
"""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attention_book import attention as A
from attention_book import reference as R

# tiny tensors: torch on one thread (conftest.one_torch_thread); its worker threads made
# these tests 10-100x slower whenever the other core was busy
pytestmark = pytest.mark.usefixtures("one_torch_thread")

ATOL64 = 1e-12
TOL32 = dict(atol=1e-5, rtol=1e-5)


def rand(rng, *shape, dtype=np.float64):
    return rng.normal(size=shape).astype(dtype)


# ---------------------------------------------------------------- softmax


def test_softmax_known_values():
    w = A.softmax(np.array([0.0, math.log(2), math.log(5)]))
    np.testing.assert_allclose(w, [1 / 8, 2 / 8, 5 / 8], atol=1e-15)


def test_softmax_other_axis():
    x = np.array([[1.0, 2.0], [3.0, 5.0]])
    np.testing.assert_allclose(A.softmax(x, axis=0), A.softmax(x.T).T, atol=1e-15)
    np.testing.assert_allclose(A.softmax(x, axis=0).sum(axis=0), 1.0, atol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_huge_logits(dtype):
    x = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4], [1e4, 1e4, -1e4]], dtype=dtype)
    w = A.softmax(x)
    assert w.dtype == dtype
    assert np.isfinite(w).all()
    np.testing.assert_allclose(w, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0]], atol=1e-6)
    # a naive exp overflows: this is what the max-subtraction avoids
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(x) / np.exp(x).sum(-1, keepdims=True)
    assert np.isnan(naive).any()


def test_softmax_minus_inf():
    x = np.array([[0.0, -np.inf, 0.0], [-np.inf, -np.inf, -np.inf]])
    w = A.softmax(x)
    np.testing.assert_array_equal(w, [[0.5, 0.0, 0.5], [0.0, 0.0, 0.0]])


def test_softmax_int_input_becomes_float64():
    assert A.softmax([1, 2, 3]).dtype == np.float64


@pytest.mark.parametrize(
    "x,kwargs,match",
    [
        ([1.0, np.nan], {}, "x contains NaN"),
        ([1.0, np.inf], {}, r"x contains \+inf"),
        (3.0, {}, "at least 1 axis"),
        (["a", "b"], {}, "x must be an array of numbers"),
        ([1.0, 2.0], dict(axis=1), "axis=1 is out of range"),
        ([1.0, 2.0], dict(axis=0.5), "axis must be a whole number"),
    ],
)
def test_softmax_errors(x, kwargs, match):
    with pytest.raises(ValueError, match=match):
        A.softmax(x, **kwargs)


# ---------------------------------------------------------------- by hand

Q = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [2, 0, 0, 0]], dtype=float)
K = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 0, 0]], dtype=float)
V = np.array([[1, 0], [0, 1], [1, 1]], dtype=float)


def test_tiny_example_by_hand():
    # Q K^T = [[2,0,0],[0,2,0],[2,0,0]]; scale 1/sqrt(4) = 1/2 -> scores [[1,0,0],[0,1,0],[1,0,0]]
    e = math.e
    np.testing.assert_allclose(A.attention_scores(Q, K), [[1, 0, 0], [0, 1, 0], [1, 0, 0]])
    out, w = A.scaled_dot_product_attention(Q, K, V)
    w0 = np.array([e, 1, 1]) / (e + 2)
    w1 = np.array([1, e, 1]) / (e + 2)
    np.testing.assert_allclose(w, [w0, w1, w0], atol=ATOL64)
    row0 = [(e + 1) / (e + 2), 2 / (e + 2)]
    row1 = [2 / (e + 2), (e + 1) / (e + 2)]
    np.testing.assert_allclose(out, [row0, row1, row0], atol=ATOL64)


def test_tiny_example_causal_by_hand():
    out, w = A.scaled_dot_product_attention(Q, K, V, mask=A.causal_mask(3))
    e = math.e
    np.testing.assert_allclose(w, [[1, 0, 0], [1 / (1 + e), e / (1 + e), 0], np.array([e, 1, 1]) / (e + 2)],
                               atol=ATOL64)
    np.testing.assert_allclose(out[0], V[0], atol=ATOL64)


def test_causal_mask():
    np.testing.assert_array_equal(
        A.causal_mask(3), [[True, False, False], [True, True, False], [True, True, True]]
    )
    assert A.causal_mask(1).dtype == bool


def test_scale_given_and_scores():
    rng = np.random.default_rng(1)
    q, k = rand(rng, 2, 3, 5), rand(rng, 2, 4, 5)
    np.testing.assert_allclose(A.attention_scores(q, k, scale=0.3), 0.3 * q @ k.swapaxes(-1, -2), atol=ATOL64)
    np.testing.assert_allclose(A.attention_scores(q, k), q @ k.swapaxes(-1, -2) / math.sqrt(5), atol=ATOL64)


# ---------------------------------------------------------------- vs torch

CASES = {
    "batched": ((2, 3, 4), (2, 3, 4), (2, 3, 4), None, None),
    "s_q != s_k, d_k != d_v": ((2, 3, 4), (2, 6, 4), (2, 6, 5), None, None),
    "scale given": ((2, 3, 4), (2, 5, 4), (2, 5, 3), None, 0.7),
    "heads and broadcast batch": ((2, 1, 3, 4), (1, 3, 5, 4), (1, 3, 5, 2), None, None),
    "random mask": ((2, 4, 4), (2, 6, 4), (2, 6, 3), "random", None),
    "causal": ((2, 5, 8), (2, 5, 8), (2, 5, 8), "causal", None),
    "unbatched": ((3, 4), (5, 4), (5, 2), "random", 0.25),
}


def make_case(name, dtype, seed=0):
    rng = np.random.default_rng(seed)
    sq, sk, sv, mask, scale = CASES[name]
    q, k, v = rand(rng, *sq, dtype=dtype), rand(rng, *sk, dtype=dtype), rand(rng, *sv, dtype=dtype)
    if mask == "random":
        mask = rng.random(sq[:-1] + sk[-2:-1]) < 0.6
        mask[..., 0] = True  # no fully masked rows here (torch softmax gives NaN there)
    elif mask == "causal":
        mask = A.causal_mask(sq[-2])
    return q, k, v, mask, scale


@pytest.mark.parametrize("name", CASES)
def test_matches_torch_float64(name):
    q, k, v, mask, scale = make_case(name, np.float64)
    out, w = A.scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)
    t_out, t_w = R.sdpa_torch(q, k, v, mask=mask, scale=scale)
    assert out.shape == t_out.shape and w.shape == t_w.shape
    np.testing.assert_allclose(out, t_out, rtol=0, atol=ATOL64)
    np.testing.assert_allclose(w, t_w, rtol=0, atol=ATOL64)


@pytest.mark.parametrize("name", CASES)
def test_matches_torch_float32(name):
    q, k, v, mask, scale = make_case(name, np.float32, seed=1)
    out, w = A.scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)
    assert out.dtype == np.float32 and w.dtype == np.float32
    t_out, t_w = R.sdpa_torch(q, k, v, mask=mask, scale=scale)
    np.testing.assert_allclose(out, t_out, **TOL32)
    np.testing.assert_allclose(w, t_w, **TOL32)


def test_direct_torch_call_matches():
    """The same without our wrapper: straight torch SDPA on float64 tensors."""
    q, k, v, mask, _ = make_case("causal", np.float64, seed=3)
    expected = F.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), attn_mask=torch.from_numpy(mask)
    ).numpy()
    out, _ = A.scaled_dot_product_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(out, expected, rtol=0, atol=ATOL64)


# ---------------------------------------------------------------- edge cases


def test_fully_masked_row_gives_zeros_not_nan():
    rng = np.random.default_rng(2)
    q, k, v = rand(rng, 3, 4), rand(rng, 5, 4), rand(rng, 5, 2)
    mask = np.ones((3, 5), dtype=bool)
    mask[1] = False
    out, w = A.scaled_dot_product_attention(q, k, v, mask=mask)
    assert np.isfinite(out).all() and np.isfinite(w).all()
    np.testing.assert_array_equal(w[1], 0.0)
    np.testing.assert_array_equal(out[1], 0.0)
    np.testing.assert_allclose(w[[0, 2]].sum(-1), 1.0, atol=ATOL64)
    # plain torch softmax of the masked scores gives NaN for that row ...
    _, t_w = R.sdpa_torch(q, k, v, mask=mask)
    assert np.isnan(t_w[1]).all() and not np.isnan(t_w[[0, 2]]).any()
    # ... while torch SDPA itself (torch 2.13, CPU) returns zeros, like ours
    t_out, _ = R.sdpa_torch(q, k, v, mask=mask)
    np.testing.assert_allclose(t_out, out, atol=ATOL64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_huge_logits_no_nan(dtype):
    q = np.array([[100.0, 0.0], [-100.0, 0.0]], dtype=dtype)
    k = np.array([[100.0, 0.0], [-100.0, 0.0], [0.0, 1.0]], dtype=dtype)  # scores ~ +-1e4 / sqrt(2)
    v = np.eye(3, dtype=dtype)
    out, w = A.scaled_dot_product_attention(q, k, v)
    assert out.dtype == dtype and np.isfinite(out).all() and np.isfinite(w).all()
    np.testing.assert_allclose(w, [[1, 0, 0], [0, 1, 0]], atol=1e-6)
    out, w = A.scaled_dot_product_attention(q, k, v, scale=1.0)  # scores exactly +-1e4
    np.testing.assert_allclose(w, [[1, 0, 0], [0, 1, 0]], atol=1e-6)


def test_dtypes_follow_inputs():
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        q, k, v = rand(rng, 2, 3, dtype=dtype), rand(rng, 4, 3, dtype=dtype), rand(rng, 4, 2, dtype=dtype)
        out, w = A.scaled_dot_product_attention(q, k, v, mask=A.causal_mask(4)[:2], scale=0.5)
        assert out.dtype == dtype and w.dtype == dtype
        assert A.attention_scores(q, k).dtype == dtype
    out, w = A.scaled_dot_product_attention([[1, 2]], [[1, 0], [0, 1]], [[1], [2]])  # ints
    assert out.dtype == np.float64


def test_mask_broadcasts_over_batch():
    rng = np.random.default_rng(4)
    q, k, v = rand(rng, 3, 2, 4, 4), rand(rng, 3, 2, 4, 4), rand(rng, 3, 2, 4, 4)
    m = A.causal_mask(4)
    out1, w1 = A.scaled_dot_product_attention(q, k, v, mask=m)
    out2, w2 = A.scaled_dot_product_attention(q, k, v, mask=np.broadcast_to(m, (3, 2, 4, 4)))
    np.testing.assert_array_equal(out1, out2)
    np.testing.assert_array_equal(w1, w2)
    assert np.all(np.triu(w1[0, 0], 1) == 0)


# ---------------------------------------------------------------- errors

q34, k54, v52 = np.ones((3, 4)), np.ones((5, 4)), np.ones((5, 2))


@pytest.mark.parametrize(
    "args,kwargs,match",
    [
        ((q34, np.ones((5, 3)), v52), {}, r"k has shape \(5, 3\) but q has d_k=4: the last axes of q and k must match"),
        ((q34, k54, np.ones((6, 2))), {}, r"v has shape \(6, 2\) but k has s_k=5 rows"),
        ((np.ones(4), k54, v52), {}, r"q must have at least 2 axes, got shape \(4,\)"),
        ((q34, k54, np.ones(5)), {}, r"v must have at least 2 axes"),
        ((np.ones((2, 3, 4)), np.ones((3, 5, 4)), np.ones((3, 5, 2))), {}, r"leading \(batch\) axes do not broadcast"),
        ((q34, k54, v52), dict(mask=np.ones((3, 4), bool)),
         r"mask has shape \(3, 4\).*must broadcast to \(\.\.\., 3, 5\)"),
        ((q34, k54, v52), dict(mask=np.ones((5, 3), bool)), r"mask has shape \(5, 3\)"),
        ((np.ones((1, 4)), k54, v52), dict(mask=np.ones((3, 5), bool)), r"mask has shape \(3, 5\)"),
        ((q34, k54, v52), dict(mask=np.ones((3, 5))), r"mask must be boolean with True = may attend.*float64"),
        ((q34, k54, v52), dict(mask=np.ones((3, 5), int)), r"mask must be boolean"),
        ((np.full((3, 4), np.nan), k54, v52), {}, r"q contains NaN"),
        ((q34, np.full((5, 4), np.inf), v52), {}, r"k contains infinity"),
        ((q34, k54, np.full((5, 2), -np.inf)), {}, r"v contains infinity"),
        ((q34, k54, v52), dict(scale=0.0), r"scale must be a positive finite number.*got 0.0"),
        ((q34, k54, v52), dict(scale=-1.0), r"scale must be a positive finite number"),
        ((q34, k54, v52), dict(scale=float("inf")), r"scale must be a positive finite number"),
        ((q34, k54, v52), dict(scale=float("nan")), r"scale must be a positive finite number"),
        ((q34, k54, v52), dict(scale="1"), r"scale must be a positive number or None"),
        ((q34, [["a"] * 4] * 5, v52), {}, r"k must be an array of numbers"),
    ],
)
def test_sdpa_errors(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        A.scaled_dot_product_attention(*args, **kwargs)


def test_scores_and_mask_errors():
    with pytest.raises(ValueError, match="the last axes of q and k must match"):
        A.attention_scores(q34, np.ones((5, 3)))
    with pytest.raises(ValueError, match="scale must be a positive"):
        A.attention_scores(q34, k54, scale=-2)
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="s must be"):
            A.causal_mask(bad)


# ---------------------------------------------------------------- chapter 3 additions

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_book import cost as C


def test_projection_weights_shapes_seed_and_variance():
    W_q, W_k, W_v = A.projection_weights(8, 4, 6, seed=3)
    assert W_q.shape == W_k.shape == (8, 4) and W_v.shape == (8, 6)
    again = A.projection_weights(8, 4, 6, seed=3)
    assert all(np.array_equal(a, b) for a, b in zip((W_q, W_k, W_v), again))
    assert not np.array_equal(W_q, A.projection_weights(8, 4, 6, seed=4)[0])
    assert not np.array_equal(W_q, W_k)
    assert A.projection_weights(8, 4)[2].shape == (8, 4)  # d_v defaults to d_k
    # entries N(0, 1/d): with N(0, 1) inputs the projections have variance about 1
    X = np.random.default_rng(0).standard_normal((4000, 64))
    Q = X @ A.projection_weights(64, 32, seed=0)[0]
    assert abs(Q.var() - 1.0) < 0.2


def test_project_qkv_shares_weights_over_positions_and_does_cross():
    rng = np.random.default_rng(0)
    X, X_kv = rng.normal(size=(5, 8)), rng.normal(size=(7, 8))
    W_q, W_k, W_v = A.projection_weights(8, 4, 3, seed=1)
    Q, K, V = A.project_qkv(X, W_q, W_k, W_v)
    np.testing.assert_allclose(Q, np.stack([x @ W_q for x in X]), atol=ATOL64)
    np.testing.assert_allclose(K, X @ W_k, atol=ATOL64)
    assert V.shape == (5, 3)
    Qc, Kc, Vc = A.project_qkv(X, W_q, W_k, W_v, X_kv)
    assert Qc.shape == (5, 4) and Kc.shape == (7, 4) and Vc.shape == (7, 3)
    np.testing.assert_allclose(Kc, X_kv @ W_k, atol=ATOL64)


def test_project_qkv_errors():
    X = np.ones((5, 8))
    W = np.ones((8, 4))
    with pytest.raises(ValueError, match=r"W_q has shape \(6, 4\) but X has d=8"):
        A.project_qkv(X, np.ones((6, 4)), W, W)
    with pytest.raises(ValueError, match="queries and keys must have the same dimension"):
        A.project_qkv(X, W, np.ones((8, 3)), W)
    with pytest.raises(ValueError, match="X_kv has d=6 columns but X has d=8"):
        A.project_qkv(X, W, W, W, np.ones((3, 6)))
    with pytest.raises(ValueError, match="d_k must be at least 1"):
        A.projection_weights(8, 0)
    with pytest.raises(ValueError, match="seed must be a whole number >= 0"):
        A.projection_weights(8, 4, seed=-1)


def test_attention_entropy_known_values_and_errors():
    np.testing.assert_allclose(A.attention_entropy([[1.0, 0, 0], [1 / 3] * 3]),
                               [0.0, math.log(3)], atol=1e-15)
    np.testing.assert_allclose(A.attention_entropy([0.5, 0.5]), math.log(2))
    with pytest.raises(ValueError, match="must sum to 1"):
        A.attention_entropy([0.5, 0.2])
    with pytest.raises(ValueError, match="non-negative"):
        A.attention_entropy([1.5, -0.5])


def test_softmax_backward_matches_finite_differences_and_torch():
    rng = np.random.default_rng(2)
    z, g = rng.normal(size=(3, 6)), rng.normal(size=(3, 6))
    grad = A.softmax_backward(A.softmax(z), g)
    eps = 1e-6
    fd = np.zeros_like(z)
    for idx in np.ndindex(z.shape):
        dz = np.zeros_like(z)
        dz[idx] = eps
        fd[idx] = ((A.softmax(z + dz) * g).sum() - (A.softmax(z - dz) * g).sum()) / (2 * eps)
    np.testing.assert_allclose(grad, fd, atol=1e-8)
    tz = torch.tensor(z, requires_grad=True)
    (torch.softmax(tz, -1) * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(grad, tz.grad.numpy(), atol=ATOL64)
    with pytest.raises(ValueError, match="grad_weights has shape"):
        A.softmax_backward(A.softmax(z), g[:, :3])


def test_softmax_backward_vanishes_for_one_hot():
    p = np.array([1.0, 0.0, 0.0])
    np.testing.assert_allclose(A.softmax_backward(p, np.array([3.0, -1.0, 2.0])), 0.0)


@pytest.mark.parametrize("d_k", [1, 4, 64, 256])
def test_dot_product_variance_is_d_k(d_k):
    var = A.dot_product_variance(d_k, n=20000, seed=1)
    assert abs(var / d_k - 1) < 0.08


def test_dot_product_variance_errors():
    with pytest.raises(ValueError, match="n must be at least 2"):
        A.dot_product_variance(4, n=1)


def test_softmax_saturation_unscaled_saturates_scaled_stays_flat():
    small_u = A.softmax_saturation(1, False)
    big_u, big_c = A.softmax_saturation(512, False), A.softmax_saturation(512, True)
    small_c = A.softmax_saturation(1, True)
    assert small_u["max_weight"] == small_c["max_weight"]  # d_k = 1: scale 1 either way
    assert big_u["max_weight"] > 0.9 and big_u["entropy"] < 0.3
    assert big_u["grad_norm"] < 0.35 * big_c["grad_norm"]
    assert abs(big_c["max_weight"] - small_c["max_weight"]) < 0.1
    assert abs(big_c["entropy"] - small_c["entropy"]) < 0.2
    w = big_u["weights"]
    assert w.shape == (16,) and np.all(np.diff(w) <= 0) and math.isclose(w.sum(), 1.0)
    with pytest.raises(ValueError, match="s_k must be at least 2"):
        A.softmax_saturation(4, True, s_k=1)
    with pytest.raises(ValueError, match="scaled must be True or False"):
        A.softmax_saturation(4, "yes")


def test_scaling_curves_shapes_and_the_sqrt_d_k_claim():
    d_ks = (1, 4, 16, 64, 256)
    curves = A.scaling_curves(d_ks, s_k=8, n=200, seed=3)
    assert set(curves) == {(q, scaled) for q in ("max_weight", "entropy", "grad_norm",
                                                 "variance", "weights")
                           for scaled in (False, True)}
    for (quantity, _), values in curves.items():
        assert values.shape == ((5, 8) if quantity == "weights" else (5,))
    stats = A.softmax_saturation(16, False, s_k=8, n=200, seed=3)  # the same measurement
    assert curves[("max_weight", False)][2] == stats["max_weight"]
    np.testing.assert_array_equal(curves[("weights", False)][2], stats["weights"])
    assert curves[("variance", False)][3] == A.dot_product_variance(64, n=800, seed=3)
    # unscaled: the variance grows like d_k and the softmax saturates; scaled: both flat
    assert np.all(np.diff(curves[("variance", False)]) > 0)
    np.testing.assert_allclose(curves[("variance", False)] / d_ks, 1, atol=0.25)
    np.testing.assert_allclose(curves[("variance", True)], 1, atol=0.25)
    assert np.all(np.diff(curves[("max_weight", False)]) > 0)
    assert np.all(np.diff(curves[("entropy", False)]) < 0)
    assert np.ptp(curves[("max_weight", True)]) < 0.1
    with pytest.raises(ValueError, match="non-empty sequence"):
        A.scaling_curves(())
    with pytest.raises(ValueError, match="each d_k must be at least 1"):
        A.scaling_curves((4, 0))


@settings(max_examples=40, deadline=None)
@given(
    s_q=st.integers(1, 6), s_k=st.integers(1, 6), d_k=st.integers(1, 5), d_v=st.integers(1, 4),
    seed=st.integers(0, 2**16), scale=st.floats(0.01, 10.0),
)
def test_output_rows_are_convex_combinations_of_value_rows(s_q, s_k, d_k, d_v, seed, scale):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(s_q, d_k)), rng.normal(size=(s_k, d_k)), rng.normal(size=(s_k, d_v))
    out, w = A.scaled_dot_product_attention(q, k, v, scale=scale)
    assert (w >= 0).all()
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(out, w @ v, atol=1e-12)
    assert (out >= v.min(axis=0) - 1e-9).all() and (out <= v.max(axis=0) + 1e-9).all()
    ent = A.attention_entropy(w)
    assert (ent >= -1e-12).all() and (ent <= math.log(s_k) + 1e-9).all()


@settings(max_examples=40, deadline=None)
@given(z=hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(2, 6)),
                    elements=st.floats(-20, 20)),
       g=st.floats(-5, 5))
def test_softmax_backward_rows_sum_to_zero(z, g):
    # dL/dz sums to 0 over each row: adding a constant to a row's scores changes nothing
    grad = A.softmax_backward(A.softmax(z), np.cos(np.arange(z.size).reshape(z.shape)) * g)
    np.testing.assert_allclose(grad.sum(axis=-1), 0.0, atol=1e-9)


def test_cost_counts():
    assert C.attention_flops(4, 5, 3) == 2 * 4 * 5 * 3 * 2
    assert C.attention_flops(4, 5, 3, 7) == 2 * 4 * 5 * 3 + 2 * 4 * 5 * 7
    assert C.score_matrix_bytes(128, 128) == 128 * 128 * 4
    assert C.score_matrix_bytes(10, 20, 8) == 1600
    with pytest.raises(ValueError, match="s_q must be at least 1"):
        C.attention_flops(0, 3, 4)


def test_measure_attention_memory_grows_like_s_squared():
    small, big = C.measure_attention(256, 16, repeats=1), C.measure_attention(512, 16, repeats=1)
    assert small["seconds"] > 0 and small["score_bytes"] == 256 * 256 * 4
    # numpy holds at least one (s, s) float32 matrix; 2x longer -> about 4x the memory
    assert big["peak_bytes"] >= big["score_bytes"]
    assert 3.0 < big["peak_bytes"] / small["peak_bytes"] < 5.0
    assert C.measure_attention(64, 8, dtype=np.float64, repeats=1)["score_bytes"] == 64 * 64 * 8
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        C.measure_attention(8, dtype=np.int32)
