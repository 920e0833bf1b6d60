"""Chapter 4's lab (scenes/multihead.py, live_lab("multihead")), its view
(plots/multihead.py) and the lab shown in a static build.

Expected values come from the math layer directly (MultiHeadAttention, embedding_table,
sinusoidal_encoding), not from the state function under test.
"""

from __future__ import annotations

import html

import ipywidgets
import numpy as np
import pytest

from attention_book import controls
from attention_book import multihead as M
from attention_book.controls import lab as book_lab, live_lab
from attention_book.controls.live import LiveLab
from attention_book.embedding import embed, embedding_table
from attention_book.plots import MultiHeadView, NearestImage, mosaic_layout, multihead_view
from attention_book.positional import sinusoidal_encoding
from attention_book.scenes import (
    MH_DEFAULT_SEED,
    SCENES,
    head_choices,
    missing_heads_text,
    multihead_alt_text,
    multihead_readout_html,
    multihead_state,
)
from attention_book.tokens import RUNNING_IDS, RUNNING_SENTENCE, Vocabulary

MultiHeadLab = LiveLab
SCENE = SCENES["multihead"]


def multihead_widget(**values):
    return live_lab("multihead", **values)


def expected(d, h, seed, positional=False, ids=RUNNING_IDS):
    X = embed(np.array(ids), embedding_table(len(Vocabulary.default()), d, seed))
    if positional:
        X = X + sinusoidal_encoding(len(ids), d)
    mha = M.MultiHeadAttention.from_seed(d, h, seed=seed, bias=True)
    out, w = mha(X)
    return mha, X, out, w


@pytest.fixture
def lab():
    return multihead_widget()


def artists(lab):
    v = lab.view
    return (v.mosaic, v.tile_labels, v.on_panel.image, v.off_panel.image,
            list(lab.figure.axes))


