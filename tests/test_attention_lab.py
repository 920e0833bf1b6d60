"""Chapter 3's labs (scenes/attention.py), and their views (plots/attention.py).

Expected values come from the math layer directly (tokenize, embed, projection_weights,
project_qkv, scaled_dot_product_attention, softmax_saturation, dot_product_variance), not
from the state functions under test. Speed is measured by benchmarks/widget_latency.py.
"""

from __future__ import annotations

import html
import math
import sys

import ipywidgets
import numpy as np
import pytest

from attention_book.attention import (
    dot_product_variance,
    project_qkv,
    projection_weights,
    scaled_dot_product_attention,
    softmax_saturation,
)
from attention_book.controls import live_lab
from attention_book.embedding import embed, embedding_table
from attention_book.plots import MAX_SHOWN_LABELS, thin_labels
from attention_book.scenes import (
    CROSS_SENTENCE,
    SCALING_DKS,
    attention_readout_html,
    attention_state,
    scaling_curves,
    scaling_state,
)
from attention_book.tokens import RUNNING_SENTENCE, Vocabulary, tokenize


def scaling_widget(**values):
    return live_lab("scaling", **values)


def attention_widget(**values):
    return live_lab("attention", **values)


VOCAB = Vocabulary.default()
TABLE = embedding_table(len(VOCAB), 8, 0)


def expected_weights(text, d_k=4, temperature=1.0, seed=0, kv_text=None):
    """Tokens and weights (s_q, s_k) straight from the math layer."""
    q_tok = tokenize(text)
    k_tok = q_tok if kv_text is None else tokenize(kv_text)
    X = embed(VOCAB.encode(q_tok), TABLE)
    X_kv = embed(VOCAB.encode(k_tok), TABLE)
    Q, K, V = project_qkv(X, *projection_weights(8, d_k, seed=seed), X_kv)
    out, w = scaled_dot_product_attention(Q, K, V, scale=1 / (temperature * math.sqrt(d_k)))
    return q_tok, k_tok, w, out


# ------------------------------------------------------------------ thinning


def test_thin_labels():
    assert thin_labels(list("abc")) == list("abc")
    labels = [str(i) for i in range(128)]
    thin = thin_labels(labels)
    assert len(thin) == 128 and sum(bool(t) for t in thin) <= MAX_SHOWN_LABELS
    assert thin[0] == "0" and thin[8] == "8" and thin[1] == ""
    with pytest.raises(ValueError):
        thin_labels(labels, 0)


# ------------------------------------------------------------------ the sqrt(d_k) lab


@pytest.fixture
def slab():
    return scaling_widget()


def test_scaling_curves_come_from_the_math_layer():
    curves = scaling_curves()
    k = SCALING_DKS.index(64)
    stats = softmax_saturation(64, False, s_k=16, n=300, seed=0)
    assert curves[("max_weight", False)][k] == stats["max_weight"]
    assert curves[("grad_norm", False)][k] == stats["grad_norm"]
    var = dot_product_variance(64, n=1200, seed=0)
    assert curves[("variance", False)][k] == var
    assert curves[("variance", True)][k] == pytest.approx(var / 64)


def test_scaling_lab_controls_and_initial_state(slab):
    assert isinstance(slab, ipywidgets.VBox)
    assert set(slab.controls) == {"d_k", "scaled"}
    assert tuple(slab.controls["d_k"].options) == SCALING_DKS
    assert [v for _, v in slab.controls["scaled"].options] == [False, True]
    for control in slab.controls.values():
        assert control.description.strip()
    assert isinstance(slab.image, ipywidgets.Image) and slab.image in slab.children
    assert slab.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert slab.state.d_k == 64 and slab.state.scaled is False


def assert_scaling_shows(slab, d_k, scaled):
    curves = scaling_curves()
    k = SCALING_DKS.index(d_k)
    for quantity, line, point in zip(slab.view.QUANTITIES, slab.view.highlight, slab.view.marker):
        ys = curves[(quantity, scaled)]
        np.testing.assert_array_equal(line.get_ydata(), ys)
        assert point.get_xdata()[0] == d_k and point.get_ydata()[0] == ys[k]
    assert f"d<sub>k</sub> = {d_k}" in slab.readout.value
    assert ("<b>scaled:" in slab.readout.value) == scaled


