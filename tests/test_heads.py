"""Head scores on hand-made maps (exact values), properties for random maps, bad input.

Tolerances: hand-made maps score exactly (1.0, 1/s, ...) within 1e-12; random maps stay in
[0, 1] within 1e-12 (sums of float64 weights).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_book import heads as H
from attention_book.attention import causal_mask, softmax

ATOL = 1e-12
SETTINGS = settings(deadline=None, max_examples=100, derandomize=True, database=None)


def one_hot_map(keys):
    """Row i puts all its weight on key keys[i]: (s, s)."""
    s = len(keys)
    w = np.zeros((s, s))
    w[np.arange(s), keys] = 1.0
    return w


def previous_token_map(s):
    return one_hot_map([0] + list(range(s - 1)))  # query 0 has no previous: itself


def uniform(s):
    return np.full((s, s), 1.0 / s)


def causal_uniform(s):
    return causal_mask(s) / np.arange(1, s + 1)[:, None]  # row i: 1/(i+1) on keys 0..i


def repeated(period, s, start=10):
    """A period of distinct symbols repeated to length s."""
    return np.array([start + t % period for t in range(s)])


def induction_map(tokens, period):
    """Queries i >= period attend to i - period + 1 (after the earlier copy), others to 0."""
    s = len(tokens)
    return one_hot_map([i - period + 1 if i >= period else 0 for i in range(s)])


# ---------------------------------------------------------------- exact values


@pytest.mark.parametrize("s", [2, 5, 8])
def test_pure_maps_score_one(s):
    assert H.previous_token_score(previous_token_map(s)) == pytest.approx(1.0, abs=ATOL)
    assert H.offset_score(previous_token_map(s), 1) == pytest.approx(1.0, abs=ATOL)
    nxt = one_hot_map(list(range(1, s)) + [s - 1])
    assert H.next_token_score(nxt) == pytest.approx(1.0, abs=ATOL)
    assert H.anti_diagonal_score(np.eye(s)[::-1]) == pytest.approx(1.0, abs=ATOL)
    assert H.self_score(np.eye(s)) == pytest.approx(1.0, abs=ATOL)
    assert H.offset_score(np.eye(s), 0) == pytest.approx(1.0, abs=ATOL)
    assert H.position_score(one_hot_map([0] * s), 0) == pytest.approx(1.0, abs=ATOL)
    assert H.position_score(one_hot_map([s - 1] * s), -1) == pytest.approx(1.0, abs=ATOL)
    assert H.mean_row_entropy(np.eye(s)) == pytest.approx(0.0, abs=ATOL)


def test_offset_k_counts_only_queries_with_that_key():
    s, k = 6, 2
    w = one_hot_map([max(i - k, 0) for i in range(s)])  # queries 0, 1 have no key i-2
    assert H.offset_score(w, k) == pytest.approx(1.0, abs=ATOL)
    per = H.offset_score(w, k, per_query=True)
    assert per.shape == (s,)
    assert np.isnan(per[:k]).all() and np.allclose(per[k:], 1.0)
    per_next = H.next_token_score(np.eye(s), per_query=True)
    assert np.isnan(per_next[-1]) and np.allclose(per_next[:-1], 0.0)


@pytest.mark.parametrize("s", [1, 3, 7])
def test_uniform_map_scores_one_over_s(s):
    w = uniform(s)
    for score in (H.anti_diagonal_score, H.self_score):
        assert score(w) == pytest.approx(1 / s, abs=ATOL)
    if s > 1:
        assert H.previous_token_score(w) == pytest.approx(1 / s, abs=ATOL)
        assert H.next_token_score(w) == pytest.approx(1 / s, abs=ATOL)
        assert H.position_score(w, [0, -1]) == pytest.approx(2 / s, abs=ATOL)
        assert H.mean_row_entropy(w, normalised=True) == pytest.approx(1.0, abs=ATOL)
    assert H.position_score(w, [0, 0, -s]) == pytest.approx(1 / s, abs=ATOL)  # repeats once
    assert H.mean_row_entropy(w) == pytest.approx(math.log(s), abs=ATOL)


def test_causal_uniform_map_previous_token_score():
    s = 6
    expected = np.mean([1 / (i + 1) for i in range(1, s)])  # queries 1..s-1
    assert H.previous_token_score(causal_uniform(s)) == pytest.approx(expected, abs=ATOL)
    assert H.self_score(causal_uniform(s)) == pytest.approx(np.mean(1 / np.arange(1, s + 1)))


@pytest.mark.parametrize("period,s", [(3, 9), (6, 24), (7, 24), (12, 24)])
def test_induction_pattern_scores_one(period, s):
    tokens = repeated(period, s)
    w = induction_map(tokens, period)
    assert H.induction_score(w, tokens) == pytest.approx(1.0, abs=ATOL)
    per = H.induction_score(w, tokens, per_query=True)
    assert np.isnan(per[:period]).all()  # nothing has repeated yet in the first period
    assert np.allclose(per[period:], 1.0)
    # the previous-token map is not an induction head on this sequence
    assert H.induction_score(previous_token_map(s), tokens) == pytest.approx(0.0, abs=ATOL)


def test_induction_targets_definition():
    tokens = np.array([5, 7, 5, 7, 5])
    t = H.induction_targets(tokens)
    # query 2 (token 5): key 1 follows the 5 at 0; query 4 (token 5): keys 1 and 3
    expected = np.zeros((5, 5), bool)
    expected[2, 1] = expected[3, 2] = expected[4, 1] = expected[4, 3] = True
    np.testing.assert_array_equal(t, expected)


def test_induction_score_adds_weight_over_all_earlier_copies():
    tokens = np.array([5, 7, 5, 7, 5])
    w = causal_uniform(5)
    # query 2: 1/3 on key 1; query 3: 1/4 on key 2; query 4: 2/5 on keys 1 and 3
    assert H.induction_score(w, tokens) == pytest.approx((1 / 3 + 1 / 4 + 2 / 5) / 3)


def test_induction_adjacent_repeat_does_not_count():
    tokens = np.array([1, 2, 2])  # the copy right before query 2 points at query 2 itself
    with pytest.raises(ValueError, match="no token occurs again"):
        H.induction_score(uniform(3), tokens)


def test_induction_string_tokens():
    words = np.array("the cat sat on the cat".split())
    w = one_hot_map([0, 0, 0, 0, 1, 2])  # "the" -> "cat" after the first "the"; "cat" -> "sat"
    assert H.induction_score(w, words) == pytest.approx(1.0, abs=ATOL)


def test_stacks_give_one_score_per_map():
    s, period = 12, 4
    tokens = repeated(period, s)
    maps = np.stack([previous_token_map(s), induction_map(tokens, period), uniform(s)])
    assert H.previous_token_score(maps).shape == (3,)
    # the induction map's query 1 parks on key 0, which is its previous token: 1 of 11
    np.testing.assert_allclose(H.previous_token_score(maps), [1.0, 1 / 11, 1 / s], atol=ATOL)
    layers = maps.reshape(3, 1, s, s)  # (n_layers, h, s, s)
    assert H.induction_score(layers, tokens).shape == (3, 1)
    batch = np.stack([layers, layers])  # (b, n_layers, h, s, s)
    tokens_b = np.stack([tokens, tokens + 100])  # (b, s)
    scores = H.induction_score(batch, tokens_b[:, None, None, :])
    assert scores.shape == (2, 3, 1)
    np.testing.assert_allclose(scores[:, 1, 0], 1.0, atol=ATOL)
    assert H.mean_row_entropy(batch, per_query=True).shape == (2, 3, 1, s)


def test_float32_maps_are_accepted():
    w = softmax(np.random.default_rng(0).normal(size=(4, 24, 24)).astype(np.float32))
    assert H.self_score(w).dtype in (np.float32, np.float64)
    assert 0 <= H.mean_row_entropy(w[0], normalised=True) <= 1


# ---------------------------------------------------------------- properties


@st.composite
def attention_maps(draw, max_s=8):
    s = draw(st.integers(1, max_s))
    seed = draw(st.integers(0, 2**32 - 1))
    temperature = draw(st.sampled_from([0.1, 1.0, 10.0]))
    logits = np.random.default_rng(seed).normal(size=(2, s, s)) / temperature
    if draw(st.booleans()):
        logits = np.where(causal_mask(s), logits, -np.inf)
    return softmax(logits)


@SETTINGS
@given(w=attention_maps(), k=st.integers(-7, 7), data=st.data())
def test_scores_are_fractions(w, k, data):
    s = w.shape[-1]
    scores = [H.anti_diagonal_score(w), H.self_score(w), H.position_score(w, [0, -1])]
    if abs(k) < s:
        scores.append(H.offset_score(w, k))
    tokens = np.array(data.draw(st.lists(st.integers(0, 2), min_size=s, max_size=s)))
    if H.induction_targets(tokens).any():
        scores.append(H.induction_score(w, tokens))
    if s > 1:
        scores.append(H.mean_row_entropy(w, normalised=True))
    for score in scores:
        assert np.all(score >= -ATOL) and np.all(score <= 1 + ATOL)


@SETTINGS
@given(w=attention_maps())
def test_offsets_share_each_row(w):
    """Every key is at exactly one offset from a query: the offsets' weights add to 1."""
    s = w.shape[-1]
    per = np.stack([H.offset_score(w, k, per_query=True) for k in range(-s + 1, s)])
    np.testing.assert_allclose(np.nansum(per, axis=0), 1.0, atol=1e-9)
    np.testing.assert_allclose(H.offset_score(w, 0), H.self_score(w), atol=ATOL)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("weights,match", [
    (np.full((2, 3), 0.5), "self-attention map"),
    (np.full(4, 0.25), "at least 2 axes"),
    (np.zeros((0, 3, 3)), "empty"),
    (np.eye(3) * 2, "sum to 1"),
    (np.tril(np.ones((3, 3))), "sum to 1"),  # raw mask, not weights
    (np.array([[1.5, -0.5], [0.5, 0.5]]), "non-negative"),
    (np.array([[np.nan, 1.0], [0.5, 0.5]]), "NaN"),
])
def test_bad_weights(weights, match):
    with pytest.raises(ValueError, match=match):
        H.self_score(weights)


