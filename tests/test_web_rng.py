"""The browser's random generator (``src/attention_book/web/src/shared/rng.js``) against numpy.

The HTML book computes the labs' states in the reader's browser, and the labs'
random weights come from ``np.random.default_rng(seed)``: so rng.js must draw numpy's very
numbers. Fixtures are drawn here with numpy and compared with what Node draws through
rng.js (``tests/js/rng.mjs``'s ``rng.draw``; arrays travel as bytes, bit for bit).

Exactness. Doubles are compared for equality, except one case: every value numpy's C code
computes is IEEE double + - * / on the same operands in the same order as rng.js (numpy's
random module is not compiled with FMA contraction), so the results are the same bits. The
two libm calls are not required to round alike: ``exp`` only decides between two branches
(a 1-ulp difference could flip one only for a draw within an ulp of the boundary, about
2^-52 a draw), while ``log1p`` gives the value of a draw beyond the ziggurat's last step
(|x| > r = 3.654..., about 1 draw in 4000), where glibc's and V8's log1p may differ by an
ulp. So normals must be equal, except tail draws, which may be 1 ulp apart. Measured with
numpy 2.4.6, Node 20 and chromium 156: no difference at all, tail draws included (20
million normals of 10 seeds in Node, 5 202 of them tail draws; these fixtures hold
hundreds, and a test checks that they do).

A slow test does the same in chromium, from a page opened as file:// (as readers open a
copied book) that loads rng.js with a plain <script src>.
"""
from __future__ import annotations

import base64
import math

import numpy as np
import pytest

from attention_book.attention import projection_weights
from attention_book.block import encoder_stack
from attention_book.embedding import embedding_table
from attention_book.multihead import MultiHeadAttention
from attention_book.permutation import random_permutation
from attention_book.scenes.block import BLOCK_D, BLOCK_H, MAX_DEPTH
from attention_book.scenes.permutation import SHUFFLE_SEEDS
from attention_book.tokens import Vocabulary
from node_driver import NODE, page_function, run

#: numpy's ziggurat_nor_r: |x| beyond it only from the tail branch (log1p)
ZIGGURAT_R = 3.6541528853610087963519472518

pytestmark = pytest.mark.skipif(
    NODE is None, reason="node is not on PATH: these tests run rng.js (the browser's "
    "generator) in Node.js, which the README's set-up (make test) expects")

BIG_SEEDS = (2**32 - 1, 2**32, 2**40 + 3, 2**53 - 1, 2**53, 2**64 + 5, 2**100 + 7)


def seed_json(seed):
    """A seed as the driver reads it: numbers past 2^53 go as BigInt digits."""
    if isinstance(seed, (list, tuple)):
        return [seed_json(s) for s in seed]
    return {"bigint": str(seed)} if seed > 2**53 - 1 else int(seed)


def node(request: dict) -> dict:
    """Run the driver on one request; decode its arrays."""
    reply = run("rng.draw", input=request, timeout=120)
    reply["jobs"] = [[np.frombuffer(base64.b64decode(a["b64"]), a["dtype"]) for a in job]
                     for job in reply["jobs"]]
    return reply


def draw(jobs) -> list:
    """[(seed, calls)] -> rng.js's arrays, one list a job."""
    return node({"jobs": [{"seed": seed_json(s), "calls": calls} for s, calls in jobs]})["jobs"]


def numpy_calls(seed, calls) -> list:
    """What numpy gives for the same calls, on one Generator."""
    rng = np.random.default_rng(seed)
    out = []
    for name, *args in calls:
        if name == "standardNormal":
            out.append(rng.standard_normal(args[0]))
        elif name == "normal":
            out.append(rng.normal(args[0], args[1], args[2]))
        elif name == "random":
            out.append(rng.random(args[0]))
        elif name == "permutation":
            out.append(rng.permutation(args[0]))
        else:
            raise ValueError(name)
    return out


def assert_normals_equal(js, ref):
    """Equal bits; a tail draw (|x| > r, from log1p) may be 1 ulp apart (module docstring)."""
    assert js.shape == ref.shape
    differ = js != ref
    if differ.any():
        tail = np.abs(ref) > ZIGGURAT_R
        where = np.flatnonzero(differ & ~tail)
        assert where.size == 0, f"draws differ (not in the tail) at {where[:5]}"
        ulps = np.abs(js - ref)[differ] / np.spacing(np.abs(ref[differ]))
        assert ulps.max() <= 1, f"tail draws differ by {ulps.max()} ulp"


