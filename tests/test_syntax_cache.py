"""syntax_scores' disk cache (chapter 9's heads on hand-marked relations, which its kernel and
the tests read): scores read from disk equal fresh ones bit for bit, and the cache cannot
hide a change: other sentences or relations, an edit to any module the computation runs,
another numpy or model compute again.

Each test has its own cache root (ATTENTION_BOOK_CACHE = a tmp folder) and the first three
annotated sentences in place of the 52 (``_relations`` patched). Whether a call computed is
counted by wrapping ``most_attended_word`` (once per sentence), never timed.
"""

import dataclasses
from pathlib import Path

import pytest

from attention_book import diskcache
from attention_book import pretrained as P
from cache_keys import change_code_or_version, package_modules_run

SENTENCES = P.load_relations()[:3]


@pytest.fixture
def computed(tmp_path, monkeypatch) -> list:
    """The sentences scored from now on (the disk not answering), with an empty cache root
    of this test's own and SENTENCES as the annotated sentences."""
    monkeypatch.setenv(diskcache.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(P, "_relations", lambda: tuple(SENTENCES))
    calls, most = [], P.most_attended_word

    def counted(maps):
        calls.append(maps.shape)
        return most(maps)

    monkeypatch.setattr(P, "most_attended_word", counted)
    P.syntax_scores.cache_clear()
    yield calls
    P.syntax_scores.cache_clear()  # the next caller gets the real sentences


def folder(root) -> list:
    return sorted((Path(root) / "syntax").iterdir())


def test_scores_from_disk_equal_fresh_ones(computed, tmp_path):
    fresh = P.syntax_scores()
    assert len(computed) == 3 and len(folder(tmp_path)) == 1  # one file, no temporary one
    P.syntax_scores.cache_clear()
    loaded = P.syntax_scores()
    assert len(computed) == 3  # read from disk
    for part in ("hits", "dependents", "targets", "sentence"):
        mine, theirs = getattr(loaded, part), getattr(fresh, part)
        assert list(mine) == list(theirs) == list(P.RELATIONS)
        for name, array in theirs.items():
            assert mine[name].dtype == array.dtype and mine[name].shape == array.shape
            assert mine[name].tobytes() == array.tobytes()
            assert not mine[name].flags.writeable
    assert fresh.hits["det"].shape[1:] == (6, 12) and fresh.hits["det"].dtype == bool
    for name in P.RELATIONS:
        assert loaded.accuracy(name).tobytes() == fresh.accuracy(name).tobytes()


@pytest.mark.parametrize("change", ["code", "numpy", "model", "sentences", "relations"])
def test_a_changed_key_computes_again(change, computed, tmp_path, monkeypatch):
    P.syntax_scores()
    # code: as if heads.py (or any module of _GALLERY_CODE) had been edited; numpy
    change_code_or_version(change, monkeypatch)
    if change == "model":
        monkeypatch.setattr(P, "_model_version", lambda: "0.2.0")
    elif change == "sentences":
        monkeypatch.setattr(P, "_relations", lambda: tuple(SENTENCES[:2]))
    elif change == "relations":  # the same sentences, one relation fewer
        first = dataclasses.replace(SENTENCES[0], relations=SENTENCES[0].relations[1:])
        monkeypatch.setattr(P, "_relations", lambda: (first, *SENTENCES[1:]))
    P.syntax_scores.cache_clear()
    P.syntax_scores()  # not the stale scores
    assert len(computed) == 3 + (2 if change == "sentences" else 3)
    assert len(folder(tmp_path)) == 2


def test_the_code_digest_covers_every_module_the_computation_runs(computed):
    """Every module of the package that runs while the scores are computed (the disk
    cache's own aside) is in the key's digest."""
    P._single_thread_run.cache_clear()  # memoised per text: run it afresh
    modules = package_modules_run(P.syntax_scores)
    assert len(computed) == 3  # computed, not loaded
    assert {"attention_book.block", "attention_book.heads"} <= modules  # it saw the package
    missing = modules - {"attention_book.diskcache"} - set(P._GALLERY_CODE)
    assert not missing, missing
