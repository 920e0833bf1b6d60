"""Stacks of blocks (chapter 7): encoder_stack, stack_trace, stream_norms, jacobian_gain.

Expected values come from the single blocks (EncoderBlock.trace and __call__) and, for the
Jacobian, from torch autograd on torch layers whose weights the blocks copy.
"""

import math

import numpy as np
import pytest
import torch
import torch.nn as nn

from attention_book import attention as A
from attention_book import block as B

# tiny tensors: torch on one thread (conftest.one_torch_thread); its worker threads made
# these tests 10-100x slower whenever the other core was busy
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def rand(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


def test_encoder_stack_seeds_prefixes_and_ln_placement():
    stack = B.encoder_stack(4, 8, 2, seed=3)
    assert len(stack) == 4 and all(isinstance(b, B.EncoderBlock) for b in stack)
    first = B.EncoderBlock.from_seed(8, 2, seed=3000)
    np.testing.assert_array_equal(stack[0].W_1, first.W_1)
    np.testing.assert_array_equal(stack[0].attention.W_q, first.attention.W_q)
    assert not np.array_equal(stack[0].W_1, stack[1].W_1)  # every layer its own weights
    deeper = B.encoder_stack(6, 8, 2, seed=3)
    for a, b in zip(stack, deeper):  # a shallower stack is the start of a deeper one
        np.testing.assert_array_equal(a.W_2, b.W_2)
    pre = B.encoder_stack(4, 8, 2, seed=3, norm_first=True)
    assert all(b.norm_first for b in pre) and not any(b.norm_first for b in stack)
    for a, b in zip(stack, pre):  # the same weights: only the LayerNorms move
        np.testing.assert_array_equal(a.attention.W_o, b.attention.W_o)
        np.testing.assert_array_equal(a.W_1, b.W_1)
    assert B.encoder_stack(1, 8, 2)[0].n_parameters == B.encoder_block_parameters(8)
    assert B.encoder_stack(2, 12, 3, d_ff=20, activation="gelu")[1].d_ff == 20


def test_encoder_stack_errors():
    with pytest.raises(ValueError, match="depth must be at least 1, got 0"):
        B.encoder_stack(0, 8, 2)
    with pytest.raises(ValueError, match="depth must be a whole number"):
        B.encoder_stack(2.5, 8, 2)
    with pytest.raises(ValueError, match=r"seed must be a whole number in 0..999999, got -1"):
        B.encoder_stack(2, 8, 2, seed=-1)
    with pytest.raises(ValueError, match="h=3 does not divide d=8"):
        B.encoder_stack(2, 8, 3)
    with pytest.raises(ValueError, match="norm_first must be True or False"):
        B.encoder_stack(2, 8, 2, norm_first="pre")


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("residual", [True, False])
def test_stack_trace_is_the_blocks_one_after_another(norm_first, residual):
    blocks = B.encoder_stack(3, 8, 2, seed=1, norm_first=norm_first)
    x = rand(2, 5, 8)
    mask = A.causal_mask(5)
    stream, weights = B.stack_trace(blocks, x, mask=mask, residual=residual)
    assert [n for n, _ in stream] == ["x", "layer 1 attention", "layer 1 FFN",
                                      "layer 2 attention", "layer 2 FFN",
                                      "layer 3 attention", "layer 3 FFN"]
    assert all(a.shape == x.shape for _, a in stream)  # the shapes never change
    assert len(weights) == 3 and all(w.shape == (2, 2, 5, 5) for w in weights)
    y = x
    for i, block in enumerate(blocks):
        t = dict(block.trace(y, mask=mask, residual=residual))
        if norm_first:
            mid = t["x + attention"] if residual else t["attention"]
        else:
            mid = t["h1 = LN1(x + attention)" if residual else "h1 = LN1(attention)"]
        np.testing.assert_array_equal(stream[2 * i + 1][1], mid)
        y, w = block.forward(y, mask=mask, residual=residual)
        np.testing.assert_array_equal(stream[2 * i + 2][1], y)
        np.testing.assert_array_equal(weights[i], w)
    padded, _ = B.stack_trace(blocks, x, padding=np.array([[True] * 5, [True] * 3 + [False] * 2]))
    np.testing.assert_allclose(padded[-1][1][1, :3],
                               B.stack_trace(blocks, x[1, :3])[0][-1][1], atol=1e-12)


def test_stream_norms():
    x = rand(5, 8)
    stream, _ = B.stack_trace(B.encoder_stack(4, 8, 2), x)  # post-LN
    norms = B.stream_norms(stream)
    assert norms.shape == (9,)
    assert norms[0] == pytest.approx(np.linalg.norm(x, axis=1).mean())
    np.testing.assert_allclose(norms[1:], math.sqrt(8), atol=1e-4)  # LN: gamma 1, beta 0
    pre, _ = B.stack_trace(B.encoder_stack(4, 8, 2, norm_first=True), x)
    assert B.stream_norms(pre)[-1] > B.stream_norms(pre)[0]
    assert B.stream_norms([("a", np.ones((2, 3, 4)))])[0] == pytest.approx(2.0)
    with pytest.raises(ValueError, match=r"empty has no tokens \(shape \(0, 8\)\)"):
        B.stream_norms([("empty", np.zeros((0, 8)))])


@pytest.mark.parametrize("norm_first", [False, True])
def test_jacobian_gain_matches_torch_autograd(norm_first):
    torch.manual_seed(0)
    layers = [nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                         norm_first=norm_first).double().eval()
              for _ in range(3)]
    with torch.no_grad():  # random biases and norms too, not torch's zeros and ones
        for layer in layers:
            for name, p in layer.named_parameters():
                if p.ndim == 1:
                    p.normal_(1.0 if "norm" in name and name.endswith("weight") else 0.0, 0.3)
    blocks = [B.EncoderBlock.from_torch(layer) for layer in layers]
    x = rand(4, 8, seed=2)
    mask = A.causal_mask(4)
    ours = B.jacobian_gain(blocks, x, mask=mask)

    def up_to(k):
        def f(t):
            for layer in layers[:k]:
                t = layer(t, src_mask=torch.from_numpy(~mask))  # torch: True = blocked
            return t
        return f

    want = [1.0]
    for k in range(1, 4):
        J = torch.autograd.functional.jacobian(up_to(k), torch.from_numpy(x))  # (s, d, s, d)
        want.append(float(J.norm()) / math.sqrt(x.size))
    np.testing.assert_allclose(ours, want, rtol=1e-6)
    assert ours[0] == pytest.approx(1.0, abs=1e-9)


