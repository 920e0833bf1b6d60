"""Sinusoidal positional encoding: values, layouts, the relative-position rotation.

Tolerances: float64 identities (trigonometry, rotations) atol 1e-12; hand-typed values
atol 1e-15.
"""

import math

import numpy as np
import pytest

from attention_book import positional as P

ATOL = 1e-12  # float64 trig identities, positions < 200


def test_first_row_is_zero_one_pairs():
    pe = P.sinusoidal_encoding(3, 8)
    np.testing.assert_array_equal(pe[0], [0, 1, 0, 1, 0, 1, 0, 1])


def test_hand_computed_row():
    # d=4, base=10000: omega = [1, 10000**(-2/4)] = [1, 0.01]; position p=1
    pe = P.sinusoidal_encoding(2, 4)
    expected = [0.8414709848078965, 0.5403023058681398, 0.009999833334166664, 0.9999500004166653]
    np.testing.assert_allclose(pe[1], expected, rtol=0, atol=1e-15)


def test_formula_every_entry():
    s, d, base = 7, 6, 100.0
    pe = P.sinusoidal_encoding(s, d, base)
    for p in range(s):
        for i in range(d // 2):
            angle = p / base ** (2 * i / d)
            assert pe[p, 2 * i] == pytest.approx(math.sin(angle), abs=1e-15)
            assert pe[p, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-15)


def test_frequencies():
    omega = P.frequencies(8, 10000.0)
    assert omega.shape == (4,)
    np.testing.assert_allclose(omega, [1, 0.1, 0.01, 0.001], rtol=1e-14)


@pytest.mark.parametrize("s,d", [(1, 2), (5, 4), (50, 512)])
def test_shapes(s, d):
    assert P.sinusoidal_encoding(s, d).shape == (s, d)
    assert P.concatenated_encoding(s, d).shape == (s, d)
    assert P.relative_rotation(3, d).shape == (d, d)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype(dtype):
    assert P.sinusoidal_encoding(4, 6, dtype=dtype).dtype == dtype
    assert P.concatenated_encoding(4, 6, dtype=dtype).dtype == dtype
    assert P.relative_rotation(2, 6, dtype=dtype).dtype == dtype
    assert P.frequencies(6, dtype=dtype).dtype == dtype
    pe = P.sinusoidal_encoding(4, 6, dtype=dtype)
    assert P.interleaved_to_concatenated(pe).dtype == dtype


def test_layouts_hold_the_same_information():
    pe = P.sinusoidal_encoding(20, 10)
    cat = P.concatenated_encoding(20, 10)
    np.testing.assert_array_equal(cat[:, :5], pe[:, 0::2])
    np.testing.assert_array_equal(cat[:, 5:], pe[:, 1::2])
    np.testing.assert_array_equal(P.interleaved_to_concatenated(pe), cat)
    np.testing.assert_array_equal(P.concatenated_to_interleaved(cat), pe)
    # round trips with leading axes, on arbitrary numbers
    x = np.arange(2 * 3 * 8, dtype=float).reshape(2, 3, 8)
    np.testing.assert_array_equal(P.concatenated_to_interleaved(P.interleaved_to_concatenated(x)), x)
    np.testing.assert_array_equal(P.interleaved_to_concatenated(P.concatenated_to_interleaved(x)), x)
    assert not np.array_equal(P.interleaved_to_concatenated(x), x)


@pytest.mark.parametrize("k", [-17, -3, -1, 0, 1, 2, 5, 40])
def test_relative_rotation_for_every_position(k):
    s, d = 120, 16
    pe = P.sinusoidal_encoding(s, d)
    t = P.relative_rotation(k, d)
    ps = np.arange(max(0, -k), min(s, s - k))  # p and p + k both in 0..s-1
    np.testing.assert_allclose(pe[ps] @ t, pe[ps + k], rtol=0, atol=ATOL)


def test_relative_rotation_structure():
    d = 8
    t3, t5 = P.relative_rotation(3, d), P.relative_rotation(5, d)
    np.testing.assert_allclose(t3 @ t5, P.relative_rotation(8, d), atol=ATOL)
    np.testing.assert_allclose(P.relative_rotation(-3, d), t3.T, atol=ATOL)
    np.testing.assert_allclose(t3 @ t3.T, np.eye(d), atol=ATOL)
    np.testing.assert_array_equal(P.relative_rotation(0, d), np.eye(d))
    # block diagonal: nothing couples different frequency pairs
    blocks = np.kron(np.eye(d // 2), np.ones((2, 2)))
    assert np.all(t3[blocks == 0] == 0)
    # first block, omega_0 = 1: [[cos k, -sin k], [sin k, cos k]]
    np.testing.assert_allclose(t3[:2, :2], [[math.cos(3), -math.sin(3)], [math.sin(3), math.cos(3)]])


def test_frequency_pairs_have_unit_norm():
    pe = P.sinusoidal_encoding(64, 12)
    norms = pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2  # (s, d/2)
    np.testing.assert_allclose(norms, 1.0, atol=ATOL)


def test_dot_products_depend_only_on_offset():
    s, d = 40, 16
    pe = P.sinusoidal_encoding(s, d)
    g = pe @ pe.T  # (s, s)
    np.testing.assert_allclose(g[1:, 1:], g[:-1, :-1], atol=ATOL)  # Toeplitz
    omega = P.frequencies(d)
    offsets = np.subtract.outer(np.arange(s), np.arange(s))  # p - q
    np.testing.assert_allclose(g, np.cos(offsets[..., None] * omega).sum(-1), atol=ATOL)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(s=4, d=7), r"d must be even.*got d=7"),
        (dict(s=4, d=0), r"d must be at least 1, got 0"),
        (dict(s=0, d=4), r"s must be at least 1, got 0"),
        (dict(s=-2, d=4), r"s must be at least 1"),
        (dict(s=4.0, d=4), r"s must be a whole number, got 4.0"),
        (dict(s="4", d=4), r"s must be a whole number"),
        (dict(s=4, d=4, base=1.0), r"base must be greater than 1.*got base=1.0"),
        (dict(s=4, d=4, base=0.5), r"base must be greater than 1"),
        (dict(s=4, d=4, base=float("inf")), r"base must be a finite number"),
        (dict(s=4, d=4, base=float("nan")), r"base must be a finite number"),
        (dict(s=4, d=4, dtype=np.int64), r"dtype must be float32 or float64"),
    ],
)
def test_encoding_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        P.sinusoidal_encoding(**kwargs)
    with pytest.raises(ValueError, match=match):
        P.concatenated_encoding(**kwargs)


