"""The transformer block: LayerNorm, GELU, feed-forward, and encoder/decoder blocks
against PyTorch's nn.TransformerEncoderLayer / nn.TransformerDecoderLayer.

Every comparison copies torch's weights into the book's block (``from_torch``) and runs
both in float64 (``layer.double().eval()``); tolerance 1e-10 (observed ~2e-15).

The fast path. In eval mode under ``torch.no_grad()``, a batch_first encoder layer with
an even number of heads runs ``torch._transformer_encoder_layer_fwd`` instead of its
Python code. Measured in torch 2.13: that fast path agrees with the slow path to ~1e-15,
and for the layer alone it does NOT zero the padded positions (every row can be
compared). Zeros at padded positions come from ``nn.TransformerEncoder``, which packs
the batch into a nested tensor: there only the real rows can be compared. Two more
fast-path facts pinned below: a sequence that is all padding gives NaN on the fast path
but finite numbers on the slow path, and the fast path computes the exact GELU even for
``nn.GELU(approximate="tanh")`` (1e-4 away from the slow path). The ``fastpath``
fixture runs comparisons both ways and restores torch's setting afterwards.
"""

import math

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_book import attention as A
from attention_book import block as B
from attention_book import masking as K
from attention_book import multihead as M

TOL = dict(atol=1e-10, rtol=0)
SETTINGS = settings(deadline=None, max_examples=25, derandomize=True, database=None)


# one torch thread for the module (tiny tensors); `fastpath` from conftest.py
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def randomise(layer, seed=0):
    """Random weights everywhere (torch starts biases at 0 and LayerNorm at 1, 0)."""
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, p in layer.named_parameters():
            if "norm" in name and name.endswith("weight"):
                p.normal_(1.0, 0.3)
            elif p.ndim == 1:
                p.normal_(0.0, 0.3)
            else:
                p.normal_(0.0, p.shape[-1] ** -0.5)
    return layer.double().eval()


def encoder(d=8, h=2, d_ff=16, seed=0, **kw):
    return randomise(nn.TransformerEncoderLayer(d, h, d_ff, **kw), seed)


def decoder(d=8, h=2, d_ff=16, seed=0, **kw):
    return randomise(nn.TransformerDecoderLayer(d, h, d_ff, **kw), seed)


def to_t(x, batch_first=True):
    """(b, s, d) numpy -> torch tensor in the layer's layout."""
    t = torch.from_numpy(np.ascontiguousarray(x))
    return t if batch_first or t.ndim == 2 else t.transpose(0, 1)


def from_t(t, batch_first=True):
    t = t if batch_first or t.ndim == 2 else t.transpose(0, 1)
    return t.detach().numpy()


