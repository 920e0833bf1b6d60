"""Top-k and top-p (nucleus) sampling (chapter 10): decoding.top_k_top_p against the same
rule written in torch as Hugging Face's TopKLogitsWarper and TopPLogitsWarper write it
(tests/test_smollm.py checks against transformers' own warpers, slow), the kept set's
properties, sampling inside it, and the loop's stop token."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_book import decoding as D

SETTINGS = settings(deadline=None, max_examples=80, derandomize=True, database=None)


def torch_warpers(logits, top_k=None, top_p=None):
    """transformers' TopKLogitsWarper then TopPLogitsWarper (min_tokens_to_keep=1)."""
    z = torch.from_numpy(np.array(logits, dtype=np.float64))
    if top_k is not None:
        k = min(top_k, z.shape[-1])
        z = z.masked_fill(z < torch.topk(z, k)[0][..., -1, None], -float("inf"))
    if top_p is not None:
        sorted_z, order = torch.sort(z, descending=False)
        cum = sorted_z.softmax(dim=-1).cumsum(dim=-1)
        remove = cum <= 1 - top_p
        remove[..., -1:] = 0
        z = z.masked_fill(remove.scatter(-1, order, remove), -float("inf"))
    return z.numpy()


@SETTINGS
@given(st.integers(0, 10_000), st.sampled_from([None, 1, 2, 5, 40]),
       st.sampled_from([None, 0.05, 0.5, 0.9, 1.0]), st.sampled_from([0.5, 1.0, 3.0]))
def test_matches_the_hugging_face_rule(seed, top_k, top_p, scale):
    logits = np.random.default_rng(seed).normal(scale=scale, size=(3, 20))
    np.testing.assert_array_equal(D.top_k_top_p(logits, top_k, top_p),
                                  torch_warpers(logits, top_k, top_p))


@SETTINGS
@given(st.integers(0, 10_000), st.integers(1, 20), st.floats(0.01, 1.0))
def test_the_kept_set(seed, k, p):
    logits = np.random.default_rng(seed).normal(size=20)
    kept = np.isfinite(D.top_k_top_p(logits, top_k=k))
    assert kept.sum() == k and logits[kept].min() > logits[~kept].max(initial=-np.inf)
    kept = np.isfinite(D.top_k_top_p(logits, top_p=p))
    probs = D.softmax_temperature(logits)
    assert probs[kept].sum() >= p - 1e-12  # it reaches p ...
    smallest = probs[kept].min()
    assert probs[kept].sum() - smallest < p + 1e-12  # ... and no token of it is spare
    assert kept[np.argmax(logits)]


def test_sampling_stays_in_the_kept_set_and_follows_it():
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05]))
    p = D.sampling_distribution(logits, 1.0, top_k=2)
    np.testing.assert_allclose(p, [0.625, 0.375, 0, 0], atol=1e-12)
    rng = np.random.default_rng(0)
    rows = np.tile(logits, (20_000, 1))  # (n, V): one draw a row
    draws = D.next_token(rows, 1.0, rng, top_k=2)  # (n,)
    assert set(draws.tolist()) == {0, 1} and abs((draws == 0).mean() - 0.625) < 0.02
    draws = D.next_token(rows[:2000], 1.0, rng, top_p=0.7)
    assert set(draws.tolist()) == {0, 1}  # 0.5 + 0.3 reaches 0.7
    assert D.next_token(logits, 5.0, rng, top_k=1) == 0  # top-1 is greedy at any temperature
    np.testing.assert_array_equal(D.sampling_distribution(logits, 2.0),
                                  D.softmax_temperature(logits, 2.0))


def test_generate_stops_after_the_stop_token():
    table = np.eye(4)[[1, 2, 3, 0]] * 10  # token t -> logits favouring t + 1

    def step(new_tokens):
        return table[np.asarray(new_tokens)]

    tokens, logits = D.generate(step, [0], 10, stop=3)
    assert tokens.tolist() == [1, 2, 3] and logits.shape == (3, 4)
    assert D.generate(step, [0], 10)[0].tolist() == [1, 2, 3, 0, 1, 2, 3, 0, 1, 2]


def test_bad_input():
    with pytest.raises(ValueError, match="top_k must be a whole number >= 1"):
        D.top_k_top_p([1.0, 2.0], top_k=0)
    with pytest.raises(ValueError, match=r"top_p must be a number in \(0, 1\]"):
        D.top_k_top_p([1.0, 2.0], top_p=1.5)
    with pytest.raises(ValueError, match=r"top_p must be a number in \(0, 1\]"):
        D.next_token([1.0, 2.0], 0.0, top_p=0)
    with pytest.raises(ValueError, match="temperature 0 is greedy"):
        D.sampling_distribution([1.0, 2.0], 0.0, top_k=1)
