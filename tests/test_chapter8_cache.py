"""Chapter 8's two disk caches beside the trained runs: the head scores at every checkpoint
(``TinyRun.score_history``, ``_build/cache/scores``) and the prompts' continuations
(``scenes.generation.continuations``, ``_build/cache/continuation``), which the chapter's
second execution (JupyterLab's, after the build's), its lab and the tests read. Read from
disk they equal a fresh computation bit for bit; the cache cannot hide a change: other
weights, arguments, an edit to any module the computation runs, another numpy or torch
compute again; and the key's list of modules holds every module the computation runs.

Each test has its own cache root (ATTENTION_BOOK_CACHE = a tmp folder) and tiny runs (3
steps, 2 checkpoints, each trained once in this process): they stand for chapter 8's runs,
and ``generation_run`` is patched to return the tiny induction run. Whether a call computed
is counted by wrapping the function that computes, never timed.
"""

import dataclasses
import functools
from pathlib import Path

import numpy as np
import pytest

from attention_book import decoding, diskcache
from attention_book import training as T
from attention_book.scenes import generation as G
from cache_keys import change_code_or_version, package_modules_run

pytestmark = pytest.mark.slow  # trains tiny models (torch: 1-2 s a process's first)


@functools.cache
def _trained(task, seed, positions):
    return T.train_tiny(task, seed=seed, steps=3, checkpoints=2, positions=positions,
                        cache=False)


def tiny(task="reverse", seed=9, positions=True):
    """A tiny run trained in this process (never from a disk cache), as a new TinyRun with
    nothing memoised: each test trains each once."""
    return dataclasses.replace(_trained(task, seed, positions), _nets={})


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    """An empty cache root of this test's own."""
    monkeypatch.setenv(diskcache.CACHE_ENV, str(tmp_path))
    return tmp_path


def files(root: Path, name: str) -> list:
    return sorted((root / name).glob("*.npz")) if (root / name).exists() else []


# ---------------------------------------------------------------- head scores at every checkpoint


@pytest.fixture
def scored(monkeypatch) -> list:
    """The (step) of every head_scores computation from now on."""
    calls, compute = [], T.TinyRun._head_scores

    def counted(self, n, step, period):
        calls.append(step)
        return compute(self, n, step, period)

    monkeypatch.setattr(T.TinyRun, "_head_scores", counted)
    return calls


@pytest.mark.parametrize("task", ["reverse", "induction"])
def test_score_history_from_disk_equals_a_fresh_one(task, root, scored):
    run = tiny(task)
    steps, fresh = run.score_history()
    assert len(scored) == len(run.steps) == 2 and len(files(root, "scores")) == 1
    again = tiny(task)  # the same weights, nothing memoised
    steps_again, loaded = again.score_history()
    assert len(scored) == 2  # read from disk
    assert steps_again.tolist() == steps.tolist() == run.steps
    assert list(loaded) == list(fresh)  # the same scores, in the same order
    for name, array in fresh.items():
        assert loaded[name].dtype == array.dtype and loaded[name].shape == array.shape
        assert loaded[name].tobytes() == array.tobytes()
        # and head_scores at each checkpoint answers with the same numbers, uncomputed
        for c, step in enumerate(run.steps):
            assert again.head_scores(step=step)[name].tobytes() == array[c].tobytes()
    assert len(scored) == 2


@pytest.mark.parametrize("change", ["weights", "config", "code", "numpy", "torch"])
def test_a_changed_score_key_computes_again(change, root, scored, monkeypatch):
    tiny().score_history()
    run = tiny()
    if change == "weights":
        run = tiny(seed=10)
    elif change == "config":
        run = tiny(positions=False)
    else:  # code: as if heads.py (or any module of _SCORE_CODE) had been edited
        assert change_code_or_version(change, monkeypatch)
    run.score_history()
    assert len(scored) == 4 and len(files(root, "scores")) == 2


def test_the_score_digest_covers_every_module_the_scores_run(root, scored):
    run = tiny("induction")
    modules = package_modules_run(run.score_history)
    assert len(scored) == 2  # computed, not loaded
    assert {"attention_book.heads", "attention_book.block"} <= modules  # it saw the package
    assert not modules - {"attention_book.diskcache"} - set(T._SCORE_CODE)