@pytest.mark.slow  # a live lab per case (0.2-0.5 s each); the fast loop keeps two lab tests per lab
@pytest.mark.parametrize("name, value, d_k, scaled", [
    ("d_k", 4, 4, False), ("d_k", 512, 512, False), ("scaled", True, 64, True)])
def test_scaling_every_control_updates_in_place(slab, name, value, d_k, scaled):
    fig, artists = slab.figure, (*slab.view.highlight, *slab.view.marker)
    before = [np.asarray(a.get_ydata()).copy() for a in artists]
    n_axes, n_artists = len(fig.axes), len(fig.artists)
    slab.controls[name].value = value
    assert_scaling_shows(slab, d_k, scaled)
    after = [np.asarray(a.get_ydata()) for a in artists]
    assert any(not np.array_equal(b, a) for b, a in zip(before, after))
    assert slab.figure is fig and len(fig.axes) == n_axes and len(fig.artists) == n_artists
    assert all(x is y for x, y in zip(artists, (*slab.view.highlight, *slab.view.marker)))
    fig.canvas.draw()


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_scaling_shows_saturation_in_numbers():
    u, c = scaling_state(512, False), scaling_state(512, True)
    assert u.max_weight > 0.9 and c.max_weight < 0.4
    assert u.grad_norm < 0.35 * c.grad_norm
    assert u.variance > 400 and abs(c.variance - 1) < 0.2
    with pytest.raises(ValueError, match="d_k must be one of"):
        scaling_state(3, False)
    with pytest.raises(ValueError, match="d_k must be one of"):
        scaling_widget(d_k=3)




@pytest.fixture
def alab():
    return attention_widget()


def assert_attention_shows(lab, text, query, d_k=4, temperature=1.0, seed=0, kv_text=None):
    q_tok, k_tok, w, out = expected_weights(text, d_k, temperature, seed, kv_text)
    view = lab.view
    np.testing.assert_allclose(np.asarray(view.heatmap.image.get_array()), w, atol=1e-12)
    assert view.heatmap.image.get_extent() == [-0.5, len(k_tok) - 0.5, len(q_tok) - 0.5, -0.5]
    assert list(view.heatmap.row_labels.texts) == thin_labels(q_tok)
    assert list(view.heatmap.col_labels.texts) == thin_labels(k_tok)
    assert view.heatmap.ax.get_title() == f"weights : $(s_q, s_k)$ = ({len(q_tok)}, {len(k_tok)})"
    assert view.row_box.get_y() == query - 0.5 and view.row_box.get_width() == len(k_tok)
    heights = np.array([p.vertices[1, 1] for p in view.bars.get_paths()])
    np.testing.assert_allclose(heights, w[query], atol=1e-12)
    widths = np.sort(np.asarray(view.arcs.get_linewidths()))
    np.testing.assert_allclose(widths, np.sort(0.4 + 7.0 * w[query]), atol=1e-12)
    assert len(view.arcs.get_segments()) == len(k_tok)
    assert view.query_node.get_ydata()[0] == 1.0
    assert list(view.bar_labels.texts) == thin_labels(k_tok)
    assert f"query {query} (" in lab.readout.value
    np.testing.assert_allclose(lab.state.output, out, atol=1e-12)


def test_attention_lab_controls_and_initial_state(alab):
    assert set(alab.controls) == {"text", "mode", "kv_text", "query", "d_k", "temperature", "seed"}
    for control in alab.controls.values():
        assert isinstance(control, ipywidgets.ValueWidget) and control.description.strip()
    assert [label for label, _ in alab.controls["query"].options] == [
        "0: the", "1: weather", "2: is", "3: lovely", "4: today"]
    assert_attention_shows(alab, RUNNING_SENTENCE, 0)


