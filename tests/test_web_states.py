"""Labs' states computed in the reader's browser, against the package's scene state functions:
``src/attention_book/web/<lab>.js`` run in Node on held-out control values drawn
over each control's full live range (sentences that appear nowhere in the book, unknown
words, markup, empty and over-long text), compared with ``scenes/<lab>.py``:

- every array of the state within TOL = 1e-5 (absolute; the labs compute in float64 on both
  sides, and the measured differences are rounding, below 1e-12),
- tokens, ids and notes as equal strings; the readout's HTML and the alt text of the
  module's own state equal to the module's of Python's state (``js_view``: what the live lab
  shows),
- bad values: the same error message.

The tokenizer (``web/src/shared/tokens.js`` with the tables of ``shared/vocab.js``) is checked against
:func:`attention_book.tokens.tokenize` on random text over all of Unicode, and ``vocab.js``
against a fresh run of its generator. Arrays travel from Node as float64 bytes.
"""
from __future__ import annotations

import base64
import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

from attention_book.attention import projection_weights
from attention_book.scenes import SCENES
from attention_book.scenes.attention import (ATTENTION_D, SCALING_DKS, attention_state,
                                             query_options, scaling_state)
from attention_book.scenes.embedding import D_CHOICES, embedding_state
from attention_book.scenes.masking import masking_state
from attention_book.scenes.multihead import (MH_D_CHOICES, head_choices, missing_heads_text,
                                             multihead_state)
from attention_book.scenes.permutation import permutation_state
from attention_book.scenes.core import js_name
from attention_book.tokens import MAX_TEXT_CHARS, Vocabulary, tokenize
from close_all import assert_close
from node_driver import NODE, page_function
from node_driver import run as node

from js_view import text_views, views

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "src" / "attention_book" / "web"
#: the parity tolerance of every array (absolute)
TOL = 1e-5
SEEDS = range(0, 21)  # scenes.core.seed_slider: 0..20
ATTENTION_D_KS = (1, 2, 4, 8, 16, 32, 64)  # the attention lab's d_k slider
TEMPERATURES = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)

pytestmark = pytest.mark.skipif(
    NODE is None, reason="node is not on PATH: these tests run the browser's state modules "
    "(src/attention_book/web/*.js) in Node.js, which the README's set-up (make test) expects")


def run(module: str, values: list, *args: str) -> list[dict]:
    """The rows of each values (tests/js/states.mjs's ``states.run``, with ``args``)."""
    return node("states.run", module, *args, input=values)


def arr(x) -> np.ndarray:
    return np.frombuffer(base64.b64decode(x["f8"]), dtype=np.float64)


def close(got, want, where) -> float:
    """Assert |got - want| <= TOL everywhere (same size); return the largest difference."""
    want = np.asarray(want, dtype=np.float64).ravel()
    got = arr(got) if isinstance(got, dict) else np.asarray(got, dtype=np.float64)
    assert got.shape == want.shape, (where, got.shape, want.shape)
    if not want.size:
        return 0.0
    assert_close(got, want, atol=TOL, err_msg=where)
    return float(np.abs(got - want).max())


def test_assert_close_decides_as_assert_allclose():
    """close_all.assert_close (the parity tests' comparison) passes and fails where
    np.testing.assert_allclose does."""
    inf, nan = np.inf, np.nan
    cases = [([1.0, 2.0], [1.0, 2.0 + 1e-6], 1e-5, 0), ([1.0, 2.0], [1.0, 2.0 + 1e-4], 1e-5, 0),
             ([inf, nan], [inf, nan], 0, 0), ([inf], [-inf], 1, 0), ([nan], [0.0], 1, 0),
             ([1.0, 2.0], [1.0], 1, 0), ([[1.0]], [1.0], 1, 0), ([3.0, 3.0], 3.0, 0, 0),
             ([100.0], [100.5], 0, 1e-2), ([100.0], [102.0], 0, 1e-2), ([], [], 0, 0)]
    for got, want, atol, rtol in cases:
        try:
            np.testing.assert_allclose(got, want, atol=atol, rtol=rtol)
            expected = None
        except AssertionError as err:
            expected = err
        if expected is None:
            assert_close(got, want, atol=atol, rtol=rtol)
        else:
            with pytest.raises(AssertionError):
                assert_close(got, want, atol=atol, rtol=rtol)