def test_jacobian_gain_of_the_identity_path():
    """Pre-LN blocks whose sub-layers write nothing (W^O = 0, W_2 = 0, no biases): with
    residuals each block is the identity, gain 1; without, the output is constant, gain 0."""
    from attention_book.multihead import MultiHeadAttention

    rng = np.random.default_rng(6)
    silent = []
    for _ in range(3):
        w = [rng.normal(size=(8, 8)) for _ in range(3)]
        mha = MultiHeadAttention(*w, np.zeros((8, 8)), 2)
        silent.append(B.EncoderBlock(mha, rng.normal(size=(8, 32)), None, np.zeros((32, 8)),
                                     None, norm_first=True))
    x = rand(3, 8, seed=5)
    np.testing.assert_allclose(B.jacobian_gain(silent, x), 1.0, atol=1e-9)
    np.testing.assert_allclose(B.jacobian_gain(silent, x, residual=False)[1:], 0.0, atol=1e-9)
    blocks = B.encoder_stack(2, 8, 2, seed=4)
    g_on, g_off = B.jacobian_gain(blocks, x), B.jacobian_gain(blocks, x, residual=False)
    assert g_on.shape == g_off.shape == (3,) and not np.allclose(g_on, g_off)
    with pytest.raises(ValueError, match=r"x must be one sentence \(s, d\), got shape \(2, 3, 8\)"):
        B.jacobian_gain(blocks, rand(2, 3, 8))
    with pytest.raises(ValueError, match="eps must be a small positive number"):
        B.jacobian_gain(blocks, x, eps=0.0)


def test_stack_errors():
    x = rand(5, 8)
    with pytest.raises(ValueError, match="blocks must be a non-empty list of EncoderBlock"):
        B.stack_trace([], x)
    with pytest.raises(ValueError, match="blocks must be a non-empty list of EncoderBlock"):
        B.stack_trace([B.DecoderBlock.from_seed(8, 2)], x)
    with pytest.raises(ValueError, match="blocks must be a non-empty list of EncoderBlock"):
        B.stack_trace(B.EncoderBlock.from_seed(8, 2), x)
    with pytest.raises(ValueError, match=r"the same d, got \[8, 12\]"):
        B.stack_trace([B.EncoderBlock.from_seed(8, 2), B.EncoderBlock.from_seed(12, 2)], x)
    with pytest.raises(ValueError, match=r"x has shape \(5, 6\) but the block has d=8"):
        B.stack_trace(B.encoder_stack(2, 8, 2), rand(5, 6))
    with pytest.raises(ValueError, match="residual must be True or False"):
        B.stack_trace(B.encoder_stack(2, 8, 2), x, residual="yes")
