"""head_removal_turns (chapter 9's head removals) and its disk cache: the computation is
deterministic without the cache, a result read from disk equals a fresh one bit for bit,
and the cache cannot hide a change: other arguments, an edit to any module the computation
runs, another numpy or model compute again.

Each test has its own cache root (ATTENTION_BOOK_CACHE = a tmp folder). Whether a call
computed is counted by wrapping ``_removal_turns``, never timed. The runs are small: two
short sentences, heads of the last two layers only (a few block passes each).
"""

import sys
from pathlib import Path

import numpy as np
import pytest

from attention_book import diskcache
from attention_book import pretrained as P
from cache_keys import change_code_or_version, package_modules_run

SENTENCES = ["The cat sat on the mat.", "It was too tired."]
GROUPS = [[(5, 0)], [(4, 1), (5, 11)]]


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """An empty cache root of this test's own; the removal files go to its removal/."""
    monkeypatch.setenv(diskcache.CACHE_ENV, str(tmp_path))
    return tmp_path / "removal"


@pytest.fixture
def computed(monkeypatch) -> list:
    """The arguments of every computation from now on (the disk not answering)."""
    calls, compute = [], P._removal_turns

    def counted(*args):
        calls.append(args)
        return compute(*args)

    monkeypatch.setattr(P, "_removal_turns", counted)
    return calls


@pytest.mark.parametrize("packed", [False, True])
def test_the_computation_is_deterministic_without_the_cache(packed, folder, computed):
    first = P.head_removal_turns(SENTENCES, GROUPS, packed=packed, cache=False)
    second = P.head_removal_turns(SENTENCES, GROUPS, packed=packed, cache=False)
    assert len(computed) == 2 and not folder.exists()  # cache=False: the disk untouched
    assert first.dtype == np.float32 and first.shape == (2, 2)
    assert first.tobytes() == second.tobytes()
    assert (first > 0).all() and (first < 0.5).all()  # removing heads turns the vector a little


def test_packing_changes_nothing_but_rounding(folder):
    alone = P.head_removal_turns(SENTENCES, GROUPS, cache=False)
    packed = P.head_removal_turns(SENTENCES, GROUPS, packed=True, cache=False)
    assert np.allclose(alone, packed, atol=1e-5)


def test_one_sentence_is_the_chapters_loop(folder):
    """The unpacked result is what chapter 9 computed in its own loop before: the head's
    rows of W^O zeroed, the later layers run, 1 - cos of the mean of the rows."""
    from attention_book.block import without_heads

    model = P.MiniLM.load()
    states = model.hidden_states(SENTENCES[1])  # (7, T, d)

    def vector(rows):
        v = rows.mean(axis=0)
        return v / np.linalg.norm(v)

    rows = without_heads(model.blocks[4], [1])(states[4])
    rows = without_heads(model.blocks[5], [11])(rows)
    expected = 1 - vector(rows) @ vector(states[-1])
    got = P.head_removal_turns(SENTENCES[1:], GROUPS[1:], cache=False)
    assert got.shape == (1, 1) and np.isclose(got[0, 0], expected, rtol=1e-4, atol=1e-7)


def test_a_result_from_disk_equals_a_fresh_one(folder, computed):
    saved = P.head_removal_turns(SENTENCES, GROUPS)  # computes, saves
    loaded = P.head_removal_turns(SENTENCES, GROUPS)  # loads
    assert len(computed) == 1
    assert [p.parent for p in folder.iterdir()] == [folder]  # one file, no temporary one
    assert (loaded.dtype, loaded.shape) == (saved.dtype, saved.shape)
    assert loaded.tobytes() == saved.tobytes()
    assert loaded.tobytes() == P.head_removal_turns(SENTENCES, GROUPS, cache=False).tobytes()


