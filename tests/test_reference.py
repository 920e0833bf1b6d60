"""Loading weights from torch modules, and the torch wrappers' own validation.

Tolerances: float64 torch modules, atol 1e-12; float32 modules, atol 1e-5 and rtol 1e-5;
embedding lookups are copies, compared exactly.
"""

import numpy as np
import pytest
import torch

from attention_book import embedding as E
from attention_book import multihead as M
from attention_book import reference as R

# tiny tensors: torch on one thread (conftest.one_torch_thread); its worker threads made
# these tests 10-100x slower whenever the other core was busy
pytestmark = pytest.mark.usefixtures("one_torch_thread")

ATOL64 = 1e-12


def test_to_torch_keeps_dtype_and_copies():
    x = np.ones((2, 3), dtype=np.float32)
    t = R.to_torch(x)
    assert t.dtype == torch.float32 and tuple(t.shape) == (2, 3)
    t[0, 0] = 5
    assert x[0, 0] == 1
    assert R.to_torch(np.ones(2)).dtype == torch.float64
    assert R.to_torch(np.ones(2, bool)).dtype == torch.bool
    assert R.to_torch(np.ones(2), torch.float32).dtype == torch.float32
    assert R.to_torch(np.broadcast_to(np.ones(3), (2, 3))).shape == (2, 3)


def test_embedding_from_torch_matches_lookup():
    torch.manual_seed(0)
    module = torch.nn.Embedding(120, 6)
    table = R.embedding_from_torch(module)
    assert table.shape == (120, 6) and table.dtype == np.float32
    ids = np.array([105, 12, 24, 107, 57])  # "THE WEATHER IS LOVELY TODAY"
    with torch.no_grad():
        expected = module(torch.from_numpy(ids)).numpy()
    np.testing.assert_array_equal(E.embed(ids, table), expected)
    np.testing.assert_array_equal(E.one_hot(ids, 120) @ table, expected)


def test_embedding_table_into_torch_and_back():
    table = E.embedding_table(120, 4, seed=0)  # float64 N(0, 1)
    module = torch.nn.Embedding.from_pretrained(torch.from_numpy(table))
    np.testing.assert_array_equal(R.embedding_from_torch(module), table)
    ids = np.array([105, 12, 24, 107, 57])
    with torch.no_grad():
        np.testing.assert_array_equal(module(torch.from_numpy(ids)).numpy(), E.embed(ids, table))


def test_embedding_from_torch_errors():
    with pytest.raises(ValueError, match="must be a torch.nn.Embedding, got Linear"):
        R.embedding_from_torch(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="max_norm=1.0"):
        R.embedding_from_torch(torch.nn.Embedding(5, 2, max_norm=1.0))


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch_first", [True, False])
def test_mha_from_torch_copies_every_weight(bias, batch_first):
    torch.manual_seed(1)
    tm = torch.nn.MultiheadAttention(8, 2, bias=bias, batch_first=batch_first)
    ours = R.mha_from_torch(tm)
    w = tm.in_proj_weight.detach().numpy()
    np.testing.assert_array_equal(ours.W_q, w[:8].T)
    np.testing.assert_array_equal(ours.W_k, w[8:16].T)
    np.testing.assert_array_equal(ours.W_v, w[16:].T)
    np.testing.assert_array_equal(ours.W_o, tm.out_proj.weight.detach().numpy().T)
    assert ours.h == 2 and ours.d_k == 4
    if bias:
        b = tm.in_proj_bias.detach().numpy()
        np.testing.assert_array_equal(np.concatenate([ours.b_q, ours.b_k, ours.b_v]), b)
        np.testing.assert_array_equal(ours.b_o, tm.out_proj.bias.detach().numpy())
    else:
        assert ours.b_q is None and ours.b_o is None
    # Q = X @ W_q in our convention equals torch's Linear-style x @ W^T
    x = np.random.default_rng(0).normal(size=(3, 8)).astype(np.float32)
    np.testing.assert_allclose(x @ ours.W_q, x @ w[:8].T, atol=1e-6)


def test_round_trip_into_torch_and_back():
    """Our from_seed weights loaded into a torch module (transposed) come back unchanged."""
    ours = M.MultiHeadAttention.from_seed(8, 4, seed=2, bias=True)
    tm = torch.nn.MultiheadAttention(8, 4, batch_first=True).double().eval()
    with torch.no_grad():
        tm.in_proj_weight.copy_(torch.from_numpy(np.concatenate([ours.W_q.T, ours.W_k.T, ours.W_v.T])))
        tm.in_proj_bias.copy_(torch.from_numpy(np.concatenate([ours.b_q, ours.b_k, ours.b_v])))
        tm.out_proj.weight.copy_(torch.from_numpy(ours.W_o.T))
        tm.out_proj.bias.copy_(torch.from_numpy(ours.b_o))
    back = R.mha_from_torch(tm)
    for name in ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o"):
        np.testing.assert_array_equal(getattr(back, name), getattr(ours, name))
    x = np.random.default_rng(3).normal(size=(2, 5, 8))
    out, w = ours(x)
    t_out, t_w = R.torch_mha_forward(tm, x)
    np.testing.assert_allclose(out, t_out, rtol=0, atol=ATOL64)
    np.testing.assert_allclose(w, t_w, rtol=0, atol=ATOL64)


