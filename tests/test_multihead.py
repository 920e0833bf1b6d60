"""Multi-head attention: reshapes, loop == one big matmul, and parity with torch.

Tolerances: ours vs ours and vs float64 torch modules, atol 1e-12; vs float32 torch,
atol 1e-5 and rtol 1e-5.
"""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_book import attention as A
from attention_book import multihead as M
from attention_book import reference as R

# tiny tensors: torch on one thread (conftest.one_torch_thread); its worker threads made
# these tests 10-100x slower whenever the other core was busy
pytestmark = pytest.mark.usefixtures("one_torch_thread")

ATOL64 = 1e-12
TOL32 = dict(atol=1e-5, rtol=1e-5)


def rand(rng, *shape, dtype=np.float64):
    return rng.normal(size=shape).astype(dtype)


def torch_mha(d, h, bias, batch_first, seed=0, double=True):
    torch.manual_seed(seed)
    m = torch.nn.MultiheadAttention(d, h, bias=bias, batch_first=batch_first)
    with torch.no_grad():  # torch initialises biases to 0: make them count
        for p in m.parameters():
            if p.ndim == 1:
                p.normal_()
    return (m.double() if double else m).eval()


# ---------------------------------------------------------------- split / merge


def test_split_heads_shape_and_content():
    x = np.arange(2 * 3 * 8, dtype=float).reshape(2, 3, 8)  # (b, s, d)
    heads = M.split_heads(x, 4)
    assert heads.shape == (2, 4, 3, 2)  # (b, h, s, d_k)
    for i in range(4):
        np.testing.assert_array_equal(heads[:, i], x[:, :, 2 * i : 2 * i + 2])


