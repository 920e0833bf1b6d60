"""Chapter 5's permutation playground (scenes/permutation.py, live_lab("permutation")),
its view (plots/permutation.py) and the lab shown in a static build.

Expected values are computed here from the math layer (embed, projection_weights,
scaled_dot_product_attention, sinusoidal_encoding, causal_mask), not from the state
function under test.
"""

from __future__ import annotations


import numpy as np
import pytest

from attention_book.attention import (
    causal_mask,
    projection_weights,
    scaled_dot_product_attention,
)
from attention_book import controls
from attention_book.controls import lab as book_lab, live_lab
from attention_book.controls.live import LiveLab
from attention_book.embedding import embed, embedding_table
from attention_book.plots import PermutationView, permutation_view
from attention_book.positional import sinusoidal_encoding
from attention_book.permutation import PERMUTATION_NAMES, named_permutation
from attention_book.scenes import (
    ORDER_CHOICES,
    SCENES,
    permutation_alt_text,
    permutation_readout_html,
    permutation_state,
)
from attention_book.tokens import RUNNING_SENTENCE, Vocabulary, tokenize

PermutationLab = LiveLab
SCENE = SCENES["permutation"]


def permutation_widget(**values):
    return live_lab("permutation", **values)


D = 8


def expected(text, perm, pe, causal):
    """(P X_in, P A P^T, P f(X)), ((PX)_in, A(PX), f(PX)) straight from the math layer."""
    vocab = Vocabulary.default()
    x = embed(vocab.encode(tokenize(text)), embedding_table(len(vocab), D, 0))  # (s, d)
    s = x.shape[0]
    W_q, W_k, W_v = projection_weights(D, D, seed=0)
    add = sinusoidal_encoding(s, D) if pe else 0.0
    mask = causal_mask(s) if causal else None

    def f(a):
        return scaled_dot_product_attention(a @ W_q, a @ W_k, a @ W_v, mask=mask)
    perm = np.asarray(perm)
    out, w = f(x + add)
    out_p, w_p = f(x[perm] + add)
    return ((x + add)[perm], w[perm][:, perm], out[perm]), (x[perm] + add, w_p, out_p)


def assert_shows(lab: PermutationLab, text, perm, pe, causal):
    after, before = expected(text, perm, pe, causal)
    view = lab.view
    for panel, want in zip((*view.after, *view.before), (*after, *before)):
        np.testing.assert_allclose(np.asarray(panel.image.get_array()), want, atol=1e-12)
    diff = np.abs(before[2] - after[2])
    np.testing.assert_allclose(np.asarray(view.difference.image.get_array()), diff,
                               atol=1e-12)
    tokens = tokenize(text)
    words = [tokens[j] for j in perm]
    if len(tokens) <= 16:
        assert list(view.after[0].row_labels.texts) == words
        assert list(view.before[1].col_labels.texts) == words
    np.testing.assert_array_equal(lab.state.perm, perm)
    verdict = "yes" if diff.max() <= 1e-9 else "no"
    assert f"equivariant: {verdict} (max error {diff.max():.1e})" in lab.readout.value


def artists(lab):
    return [(p.image, p.ax, p.colorbar) for p in lab.view.panels]


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


def test_widget_starts_reversed_and_equivariant():
    lab = permutation_widget()
    assert isinstance(lab, PermutationLab)
    assert_shows(lab, RUNNING_SENTENCE, [4, 3, 2, 1, 0], False, False)
    assert "f(PX) and f(X) hold the same rows up to order: yes" in lab.readout.value
    for control in lab.controls.values():
        assert control.description


