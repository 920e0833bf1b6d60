"""Tokenizer and vocabulary: the running sentence's ids, unknown words, bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_book.tokens import (
    MAX_TEXT_CHARS, RUNNING_IDS, RUNNING_SENTENCE, UNK_TOKEN, Vocabulary, invisible, tokenize,
)

VOCAB = Vocabulary.default()


def test_running_sentence_gets_the_notes_ids():
    assert tokenize(RUNNING_SENTENCE) == ["the", "weather", "is", "lovely", "today"]
    assert VOCAB.encode(tokenize(RUNNING_SENTENCE)).tolist() == [105, 12, 24, 107, 57]
    assert list(RUNNING_IDS) == [105, 12, 24, 107, 57]


def test_case_is_folded_and_punctuation_split():
    assert tokenize("The dog, the DOG!") == ["the", "dog", ",", "the", "dog", "!"]
    assert tokenize("the dog's") == ["the", "dog", "'s"]


def test_unknown_words_map_to_unk():
    ids = VOCAB.encode(tokenize("the zyzzyva is lovely"))
    assert ids.tolist() == [105, VOCAB.unk_id, 24, 107]
    assert VOCAB.words[VOCAB.unk_id] == UNK_TOKEN
    assert not VOCAB.is_known("zyzzyva") and VOCAB.is_known("weather")


def test_html_is_just_characters():
    tokens = tokenize("<script>alert(1)</script>")
    assert tokens[:3] == ["<", "script", ">"] and "alert" in tokens


def test_decode_inverts_encode_for_known_words():
    tokens = tokenize("the cat saw the dog")
    assert VOCAB.decode(VOCAB.encode(tokens)) == tokens


def test_vocabulary_is_consistent():
    assert Vocabulary.default() is VOCAB  # read from disk once, shared by every lab
    assert len(VOCAB) == len(set(VOCAB.words)) == 246
    assert VOCAB.words[:2] == ("<pad>", "<unk>")


#: Characters that draw nothing: zero-width space, ZWNJ, ZWJ, soft hyphen, byte order mark,
#: word joiner, left-to-right mark, bell, escape, delete, a C1 control, a tag character.
INVISIBLE = "\u200b\u200c\u200d\u00ad\ufeff\u2060\u200e\x07\x1b\x7f\x9b\U000e0041"


@pytest.mark.parametrize("ch", list(INVISIBLE))
def test_invisible_characters_are_no_tokens(ch):
    """What the reader cannot see is not a token: the word it sits in stays whole, and a
    text of nothing else is empty (issue 23: they became blank tokens)."""
    assert invisible(ch)
    assert tokenize(f"the{ch} weather") == ["the", "weather"]
    assert tokenize(f"{ch}lo{ch}vely{ch}") == ["lovely"]
    with pytest.raises(ValueError, match="empty"):
        tokenize(ch * 3)


def test_spaces_stay_separators_and_visible_characters_stay():
    """Tab, newline and the other controls that are spaces still separate words; marks and
    symbols that draw something are not dropped."""
    assert tokenize("the\tcat\nsaw\x1cdog\x85ran") == ["the", "cat", "saw", "dog", "ran"]
    assert not any(invisible(ch) for ch in " \t\n\r\x0b\x0c\x1c\x85\u2028\u00a0")
    assert tokenize("café \u0301 \u00b2 \U0001f600") == ["café", "\u0301", "\u00b2", "\U0001f600"]


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("   \n\t ", "empty"),
    ("x" * (MAX_TEXT_CHARS + 1), "limit"),
    (None, "must be a string"),
    (42, "must be a string"),
])
def test_tokenize_refuses_bad_text(text, message):
    with pytest.raises(ValueError, match=message):
        tokenize(text)


def test_very_long_text_within_limit_is_fine():
    assert len(tokenize("the " * 20_000)) == 20_000


@pytest.mark.parametrize("tokens, message", [
    ([], "empty"),
    ("the weather", "list of tokens"),
])
def test_encode_refuses_bad_tokens(tokens, message):
    with pytest.raises(ValueError, match=message):
        VOCAB.encode(tokens)


@pytest.mark.parametrize("ids, message", [
    ([0, 246], "0..245"),
    ([-1], "0..245"),
    (np.array([1.0]), "integers"),
    (np.zeros((2, 2), dtype=int), "1-D"),
])
def test_decode_refuses_bad_ids(ids, message):
    with pytest.raises(ValueError, match=message):
        VOCAB.decode(ids)


@pytest.mark.parametrize("words, message", [
    (("a", "b"), "must start with"),
    (("<pad>", "<unk>", "a", "a"), "repeated"),
])
def test_vocabulary_refuses_bad_word_lists(words, message):
    with pytest.raises(ValueError, match=message):
        Vocabulary(words)


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=200))
def test_any_text_gives_tokens_or_a_clear_error(text):
    try:
        tokens = tokenize(text)
    except ValueError as err:
        assert "empty" in str(err)
        assert all(ch.isspace() or invisible(ch) for ch in text)
        return
    ids = VOCAB.encode(tokens)
    assert ids.shape == (len(tokens),)
    assert ((ids >= 0) & (ids < len(VOCAB))).all()
    assert all(t and not t.isspace() for t in tokens)
    assert not any(invisible(ch) for t in tokens for ch in t)
