"""Masks and their torch polarities, the wrong way to mask, fully masked rows, and
decoding with a key/value cache.

Facts pinned here (torch 2.13, CPU) that the masking chapter quotes:

- a query whose row is entirely masked: ``torch.softmax`` of all -inf gives NaN;
  ``nn.MultiheadAttention`` gives NaN (with need_weights=True always; with
  need_weights=False on its native fast path, eval + no_grad + batched self-attention);
  ``F.scaled_dot_product_attention`` gives zeros, and so does nn.MultiheadAttention
  with need_weights=False when the fast path is off; the book gives zeros.
- ``nn.MultiheadAttention``'s boolean masks mean True = ignore, the opposite of SDPA's.

Tolerances: float64 everywhere, atol 1e-12 against torch and between our own paths,
1e-9 (the brief's bound) for the cache; observed differences are ~1e-15.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_book import attention as A
from attention_book import masking as K
from attention_book import multihead as M

ATOL = 1e-12
SETTINGS = settings(deadline=None, max_examples=30, derandomize=True, database=None)


# one torch thread for the module (tiny tensors); `fastpath` from conftest.py
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def torch_mha(d, h, seed=0):
    torch.manual_seed(seed)
    m = torch.nn.MultiheadAttention(d, h, batch_first=True)
    with torch.no_grad():  # torch initialises biases to 0: make them count
        for p in m.parameters():
            if p.ndim == 1:
                p.normal_()
    return m.double().eval()


def book_mha(m):
    """The book's MultiHeadAttention with the torch module's weights (no reference.py)."""
    d = m.embed_dim
    w, b = m.in_proj_weight.detach().numpy(), m.in_proj_bias.detach().numpy()
    ws = [w[i * d:(i + 1) * d].T for i in range(3)]
    bs = [b[i * d:(i + 1) * d] for i in range(3)]
    return M.MultiHeadAttention(*ws, m.out_proj.weight.detach().numpy().T, m.num_heads,
                                *bs, m.out_proj.bias.detach().numpy())


def rand(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


# ---------------------------------------------------------------- padding


def test_padding_mask_values():
    p = K.padding_mask([3, 0, 5], 5)
    assert p.dtype == bool and p.shape == (3, 5)
    np.testing.assert_array_equal(p.sum(-1), [3, 0, 5])
    np.testing.assert_array_equal(p[0], [True, True, True, False, False])
    np.testing.assert_array_equal(K.padding_mask(np.array([2], dtype=np.int32), 3), [[1, 1, 0]])
    np.testing.assert_array_equal(K.padding_mask(2, 3), [True, True, False])  # one sentence


@pytest.mark.parametrize("lengths,s,match", [
    ([3, -1], 4, r"lengths must be in 0..s = 0..4.*got -1"),
    ([3, 5], 4, r"lengths must be in 0..s = 0..4.*got 5"),
    ([2.5, 3], 4, r"lengths must be whole numbers.*float64"),
    ([2.0, 3.0], 4, r"lengths must be whole numbers"),
    ([True, False], 4, r"lengths must be whole numbers.*bool"),
    (["a"], 4, r"lengths must be whole numbers"),
    ([1], 0, r"s must be at least 1, got 0"),
    ([1], 2.0, r"s must be a whole number"),
])
def test_padding_mask_errors(lengths, s, match):
    with pytest.raises(ValueError, match=match):
        K.padding_mask(lengths, s)


def test_key_padding_to_attention_mask_broadcasts_over_queries():
    p = K.padding_mask([2, 4], 4)
    m = K.key_padding_to_attention_mask(p)
    assert m.shape == (2, 1, 4)
    full = np.broadcast_to(m, (2, 4, 4))
    assert (full[0, :, 2:] == False).all() and full[1].all()  # noqa: E712 - numpy's elementwise ==
    assert K.key_padding_to_attention_mask(p[0]).shape == (1, 4)
    # used as an SDPA mask: padded keys get weight 0, rows still sum to 1
    q = rand(2, 4, 3)
    _, w = A.scaled_dot_product_attention(q, q, q, mask=m)
    assert (w[0, :, 2:] == 0).all()
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=ATOL)
    with pytest.raises(ValueError, match="padding must be boolean"):
        K.key_padding_to_attention_mask(np.ones((2, 4)))


def test_combine_masks():
    c = A.causal_mask(4)
    p = K.key_padding_to_attention_mask(K.padding_mask([4, 2], 4))  # (2, 1, 4)
    both = K.combine_masks(c, p)
    assert both.shape == (2, 4, 4) and both.dtype == bool
    np.testing.assert_array_equal(both, c & p)
    np.testing.assert_array_equal(both[0], c)
    assert not both[1, :, 2:].any()
    np.testing.assert_array_equal(K.combine_masks(c, None), c)  # None = no restriction
    assert K.combine_masks(None, None) is None and K.combine_masks() is None
    np.testing.assert_array_equal(K.combine_masks(p, c), both)  # AND commutes
    with pytest.raises(ValueError, match=r"masks do not broadcast: mask 0 has shape \(4, 4\), "
                                         r"mask 1 has shape \(3, 3\)"):
        K.combine_masks(c, A.causal_mask(3))
    with pytest.raises(ValueError, match=r"mask 1 must be boolean.*float64"):
        K.combine_masks(c, np.ones((4, 4)))


# ---------------------------------------------------------------- window and band


def brute(s, allowed):
    return np.array([[allowed(i, j) for j in range(s)] for i in range(s)], dtype=bool)


@pytest.mark.parametrize("s", [1, 2, 5])
def test_named_masks(s):
    real = K.padding_mask(max(s - 1, 0), s)  # the last token is padding
    masks = {name: K.named_mask(name, s, padding=real, window=2, lower=1, upper=0)
             for name in K.MASK_NAMES}
    assert all(m.dtype == bool and m.shape == (s, s) for m in masks.values())
    assert masks["none"].all()
    np.testing.assert_array_equal(masks["causal"], A.causal_mask(s))
    np.testing.assert_array_equal(masks["padding"], np.broadcast_to(real, (s, s)))
    np.testing.assert_array_equal(masks["window"], K.sliding_window_mask(s, 2))
    np.testing.assert_array_equal(masks["band"], K.band_mask(s, 1, 0))
    masks["padding"][0, 0] = True  # a new array, not a view of padding
    assert real.sum() == max(s - 1, 0)


def test_named_mask_refuses_bad_input():
    with pytest.raises(ValueError, match=r"unknown mask 'diagonal': choose one of \["):
        K.named_mask("diagonal", 4)
    with pytest.raises(ValueError, match="the padding mask needs padding"):
        K.named_mask("padding", 4)
    with pytest.raises(ValueError, match=r"padding must have shape \(s,\) = \(4,\)"):
        K.named_mask("padding", 4, padding=np.ones(3, bool))
    with pytest.raises(ValueError, match="padding must be boolean"):
        K.named_mask("padding", 4, padding=np.ones(4))
    with pytest.raises(ValueError, match="window must be at least 1"):
        K.named_mask("window", 4, window=0)
    with pytest.raises(ValueError, match="s must be at least 1"):
        K.named_mask("causal", 0)


@pytest.mark.parametrize("s", [1, 2, 5, 8])
@pytest.mark.parametrize("window", [1, 2, 3, 10])
def test_sliding_window_definition(s, window):
    causal = K.sliding_window_mask(s, window)
    np.testing.assert_array_equal(causal, brute(s, lambda i, j: 0 <= i - j < window))
    both = K.sliding_window_mask(s, window, causal=False)
    np.testing.assert_array_equal(both, brute(s, lambda i, j: abs(i - j) < window))
    np.testing.assert_array_equal(causal, K.band_mask(s, window - 1, 0))
    np.testing.assert_array_equal(both, K.band_mask(s, window - 1, window - 1))
    assert (causal <= A.causal_mask(s)).all()  # a window never looks ahead
    if window >= s:
        np.testing.assert_array_equal(causal, A.causal_mask(s))
        assert both.all()
    np.testing.assert_array_equal(causal.sum(-1), np.minimum(np.arange(s) + 1, window))


@pytest.mark.parametrize("s,lower,upper", [(1, 0, 0), (5, 0, 0), (5, 1, 2), (6, 5, 0), (4, 0, 9)])
def test_band_definition(s, lower, upper):
    np.testing.assert_array_equal(K.band_mask(s, lower, upper),
                                  brute(s, lambda i, j: -lower <= j - i <= upper))


def test_band_special_cases():
    np.testing.assert_array_equal(K.band_mask(5, 5, 0), A.causal_mask(5))
    np.testing.assert_array_equal(K.band_mask(5, 0, 0), np.eye(5, dtype=bool))
    np.testing.assert_array_equal(K.band_mask(5, 0, 5), A.causal_mask(5).T)  # look ahead only


@pytest.mark.parametrize("call,match", [
    (lambda: K.sliding_window_mask(4, 0), "window must be at least 1, got 0"),
    (lambda: K.sliding_window_mask(0, 2), "s must be at least 1, got 0"),
    (lambda: K.sliding_window_mask(4, 1.5), "window must be a whole number"),
    (lambda: K.sliding_window_mask(4, 2, causal="yes"), "causal must be True or False"),
    (lambda: K.band_mask(4, -1, 0), r"lower must be a whole number >= 0, got -1"),
    (lambda: K.band_mask(4, 0, -2), r"upper must be a whole number >= 0, got -2"),
    (lambda: K.band_mask(4, 1.0, 0), r"lower must be a whole number"),
])
def test_window_and_band_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@SETTINGS
@given(s=st.integers(1, 9), lower=st.integers(0, 9), upper=st.integers(0, 9))
def test_property_band_counts(s, lower, upper):
    m = K.band_mask(s, lower, upper)
    i = np.arange(s)
    want = np.minimum(i + upper, s - 1) - np.maximum(i - lower, 0) + 1  # keys in the band
    np.testing.assert_array_equal(m.sum(-1), want)
    np.testing.assert_array_equal(K.band_mask(s, upper, lower), m.T)  # mirror image


# ---------------------------------------------------------------- the polarity table


def test_polarity_sdpa_bool_mask_same_as_book():
    q, k, v = rand(2, 3, 5, 4, seed=1), rand(2, 3, 6, 4, seed=2), rand(2, 3, 6, 4, seed=3)
    mask = np.random.default_rng(4).random((5, 6)) < 0.6
    mask[:, 0] = True
    ours, _ = A.scaled_dot_product_attention(q, k, v, mask=mask)
    t = F.scaled_dot_product_attention(*map(torch.from_numpy, (q, k, v)),
                                       attn_mask=torch.from_numpy(mask))
    np.testing.assert_allclose(ours, t.numpy(), atol=ATOL, rtol=0)


def test_polarity_sdpa_float_mask_is_additive():
    q, k, v = rand(3, 5, 4, seed=1), rand(3, 5, 4, seed=2), rand(3, 5, 4, seed=3)
    mask = K.sliding_window_mask(5, 2)
    add = K.additive_mask(mask)
    assert add.dtype == np.float64 and set(np.unique(add)) == {0.0, -np.inf}
    ours, w = A.scaled_dot_product_attention(q, k, v, mask=mask)
    t = F.scaled_dot_product_attention(*map(torch.from_numpy, (q, k, v)),
                                       attn_mask=torch.from_numpy(add))
    np.testing.assert_allclose(ours, t.numpy(), atol=ATOL, rtol=0)
    # softmax(scores + additive) is the same as masking the scores
    np.testing.assert_allclose(A.softmax(A.attention_scores(q, k) + add), w, atol=ATOL)
    assert K.additive_mask(mask, dtype=np.float32).dtype == np.float32


def test_polarity_sdpa_is_causal_same_as_causal_mask():
    q, k, v = rand(2, 6, 4, seed=1), rand(2, 6, 4, seed=2), rand(2, 6, 4, seed=3)
    ours, _ = A.scaled_dot_product_attention(q, k, v, mask=A.causal_mask(6))
    t = F.scaled_dot_product_attention(*map(torch.from_numpy, (q, k, v)), is_causal=True)
    np.testing.assert_allclose(ours, t.numpy(), atol=ATOL, rtol=0)


def test_polarity_generate_square_subsequent_mask():
    for s in (1, 4, 7):
        g = torch.nn.Transformer.generate_square_subsequent_mask(s)
        assert g.dtype == torch.float32  # float, not bool: 0 = may attend, -inf = blocked
        np.testing.assert_array_equal(K.from_additive_mask(g), A.causal_mask(s))
        np.testing.assert_array_equal(K.additive_mask(A.causal_mask(s)), g.numpy())


@pytest.mark.parametrize("fast", [True, False])
def test_polarity_mha_attn_mask_is_inverted(fast, fastpath):
    fastpath(fast)
    tm = torch_mha(8, 2, seed=1)
    ours = book_mha(tm)
    x = rand(2, 5, 8, seed=2)
    mask = K.band_mask(5, 1, 1)
    out, w = ours(x, mask=mask)
    xt = torch.from_numpy(x)
    with torch.no_grad():
        t_out, t_w = tm(xt, xt, xt, attn_mask=torch.from_numpy(K.to_torch_mha_mask(mask)),
                        average_attn_weights=False)
        wrong, _ = tm(xt, xt, xt, attn_mask=torch.from_numpy(mask))  # unconverted: True = ignore
    np.testing.assert_allclose(out, t_out.numpy(), atol=ATOL, rtol=0)
    np.testing.assert_allclose(w, t_w.numpy(), atol=ATOL, rtol=0)
    assert not np.allclose(out, wrong.numpy())


@pytest.mark.parametrize("fast", [True, False])
def test_polarity_mha_key_padding_mask_is_inverted(fast, fastpath):
    fastpath(fast)
    tm = torch_mha(8, 2, seed=3)
    ours = book_mha(tm)
    x = rand(3, 5, 8, seed=4)
    pad = K.padding_mask([5, 3, 1], 5)
    out, w = ours(x, mask=K.key_padding_to_attention_mask(pad))
    xt = torch.from_numpy(x)
    with torch.no_grad():
        t_out, _ = tm(xt, xt, xt, key_padding_mask=torch.from_numpy(K.to_torch_mha_mask(pad)),
                      need_weights=False)
    # every row, padded queries included: this nn.MultiheadAttention does not zero them
    np.testing.assert_allclose(out, t_out.numpy(), atol=ATOL, rtol=0)
    assert (w[2, :, :, 1:] == 0).all()


def test_polarity_conversions_round_trip():
    m = np.random.default_rng(0).random((3, 4, 5)) < 0.5
    np.testing.assert_array_equal(K.to_torch_mha_mask(m), ~m)
    np.testing.assert_array_equal(K.from_torch_mha_mask(K.to_torch_mha_mask(m)), m)
    np.testing.assert_array_equal(K.from_torch_mha_mask(torch.from_numpy(~m)), m)  # a tensor
    np.testing.assert_array_equal(K.from_additive_mask(K.additive_mask(m)), m)


@pytest.mark.parametrize("call,match", [
    (lambda: K.to_torch_mha_mask(np.ones((2, 2))), r"mask must be boolean.*float64"),
    (lambda: K.from_torch_mha_mask(np.zeros((2, 2), int)), r"mask must be boolean \(True = ignore"),
    (lambda: K.additive_mask([[1, 0]]), r"mask must be boolean"),
    (lambda: K.additive_mask(np.ones(2, bool), dtype=np.int64), r"dtype must be a floating"),
    (lambda: K.from_additive_mask([0.0, -1.5]), r"only 0 \(may attend\) and -inf.*-1.5"),
    (lambda: K.from_additive_mask([0.0, np.nan]), r"float_mask contains NaN"),
    (lambda: K.from_additive_mask([0.0, np.inf]), r"float_mask contains \+inf"),
    (lambda: K.from_additive_mask(np.array([True])), r"only 0.*1\.0"),
])
def test_conversion_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------- the wrong way


def test_mask_after_softmax_is_wrong():
    scores = rand(2, 4, 4)
    mask = A.causal_mask(4)
    wrong = K.mask_after_softmax(scores, mask)
    right = A.softmax(np.where(mask, scores, -np.inf))
    sums = wrong.sum(-1)
    assert (sums[..., :-1] < 1 - 1e-3).all()  # every row with a blocked key lost weight
    np.testing.assert_allclose(sums[..., -1], 1.0, atol=ATOL)  # the last row blocks nothing
    np.testing.assert_allclose(right.sum(-1), 1.0, atol=ATOL)
    assert (wrong[..., ~mask] == 0).all()
    # the wrong weights are the right ones scaled down by the allowed share of the softmax
    np.testing.assert_allclose(wrong, right * sums[..., None], atol=ATOL)
    np.testing.assert_allclose(wrong, A.softmax(scores) * mask, atol=ATOL)
    with pytest.raises(ValueError, match=r"mask has shape \(3, 3\)"):
        K.mask_after_softmax(scores, A.causal_mask(3))
    with pytest.raises(ValueError, match="mask must be boolean"):
        K.mask_after_softmax(scores, np.ones((4, 4)))
    with pytest.raises(ValueError, match="scores contains NaN"):
        K.mask_after_softmax(np.full((2, 2), np.nan), np.ones((2, 2), bool))


# ---------------------------------------------------------------- fully masked rows


MASK_ROW1_EMPTY = np.array([[True, True, True], [False, False, False], [True, False, True]])


def test_fully_masked_rows():
    np.testing.assert_array_equal(K.fully_masked_rows(MASK_ROW1_EMPTY), [False, True, False])
    stacked = np.stack([MASK_ROW1_EMPTY, np.ones((3, 3), bool)])
    assert K.fully_masked_rows(stacked).shape == (2, 3)
    assert not K.fully_masked_rows(A.causal_mask(5)).any()
    # a sentence of length 0 in a padded batch: every query of it has nothing to attend to
    both = K.combine_masks(A.causal_mask(3), K.key_padding_to_attention_mask(K.padding_mask([3, 0], 3)))
    np.testing.assert_array_equal(K.fully_masked_rows(both), [[False] * 3, [True] * 3])
    with pytest.raises(ValueError, match="mask must have at least 2 axes"):
        K.fully_masked_rows(np.ones(3, bool))
    with pytest.raises(ValueError, match="mask must be boolean"):
        K.fully_masked_rows(np.ones((3, 3)))


def test_fully_masked_row_torch_softmax_nan_sdpa_zero_book_zero():
    assert torch.softmax(torch.full((3,), float("-inf")), -1).isnan().all()
    q = rand(1, 3, 2, seed=7)
    out, w = A.scaled_dot_product_attention(q, q, q, mask=MASK_ROW1_EMPTY)
    assert (w[0, 1] == 0).all() and (out[0, 1] == 0).all()
    tq = torch.from_numpy(q)
    for attn_mask in (torch.from_numpy(MASK_ROW1_EMPTY),  # bool, True = may attend
                      torch.from_numpy(K.additive_mask(MASK_ROW1_EMPTY))):  # float
        t = F.scaled_dot_product_attention(tq, tq, tq, attn_mask=attn_mask).numpy()
        assert (t[0, 1] == 0).all()  # CPU SDPA in torch 2.13: zeros, like the book
        np.testing.assert_allclose(t, out, atol=ATOL)


def test_fully_masked_row_nn_multihead_attention(fastpath):
    tm = torch_mha(4, 2, seed=2)
    x = torch.from_numpy(rand(1, 3, 4, seed=8))
    ignore = torch.from_numpy(K.to_torch_mha_mask(MASK_ROW1_EMPTY))
    ours_out, _ = book_mha(tm)(x.numpy(), mask=MASK_ROW1_EMPTY)
    with torch.no_grad():
        for fast in (True, False):
            fastpath(fast)
            _, w = tm(x, x, x, attn_mask=ignore, need_weights=True, average_attn_weights=False)
            assert w[0, :, 1].isnan().all()  # explicit softmax: NaN on either path
        fastpath(True)  # eval + no_grad + batched self-attention: the native fast path
        out_fast, _ = tm(x, x, x, attn_mask=ignore, need_weights=False)
        fastpath(False)  # the SDPA path
        out_sdpa, _ = tm(x, x, x, attn_mask=ignore, need_weights=False)
    assert out_fast[0, 1].isnan().all()
    # SDPA path: a zero attention output, so the row is out_proj's bias, as in the book
    np.testing.assert_allclose(out_sdpa[0, 1].numpy(), tm.out_proj.bias.detach().numpy(), atol=ATOL)
    np.testing.assert_allclose(out_sdpa.numpy(), ours_out, atol=ATOL)


# ---------------------------------------------------------------- decoding with a cache


@pytest.mark.parametrize("s", [1, 2, 5, 9])
@pytest.mark.parametrize("d,h", [(8, 2), (12, 3), (6, 1), (8, 8)])
@pytest.mark.parametrize("bias", [False, True])
def test_decode_with_cache_equals_causal_pass(s, d, h, bias):
    mha = M.MultiHeadAttention.from_seed(d, h, seed=s + d, bias=bias)
    x = rand(s, d, seed=h)
    full, _ = mha(x, mask=A.causal_mask(s))
    out = K.decode_with_cache(mha, x)
    assert out.shape == (s, d)
    np.testing.assert_allclose(out, full, atol=1e-9, rtol=0)


def test_decode_with_cache_batched_and_returns_the_cache():
    mha = M.MultiHeadAttention.from_seed(12, 4, seed=1, bias=True)
    x = rand(3, 6, 12, seed=2)
    out, cache = K.decode_with_cache(mha, x, return_cache=True)
    np.testing.assert_allclose(out, mha(x, mask=A.causal_mask(6))[0], atol=1e-9, rtol=0)
    assert cache.keys.shape == cache.values.shape == (3, 4, 6, 3)  # (b, h, t, d_k)
    assert len(cache) == cache.length == 6
    assert cache.n_numbers == 2 * 3 * 6 * 12 == K.kv_cache_numbers(1, 6, 12, batch=3)
    # the cached keys are exactly the keys of the full pass: K = X W_k + b_k, split
    np.testing.assert_allclose(cache.keys, M.split_heads(x @ mha.W_k + mha.b_k, 4), atol=ATOL)
    np.testing.assert_allclose(cache.values, M.split_heads(x @ mha.W_v + mha.b_v, 4), atol=ATOL)
    assert "t=6" in repr(cache)


def test_decode_float32_stays_float32():
    mha = M.MultiHeadAttention.from_seed(8, 2, seed=1)
    x = rand(4, 8).astype(np.float32)
    out = K.decode_with_cache(mha, x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, mha(x, mask=A.causal_mask(4))[0], atol=1e-5)


def test_decode_earlier_outputs_ignore_later_tokens():
    mha = M.MultiHeadAttention.from_seed(8, 2, seed=3, bias=True)
    x = rand(6, 8, seed=4)
    y = x.copy()
    y[4:] = rand(2, 8, seed=5)
    np.testing.assert_array_equal(K.decode_with_cache(mha, x)[:4], K.decode_with_cache(mha, y)[:4])


def test_kv_cache_append_and_errors():
    cache = K.KVCache(2, 3)
    assert cache.keys.shape == (2, 0, 3) and cache.n_numbers == 0 and len(cache) == 0
    cache.append(np.ones((2, 1, 3)), np.zeros((2, 1, 3)))
    cache.append(np.ones((2, 2, 3)), np.zeros((2, 2, 3)))  # several tokens at once (a prompt)
    assert cache.keys.shape == (2, 3, 3) and cache.n_numbers == 2 * 2 * 3 * 3
    with pytest.raises(ValueError, match=r"k has shape \(2, 1, 4\) but the cache holds .* "
                                         r"= \(2, t_new, 3\)"):
        cache.append(np.ones((2, 1, 4)), np.ones((2, 1, 4)))
    with pytest.raises(ValueError, match=r"v has shape \(3, 1, 3\)"):
        cache.append(np.ones((2, 1, 3)), np.ones((3, 1, 3)))
    with pytest.raises(ValueError, match=r"k has shape \(2, 1, 3\) but v has shape \(2, 2, 3\)"):
        cache.append(np.ones((2, 1, 3)), np.ones((2, 2, 3)))
    with pytest.raises(ValueError, match="k contains NaN"):
        cache.append(np.full((2, 1, 3), np.nan), np.ones((2, 1, 3)))
    with pytest.raises(ValueError, match="h must be at least 1"):
        K.KVCache(0, 3)
    with pytest.raises(ValueError, match="batch must be a tuple"):
        K.KVCache(2, 3, batch=4)
    batched = K.KVCache(2, 3, batch=(5,))
    with pytest.raises(ValueError, match=r"= \(5, 2, t_new, 3\)"):
        batched.append(np.ones((2, 1, 3)), np.ones((2, 1, 3)))


@pytest.mark.parametrize("side", ["left", "right"])
def test_decode_with_cache_and_padding_equals_the_masked_causal_pass(side):
    mha = M.MultiHeadAttention.from_seed(8, 2, seed=2, bias=True)
    x = rand(3, 6, 8, seed=3)  # (b, s, d)
    padding = K.padding_mask([6, 4, 1], 6)  # (b, s)
    if side == "left":
        padding = padding[:, ::-1].copy()
    both = K.combine_masks(A.causal_mask(6), K.key_padding_to_attention_mask(padding))
    full, _ = mha(x, mask=both)  # (b, s, d); fully masked rows give b_o
    np.testing.assert_allclose(K.decode_with_cache(mha, x, padding=padding), full, atol=1e-12)
    if side == "left":  # without the key-padding mask the real rows attend to padding keys
        unmasked = K.decode_with_cache(mha, x)
        assert not np.allclose(unmasked[1:][padding[1:]], full[1:][padding[1:]])
    one = K.decode_with_cache(mha, x[0], padding=np.ones(6, bool))  # (s, d), all real
    np.testing.assert_allclose(one, mha(x[0], mask=A.causal_mask(6))[0], atol=1e-12)


def test_decode_with_cache_and_padding_matches_torch_on_the_real_rows():
    m = torch_mha(8, 2, seed=4)
    x = rand(2, 5, 8, seed=5)  # (b, s, d)
    padding = K.padding_mask([5, 3], 5)[:, ::-1].copy()  # left padding: (b, s)
    causal_ignore = torch.from_numpy(K.to_torch_mha_mask(A.causal_mask(5)))  # True = ignore
    with torch.no_grad():
        theirs, _ = m(*(torch.from_numpy(x),) * 3, attn_mask=causal_ignore,
                      key_padding_mask=torch.from_numpy(~padding))  # NaN in empty rows
    ours = K.decode_with_cache(book_mha(m), x, padding=padding)
    np.testing.assert_allclose(ours[padding], theirs.numpy()[padding], atol=1e-12)


def test_decode_with_cache_padding_errors():
    mha = M.MultiHeadAttention.from_seed(8, 2)
    with pytest.raises(ValueError, match=r"padding must be boolean .* shape \(2, 4\)"):
        K.decode_with_cache(mha, np.ones((2, 4, 8)), padding=np.ones((2, 4)))
    with pytest.raises(ValueError, match=r"got dtype bool and shape \(4,\)"):
        K.decode_with_cache(mha, np.ones((2, 4, 8)), padding=np.ones(4, bool))


def test_decode_with_cache_errors():
    mha = M.MultiHeadAttention.from_seed(8, 2)
    with pytest.raises(ValueError, match=r"x has shape \(4, 6\) but the module has d=8"):
        K.decode_with_cache(mha, np.ones((4, 6)))
    with pytest.raises(ValueError, match=r"x must have at least 2 axes"):
        K.decode_with_cache(mha, np.ones(8))
    with pytest.raises(ValueError, match="x contains NaN"):
        K.decode_with_cache(mha, np.full((2, 8), np.nan))
    with pytest.raises(ValueError, match="mha must be a MultiHeadAttention, got MultiheadAttention"):
        K.decode_with_cache(torch.nn.MultiheadAttention(8, 2), np.ones((4, 8)))


# ---------------------------------------------------------------- costs


def test_kv_cache_numbers_and_bytes():
    assert K.kv_cache_numbers(2, 5, 8) == 2 * 2 * 5 * 8
    assert K.kv_cache_numbers(2, 5, 8, batch=3) == 2 * 2 * 5 * 8 * 3
    # a GPT-2-small-sized model (12 layers, d = 768) at 1024 tokens, float16: 36 MiB
    assert K.kv_cache_bytes(12, 1024, 768) == 2 * 12 * 1024 * 768 * 2 == 37_748_736
    assert K.kv_cache_bytes(12, 1024, 768, bytes_per_number=4) == 2 * K.kv_cache_bytes(12, 1024, 768)
    # the same count as a real cache, layer by layer
    mha = M.MultiHeadAttention.from_seed(8, 4)
    _, cache = K.decode_with_cache(mha, rand(2, 5, 8), return_cache=True)
    assert 3 * cache.n_numbers == K.kv_cache_numbers(3, 5, 8, batch=2)
    for call, match in [(lambda: K.kv_cache_numbers(0, 5, 8), "n_layers must be at least 1"),
                        (lambda: K.kv_cache_numbers(1, 5, 8, batch=0), "batch must be at least 1"),
                        (lambda: K.kv_cache_bytes(1, 5, 8, bytes_per_number=0.5),
                         "bytes_per_number must be a whole number")]:
        with pytest.raises(ValueError, match=match):
            call()


def _flops_by_loop(s, d, cached):
    """Step by step, as the docstring describes: the formula must agree."""
    total = 0
    for t in range(1, s + 1):
        rows = 1 if cached else t  # rows projected at this step
        queries = 1 if cached else t  # queries attending to t keys
        total += 4 * d * d * rows + 2 * d * queries * t
    return total


@pytest.mark.parametrize("s", [1, 2, 7, 100])
@pytest.mark.parametrize("d", [1, 8, 64])
def test_decode_flops_formula(s, d):
    for cached in (True, False):
        assert K.decode_flops(s, d, cached) == _flops_by_loop(s, d, cached)
    assert K.decode_flops(s, d, True) <= K.decode_flops(s, d, False)
    if s == 1:
        assert K.decode_flops(1, d, True) == K.decode_flops(1, d, False) == 4 * d * d + 2 * d


def test_decode_flops_saving_grows_with_s():
    ratios = [K.decode_flops(s, 64, False) / K.decode_flops(s, 64, True) for s in (16, 64, 256)]
    assert ratios[0] < ratios[1] < ratios[2]
    with pytest.raises(ValueError, match="cached must be True or False"):
        K.decode_flops(4, 8, 1)
    with pytest.raises(ValueError, match="s must be at least 1"):
        K.decode_flops(0, 8, True)


# ---------------------------------------------------------------- properties


@SETTINGS
@given(lengths=st.lists(st.integers(0, 8), min_size=1, max_size=4), extra=st.integers(0, 3))
def test_property_padding_mask_rows(lengths, extra):
    s = max(max(lengths), 1) + extra
    p = K.padding_mask(lengths, s)
    np.testing.assert_array_equal(p.sum(-1), lengths)
    assert (np.diff(p.astype(int), axis=-1) <= 0).all()  # real tokens first, then padding


@SETTINGS
@given(s=st.integers(1, 7), d_k=st.integers(1, 3), h=st.integers(1, 3), b=st.integers(1, 2),
       bias=st.booleans(), seed=st.integers(0, 1000))
def test_property_cache_equals_full_pass(s, d_k, h, b, bias, seed):
    mha = M.MultiHeadAttention.from_seed(d_k * h, h, seed=seed, bias=bias)
    x = rand(b, s, d_k * h, seed=seed)
    np.testing.assert_allclose(K.decode_with_cache(mha, x), mha(x, mask=A.causal_mask(s))[0],
                               atol=1e-9, rtol=0)


@pytest.mark.slow  # imports torch._dynamo (0.7 s of CPU), as loading transformers does
@pytest.mark.parametrize("q, t", [(1, 1), (1, 7), (3, 7), (7, 7)])
def test_causal_lower_right_is_the_tril_mask_chapter_6_builds(q, t):
    """Chapter 6 builds PyTorch's bottom-right causal mask as ``tril(t - q)`` rather than
    importing torch.nn.attention.bias (whose import loads torch._dynamo: ~2 s of CPU in
    every execution of the chapter); the two are the same mask."""
    from torch.nn.attention.bias import causal_lower_right

    tril = torch.ones(q, t, dtype=torch.bool).tril(t - q)  # (q, t)
    assert torch.equal(causal_lower_right(q, t)._materialize(), tril)
    assert tril[-1].all() and (q == 1) == bool(tril.all())  # the last query sees every key
