"""Byte-pair encoding's merge loop: the paper's example, invariants, and the tokenizers library."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_book.bpe import END_OF_WORD, BPEMerge, _merge, _split, bpe_segment, learn_bpe, pair_counts

#: The toy corpus of Sennrich et al. (2016), section 3.2: {word: count}.
TOY = {"low": 5, "lower": 2, "newest": 6, "widest": 3}

corpora = st.dictionaries(st.text("abcd", min_size=1, max_size=7), st.integers(1, 9),
                          min_size=1, max_size=6)


def sennrich_reference(counts: dict, n_merges: int) -> list[tuple[str, str]]:
    """The merge loop as the paper prints it (its algorithm 1), with '</w>' glued to the
    last letter as in subword-nmt: counts with a dict, takes max() over it, merges with a
    regular expression."""
    import collections
    import re
    vocab = {" ".join(_split(word)): n for word, n in counts.items()}
    merges = []
    for _ in range(n_merges):
        pairs = collections.defaultdict(int)
        for word, freq in vocab.items():
            symbols = word.split()
            for i in range(len(symbols) - 1):
                pairs[symbols[i], symbols[i + 1]] += freq
        if not pairs:
            break
        best = max(pairs, key=pairs.get)
        bigram = re.escape(" ".join(best))
        p = re.compile(r"(?<!\S)" + bigram + r"(?!\S)")
        vocab = {p.sub("".join(best), word): freq for word, freq in vocab.items()}
        merges.append(best)
    return merges


def test_the_papers_toy_corpus():
    merges, seg = learn_bpe(TOY, 10)
    assert [m.pair for m in merges[:3]] == [("e", "s"), ("es", "t</w>"), ("l", "o")]
    assert [m.count for m in merges] == [9, 9, 7, 6, 6, 6, 5, 3, 3, 3]
    alphabet = {s for w in TOY for s in _split(w)}
    assert len(alphabet) == 11
    assert [m.vocabulary_size for m in merges] == list(range(12, 22))  # one symbol per merge
    assert seg["newest"] == ("newest</w>",) and seg["lower"] == ("lo", "w", "e", "r</w>")
    assert bpe_segment("lowest", merges) == ("lo", "w", "est</w>")  # a word never seen, in pieces
    assert bpe_segment("lowest", learn_bpe(TOY, 11)[0]) == ("low", "est</w>")
    assert merges[0].symbol == "es"


def test_loop_stops_when_every_word_is_one_symbol():
    merges, seg = learn_bpe(TOY, 100)
    assert len(merges) == 13 and all(len(symbols) == 1 for symbols in seg.values())
    assert merges[-1].corpus_length == sum(TOY.values())
    assert learn_bpe(TOY, 0) == ([], {w: _split(w) for w in TOY})


def test_a_list_of_texts_counts_words():
    text = ["low " * 5 + "lower lower", "newest " * 6 + "widest widest widest"]
    assert learn_bpe(text, 13) == learn_bpe(TOY, 13)


def test_overlapping_pairs_merge_left_to_right():
    assert _merge(("a", "a", "a"), ("a", "a")) == ("aa", "a")
    assert pair_counts({("a", "a", "a"): 2})[("a", "a")] == 4


@settings(max_examples=100, deadline=None)
@given(corpora, st.integers(0, 30))
def test_matches_the_papers_algorithm(counts, n):
    assert [m.pair for m in learn_bpe(counts, n)[0]] == sennrich_reference(counts, n)


@settings(max_examples=100, deadline=None)
@given(corpora, st.integers(0, 30))
def test_invariants_of_the_loop(counts, n):
    merges, seg = learn_bpe(counts, n)
    alphabet = len({s for w in counts for s in _split(w)})
    for step, m in enumerate(merges):
        assert m.vocabulary_size == alphabet + step + 1  # each merge adds one symbol
    counts_seen = [m.count for m in merges]
    assert counts_seen == sorted(counts_seen, reverse=True)  # the best count never rises
    lengths = [sum(len(_split(w)) * c for w, c in counts.items())] + [m.corpus_length for m in merges]
    assert all(a > b for a, b in zip(lengths, lengths[1:]))  # each merge shortens the corpus
    for word, symbols in seg.items():
        assert "".join(symbols) == word + END_OF_WORD  # a segmentation spells the word
        assert bpe_segment(word, merges) == symbols  # replaying the merges gives it back


def _tokenizers_merges(counts: dict, n: int) -> list[tuple[str, str]]:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE(end_of_word_suffix=END_OF_WORD))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    alphabet = {s for w in counts for s in _split(w)}
    tok.train_from_iterator([w for w, c in counts.items() for _ in range(c)],
                            trainers.BpeTrainer(vocab_size=len(alphabet) + n, special_tokens=[],
                                                end_of_word_suffix=END_OF_WORD, show_progress=False))
    return [tuple(m) for m in json.loads(tok.to_str())["model"]["merges"]]


@settings(max_examples=60, deadline=None)
@given(corpora)
def test_tokenizers_library_learns_the_same_merges_until_a_tie(counts):
    """Hugging Face's BpeTrainer breaks ties differently (by symbol order), so the two
    agree on every merge up to the first step where two pairs are equally frequent."""
    merges, _ = learn_bpe(counts, 30)
    segmented, untied = {_split(w): c for w, c in counts.items()}, 0
    for m in merges:
        top = sorted(pair_counts(segmented).values())[-2:]
        if len(top) == 2 and top[0] == top[1]:
            break
        segmented = {_merge(s, m.pair): c for s, c in segmented.items()}
        untied += 1
    assert [m.pair for m in merges[:untied]] == _tokenizers_merges(counts, 30)[:untied]


@pytest.mark.parametrize("corpus, n, message", [
    ("low lower", 3, "one string"),
    ([], 3, "no word"),
    ({"low": 0}, 3, "whole number >= 1"),
    ({"low": 1.5}, 3, "whole number >= 1"),
    ({"lo w": 1}, 3, "without spaces"),
    ({"low</w>": 1}, 3, "end-of-word marker"),
    ([3], 3, "texts"),
    (TOY, -1, "n_merges"),
    (TOY, 2.0, "n_merges"),
])
def test_learn_bpe_refuses_bad_input(corpus, n, message):
    with pytest.raises(ValueError, match=message):
        learn_bpe(corpus, n)


@pytest.mark.parametrize("word, merges, message", [
    ("", [], "one word"),
    ("a b", [], "one word"),
    ("a</w>", [], "end-of-word"),
    ("ab", [("a",)], "pair of two symbols"),
])
def test_bpe_segment_refuses_bad_input(word, merges, message):
    with pytest.raises(ValueError, match=message):
        bpe_segment(word, merges)


def test_bpe_segment_accepts_plain_pairs():
    merges = learn_bpe(TOY, 10)[0]
    assert bpe_segment("newer", [m.pair for m in merges]) == bpe_segment("newer", merges)
    assert isinstance(merges[0], BPEMerge)