def rand(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


ACTIVATIONS = {"relu": "relu", "gelu": "gelu", "F.gelu": F.gelu, "nn.ReLU": nn.ReLU(),
               "nn.GELU": nn.GELU()}


# ---------------------------------------------------------------- the pieces


@pytest.mark.parametrize("shape", [(8,), (5, 8), (2, 5, 8), (1, 1, 3)])
@pytest.mark.parametrize("eps", [1e-5, 1e-12, 0.5])
def test_layer_norm_matches_torch(shape, eps):
    x, gamma, beta = rand(*shape, seed=1) * 3 + 2, rand(shape[-1], seed=2), rand(shape[-1], seed=3)
    t = F.layer_norm(torch.from_numpy(x), shape[-1:], torch.from_numpy(gamma),
                     torch.from_numpy(beta), eps)
    np.testing.assert_allclose(B.layer_norm(x, gamma, beta, eps), t.numpy(), **TOL)
    t_plain = F.layer_norm(torch.from_numpy(x), shape[-1:], eps=eps)
    np.testing.assert_allclose(B.layer_norm(x, eps=eps), t_plain.numpy(), **TOL)


def test_layer_norm_details():
    x = np.array([[1.0, 2.0, 3.0, 6.0], [5.0, 5.0, 5.0, 5.0]])
    y = B.layer_norm(x, np.ones(4), np.zeros(4))
    manual = (x[0] - 3.0) / math.sqrt(x[0].var() + 1e-5)  # biased variance: divide by d
    np.testing.assert_allclose(y[0], manual, atol=1e-14)
    np.testing.assert_array_equal(y[1], 0.0)  # a constant row becomes beta
    np.testing.assert_array_equal(B.layer_norm(x[1:], None, np.arange(4.0))[0], np.arange(4.0))
    assert B.layer_norm(x.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_matches_torch(approximate):
    x = np.concatenate([np.linspace(-12, 12, 2001), rand(1000) * 5,
                        [0.0, -0.0, 1e-300, -1e-300, 40.0, -40.0, 1e200, -1e200]])
    t = F.gelu(torch.from_numpy(x), approximate=approximate).numpy()
    np.testing.assert_allclose(B.gelu(x, approximate), t, atol=1e-12, rtol=1e-12)
    x32 = x[:3000].astype(np.float32)
    assert B.gelu(x32, approximate).dtype == np.float32
    np.testing.assert_allclose(B.gelu(x32, approximate),
                               F.gelu(torch.from_numpy(x32), approximate=approximate).numpy(),
                               atol=1e-6, rtol=1e-6)
    assert B.gelu(2.0).shape == ()


def test_gelu_shape_and_relu():
    assert B.gelu(0.0) == 0.0 and abs(B.gelu(1.0) - 0.8413447460685429) < 1e-15
    assert B.gelu(-1.0) < 0  # lets small negatives through, unlike relu
    x = rand(3, 4)
    np.testing.assert_array_equal(B.relu(x), F.relu(torch.from_numpy(x)).numpy())
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh', got 'erf'"):
        B.gelu(x, approximate="erf")
    with pytest.raises(ValueError, match="x contains NaN"):
        B.gelu([np.nan])
    with pytest.raises(ValueError, match="x contains infinity"):
        B.relu([np.inf])


@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh"])
def test_feed_forward_matches_torch(activation):
    d, d_ff = 6, 10
    lin1, lin2 = randomise(nn.Linear(d, d_ff), 1), randomise(nn.Linear(d_ff, d), 2)
    act = {"relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh")}
    x = rand(2, 5, d)
    with torch.no_grad():
        t = lin2(act[activation](lin1(torch.from_numpy(x)))).numpy()
    w = lambda p: p.detach().numpy()
    ours = B.feed_forward(x, w(lin1.weight).T, w(lin1.bias), w(lin2.weight).T, w(lin2.bias),
                          activation)
    assert ours.shape == (2, 5, d)
    np.testing.assert_allclose(ours, t, **TOL)
    # each row on its own: a row's output does not depend on the other rows
    np.testing.assert_allclose(B.feed_forward(x[0, 2], w(lin1.weight).T, w(lin1.bias),
                                              w(lin2.weight).T, w(lin2.bias), activation),
                               ours[0, 2], atol=1e-13)


def test_feed_forward_errors():
    W_1, W_2 = np.ones((4, 8)), np.ones((8, 4))
    with pytest.raises(ValueError, match=r"x has shape \(3, 5\) but W_1 has shape \(4, 8\)"):
        B.feed_forward(np.ones((3, 5)), W_1, None, W_2, None)
    with pytest.raises(ValueError, match=r"W_2 must have shape \(d_ff, d\) = \(8, 4\).*got shape \(4, 8\)"):
        B.feed_forward(np.ones((3, 4)), W_1, None, W_1, None)
    with pytest.raises(ValueError, match=r"b_1 must have shape \(d_ff,\) = \(8,\), got shape \(4,\)"):
        B.feed_forward(np.ones((3, 4)), W_1, np.ones(4), W_2, None)
    with pytest.raises(ValueError, match=r"b_2 must have shape \(d,\) = \(4,\)"):
        B.feed_forward(np.ones((3, 4)), W_1, None, W_2, np.ones(8))
    with pytest.raises(ValueError, match=r"activation must be one of .*got 'tanh'"):
        B.feed_forward(np.ones((3, 4)), W_1, None, W_2, None, activation="tanh")
    with pytest.raises(ValueError, match="W_1 must have at least 2 axes"):
        B.feed_forward(np.ones((3, 4)), np.ones(4), None, W_2, None)


def test_layer_norm_errors():
    with pytest.raises(ValueError, match=r"gamma must have shape \(d,\) = \(4,\), got shape \(3,\)"):
        B.layer_norm(np.ones((2, 4)), np.ones(3), np.zeros(4))
    with pytest.raises(ValueError, match=r"beta must have shape \(d,\) = \(4,\)"):
        B.layer_norm(np.ones((2, 4)), np.ones(4), np.zeros((4, 1)))
    with pytest.raises(ValueError, match="eps must be a small positive number"):
        B.layer_norm(np.ones((2, 4)), eps=0)
    with pytest.raises(ValueError, match="eps must be a small positive number"):
        B.layer_norm(np.ones((2, 4)), eps=float("nan"))
    with pytest.raises(ValueError, match="x contains NaN"):
        B.layer_norm(np.full((2, 4), np.nan))


# ---------------------------------------------------------------- encoder vs torch


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("act", list(ACTIVATIONS))
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("fast", [True, False])
def test_encoder_matches_torch(norm_first, act, batch_first, fast, fastpath):
    fastpath(fast)
    layer = encoder(activation=ACTIVATIONS[act], batch_first=batch_first, norm_first=norm_first)
    block = B.EncoderBlock.from_torch(layer)
    assert block.activation == ("relu" if "relu" in act.lower() else "gelu")
    assert block.norm_first == norm_first and (block.d, block.h, block.d_ff) == (8, 2, 16)
    x = rand(3, 5, 8, seed=1)
    pad = K.padding_mask([5, 3, 1], 5)
    with torch.no_grad():
        plain = from_t(layer(to_t(x, batch_first)), batch_first)
        padded = from_t(layer(to_t(x, batch_first),
                              src_key_padding_mask=torch.from_numpy(K.to_torch_mha_mask(pad))),
                        batch_first)
    np.testing.assert_allclose(block(x), plain, **TOL)
    # the layer alone (no nested tensors) computes padded rows too: compare all of them
    np.testing.assert_allclose(block(x, padding=pad), padded, **TOL)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("fast", [True, False])
def test_encoder_causal_matches_torch(norm_first, batch_first, fast, fastpath):
    fastpath(fast)
    layer = encoder(d=12, h=4, d_ff=20, activation="gelu", batch_first=batch_first,
                    norm_first=norm_first, seed=3)
    block = B.EncoderBlock.from_torch(layer)
    s = 6
    x = rand(2, s, 12, seed=4)
    pad = K.padding_mask([6, 4], s)
    causal_f = nn.Transformer.generate_square_subsequent_mask(s, dtype=torch.float64)
    with torch.no_grad():
        # float masks: the causal 0/-inf mask and the padding as additive 0/-inf too
        t1 = layer(to_t(x, batch_first), src_mask=causal_f, is_causal=True,
                   src_key_padding_mask=torch.from_numpy(K.additive_mask(pad)))
        # bool masks in torch's polarity (True = ignore)
        t2 = layer(to_t(x, batch_first),
                   src_mask=torch.from_numpy(K.to_torch_mha_mask(A.causal_mask(s))),
                   src_key_padding_mask=torch.from_numpy(K.to_torch_mha_mask(pad)))
    ours = block(x, padding=pad, mask=A.causal_mask(s))
    np.testing.assert_allclose(ours, from_t(t1, batch_first), **TOL)
    np.testing.assert_allclose(ours, from_t(t2, batch_first), **TOL)


def test_encoder_unbatched_odd_heads_no_bias_and_eps():
    layer = encoder(d=9, h=3, d_ff=7, bias=False, layer_norm_eps=1e-12, batch_first=True)
    block = B.EncoderBlock.from_torch(layer)
    assert block.eps == 1e-12 and block.b_1 is None and block.norm1[1] is None
    x = rand(4, 9, seed=5)  # (s, d): no batch axis
    with torch.no_grad():
        t = layer(torch.from_numpy(x)).numpy()
    out, w = block.forward(x)
    assert out.shape == (4, 9) and w.shape == (3, 4, 4)
    np.testing.assert_allclose(out, t, **TOL)
    assert block.n_parameters == sum(p.numel() for p in layer.parameters())
    assert block.n_parameters == B.encoder_block_parameters(9, 7, bias=False)


def test_more_leading_axes():
    enc, dec = B.EncoderBlock.from_seed(8, 2, seed=1), B.DecoderBlock.from_seed(8, 2, seed=1)
    x, mem = rand(2, 3, 4, 8), rand(2, 3, 5, 8, seed=1)
    out, w = enc.forward(x, mask=A.causal_mask(4))
    assert out.shape == x.shape and w.shape == (2, 3, 2, 4, 4)
    np.testing.assert_allclose(out[1, 2], enc(x[1, 2], mask=A.causal_mask(4)), atol=1e-14)
    out, w_self, w_cross = dec.forward(x, mem)
    assert w_cross.shape == (2, 3, 2, 4, 5)
    np.testing.assert_allclose(out[0, 1], dec(x[0, 1], mem[0, 1]), atol=1e-14)


def test_encoder_weights_are_the_self_attention_weights():
    layer = encoder(batch_first=True, seed=6)
    block = B.EncoderBlock.from_torch(layer)
    x = rand(2, 5, 8, seed=7)
    _, w = block.forward(x)
    with torch.no_grad():  # post-LN: the self-attention sees x itself
        _, t_w = layer.self_attn(*(torch.from_numpy(x),) * 3, average_attn_weights=False)
    assert w.shape == (2, 2, 5, 5)
    np.testing.assert_allclose(w, t_w.numpy(), **TOL)


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_nn_transformer_encoder_zeros_padded_rows(fastpath):
    """nn.TransformerEncoder's nested-tensor fast path returns 0 at padded positions."""
    fastpath(True)
    layer = encoder(batch_first=True, seed=8)
    stack = nn.TransformerEncoder(layer, 1, enable_nested_tensor=True).eval()
    block = B.EncoderBlock.from_torch(stack.layers[0])
    x = rand(2, 5, 8, seed=9)
    pad = K.padding_mask([5, 2], 5)
    with torch.no_grad():
        t = stack(torch.from_numpy(x), src_key_padding_mask=torch.from_numpy(~pad)).numpy()
    ours = block(x, padding=pad)
    assert (t[1, 2:] == 0).all() and (ours[1, 2:] != 0).all()
    np.testing.assert_allclose(ours[pad], t[pad], **TOL)  # compare only the real rows


def test_torch_fast_path_facts(fastpath):
    """All-padding sequence: NaN on the fast path, finite on the slow path (and ours).
    nn.GELU(approximate='tanh'): the fast path uses the exact GELU anyway."""
    layer = encoder(batch_first=True, seed=10)
    x = torch.from_numpy(rand(2, 3, 8, seed=11))
    pad = K.padding_mask([3, 0], 3)
    kpm = torch.from_numpy(K.to_torch_mha_mask(pad))
    with torch.no_grad():
        fastpath(True)
        fast = layer(x, src_key_padding_mask=kpm)
        fastpath(False)
        slow = layer(x, src_key_padding_mask=kpm)
    assert fast[1].isnan().all() and torch.isfinite(slow).all()
    ours = B.EncoderBlock.from_torch(layer)(x.numpy(), padding=pad)
    np.testing.assert_allclose(ours, slow.numpy(), **TOL)  # zero attention, as the slow path

    tanh_layer = encoder(batch_first=True, activation=nn.GELU(approximate="tanh"), seed=12)
    block = B.EncoderBlock.from_torch(tanh_layer)
    assert block.activation == "gelu_tanh"
    x = torch.from_numpy(rand(2, 5, 8, seed=13) * 3)
    with torch.no_grad():
        fastpath(True)
        fast = tanh_layer(x).numpy()
        fastpath(False)
        slow = tanh_layer(x).numpy()
    np.testing.assert_allclose(block(x.numpy()), slow, **TOL)
    assert np.abs(fast - slow).max() > 1e-6
    exact = B.EncoderBlock(block.attention, block.W_1, block.b_1, block.W_2, block.b_2,
                           block.norm1, block.norm2, activation="gelu")
    np.testing.assert_allclose(exact(x.numpy()), fast, **TOL)


def test_encoder_float32_layer():
    layer = encoder(batch_first=True).float()
    block = B.EncoderBlock.from_torch(layer)
    assert block.W_1.dtype == np.float32
    x = rand(2, 5, 8).astype(np.float32)
    with torch.no_grad():
        t = layer(torch.from_numpy(x)).numpy()
    out = block(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, t, atol=1e-5, rtol=1e-5)


# ---------------------------------------------------------------- decoder vs torch


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("act", ["relu", "gelu", "nn.GELU"])
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("fast", [True, False])
def test_decoder_matches_torch(norm_first, act, batch_first, fast, fastpath):
    fastpath(fast)
    layer = decoder(activation=ACTIVATIONS[act], batch_first=batch_first, norm_first=norm_first)
    block = B.DecoderBlock.from_torch(layer)
    s, s_mem = 5, 6
    x, mem = rand(3, s, 8, seed=1), rand(3, s_mem, 8, seed=2)
    pad, mem_pad = K.padding_mask([5, 3, 2], s), K.padding_mask([6, 6, 1], s_mem)
    causal_f = nn.Transformer.generate_square_subsequent_mask(s, dtype=torch.float64)
    with torch.no_grad():
        t_plain = layer(to_t(x, batch_first), to_t(mem, batch_first), tgt_mask=causal_f,
                        tgt_is_causal=True)
        t_pad = layer(to_t(x, batch_first), to_t(mem, batch_first), tgt_mask=causal_f,
                      tgt_is_causal=True,
                      tgt_key_padding_mask=torch.from_numpy(K.additive_mask(pad)),
                      memory_key_padding_mask=torch.from_numpy(K.additive_mask(mem_pad)))
        t_bool = layer(to_t(x, batch_first), to_t(mem, batch_first),
                       tgt_mask=torch.from_numpy(K.to_torch_mha_mask(A.causal_mask(s))),
                       tgt_key_padding_mask=torch.from_numpy(K.to_torch_mha_mask(pad)),
                       memory_key_padding_mask=torch.from_numpy(K.to_torch_mha_mask(mem_pad)))
    np.testing.assert_allclose(block(x, mem), from_t(t_plain, batch_first), **TOL)
    ours = block(x, mem, memory_padding=mem_pad, padding=pad)
    np.testing.assert_allclose(ours, from_t(t_pad, batch_first), **TOL)
    np.testing.assert_allclose(ours, from_t(t_bool, batch_first), **TOL)


def test_decoder_weights_and_unbatched():
    layer = decoder(batch_first=True, seed=4, norm_first=True)
    block = B.DecoderBlock.from_torch(layer)
    x, mem = rand(4, 8, seed=5), rand(7, 8, seed=6)
    out, w_self, w_cross = block.forward(x, mem)
    assert out.shape == (4, 8) and w_self.shape == (2, 4, 4) and w_cross.shape == (2, 4, 7)
    assert (w_self[:, ~A.causal_mask(4)] == 0).all()  # always causal
    with torch.no_grad():
        t = layer(torch.from_numpy(x), torch.from_numpy(mem),
                  tgt_mask=nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64),
                  tgt_is_causal=True).numpy()
    np.testing.assert_allclose(out, t, **TOL)
    mem_pad = K.padding_mask(5, 7)
    _, _, w_cross = block.forward(x, mem, memory_padding=mem_pad)
    assert (w_cross[..., 5:] == 0).all()
    np.testing.assert_allclose(w_cross.sum(-1), 1.0, atol=1e-12)