def test_every_control_updates_in_place():
    lab = permutation_widget()
    before = artists(lab)
    figure = lab.figure
    c = lab.controls

    c["pe"].value = True
    assert_shows(lab, RUNNING_SENTENCE, [4, 3, 2, 1, 0], True, False)
    assert "equivariant: no" in lab.readout.value
    assert lab.view.before[0].ax.get_title() == "$PX + PE$"
    c["pe"].value = False
    c["causal"].value = True
    assert_shows(lab, RUNNING_SENTENCE, [4, 3, 2, 1, 0], False, True)
    c["causal"].value = False
    for _label, name in ORDER_CHOICES:
        if name in ("custom", "shuffle"):
            continue
        c["order"].value = name
        assert_shows(lab, RUNNING_SENTENCE, named_permutation(name, 5), False, False)
    c["order"].value = "shuffle"
    c["seed"].value = 7
    assert_shows(lab, RUNNING_SENTENCE, named_permutation("shuffle", 5, 7), False, False)
    c["order"].value = "custom"
    c["custom"].value = "1 0 2 4 3"
    assert_shows(lab, RUNNING_SENTENCE, [1, 0, 2, 4, 3], False, False)
    c["custom"].value = "1 0 2 4"
    assert "type 5 positions, got 4" in lab.readout.value
    np.testing.assert_array_equal(lab.state.perm, np.arange(5))
    c["text"].value = "the dog bit the man"
    c["custom"].value = "0 4 2 3 1"
    assert_shows(lab, "the dog bit the man", [0, 4, 2, 3, 1], False, False)
    # "the man bit the dog": output rows are the same set without PE, not with it
    assert "same rows up to order: yes" in lab.readout.value
    c["pe"].value = True
    assert "same rows up to order: no" in lab.readout.value
    assert artists(lab) == before and lab.figure is figure  # nothing re-plotted


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_shuffle_button_selects_shuffle_and_moves_the_seed():
    lab = permutation_widget()
    lab.buttons[0].click()
    assert lab.controls["order"].value == "shuffle" and lab.controls["seed"].value == 1
    assert_shows(lab, RUNNING_SENTENCE, named_permutation("shuffle", 5, 1), False, False)
    lab.buttons[0].click()
    assert lab.controls["seed"].value == 2
    assert_shows(lab, RUNNING_SENTENCE, named_permutation("shuffle", 5, 2), False, False)
    lab.controls["seed"].value = 99
    lab.buttons[0].click()
    assert lab.controls["seed"].value == 0  # wraps around


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_shuffle_button_redraws_once():
    lab = permutation_widget()
    shown = []
    show = lab.view.show
    lab.view.show = lambda state: (shown.append(state), show(state))
    lab.buttons[0].click()
    assert len(shown) == 1 and shown[0].perm.tolist() == named_permutation(
        "shuffle", 5, 1).tolist()


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_controls_without_effect_are_disabled_with_a_hint():
    lab = permutation_widget()
    c = lab.controls
    assert c["custom"].disabled and c["seed"].disabled
    assert "custom order" in lab.hints["custom"].value and "shuffle" in lab.hints["seed"].value
    c["order"].value = "custom"
    assert not c["custom"].disabled and c["seed"].disabled
    assert lab.hints["custom"].value == ""
    lab.buttons[0].click()
    assert c["custom"].disabled and not c["seed"].disabled


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
    for _, order in ORDER_CHOICES:
        if order == "custom":
            continue
        for pe in (False, True):
            for causal in (False, True):
                st = permutation_state(RUNNING_SENTENCE, order, "", 0, pe, causal)
                want = "yes" if order == "identity" or not (pe or causal) else "no"
                assert f"equivariant: {want}" in permutation_readout_html(st), (order, pe, causal)
                assert f"equivariant: {want}" in permutation_alt_text(st)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_empty_sentence_and_escaping():
    lab = permutation_widget()
    lab.controls["text"].value = ""
    assert lab.state.s == 0
    assert not lab.view.after[0].image.get_visible()
    lab.controls["text"].value = "<b>dog</b> & cat"
    assert "<b>dog" not in lab.readout.value and "&lt;" in lab.readout.value
    lab.controls["order"].value = "custom"
    lab.controls["custom"].value = "<script>"
    assert "<script>" not in lab.readout.value


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_long_sentence_uses_position_indices():
    text = " ".join(["the dog bit the man"] * 8)  # 40 tokens
    lab = permutation_widget(text=text, causal=True)
    assert_shows(lab, text, list(range(39, -1, -1)), False, True)
    assert lab.view.after[0].row_labels.texts[:2] == ("0", "8")


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_bad_arguments():
    with pytest.raises(ValueError, match="order must be one of"):
        permutation_widget(order="sideways")
    with pytest.raises(ValueError, match="seed must be"):
        permutation_widget(seed=500)
    view = permutation_view()
    assert isinstance(view, PermutationView)
    with pytest.raises(ValueError, match="expects 2 rows"):
        view.update(["a", "b"], (np.zeros((2, 8)), np.zeros((3, 3)), np.zeros((2, 8))),
                    (np.zeros((2, 8)),) * 3, np.zeros((2, 8)))


def test_alt_text_and_readout():
    st = permutation_state(pe=True)
    alt = permutation_alt_text(st)
    assert "today, lovely, is, weather, the" in alt and "positional encoding on" in alt
    assert "equivariant: no" in alt
    assert "perm = [4 3 2 1 0]" in permutation_readout_html(st)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_interactive_picks_the_form(monkeypatch):
    monkeypatch.setenv("ATTENTION_BOOK_STATIC", "1")
    monkeypatch.setattr(controls, "web_lab", lambda name: "computed in the browser")
    assert book_lab("permutation") == "computed in the browser"
    monkeypatch.setenv("ATTENTION_BOOK_STATIC", "0")
    assert isinstance(book_lab("permutation"), PermutationLab)