# ---------------------------------------------------------------- seeding


def test_seed_sequence_state_equals_numpy():
    """SeedSequence(seed).generate_state: ints, big ints, lists (also past the pool of 4)."""
    seeds = [*range(0, 201, 7), *BIG_SEEDS, [0], [5, 1], [2**40 + 3, 1], [1, 2, 3, 4, 5, 6, 7],
             [2**33, 7], [2**64 + 1, 0, 3]]
    replies = draw([(s, [["state", 8], ["state", 3]]) for s in seeds])
    for seed, (eight, three) in zip(seeds, replies):
        ss = np.random.SeedSequence(seed)
        np.testing.assert_array_equal(eight, ss.generate_state(8), err_msg=str(seed))
        np.testing.assert_array_equal(three, ss.generate_state(3), err_msg=str(seed))


def test_raw_pcg64_outputs_equal_numpy():
    """The 128-bit LCG and its XSL-RR output: PCG64(seed).random_raw, 1000 outputs a seed
    (the rotation takes all 64 values)."""
    seeds = [0, 1, 42, *BIG_SEEDS, [3, 1]]
    replies = draw([(s, [["raw", 1000]]) for s in seeds])
    for seed, (pairs,) in zip(seeds, replies):
        hi, lo = pairs[0::2].astype(np.uint64), pairs[1::2].astype(np.uint64)
        np.testing.assert_array_equal((hi << np.uint64(32)) | lo,
                                      np.random.PCG64(seed).random_raw(1000), err_msg=str(seed))


# ---------------------------------------------------------------- the distributions

#: sizes 1..20000, cycled over the seeds
SIZES = (1, 2, 5, 17, 100, 1000, 2500, 20000)


def test_standard_normal_seeds_0_to_200():
    """standard_normal(n) for seeds 0..200 and n from 1 to 20000 (about 600 000 draws)."""
    jobs = [(seed, [["standardNormal", SIZES[seed % len(SIZES)]]]) for seed in range(201)]
    tails = 0
    for (seed, calls), (js,) in zip(jobs, draw(jobs)):
        (ref,) = numpy_calls(seed, calls)
        assert_normals_equal(js, ref)
        tails += int((np.abs(ref) > ZIGGURAT_R).sum())
    assert tails > 100  # the tail branch (log1p) is exercised: 150+ draws


def test_standard_normal_big_and_list_seeds():
    """Big ints (BigInt in JS) and lists such as block.py's [seed, 1]."""
    seeds = [*BIG_SEEDS, *([s, 1] for s in range(41)), [2**40 + 3, 1], [1, 2, 3, 4, 5, 6, 7]]
    jobs = [(s, [["standardNormal", 3000]]) for s in seeds]
    for (seed, calls), (js,) in zip(jobs, draw(jobs)):
        assert_normals_equal(js, numpy_calls(seed, calls)[0])


def test_random_doubles_equal_numpy():
    """Generator.random(n): (next_uint64 >> 11) * 2^-53, exact."""
    jobs = [(seed, [["random", SIZES[seed % len(SIZES)]]]) for seed in range(0, 201, 3)]
    jobs += [(s, [["random", 500]]) for s in (*BIG_SEEDS, [7, 1])]
    for (seed, calls), (js,) in zip(jobs, draw(jobs)):
        np.testing.assert_array_equal(js, numpy_calls(seed, calls)[0], err_msg=str(seed))


def test_permutations_of_0_to_600():
    """permutation(n) for every n in 0..600 (each its own seed, and seed [n, 1]): exact."""
    jobs = [(n, [["permutation", n]]) for n in range(601)]
    jobs += [([n, 1], [["permutation", n]]) for n in range(0, 601, 25)]
    jobs += [(s, [["permutation", 300]]) for s in BIG_SEEDS]
    for (seed, calls), (js,) in zip(jobs, draw(jobs)):
        np.testing.assert_array_equal(js, numpy_calls(seed, calls)[0], err_msg=str(seed))


