"""Chapter 3's labs' state functions (scenes/attention.py) and the cost figure.

Expected values come from the math layer directly (tokenize, embed, projection_weights,
a softmax written out, softmax_saturation, dot_product_variance), not from the state
functions under test. Speed is measured by benchmarks/lab_latency.py.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from attention_book.attention import (dot_product_variance, projection_weights,
                                      softmax_saturation)
from attention_book.embedding import embed, embedding_table
from attention_book.scenes import (CROSS_SENTENCE, SCALING_DKS, attention_state,
                                   scaling_curves)
from attention_book.scenes.attention import ATTENTION_D
from attention_book.tokens import RUNNING_SENTENCE, Vocabulary, tokenize
from attention_book.controls import live_lab
from attention_book.scenes.attention import scaling_state
from js_view import readout as readout_of


def expected_attention(text, d_k=4, temperature=1.0, seed=0, kv_text=None):
    """Tokens, weights (s_q, s_k) and output (s_q, d_k) from the math layer's pieces, the
    softmax written out here (the state function calls scaled_dot_product_attention)."""
    vocab = Vocabulary.default()
    table = embedding_table(len(vocab), ATTENTION_D, 0)  # (V, d)
    q_tok = tokenize(text)
    k_tok = q_tok if kv_text is None else tokenize(kv_text)
    X_q, X_kv = embed(vocab.encode(q_tok), table), embed(vocab.encode(k_tok), table)
    W_q, W_k, W_v = projection_weights(ATTENTION_D, d_k, seed=seed)  # (d, d_k) each
    Q, K, V = X_q @ W_q, X_kv @ W_k, X_kv @ W_v  # (s_q, d_k), (s_k, d_k), (s_k, d_k)
    scores = Q @ K.T / (temperature * math.sqrt(d_k))  # (s_q, d_k) @ (d_k, s_k) -> (s_q, s_k)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    return q_tok, k_tok, w, w @ V  # (s_q, s_k) @ (s_k, d_k) -> (s_q, d_k)


# ------------------------------------------------------------------ the attention lab


@pytest.mark.parametrize("values, expect", [
    ({}, {}),
    ({"query": 3}, {}),
    ({"d_k": 16}, {"d_k": 16}),
    ({"temperature": 0.25}, {"temperature": 0.25}),
    ({"seed": 5}, {"seed": 5}),
    ({"mode": "cross", "kv_text": "the sun was warm"}, {"kv_text": "the sun was warm"}),
    ({"mode": "cross"}, {"kv_text": CROSS_SENTENCE}),
    ({"text": "the dog saw the cat"}, {"text": "the dog saw the cat"}),
    ({"text": "the dog", "query": 4}, {"text": "the dog"}),
])
def test_attention_state_is_the_math_layers(values, expect):
    """What the lab shows (weights, output, tokens, the query clamped) is the math layer's
    attention of the sentence: the check the matplotlib lab's tests made on its heatmap."""
    st = attention_state(**values)
    q_tok, k_tok, w, out = expected_attention(**{"text": RUNNING_SENTENCE, **expect})
    assert st.query_tokens == tuple(q_tok) and st.key_tokens == tuple(k_tok)
    assert st.weights.shape == (len(q_tok), len(k_tok))  # (5, 4) for "the sun was warm"
    np.testing.assert_allclose(st.weights, w, atol=1e-12)
    np.testing.assert_allclose(st.output, out, atol=1e-12)
    assert st.query == min(values.get("query", 0), len(q_tok) - 1)
    np.testing.assert_array_equal(st.row, w[st.query])


def test_kv_text_matters_only_in_cross_mode():
    plain = attention_state()
    other = attention_state(kv_text="the sun was warm")
    np.testing.assert_array_equal(other.weights, plain.weights)
    assert attention_state(mode="cross", kv_text="the sun was warm").weights.shape == (5, 4)


# ------------------------------------------------------------------ the sqrt(d_k) lab


def test_scaling_curves_come_from_the_math_layer():
    curves = scaling_curves()
    k = SCALING_DKS.index(64)
    stats = softmax_saturation(64, False, s_k=16, n=300, seed=0)
    assert curves[("max_weight", False)][k] == stats["max_weight"]
    assert curves[("grad_norm", False)][k] == stats["grad_norm"]
    var = dot_product_variance(64, n=1200, seed=0)
    assert curves[("variance", False)][k] == var
    assert curves[("variance", True)][k] == pytest.approx(var / 64)


