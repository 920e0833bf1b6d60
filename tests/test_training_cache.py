"""train_tiny's disk cache: a run loaded from disk equals a fresh training bit for bit, the
key follows the training code and the versions, a damaged file is trained again and
replaced, cache=False leaves the disk alone, and a second process loads what the first
one trained.

Each test has its own cache folder (ATTENTION_BOOK_CACHE = a tmp folder, runs in its train/) and calls the disk
layer, ``_load_or_train``, directly: train_tiny's in-process memo would answer a second
call before the disk is asked. Whether a call trained is counted by wrapping ``_train``
(in this process) or read from the ``attention_book.training`` log (in a fresh one), never
timed. The runs are tiny (3 steps, 2 checkpoints: 0.1-0.3 s, ~1 s for a process's first
training), but every test that trains is marked slow, as in test_training.py.
"""

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from attention_book import training as T

SMALL = dict(seed=9, steps=3, checkpoints=2)  # train_tiny's keywords for a tiny run
RUNS = {  # small runs that cover every kind of config value (None, int, bool, causal)
    "reverse": dict(task="reverse", **SMALL),
    "reverse, no positions": dict(task="reverse", **SMALL, positions=False),
    "induction, period 8": dict(task="induction", seed=9, steps=2, checkpoints=[1], period=8),
}


def arguments(task, seed=0, n_layers=None, n_heads=None, period=None, steps=None,
              checkpoints=T.N_CHECKPOINTS, positions=True) -> tuple:
    """_train's arguments for train_tiny's."""
    return T._arguments(task, seed, n_layers, n_heads, period, steps, checkpoints, positions)