# ---------------------------------------------------------------- counting parameters


@pytest.mark.parametrize("d,h,d_ff", [(8, 2, 32), (12, 3, 20), (64, 8, 256), (6, 1, 6)])
@pytest.mark.parametrize("bias", [True, False])
def test_n_parameters_match_torch(d, h, d_ff, bias):
    enc = nn.TransformerEncoderLayer(d, h, d_ff, bias=bias).eval()
    dec = nn.TransformerDecoderLayer(d, h, d_ff, bias=bias).eval()
    n_enc, n_dec = (sum(p.numel() for p in m.parameters()) for m in (enc, dec))
    assert B.EncoderBlock.from_torch(enc).n_parameters == n_enc == B.encoder_block_parameters(d, d_ff, bias)
    assert B.DecoderBlock.from_torch(dec).n_parameters == n_dec == B.decoder_block_parameters(d, d_ff, bias)
    assert B.EncoderBlock.from_seed(d, h, d_ff, bias=bias).n_parameters == n_enc
    assert B.DecoderBlock.from_seed(d, h, d_ff, bias=bias).n_parameters == n_dec


def test_parameter_formulae():
    for d in (1, 8, 512, 768):
        assert B.encoder_block_parameters(d, 4 * d) == 12 * d * d + 13 * d
        assert B.encoder_block_parameters(d) == 12 * d * d + 13 * d  # d_ff defaults to 4 d
        assert B.decoder_block_parameters(d) == 16 * d * d + 19 * d
    assert B.encoder_block_parameters(768) == 7_087_872  # one BERT-base layer
    with pytest.raises(ValueError, match="d must be at least 1"):
        B.encoder_block_parameters(0, 4)
    with pytest.raises(ValueError, match="d_ff must be a whole number"):
        B.decoder_block_parameters(8, 3.5)


