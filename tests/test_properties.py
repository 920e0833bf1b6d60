"""Properties that hold for every input: convex weights, permutation equivariance and
invariance, output shapes. Hypothesis runs derandomized (same examples every run).

Tolerances: float64 throughout; weights sum to 1 within 1e-12; equivariance identities
within 1e-12 (the same roundings in a different order).
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_book import attention as A
from attention_book import multihead as M
from attention_book import permutation as Pm
from attention_book import positional as P

ATOL = 1e-12
SETTINGS = settings(deadline=None, max_examples=100, derandomize=True, database=None)

seeds = st.integers(0, 2**32 - 1)
sizes = st.integers(1, 6)


@st.composite
def seq_and_perm(draw, max_s=7):
    s = draw(st.integers(1, max_s))
    return s, np.array(draw(st.permutations(range(s))), dtype=np.int64)


@st.composite
def mha_params(draw):
    """(d, h) with h a divisor of d, plus bias on/off."""
    d_k, h = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    return d_k * h, h, draw(st.booleans())


@SETTINGS
@given(b=st.integers(1, 3), s_q=sizes, s_k=sizes, d_k=sizes,
       log_scale=st.sampled_from([-3, 0, 2, 4]), use_mask=st.booleans(), seed=seeds)
def test_weights_are_convex(b, s_q, s_k, d_k, log_scale, use_mask, seed):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(b, s_q, d_k)) * 10.0**log_scale  # logits up to ~1e4 and beyond
    k = rng.normal(size=(b, s_k, d_k))
    v = rng.normal(size=(b, s_k, 2))
    mask = None
    if use_mask:
        mask = rng.random((b, s_q, s_k)) < 0.5
        rows = np.indices((b, s_q))
        mask[rows[0], rows[1], rng.integers(0, s_k, size=(b, s_q))] = True  # >= 1 True a row
    out, w = A.scaled_dot_product_attention(q, k, v, mask=mask)
    assert np.isfinite(out).all()
    assert (w >= 0).all()
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=0, atol=ATOL)
    if mask is not None:
        assert (w[~mask] == 0).all()
    # each output row lies in the convex hull of the value rows: inside their bounding box
    assert (out <= v.max(-2, keepdims=True) + ATOL).all() and (out >= v.min(-2, keepdims=True) - ATOL).all()


@SETTINGS
@given(sp=seq_and_perm(), d=sizes, seed=seeds)
def test_sdpa_self_attention_is_permutation_equivariant(sp, d, seed):
    s, perm = sp
    x = np.random.default_rng(seed).normal(size=(s, d))
    p = Pm.permutation_matrix(perm)
    out, w = A.scaled_dot_product_attention(x, x, x)
    out_p, w_p = A.scaled_dot_product_attention(p @ x, p @ x, p @ x)
    np.testing.assert_allclose(out_p, p @ out, rtol=0, atol=ATOL)  # f(PX) = P f(X)
    np.testing.assert_allclose(w_p, p @ w @ p.T, rtol=0, atol=ATOL)  # weights: P W P^T


@SETTINGS
@given(sp=seq_and_perm(), params=mha_params(), b=st.integers(1, 2), seed=seeds)
def test_mha_self_attention_is_permutation_equivariant(sp, params, b, seed):
    s, perm = sp
    d, h, bias = params
    mha = M.MultiHeadAttention.from_seed(d, h, seed=seed % 1000, bias=bias)
    x = np.random.default_rng(seed).normal(size=(b, s, d))
    out, w = mha(x)
    out_p, w_p = mha(Pm.permute_rows(x, perm))
    np.testing.assert_allclose(out_p, Pm.permute_rows(out, perm), rtol=0, atol=ATOL)
    w_perm = Pm.permute_rows(Pm.permute_rows(w, perm, axis=-2), perm, axis=-1)
    np.testing.assert_allclose(w_p, w_perm, rtol=0, atol=ATOL)


@SETTINGS
@given(s_q=sizes, sp=seq_and_perm(), d_k=sizes, use_mask=st.booleans(), seed=seeds)
def test_joint_key_value_permutation_leaves_output_unchanged(s_q, sp, d_k, use_mask, seed):
    s_k, perm = sp
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(s_q, d_k)), rng.normal(size=(s_k, d_k)), rng.normal(size=(s_k, 3))
    mask = rng.random((s_q, s_k)) < 0.5 if use_mask else None
    out, w = A.scaled_dot_product_attention(q, k, v, mask=mask)
    mask_p = None if mask is None else Pm.permute_rows(mask, perm, axis=-1)  # keys moved: columns too
    out_p, w_p = A.scaled_dot_product_attention(
        q, Pm.permute_rows(k, perm), Pm.permute_rows(v, perm), mask=mask_p
    )
    np.testing.assert_allclose(out_p, out, rtol=0, atol=ATOL)  # invariant
    np.testing.assert_allclose(w_p, Pm.permute_rows(w, perm, axis=-1), rtol=0, atol=ATOL)


@SETTINGS
@given(b=st.integers(1, 3), s_q=sizes, s_k=sizes, d_k=sizes, d_v=sizes, params=mha_params())
def test_output_shapes(b, s_q, s_k, d_k, d_v, params):
    d, h, bias = params
    q, k, v = np.zeros((b, s_q, d_k)), np.zeros((b, s_k, d_k)), np.zeros((b, s_k, d_v))
    out, w = A.scaled_dot_product_attention(q, k, v)
    assert out.shape == (b, s_q, d_v) and w.shape == (b, s_q, s_k)
    assert A.attention_scores(q, k).shape == (b, s_q, s_k)
    mha = M.MultiHeadAttention.from_seed(d, h, bias=bias)
    x_q, x_kv = np.ones((b, s_q, d)), np.ones((b, s_k, d))
    out, w = mha(x_q, x_kv)
    assert out.shape == (b, s_q, d) and w.shape == (b, h, s_q, s_k)
    heads, _ = mha.heads(x_q, x_kv)
    assert heads.shape == (b, h, s_q, d // h)
    assert M.split_heads(x_q, h).shape == (b, h, s_q, d // h)


def _equivariance_gap(x, perm, mask=None, pe=None):
    """max |f(PX) - P f(X)| for self-attention with an optional mask and added PE."""
    f = lambda z: A.scaled_dot_product_attention(z, z, z, mask=mask)[0]
    add = (lambda z: z) if pe is None else (lambda z: z + pe)
    return np.abs(f(add(Pm.permute_rows(x, perm))) - Pm.permute_rows(f(add(x)), perm)).max()


X = np.random.default_rng(0).normal(size=(5, 4))
SWAP = np.array([1, 0, 2, 3, 4])  # swap the first two tokens


def test_causal_mask_breaks_equivariance():
    assert _equivariance_gap(X, SWAP) < ATOL
    # with a causal mask, token 0 sees only itself; after the swap it sees tokens 0 and 1
    assert _equivariance_gap(X, SWAP, mask=A.causal_mask(5)) > 0.1


def test_positional_encoding_breaks_equivariance():
    pe = P.sinusoidal_encoding(5, 4)
    assert _equivariance_gap(X, SWAP, pe=pe) > 0.1