def notes(state) -> list[dict]:
    return [{"level": n.level, "text": n.text} for n in state.notes]


# ------------------------------------------------------------------ held-out text

VOCAB = Vocabulary.default().words[2:]
#: words and pieces that appear nowhere in the vocabulary (nor, as sentences, in the book)
UNKNOWN = ("glorious", "zebra", "Ünïcödé", "naïve", "日本語", "😀", "x_y", "42", "3.14",
           "don't", "O'Brien", "ΣΟΦΙΑ", "straße", "İstanbul", "ｆｕｌｌ", "café", "_", "—")
MARKUP = ("<b>x</b><script>alert(1)</script>", "&amp;", '"quoted"', "<img src=x onerror=1>",
          "</div>", "a<b", "'s")
FIXED_TEXTS = ("", "   ", "\n\t", "!!!", "<b>x</b><script>", "the the the the the the the the",
               "ΣΟΦΙΑΣ ΟΔΟΣ", "a" * (MAX_TEXT_CHARS + 1), "cat " * 33, "the dog's " * 50,
               "THE WEATHER IS GLORIOUS TODAY", "Zebras eat 42 naïve cafés, don't they?",
               "the\u200b wea\u00adther\ufeff is\u200dlovely\x07 \u200c\U000e0041today",
               "\u200b\u2060\x1b", "Σ\u00adΣ A\x07Σ")


def sentences(rng: np.random.Generator, n: int, longest: int = 40) -> list[str]:
    """``n`` random sentences: vocabulary words (any case), unknown words, punctuation and
    markup; lengths 0..longest words, now and then up to 3 * longest."""
    pools = (VOCAB, UNKNOWN, MARKUP, ".,?!;:")
    out = []
    for _ in range(n):
        size = int(rng.integers(0, longest + 1)) if rng.random() < 0.9 else int(
            rng.integers(longest, 3 * longest))
        words = []
        for _ in range(size):
            r = rng.random()
            # rng.integers(len(pool)): the draw rng.choice(pool) makes, without turning the
            # pool into an array at each word (0.85 s of CPU for 1,500 sentences; now 0.1)
            pool = pools[0 if r < 0.7 else 1 if r < 0.85 else 2 if r < 0.92 else 3]
            w = pool[rng.integers(len(pool))]
            words.append(w.upper() if rng.random() < 0.1 else w.title() if rng.random() < 0.1
                         else w)
        out.append(" ".join(words))
    return out


# ------------------------------------------------------------------ tokenizer and vocab.js


@pytest.mark.slow  # 1.5 s: the generator reads every code point
def test_vocab_js_is_generated_from_the_package():
    spec = importlib.util.spec_from_file_location("make_vocab_js", WEB / "make_vocab_js.py")
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    assert make.VOCAB_JS.read_text() == make.vocab_js(), (
        "vocab.js is stale: run python src/attention_book/web/make_vocab_js.py")


#: A number of the generated table (JSON's floats and integers).
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


@pytest.mark.slow  # 2 s: Python measures every d_k (scaling_curves)
def test_scaling_table_js_is_generated_from_the_package():
    """The sqrt(d_k) lab looks its 20 states up (a first visit to d_k = 512 measured in the
    page held it for 0.2-0.8 s, QA Q4): the table is Python's scaling_curves, current."""
    spec = importlib.util.spec_from_file_location("make_scaling_table", WEB / "make_scaling_table.py")
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    committed, current = make.TABLE_JS.read_text(), make.scaling_table_js()
    stale = "scaling/table.js is stale: run python src/attention_book/web/make_scaling_table.py"
    assert NUMBER.sub("#", committed) == NUMBER.sub("#", current), stale  # the same layout
    # and the same numbers to 1e-12: the last digit of a float64 differs between machines
    # (numpy's SIMD paths: a fresh machine's CPU wrote ...86 for ...864, 1 ulp), not the table
    pairs = list(zip(map(float, NUMBER.findall(committed)), map(float, NUMBER.findall(current))))
    assert len(pairs) >= 400 and all(np.isclose(a, b, rtol=1e-12, atol=0) for a, b in pairs), stale