# ---------------------------------------------------------------- residuals and the trace


def test_trace_post_ln_order_and_values():
    block = B.EncoderBlock.from_seed(8, 2, 12, seed=1)
    x = rand(2, 5, 8)
    trace = block.trace(x)
    names = [n for n, _ in trace]
    assert names == ["x", "attention", "x + attention", "h1 = LN1(x + attention)",
                     "FFN hidden (d_ff)", "FFN out", "h1 + FFN out", "output"]
    t = dict(trace)
    assert t["FFN hidden (d_ff)"].shape == (2, 5, 12)
    np.testing.assert_array_equal(t["x"], x)
    np.testing.assert_allclose(t["attention"], block.attention(x)[0], atol=1e-14)
    h1 = B.layer_norm(x + t["attention"], *block.norm1)
    np.testing.assert_allclose(t["h1 = LN1(x + attention)"], h1, atol=1e-14)
    ffn = B.feed_forward(h1, block.W_1, block.b_1, block.W_2, block.b_2, block.activation)
    np.testing.assert_allclose(t["FFN out"], ffn, atol=1e-14)
    np.testing.assert_allclose(t["output"], B.layer_norm(h1 + ffn, *block.norm2), atol=1e-14)
    np.testing.assert_array_equal(t["output"], block(x))


