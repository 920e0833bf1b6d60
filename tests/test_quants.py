"""GGUF block dequantisation (chapter 10): the book's numpy decoder against the gguf
package's own ``gguf.quants.dequantize``, bit for bit, on numbers the package quantised."""

import gguf
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_book import quants as Q

TYPES = ["F32", "F16", "Q4_0", "Q4_1", "Q8_0"]


def quantised(kind, shape, seed=0, scale=1.0):
    a = (scale * np.random.default_rng(seed).standard_normal(shape)).astype(np.float32)
    return a, gguf.quants.quantize(a, gguf.GGMLQuantizationType[kind])


@pytest.mark.parametrize("kind", TYPES)
@pytest.mark.parametrize("shape", [(32,), (3, 64), (2, 4, 96)])
def test_dequantize_equals_gguf_bit_for_bit(kind, shape):
    a, data = quantised(kind, shape)
    ours = Q.dequantize(data, kind, shape)
    theirs = gguf.quants.dequantize(data, gguf.GGMLQuantizationType[kind]).reshape(shape)
    assert ours.dtype == np.float32 and ours.shape == shape
    assert np.array_equal(ours.view(np.uint32), theirs.view(np.uint32))
    # and it is the weights back, to the type's precision (half a step of 16 levels for Q4)
    step = {"F32": 0, "F16": 1e-3, "Q8_0": 0.02, "Q4_1": 0.25, "Q4_0": 0.5}[kind]
    assert np.abs(ours - a).max() <= step * np.abs(a).max() + 1e-7


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(TYPES[2:]), st.integers(1, 4), st.integers(0, 2**32 - 1),
       st.sampled_from([1e-3, 1.0, 300.0]))
def test_dequantize_matches_gguf_on_any_blocks(kind, n_blocks, seed, scale):
    _, data = quantised(kind, (n_blocks * 32,), seed, scale)
    theirs = gguf.quants.dequantize(data, gguf.GGMLQuantizationType[kind])
    np.testing.assert_array_equal(Q.dequantize(data, kind, (n_blocks * 32,)), theirs)


def test_the_block_formulas_by_hand():
    # Q8_0: scale 0.5 (float16), then 32 signed bytes
    block = np.concatenate([np.array([0.5], "<f2").view(np.uint8),
                            np.arange(-16, 16, dtype=np.int8).view(np.uint8)])
    np.testing.assert_array_equal(Q.dequantize(block, "Q8_0", (32,)), 0.5 * np.arange(-16, 16))
    # Q4_1: scale 2, minimum -1; byte i holds number i (low nibble) and i + 16 (high)
    q = np.arange(32) % 16
    packed = (q[:16] | (q[16:] << 4)).astype(np.uint8)
    block = np.concatenate([np.array([2.0, -1.0], "<f2").view(np.uint8), packed])
    np.testing.assert_array_equal(Q.dequantize(block, "Q4_1", (32,)), 2.0 * q - 1)
    # Q4_0: the same nibbles, centred on 8
    block = np.concatenate([np.array([2.0], "<f2").view(np.uint8), packed])
    np.testing.assert_array_equal(Q.dequantize(block, 2, (32,)), 2.0 * (q - 8))


def test_sizes():
    assert [Q.bits_per_weight(k) for k in TYPES] == [32, 16, 4.5, 5, 8.5]
    assert Q.tensor_bytes("Q4_1", (576, 576)) == 576 * 18 * 20
    assert Q.quant_type(8).name == "Q8_0" and Q.quant_type("F16").type_id == 1


def test_errors():
    with pytest.raises(ValueError, match=r"unsupported tensor type 'Q4_K'.*F32, F16, Q4_0, Q4_1, Q8_0"):
        Q.dequantize(np.zeros(144, np.uint8), "Q4_K", (256,))
    with pytest.raises(ValueError, match=r"unsupported tensor type 12"):
        Q.quant_type(12)
    with pytest.raises(ValueError, match=r"a Q4_1 tensor of shape \(2, 32\) takes 40 bytes, got 20"):
        Q.dequantize(np.zeros(20, np.uint8), "Q4_1", (2, 32))
    with pytest.raises(ValueError, match=r"blocks of 32 numbers, but the shape \(2, 48\)"):
        Q.dequantize(np.zeros(60, np.uint8), "Q8_0", (2, 48))
    with pytest.raises(ValueError, match=r"one or more positive sizes"):
        Q.tensor_bytes("F32", ())