def change_key(change, monkeypatch) -> dict:
    """Change one thing the key depends on; return head_removal_turns' keywords to use."""
    # code: as if block.py (or any module of _REMOVAL_CODE) had been edited; numpy
    change_code_or_version(change, monkeypatch)
    if change == "model":
        monkeypatch.setattr(P, "_model_version", lambda: "0.2.0")
    elif change == "sentences":
        return dict(sentences=SENTENCES[:1] + ["Another sentence."])
    elif change == "groups":
        return dict(groups=GROUPS[:1] + [[(4, 1), (5, 10)]])
    elif change == "packed":
        return dict(packed=True)
    return {}


@pytest.mark.parametrize("change", ["code", "numpy", "model", "sentences", "groups",
                                    "packed"])
def test_a_changed_key_computes_again(change, folder, computed, monkeypatch):
    P.head_removal_turns(SENTENCES, GROUPS)
    keywords = dict(dict(sentences=SENTENCES, groups=GROUPS), **change_key(change, monkeypatch))
    P.head_removal_turns(**keywords)  # e.g. block.py edited: not the stale result
    assert len(computed) == 2 and len(list(folder.iterdir())) == 2
    P.head_removal_turns(**keywords)  # the new result was saved under the new key
    assert len(computed) == 2


def test_the_code_digest_covers_every_module_the_computation_runs(folder):
    """An edit anywhere in the code that computes the turns changes the key: every module
    of the package that runs during a computation is in the digest."""
    modules = package_modules_run(lambda: [P._removal_turns(SENTENCES, GROUPS, causal)
                                           for causal in (True, False)])
    assert "attention_book.block" in modules  # the tracer saw the package
    assert modules <= set(P._REMOVAL_CODE), modules - set(P._REMOVAL_CODE)
    source = Path(sys.modules["attention_book.block"].__file__).read_bytes()
    assert diskcache.module_digest(*P._REMOVAL_CODE) == diskcache.source_digest(
        Path(sys.modules[name].__file__).read_bytes() for name in P._REMOVAL_CODE)
    edited = [source + b"\n" if name == "attention_book.block" else
              Path(sys.modules[name].__file__).read_bytes() for name in P._REMOVAL_CODE]
    assert diskcache.source_digest(edited) != diskcache.module_digest(*P._REMOVAL_CODE)


def test_a_damaged_file_is_computed_again_and_replaced(folder, computed):
    fresh = P.head_removal_turns(SENTENCES, GROUPS)
    (path,) = folder.iterdir()
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])  # truncated
    again = P.head_removal_turns(SENTENCES, GROUPS)
    assert len(computed) == 2 and again.tobytes() == fresh.tobytes()
    P.head_removal_turns(SENTENCES, GROUPS)  # whole again: loaded
    assert len(computed) == 2


def test_a_source_checkout_caches_in_its_build_folder(monkeypatch):
    monkeypatch.setenv(diskcache.CACHE_ENV, "")  # empty: as if unset
    checkout = Path(P.__file__).resolve().parents[2]
    assert diskcache.folder("removal", P.__file__) == checkout / "_build" / "cache" / "removal"


@pytest.mark.parametrize("sentences, groups, match", [
    ([], GROUPS, "sentences must be a non-empty sequence"),
    ("The cat.", GROUPS, "sentences must be a non-empty sequence"),
    ([1], GROUPS, "sentences must be a non-empty sequence"),
    (SENTENCES, [], "at least one group"),
    (SENTENCES, [[]], "at least one group"),
    (SENTENCES, [[(6, 0)]], r"layer in 0\.\.5"),
    (SENTENCES, [[(0, 12)]], r"head in 0\.\.11"),
    (SENTENCES, [[(0, 1.5)]], "whole number"),
    (SENTENCES, [[0]], r"\(layer, head\) pairs"),
])
def test_bad_input_is_refused(sentences, groups, match, folder):
    with pytest.raises(ValueError, match=match):
        P.head_removal_turns(sentences, groups)
