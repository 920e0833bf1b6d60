"""Llama's attention layer (chapter 10): multihead.GroupedQueryAttention against chapter 4's
MultiHeadAttention (g = h, no rotation), against itself with every key/value head repeated
(g < h), against torch SDPA with enable_gqa on rotated queries and keys, and chapter 6's
key/value cache giving the rows of the full causal pass."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attention_book.attention import causal_mask
from attention_book.masking import KVCache
from attention_book.multihead import (GroupedQueryAttention, MultiHeadAttention, kv_groups,
                                      merge_heads)
from attention_book.positional import rotary_embedding

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def layer(d=24, h=6, g=2, seed=0, rope_base=100.0, pairs="adjacent"):
    rng = np.random.default_rng(seed)
    d_k = d // h
    w = [rng.normal(0, d**-0.5, size) for size in
         ((d, h * d_k), (d, g * d_k), (d, g * d_k), (h * d_k, d))]
    return GroupedQueryAttention(*w, h, g, rope_base=rope_base, rope_pairs=pairs)


def x_of(*shape, seed=1):
    return np.random.default_rng(seed).normal(size=shape)


def test_kv_groups():
    assert kv_groups(9, 3).tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert kv_groups(4, 4).tolist() == [0, 1, 2, 3] and kv_groups(4, 1).tolist() == [0] * 4
    with pytest.raises(ValueError, match="g=2 does not divide h=9"):
        kv_groups(9, 2)


def test_g_equal_h_without_rotation_is_multihead_attention():
    a = layer(h=4, g=4, rope_base=None)
    mha = MultiHeadAttention(a.W_q, a.W_k, a.W_v, a.W_o, 4)
    x = x_of(2, 7, 24)
    out, w = a(x)
    ref, ref_w = mha(x, mask=causal_mask(7))
    np.testing.assert_allclose(out, ref, atol=1e-12)
    np.testing.assert_allclose(w, ref_w, atol=1e-12)


def test_sharing_is_repeating_each_key_value_head():
    a = layer(h=6, g=2)
    d_k, groups = a.d_k, a.groups
    # columns of kv head kv(i) for every query head i: W_k (d, g d_k) -> (d, h d_k)
    cols = np.concatenate([np.arange(j * d_k, (j + 1) * d_k) for j in groups])
    full = GroupedQueryAttention(a.W_q, a.W_k[:, cols], a.W_v[:, cols], a.W_o, 6, 6,
                                 rope_base=a.rope_base)
    x = x_of(5, 24)
    for got, want in zip(a(x), full(x)):
        np.testing.assert_allclose(got, want, atol=1e-12)
    assert a.n_parameters == 24 * 24 * 2 + 2 * 24 * 8 and full.n_parameters == 4 * 24 * 24


@pytest.mark.parametrize("pairs", ["adjacent", "halves"])
@pytest.mark.parametrize("g", [1, 2, 6])
def test_equals_torch_sdpa_with_enable_gqa(pairs, g):
    a = layer(h=6, g=g, pairs=pairs)
    x = x_of(9, 24)
    pos = np.arange(9)

    def heads(W, n):  # (s, d) @ (d, n d_k) -> (n, s, d_k), each head rotated
        y = torch.from_numpy(x @ W).reshape(9, n, 4).transpose(0, 1).numpy()
        return torch.from_numpy(rotary_embedding(y, 100.0, pairs=pairs, positions=pos))

    q, k = heads(a.W_q, 6), heads(a.W_k, g)
    v = torch.from_numpy(x @ a.W_v).reshape(9, g, 4).transpose(0, 1)
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)  # (h, s, d_k)
    want = merge_heads(o.numpy()) @ a.W_o
    np.testing.assert_allclose(a(x)[0], want, atol=1e-12)


@pytest.mark.parametrize("chunks", [[1] * 8, [3, 1, 4], [8]])
def test_the_cache_gives_the_rows_of_the_full_pass(chunks):
    a = layer()
    x = x_of(3, 8, 24)
    full, full_w = a(x)
    cache, outs = KVCache(a.g, a.d_k, batch=(3,)), []
    t = 0
    for n in chunks:
        out, w = a(x[:, t:t + n], cache)
        assert w.shape == (3, 6, n, t + n)  # every query head, over every key so far
        np.testing.assert_allclose(w, full_w[:, :, t:t + n, :t + n], atol=1e-12)
        outs.append(out)
        t += n
    np.testing.assert_allclose(np.concatenate(outs, axis=1), full, atol=1e-12)
    assert cache.keys.shape == (3, 2, 8, 4)  # g heads cached, not h


def test_causal_and_rows_sum_to_one():
    _, w = layer()(x_of(6, 24))
    assert np.allclose(w.sum(-1), 1) and np.all(np.triu(w, 1) == 0)


def test_rope_makes_scores_depend_on_offsets_only():
    # one token at every position: score(i, j) = f(i - j), so within a row the weights'
    # ratios depend on the offsets alone: w[i, i-1] / w[i, i] is the same for every i
    a = layer(h=2, g=1, rope_base=10.0)
    _, w = a(np.repeat(x_of(1, 24), 7, axis=0))  # (h, 7, 7)
    i = np.arange(1, 7)
    ratio = w[:, i, i - 1] / w[:, i, i]  # (h, 6)
    np.testing.assert_allclose(ratio, ratio[:, :1] * np.ones(6), rtol=1e-10)
    assert not np.allclose(ratio, 1)  # and the offset matters


def test_heads_switched_off_write_nothing():
    a = layer()
    x = x_of(5, 24)
    out, w = a(x, heads_off=[1, 4])
    W_o = a.W_o.copy()
    W_o[4:8] = W_o[16:20] = 0  # heads 1 and 4's rows of W^O
    want = GroupedQueryAttention(a.W_q, a.W_k, a.W_v, W_o, 6, 2, rope_base=a.rope_base)(x)[0]
    np.testing.assert_allclose(out, want, atol=1e-12)
    np.testing.assert_array_equal(w, a(x)[1])  # the weights are still computed
    flags = np.zeros(6, bool)
    flags[[1, 4]] = True
    np.testing.assert_array_equal(a(x, heads_off=flags)[0], out)


def test_float32_stays_float32():
    a = layer()
    out, w = a(x_of(4, 24).astype(np.float32))
    assert out.dtype == w.dtype == np.float32


def test_errors():
    w = [np.zeros((8, 8)), np.zeros((8, 4)), np.zeros((8, 4)), np.zeros((8, 8))]
    with pytest.raises(ValueError, match="g=3 does not divide h=4"):
        GroupedQueryAttention(*w, 4, 3)
    with pytest.raises(ValueError, match=r"W_k must have shape \(8, 2\)"):
        GroupedQueryAttention(*w, 4, 1)
    with pytest.raises(ValueError, match="rope_pairs must be"):
        GroupedQueryAttention(*w, 4, 2, rope_pairs="interleaved")
    a = GroupedQueryAttention(*w, 4, 2, rope_base=10.0)
    with pytest.raises(ValueError, match=r"x must have shape \(..., s, 8\)"):
        a(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="each head switched off must be a whole number in 0..3"):
        a(np.zeros((3, 8)), heads_off=[4])
    with pytest.raises(ValueError, match=r"heads_off must be h=4 flags"):
        a(np.zeros((3, 8)), heads_off=np.zeros(3, bool))
    with pytest.raises(ValueError, match=r"k must have that shape"):
        a(np.zeros((3, 8)), KVCache(4, 2))  # a cache of h heads, not g
