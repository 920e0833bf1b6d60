"""Chapter 4's lab: its state function (scenes/multihead.py) and the lab's two forms.

Expected values come from the math layer directly (MultiHeadAttention, embedding_table,
sinusoidal_encoding), not from the state function under test.
"""

from __future__ import annotations


import numpy as np
import pytest

from attention_book import controls
from attention_book import multihead as M
from attention_book.embedding import embed, embedding_table
from attention_book.positional import sinusoidal_encoding
from attention_book.controls import lab as book_lab
from attention_book.controls.widget import LabWidget
from attention_book.scenes import MH_DEFAULT_SEED, SCENES, missing_heads_text, multihead_state
from attention_book.controls import live_lab
from attention_book.tokens import RUNNING_SENTENCE, Vocabulary, tokenize
from js_view import views

SCENE = SCENES["multihead"]


def expected(d, h, seed, positional=False, text=RUNNING_SENTENCE):
    """The math layer's multi-head attention of ``text``: the module, X:(s, d), the output
    (s, d) and the weights (h, s, s)."""
    vocab = Vocabulary.default()
    X = embed(vocab.encode(tokenize(text)), embedding_table(len(vocab), d, seed))  # (s, d)
    if positional:
        X = X + sinusoidal_encoding(len(X), d)  # (s, d) + (s, d)
    mha = M.MultiHeadAttention.from_seed(d, h, seed=seed, bias=True)
    out, w = mha(X)
    return mha, X, out, w


@pytest.mark.parametrize("values", [
    {}, {"d": 12}, {"h": 4}, {"seed": 3}, {"positional": True}, {"heads_on": (1,)},
    {"text": "the dog saw the cat"}, {"d": 8, "h": 8, "heads_on": (0, 3)}, {"heads_on": ()},
])
def test_state_is_the_math_layers_multihead_attention(values):
    """Every head's weights, the output and the output of the heads switched on are
    MultiHeadAttention's (the check the matplotlib lab's tests made on its tiles)."""
    v = {**SCENE.defaults, **values}
    v["heads_on"] = values.get("heads_on", tuple(range(v["h"])))
    st = multihead_state(**v)
    mha, X, out, w = expected(v["d"], v["h"], v["seed"], v["positional"], v["text"])
    np.testing.assert_allclose(st.X, X, atol=1e-12)
    np.testing.assert_allclose(st.weights, w, atol=1e-12)  # (h, s, s)
    np.testing.assert_allclose(st.output, out, atol=1e-12)
    contrib, _ = mha.head_contributions(X)  # (h, s, d)
    on = list(v["heads_on"])
    np.testing.assert_allclose(st.on_output, contrib[on].sum(axis=0) + mha.b_o, atol=1e-12)
    np.testing.assert_allclose(st.off_output, out - st.on_output, atol=1e-12)
    assert st.on == tuple(i in on for i in range(v["h"]))


def test_the_readout_traces_every_shape_for_the_controls():
    """The shape tracer the reader reads (the module's readout of Python's states)."""
    default, wide, short, empty = (view["readout"] for view in views("multihead", *(
        multihead_state(**kw) for kw in ({}, {"d": 12, "h": 3}, {"text": "the cat"}, {"text": ""}))))
    assert "(1, 5, 2, 4)" in default and "(1, 2, 5, 4)" in default
    assert "(1, 5, 3, 4)" in wide and "(1, 3, 5, 5)" in wide and "(1, 5, 12)" in wide
    assert "(1, 2, 2, 4)" in short
    assert "(1, 0, 8)" in empty and "(1, 2, 0, 0)" in empty and "(1, 0, 2, 4)" in empty
    assert "s=0" in empty and "no tokens: s = 0" in empty and "(1, 1, " not in empty


def test_the_lab_suggests_the_repeated_word_sentence():
    from attention_book.scenes import MH_SENTENCES

    assert "the dog saw the cat" in MH_SENTENCES
    assert SCENE.control("text").suggestions == MH_SENTENCES[1:]  # the default aside
    for values in SCENE.suggested:  # each state the chapter names is a valid state
        st = multihead_state(**{**SCENE.defaults, **values})
        assert st.h == values.get("h", 2)


def test_missing_heads_text_quotes_the_api_error():
    text = missing_heads_text(8)
    assert "1, 2, 4, 8" in text and "3, 5, 6, 7" in text
    assert "h=3 does not divide d=8" in text
    assert "h = 32, 64 divide d too but are left out" in missing_heads_text(64)  # past the picture
    assert "h = 32 divides d too but is left out" in missing_heads_text(32)  # one: singular


def test_interactive_picks_the_browser_lab_in_a_static_build(monkeypatch):
    monkeypatch.setenv("ATTENTION_BOOK_STATIC", "1")
    monkeypatch.setattr(controls, "web_lab", lambda name: ("web", name))
    assert book_lab("multihead") == ("web", "multihead")
    monkeypatch.delenv("ATTENTION_BOOK_STATIC")
    assert isinstance(book_lab("multihead"), LabWidget)


def test_default_seed_gives_heads_that_differ():
    # at seed 0 the default state's two heads were near copies (correlation 0.94)
    from attention_book.multihead import head_correlations
    assert SCENE.defaults["seed"] == MH_DEFAULT_SEED == multihead_state().seed
    assert abs(head_correlations(multihead_state().weights)[0, 1]) < 0.1
    assert head_correlations(multihead_state(seed=0).weights)[0, 1] > 0.9


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_state_errors_and_lab_errors():
    with pytest.raises(ValueError, match="h=3 does not divide d=8"):
        multihead_state(RUNNING_SENTENCE, 8, 3)
    with pytest.raises(ValueError, match="head index 5"):
        multihead_state(RUNNING_SENTENCE, 8, 2, heads_on=(5,))
    with pytest.raises(ValueError, match="h=3 does not divide d=8"):
        live_lab("multihead", d=8, h=3)
    with pytest.raises(ValueError, match="d must be one of"):
        live_lab("multihead", d=10)
    with pytest.raises(ValueError, match="h must be one of"):
        live_lab("multihead", d=64, h=32)
