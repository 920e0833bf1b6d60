"""Chapter 8's lab computed in the reader's browser (``web/training.js`` on
``training-checkpoints.js``, written by ``attention_book.web_export.training_script``),
against the package, in Node:

- on THE SAME decoded weights (``decode_training_data``, the browser's decoding redone in
  numpy and checked to be the encoder's own reconstruction): every attention map within
  TOL = 1e-5 of ``training_state`` (the book's NumpyModel, float32), the predictions and
  notes equal, the readout HTML and alt text equal to the module's of Python's state, at every
  checkpoint of both tasks on held-out inputs
  (random and task-like sequences, wrong lengths and symbols, markup, Unicode digits, empty
  text): 1,344 cases, 1,105 of them valid inputs; largest difference measured 1.0e-6;
- against the float32 model (what the book trained): the compressed weights (5-bit changes
  between checkpoints, a scale per 64 numbers) move an attention weight by at most
  FLOAT32_TOL = 0.02 (measured here 0.0125, mean 6.7e-5, over 532 valid inputs at all 52
  checkpoints), change at most 0.5 % of the predictions (measured 0.074 %, 4 of 5,409, at
  near-ties of barely trained checkpoints; 0.19 % over 400 other inputs) and none at the
  trained (last) checkpoints, whose maps are within 1e-4 (measured 3.2e-6);
- the file is deterministic and at most SIZE_BUDGET = 4.5 MB (measured 4.25 MB).

The generation lab (``web/generation.js``, scenes/generation.py) runs the same file's
induction checkpoints, which Python's lab runs too (``web_export.page_checkpoints``): its
tokens and notes equal, its readout and alt text the module's of Python's state, its rows and
probabilities within TOL, on
held-out values at every checkpoint (greedy and sampled, n and t anywhere in 1..23).

The fast tests use a synthetic run (random weights walking over 3 checkpoints, no training)
through the same exporter; the slow ones train the two runs (about 20 s, memoised).
"""
from __future__ import annotations

import base64
import dataclasses
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from attention_book import web_export
from attention_book.scenes import training as scene
from js_view import states_and_views
from node_driver import NODE
from node_driver import run as node
from test_web_twins import same_as_python
from training_file import decode_training_data, read_training_script, unpack_bits

TOL = 1e-5
FLOAT32_TOL = 0.02
FLIP_BUDGET = 0.005
SIZE_BUDGET = 4_500_000

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH: these tests run "
                                "src/attention_book/web/training.js in Node.js")


def run_js(data_js: Path, values: list, module: str = "training") -> list[dict]:
    """The rows of ``module`` (tests/js/states.mjs's ``states.run``) on the run in ``data_js``."""
    return node("states.run", module, "--data", data_js, "--figure", input=values)


def arr(x) -> np.ndarray:
    return np.frombuffer(base64.b64decode(x["f8"]), dtype=np.float64)


# ------------------------------------------------------------------ held-out inputs

#: typed text the lab must refuse or read as Python does
ODD = ("", "   ", "\t\n", "<b>x</b><script>alert(1)</script>", "1 2 3", "-1 0 1 2 3 4 5 6",
       "99999999999999999999999 1", "9223372036854775807 1", "-9223372036854775809",
       "3,1,4,1,5,9,2,6", "+3 1 4 1 5 9 2 6", "\uff13 1 \u0664 1 5 9 2 \U0001d7d4",
       "x\u200b 1", "don't", '"quoted"', "3.0 1", "1 2 3 4 5 6 7 10", "0 " * 25, "007 " * 8,
       "1\u00a02\u20033\u30004 5 6 7 8", "\u00bd 1", "0x1f")


def inputs(task: str, rng: np.random.Generator, n: int) -> list[str]:
    """n reader-typed inputs for a task: random symbols, task-like sequences (random and
    untrained periods), and now and then a bad one."""
    from attention_book.training import make_batch

    vocab, length = (10, 8) if task == "reverse" else (32, 24)
    out = []
    for k in range(n):
        r = rng.random()
        if r < 0.15:
            out.append(str(rng.choice(ODD)))
            continue
        if task == "reverse":
            s = length if r < 0.9 else int(rng.integers(1, 12))
            symbols = rng.integers(0, vocab + (r > 0.97), s)
        elif r < 0.6:  # a repeated period, 2..12, cut anywhere
            period = int(rng.integers(2, 13))
            batch = make_batch(task, 1, int(rng.integers(0, 10**6)), period=period)
            symbols = batch.tokens[0][:int(rng.integers(1, 25))]
        else:
            symbols = rng.integers(0, vocab, int(rng.integers(1, 27)))
        sep = ", " if k % 11 == 0 else " "
        out.append(sep.join(str(int(v)) for v in symbols))
    return out


