"""Chapter 5's permutation playground: its state function (scenes/permutation.py) and the
lab's two forms.

Expected values are computed here from the math layer (embed, projection_weights,
scaled_dot_product_attention, sinusoidal_encoding, causal_mask), not from the state
function under test.
"""

from __future__ import annotations


import numpy as np
import pytest

from attention_book import controls
from attention_book.controls import lab as book_lab
from attention_book.attention import projection_weights, scaled_dot_product_attention
from attention_book.controls.widget import LabWidget
from attention_book.embedding import embed, embedding_table
from attention_book.masking import causal_mask
from attention_book.permutation import PERMUTATION_NAMES, named_permutation
from attention_book.positional import sinusoidal_encoding
from attention_book.scenes import (
    ORDER_CHOICES,
    SCENES,
    permutation_state,
)
from attention_book.scenes.permutation import shuffle_order
from attention_book.tokens import RUNNING_SENTENCE, Vocabulary, tokenize
from attention_book.controls import live_lab
from js_view import alt as alt_of, readout as readout_of, views

SCENE = SCENES["permutation"]
D = 8  # the lab's d = d_k = d_v


def expected(text, perm, pe, causal):
    """(P X_in, P A P^T, P f(X)), ((PX)_in, A(PX), f(PX)) straight from the math layer."""
    vocab = Vocabulary.default()
    x = embed(vocab.encode(tokenize(text)), embedding_table(len(vocab), D, 0))  # (s, d)
    s = x.shape[0]
    W_q, W_k, W_v = projection_weights(D, D, seed=0)  # (d, d) each
    add = sinusoidal_encoding(s, D) if pe else 0.0
    mask = causal_mask(s) if causal else None

    def f(a):  # (s, d) @ (d, d) -> (s, d) for Q, K and V
        return scaled_dot_product_attention(a @ W_q, a @ W_k, a @ W_v, mask=mask)
    perm = np.asarray(perm)
    out, w = f(x + add)  # (s, d), (s, s)
    out_p, w_p = f(x[perm] + add)
    return ((x + add)[perm], w[perm][:, perm], out[perm]), (x[perm] + add, w_p, out_p)


@pytest.mark.parametrize("values, text, perm", [
    ({}, RUNNING_SENTENCE, [4, 3, 2, 1, 0]),
    ({"pe": True}, RUNNING_SENTENCE, [4, 3, 2, 1, 0]),
    ({"causal": True}, RUNNING_SENTENCE, [4, 3, 2, 1, 0]),
    ({"pe": True, "causal": True, "order": "rotate"}, RUNNING_SENTENCE,
     named_permutation("rotate", 5)),
    ({"order": "shuffle", "seed": 7}, RUNNING_SENTENCE, shuffle_order(5, 7)),
    ({"order": "custom", "custom": "1 0 2 4 3"}, RUNNING_SENTENCE, [1, 0, 2, 4, 3]),
    ({"text": "the dog bit the man", "order": "custom", "custom": "0 4 2 3 1"},
     "the dog bit the man", [0, 4, 2, 3, 1]),
])
def test_state_arrays_are_the_math_layers(values, text, perm):
    """Both rows of panels and their difference are the math layer's attention of the
    sentence before and after the permutation (the matplotlib lab's check of its panels)."""
    st = permutation_state(**values)
    after, before = expected(text, perm, values.get("pe", False), values.get("causal", False))
    np.testing.assert_array_equal(st.perm, perm)
    for shown, want in zip((*st.after, *st.before), (*after, *before)):
        np.testing.assert_allclose(shown, want, atol=1e-12)
    diff = np.abs(before[2] - after[2])  # (s, d) |f(PX) - P f(X)|
    np.testing.assert_allclose(st.difference, diff, atol=1e-12)
    assert st.max_error == pytest.approx(diff.max(), abs=1e-15)
    assert st.verdict == f"equivariant: {'yes' if diff.max() <= 1e-9 else 'no'} " \
                         f"(max error {diff.max():.1e})"


def test_every_order_offered_is_a_named_permutation_or_custom():
    names = [name for _, name in ORDER_CHOICES]
    assert names == [*PERMUTATION_NAMES, "custom"]