def test_d_equal_one_is_odd():
    with pytest.raises(ValueError, match="d must be even.*got d=1"):
        P.sinusoidal_encoding(3, 1)


def test_other_errors():
    with pytest.raises(ValueError, match="d must be even"):
        P.frequencies(5)
    with pytest.raises(ValueError, match="d must be even"):
        P.relative_rotation(1, 3)
    with pytest.raises(ValueError, match="k must be a real number"):
        P.relative_rotation("1", 4)
    with pytest.raises(ValueError, match="k must be a finite number"):
        P.relative_rotation(float("nan"), 4)
    with pytest.raises(ValueError, match=r"even, non-zero last axis.*\(3, 5\)"):
        P.interleaved_to_concatenated(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="pe_cat contains NaN"):
        P.concatenated_to_interleaved(np.full((2, 4), np.nan))


# ---------------------------------------------------------------- added for chapter 2

from hypothesis import given, settings
from hypothesis import strategies as st


def test_wavelengths_grow_geometrically_from_2pi():
    d, base = 16, 10000.0
    lam = P.wavelengths(d, base)
    assert lam.shape == (d // 2,)
    assert lam[0] == pytest.approx(2 * math.pi)
    np.testing.assert_allclose(lam[1:] / lam[:-1], base ** (2 / d), rtol=1e-12)
    assert lam[-1] < 2 * math.pi * base  # approaches, never reaches, 2 pi base
    np.testing.assert_allclose(lam[-1], 2 * math.pi * base ** (1 - 2 / d), rtol=1e-12)
    # one full wavelength brings pair i back to where it started
    for i, length in enumerate(lam):
        row = P.encoding_at([0.0, length], d, base)
        np.testing.assert_allclose(row[1, 2 * i:2 * i + 2], row[0, 2 * i:2 * i + 2], atol=1e-9)


def test_encoding_at_matches_the_table_and_extrapolates():
    pe = P.sinusoidal_encoding(30, 8, 100.0)
    np.testing.assert_array_equal(P.encoding_at(np.arange(30), 8, 100.0), pe)
    far = P.encoding_at([1000.0, -3.0, 2.5], 8, 100.0)
    assert far.shape == (3, 8)
    assert far[0, 0] == pytest.approx(math.sin(1000.0))
    assert far[1, 1] == pytest.approx(math.cos(-3.0))
    with pytest.raises(ValueError, match="positions must be a 1-D array"):
        P.encoding_at(np.zeros((2, 2)), 8)
    with pytest.raises(ValueError, match="d must be even"):
        P.encoding_at([0, 1], 5)


def test_position_similarity_and_offset_similarity_agree():
    s, d, base = 25, 10, 1000.0
    pe = P.sinusoidal_encoding(s, d, base)
    g = P.position_similarity(pe)
    assert g.shape == (s, s)
    np.testing.assert_allclose(np.diag(g), d / 2, atol=ATOL)
    offsets = np.subtract.outer(np.arange(s), np.arange(s))
    np.testing.assert_allclose(g, P.offset_similarity(offsets, d, base), atol=ATOL)
    assert P.offset_similarity(0, d) == pytest.approx(d / 2)
    assert P.offset_similarity(7, d) == pytest.approx(P.offset_similarity(-7, d))
    with pytest.raises(ValueError, match=r"pe must be a matrix of shape \(s, d\)"):
        P.position_similarity(np.zeros((2, 3, 4)))


def test_relative_rotation_error_is_rounding_only_and_detects_a_wrong_layout():
    assert P.relative_rotation_error(512, 512, 37) < 1e-12
    assert P.relative_rotation_error(1, 2, -5) < 1e-14
    assert P.relative_rotation_error(64, 16, 2.5) < 1e-12  # fractional offsets too
    # the rotation acts on (sin, cos) pairs: applied to the concatenated layout it fails
    pe_cat = P.concatenated_encoding(10, 8)
    wrong = pe_cat @ P.relative_rotation(3, 8)
    assert np.abs(wrong - P.concatenated_encoding(13, 8)[3:]).max() > 0.1
    with pytest.raises(ValueError, match="s must be at least 1"):
        P.relative_rotation_error(0, 4, 1)
    with pytest.raises(ValueError, match="k must be a real number"):
        P.relative_rotation_error(4, 4, "1")


def test_relative_rotation_error_equals_the_dense_product():
    s, d, k = 20, 12, 5
    dense = P.encoding_at(np.arange(s) + k, d) - P.sinusoidal_encoding(s, d) @ P.relative_rotation(k, d)
    assert P.relative_rotation_error(s, d, k) == pytest.approx(np.abs(dense).max(), abs=1e-15)


def test_learned_table_is_one_hot_times_weights_and_does_not_extrapolate():
    from attention_book.embedding import one_hot

    table = P.learned_position_table(10, 6, seed=3)
    assert table.shape == (10, 6)
    np.testing.assert_array_equal(table, P.learned_position_table(10, 6, seed=3))
    assert not np.array_equal(table, P.learned_position_table(10, 6, seed=4))
    rows = P.learned_positional_encoding(4, table)
    np.testing.assert_array_equal(rows, table[:4])
    np.testing.assert_allclose(one_hot(np.arange(4), 10) @ table, rows)  # [x, o] W trick
    with pytest.raises(ValueError, match=r"s_max=10 positions has no row for positions 10\.\.11"):
        P.learned_positional_encoding(12, table)
    with pytest.raises(ValueError, match="s_max must be at least 1"):
        P.learned_position_table(0, 4)


@settings(max_examples=60, deadline=None)
@given(s=st.integers(1, 80), half=st.integers(1, 40),
       base=st.sampled_from([10.0, 100.0, 1000.0, 10000.0, 100000.0]))
def test_property_frequency_pairs_have_unit_norm(s, half, base):
    pe = P.sinusoidal_encoding(s, 2 * half, base)
    np.testing.assert_allclose(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, 1.0, atol=1e-12)
    # so every row has norm sqrt(d/2)
    np.testing.assert_allclose(np.linalg.norm(pe, axis=1), math.sqrt(half), rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(s=st.integers(2, 60), half=st.integers(1, 32),
       base=st.floats(2.0, 1e5), shift=st.integers(0, 500))
def test_property_offset_similarity_is_toeplitz(s, half, base, shift):
    d = 2 * half
    g = P.position_similarity(P.sinusoidal_encoding(s, d, base))
    np.testing.assert_allclose(g[1:, 1:], g[:-1, :-1], atol=1e-9)  # constant diagonals
    # and the same at any starting position: shifting every position changes nothing
    later = P.encoding_at(np.arange(s) + shift, d, base)
    np.testing.assert_allclose(P.position_similarity(later), g, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(s=st.integers(1, 60), half=st.integers(1, 32), k=st.integers(-200, 200))
def test_property_shift_is_a_rotation_for_every_position(s, half, k):
    assert P.relative_rotation_error(s, 2 * half, k) < 1e-10


def test_mean_position_similarity_is_the_mean_off_diagonal_cosine():
    for s, d, base in ((2, 2, 10.0), (17, 8, 100.0), (64, 64, 10000.0), (64, 64, 10.0)):
        pe = P.sinusoidal_encoding(s, d, base)
        cos = pe @ pe.T / (d / 2)  # (s, s)
        expected = cos[~np.eye(s, dtype=bool)].mean()
        assert P.mean_position_similarity(s, d, base) == pytest.approx(expected, abs=1e-12)
    # a smaller base turns every pair faster: far positions become nearly orthogonal
    means = [P.mean_position_similarity(64, 64, b) for b in (10000, 1000, 100, 10)]
    assert means == sorted(means, reverse=True) and abs(means[-1]) < 0.01
    with pytest.raises(ValueError, match="s must be at least 2 to have two distinct"):
        P.mean_position_similarity(1, 8)


def test_pair_similarity_is_each_pairs_mean_cosine():
    for s, d, base in ((2, 2, 10.0), (17, 8, 100.0), (64, 64, 10000.0)):
        pe = P.sinusoidal_encoding(s, d, base)  # (s, d): pair i in columns 2i, 2i+1
        off = ~np.eye(s, dtype=bool)
        expected = [(pe[:, 2 * i:2 * i + 2] @ pe[:, 2 * i:2 * i + 2].T)[off].mean()
                    for i in range(d // 2)]
        np.testing.assert_allclose(P.pair_similarity(s, d, base), expected, atol=1e-12)
    # chapter 2's exercise 5: at s = d = 64, base 10000, 17 of the 32 pairs give >= 0.9
    shares = P.pair_similarity(64, 64)
    assert (shares >= 0.9).sum() == 17 and (P.wavelengths(64) > 64).sum() == 23
    with pytest.raises(ValueError, match="d must be even"):
        P.pair_similarity(8, 7)


def _torch_timing_signal(length: int, channels: int, min_timescale=1.0, max_timescale=1.0e4):
    """tensor2tensor's get_timing_signal_1d, written in torch (float64): (length, channels)."""
    torch = pytest.importorskip("torch")
    position = torch.arange(length, dtype=torch.float64)  # (s,)
    num_timescales = channels // 2
    increment = math.log(max_timescale / min_timescale) / max(num_timescales - 1, 1)
    inv_timescales = min_timescale * torch.exp(
        torch.arange(num_timescales, dtype=torch.float64) * -increment)  # (d/2,)
    scaled_time = position[:, None] * inv_timescales[None, :]  # (s, 1) * (1, d/2) -> (s, d/2)
    return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1).numpy()  # (s, d)


@pytest.mark.parametrize("s, d", [(1, 2), (5, 8), (50, 64), (128, 512)])
def test_tensor2tensor_encoding_matches_a_torch_transcription(s, d):
    assert np.allclose(P.tensor2tensor_encoding(s, d), _torch_timing_signal(s, d), atol=1e-12)


def test_tensor2tensor_frequencies_run_from_one_to_one_over_base():
    omega = P.tensor2tensor_frequencies(8)  # (d/2,)
    assert np.allclose(omega, 10000.0 ** (-np.arange(4) / 3))
    assert omega[0] == 1.0 and np.isclose(omega[-1], 1e-4)
    assert np.array_equal(P.tensor2tensor_frequencies(2), [1.0])  # d = 2: the paper's too
    assert P.tensor2tensor_encoding(3, 8, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="even"):
        P.tensor2tensor_encoding(3, 7)
    with pytest.raises(ValueError, match="greater than 1"):
        P.tensor2tensor_frequencies(8, base=1.0)


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 40), st.integers(2, 64), st.sampled_from([100.0, 10000.0]))
def test_property_tensor2tensor_is_no_column_permutation_of_the_paper(s, half, base):
    """From d = 4 on, only the first pair's frequency is shared; the Gram matrix of the
    positions (which any column permutation keeps) differs as soon as a position moves."""
    d = 2 * half
    ours, t2t = P.frequencies(d, base), P.tensor2tensor_frequencies(d, base)
    assert np.isclose(ours[0], t2t[0]) and not np.isclose(ours[1:], t2t[1:]).any()
    paper, theirs = P.sinusoidal_encoding(s, d, base), P.tensor2tensor_encoding(s, d, base)
    assert not np.allclose(paper @ paper.T, theirs @ theirs.T)  # (s, d) @ (d, s) each


# ------------------------------------------- positions inside attention: RoPE, ALiBi, T5

from attention_book.attention import causal_mask, scaled_dot_product_attention


def _alibi_reference_slopes(n):
    """get_slopes of the ALiBi repository (ofirpress/attention_with_linear_biases)."""
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + _alibi_reference_slopes(2 * closest)[0::2][:n - closest]


@pytest.mark.parametrize("h", range(1, 33))
def test_alibi_slopes_match_the_papers_code(h):
    np.testing.assert_allclose(P.alibi_slopes(h), _alibi_reference_slopes(h), rtol=1e-14)


def test_alibi_slopes_are_geometric_for_powers_of_two():
    np.testing.assert_allclose(P.alibi_slopes(8), 2.0 ** -np.arange(1, 9))
    np.testing.assert_allclose(P.alibi_slopes(16), 2.0 ** (-8 * np.arange(1, 17) / 16))


@pytest.mark.slow  # loads transformers (2 s): the edit loop keeps the formulas' own tests
@pytest.mark.parametrize("h", [1, 4, 8, 12, 16])
def test_alibi_matches_bloom(h):
    """Hugging Face's BLOOM adds m_h * j (key position only): with a causal mask that is
    ALiBi's -m_h (i - j) plus m_h i, a constant per query row, which the softmax ignores."""
    torch = pytest.importorskip("torch")
    bloom = pytest.importorskip("transformers.models.bloom.modeling_bloom")
    s = 9
    theirs = bloom.build_alibi_tensor(torch.ones(1, s), h, torch.float32).numpy()  # (h, 1, s)
    np.testing.assert_allclose(theirs[:, 0, 1], P.alibi_slopes(h), rtol=1e-6)
    bias = P.alibi_bias(s, h)  # (h, s, s)
    row_shift = bias - theirs  # (h, s, s) - (h, 1, s)
    causal = causal_mask(s)
    for head in range(h):
        shift = np.where(causal, row_shift[head], np.nan)
        np.testing.assert_allclose(np.nanmax(shift, 1), np.nanmin(shift, 1), atol=1e-4)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 12), st.integers(1, 16))