ARGS = arguments("reverse", **SMALL)


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """An empty disk cache of this test's own."""
    monkeypatch.setenv(T.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache" / "train"


@pytest.fixture
def trainings(monkeypatch) -> list:
    """The arguments of every _train call from now on (the training loop entered)."""
    calls, train = [], T._train

    def counted(*args):
        calls.append(args)
        return train(*args)

    monkeypatch.setattr(T, "_train", counted)
    return calls


def cache_path(args=ARGS) -> Path:
    return T._cache_file(args)[0]


def assert_same_run(fresh, loaded, same_training=True):
    """Everything a TinyRun holds is equal, arrays bit for bit, and the models compute
    the same; train_seconds too if loaded is fresh's own training, saved and loaded."""
    assert (loaded.task, loaded.seed, loaded.accuracy) == (fresh.task, fresh.seed,
                                                          fresh.accuracy)
    assert (loaded.train_seconds == fresh.train_seconds) is same_training
    assert loaded.config == fresh.config
    assert [type(v) for v in loaded.config.values()] == [type(v) for v in fresh.config.values()]
    assert_same_arrays(fresh.history, loaded.history)
    assert_same_arrays({"example": fresh.example}, {"example": loaded.example})
    assert loaded.steps == fresh.steps
    for (_, a), (_, b) in zip(fresh.checkpoints, loaded.checkpoints):
        assert_same_arrays(a, b)
    # the torch model: same weights, flags and outputs
    assert_same_arrays(T._numpy_state(fresh.model), T._numpy_state(loaded.model))
    assert loaded.model.training is fresh.model.training is False
    assert [(p.requires_grad, p.grad) for p in loaded.model.parameters()] == [
        (p.requires_grad, p.grad) for p in fresh.model.parameters()]
    x = T.make_batch(fresh.task, 16, 3, period=fresh.config["period"]).tokens
    with torch.no_grad():
        assert torch.equal(fresh.model(torch.as_tensor(x)), loaded.model(torch.as_tensor(x)))
    for step in (None, fresh.steps[0]):
        assert np.array_equal(fresh.predict(x, step), loaded.predict(x, step))
        assert np.array_equal(fresh.attention(x, step), loaded.attention(x, step))


def assert_same_arrays(a: dict, b: dict):
    assert list(a) == list(b)
    for name in a:
        assert (a[name].dtype, a[name].shape) == (b[name].dtype, b[name].shape), name
        assert a[name].tobytes() == b[name].tobytes(), name


# ---------------------------------------------------------------- where, and the key


def test_the_environment_variable_names_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(T.CACHE_ENV, str(tmp_path))  # the root of every disk cache
    assert T._cache_folder() == tmp_path / "train"
    assert cache_path().parent == tmp_path / "train" and cache_path().suffix == ".npz"


def test_a_source_checkout_caches_in_its_build_folder(monkeypatch):
    monkeypatch.setenv(T.CACHE_ENV, "")  # empty: as if unset
    checkout = Path(T.__file__).resolve().parents[2]  # tests run from a checkout
    assert (checkout / "_config.yml").is_file()
    assert T._cache_folder() == checkout / "_build" / "cache" / "train"  # make clean drops it


def test_an_installed_package_has_no_disk_cache(tmp_path, monkeypatch):
    monkeypatch.delenv(T.CACHE_ENV, raising=False)
    site = tmp_path / "lib" / "site-packages" / "attention_book"
    site.mkdir(parents=True)
    monkeypatch.setattr(T, "__file__", str(site / "training.py"))
    assert T._cache_folder() is None and T._cache_file(ARGS) is None


def test_the_code_digest_is_the_training_source():
    source = Path(T.__file__).read_bytes()
    mask = Path(sys.modules[T.causal_mask.__module__].__file__).read_bytes()
    assert T._CODE_DIGEST == T._source_digest([source, mask])
    edited = source.replace(b"LR = 3e-3", b"LR = 3e-4")
    assert edited != source and T._source_digest([edited, mask]) != T._CODE_DIGEST
    assert T._source_digest([source, mask + b"\n"]) != T._CODE_DIGEST


@pytest.mark.parametrize("change", ["code", "torch", "numpy", "cpu", "arguments"])
def test_the_key_follows_code_versions_and_arguments(change, folder, monkeypatch):
    before = cache_path()
    assert cache_path() == before  # the same inputs, the same file
    args = change_key(change, monkeypatch)
    assert cache_path(args) != before


def change_key(change, monkeypatch) -> tuple:
    """Change one thing the cache key depends on; return the _train arguments to use."""
    if change == "code":  # as if training.py had been edited
        monkeypatch.setattr(T, "_CODE_DIGEST", T._source_digest([b"edited"]))
    elif change == "torch":
        monkeypatch.setattr(torch, "__version__", "2.99.0+cpu")
    elif change == "numpy":
        monkeypatch.setattr(np, "__version__", "9.9.9")
    elif change == "cpu":
        monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "DEFAULT")
    else:
        return arguments("reverse", **dict(SMALL, checkpoints=3))  # one more checkpoint
    return ARGS


def test_unreadable_code_means_no_disk_cache(folder, monkeypatch):
    monkeypatch.setattr(T, "_CODE_DIGEST", None)
    assert T._cache_file(ARGS) is None


# ---------------------------------------------------------------- loading and saving


@pytest.mark.slow  # trains (a few steps)
@pytest.mark.parametrize("name", list(RUNS))
def test_a_run_from_disk_equals_a_fresh_training(name, folder, trainings):
    args = arguments(**RUNS[name])
    saved = T._load_or_train(*args)  # trains, saves
    loaded = T._load_or_train(*args)  # loads
    assert len(trainings) == 1 and loaded is not saved
    assert [p.name for p in folder.iterdir()] == [cache_path(args).name]  # no temporary file
    assert_same_run(saved, loaded)
    assert_same_run(T.train_tiny(**RUNS[name], cache=False), loaded, same_training=False)


@pytest.mark.slow  # trains twice
@pytest.mark.parametrize("change", ["code", "torch", "numpy", "cpu"])
def test_a_changed_key_trains_again(change, folder, trainings, monkeypatch):
    T._load_or_train(*ARGS)
    change_key(change, monkeypatch)
    T._load_or_train(*ARGS)  # e.g. training.py edited: not the stale run
    assert len(trainings) == 2 and len(list(folder.iterdir())) == 2
    T._load_or_train(*ARGS)  # the new run was saved under the new key
    assert len(trainings) == 2


def _garbage(path):
    path.write_bytes(b"not a zip file at all")