def test_trace_pre_ln_residual_stream():
    block = B.EncoderBlock.from_seed(8, 2, seed=2, norm_first=True, activation="gelu")
    x = rand(5, 8)
    t = dict(block.trace(x))
    assert list(t) == ["x", "LN1(x)", "attention", "x + attention", "LN2(x + attention)",
                       "FFN hidden (d_ff)", "FFN out", "output"]
    np.testing.assert_allclose(t["attention"], block.attention(B.layer_norm(x, *block.norm1))[0],
                               atol=1e-14)
    np.testing.assert_allclose(t["output"], x + t["attention"] + t["FFN out"], atol=1e-14)
    np.testing.assert_allclose(t["LN2(x + attention)"], B.layer_norm(t["x + attention"]), atol=1e-14)


@pytest.mark.parametrize("norm_first", [False, True])
def test_residual_false(norm_first):
    block = B.EncoderBlock.from_seed(8, 2, seed=3, norm_first=norm_first)
    x = rand(2, 4, 8, seed=1)
    ln1, ln2 = (lambda z: B.layer_norm(z, *block.norm1)), (lambda z: B.layer_norm(z, *block.norm2))
    ffn = lambda z: B.feed_forward(z, block.W_1, block.b_1, block.W_2, block.b_2)
    mha = lambda z: block.attention(z)[0]
    want = ffn(ln2(mha(ln1(x)))) if norm_first else ln2(ffn(ln1(mha(x))))
    np.testing.assert_allclose(block(x, residual=False), want, atol=1e-13)
    names = [n for n, _ in block.trace(x, residual=False)]
    assert not any("+" in n for n in names) and len(set(names)) == len(names)
    assert names[-3:] == ["FFN hidden (d_ff)", "FFN out", "output"]
    assert not np.allclose(block(x, residual=False), block(x))
    with pytest.raises(ValueError, match="residual must be True or False"):
        block(x, residual=1)


def test_decoder_trace_and_residual_false():
    block = B.DecoderBlock.from_seed(8, 2, seed=1)
    x, mem = rand(2, 4, 8), rand(2, 6, 8, seed=1)
    names = [n for n, _ in block.trace(x, mem)]
    assert names == ["x", "self-attention", "x + self-attention", "h1 = LN1(x + self-attention)",
                     "cross-attention", "h1 + cross-attention", "h2 = LN2(h1 + cross-attention)",
                     "FFN hidden (d_ff)", "FFN out", "h2 + FFN out", "output"]
    np.testing.assert_array_equal(block.trace(x, mem)[-1][1], block(x, mem))
    ln = [lambda z, n=n: B.layer_norm(z, *n) for n in (block.norm1, block.norm2, block.norm3)]
    h1 = ln[0](block.self_attention(x, mask=A.causal_mask(4))[0])
    h2 = ln[1](block.cross_attention(h1, mem)[0])
    want = ln[2](B.feed_forward(h2, block.W_1, block.b_1, block.W_2, block.b_2))
    np.testing.assert_allclose(block(x, mem, residual=False), want, atol=1e-13)


def test_residual_stream_norm_grows_in_pre_ln():
    """What the shape tracer measures: pre-LN adds to the stream, post-LN renormalises."""
    x = rand(6, 16)
    pre = dict(B.EncoderBlock.from_seed(16, 4, seed=5, norm_first=True).trace(x))
    post = dict(B.EncoderBlock.from_seed(16, 4, seed=5).trace(x))
    rms = lambda a: float(np.sqrt((a**2).mean()))
    np.testing.assert_allclose(rms(post["output"]), 1.0, atol=1e-4)  # LN with gamma=1, beta=0
    assert rms(pre["output"]) != pytest.approx(1.0, abs=1e-3)


# ---------------------------------------------------------------- properties


@SETTINGS
@given(rows=st.integers(1, 4), d=st.integers(2, 12), scale=st.sampled_from([1e-3, 1.0, 1e3]),
       seed=st.integers(0, 10_000))
def test_property_layer_norm_mean_0_variance_1(rows, d, scale, seed):
    x = rand(rows, d, seed=seed) * scale + 7.0
    eps = 1e-5
    y = B.layer_norm(x, np.ones(d), np.zeros(d), eps)
    np.testing.assert_allclose(y.mean(-1), 0.0, atol=1e-9)
    v = x.var(-1)
    # variance var/(var + eps): 1 up to eps; a nearly constant row stays below 1
    np.testing.assert_allclose(y.var(-1), v / (v + eps), rtol=1e-9, atol=1e-12)
    assert (y.var(-1) <= 1.0 + 1e-12).all()
    # a constant row has variance 0: eps keeps it finite and it becomes beta = 0 (to rounding)
    np.testing.assert_allclose(B.layer_norm(np.full((rows, d), scale), eps=eps), 0.0, atol=1e-12)


def _enc(seed, d_k, h, norm_first, activation):
    return B.EncoderBlock.from_seed(d_k * h, h, 3 * d_k * h, seed=seed, norm_first=norm_first,
                                    activation=activation)


block_args = dict(seed=st.integers(0, 1000), d_k=st.integers(1, 3), h=st.integers(1, 3),
                  norm_first=st.booleans(), activation=st.sampled_from(["relu", "gelu"]))