def test_state_verdicts():
    assert permutation_state().equivariant
    assert permutation_state().same_set
    for kw in ({"pe": True}, {"causal": True}, {"pe": True, "causal": True}):
        st = permutation_state(**kw)
        assert not st.equivariant and st.max_error > 0.05
        assert st.verdict.startswith("equivariant: no (max error ")
    st = permutation_state(order="identity", pe=True, causal=True)
    assert st.equivariant and "identity" in st.notes[0].text
    assert "positional encoding is added by position" in permutation_state(pe=True).notes[0].text
    assert "causal mask" in permutation_state(causal=True).notes[0].text


def test_state_reader_input_never_raises():
    st = permutation_state(text="")
    assert st.s == 0 and st.notes[0].level == "error"
    st = permutation_state(order="custom", custom="4 3 two 1 0")
    assert st.notes[0].level == "error" and "'two' is not a position" in st.notes[0].text
    np.testing.assert_array_equal(st.perm, np.arange(5))
    st = permutation_state(text=" ".join(["dog"] * 140))
    assert st.s == 128 and "first 128 of 140" in st.notes[0].text


def test_typed_orders_of_exercise_4_and_the_custom_box_follows_the_order():
    for order in ORDER_CHOICES:
        values = SCENE.values(order=order[1])
        assert SCENE.active(values)["custom"] == (order[1] == "custom")
    assert "used when the permutation is" in SCENE.control("custom").hint
    # exercise 4: under the causal mask, which rows agree
    for order, agree in (("0 1 2 4 3", [0, 1, 2]), ("1 0 2 3 4", [2, 3, 4])):
        SCENE.values(order="custom", custom=order, pe=False, causal=True)  # reachable
        st = permutation_state(RUNNING_SENTENCE, "custom", order, 0, False, True)
        assert np.flatnonzero(st.difference.max(axis=1) < 1e-12).tolist() == agree


def test_equivariant_exactly_without_pe_and_mask_or_for_the_identity():
    cases = [(order, pe, causal) for _, order in ORDER_CHOICES if order != "custom"
             for pe in (False, True) for causal in (False, True)]
    states = [permutation_state(RUNNING_SENTENCE, order, "", 0, pe, causal)
              for order, pe, causal in cases]
    # every state's readout and alt text in one run of Node (two runs a state: 3 s of CPU)
    for (order, pe, causal), shown in zip(cases, views("permutation", *states), strict=True):
        want = "yes" if order == "identity" or not (pe or causal) else "no"
        assert f"equivariant: {want}" in shown["readout"], (order, pe, causal)
        assert f"equivariant: {want}" in shown["alt"], (order, pe, causal)


def test_alt_text_and_readout():
    st = permutation_state(pe=True)
    alt = alt_of("permutation", st)
    assert "today, lovely, is, weather, the" in alt and "positional encoding on" in alt
    assert "equivariant: no" in alt
    assert "perm = [4 3 2 1 0]" in readout_of("permutation", st)
    assert "only their order differs" in readout_of("permutation", permutation_state())
    # the identity moves nothing: "only their order differs" would be false (review 1-5, minor 5)
    same = readout_of("permutation", permutation_state(order="identity"))
    assert "in the same order (the identity permutation)" in same
    assert "order differs" not in same


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_interactive_picks_the_form(monkeypatch):
    monkeypatch.setenv("ATTENTION_BOOK_STATIC", "1")
    monkeypatch.setattr(controls, "web_lab", lambda name: "computed in the browser")
    assert book_lab("permutation") == "computed in the browser"
    monkeypatch.setenv("ATTENTION_BOOK_STATIC", "0")
    assert isinstance(book_lab("permutation"), LabWidget)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_bad_arguments():
    with pytest.raises(ValueError, match="order must be one of"):
        live_lab("permutation", order="sideways")
    with pytest.raises(ValueError, match="seed must be"):
        live_lab("permutation", seed=500)


def test_each_shuffle_seed_gives_another_order():
    """The chapter says each seed is another random order; a generator a seed gave 71
    distinct orders of 5 tokens for the 100 seeds (0, 2, 48 and 50 all [2 4 3 0 1]; chapters
    1-5 review, F5). Now 100 of 100, and every order of 3 tokens for 3 tokens."""
    orders = {tuple(permutation_state(order="shuffle", seed=k).perm) for k in range(100)}
    assert len(orders) == 100
    assert len({tuple(shuffle_order(3, k)) for k in range(100)}) == 6
