"""Chapter 9's lab's state function (scenes/pretrained.py) and the chapter's figures.

Expected values come from the model (``MiniLM.attention``, ``tokenize``) and from
``attention_book.heads`` directly, not from the state function under test (the lab runs
its forward pass on one BLAS thread, the model on the default number: float32 results agree
to about 1e-7). The first test that needs the gallery pays for it once (about 4 s: 157
forward passes). Speed is measured by benchmarks/lab_latency.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from attention_book.plots import (entropy_figure, head_maps_figure, head_scores_figure,
                                  neuron_view_figure)
from attention_book.heads import head_scores
from attention_book.pretrained import ANIMAL_SENTENCE, MiniLM, gallery_scores
from attention_book.scenes import (
    ANIMAL_WIDE,
    shown_maps,
    MAX_PRETRAINED_TOKENS,
    PRETRAINED_PRESETS,
    SCENES,
    SCORE_LABELS,
    pretrained_query_options,
    pretrained_state,
    read_pieces,
)
from attention_book.tokens import RUNNING_SENTENCE
from attention_book.tokens import MAX_TEXT_CHARS
from js_view import alt as alt_of, prefetch, readout as readout_of

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SCRIPT = "<script>alert('hi')</script> <b>bold</b>"
LONG = "hello " * 600  # 602 tokens


@pytest.fixture(scope="module")
def model():
    return MiniLM.load()


@pytest.fixture(scope="module")
def gallery():
    return gallery_scores()


def uniform(T: int) -> np.ndarray:
    return np.full((T, T), 1.0 / T)


# ------------------------------------------------------------------ scores


def test_the_lab_labels_scores_that_head_scores_computes():
    assert set(SCORE_LABELS) <= set(head_scores(uniform(4)))


# ------------------------------------------------------------------ the state function


def test_state_of_the_running_sentence(model, gallery):
    state = pretrained_state()
    assert (state.layer, state.head, state.query) == (0, 2, 2)
    assert state.tokens == ("[CLS]", "the", "weather", "is", "lovely", "today", "[SEP]")
    assert state.T == 7 and state.total_tokens == 7 and state.notes == ()
    np.testing.assert_allclose(state.weights, model.attention(RUNNING_SENTENCE)[0, 2],
                               atol=1e-6)
    np.testing.assert_allclose(state.row, state.weights[2])
    assert int(np.argmax(state.row)) == 1  # 'weather' looks at 'the'
    for name, value in head_scores(state.weights).items():
        assert math.isclose(state.scores[name], float(value))
    assert state.gallery == {n: float(s[0, 2]) for n, s in gallery.mean.items()}


@pytest.mark.parametrize("text, layer, head, query", [
    (ANIMAL_SENTENCE, 3, 1, 10), (ANIMAL_WIDE, 5, 11, 10), (RUNNING_SENTENCE, 2, 9, 0)])
def test_state_is_the_models_head(model, text, layer, head, query):
    state = pretrained_state(text, layer, head, query)
    assert list(state.tokens) == model.tokenize(text)
    np.testing.assert_allclose(state.weights, model.attention(text)[layer, head], atol=1e-6)
    assert state.query == query and state.weights.shape == (state.T, state.T)


def test_chapter_numbers_of_the_animal_sentences():
    on_animal = {(ANIMAL_SENTENCE, 3, 1): 0.677, (ANIMAL_WIDE, 3, 1): 0.281,
                 (ANIMAL_SENTENCE, 5, 11): 0.673, (ANIMAL_WIDE, 5, 11): 0.558}
    for (text, layer, head), value in on_animal.items():
        row = pretrained_state(text, layer, head, 10).row
        assert math.isclose(row[2], value, abs_tol=5e-4) and row[2] > row[8]


def test_state_is_pure_and_does_not_rerun_the_model(model, monkeypatch):
    a = pretrained_state(ANIMAL_SENTENCE, 3, 1, 10)
    calls = []
    for block in model.blocks:
        forward = block.forward
        monkeypatch.setattr(block, "forward",
                            lambda *args, _f=forward, **kw: calls.append(1) or _f(*args, **kw))
    b = pretrained_state(ANIMAL_SENTENCE, 3, 1, 10)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a.scores == b.scores and a.gallery == b.gallery
    for layer, head, query in ((0, 0, 0), (5, 11, 15), (2, 7, 3)):
        pretrained_state(ANIMAL_SENTENCE, layer, head, query)
    assert calls == []  # a cached sentence: layer, head and query cost no forward pass
    pretrained_state("a sentence the model has not seen yet", 0, 0, 0)
    assert len(calls) == 6  # a new one: one pass through the 6 blocks


def test_query_is_clamped_and_bad_numbers_are_refused():
    assert pretrained_state(RUNNING_SENTENCE, 0, 2, 99).query == 6
    for kwargs in ({"layer": 6}, {"layer": -1}, {"head": 12}, {"head": 1.5},
                   {"query": -1}, {"layer": True}):
        with pytest.raises(ValueError, match="must be a whole number"):
            pretrained_state(RUNNING_SENTENCE, **kwargs)


# ------------------------------------------------------------------ bad input: notes, no crash


def test_a_600_token_text_is_cut_with_a_note(model):
    state = pretrained_state(LONG, 3, 1, 200)
    assert state.T == MAX_PRETRAINED_TOKENS == 128 and state.total_tokens == 602
    assert state.tokens[0] == "[CLS]" and state.tokens[-1] == "[SEP]"
    assert state.notes[0].level == "warning"
    assert state.notes[0].text.startswith("showing the first 128 of 602 tokens")
    assert state.query == 127 and state.weights.shape == (128, 128)
    np.testing.assert_allclose(state.weights.sum(axis=1), 1.0, atol=1e-5)
    assert "showing the first 128 of 602 tokens" in readout_of("pretrained", state)


def test_the_cut_keeps_words_whole(model):
    text = "The unaffable tokenization. " * 40  # 'unaffable' is three pieces
    used, tokens, notes, total = read_pieces(text)
    assert total > 128 >= len(tokens) and tokens == model.tokenize(used)
    full = model.tokenize(text)
    assert tokens[:-1] == full[:len(tokens) - 1]  # a prefix of the whole text's tokens
    assert not full[len(tokens) - 1].startswith("##")  # the next piece starts a word
    assert str(len(tokens)) in notes[0].text


def test_typed_html_is_shown_escaped(model):
    state = pretrained_state(SCRIPT, 0, 2, 2)
    assert list(state.tokens) == model.tokenize(SCRIPT) and state.tokens[1] == "<"
    page = readout_of("pretrained", state)
    assert "<script" not in page and "<b>bold" not in page and "&lt;" in page
    assert "script" in alt_of("pretrained", state)  # plain text: escaped where it is shown


def test_query_options_follow_the_text():
    options = pretrained_query_options({"text": RUNNING_SENTENCE})
    assert options[0] == ("0: [CLS]", 0) and options[2] == ("2: weather", 2)
    assert len(options) == 7
    assert len(pretrained_query_options({"text": LONG})) == 128


def test_readout_and_alt_text():
    state = pretrained_state(ANIMAL_SENTENCE, 3, 1, 10)
    page = readout_of("pretrained", state)
    assert "layer 3, head 1" in page and "query 10 'it' attends most to" in page
    assert "2 'animal' 0.68" in page
    for label in SCORE_LABELS.values():
        assert label in page
    assert "<th>uniform head</th>" in page and f"{1 / 16:.3f}" in page
    alt = alt_of("pretrained", state)
    assert "16 by 16" in alt and "layer 3, head 1" in alt and "'animal' with weight 0.68" in alt


# ------------------------------------------------------------------ weight or norm, one head or 72


def test_norms_are_the_models_weighted_norms(model):
    """The lab's ||alpha_ij f(x_j)|| is MiniLM.weighted_norms (Kobayashi et al.), the map
    drawn in "norm" mode its rows scaled to sum to 1, and the weights' map unchanged."""
    for layer, head in ((2, 9), (3, 1), (0, 2)):
        st = pretrained_state(ANIMAL_SENTENCE, layer, head, 10, measure="norm")
        want = model.weighted_norms(ANIMAL_SENTENCE)[layer, head]
        np.testing.assert_allclose(st.norms, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(st.shown, want / want.sum(axis=1, keepdims=True), atol=1e-6)
        np.testing.assert_allclose(st.shown.sum(axis=1), 1.0, atol=1e-12)
        np.testing.assert_allclose(st.norms, st.weights / st.weights.sum(1, keepdims=True)
                                   * st.value_norms, rtol=1e-12)
        assert st.differs == int((want.argmax(1) != st.weights.argmax(1)).sum())
        w = pretrained_state(ANIMAL_SENTENCE, layer, head, 10)
        np.testing.assert_array_equal(w.shown, w.weights)
        np.testing.assert_array_equal(w.norms, st.norms)  # the readout's norms either way
        assert w.thumbs.size == 0 and w.view == "head"


@settings(max_examples=60, deadline=None)
@given(hst.integers(1, 6), hst.integers(0, 2**31 - 1))
def test_shown_maps_rows_are_shares(T, seed):
    """Norm mode: each row sums to 1 and is the weights' row when every value is as long
    (a head moving vectors of one length moves what it weighs); weight mode: the weights."""
    rng = np.random.default_rng(seed)
    maps = rng.dirichlet(np.ones(T), size=(3, T)).astype(np.float32)  # (3, T, T), rows sum to 1
    lengths = rng.uniform(0.1, 5, size=(3, T))
    shares = shown_maps(maps, lengths, "norm")
    np.testing.assert_allclose(shares.sum(-1), 1.0, atol=1e-12)
    assert (shares >= 0).all()
    w = maps / maps.astype(np.float64).sum(-1, keepdims=True)
    np.testing.assert_allclose(shown_maps(maps, np.full((3, T), 2.5), "norm"), w, atol=1e-12)
    np.testing.assert_array_equal(shown_maps(maps, lengths, "weight"), maps.astype(np.float64))
    # a longer value takes a larger share of every row than its weight alone
    longer = lengths.copy()
    longer[:, 0] *= 10
    assert (shown_maps(maps, longer, "norm")[..., 0] >= shares[..., 0] - 1e-12).all()


def test_single_thread_value_norms_are_the_value_writes_lengths(model):
    """||f_h(x_j)|| from heads.value_writes on the model's own hidden states, every layer."""
    from attention_book.heads import value_writes
    from attention_book.pretrained import single_thread_value_norms

    got = single_thread_value_norms(ANIMAL_SENTENCE)
    assert got.shape == (6, 12, 16) and got.dtype == np.float32 and not got.flags.writeable
    states = model.hidden_states(ANIMAL_SENTENCE)  # (7, T, d)
    for l, block in enumerate(model.blocks):
        mha = block.attention
        writes = value_writes(states[l] @ mha.W_v + mha.b_v, mha.W_o, 12)  # (h, T, d)
        np.testing.assert_allclose(got[l], np.linalg.norm(writes, axis=-1), rtol=1e-5)


def test_the_cls_head_moves_little_through_its_heavy_sink():
    """L2 H9 parks 0.9 of the running sentence's weight on [CLS] (chapter 9), but [CLS]'s
    value is short: its share of ||alpha f(x)|| is smaller than its weight, in every row."""
    st = pretrained_state(RUNNING_SENTENCE, 2, 9, 0, measure="norm")
    assert st.weights[:, 0].mean() > 0.8
    assert (st.shown[:, 0] < st.weights[:, 0]).all()
    assert st.value_norms[0] < 0.5 * st.value_norms[1:].mean()


def test_model_view_holds_every_heads_map(model):
    for measure in ("weight", "norm"):
        st = pretrained_state(RUNNING_SENTENCE, 4, 7, 3, measure=measure, view="model")
        thumbs = st.thumbs.reshape(6, 12, st.T, st.T)
        np.testing.assert_allclose(thumbs[4, 7], st.shown, rtol=1e-7)  # float32
        if measure == "weight":
            np.testing.assert_allclose(thumbs, model.attention(RUNNING_SENTENCE), atol=1e-6)
        else:
            N = model.weighted_norms(RUNNING_SENTENCE)
            np.testing.assert_allclose(thumbs, N / N.sum(-1, keepdims=True), atol=1e-5)
        alt = alt_of("pretrained", st)
        assert alt.startswith("Panel 1: the model view, 72 thumbnails")
        assert "layer 4, head 7 outlined" in alt and "Panel 3: arcs" in alt
        assert "bars" not in alt and "right" not in alt  # no panel positions: they move


def test_model_view_without_tokens_says_its_grid_is_empty():
    alt = alt_of("pretrained", pretrained_state("", view="model"))
    assert alt.startswith("Panel 1: the model view's grid of 72 heads (6 layers by 12 heads), "
                          "empty. Empty heatmap and arcs (panels 2 and 3)")


def test_bad_measure_or_view_is_refused():
    with pytest.raises(ValueError, match="measure must be one of"):
        pretrained_state(RUNNING_SENTENCE, measure="weights")
    with pytest.raises(ValueError, match="view must be one of"):
        pretrained_state(RUNNING_SENTENCE, view=72)
    with pytest.raises(ValueError, match=r"view must be one of \['head', 'model'\], got \['model'\]"):
        pretrained_state(RUNNING_SENTENCE, view=["model"])


def test_alt_names_panels_in_drawing_order_not_positions():
    """Issue 23: the alt said "Bottom right" for the bars, which are drawn under the map
    (left) on a wide page and last of three on a phone."""
    alt = alt_of("pretrained", pretrained_state(ANIMAL_SENTENCE, 3, 1, 10))
    assert alt.index("Panel 1: heatmap") < alt.index("Panel 2: arcs") < alt.index("Panel 3: bars")
    assert "right" not in alt and "Bottom" not in alt
    st = pretrained_state(ANIMAL_SENTENCE, 3, 1, 10, measure="norm")
    assert "shares of" in alt_of("pretrained", st) and "with share 0.77" in alt_of("pretrained", st)
    page = readout_of("pretrained", st)
    assert "by \u2016\u03b1 f(x)\u2016 (share of the row): 2 'animal' 0.77" in page
    assert f"{st.differs} of 16 queries have another strongest key" in page


# ------------------------------------------------------------------ the view


@pytest.mark.slow  # a chapter's figures drawn to PNG (1.1 s); the build draws them too
def test_chapter_figures():
    rng = np.random.default_rng(0)
    grids = {name: rng.random((6, 12)) for name in SCORE_LABELS}
    tokens = ["[CLS]", "a", "b", "[SEP]"]
    q = rng.normal(size=32)
    for figure in (head_scores_figure(grids),
                   head_maps_figure([("one", tokens, uniform(4)), ("two", tokens, np.eye(4))]),
                   neuron_view_figure(q, rng.normal(size=32), rng.normal(size=32), ("x", "y"), "q"),
                   entropy_figure({"a": rng.random(5), "b": rng.random(3)})):
        assert figure._repr_png_()[0].startswith(PNG_SIGNATURE)
    legend = neuron_view_figure(q, q, -q, ("x", "y"), "q").axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [
        f"'x': sum {q @ q / math.sqrt(32):.2f}", f"'y': sum {-q @ q / math.sqrt(32):.2f}"]


# ------------------------------------------------------------------ the live lab


# ------------------------------------------------------------------ the book's lab


@pytest.mark.slow  # runs the model on the preset sentences
def test_the_preset_sentences_are_suggested_and_read_as_the_chapter_says():
    scene = SCENES["pretrained"]
    assert set(scene.control("text").suggestions) == (
        {text for _, text, _ in PRETRAINED_PRESETS} - {scene.defaults["text"]})
    for values in scene.suggested:
        scene.values(**values)  # each one the controls can show
    st = pretrained_state(ANIMAL_WIDE, 3, 1, 10)
    readout = readout_of("pretrained", st)
    assert "query 10 'it'" in readout and "gallery (157 sentences)" in readout


# ------------------------------------------------------------------ the model's GELU


def test_vectorised_gelu_matches_math_erf():
    """block.gelu's vectorised erf (Cody's rational approximations, which make MiniLM's
    forward pass about a third faster than math.erf per element) agrees with math.erf."""
    from attention_book.block import gelu

    x = np.concatenate([np.linspace(-12, 12, 20001), [0.0, 0.46875, -0.46875, 4.0, 6.0,
                                                      -6.0, 1e-300, 40.0, -40.0]])
    reference = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x])
    np.testing.assert_allclose(gelu(x), reference, rtol=0, atol=2e-15)
    assert gelu(np.float32(1.0)).dtype == np.float32


UNREADABLE = [
    ("", "Text is empty"), ("   \n", "Text is empty"), (None, "Text must be a string"),
    (42, "Text must be a string"), ("\x00\x01", "holds no token"),
    ("a" * (MAX_TEXT_CHARS + 1), "characters long")]


@pytest.fixture(scope="module")
def unreadable_views():
    """Every case's readout and alt text, in one run of Node."""
    prefetch("pretrained", [pretrained_state(text) for text, _ in UNREADABLE])


@pytest.mark.parametrize("text, message", UNREADABLE)
def test_unreadable_text_gives_a_note(text, message, unreadable_views):
    state = pretrained_state(text)
    assert state.T == 0 and state.weights.shape == (0, 0) and state.scores == {}
    assert [n.level for n in state.notes] == ["error"] and message in state.notes[0].text
    assert message.split()[0] in readout_of("pretrained", state)
    assert "gallery (157 sentences)" in readout_of("pretrained", state)
    assert alt_of("pretrained", state).startswith("Empty heatmap and arcs (panels 1 and 2)")
    assert pretrained_query_options({"text": text}) == (("(no tokens)", 0),)