def test_head_scores_are_computed_once_and_given_as_new_arrays(root, scored):
    run = tiny()
    first = run.head_scores(step=0)
    first["anti_diagonal"][:] = -1  # the caller's to change
    again = run.head_scores(step=0)
    assert len(scored) == 1 and again["anti_diagonal"].min() >= 0
    assert run.head_scores()["self"].tobytes() == run.head_scores(step=run.steps[-1])[
        "self"].tobytes() and len(scored) == 2  # None is the last checkpoint
    run.head_scores(n=64)
    assert len(scored) == 3
    with pytest.raises(ValueError, match="no checkpoint at step 1"):
        run.head_scores(step=1)
    with pytest.raises(ValueError, match="period only applies"):
        run.head_scores(period=8)


# ---------------------------------------------------------------- continuations


@pytest.fixture
def generated(monkeypatch) -> list:
    """A tiny induction run as the generation run, and the prompts of every continuation
    generated from now on."""
    run = tiny("induction")
    monkeypatch.setattr(G, "generation_run", lambda weights="float32": run)
    calls, generate = [], decoding.generate

    def counted(step, prompt, n, **options):
        calls.append(tuple(prompt))
        return generate(step, prompt, n, **options)

    monkeypatch.setattr(decoding, "generate", counted)
    return calls


PROMPTS = [((4, 9, 2, 7, 4, 9), 8), ((1, 2, 3, 1, 2), 10), ((5,), 23)]
LAST = 1  # the tiny run's last checkpoint (steps 0 and 3)


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_continuations_from_disk_equal_the_chapters_loop(temperature, root, generated):
    seeds = [3, 4, 5] if temperature else None
    first = G.continuations(PROMPTS, temperature, seeds, LAST)
    assert len(generated) == 3 and len(files(root, "continuation")) == 1
    again = G.continuations(PROMPTS, temperature, seeds, LAST)
    assert len(generated) == 3  # read from disk
    net = G.generation_run().numpy_model()  # the last checkpoint's
    for k, (prompt, n) in enumerate(PROMPTS):  # what chapter 8's loop computed before
        expected = decoding.generate(net.decoder(), np.array(prompt), n,
                                     temperature=temperature,
                                     seed=seeds[k] if temperature else None)[0]
        for got in (first[k], again[k]):
            assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()
    assert [len(c) for c in again] == [n for _, n in PROMPTS]


@pytest.mark.parametrize("change", ["prompts", "temperature", "seeds", "checkpoint", "code",
                                    "numpy", "torch"])
def test_a_changed_continuation_key_computes_again(change, root, generated, monkeypatch):
    prompts, temperature, seeds, checkpoint = PROMPTS, 1.0, [3, 4, 5], LAST
    G.continuations(prompts, temperature, seeds, checkpoint)
    if change == "prompts":
        prompts = [((4, 9, 2, 7, 4, 8), 8), *PROMPTS[1:]]
    elif change == "temperature":
        temperature = 2.0
    elif change == "seeds":
        seeds = [3, 4, 6]
    elif change == "checkpoint":
        checkpoint = 0
    else:
        assert change_code_or_version(change, monkeypatch)
    G.continuations(prompts, temperature, seeds, checkpoint)
    assert len(generated) == 6 and len(files(root, "continuation")) == 2


def test_the_continuation_digest_covers_every_module_the_generation_runs(root, generated):
    modules = package_modules_run(lambda: G.continuations(PROMPTS, 1.0, [3, 4, 5], LAST))
    assert len(generated) == 3  # computed, not loaded
    assert {"attention_book.decoding", "attention_book.masking"} <= modules
    assert not modules - {"attention_book.diskcache"} - set(G._CONTINUATION_CODE)


def test_continuations_say_what_is_wrong(root, generated):
    with pytest.raises(ValueError, match="one seed a prompt"):
        G.continuations(PROMPTS, 1.0, [1], LAST)
    with pytest.raises(ValueError, match="needs a seed"):
        G.continuations(PROMPTS, 1.0, None, LAST)
    with pytest.raises(ValueError, match="checkpoint"):
        G.continuations(PROMPTS, checkpoint=5)
    assert G.continuations([], checkpoint=LAST) == []
