"""gallery_scores' disk cache (chapter 9's gallery, which the build's data step, chapter 9's
kernel and the tests all read): scores read from disk equal fresh ones bit for bit, and the
cache cannot hide a change: other sentences, an edit to any module the computation runs,
another numpy or model compute again.

Each test has its own cache root (ATTENTION_BOOK_CACHE = a tmp folder) and two short
sentences in place of the gallery's 157 (``load_sentences`` patched). Whether a call computed
is counted by wrapping ``head_scores`` (once per sentence), never timed.
"""

from pathlib import Path

import pytest

from attention_book import diskcache
from attention_book import pretrained as P
from cache_keys import change_code_or_version, package_modules_run

SENTENCES = ["The cat sat on the mat.", "It was too tired."]


@pytest.fixture
def computed(tmp_path, monkeypatch) -> list:
    """The sentences scored from now on (the disk not answering), with an empty cache root
    of this test's own and SENTENCES as the gallery."""
    monkeypatch.setenv(diskcache.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(P, "load_sentences", lambda: list(SENTENCES))
    calls, score = [], P.head_scores

    def counted(maps):
        calls.append(maps.shape)
        return score(maps)

    monkeypatch.setattr(P, "head_scores", counted)
    P.gallery_scores.cache_clear()
    yield calls
    P.gallery_scores.cache_clear()  # the next caller gets the real gallery


def folder(root) -> list:
    """The files in the cache root's gallery folder."""
    return sorted((Path(root) / "gallery").iterdir())


def test_scores_from_disk_equal_fresh_ones(computed, tmp_path):
    fresh = P.gallery_scores()
    assert len(computed) == 2 and len(folder(tmp_path)) == 1  # one file, no temporary one
    P.gallery_scores.cache_clear()
    loaded = P.gallery_scores()
    assert len(computed) == 2  # read from disk
    assert loaded.sentences == fresh.sentences == tuple(SENTENCES)
    assert loaded.lengths.tolist() == fresh.lengths.tolist()
    assert list(loaded.scores) == list(fresh.scores)  # the same order: the export's JSON
    for name, array in fresh.scores.items():
        assert loaded.scores[name].dtype == array.dtype and array.shape == (2, 6, 12)
        assert loaded.scores[name].tobytes() == array.tobytes()
        assert not loaded.scores[name].flags.writeable


@pytest.mark.parametrize("change", ["code", "numpy", "model", "sentences"])
def test_a_changed_key_computes_again(change, computed, tmp_path, monkeypatch):
    P.gallery_scores()
    # code: as if block.py (or any module of _GALLERY_CODE) had been edited; numpy
    change_code_or_version(change, monkeypatch)
    if change == "model":
        monkeypatch.setattr(P, "_model_version", lambda: "0.2.0")
    elif change == "sentences":
        monkeypatch.setattr(P, "load_sentences", lambda: SENTENCES[:1] + ["Another one."])
    P.gallery_scores.cache_clear()
    P.gallery_scores()  # not the stale scores
    assert len(computed) == 4 and len(folder(tmp_path)) == 2


def test_the_code_digest_covers_every_module_the_computation_runs(computed):
    """Every module of the package that runs while the scores are computed (the disk
    cache's own aside) is in the key's digest."""
    P._single_thread_run.cache_clear()  # memoised per text: run it afresh
    modules = package_modules_run(P.gallery_scores)
    assert len(computed) == 2  # computed, not loaded
    assert {"attention_book.block", "attention_book.heads"} <= modules  # it saw the package
    missing = modules - {"attention_book.diskcache"} - set(P._GALLERY_CODE)
    assert not missing, missing
