"""numerics: bfloat16 rounding bit for bit against torch; the online softmax and blocked
attention equal to the full softmax (and torch SDPA) for every block size."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_book import numerics as N
from attention_book import reference as R
from attention_book.attention import causal_mask, scaled_dot_product_attention, softmax

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SETTINGS = settings(deadline=None, max_examples=60, derandomize=True, database=None)


# ---------------------------------------------------------------- bfloat16

def _torch_bits(x32):
    return torch.from_numpy(x32.copy()).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)


def test_bfloat16_bits_equal_torch_on_every_kind_of_float32():
    rng = np.random.default_rng(0)
    normal = rng.normal(size=20_000) * 10.0 ** rng.integers(-44, 38, 20_000)
    raw = rng.integers(0, 2**32, 20_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    special = [0.0, -0.0, np.inf, -np.inf, 65504, 65520, 1e-45, 1e-40, 3.38e38,
               np.float32(3.4028235e38), 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20]
    with np.errstate(over="ignore"):  # 10**38 * a normal draw may pass float32's max
        x = np.concatenate([normal.astype(np.float32), raw, np.array(special, np.float32)])
    ok = ~np.isnan(x)
    assert (~ok).sum() > 10  # the raw bits include NaNs
    assert np.array_equal(N.bfloat16_bits(x)[ok], _torch_bits(x)[ok])
    assert np.isnan(N.to_bfloat16(x)[~ok]).all() and np.isnan(R.bfloat16_torch(x)[~ok]).all()
    assert np.array_equal(N.to_bfloat16(x), R.bfloat16_torch(x), equal_nan=True)


def test_bfloat16_ties_go_to_even_and_the_range_is_float32s():
    # 1 + 2**-8 is halfway between 1 and 1 + 2**-7: the even neighbour is 1
    assert N.to_bfloat16(1 + 2**-8) == 1.0
    assert N.to_bfloat16(1 + 3 * 2**-8) == 1 + 2 * 2**-7  # halfway, odd below: rounds up
    assert N.to_bfloat16(1 + 2**-8 + 2**-20) == 1 + 2**-7  # above halfway: up
    assert N.to_bfloat16(N.BFLOAT16_MAX) == N.BFLOAT16_MAX == torch.finfo(torch.bfloat16).max
    assert np.isinf(N.to_bfloat16(3.4e38)) and N.BFLOAT16_EPS == torch.finfo(torch.bfloat16).eps
    assert N.to_bfloat16(-1e9) == -998_244_352 and N.to_bfloat16(1e5) == 99_840
    assert N.to_bfloat16(np.array([[1.5]])).shape == (1, 1)
    assert N.to_bfloat16(2.0).dtype == np.float32


@SETTINGS
@given(st.floats(-(2.0**127), 2.0**127, width=32))
def test_bfloat16_error_is_at_most_half_a_spacing(x):
    y = float(N.to_bfloat16(x))
    if abs(x) >= 2.0**-126:  # normal numbers: relative error <= 2**-8
        assert abs(y - x) <= 2.0**-8 * abs(x)
    assert float(N.to_bfloat16(y)) == y  # rounding is idempotent


@pytest.mark.parametrize("bad", ["1.0", [1 + 2j], [[1, 2], [3]], None])
def test_bfloat16_refuses_what_is_not_real_numbers(bad):
    with pytest.raises(ValueError, match="x must be"):
        N.to_bfloat16(bad)


# ---------------------------------------------------------------- online softmax

@SETTINGS
@given(n=st.integers(1, 40), rows=st.integers(1, 4), block=st.integers(1, 50),
       spread=st.sampled_from([1.0, 30.0, 1e4]), seed=st.integers(0, 2**16),
       masked=st.booleans())
def test_online_softmax_equals_softmax_for_any_block(n, rows, block, spread, seed, masked):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(rows, n)) * spread
    if masked:
        z[rng.random(z.shape) < 0.4] = -np.inf
        z[0] = -np.inf  # one fully masked row
    w = N.online_softmax(z, block)
    assert np.allclose(w, softmax(z), atol=1e-12, rtol=1e-12)
    sums = w.sum(axis=-1)
    assert np.allclose(sums[np.isfinite(z).any(axis=-1)], 1.0)  # rows sum to one
    assert (w[~np.isfinite(z).any(axis=-1)] == 0).all()  # empty rows: zeros


@SETTINGS
@given(s_q=st.integers(1, 12), s_k=st.integers(1, 30), d_k=st.integers(1, 6),
       d_v=st.integers(1, 6), block=st.integers(1, 35), b=st.integers(1, 3),
       use_mask=st.sampled_from(["none", "causal", "random"]), seed=st.integers(0, 2**16))
def test_online_attention_equals_full_attention(s_q, s_k, d_k, d_v, block, b, use_mask, seed):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(b, s_q, d_k)), rng.normal(size=(b, s_k, d_k)), rng.normal(size=(b, s_k, d_v))
    mask = {"none": None, "causal": np.tril(np.ones((s_q, s_k), bool), s_k - s_q),
            "random": rng.random((b, s_q, s_k)) < 0.6}[use_mask]
    out = N.online_attention(q, k, v, block, mask=mask)
    full, _ = scaled_dot_product_attention(q, k, v, mask=mask)
    assert out.shape == (b, s_q, d_v)
    assert np.allclose(out, full, atol=1e-12)
    _, m, total = N.online_attention(q, k, v, block, mask=mask, return_stats=True)  # (b, s_q) each
    scores = np.where(np.broadcast_to(True if mask is None else mask, (b, s_q, s_k)),
                      q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k), -np.inf)  # (b, s_q, s_k)
    seen = np.isfinite(scores).any(axis=-1)
    assert np.allclose(m[seen], scores.max(axis=-1)[seen], atol=1e-12)
    with np.errstate(divide="ignore"):
        lse = np.log(np.exp(scores).sum(axis=-1))
        assert np.allclose((m + np.log(total))[seen], lse[seen]) and (total[~seen] == 0).all()


def test_online_attention_equals_torch_sdpa():
    rng = np.random.default_rng(3)
    for s, block in ((1, 1), (7, 3), (64, 16), (100, 33), (128, 128)):
        q, k, v = (rng.normal(size=(2, 4, s, 8)) for _ in range(3))  # (b, h, s, d_k)
        for causal in (False, True):
            mask = causal_mask(s) if causal else None
            ours = N.online_attention(q, k, v, block, mask=mask)
            theirs = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v)),
                                                    is_causal=causal).numpy()
            assert np.allclose(ours, theirs, atol=1e-12), (s, block, causal)


def test_online_attention_keeps_float32_and_large_scores_finite():
    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(5, 4)).astype(np.float32) for _ in range(3))
    out = N.online_attention(q * 300, k * 300, v, 2)  # scores of order 1e5: exp would overflow
    assert out.dtype == np.float32 and np.isfinite(out).all()
    assert np.allclose(out, scaled_dot_product_attention(q * 300, k * 300, v)[0], atol=1e-4)


def test_online_attention_fully_masked_row_is_zero():
    rng = np.random.default_rng(2)
    q, k, v = (rng.normal(size=(3, 2)) for _ in range(3))
    mask = np.ones((3, 3), bool)
    mask[1] = False
    out = N.online_attention(q, k, v, 2, mask=mask)
    assert (out[1] == 0).all() and np.allclose(out, scaled_dot_product_attention(q, k, v, mask=mask)[0])


@pytest.mark.parametrize("args, message", [
    ((np.ones((3, 4)), np.ones((3, 5)), np.ones((3, 2)), 2), "last axes of q and k"),
    ((np.ones((3, 4)), np.ones((3, 4)), np.ones((2, 2)), 2), "one row per key"),
    ((np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 2)), 0), "block must be at least 1"),
    ((np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 2)), 1.5), "block must be a whole number"),
    ((np.ones(4), np.ones((3, 4)), np.ones((3, 2)), 2), "q must have at least 2 axes"),
    ((np.full((3, 4), np.nan), np.ones((3, 4)), np.ones((3, 2)), 2), "q contains NaN"),
])
def test_online_attention_explains_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        N.online_attention(*args)


def test_online_attention_checks_mask_and_scale():
    x = np.ones((3, 4))
    with pytest.raises(ValueError, match="mask must be boolean"):
        N.online_attention(x, x, x, 2, mask=np.ones((3, 3)))
    with pytest.raises(ValueError, match="must broadcast"):
        N.online_attention(x, x, x, 2, mask=np.ones((2, 3), bool))
    with pytest.raises(ValueError, match="scale must be a positive"):
        N.online_attention(x, x, x, 2, scale=-1.0)
    with pytest.raises(ValueError, match="block must be at least 1"):
        N.online_softmax(x, 0)
    with pytest.raises(ValueError, match="return_stats must be True or False"):
        N.online_attention(x, x, x, 2, return_stats="yes")


def test_working_floats():
    assert N.attention_working_floats(4096, 4096) == 4096**2
    assert N.attention_working_floats(4096, 4096, 128) == 4096 * 128 + 2 * 4096
    assert N.attention_working_floats(10, 5, 64) == 10 * 5 + 20  # a block past the end
    with pytest.raises(ValueError, match="s_q must be at least 1"):
        N.attention_working_floats(0, 5)
    with pytest.raises(ValueError, match="block must be a whole number"):
        N.attention_working_floats(5, 5, 2.0)
