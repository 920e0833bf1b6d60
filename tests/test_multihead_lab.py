"""Chapter 4's lab: its state function (scenes/multihead.py) and the lab's two forms.

Expected values come from the math layer directly (MultiHeadAttention, embedding_table,
sinusoidal_encoding), not from the state function under test.
"""

from __future__ import annotations


import pytest

from attention_book import controls
from attention_book.controls import lab as book_lab
from attention_book.controls.widget import LabWidget
from attention_book.scenes import MH_DEFAULT_SEED, SCENES, missing_heads_text, multihead_state
from attention_book.controls import live_lab
from attention_book.tokens import RUNNING_SENTENCE

SCENE = SCENES["multihead"]


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
    assert "32, 64" in missing_heads_text(64)  # divisors left out of the picture


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