def values_for(task: str, checkpoints: int, per: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(checkpoints):
        # every odd input once, at the first checkpoint, then a random mix
        for text in [*ODD, *inputs(task, rng, per)] if c == 0 else inputs(task, rng, per):
            other = str(rng.choice(ODD))  # the other task's input is never read
            rows.append({"task": task, "checkpoint": c,
                         "reverse_input": text if task == "reverse" else other,
                         "induction_input": text if task == "induction" else other})
    return rows


# ------------------------------------------------------------------ the comparison


@pytest.fixture
def runs_as(monkeypatch):
    """Make the lab's scene read the given runs (e.g. decoded weights), its caches emptied."""
    original = scene.training_run

    def use(runs: dict):
        # a task that is not there still gets the scene's own ValueError
        monkeypatch.setattr(scene, "training_run",
                            lambda task: runs[task] if task in runs else original(task))
        scene._forward.cache_clear()
    yield use
    scene._forward.cache_clear()


def with_checkpoints(run, checkpoints):
    """The run with other weights (its curves and history kept: they are the file's)."""
    run.score_history()
    return dataclasses.replace(run, checkpoints=checkpoints, _nets={})


def check(values: dict, row: dict, st, view: dict) -> dict:
    """Assert the browser's state equals training_state's, ``st``, and its readout and alt
    text the module's ``view`` of ``st``; return its maps and predictions."""
    where = {k: (v[:50] if isinstance(v, str) else v) for k, v in values.items()}
    js = row["state"]
    same_as_python(js, st, str(where))  # the twin contract: every key of the state
    weights = arr(js["weights"])
    assert row["readout"] == view["readout"] and row["alt"] == view["alt"], where
    numbers = row["numbers"]
    assert numbers["tokens"] == list(st.tokens)
    np.testing.assert_allclose(np.array(numbers["weights"], dtype=float).ravel(), weights, atol=0)
    panels = row["figure"]["panels"]
    assert [p["kind"] for p in panels] == ["grid", "lines", "lines"]  # the heads' maps, one grid
    assert len(panels[0]["maps"]) == len(st.heads) and panels[0]["rows"] == len(st.tokens)
    if st.task == "induction" and st.tokens:  # causal: the future keys in the masked style
        np.testing.assert_array_equal(np.reshape(panels[0]["masked"], (len(st.tokens),) * 2),
                                      np.triu(np.ones((len(st.tokens),) * 2), 1))
    return {"weights": weights, "predicted": js["predicted"], "tokens": js["tokens"]}


def bad_values(last: int) -> list[dict]:
    return [dict(task="roll"), dict(task=""), dict(task="<b>x</b>"),
            dict(task="reverse", checkpoint=-1), dict(task="induction", checkpoint=last + 1)]


def check_bad(values: dict, row: dict) -> None:
    with pytest.raises(ValueError) as err:
        scene.training_state(**values)
    assert row == {"error": str(err.value)}, values


# ------------------------------------------------------------------ fast: a synthetic run


def synthetic_run(task: str, rng: np.random.Generator, n_checkpoints: int = 3):
    """A TinyRun of the task's shape whose weights are random and walk a little from one
    checkpoint to the next (as training moves them), without training."""
    from attention_book.training import TASKS, TinyRun, _new_model

    spec = TASKS[task]
    config = dict(vocab=spec.vocab, length=spec.length, causal=spec.causal, d=64,
                  n_layers=spec.n_layers, n_heads=spec.n_heads, period=None, positions=True,
                  steps=2 * (n_checkpoints - 1), batch=256, lr=3e-3, warmup=0.1)
    model = _new_model(config)
    state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    checkpoints = []
    for c in range(n_checkpoints):
        checkpoints.append((2 * c, {k: v.copy() for k, v in state.items()}))
        state = {k: (v + rng.normal(0, 0.05, v.shape)).astype(np.float32) for k, v in state.items()}
    steps = config["steps"]
    return TinyRun(task=task, seed=0, config=config, model=SimpleNamespace(norm=model.norm),
                   history={"steps": np.arange(steps), "loss": 3.0 / (1 + np.arange(steps)),
                            "accuracy": np.linspace(0, 1, steps)},
                   accuracy=0.5, train_seconds=0.0, checkpoints=checkpoints,
                   example=np.zeros(spec.length, np.int64))


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    rng = np.random.default_rng(8)
    runs = {task: synthetic_run(task, rng) for task in ("reverse", "induction")}
    path = tmp_path_factory.mktemp("training") / "training-checkpoints.js"
    text = web_export.training_script(runs)
    path.write_text(text, "ascii")
    return runs, text, path


@pytest.mark.parametrize("bits", range(2, 9))
def test_bit_packing_round_trips(bits):
    level = 2 ** (bits - 1) - 1
    q = np.random.default_rng(bits).integers(-level, level + 1, 1001).astype(np.int8)
    packed = web_export.training.pack_bits(q, bits)
    assert len(packed) == -(-1001 * bits // 8)
    assert np.array_equal(unpack_bits(packed, bits, 1001), q)


def test_quantize_groups_is_within_half_a_step():
    w = np.random.default_rng(0).standard_normal((5, 128)).astype(np.float32)
    w[2, :64] = 0.0
    for bits in (4, 5, 8):
        q, r = web_export.quantize_groups(w, bits)
        back = q.astype(np.float32).reshape(5, 2, 64) * r[:, :, None]
        assert np.all(np.abs(back.reshape(5, 128) - w) <= r.repeat(64, axis=1) / 2 + 1e-7)
        assert np.abs(q).max() <= 2 ** (bits - 1) - 1
    with pytest.raises(ValueError, match="bits"):
        web_export.quantize_groups(w, 9)
    with pytest.raises(ValueError, match="multiple of 64"):
        web_export.quantize_groups(w[:, :10], 5)


def test_python_decoder_is_the_encoders_reconstruction(synthetic):
    runs, text, _ = synthetic
    data = read_training_script(text)
    assert text == web_export.training_script(runs)  # deterministic
    decoded = decode_training_data(data)
    for task, run in runs.items():
        own = web_export.page_checkpoints(run, data["bits"])
        for (step, got), (_, want), (step0, orig) in zip(decoded[task], own, run.checkpoints,
                                                         strict=True):
            assert step == step0 and got.keys() == orig.keys()
            for name in got:
                assert np.array_equal(got[name], want[name]), (task, step, name)
                if got[name].ndim == 1:  # vectors are stored exactly
                    assert np.array_equal(got[name], orig[name])


def test_synthetic_run_in_node_equals_python_on_the_decoded_weights(synthetic, runs_as):
    runs, text, path = synthetic
    decoded = decode_training_data(read_training_script(text))
    runs_as({task: with_checkpoints(run, decoded[task]) for task, run in runs.items()})
    values = (values_for("reverse", 3, 12, 1) + values_for("induction", 3, 12, 2)
              + bad_values(2))
    for v, row, (st, view) in zip(values, run_js(path, values),
                                  states_and_views("training", values), strict=True):
        if v in bad_values(2):
            check_bad(v, row)
        else:
            check(v, row, st, view)


# ------------------------------------------------------------------ slow: the book's runs


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """The two trained runs (memoised: about 20 s), their file and its decoded weights."""
    runs = {task: scene.training_run(task) for task in scene.TRAINING_TASKS}
    text = web_export.training_script(runs)
    path = tmp_path_factory.mktemp("training") / "training-checkpoints.js"
    path.write_text(text, "ascii")
    decoded = decode_training_data(read_training_script(text))
    return runs, text, path, decoded


@pytest.mark.slow
def test_checkpoints_file_is_deterministic_and_within_budget(book):
    runs, text, _, _ = book
    assert len(text.encode("ascii")) <= SIZE_BUDGET, f"{len(text) / 1e6:.2f} MB"
    assert web_export.training_script(runs) == text
    data = read_training_script(text)
    for task, run in runs.items():
        spec = data["tasks"][task]
        assert spec["steps"] == run.steps and len(spec["checkpoints"]) == 26
        assert spec["loss"] == run.history["loss"].tolist() and spec["held_out"] == run.accuracy


@pytest.mark.slow
def test_every_checkpoint_in_node_equals_python_on_the_decoded_weights(book, runs_as):
    runs, _, path, decoded = book
    runs_as({task: with_checkpoints(run, decoded[task]) for task, run in runs.items()})
    values = (values_for("reverse", 26, 25, 11) + values_for("induction", 26, 25, 12)
              + bad_values(25))
    assert len(values) >= 1300
    rows = run_js(path, values)
    largest = 0.0
    for v, row, (st, view) in zip(values, rows, states_and_views("training", values),
                                  strict=True):
        if v in bad_values(25):
            check_bad(v, row)
            continue
        got = check(v, row, st, view)
        if got["tokens"]:
            largest = max(largest, float(np.abs(got["weights"] - st.weights.ravel()).max()))
    assert largest <= TOL


@pytest.mark.slow
def test_compressed_weights_stay_close_to_the_float32_model(book):
    """The stated tolerance: the browser's maps and predictions against the book's float32
    runs (training_state with the real weights), on valid held-out inputs, every checkpoint."""
    runs, _, path, _ = book
    scene._forward.cache_clear()
    values = values_for("reverse", 26, 12, 21) + values_for("induction", 26, 12, 22)
    largest, flips, positions, last_largest = 0.0, 0, 0, 0.0
    for v, row in zip(values, run_js(path, values), strict=True):
        js = row["state"]
        if not js["tokens"]:
            continue
        st = scene.training_state(**v)  # the float32 run
        diff = float(np.abs(arr(js["weights"]) - st.weights.ravel()).max())
        largest = max(largest, diff)
        flips += sum(a != b for a, b in zip(js["predicted"], st.predicted, strict=True))
        positions += len(st.predicted)
        if v["checkpoint"] == 25:
            last_largest = max(last_largest, diff)
            assert js["predicted"] == list(st.predicted), v
    assert positions > 5000
    assert largest <= FLOAT32_TOL, largest
    assert flips / positions <= FLIP_BUDGET, (flips, positions)
    assert last_largest <= 1e-4, last_largest


# ------------------------------------------------------------------ the generation lab

#: values the generation state must refuse, as Python does
BAD_GENERATION = [dict(n=0), dict(n=24), dict(t=0), dict(t=24), dict(seed=21), dict(seed=-1),
                  dict(temperature=0.7), dict(temperature=-0.5), dict(checkpoint=-1)]


def generation_values(checkpoints: int, per: int, seed: int) -> list[dict]:
    """Held-out values of the generation lab: prompts of the induction inputs (random
    symbols, repeated periods, odd text), every decoding, n and t anywhere in 1..23."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(checkpoints):
        for prompt in [*ODD, *inputs("induction", rng, per)] if c == 0 else inputs("induction", rng, per):
            n, t = (int(v) for v in rng.integers(1, 24, 2))
            rows.append({"prompt": prompt, "checkpoint": c, "n": n, "t": t,
                         "temperature": float(rng.choice([0.0, 0.0, 0.5, 1.0, 2.0])),
                         "seed": int(rng.integers(0, 21))})
    return rows + [{**v, "checkpoint": v.get("checkpoint", checkpoints - 1)} for v in BAD_GENERATION
                   if v.get("checkpoint") != -1] + [dict(checkpoint=-1)]


def check_generation(values: dict, row: dict, st, view: dict | None) -> dict:
    """Assert the browser's generation state equals generation_state's, ``st`` (None: it
    refuses ``values``), and its readout and alt text the module's ``view`` of ``st``."""
    from attention_book.scenes import generation

    where = {k: (v[:50] if isinstance(v, str) else v) for k, v in values.items()}
    if st is None:
        with pytest.raises(ValueError) as err:
            generation.generation_state(**values)
        assert row == {"error": str(err.value)}, where
        return {}
    js = row["state"]
    same_as_python(js, st, str(where))  # the twin contract: every key of the state
    assert row["readout"] == view["readout"] and row["alt"] == view["alt"], where
    panels = row["figure"]["panels"]
    assert [p["kind"] for p in panels] == (["grid", "bars"] if st.t else ["heatmap"])
    if st.t:
        assert len(panels[0]["maps"]) == len(st.heads)
    return {"generated": js["generated"]}


def run_generation_js(data_js: Path, values: list) -> list[dict]:
    return run_js(data_js, values, "generation")


@pytest.fixture
def generation_as(monkeypatch):
    """Make the generation scene read the given induction run, its cache emptied."""
    from attention_book.scenes import generation

    def use(run):
        monkeypatch.setattr(generation, "generation_run", lambda weights="page": run)
        generation._generate.cache_clear()
    yield use
    generation._generate.cache_clear()


def test_generation_of_a_synthetic_run_in_node_equals_python(synthetic, generation_as):
    runs, text, path = synthetic
    decoded = decode_training_data(read_training_script(text))
    generation_as(with_checkpoints(runs["induction"], decoded["induction"]))
    values = generation_values(3, 15, 3)
    checked = [check_generation(v, row, *shown) for v, row, shown in
               zip(values, run_generation_js(path, values),
                   states_and_views("generation", values), strict=True)]
    assert sum(bool(c.get("generated")) for c in checked) >= 30


@pytest.mark.slow
def test_generation_at_every_checkpoint_in_node_equals_python(book):
    """The lab's own state (generation_run("page"), not patched) equals the page's on the
    book's file, at all 26 checkpoints: page_checkpoints is what the browser decodes."""
    from attention_book.scenes.generation import generation_run

    runs, _, path, decoded = book
    for (step, got), (step0, want) in zip(generation_run("page").checkpoints,
                                          decoded["induction"], strict=True):
        assert step == step0 and all(np.array_equal(got[k], want[k]) for k in want)
    values = generation_values(26, 8, 31)
    checked = [check_generation(v, row, *shown) for v, row, shown in
               zip(values, run_generation_js(path, values),
                   states_and_views("generation", values), strict=True)]
    assert sum(bool(c.get("generated")) for c in checked) >= 150