@pytest.mark.slow  # a live lab per case (0.2-0.5 s each); the fast loop keeps two lab tests per lab
@pytest.mark.parametrize("name, value, kwargs", [
    ("query", 3, dict(query=3)),
    ("d_k", 16, dict(d_k=16)),
    ("temperature", 0.25, dict(temperature=0.25)),
    ("seed", 5, dict(seed=5)),
    ("mode", "cross", dict(kv_text=CROSS_SENTENCE)),
    ("text", "the dog saw the cat", dict(text="the dog saw the cat")),
])
def test_attention_every_control_updates_in_place(alab, name, value, kwargs):
    fig, view = alab.figure, alab.view
    artists = (view.heatmap.image, view.arcs, view.bars, view.row_box, view.query_node)
    before = (np.asarray(view.heatmap.image.get_array()).copy(),
              np.asarray(view.arcs.get_linewidths()).copy())
    n_axes = len(fig.axes)
    alab.controls[name].value = value
    args = dict(text=RUNNING_SENTENCE, query=0)
    args.update(kwargs)
    assert_attention_shows(alab, **args)
    after = (np.asarray(view.heatmap.image.get_array()), np.asarray(view.arcs.get_linewidths()))
    assert any(b.shape != a.shape or not np.allclose(b, a) for b, a in zip(before, after))
    assert alab.figure is fig and len(fig.axes) == n_axes
    assert all(x is y for x, y in zip(artists, (view.heatmap.image, view.arcs, view.bars,
                                                view.row_box, view.query_node)))
    assert len(view.heatmap.ax.images) == 1
    fig.canvas.draw()


def test_kv_text_matters_only_in_cross_mode(alab):
    before = np.asarray(alab.view.heatmap.image.get_array()).copy()
    alab.controls["kv_text"].value = "the sun was warm"
    np.testing.assert_array_equal(np.asarray(alab.view.heatmap.image.get_array()), before)
    alab.controls["mode"].value = "cross"
    assert_attention_shows(alab, RUNNING_SENTENCE, 0, kv_text="the sun was warm")
    assert alab.state.weights.shape == (5, 4)
    assert "cross-attention" in alab.readout.value


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_query_options_follow_the_sentence_and_clamp(alab):
    alab.controls["query"].value = 4
    alab.controls["text"].value = "the dog"
    assert [v for _, v in alab.controls["query"].options] == [0, 1]
    assert alab.controls["query"].value == 1 and alab.state.query == 1
    assert_attention_shows(alab, "the dog", 1)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_empty_text_blanks_the_figure_with_a_message(alab):
    alab.controls["text"].value = "   "
    assert alab.state.s_q == 0
    assert not alab.view.heatmap.image.get_visible() and not alab.view.arcs.get_visible()
    assert "error" in alab.readout.value
    alab.figure.canvas.draw()
    alab.controls["text"].value = RUNNING_SENTENCE
    assert_attention_shows(alab, RUNNING_SENTENCE, 0)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_128_tokens_thin_the_labels_and_ticks():
    text = " ".join(["the weather is lovely today and the dog saw the cat"] * 12)
    lab = attention_widget(text=text)
    assert lab.state.s_q == 128
    ax = lab.view.heatmap.ax
    assert len(ax.get_yticks()) <= MAX_SHOWN_LABELS and len(ax.get_xticks()) <= MAX_SHOWN_LABELS
    assert sum(bool(t) for t in lab.view.heatmap.row_labels.texts) <= MAX_SHOWN_LABELS
    assert lab.view.heatmap.image.get_array().shape == (128, 128)
    lab.controls["query"].value = 100
    assert_attention_shows(lab, " ".join(tokenize(text)[:128]), 100)
    lab.figure.canvas.draw()


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
@pytest.mark.parametrize("text", ["<b>bold</b> & <script>alert(1)</script>"])
def test_typed_html_is_escaped(alab, text):
    alab.controls["text"].value = text
    assert "<script>" not in alab.readout.value and "<b>bold" not in alab.readout.value
    assert html.escape("<") in alab.readout.value


def test_a_token_need_not_attend_most_to_itself():
    st = attention_state(RUNNING_SENTENCE, d_k=4, seed=0)
    assert any(int(np.argmax(st.weights[i])) != i for i in range(st.s_q))
    assert int(np.argmax(st.weights[0])) == 1  # 'the' attends most to 'weather' at seed 0


def test_temperature_sharpens_and_flattens():
    sharp = attention_state(RUNNING_SENTENCE, temperature=0.125).weights.max(axis=1)
    flat = attention_state(RUNNING_SENTENCE, temperature=8.0).weights.max(axis=1)
    assert (sharp > flat).all() and (flat < 0.3).all()


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_state_and_factory_argument_checks():
    with pytest.raises(ValueError, match="mode must be"):
        attention_state(mode="both")
    with pytest.raises(ValueError, match="temperature must be a positive"):
        attention_state(temperature=0.0)
    with pytest.raises(ValueError, match="query must be"):
        attention_state(query=-1)
    with pytest.raises(ValueError, match="d_k must be one of"):
        attention_widget(d_k=3)
    with pytest.raises(ValueError, match="temperature must be one of"):
        attention_widget(temperature=3.0)
    with pytest.raises(ValueError, match="seed must be"):
        attention_widget(seed=99)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_factories_never_display(monkeypatch):
    import IPython.display

    def boom(*a, **k):
        raise AssertionError("display was called")

    monkeypatch.setattr(IPython.display, "display", boom)
    assert isinstance(attention_widget(), ipywidgets.VBox)
    assert isinstance(scaling_widget(), ipywidgets.VBox)