def _truncated(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _other_key(path):  # a well-formed file of another run (a name collision)
    with np.load(path) as data:
        arrays = dict(data)
    meta = json.loads(str(arrays["meta"][()]))
    arrays["meta"] = np.array(json.dumps(dict(meta, key=meta["key"].replace("9", "8"))))
    with open(path, "wb") as out:
        np.savez(out, **arrays)


def _pickled(path):  # loading must not unpickle: allow_pickle=False refuses it
    with open(path, "wb") as out:
        np.savez(out, meta=np.array([{"key": "x"}], dtype=object))


def _missing_array(path):
    with np.load(path) as data:
        arrays = {k: v for k, v in data.items() if not k.startswith("checkpoint1/")}
    with open(path, "wb") as out:
        np.savez(out, **arrays)


@pytest.mark.slow  # trains twice
@pytest.mark.parametrize("damage", [_garbage, _truncated, _other_key, _pickled,
                                    _missing_array])
def test_a_damaged_file_is_trained_again_and_replaced(damage, folder, trainings):
    fresh = T._load_or_train(*ARGS)
    damage(cache_path())
    again = T._load_or_train(*ARGS)  # no crash: trains again ...
    assert len(trainings) == 2
    assert_same_run(fresh, again, same_training=False)
    loaded = T._load_or_train(*ARGS)  # ... and the file is whole again
    assert len(trainings) == 2
    assert_same_run(again, loaded)


@pytest.mark.slow  # trains
def test_a_failed_write_leaves_no_file(folder, trainings, monkeypatch):
    def disk_full(out, **arrays):
        out.write(b"half a file")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", disk_full)
    run = T._load_or_train(*ARGS)  # the run is still returned
    assert run.steps == [0, 3]
    assert list(folder.iterdir()) == []  # neither the half file nor the temporary one


@pytest.mark.slow  # trains
def test_an_unwritable_folder_only_loses_the_disk_cache(tmp_path, monkeypatch, trainings):
    (tmp_path / "a file").write_text("")
    monkeypatch.setenv(T.CACHE_ENV, str(tmp_path / "a file" / "cache"))  # cannot be made
    assert T._load_or_train(*ARGS).steps == [0, 3]
    assert T._load_or_train(*ARGS).steps == [0, 3]
    assert len(trainings) == 2


@pytest.mark.slow  # trains
def test_cache_false_neither_reads_nor_writes_the_disk(folder, trainings):
    T._load_or_train(*ARGS)
    path = cache_path()
    with np.load(path) as data:  # a cached run that differs from the true one
        arrays = dict(data)
    arrays["history/loss"] = arrays["history/loss"] + 1.0
    with open(path, "wb") as out:
        np.savez(out, **arrays)
    tampered, stamp = path.read_bytes(), path.stat().st_mtime_ns
    assert T._load_or_train(*ARGS).history["loss"][0] == arrays["history/loss"][0]  # read
    run = T.train_tiny("reverse", **SMALL, cache=False)
    assert run.history["loss"][0] == arrays["history/loss"][0] - 1.0  # trained, not read
    assert len(trainings) == 2
    assert (path.read_bytes(), path.stat().st_mtime_ns) == (tampered, stamp)  # not written
    assert list(folder.iterdir()) == [path]


@pytest.mark.slow  # trains
def test_the_memo_sits_on_top_of_the_disk(folder, trainings):
    run = T.train_tiny("reverse", **SMALL, n_heads=4)  # arguments no other test memoises
    assert T.train_tiny("reverse", **SMALL, n_heads=4) is run
    assert len(trainings) == 1 and len(list(folder.iterdir())) == 1


# ---------------------------------------------------------------- one kernel after another

CHILD = textwrap.dedent("""
    import logging, sys
    log = logging.getLogger("attention_book.training")
    log.addHandler(logging.StreamHandler(sys.stdout))
    log.setLevel(logging.INFO)
    from attention_book import training as T
    run = T.train_tiny("reverse", seed=9, steps=3, checkpoints=2)
    print("weights", run.checkpoints[-1][1]["unembed.weight"].tobytes().hex()[:64])
""")


@pytest.mark.slow  # starts two fresh Pythons (importing torch: 2-3 s each)
def test_a_second_process_loads_what_the_first_trained(folder):
    src = str(Path(T.__file__).resolve().parents[1])  # this checkout's package, not another
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [src] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    first, second = (subprocess.run([sys.executable, "-c", CHILD], env=env, text=True,
                                    capture_output=True, timeout=120, check=True).stdout
                     for _ in range(2))
    assert "training reverse" in first and "saved reverse" in first
    assert "loaded reverse" in second and "training" not in second  # the loop not entered
    assert first.splitlines()[-1] == second.splitlines()[-1]  # the same weights
    assert len(list(folder.iterdir())) == 1


@pytest.mark.slow
def test_continuation_counts_are_kept_on_disk(tmp_path, monkeypatch):
    """Chapter 8's generation counts (scenes.generation.continuation_counts) are computed
    once, then read from the disk cache, equal; other arguments compute and keep anew."""
    from attention_book.scenes import generation as G

    monkeypatch.setenv(T.CACHE_ENV, str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "generation"
    prompts = [((4, 9, 2, 7, 4, 9), 8), ((1, 2, 3, 1, 2), 10)]
    computed = []
    counts = G._counts
    monkeypatch.setattr(G, "_counts", lambda *args: computed.append(args) or counts(*args))
    first = G.continuation_counts(prompts, 25)
    assert len(computed) == 1 and len(list(folder.glob("*.npz"))) == 1
    again = G.continuation_counts(prompts, 25)
    assert len(computed) == 1  # read from the disk
    assert again.keys() == first.keys() and [type(v) for v in again.values()] == \
        [type(v) for v in first.values()]
    assert all(np.array_equal(again[k], first[k]) for k in first)
    assert again == {**counts(prompts, G.generation_run("float32").steps[25], "float32"),
                     "top": again["top"]}
    G.continuation_counts(prompts, 0)
    assert len(computed) == 2 and len(list(folder.glob("*.npz"))) == 2


def test_a_second_caller_waits_for_the_first_rather_than_computing_again(tmp_path,
                                                                       monkeypatch):
    """The edit loop's check of diskcache.computing, in one process: two threads each open
    the lock file, and flock locks an open file, so the second waits for the first's file
    and loads it (the processes of a fresh clone: the test below, slow tier)."""
    from attention_book import diskcache

    monkeypatch.setenv(T.CACHE_ENV, str(tmp_path / "cache"))
    computed, outs = [], []

    def compute():
        computed.append(1)
        time.sleep(0.2)  # long enough for the other thread to ask meanwhile
        return {"x": np.arange(3.0)}

    def ask():
        outs.append(diskcache.cached_arrays("wait", [1], "code", compute)["x"].tolist())

    threads = [threading.Thread(target=ask) for _ in range(2)]
    [t.start() for t in threads]
    [t.join(30) for t in threads]
    assert outs == [[0.0, 1.0, 2.0]] * 2 and computed == [1]


@pytest.mark.slow  # starts two fresh Pythons (1 s of the first's compute, waited out)
def test_a_second_process_waits_for_the_first_rather_than_computing_again(tmp_path):
    """Two processes that want the same cached result at once (on a fresh clone, the build's
    data step and chapter 8's kernel both train the same models): one computes it, the other
    waits and loads the file. Without diskcache.computing both computed it (checked)."""
    script = textwrap.dedent("""
        import sys, time
        import numpy as np
        from attention_book import diskcache
        def compute():
            with open(sys.argv[1], "a") as log:
                log.write("computed\\n")
            time.sleep(1.0)  # long enough for the other process to ask meanwhile
            return {"x": np.arange(3.0)}
        out = diskcache.cached_arrays("wait", [1], "code", compute)
        print(out["x"].tolist())
    """)
    log = tmp_path / "computed.log"
    env = {**os.environ, T.CACHE_ENV: str(tmp_path / "cache")}
    runs = [subprocess.Popen([sys.executable, "-c", script, str(log)], env=env,
                             stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [run.communicate(timeout=120)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0]
    assert outs == ["[0.0, 1.0, 2.0]\n"] * 2
    assert log.read_text() == "computed\n"  # once, not twice
    assert len(list((tmp_path / "cache" / "wait").iterdir())) == 1  # no lock among the files