def test_alibi_bias_is_symmetric_toeplitz_and_zero_on_the_diagonal(s, h):
    b = P.alibi_bias(s, h)
    assert b.shape == (h, s, s)
    assert np.all(np.diagonal(b, axis1=1, axis2=2) == 0) and np.all(b <= 0)
    np.testing.assert_allclose(b, np.swapaxes(b, 1, 2))
    np.testing.assert_allclose(b[:, 1:, 1:], b[:, :-1, :-1])


@pytest.mark.slow  # loads transformers (2 s): the edit loop keeps the formulas' own tests
def test_t5_buckets_match_hugging_face():
    torch = pytest.importorskip("torch")
    t5 = pytest.importorskip("transformers.models.t5.modeling_t5")
    rel = np.arange(-3000, 3001)
    for bidirectional in (True, False):
        for num_buckets, max_distance in ((32, 128), (8, 20), (4, 5), (64, 1000), (6, 7)):
            theirs = t5.T5Attention._relative_position_bucket(
                torch.from_numpy(rel), bidirectional=bidirectional, num_buckets=num_buckets,
                max_distance=max_distance).numpy()
            ours = P.relative_position_bucket(rel, bidirectional, num_buckets, max_distance)
            assert np.array_equal(ours, theirs), (bidirectional, num_buckets, max_distance)