@SETTINGS
@given(s=st.integers(2, 6), cut=st.integers(1, 5), **block_args)
def test_property_causal_rows_ignore_the_future(s, cut, seed, d_k, h, norm_first, activation):
    cut = min(cut, s - 1)
    enc = _enc(seed, d_k, h, norm_first, activation)
    dec = B.DecoderBlock.from_seed(d_k * h, h, seed=seed, norm_first=norm_first,
                                   activation=activation)
    x, mem = rand(2, s, d_k * h, seed=seed), rand(2, 3, d_k * h, seed=seed + 1)
    y = x.copy()
    y[:, cut:] = rand(2, s - cut, d_k * h, seed=seed + 2) * 5  # change every token from cut on
    causal = A.causal_mask(s)
    np.testing.assert_allclose(enc(x, mask=causal)[:, :cut], enc(y, mask=causal)[:, :cut],
                               atol=1e-12, rtol=0)
    np.testing.assert_allclose(dec(x, mem)[:, :cut], dec(y, mem)[:, :cut], atol=1e-12, rtol=0)
    if d_k * h > 1:  # (LayerNorm of a single number is always 0)
        assert not np.allclose(enc(x)[:, :cut], enc(y)[:, :cut])  # without the mask they change


@SETTINGS
@given(s=st.integers(1, 5), n_pad=st.integers(1, 4), **block_args)
def test_property_padding_never_changes_real_rows(s, n_pad, seed, d_k, h, norm_first, activation):
    d = d_k * h
    enc = _enc(seed, d_k, h, norm_first, activation)
    dec = B.DecoderBlock.from_seed(d, h, seed=seed, norm_first=norm_first, activation=activation)
    x, mem = rand(s, d, seed=seed), rand(s + 1, d, seed=seed + 1)
    junk = rand(n_pad, d, seed=seed + 2) * 10  # arbitrary values at padded positions
    x_pad = np.concatenate([x, junk])  # (s + n_pad, d)
    mem_pad = np.concatenate([mem, junk])
    pad, mpad = K.padding_mask(s, s + n_pad), K.padding_mask(s + 1, s + 1 + n_pad)
    np.testing.assert_allclose(enc(x_pad, padding=pad)[:s], enc(x), atol=1e-12, rtol=0)
    causal = A.causal_mask(s + n_pad)
    np.testing.assert_allclose(enc(x_pad, padding=pad, mask=causal)[:s],
                               enc(x, mask=A.causal_mask(s)), atol=1e-12, rtol=0)
    np.testing.assert_allclose(dec(x_pad, mem_pad, memory_padding=mpad, padding=pad)[:s],
                               dec(x, mem), atol=1e-12, rtol=0)


@SETTINGS
@given(perm_seed=st.integers(0, 1000), s=st.integers(1, 6), b=st.integers(1, 2), **block_args)
def test_property_encoder_block_is_permutation_equivariant(perm_seed, s, b, seed, d_k, h,
                                                           norm_first, activation):
    enc = _enc(seed, d_k, h, norm_first, activation)
    x = rand(b, s, d_k * h, seed=seed)
    perm = np.random.default_rng(perm_seed).permutation(s)
    out, w = enc.forward(x)
    out_p, w_p = enc.forward(x[:, perm])
    np.testing.assert_allclose(out_p, out[:, perm], atol=1e-12, rtol=0)  # f(PX) = P f(X)
    np.testing.assert_allclose(w_p, w[..., perm, :][..., perm], atol=1e-12, rtol=0)


# ---------------------------------------------------------------- bad input


def test_encoder_call_errors():
    block = B.EncoderBlock.from_seed(8, 2)
    with pytest.raises(ValueError, match=r"x has shape \(5, 6\) but the block has d=8.*\(b, s, 8\) or \(s, 8\)"):
        block(np.ones((5, 6)))
    with pytest.raises(ValueError, match=r"x has shape \(1, 2, 5, 6\) but the block has d=8"):
        block(np.ones((1, 2, 5, 6)))
    with pytest.raises(ValueError, match="x must have at least 2 axes"):
        block(np.ones(8))
    with pytest.raises(ValueError, match="x contains NaN"):
        block(np.full((2, 5, 8), np.nan))
    with pytest.raises(ValueError, match=r"padding has shape \(2, 4\) but x has shape \(2, 5, 8\).*\(2, 5\)"):
        block(np.ones((2, 5, 8)), padding=np.ones((2, 4), bool))
    with pytest.raises(ValueError, match=r"padding has shape \(4,\).*must have shape \(5,\)"):
        block(np.ones((5, 8)), padding=np.ones(4, bool))
    with pytest.raises(ValueError, match="padding must be boolean with True = a real token, got dtype int64"):
        block(np.ones((2, 5, 8)), padding=np.ones((2, 5), int))
    with pytest.raises(ValueError, match="mask must be boolean"):
        block(np.ones((5, 8)), mask=np.tril(np.ones((5, 5))))
    with pytest.raises(ValueError, match=r"mask has shape \(4, 4\)"):
        block(np.ones((5, 8)), mask=A.causal_mask(4))


