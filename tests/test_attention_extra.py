"""The numpy helpers chapter 3 added to attention.py: checked against a direct loop."""

from __future__ import annotations

import numpy as np
import pytest

from attention_book.attention import (
    find_query_attending_elsewhere,
    project_qkv,
    projection_weights,
    scaled_dot_product_attention,
)
from attention_book.embedding import embed, embedding_table
from attention_book.tokens import RUNNING_SENTENCE, Vocabulary, tokenize

VOCAB = Vocabulary.default()
X = embed(VOCAB.encode(tokenize(RUNNING_SENTENCE)), embedding_table(len(VOCAB), 8, 0))  # (5, 8)


def brute_force(X, d_k, seeds, tie):
    for seed in seeds:
        W_q, W_k, W_v = projection_weights(X.shape[1], d_k, seed=seed)
        Q, K, V = project_qkv(X, W_q, W_q if tie else W_k, W_v)
        _, w = scaled_dot_product_attention(Q, K, V)
        for i in range(len(X)):
            if int(np.argmax(w[i])) != i:
                return seed, i, int(np.argmax(w[i]))
    return None


@pytest.mark.parametrize("tie", [False, True])
def test_finds_the_first_seed_and_query_as_a_loop_would(tie):
    found = find_query_attending_elsewhere(X, 4, tie_qk=tie)
    assert (found["seed"], found["query"], found["key"]) == brute_force(X, 4, range(21), tie)
    w = found["weights"]
    i, j = found["query"], found["key"]
    assert w.shape == (5, 5) and w[i, j] > w[i, i] and j != i


def test_tied_projections_do_not_make_each_token_attend_to_itself():
    # W^K = W^Q: the scores are q_i . q_j, which can exceed |q_i|^2
    found = find_query_attending_elsewhere(X, 4, tie_qk=True)
    W_q, _, _ = projection_weights(8, 4, seed=found["seed"])
    Q = X @ W_q  # (s, d) @ (d, d_k) -> (s, d_k)
    i, j = found["query"], found["key"]
    assert Q[i] @ Q[j] > Q[i] @ Q[i]


def test_none_when_no_seed_gives_one_and_checks():
    assert find_query_attending_elsewhere(X, 4, seeds=()) is None
    # two identical rows: each query's scores on both keys tie, argmax is the first key
    twins = np.repeat(X[:1], 2, axis=0)  # (2, d)
    found = find_query_attending_elsewhere(twins, 4, seeds=(0,))
    assert found is not None and (found["query"], found["key"]) == (1, 0)
    with pytest.raises(ValueError, match="s >= 2"):
        find_query_attending_elsewhere(np.ones((1, 4)), 2)


# ---------------------------------------------------------------- gradient_norms

import math

import torch

from attention_book.attention import gradient_norms, softmax_saturation


@pytest.mark.parametrize("d_k,scaled", [(4, True), (64, False), (512, False), (512, True)])
def test_gradient_norms_match_torch_autograd(d_k, scaled):
    n, s_k = 40, 16
    got = gradient_norms(d_k, scaled, s_k=s_k, n=n, seed=5)
    rng = np.random.default_rng(5)  # the same draws, in the same order
    q = torch.tensor(rng.standard_normal((n, 1, d_k)), requires_grad=True)  # (n, 1, d_k)
    K = torch.tensor(rng.standard_normal((n, s_k, d_k)))  # (n, s_k, d_k)
    g = torch.tensor(rng.standard_normal((n, s_k)))  # (n, s_k)
    scores = (q @ K.transpose(1, 2))[:, 0, :]  # (n, 1, d_k) @ (n, d_k, s_k) -> (n, s_k)
    scores = scores / math.sqrt(d_k) if scaled else scores
    scores.retain_grad()
    (torch.softmax(scores, dim=-1) * g).sum().backward()  # L = sum over queries of g . p
    np.testing.assert_allclose(got["scores"], scores.grad.norm(dim=-1).numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got["query"], q.grad[:, 0].norm(dim=-1).numpy(), rtol=1e-9, atol=1e-12)


def test_gradient_norms_share_softmax_saturations_samples_and_are_heavy_tailed_unscaled():
    for scaled in (False, True):
        norms = gradient_norms(64, scaled, n=200, seed=1)
        assert norms["scores"].shape == norms["query"].shape == (200,)
        assert norms["scores"].mean() == pytest.approx(
            softmax_saturation(64, scaled, n=200, seed=1)["grad_norm"], rel=1e-12)
    u, c = gradient_norms(512, False, n=300), gradient_norms(512, True, n=300)
    assert np.median(u["query"]) < 0.1 * np.median(c["query"])  # most queries stall
    assert u["query"].mean() > 2 * c["query"].mean()  # a few get huge updates
    with pytest.raises(ValueError, match="s_k must be at least 2"):
        gradient_norms(4, True, s_k=1)
    with pytest.raises(ValueError, match="scaled must be True or False"):
        gradient_norms(4, "yes")