def test_t5_buckets_exact_near_logarithmic_far():
    b = P.relative_position_bucket(np.arange(-8, 9))
    assert b.tolist() == [8, 7, 6, 5, 4, 3, 2, 1, 0, 17, 18, 19, 20, 21, 22, 23, 24]
    assert P.relative_position_bucket(np.array([-127, -128, -5000])).tolist() == [15, 15, 15]
    assert P.relative_position_bucket(np.array([3, 100]), bidirectional=False).tolist() == [0, 0]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(-5000, 5000), min_size=1, max_size=20), st.booleans(),
       st.sampled_from([(32, 128), (8, 20), (16, 64)]))
def test_t5_buckets_in_range_and_monotone_in_distance(rel, bidirectional, sizes):
    num_buckets, max_distance = sizes
    rel = np.array(sorted(rel))
    b = P.relative_position_bucket(rel, bidirectional, num_buckets, max_distance)
    assert b.min() >= 0 and b.max() < num_buckets
    before = rel <= 0  # keys at or before the query: bucket grows with the distance
    assert np.all(np.diff(b[before]) <= 0)


def test_t5_relative_bias_looks_up_the_table():
    table = np.random.default_rng(0).standard_normal((32, 3))  # (num_buckets, h)
    bias = P.t5_relative_bias(6, table)
    assert bias.shape == (3, 6, 6)
    assert bias[1, 4, 2] == table[P.relative_position_bucket(np.array(-2)), 1]
    np.testing.assert_allclose(bias[:, 1:, 1:], bias[:, :-1, :-1])  # Toeplitz