def test_a_token_need_not_attend_most_to_itself():
    st = attention_state(RUNNING_SENTENCE, d_k=4, seed=0)
    assert any(int(np.argmax(st.weights[i])) != i for i in range(st.s_q))
    assert int(np.argmax(st.weights[0])) == 1  # 'the' attends most to 'weather' at seed 0


def test_temperature_sharpens_and_flattens():
    sharp = attention_state(RUNNING_SENTENCE, temperature=0.125).weights.max(axis=1)
    flat = attention_state(RUNNING_SENTENCE, temperature=8.0).weights.max(axis=1)
    assert (sharp > flat).all() and (flat < 0.3).all()


@pytest.mark.slow  # starts a fresh Python (0.5-1 s)
def test_no_pyplot():
    import subprocess
    code = ("import sys, attention_book.scenes.attention, attention_book.plots.attention; "
            "print('matplotlib.pyplot' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------ chapter 3's other pictures


@pytest.mark.slow  # a chapter's figures drawn to PNG (0.4 s); the build draws them too
def test_cost_figure_has_a_slope_2_guide_and_alt_text():
    from attention_book.plots import cost_figure

    sizes = (128, 256, 512, 1024)
    t = np.array([1e-4, 3e-4, 1.2e-3, 4.8e-3])
    fig = cost_figure(sizes, {"numpy": t, "torch": t / 2}, {"L2": 2**20, "L3": 32 * 2**20})
    ax_time, ax_per = fig.axes[:2]
    guide = [line for line in ax_time.get_lines() if line.get_linestyle() == "--"][0]
    x, y = guide.get_xdata(), guide.get_ydata()
    slope = np.diff(np.log(y)) / np.diff(np.log(x))
    np.testing.assert_allclose(slope, 2.0)
    assert y[-1] == pytest.approx(t[-1] * 1e3)  # through the last measured point, in ms
    np.testing.assert_allclose(ax_per.get_lines()[0].get_ydata(), t / np.array(sizes) ** 2 * 1e9)
    assert "L2 (1 MiB) at s = 512" in fig.alt and "L3" not in fig.alt  # L3 fills beyond 1024
    page = fig._repr_html_()
    assert page.startswith('<img src="data:image/png;base64,') and 'alt="Two panels' in page


def test_readout_names_exact_ties_between_repeated_keys():
    # cross-attention: "the" is keys 1 and 3; no positions, so every query weighs them alike
    cross = attention_state(RUNNING_SENTENCE, mode="cross", query=4)
    assert cross.row[1] == cross.row[3] == cross.row.max()
    page = readout_of("attention", cross)
    assert "attends most to key 1 ('the', weight 0.23), tied exactly with key 3 " \
        "('the')" in page
    assert "weighed exactly alike by every query" in page and "keys 1 ('the'), 3" in page
    # the tie is named even when it is not the largest weight
    first = readout_of("attention", attention_state(RUNNING_SENTENCE, mode="cross", query=0))
    assert "tied exactly" not in first and "keys 1 ('the'), 3" in first
    # no repeated key, no such line
    assert "weighed exactly alike" not in readout_of("attention", attention_state())


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_scaling_shows_saturation_in_numbers():
    u, c = scaling_state(512, False), scaling_state(512, True)
    assert u.max_weight > 0.9 and c.max_weight < 0.4
    assert u.grad_norm < 0.35 * c.grad_norm
    assert u.variance > 400 and abs(c.variance - 1) < 0.2
    with pytest.raises(ValueError, match="d_k must be one of"):
        scaling_state(3, False)
    with pytest.raises(ValueError, match="d_k must be one of"):
        live_lab("scaling", d_k=3)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_state_and_factory_argument_checks():
    with pytest.raises(ValueError, match="mode must be"):
        attention_state(mode="both")
    with pytest.raises(ValueError, match="temperature must be a positive"):
        attention_state(temperature=0.0)
    with pytest.raises(ValueError, match="query must be"):
        attention_state(query=-1)
    with pytest.raises(ValueError, match="d_k must be one of"):
        live_lab("attention", d_k=3)
    with pytest.raises(ValueError, match="temperature must be one of"):
        live_lab("attention", temperature=3.0)
    with pytest.raises(ValueError, match="seed must be"):
        live_lab("attention", seed=99)