def test_encoder_constructor_errors():
    mha = M.MultiHeadAttention.from_seed(8, 2)
    W_1, W_2 = np.ones((8, 16)), np.ones((16, 8))
    with pytest.raises(ValueError, match=r"W_1 must have shape \(d, d_ff\) = \(8, d_ff\), got shape \(6, 16\)"):
        B.EncoderBlock(mha, np.ones((6, 16)), None, W_2, None)
    with pytest.raises(ValueError, match=r"W_2 must have shape \(d_ff, d\) = \(16, 8\)"):
        B.EncoderBlock(mha, W_1, None, np.ones((8, 16)), None)
    with pytest.raises(ValueError, match=r"norm1 gamma must have shape \(d,\) = \(8,\), got shape \(4,\)"):
        B.EncoderBlock(mha, W_1, None, W_2, None, norm1=(np.ones(4), np.zeros(8)))
    with pytest.raises(ValueError, match=r"norm2 beta must have shape \(d,\) = \(8,\)"):
        B.EncoderBlock(mha, W_1, None, W_2, None, norm2=(np.ones(8), np.zeros(9)))
    with pytest.raises(ValueError, match=r"norm1 must be a pair \(gamma, beta\)"):
        B.EncoderBlock(mha, W_1, None, W_2, None, norm1=np.ones(8))
    with pytest.raises(ValueError, match="attention must be a MultiHeadAttention, got MultiheadAttention"):
        B.EncoderBlock(nn.MultiheadAttention(8, 2), W_1, None, W_2, None)
    with pytest.raises(ValueError, match=r"activation must be one of \('relu', 'gelu', 'gelu_tanh'\), got 'swish'"):
        B.EncoderBlock(mha, W_1, None, W_2, None, activation="swish")
    with pytest.raises(ValueError, match="norm_first must be True or False"):
        B.EncoderBlock(mha, W_1, None, W_2, None, norm_first="pre")
    with pytest.raises(ValueError, match="eps must be a small positive number"):
        B.EncoderBlock(mha, W_1, None, W_2, None, eps=-1e-5)
    with pytest.raises(ValueError, match="W_1 contains NaN"):
        B.EncoderBlock(mha, np.full((8, 16), np.nan), None, W_2, None)
    with pytest.raises(ValueError, match="h=3 does not divide d=8"):
        B.EncoderBlock.from_seed(8, 3)
    with pytest.raises(ValueError, match="seed must be a whole number >= 0"):
        B.EncoderBlock.from_seed(8, 2, seed=-1)
    block = B.EncoderBlock(mha, W_1, None, W_2, None)  # default norms: gamma 1, beta 0
    np.testing.assert_array_equal(block.norm1[0], 1.0)
    assert "d=8, h=2, d_ff=16" in repr(block)


def test_decoder_errors():
    block = B.DecoderBlock.from_seed(8, 2)
    x, mem = np.ones((2, 4, 8)), np.ones((2, 6, 8))
    with pytest.raises(ValueError, match=r"memory has shape \(3, 6, 8\) but x has shape \(2, 4, 8\)"):
        block(x, np.ones((3, 6, 8)))
    with pytest.raises(ValueError, match=r"memory has shape \(6, 8\) but x has shape \(2, 4, 8\)"):
        block(x, np.ones((6, 8)))
    with pytest.raises(ValueError, match=r"memory has shape \(2, 6, 4\) but the block has d=8"):
        block(x, np.ones((2, 6, 4)))
    with pytest.raises(ValueError, match=r"memory_padding has shape \(2, 4\) but memory has shape \(2, 6, 8\)"):
        block(x, mem, memory_padding=np.ones((2, 4), bool))
    with pytest.raises(ValueError, match=r"padding has shape \(2, 6\) but x has shape \(2, 4, 8\)"):
        block(x, mem, padding=np.ones((2, 6), bool))
    with pytest.raises(ValueError, match="memory contains NaN"):
        block(x, np.full((2, 6, 8), np.nan))
    mha8, mha4 = M.MultiHeadAttention.from_seed(8, 2), M.MultiHeadAttention.from_seed(4, 2)
    with pytest.raises(ValueError, match="cross_attention has d=4 but the block has d=8"):
        B.DecoderBlock(mha8, mha4, np.ones((8, 16)), None, np.ones((16, 8)), None)
    with pytest.raises(ValueError, match=r"norm3 gamma must have shape"):
        B.DecoderBlock(mha8, mha8, np.ones((8, 16)), None, np.ones((16, 8)), None,
                       norm3=(np.ones(3), None))


class NotALayer:
    pass


def test_from_torch_errors():
    with pytest.raises(ValueError, match=r"layer must be a torch.nn.TransformerEncoderLayer, got "
                                         r"NotALayer \(it has no attribute 'linear1'\)"):
        B.EncoderBlock.from_torch(NotALayer())
    with pytest.raises(ValueError, match=r"layer must be a torch.nn.TransformerEncoderLayer, got Linear"):
        B.EncoderBlock.from_torch(nn.Linear(4, 4))
    with pytest.raises(ValueError, match=r"TransformerDecoderLayer, got TransformerEncoderLayer "
                                         r"\(it has no attribute 'multihead_attn'\)"):
        B.DecoderBlock.from_torch(nn.TransformerEncoderLayer(8, 2, 16).eval())
    with pytest.raises(ValueError, match=r"training mode with dropout=0.1.*layer.eval\(\)"):
        B.EncoderBlock.from_torch(nn.TransformerEncoderLayer(8, 2, 16))  # training by default
    with pytest.raises(ValueError, match=r"training mode with dropout=0.2"):
        B.DecoderBlock.from_torch(nn.TransformerDecoderLayer(8, 2, 16, dropout=0.2))
    B.EncoderBlock.from_torch(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0))  # no dropout: fine
    with pytest.raises(ValueError, match=r"activation .* is not relu or gelu"):
        B.EncoderBlock.from_torch(nn.TransformerEncoderLayer(8, 2, 16, activation=torch.tanh).eval())
    with pytest.raises(ValueError, match=r"activation .* is not relu or gelu"):
        B.DecoderBlock.from_torch(nn.TransformerDecoderLayer(8, 2, 16, activation=nn.SiLU()).eval())
    odd = nn.TransformerEncoderLayer(8, 2, 16).eval()
    odd.norm2.eps = 1e-6
    with pytest.raises(ValueError, match=r"different eps \[1e-06, 1e-05\]"):
        B.EncoderBlock.from_torch(odd)
    kv = nn.TransformerEncoderLayer(8, 2, 16).eval()
    kv.self_attn = nn.MultiheadAttention(8, 2, add_bias_kv=True)
    with pytest.raises(ValueError, match="add_bias_kv or add_zero_attn"):
        B.EncoderBlock.from_torch(kv)
    kv.self_attn = nn.MultiheadAttention(8, 2, kdim=4, vdim=4)
    with pytest.raises(ValueError, match="kdim/vdim != embed_dim"):
        B.EncoderBlock.from_torch(kv)