@pytest.mark.parametrize("shape,h", [((5, 12), 3), ((2, 5, 12), 4), ((2, 3, 5, 12), 12), ((1, 6), 1)])
def test_split_merge_round_trip(shape, h):
    x = np.random.default_rng(0).normal(size=shape)
    heads = M.split_heads(x, h)
    assert heads.shape == shape[:-2] + (h, shape[-2], shape[-1] // h)
    np.testing.assert_array_equal(M.merge_heads(heads), x)
    np.testing.assert_array_equal(M.split_heads(M.merge_heads(heads), h), heads)


def test_split_merge_dtype():
    x = np.ones((3, 4), dtype=np.float32)
    assert M.split_heads(x, 2).dtype == np.float32
    assert M.merge_heads(M.split_heads(x, 2)).dtype == np.float32


def test_split_merge_errors():
    with pytest.raises(ValueError, match="h=3 does not divide d=8"):
        M.split_heads(np.ones((2, 8)), 3)
    with pytest.raises(ValueError, match="h must be at least 1, got 0"):
        M.split_heads(np.ones((2, 8)), 0)
    with pytest.raises(ValueError, match=r"x must have at least 2 axes, got shape \(8,\)"):
        M.split_heads(np.ones(8), 2)
    with pytest.raises(ValueError, match=r"x must have at least 3 axes"):
        M.merge_heads(np.ones((2, 8)))


# ---------------------------------------------------------------- the module itself


@pytest.mark.parametrize("bias", [False, True])
def test_loop_equals_big_matmul(bias):
    mha = M.MultiHeadAttention.from_seed(12, 3, seed=5, bias=bias)
    rng = np.random.default_rng(6)
    x, y = rand(rng, 2, 4, 12), rand(rng, 2, 7, 12)
    mask = rng.random((2, 4, 7)) < 0.7
    for args in [(x,), (x, y), (x, y, mask), (x, None, A.causal_mask(4))]:
        out, w = mha(*args)
        out_loop, w_loop = mha.per_head_loop(*args)
        np.testing.assert_allclose(out, out_loop, rtol=0, atol=ATOL64)
        np.testing.assert_allclose(w, w_loop, rtol=0, atol=ATOL64)


def test_heads_then_merge_and_w_o():
    mha = M.MultiHeadAttention.from_seed(8, 2, seed=1, bias=True)
    x = rand(np.random.default_rng(2), 3, 5, 8)
    heads, w = mha.heads(x)
    assert heads.shape == (3, 2, 5, 4) and w.shape == (3, 2, 5, 5)
    out, w2 = mha(x)
    np.testing.assert_allclose(M.merge_heads(heads) @ mha.W_o + mha.b_o, out, atol=ATOL64)
    # W_o as a sum of per-head writes: head_i @ W_o[rows of head i]
    parts = sum(heads[:, i] @ mha.W_o[4 * i : 4 * i + 4] for i in range(2))
    np.testing.assert_allclose(parts + mha.b_o, out, atol=ATOL64)
    np.testing.assert_array_equal(w, w2)


def test_properties_and_from_seed():
    mha = M.MultiHeadAttention.from_seed(12, 4, seed=3)
    assert (mha.d, mha.h, mha.d_k) == (12, 4, 3)
    assert mha.b_q is None and mha.n_parameters == 4 * 144
    again = M.MultiHeadAttention.from_seed(12, 4, seed=3)
    np.testing.assert_array_equal(mha.W_v, again.W_v)
    other = M.MultiHeadAttention.from_seed(12, 4, seed=4)
    assert not np.array_equal(mha.W_v, other.W_v)
    assert abs(mha.W_q.std() - 12**-0.5) < 0.1  # Xavier-like scale 1/sqrt(d)
    assert M.MultiHeadAttention.from_seed(12, 4, bias=True).n_parameters == 4 * 144 + 4 * 12
    assert "d=12, h=4" in repr(mha)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_follows_input(dtype):
    mha = M.MultiHeadAttention.from_seed(8, 2, bias=True)  # float64 weights
    out, w = mha(np.ones((3, 8), dtype=dtype))
    assert out.dtype == dtype and w.dtype == dtype


def test_self_attention_default_and_plain_2d_input():
    mha = M.MultiHeadAttention.from_seed(8, 2, seed=7)
    x = rand(np.random.default_rng(8), 5, 8)
    out, w = mha(x)
    out2, w2 = mha(x, x)
    np.testing.assert_array_equal(out, out2)
    assert out.shape == (5, 8) and w.shape == (2, 5, 5)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=ATOL64)


def test_constructor_copies_weights():
    w = np.eye(4)
    mha = M.MultiHeadAttention(w, w, w, w, 2)
    w[0, 0] = 5.0
    assert mha.W_q[0, 0] == 1.0