def test_normal_with_loc_and_scale():
    """normal(loc, scale, n) = loc + scale * standard_normal, as distributions.c."""
    jobs = [(seed, [["normal", loc, scale, 777]])
            for seed, (loc, scale) in enumerate([(0.0, 1 / math.sqrt(8)), (0.0, 0.1), (2.5, 3.0),
                                                 (-1.0, 0.0), (0.0, 1 / math.sqrt(512))])]
    for (seed, calls), (js,) in zip(jobs, draw(jobs)):
        assert_normals_equal(js, numpy_calls(seed, calls)[0])


def test_stream_continues_across_calls():
    """One generator, many calls: the stream goes on where the last call stopped, and
    PCG64's kept half of a 64-bit draw (next_uint32, used by permutation) survives calls
    that draw 64 bits in between. Random call sequences (fixed seed) against numpy, and
    two calls of 5 == one call of 10 in rng.js itself."""
    chooser = np.random.default_rng(2024)
    names = ("standardNormal", "random", "permutation", "normal")
    jobs = []
    for seed in range(60):
        calls = []
        for _ in range(int(chooser.integers(2, 9))):
            name, n = names[int(chooser.integers(4))], int(chooser.integers(0, 40))
            calls.append(["normal", 0.5, 2.0, n] if name == "normal" else [name, n])
        jobs.append((seed, calls))
    for (seed, calls), js in zip(jobs, draw(jobs)):
        for call, a, b in zip(calls, js, numpy_calls(seed, calls)):
            if call[0] == "permutation":
                np.testing.assert_array_equal(a, b, err_msg=f"{seed} {calls}")
            else:
                assert_normals_equal(a, b)

    split = [["standardNormal", 5], ["standardNormal", 5], ["random", 3], ["random", 4],
             ["permutation", 9], ["standardNormal", 2], ["permutation", 9]]
    whole = [["standardNormal", 10], ["random", 7], ["permutation", 9], ["standardNormal", 2],
             ["permutation", 9]]
    seeds = (0, 1, 2**40 + 3, [4, 1])
    replies = draw([job for seed in seeds for job in ((seed, split), (seed, whole))])
    for parts, once in zip(replies[0::2], replies[1::2]):
        np.testing.assert_array_equal(np.concatenate(parts[:2]), once[0])
        np.testing.assert_array_equal(np.concatenate(parts[2:4]), once[1])
        for a, b in zip(parts[4:], once[2:]):
            np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- the package's own draws


def test_the_package_draws():
    """Every rng use a scene's state function reaches, recomputed with rng.js:

    * ``default_rng(seed).standard_normal((V, d))``: embedding_table (chapters 1-7);
    * ``default_rng(seed).normal(0, 1/sqrt(d), (d, d_k))`` x3: projection_weights
      (chapters 3, 5, 6);
    * ``default_rng(seed).normal(0, 1/sqrt(d), (d, d))`` x4, then ``(d,)`` x4:
      MultiHeadAttention.from_seed (chapter 4, and each block of chapter 7);
    * ``default_rng([seed, 1]).normal`` for W_1, W_2, b_1, b_2: block.py's _random_ffn,
      with encoder_stack's layer seeds 1000 * seed + i (chapter 7);
    * ``default_rng(seed).permutation(s)``: random_permutation (chapter 5's shuffle);
    * ``default_rng(seed).standard_normal`` of q, K, g: chapter 3's sqrt(d_k) lab (the
      stream is covered by the standard-normal tests above).
    """
    V = len(Vocabulary.default())
    jobs, checks = [], []
    for d, seed in ((2, 0), (8, 0), (8, 20), (64, 7)):
        jobs.append((seed, [["standardNormal", V * d]]))
        checks.append([embedding_table(V, d, seed).ravel()])
    for d, d_k, seed in ((8, 8, 0), (8, 4, 0), (8, 2, 3), (64, 16, 20)):
        std = 1.0 / math.sqrt(d)
        jobs.append((seed, [["normal", 0.0, std, d * d_k]] * 3))
        checks.append([w.ravel() for w in projection_weights(d, d_k, seed=seed)])
    for d, h, seed in ((8, 2, 0), (8, 8, 5), (64, 4, 20)):
        std = 1.0 / math.sqrt(d)
        jobs.append((seed, [["normal", 0.0, std, d * d]] * 4 + [["normal", 0.0, std, d]] * 4))
        mha = MultiHeadAttention.from_seed(d, h, seed=seed, bias=True)
        checks.append([w.ravel() for w in (mha.W_q, mha.W_k, mha.W_v, mha.W_o,
                                           mha.b_q, mha.b_k, mha.b_v, mha.b_o)])
    for seed in (0, 20, 999_999):
        for i, block in enumerate(encoder_stack(MAX_DEPTH, BLOCK_D, BLOCK_H, seed)):
            d, d_ff = BLOCK_D, block.W_1.shape[1]
            jobs.append(([1000 * seed + i, 1], [
                ["normal", 0.0, 1 / math.sqrt(d), d * d_ff],
                ["normal", 0.0, 1 / math.sqrt(d_ff), d_ff * d],
                ["normal", 0.0, 0.1, d_ff], ["normal", 0.0, 0.1, d]]))
            checks.append([w.ravel() for w in (block.W_1, block.W_2, block.b_1, block.b_2)])
            jobs.append((1000 * seed + i, [["normal", 0.0, 1 / math.sqrt(d), d * d]]))
            checks.append([block.attention.W_q.ravel()])
    for seed in range(SHUFFLE_SEEDS[0], SHUFFLE_SEEDS[1] + 1, 9):
        for s in (1, 2, 5, 16, 128):
            jobs.append((seed, [["permutation", s]]))
            checks.append([random_permutation(s, seed)])
    for (seed, _), js, ref in zip(jobs, draw(jobs), checks):
        assert len(js) == len(ref)
        for a, b in zip(js, ref):
            np.testing.assert_array_equal(a, b, err_msg=str(seed))