def test_bad_arguments():
    w = uniform(4)
    with pytest.raises(ValueError, match="k=4 but the sequence has s=4"):
        H.offset_score(w, 4)
    with pytest.raises(ValueError, match="k must be a whole number"):
        H.offset_score(w, 1.0)
    with pytest.raises(ValueError, match="k=1 but the sequence has s=1"):
        H.previous_token_score(np.ones((1, 1)))
    with pytest.raises(ValueError, match="per_query must be True or False"):
        H.self_score(w, per_query=1)
    with pytest.raises(ValueError, match="each position must be a whole number in -4..3"):
        H.position_score(w, 4)
    with pytest.raises(ValueError, match="non-empty list"):
        H.position_score(w, [])
    with pytest.raises(ValueError, match="s >= 2"):
        H.mean_row_entropy(np.ones((1, 1)), normalised=True)
    with pytest.raises(ValueError, match="normalised must be True or False"):
        H.mean_row_entropy(w, normalised="yes")


def test_bad_tokens():
    w = uniform(4)
    with pytest.raises(ValueError, match="tokens has 3 positions but weights is for s=4"):
        H.induction_score(w, [1, 2, 1])
    with pytest.raises(ValueError, match="token ids .* or strings"):
        H.induction_score(w, [1.0, 2.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="single value"):
        H.induction_score(w, 3)
    with pytest.raises(ValueError, match="no token occurs again"):
        H.induction_score(w, [1, 2, 3, 4])
    with pytest.raises(ValueError, match=r"tokens\[:, None, None, :\]"):
        H.induction_score(np.stack([np.stack([w] * 3)] * 2), np.array([[1, 2, 1, 2]] * 2))


# ------------------------------------------------------------------ head_scores


def test_head_scores_of_known_maps():
    T = 6
    shift = np.eye(T, k=-1)  # query i on key i-1
    shift[0, 0] = 1.0
    s = H.head_scores(shift)
    assert s["previous"] == 1.0 and s["next"] == 0.0 and s["sep"] == 0.0
    assert math.isclose(s["self"], 1 / T) and math.isclose(s["cls"], 2 / T)
    assert s["entropy"] == 0.0 and s["spread"] == 0.0
    u = H.head_scores(uniform(T))
    for name in ("previous", "next", "cls", "sep", "self"):
        assert math.isclose(u[name], 1 / T)
    assert math.isclose(u["entropy"], math.log(T)) and math.isclose(u["spread"], 1.0)
    stack = H.head_scores(np.stack([shift, uniform(T)]).astype(np.float32))  # (2, T, T)
    np.testing.assert_allclose(stack["previous"], [1.0, 1 / T], atol=1e-6)
    assert stack["spread"].shape == (2,)


def test_head_scores_are_the_single_scores():
    rng = np.random.default_rng(0)
    w = softmax(rng.normal(size=(2, 3, 7, 7)) * 3).astype(np.float32)  # (L, h, s, s)
    s = H.head_scores(w)
    w64 = w.astype(np.float64)
    w64 /= w64.sum(axis=-1, keepdims=True)
    np.testing.assert_array_equal(s["previous"], H.previous_token_score(w64))
    np.testing.assert_array_equal(s["sep"], H.position_score(w64, -1))
    np.testing.assert_allclose(s["spread"], H.mean_row_entropy(w64, normalised=True))
    assert all(v.shape == (2, 3) for v in s.values())


def test_head_scores_refuse_what_is_not_a_map():
    with pytest.raises(ValueError, match="non-negative"):
        H.head_scores(np.eye(3) - 0.5)
    with pytest.raises(ValueError, match="sum to 1"):
        H.head_scores(np.ones((3, 3)))  # raw scores, not weights
    with pytest.raises(ValueError, match="s_q=2 queries"):
        H.head_scores(np.full((2, 3), 1 / 3))
    with pytest.raises(ValueError, match="s >= 2"):
        H.head_scores(np.ones((1, 1)))


# ---------------------------------------------------------------- chapter 9: what BERT looks at


def test_weight_on_keys_of_known_maps():
    s = 5
    keys = np.array([True, False, False, False, True])
    assert H.weight_on_keys(uniform(s), keys) == pytest.approx(2 / s, abs=ATOL)
    assert H.weight_on_keys(uniform(s), np.zeros(s, bool)) == 0.0  # no key: no weight
    w = previous_token_map(s)  # query 0 on 0, query i on i-1
    np.testing.assert_allclose(H.weight_on_keys(w, keys, per_query=True), [1, 1, 0, 0, 0])
    # one mask per map: (2, s) masks against a (2, s, s) stack
    stack = np.stack([w, uniform(s)])
    masks = np.stack([keys, ~keys])
    np.testing.assert_allclose(H.weight_on_keys(stack, masks), [2 / s, 3 / s], atol=ATOL)


@SETTINGS
@given(w=attention_maps(), data=st.data())
def test_weight_on_keys_is_position_score(w, data):
    s = w.shape[-1]
    positions = data.draw(st.lists(st.integers(0, s - 1), min_size=1, max_size=s))
    mask = np.zeros(s, bool)
    mask[positions] = True
    np.testing.assert_allclose(H.weight_on_keys(w, mask), H.position_score(w, positions),
                               atol=ATOL)
    np.testing.assert_allclose(H.weight_on_keys(w, mask) + H.weight_on_keys(w, ~mask), 1.0,
                               atol=1e-9)  # every key is in the mask or out of it


def test_word_attention_by_hand():
    # tokens: [CLS] un ##believ ##able story [SEP] -> words 0 (3 pieces) and 1
    ids = np.array([-1, 0, 0, 0, 1, -1])
    w = np.zeros((6, 6))
    w[:, 0] = 0.5  # every token puts half its weight on [CLS]
    w[1, 4] = w[2, 4] = w[3, 1] = 0.5  # the pieces of word 0 look at "story" (and itself)
    w[4, 2] = w[4, 3] = 0.25  # "story" looks at two pieces of word 0
    w[0, 5] = w[5, 5] = 0.5
    words = H.word_attention(w, ids)  # (2, 2)
    # to word 0: summed over its pieces; from word 0: the mean of its three rows
    np.testing.assert_allclose(words, [[0.5 / 3, 1.0 / 3], [0.5, 0.0]], atol=ATOL)
    assert H.most_attended_word(words).tolist() == [1, 0]


def test_word_attention_of_one_token_words_is_the_map():
    w = softmax(np.random.default_rng(0).normal(size=(3, 6, 6)))
    np.testing.assert_allclose(H.word_attention(w, np.arange(6)), w, atol=ATOL)
    # dropping [CLS] and [SEP] keeps the inner block
    ids = np.array([-1, 0, 1, 2, 3, -1])
    np.testing.assert_allclose(H.word_attention(w, ids), w[:, 1:5, 1:5], atol=ATOL)


@SETTINGS
@given(w=attention_maps(), data=st.data())
def test_word_rows_keep_the_weight_on_words(w, data):
    """A word's row sums to the mean over its tokens of their weight on all words."""
    s = w.shape[-1]
    cuts = sorted(set(data.draw(st.lists(st.integers(1, s - 1), max_size=s)))) if s > 1 else []
    ids = np.zeros(s, int)
    for c in cuts:
        ids[c:] += 1  # contiguous words, some of several tokens
    drop = data.draw(st.booleans()) and s > 2 and ids.max() >= 1
    if drop:
        ids = ids - 1  # the first word's tokens become -1, like [CLS]
    words = H.word_attention(w, ids)
    n = ids.max() + 1
    assert words.shape == (2, n, n)
    on_words = (w * (ids >= 0)).sum(axis=-1)  # (2, s): each token's weight on kept tokens
    for a in range(n):
        np.testing.assert_allclose(words[:, a].sum(axis=-1), on_words[:, ids == a].mean(axis=-1),
                                   atol=1e-9)


def test_most_attended_word_leaves_the_word_itself_out():
    w = np.array([[0.9, 0.06, 0.04], [0.2, 0.7, 0.1], [0.0, 0.0, 1.0]])
    assert H.most_attended_word(w).tolist() == [1, 0, 0]  # ties: the first word


def test_best_offset():
    assert H.best_offset([0, 3, 5, 2], [1, 4, 7, 0]) == (1, 0.5)
    assert H.best_offset([0, 1], [2, 0]) == (-1, 0.5)  # a tie: the smaller offset
    with pytest.raises(ValueError, match="same length"):
        H.best_offset([0, 1], [1])
    with pytest.raises(ValueError, match="whole numbers"):
        H.best_offset([0.5], [1.0])


def test_value_writes_add_up_to_torch_multihead_attention():
    """sum_h alpha^h f_h(x) + b^O is nn.MultiheadAttention's output (Kobayashi et al.)."""
    import torch

    torch.manual_seed(0)
    s, d, h = 5, 12, 3
    m = torch.nn.MultiheadAttention(d, h, batch_first=True).eval()
    with torch.no_grad():
        m.in_proj_bias.normal_()
        m.out_proj.bias.normal_()
        x = torch.randn(1, s, d)
        out, w = m(x, x, x, average_attn_weights=False)  # (1, s, d), (1, h, s, s)
        W_v = m.in_proj_weight[2 * d:].T.numpy()  # (d, d): (out, in) -> (in, out)
        values = x[0].numpy() @ W_v + m.in_proj_bias[2 * d:].numpy()  # (s, d) @ (d, d) -> (s, d)
        W_o, b_o = m.out_proj.weight.T.numpy(), m.out_proj.bias.numpy()  # (d, d), (d,)
    f = H.value_writes(values, W_o, h)  # (h, s, d)
    weights = w[0].numpy().astype(np.float64)  # (h, s, s)
    ours = (weights @ f).sum(axis=0) + b_o  # (h, s, s) @ (h, s, d) -> (h, s, d) -> (s, d)
    np.testing.assert_allclose(ours, out[0].numpy(), atol=1e-5)
    weights /= weights.sum(axis=-1, keepdims=True)
    norms = H.weighted_write_norms(weights, values, W_o)  # (h, s, s)
    np.testing.assert_allclose(norms, weights * np.linalg.norm(f, axis=-1)[:, None, :],
                               rtol=1e-12)
    # the norm of a sum is at most the sum of the norms: row i's write is at most its total
    total = np.linalg.norm(weights @ f, axis=-1)  # (h, s)
    assert np.all(total <= norms.sum(axis=-1) + 1e-9)


def test_value_writes_shapes_and_batches():
    rng = np.random.default_rng(1)
    values, W_o = rng.normal(size=(2, 4, 8)), rng.normal(size=(8, 6))  # (b, s, d), (d, d_out)
    f = H.value_writes(values, W_o, 2)
    assert f.shape == (2, 2, 4, 6)  # (b, h, s, d_out)
    # head 1 writes from its own 4 value columns through its own 4 rows of W^O
    np.testing.assert_allclose(f[1, 1], values[1][:, 4:] @ W_o[4:], atol=ATOL)


def test_chapter_9_functions_refuse_bad_input():
    w = uniform(4)
    with pytest.raises(ValueError, match="boolean mask"):
        H.weight_on_keys(w, [0, 1])
    with pytest.raises(ValueError, match="one True/False per key"):
        H.weight_on_keys(w, np.ones(3, bool))
    with pytest.raises(ValueError, match="one per token"):
        H.word_attention(w, [0, 1, 2])
    with pytest.raises(ValueError, match="no gap"):
        H.word_attention(w, [0, 2, 2, 2])
    with pytest.raises(ValueError, match="-1 or a word index"):
        H.word_attention(w, [-2, 0, 1, 1])
    with pytest.raises(ValueError, match="all -1"):
        H.word_attention(w, [-1, -1, -1, -1])
    with pytest.raises(ValueError, match="n >= 2"):
        H.most_attended_word(np.ones((1, 1)))
    with pytest.raises(ValueError, match="does not divide"):
        H.value_writes(np.ones((4, 6)), np.ones((6, 6)), 4)
    with pytest.raises(ValueError, match="W_o has shape"):
        H.value_writes(np.ones((4, 6)), np.ones((5, 6)), 2)
    with pytest.raises(ValueError, match="one layer's maps"):
        H.weighted_write_norms(w, np.ones((4, 6)), np.ones((6, 6)))
    with pytest.raises(ValueError, match="values have 3 tokens"):
        H.weighted_write_norms(np.stack([w, w]), np.ones((3, 6)), np.ones((6, 6)))
    with pytest.raises(ValueError, match="after the softmax"):
        H.weighted_write_norms(-np.stack([w, w]), np.ones((4, 6)), np.ones((6, 6)))


# ---------------------------------------------------------------- OV circuit and copying


def test_ov_circuit_is_the_product():
    rng = np.random.default_rng(0)
    E, W_V, W_O, W_U = (rng.standard_normal(s) for s in ((7, 4), (4, 2), (2, 4), (4, 7)))
    np.testing.assert_allclose(H.ov_circuit(E, W_V, W_O, W_U), E @ W_V @ W_O @ W_U, atol=ATOL)


def test_copying_scores_of_hand_made_circuits():
    V = 6
    assert H.copying_score(np.eye(V)) == 1.0 and H.eigenvalue_copying_score(np.eye(V)) == 1.0
    assert H.copying_score(-np.eye(V)) == 0.0 and H.eigenvalue_copying_score(-np.eye(V)) == -1.0
    shift = np.roll(np.eye(V), 1, axis=1)  # token a raises the logit of a + 1: no copying
    assert H.copying_score(shift) == 0.0
    assert abs(H.eigenvalue_copying_score(shift)) < ATOL  # roots of unity sum to 0
    half = np.eye(V)
    half[0, 1] = 2.0  # token 0 raises token 1 more than itself
    np.testing.assert_array_equal(H.copying_score(half, per_token=True), [False] + [True] * 5)
    assert H.copying_score(np.ones((V, V))) == 0.0  # a tie is not a copy


@SETTINGS
@given(st.integers(2, 12), st.integers(0, 10_000))
def test_copying_scores_ignore_token_names(V, seed):
    # relabelling the tokens (the same permutation of rows and columns) changes nothing
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((V, V))
    perm = rng.permutation(V)
    relabelled = m[perm][:, perm]
    assert H.copying_score(relabelled) == H.copying_score(m)
    assert abs(H.eigenvalue_copying_score(relabelled) - H.eigenvalue_copying_score(m)) < 1e-9
    assert -1 - ATOL <= H.eigenvalue_copying_score(m) <= 1 + ATOL
    # adding a multiple of the identity only helps copying
    assert H.copying_score(m + 100 * np.eye(V)) == 1.0


def test_copying_bad_input():
    with pytest.raises(ValueError, match="square"):
        H.copying_score(np.ones((3, 4)))
    with pytest.raises(ValueError, match="at least 2 axes"):
        H.eigenvalue_copying_score(np.ones(3))
    with pytest.raises(ValueError, match="all zeros"):
        H.eigenvalue_copying_score(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="per_token"):
        H.copying_score(np.eye(3), per_token=1)
    with pytest.raises(ValueError, match="W_O has shape"):
        H.ov_circuit(np.ones((5, 3)), np.ones((3, 2)), np.ones((3, 3)), np.ones((3, 5)))
    with pytest.raises(ValueError, match="W_E must be a matrix"):
        H.ov_circuit(np.ones((2, 5, 3)), np.ones((3, 2)), np.ones((2, 3)), np.ones((3, 5)))


# ---------------------------------------------------------------- ablation

def test_ablate_subsets_enumerates_every_subset_once():
    units = [(0, 0), (0, 1), (1, 0)]
    weights = {(0, 0): 1.0, (0, 1): 2.0, (1, 0): 4.0}
    subsets, values = H.ablate_subsets(lambda c: (sum(weights[u] for u in c), len(c)), units)
    assert len(subsets) == 8 == len(set(subsets)) and subsets[0] == frozenset()
    assert subsets[1:4] == [frozenset([u]) for u in units]
    assert values.shape == (8, 2) and sorted(values[:, 0]) == list(range(8))
    low, mean, high = H.ablation_by_size(subsets, values)
    assert np.allclose(low[:, 0], [0, 1, 3, 7]) and np.allclose(high[:, 0], [0, 4, 6, 7])
    assert np.allclose(mean[:, 0], [0, 7 / 3, 14 / 3, 7]) and np.allclose(mean[:, 1], [0, 1, 2, 3])
    _, scalar = H.ablate_subsets(len, "ab")
    assert scalar.shape == (4, 1)


def test_ablation_explains_bad_input():
    with pytest.raises(ValueError, match="metric must be a function"):
        H.ablate_subsets(3, [1])
    with pytest.raises(ValueError, match="distinct"):
        H.ablate_subsets(len, [1, 1])
    with pytest.raises(ValueError, match="1..12 units"):
        H.ablate_subsets(len, range(13))
    with pytest.raises(ValueError, match="same length"):
        H.ablate_subsets(lambda c: np.ones(len(c) + 1), [1, 2])
    with pytest.raises(ValueError, match="2 subsets but 3 rows"):
        H.ablation_by_size([frozenset(), frozenset([1])], np.ones(3))