@pytest.mark.parametrize("d,h", [(512, 8), (64, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_n_parameters_matches_torch(d, h, bias):
    m = torch.nn.MultiheadAttention(d, h, bias=bias)
    assert M.MultiHeadAttention.from_seed(d, h, bias=bias).n_parameters == sum(p.numel() for p in m.parameters())
    assert R.mha_from_torch(m).n_parameters == (4 * d * d + 4 * d if bias else 4 * d * d)


# ---------------------------------------------------------------- vs torch


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("s_kv", [None, 7])  # None: self-attention; 7: cross-attention s_q=4 != s_k
def test_matches_torch_module(bias, batch_first, s_kv):
    d, h, b, s_q = 12, 3, 2, 4
    tm = torch_mha(d, h, bias, batch_first)
    ours = R.mha_from_torch(tm)
    rng = np.random.default_rng(0)
    x = rand(rng, b, s_q, d)
    y = None if s_kv is None else rand(rng, b, s_kv, d)
    out, w = ours(x, y)
    t_out, t_w = R.torch_mha_forward(tm, x, y)
    assert out.shape == t_out.shape == (b, s_q, d)
    assert w.shape == t_w.shape == (b, h, s_q, s_q if s_kv is None else s_kv)
    np.testing.assert_allclose(out, t_out, rtol=0, atol=ATOL64)
    np.testing.assert_allclose(w, t_w, rtol=0, atol=ATOL64)


def test_matches_torch_module_float32_direct_call():
    """Straight nn.MultiheadAttention call (no helper), float32, sequence-first layout."""
    tm = torch_mha(8, 2, True, batch_first=False, double=False)
    ours = R.mha_from_torch(tm)
    assert ours.W_q.dtype == np.float32
    x = rand(np.random.default_rng(1), 3, 5, 8, dtype=np.float32)  # (b, s, d)
    with torch.no_grad():
        xt = torch.from_numpy(x).transpose(0, 1)  # (s, b, d)
        t_out, t_w = tm(xt, xt, xt, need_weights=True, average_attn_weights=False)
    out, w = ours(x)
    np.testing.assert_allclose(out, t_out.transpose(0, 1).numpy(), **TOL32)
    np.testing.assert_allclose(w, t_w.numpy(), **TOL32)
    # averaged weights (torch's default) are the mean over heads
    with torch.no_grad():
        _, t_avg = tm(xt, xt, xt)
    np.testing.assert_allclose(w.mean(axis=1), t_avg.numpy(), **TOL32)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("per_batch", [False, True])
def test_masks_with_opposite_polarity(batch_first, per_batch):
    d, h, b, s_q, s_k = 8, 2, 3, 4, 6
    tm = torch_mha(d, h, True, batch_first, seed=2)
    ours = R.mha_from_torch(tm)
    rng = np.random.default_rng(3)
    x, y = rand(rng, b, s_q, d), rand(rng, b, s_k, d)
    mask = rng.random((b, s_q, s_k) if per_batch else (s_q, s_k)) < 0.5
    mask[..., 0] = True  # no fully masked row
    out, w = ours(x, y, mask=mask)
    t_out, t_w = R.torch_mha_forward(tm, x, y, mask=mask)
    np.testing.assert_allclose(out, t_out, rtol=0, atol=ATOL64)
    np.testing.assert_allclose(w, t_w, rtol=0, atol=ATOL64)
    blocked = np.broadcast_to(~mask, (b, s_q, s_k))[:, None]  # (b, 1, s_q, s_k), every head
    assert np.all(w[np.broadcast_to(blocked, w.shape)] == 0)
    # torch's own attn_mask means the opposite: passing our mask unconverted gives other numbers
    with torch.no_grad():
        xt, yt = (torch.from_numpy(a) for a in (x, y))
        if not batch_first:
            xt, yt = xt.transpose(0, 1), yt.transpose(0, 1)
        m_t = torch.from_numpy(np.broadcast_to(mask, (b, s_q, s_k)).copy()).repeat_interleave(h, 0)
        _, wrong = tm(xt, yt, yt, attn_mask=m_t, need_weights=True, average_attn_weights=False)
    assert not np.allclose(wrong.numpy(), w, equal_nan=True)


def test_fully_masked_row_torch_mha_gives_nan_ours_zero():
    tm = torch_mha(8, 2, True, True, seed=4)
    ours = R.mha_from_torch(tm)
    x = rand(np.random.default_rng(5), 1, 3, 8)
    mask = np.array([[True, True, True], [False, False, False], [True, False, True]])
    out, w = ours(x, mask=mask)
    t_out, t_w = R.torch_mha_forward(tm, x, mask=mask)
    assert np.isnan(t_out[0, 1]).all() and np.isnan(t_w[0, :, 1]).all()
    np.testing.assert_array_equal(w[0, :, 1], 0.0)
    # the row's output is just the output bias: zero attention output, then @ W_o + b_o
    np.testing.assert_allclose(out[0, 1], ours.b_o, atol=ATOL64)
    np.testing.assert_allclose(out[0, [0, 2]], t_out[0, [0, 2]], atol=ATOL64)


# ---------------------------------------------------------------- errors


def test_constructor_errors():
    e = np.eye(8)
    with pytest.raises(ValueError, match="h=3 does not divide d=8"):
        M.MultiHeadAttention(e, e, e, e, 3)
    with pytest.raises(ValueError, match="h=3 does not divide d=8"):
        M.MultiHeadAttention.from_seed(8, 3)
    with pytest.raises(ValueError, match=r"W_k must have shape \(d, d\) = \(8, 8\), got shape \(8, 4\)"):
        M.MultiHeadAttention(e, np.ones((8, 4)), e, e, 2)
    with pytest.raises(ValueError, match=r"W_q must have shape \(d, d\), got shape \(8, 4\)"):
        M.MultiHeadAttention(np.ones((8, 4)), e, e, e, 2)
    with pytest.raises(ValueError, match=r"W_o must have shape"):
        M.MultiHeadAttention(e, e, e, np.eye(4), 2)
    with pytest.raises(ValueError, match=r"b_v must have shape \(d,\) = \(8,\) or be None, got \(4,\)"):
        M.MultiHeadAttention(e, e, e, e, 2, b_v=np.ones(4))
    with pytest.raises(ValueError, match="W_v contains NaN"):
        M.MultiHeadAttention(e, e, np.full((8, 8), np.nan), e, 2)
    with pytest.raises(ValueError, match="h must be a whole number"):
        M.MultiHeadAttention(e, e, e, e, 2.0)


def test_call_errors():
    mha = M.MultiHeadAttention.from_seed(8, 2)
    with pytest.raises(ValueError, match=r"x_q has shape \(3, 6\) but the module has d=8"):
        mha(np.ones((3, 6)))
    with pytest.raises(ValueError, match=r"x_kv has shape \(2, 5, 4\) but the module has d=8"):
        mha(np.ones((2, 3, 8)), np.ones((2, 5, 4)))
    with pytest.raises(ValueError, match=r"x_q must have at least 2 axes"):
        mha(np.ones(8))
    with pytest.raises(ValueError, match=r"leading \(batch\) axes do not broadcast"):
        mha(np.ones((2, 3, 8)), np.ones((3, 5, 8)))
    with pytest.raises(ValueError, match=r"mask has shape \(3, 3\).*\(\.\.\., 3, 5\)"):
        mha(np.ones((3, 8)), np.ones((5, 8)), mask=np.ones((3, 3), bool))
    with pytest.raises(ValueError, match="mask must be boolean"):
        mha(np.ones((3, 8)), mask=np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"mask has shape"):
        mha.per_head_loop(np.ones((3, 8)), mask=np.ones((4, 3), bool))
    with pytest.raises(ValueError, match=r"x_q has shape"):
        mha.heads(np.ones((3, 6)))


# ---------------------------------------------------------------- chapter 4 additions



@st.composite
def _model_sizes(draw):
    d_k = draw(st.integers(1, 5))
    h = draw(st.integers(1, 5))
    s = draw(st.integers(1, 6))
    return d_k * h, h, s


@settings(max_examples=40, deadline=None)
@given(_model_sizes(), st.integers(0, 10_000), st.booleans())
def test_property_head_contributions_sum_to_the_output(sizes, seed, bias):
    d, h, s = sizes
    mha = M.MultiHeadAttention.from_seed(d, h, seed=seed, bias=bias)
    x = np.random.default_rng(seed).normal(size=(2, s, d))
    contrib, w = mha.head_contributions(x)
    assert contrib.shape == (2, h, s, d)
    out, w_ref = mha(x)
    b_o = 0.0 if mha.b_o is None else mha.b_o
    np.testing.assert_allclose(contrib.sum(axis=-3) + b_o, out, atol=1e-12)
    np.testing.assert_array_equal(w, w_ref)
    # each contribution is H_i @ (block i of W_o), computed independently here
    heads, _ = mha.heads(x)  # (2, h, s, d_k)
    for i in range(h):
        block = mha.W_o[i * mha.d_k:(i + 1) * mha.d_k]  # (d_k, d)
        np.testing.assert_allclose(contrib[:, i], heads[:, i] @ block, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(_model_sizes(), st.integers(0, 10_000))
def test_property_loop_equals_big_matmul(sizes, seed):
    d, h, s = sizes
    mha = M.MultiHeadAttention.from_seed(d, h, seed=seed, bias=True)
    x = np.random.default_rng(seed + 1).normal(size=(s, d))
    out, w = mha(x)
    out_loop, w_loop = mha.per_head_loop(x)
    np.testing.assert_allclose(out, out_loop, atol=1e-12)
    np.testing.assert_allclose(w, w_loop, atol=1e-12)


def test_head_contributions_with_cross_attention_and_mask():
    mha = M.MultiHeadAttention.from_seed(8, 4, seed=2)
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(3, 8)), rng.normal(size=(6, 8))
    mask = rng.random((3, 6)) < 0.6
    mask[:, 0] = True
    contrib, w = mha.head_contributions(x, y, mask)
    assert contrib.shape == (4, 3, 8) and w.shape == (4, 3, 6)
    out, _ = mha(x, y, mask)
    np.testing.assert_allclose(contrib.sum(axis=0), out, atol=1e-12)  # no bias
    assert np.all(w[:, ~mask] == 0)
    # switching one head off changes the output by exactly that head's write
    contrib_without = contrib[[0, 1, 3]].sum(axis=0)
    np.testing.assert_allclose(out - contrib_without, contrib[2], atol=1e-12)


def test_divisors_and_parameter_count():
    assert M.divisors(8) == (1, 2, 4, 8)
    assert M.divisors(12) == (1, 2, 3, 4, 6, 12)
    assert M.divisors(1) == (1,)
    assert M.divisors(512)[-4:] == (64, 128, 256, 512)
    assert M.mha_parameter_count(512) == 4 * 512**2 + 4 * 512 == 1_050_624
    assert M.mha_parameter_count(512, bias=False) == 4 * 512**2
    for d, h in [(8, 2), (12, 3), (512, 8)]:
        m = torch.nn.MultiheadAttention(d, h)
        assert M.mha_parameter_count(d) == sum(p.numel() for p in m.parameters())
        assert M.MultiHeadAttention.from_seed(d, h, bias=True).n_parameters == \
            M.mha_parameter_count(d)
    with pytest.raises(ValueError, match="d must be at least 1"):
        M.divisors(0)


def test_shape_trace():
    trace = dict((name, shape) for name, shape in M.shape_trace(2, 5, 8, 4))
    shapes = [shape for _, shape in M.shape_trace(2, 5, 8, 4)]
    assert shapes[0] == (2, 5, 8)
    assert (2, 5, 4, 2) in shapes and (2, 4, 5, 2) in shapes and (2, 4, 5, 5) in shapes
    assert shapes[-2] == (8, 8) and shapes[-1] == (2, 5, 8)
    assert trace["W^O"] == (8, 8)
    # the trace agrees with the arrays the module really makes
    mha = M.MultiHeadAttention.from_seed(8, 4)
    x = np.zeros((2, 5, 8))
    heads, w = mha.heads(x)
    assert heads.shape in shapes and w.shape in shapes
    assert M.split_heads(x @ mha.W_q, 4).shape == (2, 4, 5, 2)
    with pytest.raises(ValueError, match="h=3 does not divide d=8"):
        M.shape_trace(1, 5, 8, 3)
    # an empty sequence (a lab with no tokens): every axis of length s reads 0
    assert [shape for _, shape in M.shape_trace(1, 0, 8, 4)] == [
        tuple(0 if n == 5 else n for n in shape) for _, shape in M.shape_trace(1, 5, 8, 4)]
    with pytest.raises(ValueError, match="s must be a whole number >= 0"):
        M.shape_trace(1, -1, 8, 4)
    with pytest.raises(ValueError, match="h=3 does not divide d=8"):
        M.MultiHeadAttention.from_seed(8, 3)


# ---------------------------------------------------------------- head_correlations

@settings(max_examples=30, deadline=None)
@given(h=st.integers(1, 6), s=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_head_correlations_match_numpy_corrcoef(h, s, seed):
    rng = np.random.default_rng(seed)
    w = A.softmax(rng.normal(size=(h, s, s)) * 2)  # (h, s, s) random attention maps
    c = M.head_correlations(w)
    assert c.shape == (h, h)
    np.testing.assert_allclose(c, np.atleast_2d(np.corrcoef(w.reshape(h, -1))), atol=1e-10)
    np.testing.assert_allclose(c, c.T)
    np.testing.assert_allclose(np.diag(c), 1.0)
    batch = np.stack([w, w[:, ::-1]])  # (b, h, s, s): the batch is flattened per head
    expected = np.corrcoef(batch.swapaxes(0, 1).reshape(h, -1))
    np.testing.assert_allclose(M.head_correlations(batch), np.atleast_2d(expected), atol=1e-10)


def test_heads_sharing_their_matrices_correlate_perfectly():
    mha = M.MultiHeadAttention.from_seed(8, 2, seed=3)
    x = np.random.default_rng(0).normal(size=(5, 8))  # (s, d)
    cols = slice(0, 4)
    shared = M.MultiHeadAttention(*(np.tile(W[:, cols], 2) for W in (mha.W_q, mha.W_k, mha.W_v)),
                                  mha.W_o, 2)  # (d, d_k) tiled -> (d, d)
    assert M.head_correlations(shared.heads(x)[1])[0, 1] == pytest.approx(1.0)
    assert M.head_correlations(mha.heads(x)[1])[0, 1] < 0.99


def test_head_correlations_refuse_constant_maps_and_bad_shapes():
    with pytest.raises(ValueError, match="head 1's weights are all equal"):
        M.head_correlations(np.stack([np.eye(3), np.full((3, 3), 1 / 3)]))
    with pytest.raises(ValueError, match="at least 3 axes"):
        M.head_correlations(np.eye(3))
    with pytest.raises(ValueError, match=r"\(h, s_q, s_k\) or \(b, h, s_q, s_k\)"):
        M.head_correlations(np.ones((1, 1, 2, 2, 2)))


# ---------------------------------------------------------------- QK / OV circuits

@pytest.mark.parametrize("d, h", [(8, 2), (12, 3), (16, 16), (6, 1)])
def test_circuits_give_the_scores_and_the_output(d, h):
    rng = np.random.default_rng(d + h)
    mha = M.MultiHeadAttention.from_seed(d, h, seed=h)
    W_QK, W_OV = mha.circuits()  # (h, d, d) each
    X = rand(rng, 2, 5, d)  # (b, s, d)
    _, A_ = mha.heads(X)  # (b, h, s, s)
    scores = X[:, None] @ W_QK @ np.swapaxes(X, -1, -2)[:, None] / np.sqrt(d // h)  # (b, h, s, s)
    assert np.allclose(A.softmax(scores), A_, atol=ATOL64)
    out = (A_ @ X[:, None] @ W_OV).sum(axis=1)  # (b, h, s, s) @ (b, 1, s, d) @ (h, d, d) -> (b, s, d)
    assert np.allclose(out, mha(X)[0], atol=ATOL64)


def test_circuit_rank_is_at_most_d_k():
    rng = np.random.default_rng(0)
    for _ in range(50):
        h = int(rng.choice([1, 2, 4, 8]))
        d = h * int(rng.integers(1, 5))
        W_QK, W_OV = M.MultiHeadAttention.from_seed(d, h, seed=int(rng.integers(1 << 30))).circuits()
        ranks = [np.linalg.matrix_rank(m) for m in (*W_QK, *W_OV)]
        assert max(ranks) <= d // h and min(ranks) == d // h  # random weights: exactly d_k


def test_head_circuits_explain_bad_input():
    w = np.eye(6)
    with pytest.raises(ValueError, match="h=4 does not divide d=6"):
        M.head_circuits(w, w, w, w, 4)
    with pytest.raises(ValueError, match="W_k must have shape"):
        M.head_circuits(w, np.eye(5), w, w, 2)


# ---------------------------------------------------------------- MQA / GQA

@pytest.mark.parametrize("h, g", [(8, 1), (8, 2), (8, 8), (6, 3), (1, 1)])
@pytest.mark.parametrize("causal", [False, True])
def test_grouped_query_attention_equals_torch(h, g, causal):
    rng = np.random.default_rng(h * 10 + g)
    q, k, v = rand(rng, 2, h, 5, 4), rand(rng, 2, g, 5, 4), rand(rng, 2, g, 5, 3)
    mask = A.causal_mask(5) if causal else None
    out, w = M.grouped_query_attention(q, k, v, mask=mask)
    assert out.shape == (2, h, 5, 3) and w.shape == (2, h, 5, 5)
    assert np.allclose(out, R.gqa_torch(q, k, v, mask=mask), atol=ATOL64)
    rep = [torch.from_numpy(a).repeat_interleave(h // g, dim=1) for a in (k, v)]  # (b, h, s, d)
    theirs = torch.nn.functional.scaled_dot_product_attention(torch.from_numpy(q), *rep, is_causal=causal)
    assert np.allclose(out, theirs.numpy(), atol=ATOL64)
    assert np.allclose(w.sum(axis=-1), 1.0)
    # query heads of one group share keys; with g = h it is ordinary per-head attention
    if g == h:
        assert np.allclose(out, A.scaled_dot_product_attention(q, k, v, mask=mask)[0])


def test_grouped_query_attention_explains_bad_input():
    q = np.ones((8, 3, 4))
    with pytest.raises(ValueError, match="g must divide h"):
        M.grouped_query_attention(q, np.ones((3, 3, 4)), np.ones((3, 3, 4)))
    with pytest.raises(ValueError, match="keys and values come in pairs"):
        M.grouped_query_attention(q, np.ones((2, 3, 4)), np.ones((4, 3, 4)))
    with pytest.raises(ValueError, match="q must have at least 3 axes"):
        M.grouped_query_attention(np.ones((3, 4)), np.ones((1, 3, 4)), np.ones((1, 3, 4)))
    with pytest.raises(ValueError, match="k and v need the same number"):
        R.gqa_torch(q, np.ones((3, 3, 4)), np.ones((3, 3, 4)))


def test_kv_width():
    assert M.kv_width(4096, 32, 32) == 4096 and M.kv_width(4096, 32, 8) == 1024
    assert M.kv_width(4096, 32, 1) == 128
    with pytest.raises(ValueError, match="kv_heads=3 does not divide h=32"):
        M.kv_width(4096, 32, 3)
    with pytest.raises(ValueError, match="h=3 does not divide d=8"):
        M.kv_width(8, 3, 1)


@settings(deadline=None, max_examples=60, derandomize=True, database=None)
@given(g=st.sampled_from([1, 2, 3]), groups=st.integers(1, 3), s_q=st.integers(1, 6),
       s_k=st.integers(1, 6), d_k=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_grouped_query_attention_rows_sum_to_one_and_heads_of_a_group_share_keys(
        g, groups, s_q, s_k, d_k, seed):
    rng = np.random.default_rng(seed)
    h = g * groups
    q, k, v = rand(rng, h, s_q, d_k), rand(rng, g, s_k, d_k), rand(rng, g, s_k, d_k)
    out, w = M.grouped_query_attention(q, k, v)
    assert np.allclose(w.sum(axis=-1), 1.0) and (w >= 0).all()
    for i in range(h):  # query head i is ordinary attention on key/value head i // (h / g)
        own, _ = A.scaled_dot_product_attention(q[i], k[i // groups], v[i // groups])
        assert np.allclose(out[i], own, atol=ATOL64)
    assert np.allclose(out, R.gqa_torch(q, k, v), atol=ATOL64)