@pytest.mark.parametrize("n", [pytest.param(500, id="500"),
                               pytest.param(20000, id="20000", marks=pytest.mark.slow)])
def test_tokenizer_equals_python_on_random_unicode(n):
    rng = np.random.default_rng(1917 + n)
    pool = [chr(c) for c in range(0x20, 0x250)] + list(
        "ΣσςΑΒΓ'''sS_ \t\n\u00a0\u2028\u0345\u0130\u1e9e\u2160\u00b2\u0660\u4e00\U0001d400"
        "\U0001f600\u0301\u200d\u200b\u00ad\ufeff\x07\x85") + [chr(c) for c in rng.integers(0, 0x110000, 3000)
                                     if not 0xD800 <= c <= 0xDFFF]
    pool = np.array(pool)  # once: rng.choice turned the list into an array at every text
    texts = ["".join(rng.choice(pool, int(rng.integers(0, 30)))) for _ in range(n)]
    texts += [*FIXED_TEXTS, *sentences(rng, n // 20), "It's the dog's bone.", "x's_", "A'Sb",
              "a''s", "ΑΣ Σ ΑΣΑ Α\u0345Σ Σ\u0345 A.Σ"]
    got = node("states.tokenize", input=texts)
    for text, js in zip(texts, got, strict=True):
        try:
            want = tokenize(text)
        except ValueError as err:
            want = f"error: {err}"
        assert js == want, text[:80]


def test_core_formats_numbers_as_python():
    """Python's f"{x:.2f}" rounds an exact tie (0.125) to even, JavaScript's toFixed up: a
    row of 8 equal weights is exactly 0.125, so format.js must round as Python does."""
    rng = np.random.default_rng(5)
    xs = [0.0, -0.0, 0.125, 0.375, -0.125, 2.5, 0.5, 1.5, 0.0625, 0.005, 1 / 3, 1.0000000000000002,
          0.9999999999999999, 123456.5, 1e-5, 2.2e-16, 512.0, 1e21 / 3,
          *(rng.standard_normal(40) * 10.0 ** rng.integers(-6, 7, 40)).tolist(),
          *(rng.integers(-4000, 4000, 30) / 16).tolist()]
    specs = [".0f", ".2f", ".3f", ",.1f", ".1e", ".0e", ".3g", ".6g"]
    cases = [(x, spec) for x in xs for spec in specs]
    sent = [("-0" if x == 0 and np.signbit(x) else x, spec) for x, spec in cases]
    got = node("states.format", input=sent)
    for (x, spec), js in zip(cases, got, strict=True):
        assert js == format(x, spec), (x, spec, js)


# ------------------------------------------------------------------ chapter 1: embedding


def embedding_values(n: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    fixed = [dict(text=t, d=int(rng.choice(D_CHOICES)), seed=int(rng.choice(SEEDS)))
             for t in FIXED_TEXTS]
    return fixed + [dict(text=t, d=int(rng.choice(D_CHOICES)), seed=int(rng.choice(SEEDS)))
                    for t in sentences(rng, n)]


def check_embedding(values: dict, row: dict, st, view: dict) -> float:
    js = row["state"]
    where = {k: (v[:60] if isinstance(v, str) else v) for k, v in values.items()}
    assert js["tokens"] == list(st.tokens), where
    assert js["ids"] == st.ids.tolist() and js["known"] == list(st.known), where
    assert js["totalTokens"] == st.total_tokens and js["s"] == st.s, where
    assert js["notes"] == notes(st), where
    err = max(close(js["X"], st.X, where), close(js["similarity"], st.similarity, where))
    assert row["readout"] == view["readout"] and row["alt"] == view["alt"], where
    return err


EMBEDDING_BAD = [dict(text="the cat", d=0, seed=0), dict(text="the cat", d=2.5, seed=0)]


# ------------------------------------------------------------------ chapter 3: attention


def attention_values(n: int, seed: int) -> list[dict]:
    """Every control over its full live range: both sentences (up to 3 x 50 words, past the
    128-token limit), the mode, any query (the state clamps it), every d_k, temperature and
    seed."""
    rng = np.random.default_rng(seed)
    texts = [*FIXED_TEXTS, *sentences(rng, n, longest=50)]
    kv = [*sentences(rng, len(texts), longest=20)]
    out = []
    for k, (text, kv_text) in enumerate(zip(texts, kv)):
        mode = "cross" if k % 3 == 2 else "self"
        if k % 7 == 3:
            kv_text = str(rng.choice(FIXED_TEXTS))
        out.append(dict(text=text, kv_text=kv_text, mode=mode,
                        query=int(rng.integers(0, 128)) if k % 2 else int(rng.integers(0, 6)),
                        d_k=int(rng.choice(ATTENTION_D_KS)),
                        temperature=float(rng.choice(TEMPERATURES)),
                        seed=int(rng.choice(SEEDS))))
    return out


def check_attention(values: dict, row: dict, st, view: dict) -> float:
    js = row["state"]
    where = {k: (v[:60] if isinstance(v, str) else v) for k, v in values.items()}
    assert js["queryTokens"] == list(st.query_tokens), where
    assert js["keyTokens"] == list(st.key_tokens), where
    assert js["query"] == st.query and js["notes"] == notes(st), where
    assert abs(js["scale"] - st.scale) <= TOL * st.scale, where
    err = max(close(js[name], getattr(st, name), (where, name))
              for name in ("X_q", "X_kv", "Q", "K", "V", "weights", "output"))
    assert row["readout"] == view["readout"] and row["alt"] == view["alt"], where
    return err


def test_attention_projection_weights_are_numpys_bit_for_bit():
    cases = [(d_k, seed) for d_k in ATTENTION_D_KS for seed in SEEDS]
    got = node("states.projectionWeights", input=cases)
    for (d_k, seed), ws in zip(cases, got, strict=True):
        for js, py in zip(ws, projection_weights(ATTENTION_D, d_k, seed=seed), strict=True):
            assert np.array_equal(arr({"f8": js}), py.ravel()), (d_k, seed)


def test_attention_query_options_follow_the_sentences():
    values = [dict(text=t, kv_text=kv, mode=m) for t in ("THE WEATHER IS LOVELY TODAY", "",
                                                         "cat " * 140)
              for kv in ("in the morning", "  ") for m in ("self", "cross")]
    got = node("states.queryOptions", input=values)
    for v, js in zip(values, got, strict=True):
        assert [tuple(x) for x in js] == list(query_options(v)), v


_ATTENTION_BASE = dict(text="the cat", kv_text="a dog", query=0, d_k=4, temperature=1.0,
                       seed=0, mode="self")
ATTENTION_BAD = [dict(_ATTENTION_BASE, mode="both"), dict(_ATTENTION_BASE, temperature=-1),
                 dict(_ATTENTION_BASE, query=-1), dict(_ATTENTION_BASE, d_k=0),
                 dict(_ATTENTION_BASE, seed=-3)]


# ------------------------------------------------------------------ chapter 3: the sqrt(d_k) lab


@pytest.mark.slow  # 7.7 million normals drawn in Node, and Python's curves
def test_scaling_parity_on_every_state():
    """The lab's whole range is 20 states: every one, and the curves of the figure."""
    values = [dict(d_k=d_k, scaled=scaled) for d_k in SCALING_DKS for scaled in (False, True)]
    errors, states = [], [scaling_state(**v) for v in values]
    for v, row, st, view in zip(values, run("scaling", values), states,
                                views("scaling", *states), strict=True):
        js = row["state"]
        for name in ("variance", "max_weight", "entropy", "grad_norm"):
            errors.append(abs(js[js_name(name)] - getattr(st, name)))
            assert errors[-1] <= TOL, (v, name, js[js_name(name)], getattr(st, name))
        errors.append(close(js["weights"], st.weights, v))
        assert row["readout"] == view["readout"] and row["alt"] == view["alt"], v
    assert max(errors) < 1e-9  # measured: rounding only


@pytest.mark.slow  # Python measures every d_k first (scaling_curves), about 2 s
@pytest.mark.parametrize("d_k", [1, 16])
def test_scaling_parity_at_small_d_k(d_k):
    values = [dict(d_k=d_k, scaled=False), dict(d_k=d_k, scaled=True)]
    states = [scaling_state(**v) for v in values]
    for v, row, st, view in zip(values, run("scaling", values), states,
                                views("scaling", *states), strict=True):
        js = row["state"]
        for name in ("variance", "max_weight", "entropy", "grad_norm"):
            assert abs(js[js_name(name)] - getattr(st, name)) <= TOL, (v, name)
        close(js["weights"], st.weights, v)
        assert row["readout"] == view["readout"] and row["alt"] == view["alt"], v


SCALING_BAD = [dict(d_k=3, scaled=False), dict(d_k=4, scaled=1)]


# ------------------------------------------------------------------ chapter 4: multi-head

#: the printed rounding error of "sum of the heads' writes + b_o vs the output" (~1e-16),
#: which two correct summation orders give differently; both are checked to be below 1e-12
CHECK_ERROR = re.compile(r"max difference \d\.\de[+-]\d\d")


def multihead_values(n: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for k, text in enumerate([*FIXED_TEXTS, *sentences(rng, n, longest=30)]):
        d = int(rng.choice(MH_D_CHOICES))
        h = int(rng.choice(head_choices(d)))
        heads_on = (None if k % 5 == 0 else
                    [int(i) for i in np.flatnonzero(rng.random(h) < rng.random())])
        out.append(dict(text=text, d=d, h=h, seed=int(rng.choice(SEEDS)), heads_on=heads_on,
                        positional=bool(rng.random() < 0.5)))
    return out


def check_multihead(values: dict, row: dict, st, view: dict) -> float:
    js = row["state"]
    where = {k: (v[:60] if isinstance(v, str) else v) for k, v in values.items()}
    assert js["tokens"] == list(st.tokens) and js["notes"] == notes(st), where
    assert js["on"] == list(st.on) and js["d_k"] == st.d_k, where
    assert [[name, list(shape)] for name, shape in st.trace] == js["trace"], where
    assert js["checkError"] < 1e-12 and st.check_error < 1e-12, where
    err = max(close(js[a], getattr(st, b), (where, b)) for a, b in (
        ("X", "X"), ("weights", "weights"), ("contributions", "contributions"),
        ("output", "output"), ("onOutput", "on_output"), ("offOutput", "off_output"),
        ("headNorms", "head_norms")))
    assert CHECK_ERROR.sub("#", row["readout"]) == CHECK_ERROR.sub("#", view["readout"]), where
    assert row["alt"] == view["alt"], where
    return err


def test_multihead_missing_heads_text_for_every_width():
    got = node("states.missingHeads", input=[8, 12, 16, 32, 64, 1, 7, 48, 100])
    for d, (text, choices) in zip([8, 12, 16, 32, 64, 1, 7, 48, 100], got, strict=True):
        assert text == missing_heads_text(d) and choices == list(head_choices(d)), d


_MULTIHEAD_BASE = dict(text="the cat", d=8, h=2, seed=3, heads_on=None, positional=False)
MULTIHEAD_BAD = [dict(_MULTIHEAD_BASE, h=3), dict(_MULTIHEAD_BASE, d=12, h=5),
                 dict(_MULTIHEAD_BASE, heads_on=[0, 2, 5]), dict(_MULTIHEAD_BASE, h=0)]


# ------------------------------------------------------------------ chapter 5: permutation

#: a printed error of 1e-10 or less: rounding (~1e-16, or 0), which two correct summation
#: orders give differently; the values themselves are compared (both <= 1e-9 or within TOL)
TINY = re.compile(r"\d\.\de-(1\d|[2-9]\d|\d{3})|0\.0e\+00")
ORDERS = ("identity", "reverse", "rotate", "swap", "shuffle", "custom")


def custom_orders(rng: np.random.Generator, s: int) -> str:
    """A typed order for s tokens: valid (spaces, commas, leading zeros, Unicode spaces) or
    one of every kind of mistake."""
    perm = [str(int(i)) for i in rng.permutation(max(s, 1))]
    kind = int(rng.integers(0, 9))
    if kind == 0:
        return ", ".join(perm)
    if kind == 1:
        return "\u3000".join("0" + p for p in perm) + "\u00a0"
    if kind == 2:
        return " ".join(perm[:-1])  # one too few
    if kind == 3:
        big = s + int(rng.integers(0, 10**6)) * 10 ** int(rng.integers(0, 20))
        return " ".join(perm[:-1] + [str(big)])  # out of range
    if kind == 4:
        return " ".join(perm[:-1] + [perm[0]])  # repeated
    if kind == 5:
        return " ".join(perm[:-1] + [str(rng.choice(["x", "-1", "1.5", "٣", "<b>"]))])
    if kind == 6:
        return str(rng.choice(["", "  ", ",,", "\t"]))
    return " ".join(perm)


def permutation_values(n: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for k, text in enumerate([*FIXED_TEXTS, *sentences(rng, n, longest=40)]):
        try:
            s = min(len(tokenize(text)), 128)
        except ValueError:
            s = 0
        out.append(dict(text=text, order=ORDERS[k % len(ORDERS)] if k % 4 else "custom",
                        custom=custom_orders(rng, s), seed=int(rng.integers(0, 100)),
                        pe=bool(rng.random() < 0.5), causal=bool(rng.random() < 0.5)))
    return out


def check_permutation(values: dict, row: dict, st, view: dict) -> float:
    js = row["state"]
    where = {k: (v[:60] if isinstance(v, str) else v) for k, v in values.items()}
    assert js["tokens"] == list(st.tokens) and js["notes"] == notes(st), where
    assert js["perm"] == st.perm.tolist() and js["sameSet"] == st.same_set, where
    assert js["equivariant"] == st.equivariant, where
    for a, b in (("maxError", "max_error"), ("weightsError", "weights_error")):
        py = getattr(st, b)
        assert (js[a] <= 1e-9 and py <= 1e-9) or abs(js[a] - py) <= TOL, (where, a)
    err = close(js["difference"], st.difference, where)
    for name in ("after", "before"):
        for got, want in zip(js[name], getattr(st, name), strict=True):
            err = max(err, close(got, want, (where, name)))
    assert TINY.sub("#", row["readout"]) == TINY.sub("#", view["readout"]), where
    assert TINY.sub("#", row["alt"]) == TINY.sub("#", view["alt"]), where
    return err



PERMUTATION_BAD = [dict(text="the cat", order="sideways")]


# ------------------------------------------------------------------ chapter 6: masking

MASK_KINDS = ("none", "causal", "padding", "window", "band")


def masking_values(n: int, seed: int) -> list[dict]:
    """Every control over its live range: length 0..32, window 1..16, band 0..16 each way
    (and beyond: the state takes any whole number), both methods."""
    rng = np.random.default_rng(seed)
    return [dict(text=text, kind=MASK_KINDS[k % 5], method="after" if k % 3 == 1 else "before",
                 length=int(rng.integers(0, 40)), window=int(rng.integers(1, 20)),
                 lower=int(rng.integers(0, 20)), upper=int(rng.integers(0, 20)) if k % 4 else 0)
            for k, text in enumerate([*FIXED_TEXTS, *sentences(rng, n, longest=30)])]


def check_masking(values: dict, row: dict, st, view: dict) -> float:
    js = row["state"]
    where = {k: (v[:60] if isinstance(v, str) else v) for k, v in values.items()}
    assert js["tokens"] == list(st.tokens) and js["notes"] == notes(st), where
    assert js["real"] == st.real.tolist(), where
    assert np.array_equal(arr(js["mask"]).astype(bool), st.mask.ravel()), where
    assert js["fullyMasked"] == st.fully_masked.tolist(), where
    err = max(close(js[name], getattr(st, name), (where, name))
              for name in ("scores", "weights", "output"))
    err = max(err, close(js["rowSums"], st.row_sums, where))
    assert row["readout"] == view["readout"] and row["alt"] == view["alt"], where
    return err




_MASKING_BASE = dict(text="the cat", kind="causal", method="before", length=3, window=2,
                     lower=1, upper=1)
MASKING_BAD = [dict(_MASKING_BASE, kind="diagonal"), dict(_MASKING_BASE, method="during"),
               dict(_MASKING_BASE, length=-1), dict(_MASKING_BASE, window=0),
               dict(_MASKING_BASE, lower=-2), dict(_MASKING_BASE, upper=1.5)]


# ------------------------------------------------------------------ every lab: parity, errors

#: each lab's held-out values (values(n, seed)) and its check (check(values, row, state, view)
#: -> the largest difference), with the (n, seed) of a fast run and of the slow one. The
#: edit loop's parity of these labs is the twin contract's (test_web_twins: the same
#: states within 1e-5 and the same drawing, readout and alt text, on 10 values a lab); this
#: sweep holds them to 1e-12 on 1,200-1,500 values. A new lab needs no line here.
PARITY = {
    "embedding": (embedding_values, check_embedding, (60, 101), (1500, 2718)),
    "attention": (attention_values, check_attention, (60, 303), (1500, 31415)),
    "multihead": (multihead_values, check_multihead, (50, 404), (1200, 4242)),
    "permutation": (permutation_values, check_permutation, (60, 505), (1500, 5005)),
    "masking": (masking_values, check_masking, (60, 606), (1500, 6006)),
}


def checked(lab: str, values: list, rows: list) -> list[float]:
    """The lab's check of each values' row (the module's state, readout and alt text) against
    Python's state and the module's readout and alt text of it (js_view.text_views: without
    the arrays they never read); the largest differences."""
    check, state = PARITY[lab][1], SCENES[lab].state
    states = [state(**v) for v in values]
    return [check(v, row, st, view) for v, row, st, view
            in zip(values, rows, states, text_views(lab, *states), strict=True)]


def test_an_emptied_array_the_texts_read_changes_them(monkeypatch):
    """js_view.text_views can only fail a parity test, never pass it wrongly: emptying an
    array the texts do read (masking's weights, whose row sums the alt text prints) changes
    them."""
    import js_view

    st = masking_state(text="!!!", kind="window", method="before", length=16, window=14,
                       lower=9, upper=7)
    assert text_views("masking", st) == views("masking", st)
    monkeypatch.setitem(js_view.UNREAD, "masking", ("scores", "output", "weights"))
    assert text_views("masking", st)[0]["alt"] != views("masking", st)[0]["alt"]


@pytest.mark.slow
@pytest.mark.parametrize("lab", PARITY)
def test_parity_on_many_held_out_values(lab):
    values_of, _, _, (n, seed) = PARITY[lab]
    values = values_of(n, seed=seed)
    errors = checked(lab, values, run(lab, values, "--no-numbers"))
    assert max(errors) < 1e-12  # measured: rounding only


#: each lab's state function and values it must refuse with Python's own message
BAD_VALUES = {
    "embedding": (embedding_state, EMBEDDING_BAD),
    "attention": (attention_state, ATTENTION_BAD),
    "scaling": (scaling_state, SCALING_BAD),
    "multihead": (multihead_state, MULTIHEAD_BAD),
    "permutation": (permutation_state, PERMUTATION_BAD),
    "masking": (masking_state, MASKING_BAD),
}


@pytest.mark.parametrize("lab", BAD_VALUES)
def test_bad_values_give_pythons_messages(lab):
    state, bad = BAD_VALUES[lab]
    for v, row in zip(bad, run(lab, bad), strict=True):
        with pytest.raises(ValueError) as err:
            state(**v)
        assert row["error"] == str(err.value), v


# ------------------------------------------------------------------ the numbers readers download


def test_every_lab_offers_its_numbers_as_json():
    """numbers(state): plain JSON with at least the tokens and the weights drawn (one row
    per query; the lab's main matrix where there is no attention), equal to Python's."""
    cases = [
        ("embedding", embedding_values(4, 1), lambda st: (st.tokens, st.X)),
        ("attention", attention_values(4, 2), lambda st: (st.query_tokens, st.weights)),
        ("multihead", multihead_values(4, 3), lambda st: (st.tokens, st.weights)),
        ("permutation", permutation_values(4, 4), lambda st: (st.tokens, st.before[1])),
        ("masking", masking_values(4, 5), lambda st: (st.tokens, st.weights)),
    ]
    states = {"embedding": embedding_state, "attention": attention_state,
              "multihead": multihead_state, "permutation": permutation_state,
              "masking": masking_state}
    sent = [[name, values] for name, values, _ in cases] + [["scaling", [dict(d_k=4, scaled=True)]]]
    *rows, [scaling] = node("states.numbers", input=sent)  # every lab's in one run
    for (name, values, want), numbers in zip(cases, rows, strict=True):
        for v, row in zip(values, numbers, strict=True):
            got = json.loads(json.dumps(row, allow_nan=False))
            tokens, weights = want(states[name](**v))
            assert got["lab"] == name and got["tokens"] == list(tokens), (name, v)
            np.testing.assert_allclose(np.array(got["weights"], dtype=float).reshape(weights.shape),
                                       weights, atol=TOL, rtol=0)
    assert scaling["tokens"] == [] and len(scaling["weights"]) == 1 and len(scaling["weights"][0]) == 16


# ------------------------------------------------------------------ pictures for lab.js

def figure_check(cases: dict, *args: str) -> dict:
    """What web/lab.js could not draw of each lab's figures ({lab: values}: states.mjs's
    ``states.panels``, with ``args``), all in one run of Node: {lab: per values {panels,
    bad}} (and the figure, with "--figure")."""
    got = node("states.panels", *args, input=[[lab, values] for lab, values in cases.items()])
    return dict(zip(cases, got, strict=True))


def test_figures_are_panels_lab_js_can_draw():
    """figure(state): heatmaps whose data fill rows x cols with finite numbers and labels to
    match (and masks), lines of n points (a log axis above 0), arcs of one weight a key, bars
    of one value a label (web/lab.js's panel kinds), every panel titled, every heatmap and
    lines panel with named axes and every colour bar with a name (the matplotlib views'
    check), for every lab, with no tokens too."""
    cases = {"embedding": embedding_values(6, 21), "attention": attention_values(6, 22),
             "multihead": multihead_values(6, 23), "permutation": permutation_values(6, 24),
             "masking": masking_values(6, 25),
             "scaling": [dict(d_k=d_k, scaled=scaled) for d_k in (1, 64, 512)
                         for scaled in (False, True)]}
    drawn = figure_check(cases)
    for name, values in cases.items():
        for v, row in zip(values, drawn[name], strict=True):
            assert row["bad"] == [] and row["panels"] >= 2, (name, v, row)


# ------------------------------------------------------------------ in chromium, from file://

SCRIPTS = ("lab.js", "embedding.js", "attention.js", "scaling.js",
           "multihead.js", "permutation.js", "masking.js")


@pytest.mark.slow
@pytest.mark.browser
def test_chromium_file_page_computes_pythons_states(browser, tmp_path):
    """The modules as readers get them: classic scripts loaded with <script src> by a page
    opened as file:// (chromium's V8, its own exp and sin), on held-out values of every lab;
    reader-typed markup put into the page through the readout stays text."""
    page_file = tmp_path / "states.html"
    page_file.write_text("<!doctype html><title>states</title>" + "".join(
        f'<script src="{(WEB / name).as_uri()}"></script>' for name in SCRIPTS)
        + '<div id="out"></div>')
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(page_file.as_uri())
    labs = [("embedding", embedding_values(40, 7)), ("attention", attention_values(40, 8)),
            ("multihead", multihead_values(40, 9)), ("permutation", permutation_values(40, 10)),
            ("masking", masking_values(40, 11))]
    for name, values in labs:
        checked(name, values, page.evaluate(page_function("labStates"), [name, values]))
    scaling = [dict(d_k=d_k, scaled=sc) for d_k in (1, 8, 64) for sc in (False, True)]
    states = [scaling_state(**v) for v in scaling]
    for v, row, st, view in zip(scaling, page.evaluate(page_function("labStates"), ["scaling", scaling]), states,
                                views("scaling", *states), strict=True):
        assert abs(row["state"]["maxWeight"] - st.max_weight) <= TOL, v
        assert row["readout"] == view["readout"] and row["alt"] == view["alt"], v
    markup = "<b>x</b><script>document.title='ran'</script><img src=x onerror=alert(1)>"
    shown = page.evaluate(page_function("markupReadouts"), markup)
    # the tokens '<', 'script', '>' are shown as text; no element came from the reader's text
    assert shown[0] == 0 and shown[2] == "states", shown
    assert "< \u2192 1 (<unk>, unknown)" in shown[1] and "'script'" in shown[1]
    page.close()
    assert errors == []