def shown_tiles(view: MultiHeadView, h, s):
    """Cut the mosaic back into h tiles of (s, s, 4) uint8 colours."""
    rgba = view.mosaic.get_array()
    rows, cols, gap, size = mosaic_layout(h, s, view.box)
    assert rgba.shape == (rows * size, cols * size, 4)
    return [rgba[(i // cols) * size + gap:(i // cols + 1) * size,
                 (i % cols) * size:(i % cols) * size + s] for i in range(h)]


def colours(view, w):
    return view.cmap(np.clip(w, 0, 1), bytes=True)


def test_factory_returns_a_widget_with_labelled_controls(lab):
    assert isinstance(lab, MultiHeadLab) and isinstance(lab, ipywidgets.VBox)
    assert set(lab.controls) == {"text", "d", "h", "seed", "heads_on", "positional"}
    for control in lab.controls.values():
        assert control.description
    assert lab.controls["h"].options == (1, 2, 4, 8)
    assert isinstance(lab.image, ipywidgets.Image) and lab.image.value[:4] == b"\x89PNG"


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_initial_state_matches_the_math_layer(lab):
    mha, X, out, w = expected(8, 2, MH_DEFAULT_SEED)
    np.testing.assert_allclose(lab.state.X, X)
    np.testing.assert_allclose(lab.state.weights, w)
    np.testing.assert_allclose(lab.state.on_output, out, atol=1e-12)
    np.testing.assert_allclose(lab.state.off_output, 0.0)
    tiles = shown_tiles(lab.view, 2, 5)
    for i in range(2):
        np.testing.assert_array_equal(tiles[i], colours(lab.view, w[i]))
    assert lab.view.tile_labels.texts == ("head 0", "head 1")


@pytest.mark.slow  # a live lab per case (0.2-0.5 s each); the fast loop keeps two lab tests per lab
@pytest.mark.parametrize("name,value", [
    ("d", 12), ("h", 4), ("seed", 3), ("positional", True), ("heads_on", (1,)),
    ("text", "the dog saw the cat"),
])
def test_every_control_updates_the_artists_in_place(lab, name, value):
    before = artists(lab)
    old = lab.view.mosaic.get_array().copy()
    lab.controls[name].value = value
    after = artists(lab)
    assert all(a is b for a, b in zip(before[:4], after[:4]))
    assert before[4] == after[4]  # the same axes objects, no new ones
    v = lab.values
    state = lab.state
    assert (state.d, state.h, state.seed, state.positional) == (
        v["d"], v["h"], v["seed"], v["positional"])
    tiles = shown_tiles(lab.view, state.h, state.s)
    w = state.weights
    if name != "text":
        _, _, out, w_exp = expected(v["d"], v["h"], v["seed"], v["positional"])
        np.testing.assert_allclose(w, w_exp, atol=1e-12)
        np.testing.assert_allclose(state.on_output + state.off_output, out, atol=1e-12)
    for i in range(state.h):
        col = colours(lab.view, w[i])
        if not state.on[i]:
            col = (0.2 * col + 0.8 * 255).astype(np.uint8)
        np.testing.assert_array_equal(tiles[i], col)
    assert not np.array_equal(lab.view.mosaic.get_array(), old)
    np.testing.assert_array_equal(lab.view.on_panel.image.get_array(), state.on_output)


def test_d_change_offers_only_divisors_and_keeps_h_when_possible(lab):
    lab.controls["h"].value = 4
    lab.controls["d"].value = 12
    assert lab.controls["h"].options == (1, 2, 3, 4, 6, 12)
    assert lab.controls["h"].value == 4
    lab.controls["h"].value = 6
    lab.controls["d"].value = 8  # 6 does not divide 8: the nearest smaller divisor
    assert lab.controls["h"].options == (1, 2, 4, 8)
    assert lab.controls["h"].value == 4
    assert lab.state.h == 4 and lab.state.weights.shape == (4, 5, 5)
    lab.controls["d"].value = 64
    assert lab.controls["h"].options == (1, 2, 4, 8, 16)  # at most 16 heads shown
    for d in (8, 12, 16, 32, 64):
        assert all(d % h == 0 for h in head_choices(d))


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_head_toggles(lab):
    lab.controls["h"].value = 8
    assert lab.controls["heads_on"].options == tuple((f"head {i}", i) for i in range(8))
    assert lab.controls["heads_on"].value == tuple(range(8))
    lab.controls["heads_on"].value = (0, 3)
    st = lab.state
    assert st.on == (True, False, False, True, False, False, False, False)
    mha, X, out, w = expected(8, 8, MH_DEFAULT_SEED)
    contrib, _ = mha.head_contributions(X)
    np.testing.assert_allclose(st.on_output, contrib[[0, 3]].sum(0) + mha.b_o, atol=1e-12)
    np.testing.assert_allclose(st.off_output, out - st.on_output, atol=1e-12)
    assert lab.view.tile_labels.texts[1] == "head 1 (off)"
    assert "head 1 (off)" not in lab.view.tile_labels.texts[0]
    lab.controls["heads_on"].value = ()
    np.testing.assert_allclose(lab.state.on_output, np.tile(mha.b_o, (5, 1)))
    assert "every head is off" in lab.readout.value


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_shape_tracer_follows_the_controls(lab):
    assert "(1, 5, 2, 4)" in lab.readout.value and "(1, 2, 5, 4)" in lab.readout.value
    lab.controls["d"].value = 12
    lab.controls["h"].value = 3
    text = lab.readout.value
    assert "(1, 5, 3, 4)" in text and "(1, 3, 5, 5)" in text and "(1, 5, 12)" in text
    assert "h=5 does not divide d=12" in html.unescape(text)
    lab.controls["text"].value = "the cat"
    assert "(1, 2, 3, 4)" in lab.readout.value


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_lowering_h_reoffers_heads_on_in_one_update(lab):
    """Options and value of "heads on" reach the page together (no console error)."""
    lab.controls["h"].value = 8
    lab.controls["heads_on"].value = (5, 6)
    heads = lab.controls["heads_on"]
    sent = []
    send = heads.send_state
    heads.send_state = lambda key=None: (sent.append(set(key) if isinstance(key, set)
                                                    else {key}), send(key))
    lab.controls["h"].value = 2
    # one update, carrying the new options, the new value and the list's height together
    assert len(sent) == 1 and {"_options_labels", "index"} <= sent[0] <= {
        "_options_labels", "index", "rows"}
    assert heads.rows == 2
    assert heads.value == (0, 1) and lab.state.on == (True, True)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_empty_sentence_traces_s_0_everywhere():
    lab = multihead_widget(text="")
    text = lab.readout.value
    assert "s=0" in text and "no tokens: s = 0" in text
    assert "(1, 0, 8)" in text and "(1, 2, 0, 0)" in text and "(1, 0, 2, 4)" in text
    assert "(1, 1, " not in text
    assert lab.view.heads_panel.notice.get_visible()


@pytest.mark.slow  # draws the view or figures (0.2-0.5 s a case)
@pytest.mark.parametrize("h", [1, 2, 4, 8, 16])
def test_tiles_fill_the_panel_and_name_the_tokens(h):
    view = multihead_view()
    d = 64 if h == 16 else 8
    st = multihead_state(RUNNING_SENTENCE, d, h)
    view.show(st)
    rows, cols, gap, size = view.layout
    assert rows * cols >= h > (rows - 1) * cols
    # the tiles' cells cover at least half of the panel, whatever h is
    assert h * st.s ** 2 / (rows * cols * size ** 2) >= 0.5
    # the panel is filled: the mosaic spans the whole axes
    assert view.mosaic.get_extent() == [-0.5, cols * size - 0.5, rows * size - 0.5, -0.5]
    # queries along the first column's rows, keys along the last row's columns
    assert view.heads_panel.row_labels.texts == st.tokens * rows
    assert view.heads_panel.col_labels.texts == st.tokens * (h - (h - 1) // cols * cols)
    # every tile label fits its tile: short labels when the tiles are narrow
    fontsize = view.tile_labels.fontsize
    assert all(len(t) * 0.6 * fontsize <= view.box[0] / cols for t in view.tile_labels.texts)


@pytest.mark.slow  # draws the view or figures (0.2-0.5 s a case)
def test_long_sentences_drop_token_labels_that_do_not_fit():
    view = multihead_view()
    st = multihead_state(" ".join(["dog"] * 32), 64, 16)
    view.show(st)
    assert view.heads_panel.row_labels.texts == ()
    assert len(view.tile_labels.texts) == 16


def test_the_lab_suggests_the_repeated_word_sentence():
    from attention_book.scenes import MH_SENTENCES

    assert "the dog saw the cat" in MH_SENTENCES
    assert SCENE.control("text").suggestions == MH_SENTENCES[1:]  # the default aside
    for values in SCENE.suggested:  # each state the chapter names is a valid state
        st = multihead_state(**{**SCENE.defaults, **values})
        assert st.h == values.get("h", 2)


def test_missing_heads_text_quotes_the_api_error():
    text = missing_heads_text(8)
    assert "1, 2, 4, 8" in text and "3, 5, 6, 7" in text
    assert "h=3 does not divide d=8" in text
    assert "32, 64" in missing_heads_text(64)  # divisors left out of the picture


def test_empty_text_and_escaping():
    st = multihead_state("", 8, 2)
    assert st.s == 0 and st.notes and st.notes[0].level == "error"
    view = multihead_view()
    view.update(st.tokens, st.weights, st.on, st.on_output, st.off_output)
    st = multihead_state("<b>x</b> & y", 8, 2)
    page = multihead_readout_html(st)
    assert "<b>x" not in page and "&lt;" in page
    assert "tokens <, b, >, x" in multihead_alt_text(st)  # plain text: the explorer escapes it


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_state_errors_and_lab_errors():
    with pytest.raises(ValueError, match="h=3 does not divide d=8"):
        multihead_state(RUNNING_SENTENCE, 8, 3)
    with pytest.raises(ValueError, match="head index 5"):
        multihead_state(RUNNING_SENTENCE, 8, 2, heads_on=(5,))
    with pytest.raises(ValueError, match="h=3 does not divide d=8"):
        multihead_widget(d=8, h=3)
    with pytest.raises(ValueError, match="d must be one of"):
        multihead_widget(d=10)
    with pytest.raises(ValueError, match="h must be one of"):
        multihead_widget(d=64, h=32)


def test_view_rejects_mismatched_shapes():
    view = multihead_view()
    with pytest.raises(ValueError, match="shape"):
        view.update(["a", "b"], np.zeros((2, 3, 3)), [True, True], np.zeros((2, 4)),
                    np.zeros((2, 4)))
    with pytest.raises(ValueError, match="1 to 16 heads"):
        view.update(["a"], np.zeros((17, 1, 1)), [True] * 17, np.zeros((1, 4)),
                    np.zeros((1, 4)))


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_factories_never_display(monkeypatch):
    import IPython.display

    calls = []
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: calls.append(a))
    multihead_widget()
    assert calls == []


def test_interactive_picks_the_browser_lab_in_a_static_build(monkeypatch):
    monkeypatch.setenv("ATTENTION_BOOK_STATIC", "1")
    monkeypatch.setattr(controls, "web_lab", lambda name: ("web", name))
    assert book_lab("multihead") == ("web", "multihead")
    monkeypatch.delenv("ATTENTION_BOOK_STATIC")
    assert isinstance(book_lab("multihead"), MultiHeadLab)


@pytest.mark.parametrize("shape", [(5, 8), (7, 3), (1, 1), (3, 12)])
def test_nearest_image_draws_the_same_pixels_as_imshow(shape):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    A = np.random.default_rng(0).random(shape)
    m, n = shape
    extent = (-0.5, n - 0.5, m - 0.5, -0.5)
    buffers = []
    for fast in (False, True):
        fig = Figure(figsize=(3, 2), dpi=90)
        ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
        if fast:
            image = NearestImage(ax, cmap="viridis", interpolation="nearest", extent=extent)
            image.set_data(A)
            ax.add_image(image)
            assert isinstance(image, NearestImage)
        else:
            ax.imshow(A, cmap="viridis", interpolation="nearest", extent=extent, aspect="auto")
        ax.set_xlim(extent[0], extent[1])
        ax.set_ylim(extent[2], extent[3])
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        buffers.append(np.asarray(canvas.buffer_rgba()).copy())
    np.testing.assert_array_equal(buffers[0], buffers[1])


def test_default_seed_gives_heads_that_differ():
    # at seed 0 the default state's two heads were near copies (correlation 0.94)
    from attention_book.multihead import head_correlations
    assert SCENE.defaults["seed"] == MH_DEFAULT_SEED == multihead_state().seed
    assert abs(head_correlations(multihead_state().weights)[0, 1]) < 0.1
    assert head_correlations(multihead_state(seed=0).weights)[0, 1] > 0.9