@pytest.mark.slow  # starts a fresh Python (0.5-1 s)
def test_no_pyplot():
    import subprocess
    code = ("import sys, attention_book.scenes.attention, attention_book.plots.attention; "
            "print('matplotlib.pyplot' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_benchmark_registry_has_chapter_3_cases():
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parents[1] / "benchmarks"))
    import widget_latency as W
    names = {case.name for case in W.CASES}
    assert {"scaling", "attention", "attention s=128"} <= names
    case = next(c for c in W.CASES if c.name == "attention s=128")
    assert live_lab(case.scene, **case.start).state.s_q == 128


# ------------------------------------------------------------------ chapter 3's other pictures


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_axis_labels_follow_the_tick_labels_shown():
    lab = attention_widget()
    view = lab.view
    labels = view.axis_labels
    assert labels["key"].texts == ("key token j",) and labels["query"].texts == ("query token i",)
    assert labels["bar key"].texts == ("key token j",)
    short = (labels["key"].pad, labels["query"].pad, labels["bar key"].pad)
    lab.controls["text"].value = "extraordinarily complicated internationalisation"
    long = (labels["key"].pad, labels["query"].pad, labels["bar key"].pad)
    assert all(b > a + 10 for a, b in zip(short, long))  # points: further out for longer words
    # even for 10-character labels the axis label stays inside the figure (10 pt high)
    to_pixels = lab.figure.dpi / 72
    assert view.heatmap.ax.bbox.y0 - (labels["key"].pad + 10) * to_pixels > 0
    assert view.heatmap.ax.bbox.x0 - (labels["query"].pad + 10) * to_pixels > 0


def test_cost_figure_has_a_slope_2_guide_and_alt_text():
    from attention_book.plots import cost_figure

    sizes = (128, 256, 512, 1024)
    t = np.array([1e-4, 3e-4, 1.2e-3, 4.8e-3])
    fig = cost_figure(sizes, {"numpy": t, "torch": t / 2}, {"L2": 2**20, "L3": 32 * 2**20})
    ax_time, ax_per = fig.axes[:2]
    guide = [line for line in ax_time.get_lines() if line.get_linestyle() == "--"][0]
    x, y = guide.get_xdata(), guide.get_ydata()
    slope = np.diff(np.log(y)) / np.diff(np.log(x))
    np.testing.assert_allclose(slope, 2.0)
    assert y[-1] == pytest.approx(t[-1] * 1e3)  # through the last measured point, in ms
    np.testing.assert_allclose(ax_per.get_lines()[0].get_ydata(), t / np.array(sizes) ** 2 * 1e9)
    assert "L2 (1 MiB) at s = 512" in fig.alt and "L3" not in fig.alt  # L3 fills beyond 1024
    page = fig._repr_html_()
    assert page.startswith('<img src="data:image/png;base64,') and 'alt="Two panels' in page


def test_readout_names_exact_ties_between_repeated_keys():
    # cross-attention: "the" is keys 1 and 3; no positions, so every query weighs them alike
    cross = attention_state(RUNNING_SENTENCE, mode="cross", query=4)
    assert cross.row[1] == cross.row[3] == cross.row.max()
    page = attention_readout_html(cross)
    assert "attends most to key 1 ('the', weight 0.23), tied exactly with key 3 " \
        "('the')" in page
    assert "weighed exactly alike by every query" in page and "keys 1 ('the'), 3" in page
    # the tie is named even when it is not the largest weight
    first = attention_readout_html(attention_state(RUNNING_SENTENCE, mode="cross", query=0))
    assert "tied exactly" not in first and "keys 1 ('the'), 3" in first
    # no repeated key, no such line
    assert "weighed exactly alike" not in attention_readout_html(attention_state())
