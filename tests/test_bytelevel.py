"""Byte-level BPE and the chat template (chapter 10), on the tests' tiny vocabulary (the 256
bytes, three special tokens and 60 merges learned on a few sentences): the pre-tokenizers
against GPT-2's regular expression, the encoder against Hugging Face ``tokenizers`` built
the way SmolLM2's own tokenizer is (Digits, then ByteLevel), decoding as the inverse, and
ChatML against the Jinja template. The real vocabulary is checked against transformers in
tests/test_smollm.py (slow)."""

import jinja2
import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

from attention_book.bpe import ByteLevelBPE, bytes_to_unicode, gpt2_split, smollm_split
from attention_book.chat import chatml, chatml_default_system, is_chatml
from attention_book.smollm import _TINY_TEMPLATE, _tiny_vocabulary

GPT2 = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
#: Held-out strings: punctuation, digits, code, accented letters, emoji, leading spaces.
STRINGS = ["Hello, world!", "  leading spaces", "x = [1,  2,   3]", "naïve café résumé",
           "emoji 😀👍🏽 and 🇫🇷", "def f(x):\n    return x**2  # square\n",
           "It's 3.14159; isn't it? I'll go, we've won, they'd've", "\t\ttabs\r\nand CRLF",
           "日本語のテキスト", "a\u00a0b\u2003c", "  42", "what's up   ", "x²+y³=z⁴ ½ Ⅻ",
           "«quotes» — dashes… “curly”", "'s 'T 'Re", "<|im_start|>user\nhi<|im_end|>",
           "snake_case camelCase", "    \n\n   \t x", "", " ", "The cat sat on the mat."]
#: Any text of characters this Python's Unicode tables know (a character assigned in a later
#: Unicode version, such as U+13460, is "other" to unicodedata and a letter to regex's tables).
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cn")), max_size=40)


@pytest.fixture(scope="module")
def tiny():
    tokens, merges = _tiny_vocabulary(60)
    return ByteLevelBPE(tokens, merges, special=[0, 1, 2], pre_tokenizer="smollm")


@pytest.fixture(scope="module")
def hf(tiny):
    """SmolLM2's tokenizer as its tokenizer.json builds it: Digits(individual) + ByteLevel."""
    merges = [tuple(p) for p in sorted(tiny.ranks, key=tiny.ranks.get)]
    t = Tokenizer(models.BPE(dict(tiny.vocab), merges))
    t.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    t.decoder = decoders.ByteLevel()
    t.add_special_tokens([AddedToken(tiny.tokens[i], special=True, normalized=False)
                          for i in tiny.special])
    return t


def test_bytes_to_unicode():
    spelling = bytes_to_unicode()
    assert len(set(spelling.values())) == 256
    assert spelling[ord(" ")] == "Ġ" and spelling[ord("\n")] == "Ċ" and spelling[ord("a")] == "a"


@pytest.mark.parametrize("text", STRINGS)
def test_gpt2_split_is_the_regular_expression(text):
    assert gpt2_split(text) == GPT2.findall(text)
    assert "".join(smollm_split(text)) == text


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_gpt2_split_is_the_regular_expression_on_any_text(text):
    assert gpt2_split(text) == GPT2.findall(text)


def test_smollm_split_spells_numbers_digit_by_digit():
    assert smollm_split("in 2024") == ["in", " ", "2", "0", "2", "4"]
    assert gpt2_split("in 2024") == ["in", " 2024"]
    assert gpt2_split("I'm  here!") == ["I", "'m", " ", " here", "!"]


@pytest.mark.parametrize("text", STRINGS)
def test_encode_equals_hugging_face(tiny, hf, text):
    ids = tiny.encode(text)
    assert ids == hf.encode(text).ids
    assert tiny.decode(ids) == text  # every byte has a token here: nothing is lost


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_encode_equals_hugging_face_on_any_text(tiny, hf, text):
    ids = tiny.encode(text)
    assert ids == hf.encode(text).ids
    assert tiny.decode(ids) == hf.decode(ids, skip_special_tokens=False) == text


def test_merges_apply_in_order():
    tokens = list(bytes_to_unicode().values()) + ["ab", "bc"]
    first_bc = ByteLevelBPE(tokens, ["b c", "a b"])
    first_ab = ByteLevelBPE(tokens, ["a b", "b c"])
    assert first_bc.merge_word("abc") == ["a", "bc"] and first_ab.merge_word("abc") == ["ab", "c"]
    assert first_ab.merge_word("abab") == ["ab", "ab"] and first_ab.merge_word(" ab") == ["Ġ", "ab"]


def test_special_tokens_are_found_whole(tiny):
    ids = tiny.encode("<|im_start|>user\nhi<|im_end|>")
    assert ids[0] == 1 and ids[-1] == 2 and tiny.decode(ids, skip_special=True) == "user\nhi"


def test_a_byte_without_a_token_is_dropped():
    tokens, merges = _tiny_vocabulary(10)
    missing = bytes_to_unicode()[0x04]
    t = ByteLevelBPE([x for x in tokens if x != missing], merges, pre_tokenizer="gpt2")
    assert t.missing_bytes == (0x04,)
    assert t.decode(t.encode("a\x04b")) == "ab"


def test_half_an_emoji_decodes_to_the_replacement_character(tiny):
    ids = tiny.encode("😀")
    assert len(ids) == 4 and tiny.decode(ids[:2]) == "\ufffd"


def test_errors(tiny):
    with pytest.raises(ValueError, match=r"token id 400 is outside the vocabulary \(0..318\)"):
        tiny.decode([5, 400])
    with pytest.raises(ValueError, match="token ids must be whole numbers"):
        tiny.pieces([1.5])
    with pytest.raises(ValueError, match="text must be a string"):
        tiny.encode(None)
    with pytest.raises(ValueError, match="unknown pre-tokenizer 'llama3'"):
        ByteLevelBPE(tiny.tokens, [], pre_tokenizer="llama3")
    with pytest.raises(ValueError, match=r"merge 0 \('a zz'\) must be two symbols whose join"):
        ByteLevelBPE(tiny.tokens, ["a zz"])


# ------------------------------------------------------------------ ChatML


CONVERSATIONS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
    [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"},
     {"role": "user", "content": "And 3+3?"}],
]


@pytest.mark.parametrize("messages", CONVERSATIONS)
@pytest.mark.parametrize("prompt", [True, False])
def test_chatml_renders_the_files_template(messages, prompt):
    jinja = jinja2.Environment().from_string(_TINY_TEMPLATE)
    want = jinja.render(messages=messages, add_generation_prompt=prompt)
    got = chatml(messages, add_generation_prompt=prompt,
                 default_system=chatml_default_system(_TINY_TEMPLATE))
    assert got == want


def test_chatml_errors():
    assert is_chatml(_TINY_TEMPLATE) and not is_chatml("{{ bos_token }}{{ content }}")
    with pytest.raises(ValueError, match="not ChatML"):
        chatml_default_system("{{ messages }}")
    with pytest.raises(ValueError, match="non-empty list"):
        chatml([])
    with pytest.raises(ValueError, match="each message must be"):
        chatml([{"role": "robot", "content": "beep"}])
    assert np.isscalar(len(chatml(CONVERSATIONS[0])))