def test_torch_mha_forward_unbatched_and_float32():
    torch.manual_seed(2)
    tm = torch.nn.MultiheadAttention(6, 3).eval()  # float32, sequence-first
    ours = R.mha_from_torch(tm)
    x = np.random.default_rng(4).normal(size=(4, 6))  # float64 in: cast to the module's float32
    t_out, t_w = R.torch_mha_forward(tm, x, mask=np.tril(np.ones((4, 4), bool)))
    assert t_out.shape == (4, 6) and t_w.shape == (3, 4, 4)
    out, w = ours(x.astype(np.float32), mask=np.tril(np.ones((4, 4), bool)))
    np.testing.assert_allclose(out, t_out, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(w, t_w, atol=1e-5, rtol=1e-5)


def test_refused_modules():
    with pytest.raises(ValueError, match="kdim=4, vdim=4 but embed_dim=8"):
        R.mha_from_torch(torch.nn.MultiheadAttention(8, 2, kdim=4, vdim=4))
    with pytest.raises(ValueError, match="add_bias_kv=True or add_zero_attn=True"):
        R.mha_from_torch(torch.nn.MultiheadAttention(8, 2, add_bias_kv=True))
    with pytest.raises(ValueError, match="add_bias_kv=True or add_zero_attn=True"):
        R.mha_from_torch(torch.nn.MultiheadAttention(8, 2, add_zero_attn=True))
    with pytest.raises(ValueError, match="must be a torch.nn.MultiheadAttention, got Linear"):
        R.mha_from_torch(torch.nn.Linear(8, 8))
    with pytest.raises(ValueError, match="kdim"):
        R.torch_mha_forward(torch.nn.MultiheadAttention(8, 2, vdim=4), np.ones((1, 2, 8)))


def test_torch_mha_forward_errors():
    tm = torch.nn.MultiheadAttention(8, 2, dropout=0.1)  # training mode by default
    with pytest.raises(ValueError, match=r"training mode with dropout=0.1.*module.eval\(\)"):
        R.torch_mha_forward(tm, np.ones((1, 3, 8)))
    tm.eval()
    with pytest.raises(ValueError, match=r"x_q must have shape \(b, s, d\) or \(s, d\)"):
        R.torch_mha_forward(tm, np.ones((1, 1, 3, 8)))
    with pytest.raises(ValueError, match="x_q has 3 axes but x_kv has 2"):
        R.torch_mha_forward(tm, np.ones((1, 3, 8)), np.ones((3, 8)))
    with pytest.raises(ValueError, match=r"mask has shape \(3, 4\)"):
        R.torch_mha_forward(tm, np.ones((1, 3, 8)), mask=np.ones((3, 4), bool))
    with pytest.raises(ValueError, match="mask must be boolean"):
        R.torch_mha_forward(tm, np.ones((1, 3, 8)), mask=np.ones((3, 3)))


def test_sdpa_torch_validates_like_ours():
    with pytest.raises(ValueError, match="the last axes of q and k must match"):
        R.sdpa_torch(np.ones((3, 4)), np.ones((5, 3)), np.ones((5, 2)))
    with pytest.raises(ValueError, match="mask must be boolean"):
        R.sdpa_torch(np.ones((3, 4)), np.ones((5, 4)), np.ones((5, 2)), mask=np.ones((3, 5)))
    # mixed float32/float64 inputs are promoted (torch alone would refuse them)
    out, w = R.sdpa_torch(np.ones((3, 4), np.float32), np.ones((5, 4)), np.ones((5, 2)))
    assert out.dtype == np.float64 and w.shape == (3, 5)


# ---------------------------------------------------------------- chapter 3 additions

from attention_book import attention as A


@pytest.mark.parametrize("d_k", [1, 16, 256])
@pytest.mark.parametrize("scaled", [False, True])
def test_softmax_grad_norm_torch_matches_the_analytic_jacobian(d_k, scaled):
    autograd = R.softmax_grad_norm_torch(d_k, scaled, n=200, seed=3)
    analytic = A.softmax_saturation(d_k, scaled, n=200, seed=3)["grad_norm"]
    assert autograd == pytest.approx(analytic, rel=1e-9)


def test_softmax_grad_norm_torch_vanishes_unscaled():
    assert R.softmax_grad_norm_torch(512, False) < 0.35 * R.softmax_grad_norm_torch(512, True)
    with pytest.raises(ValueError, match="s_k must be at least 2"):
        R.softmax_grad_norm_torch(4, s_k=1)


def test_time_torch_sdpa():
    r = R.time_torch_sdpa(64, 8, repeats=2)
    assert r["s"] == 64 and r["seconds"] > 0 and r["score_bytes"] == 64 * 64 * 4
    with pytest.raises(ValueError, match="s must be a whole number"):
        R.time_torch_sdpa(0)
    with pytest.raises(ValueError, match="repeats must be"):
        R.time_torch_sdpa(8, repeats=0)