@pytest.mark.slow  # loads transformers (2 s): the edit loop keeps the formulas' own tests
def test_rotary_matches_gptj():
    torch = pytest.importorskip("torch")
    gptj = pytest.importorskip("transformers.models.gptj.modeling_gptj")
    s, d = 11, 16
    x = np.random.default_rng(1).standard_normal((s, d))
    sin, cos = torch.split(gptj.create_sinusoidal_positions(s, d).double(), d // 2, dim=-1)
    theirs = gptj.apply_rotary_pos_emb(torch.from_numpy(x)[None, :, None, :], sin[None], cos[None])
    np.testing.assert_allclose(P.rotary_embedding(x), theirs[0, :, 0].numpy(), atol=1e-6)  # float32 angles


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 12), st.sampled_from([2, 4, 8, 16]), st.integers(0, 50), st.integers(0, 30))
def test_rotary_scores_depend_on_the_offset_only(s, d, seed, shift):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, d))
    # the same query and key at positions (p, p') and (p + shift, p' + shift)
    rows = np.zeros((s + shift, d))
    qs, ks = rows.copy(), rows.copy()
    qs[:], ks[:] = q, k
    rq, rk = P.rotary_embedding(qs), P.rotary_embedding(ks)  # (s + shift, d)
    scores = rq @ rk.T  # (s + shift, d) @ (d, s + shift)
    np.testing.assert_allclose(scores[shift:, shift:], scores[:s, :s], atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(rq, axis=1), np.linalg.norm(q), rtol=1e-12)
    np.testing.assert_allclose(rq[0], q)  # position 0 is not turned