# ---------------------------------------------------------------- dropout


def test_dropout_keeps_scales_and_is_the_identity_in_eval():
    x = np.arange(1.0, 13.0).reshape(3, 4)  # (s, d)
    keep = B.dropout_keep(x.shape, 0.25, seed=3)  # (s, d) bool
    y = B.dropout(x, 0.25, seed=3)
    np.testing.assert_array_equal(y, np.where(keep, x / 0.75, 0.0))
    np.testing.assert_array_equal(B.dropout(x, 0.25, training=False), x)
    np.testing.assert_array_equal(B.dropout(x, 0.0), x)  # p = 0 keeps everything
    rows = np.array([[True], [False], [True]])  # (s, 1): broadcast over the features
    np.testing.assert_array_equal(B.dropout(x, 0.5, rows), np.where(rows, 2 * x, 0.0))
    assert B.dropout(x.astype(np.float32), 0.1).dtype == np.float32


@pytest.mark.parametrize("call, match", [
    (lambda: B.dropout(np.ones(3), 1.0), r"\[0, 1\)"),
    (lambda: B.dropout(np.ones(3), -0.1), r"\[0, 1\)"),
    (lambda: B.dropout(np.ones(3), True), r"\[0, 1\)"),
    (lambda: B.dropout(np.ones((2, 3)), 0.1, np.ones((2, 3))), "boolean"),
    (lambda: B.dropout(np.ones((2, 3)), 0.1, np.ones((3, 3), bool)), r"broadcast to x's shape"),
    (lambda: B.dropout(np.ones(3), 0.1, training=1), "training"),
    (lambda: B.dropout_keep((2, 2), 1.5), r"\[0, 1\)"),
])
def test_dropout_refuses_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_dropout_keeps_about_one_minus_p_and_preserves_the_mean():
    x = np.full((200, 200), 3.0)
    keep = B.dropout_keep(x.shape, 0.1, seed=0)
    assert abs(keep.mean() - 0.9) < 0.01
    assert abs(B.dropout(x, 0.1, keep).mean() - 3.0) < 0.05


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_dropout_on_attention_weights_matches_nn_multihead_attention(p):
    """Training mode: torch returns the dropped weights; the mask read off them gives the
    book's weights, dropped, and the same output. Eval: no dropout, rows sum to 1."""
    torch.manual_seed(1)
    m = nn.MultiheadAttention(8, 2, dropout=p, batch_first=True).double().train()
    x = torch.randn(3, 5, 8, dtype=torch.float64)  # (b, s, d)
    out, w = m(x, x, x, average_attn_weights=False)  # (b, s, d), (b, h, s, s)
    book = M.MultiHeadAttention(*(t.detach().numpy().T for t in m.in_proj_weight.chunk(3)),
                                m.out_proj.weight.detach().numpy().T, 2,
                                *(t.detach().numpy() for t in m.in_proj_bias.chunk(3)),
                                m.out_proj.bias.detach().numpy())
    _, weights = book(x.numpy())  # (b, h, s, s)
    keep = (w != 0).numpy()
    dropped = B.dropout(weights, p, keep)
    np.testing.assert_allclose(dropped, w.detach().numpy(), atol=1e-12)
    V = M.split_heads(x.numpy() @ book.W_v + book.b_v, 2)  # (b, s, d) -> (b, h, s, d_k)
    ours = M.merge_heads(dropped @ V) @ book.W_o + book.b_o  # (b, h, s, d_k) -> (b, s, d)
    np.testing.assert_allclose(ours, out.detach().numpy(), atol=1e-12)
    assert not np.allclose(dropped.sum(-1), 1.0)
    with torch.no_grad():
        _, w_eval = m.eval()(x, x, x, average_attn_weights=False)
    np.testing.assert_allclose(w_eval.numpy(), weights, atol=1e-12)


def test_sdpa_dropout_is_unbiased_like_the_book():
    """F.scaled_dot_product_attention(dropout_p=p) averaged over many draws approaches the
    output without dropout, as the book's dropout does (inverted dropout is unbiased)."""
    torch.manual_seed(2)
    q, k, v = (torch.randn(2, 5, 4, dtype=torch.float64) for _ in range(3))  # (h, s, d_k)
    plain = F.scaled_dot_product_attention(q, k, v).numpy()
    theirs = np.mean([F.scaled_dot_product_attention(q, k, v, dropout_p=0.3).numpy()
                      for _ in range(4000)], axis=0)
    _, w = A.scaled_dot_product_attention(q.numpy(), k.numpy(), v.numpy())  # (h, s, s)
    ours = np.mean([B.dropout(w, 0.3, seed=i) @ v.numpy() for i in range(4000)], axis=0)
    scale = np.abs(plain).max()
    assert np.abs(theirs - plain).max() < 0.05 * scale
    assert np.abs(ours - plain).max() < 0.05 * scale


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.floats(0.0, 0.9), st.integers(0, 10_000))
def test_property_dropout_zeroes_or_rescales_every_number(s, d, p, seed):
    x = np.random.default_rng(seed).normal(size=(s, d))
    y = B.dropout(x, p, seed=seed)
    kept = y != 0
    np.testing.assert_allclose(y[kept], x[kept] / (1 - p), rtol=1e-12)