# ---------------------------------------------------------------- the page and bad input


def test_loads_as_a_classic_script():
    """In a page (no `module`; a file:// page refuses ES modules) it sets
    globalThis.AttentionBook.rng."""
    reply = node({"jobs": [], "browser": True})
    np.testing.assert_array_equal(reply["browser"], np.random.default_rng(0).standard_normal(3))


@pytest.mark.slow
@pytest.mark.browser
def test_chromium_file_page_draws_numpys_numbers(browser, tmp_path):
    """In chromium (a newer V8 than Node's, with its own exp and log1p), from a page opened
    as file:// that loads rng.js with a plain <script src>: numpy's numbers, bit for bit
    (200 000 normals a seed: about 50 tail draws each)."""
    script = tmp_path / "rng.js"  # rng.js bundled into a classic script, as the labs' bundles hold it
    script.write_text(run("bundle.classicScript", "shared/rng.js", "rng", timeout=120))
    html = tmp_path / "rng.html"
    html.write_text(f'<!doctype html><title>rng</title><script src="{script.as_uri()}"></script>')
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(html.as_uri())
    draw_js = page_function("rngDraws")
    for seed in (0, 7, [3, 1], 2**40 + 3, 2**64 + 5):
        big = isinstance(seed, int) and seed > 2**53 - 1
        normals, perm, doubles = page.evaluate(draw_js, [str(seed) if big else seed, big])
        rng = np.random.default_rng(seed)
        assert_normals_equal(np.frombuffer(base64.b64decode(normals), "<f8"),
                             rng.standard_normal(200000))
        np.testing.assert_array_equal(np.frombuffer(base64.b64decode(perm), "<i4"),
                                      rng.permutation(600))
        np.testing.assert_array_equal(np.frombuffer(base64.b64decode(doubles), "<f8"),
                                      rng.random(1000))
    page.close()
    assert errors == []


def test_bad_seeds_and_counts_are_refused_clearly():
    bad_seeds = [-1, 1.5, 2**53, [], [[1, 2]], "7", None, [3, -2]]
    bad_counts = [-1, 2.5, "4", None]
    reply = node({"jobs": [], "bad_seeds": [s if s != 2**53 else float(2**53) for s in bad_seeds],
                  "bad_counts": bad_counts})
    for seed, message in zip(bad_seeds, reply["bad_seeds"]):
        assert message is not None and message.startswith("RangeError: seed must be a whole"), \
            (seed, message)
    for n, message in zip(bad_counts, reply["bad_counts"]):
        assert message is not None and message.startswith("RangeError: n must be a whole"), \
            (n, message)