def test_rotary_is_x_times_t_minus_p():
    x = np.random.default_rng(2).standard_normal((5, 8))
    expected = np.stack([x[p] @ P.relative_rotation(-p, 8) for p in range(5)])  # (d,) @ (d, d)
    np.testing.assert_allclose(P.rotary_embedding(x), expected, atol=1e-12)
    assert P.rotary_embedding(x[None]).shape == (1, 5, 8)


def test_rotary_halves_is_adjacent_with_columns_permuted():
    """The two layouts are one rotation seen through a column permutation: the adjacent
    layout's pair i is columns (2i, 2i+1), the halves layout's is (i, i + d/2)."""
    x = np.random.default_rng(4).standard_normal((7, 12))
    order = np.concatenate([np.arange(0, 12, 2), np.arange(1, 12, 2)])  # adjacent -> halves
    np.testing.assert_allclose(P.rotary_embedding(x[:, order], pairs="halves"),
                               P.rotary_embedding(x)[:, order], atol=1e-12)


def test_rotary_positions_rotate_each_row_at_its_own_position():
    x = np.random.default_rng(5).standard_normal((6, 8))
    for pairs in ("adjacent", "halves"):
        whole = P.rotary_embedding(x, pairs=pairs)
        one = P.rotary_embedding(x[4:5], pairs=pairs, positions=[4])  # a cache's new token
        np.testing.assert_allclose(one, whole[4:5], atol=1e-12)
        np.testing.assert_allclose(P.rotary_embedding(x, pairs=pairs, positions=np.arange(6)), whole)


@pytest.mark.slow  # loads transformers (2 s)
def test_rotary_halves_matches_llama():
    torch = pytest.importorskip("torch")
    llama = pytest.importorskip("transformers.models.llama.modeling_llama")
    s, d, base = 9, 16, 100000.0
    x = np.random.default_rng(6).standard_normal((s, d))
    angles = np.outer(np.arange(s), P.frequencies(d, base))  # (s, d/2)
    emb = torch.from_numpy(np.concatenate([angles, angles], axis=-1))  # (s, d), HF's layout
    q = torch.from_numpy(x)[None, None]  # (1, 1, s, d)
    theirs, _ = llama.apply_rotary_pos_emb(q, q, emb.cos()[None], emb.sin()[None])
    np.testing.assert_allclose(P.rotary_embedding(x, base, pairs="halves"), theirs[0, 0].numpy(),
                               atol=1e-12)


def test_attention_with_zero_bias_is_attention():
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((3, 2, 5, 4))  # (h, s, d_k) each
    ours = P.attention_with_bias(q, k, v, np.zeros((2, 5, 5)), mask=causal_mask(5))
    theirs = scaled_dot_product_attention(q, k, v, mask=causal_mask(5))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_attention_with_alibi_matches_torch_sdpa_with_a_float_mask():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    q, k, v = rng.standard_normal((3, 4, 6, 8))  # (h, s, d_k) each
    bias = P.alibi_bias(6, 4)  # (h, s, s)
    mask = causal_mask(6)
    out, _ = P.attention_with_bias(q, k, v, bias, mask)
    float_mask = torch.from_numpy(np.where(mask, bias, -np.inf))  # torch adds a float mask
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), attn_mask=float_mask)
    np.testing.assert_allclose(out, theirs.numpy(), atol=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda: P.alibi_slopes(0), "h must be"),
    (lambda: P.alibi_bias(0, 4), "s must be"),
    (lambda: P.relative_position_bucket(np.array([1.5])), "whole numbers"),
    (lambda: P.relative_position_bucket(np.array([True])), "whole numbers"),
    (lambda: P.relative_position_bucket(np.array([1]), bidirectional=1), "True or False"),
    (lambda: P.relative_position_bucket(np.array([1]), num_buckets=7), "even"),
    (lambda: P.relative_position_bucket(np.array([1]), num_buckets=2), "no bucket"),
    (lambda: P.relative_position_bucket(np.array([1]), max_distance=8), "must exceed"),
    (lambda: P.t5_relative_bias(4, np.zeros(32)), "at least 2 axes"),
    (lambda: P.rotary_embedding(np.zeros((3, 5))), "even number of columns"),
    (lambda: P.rotary_embedding(np.zeros(4)), "at least 2 axes"),
    (lambda: P.rotary_embedding(np.zeros((3, 4)), pairs="interleaved"), "adjacent"),
    (lambda: P.rotary_embedding(np.zeros((3, 4)), positions=[0, 1]), "positions must be 3"),
    (lambda: P.rotary_embedding(np.zeros((3, 4)), positions=[0, -1, 2]), "whole numbers >= 0"),
    (lambda: P.attention_with_bias(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 2)),
                                   np.zeros((4, 4))), "does not broadcast"),
    (lambda: P.attention_with_bias(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((2, 2)),
                                   np.zeros((3, 3))), "v has 2 rows"),
])
def test_positions_in_attention_refuse_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
