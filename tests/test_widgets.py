"""Chapter 1's live lab (controls.live_lab("embedding")) and the view it draws with.

Expected values come from the math layer directly (tokenize, encode, embedding_table,
embed, cosine_similarity), not from the state function under test. Nothing here is timed:
speed is measured by benchmarks/widget_latency.py.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys

import ipywidgets
import numpy as np
import pytest
from PIL import Image

from attention_book import plots
from attention_book.controls import live_lab
from attention_book.embedding import cosine_similarity, embed, embedding_table
from attention_book.tokens import (
    MAX_TEXT_CHARS,
    RUNNING_IDS,
    RUNNING_SENTENCE,
    Vocabulary,
    tokenize,
)
from attention_book.scenes import (
    MAX_WIDGET_TOKENS,
    EmbeddingState,
    Note,
    embedding_readout_html,
    embedding_state,
)

VOCAB = Vocabulary.default()


def embedding_widget(**values):
    return live_lab("embedding", **values)


def expected(text: str, d: int, seed: int):
    """Tokens, X:(s, d) and similarity (s, s), straight from the math layer."""
    tokens = tokenize(text)[:MAX_WIDGET_TOKENS]
    X = embed(VOCAB.encode(tokens), embedding_table(len(VOCAB), d, seed))
    return tokens, X, cosine_similarity(X)


def tick_texts(axis) -> list[str]:
    """The tick labels an axis holds (the view draws them from bitmaps, so the axis's own
    Text objects are hidden and get_ticklabels() is empty: ask its formatter)."""
    return list(axis.get_major_formatter().format_ticks(axis.get_majorticklocs()))


def assert_shows(lab, text: str, d: int, seed: int):
    """The lab's artists and readout show exactly (text, d, seed)."""
    tokens, X, sim = expected(text, d, seed)
    s = len(tokens)
    xp, sp = lab.view.x_panel, lab.view.similarity_panel
    np.testing.assert_array_equal(np.asarray(xp.image.get_array()), X)
    np.testing.assert_allclose(np.asarray(sp.image.get_array()), sim)
    assert xp.image.get_extent() == [-0.5, d - 0.5, s - 0.5, -0.5]
    assert sp.image.get_extent() == [-0.5, s - 0.5, s - 0.5, -0.5]
    assert xp.ax.get_xlim() == (-0.5, d - 0.5) and xp.ax.get_ylim() == (s - 0.5, -0.5)
    # the axes' tick labels and the labels actually drawn both equal the tokens
    assert tick_texts(xp.ax.yaxis) == tokens
    assert tick_texts(sp.ax.yaxis) == tokens
    assert tick_texts(sp.ax.xaxis) == tokens
    assert tick_texts(xp.ax.xaxis) == [str(j) for j in range(0, d, max(1, d // 8))]
    assert list(xp.row_labels.texts) == tokens
    assert list(sp.row_labels.texts) == list(sp.col_labels.texts) == tokens
    assert xp.ax.get_title() == xp.title.texts[0] == f"X : (s, d) = ({s}, {d})"
    assert f"X : (s, d) = ({s}, {d})" in lab.readout.value
    assert lab.state.s == s and lab.state.X.shape == (s, d)


@pytest.fixture
def lab():
    return embedding_widget()


def test_factory_returns_a_widget_with_labelled_controls(lab):
    assert isinstance(lab, ipywidgets.VBox)
    assert set(lab.controls) == {"text", "d", "seed"}
    assert isinstance(lab.controls["text"], ipywidgets.Text)
    assert lab.controls["text"].continuous_update
    assert isinstance(lab.controls["d"], ipywidgets.SelectionSlider)
    assert tuple(lab.controls["d"].options) == (2, 4, 8, 16, 32, 64)
    assert isinstance(lab.controls["seed"], ipywidgets.IntSlider)
    for control in lab.controls.values():
        assert isinstance(control, ipywidgets.ValueWidget)
        assert control.description.strip()
    # the figure is shown as a PNG in an Image widget inside the lab, described in text
    assert isinstance(lab.image, ipywidgets.Image) and lab.image in lab.children
    assert lab.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Describe the picture" in lab.description.value


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_initial_state_is_the_running_example(lab):
    assert lab.controls["text"].value == RUNNING_SENTENCE
    assert tuple(lab.state.ids) == RUNNING_IDS
    assert_shows(lab, RUNNING_SENTENCE, 8, 0)


@pytest.mark.slow  # a live lab per case (0.2-0.5 s each); the fast loop keeps two lab tests per lab
@pytest.mark.parametrize(
    "name, value, text, d, seed",
    [
        ("d", 2, RUNNING_SENTENCE, 2, 0),
        ("d", 64, RUNNING_SENTENCE, 64, 0),
        ("seed", 7, RUNNING_SENTENCE, 8, 7),
        ("text", "the cat saw the dog", "the cat saw the dog", 8, 0),
    ],
)
def test_every_control_updates_the_artists_in_place(lab, name, value, text, d, seed):
    fig = lab.figure
    canvas = fig.canvas
    images = (lab.view.x_panel.image, lab.view.similarity_panel.image)
    n_axes = len(fig.axes)
    before = np.asarray(images[0].get_array()).copy()
    lab.controls[name].value = value
    assert_shows(lab, text, d, seed)
    assert not np.array_equal(np.asarray(images[0].get_array()), before)
    # not re-plotted: the same figure, canvas, axes and images
    assert lab.figure is fig and fig.canvas is canvas and len(fig.axes) == n_axes
    assert lab.view.x_panel.image is images[0] and lab.view.similarity_panel.image is images[1]
    assert all(len(ax.images) == 1 for ax in (lab.view.x_panel.ax, lab.view.similarity_panel.ax))
    canvas.draw()  # the new state draws


def test_all_controls_in_sequence(lab):
    lab.controls["d"].value = 16
    lab.controls["seed"].value = 3
    lab.controls["text"].value = "It's the dog's bone."
    assert_shows(lab, "It's the dog's bone.", 16, 3)
    lab.controls["d"].value = 4
    assert_shows(lab, "It's the dog's bone.", 4, 3)


def test_set_values_sets_several_controls_and_redraws_once(lab, monkeypatch):
    """What a lab's action buttons call (chapter 5's shuffle): a NameError in it once
    passed the fast loop, as no fast test called it."""
    shown = []
    monkeypatch.setattr(lab.view, "show", lambda state, _show=lab.view.show: (
        shown.append(state), _show(state))[1])
    lab.set_values({"d": 16, "seed": 3, "text": "the dog"})
    assert len(shown) == 1
    assert_shows(lab, "the dog", 16, 3)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_repeated_words_have_similarity_one(lab):
    lab.controls["text"].value = "the cat saw the dog"
    sim = np.asarray(lab.view.similarity_panel.image.get_array())
    assert sim[0, 3] == pytest.approx(1.0)
    assert "repeated tokens: &#x27;the&#x27; (2 times)" in lab.readout.value


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_unknown_word_is_flagged(lab):
    lab.controls["text"].value = "the zzz is lovely"
    assert lab.state.known == (True, False, True, True)
    assert lab.state.ids[1] == VOCAB.unk_id == 1
    note = Note("info", "'zzz' is not in the vocabulary: it maps to <unk> (id 1)")
    assert note in lab.state.notes
    readout = lab.readout.value
    assert "&#x27;zzz&#x27; is not in the vocabulary: it maps to &lt;unk&gt; (id 1)" in readout
    assert "zzz &rarr; 1 <i>(&lt;unk&gt;, unknown)</i>" in readout


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_empty_text_shows_a_message_and_blanks_the_figure(lab):
    for text in ("", "   "):
        lab.controls["text"].value = text  # must not raise
        assert lab.state.s == 0
        assert "Text is empty: type at least one word." in lab.readout.value
        assert "X : (s, d) = (0, 8): no tokens" in lab.readout.value
        for panel in (lab.view.x_panel, lab.view.similarity_panel):
            assert not panel.image.get_visible() and panel.notice.get_visible()
            assert panel.row_labels.texts == ()
        lab.figure.canvas.draw()
    lab.controls["d"].value = 32  # still fine while empty
    lab.controls["text"].value = "the dog"
    assert lab.view.x_panel.image.get_visible() and not lab.view.x_panel.notice.get_visible()
    assert_shows(lab, "the dog", 32, 0)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_long_text_is_truncated_with_a_message(lab):
    text = " ".join(["the cat saw the dog"] * 11) + " and the"  # 55 + 2 = 57 tokens
    lab.controls["text"].value = text
    assert lab.state.total_tokens == 57 and lab.state.s == MAX_WIDGET_TOKENS == 32
    assert "showing the first 32 of 57 tokens" in lab.readout.value
    assert_shows(lab, text, 8, 0)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_over_long_text_shows_a_message(lab):
    lab.controls["text"].value = "a" * (MAX_TEXT_CHARS + 1)
    assert lab.state.s == 0
    assert "the limit is 100,000" in lab.readout.value


# Our readouts only ever open these tags; any other "<" must be escaped text.
_OUR_TAG = re.compile(r"<(/?)(div|span|b|i|ul|li)\b")


def assert_only_our_markup(fragment: str):
    for match in re.finditer("<", fragment):
        assert _OUR_TAG.match(fragment, match.start()), fragment[match.start():match.start() + 40]


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
@pytest.mark.parametrize("text", ["<script>alert(1)</script>", "<b>bold</b>",
                                  "the <img src=x onerror=alert(1)> dog"])
def test_html_typed_in_the_box_is_shown_literally(lab, text):
    lab.controls["text"].value = text
    readout = lab.readout.value
    assert "<script" not in readout and "<b>bold" not in readout and "<img" not in readout
    assert "&lt;" in readout and "&gt;" in readout
    assert_only_our_markup(readout)


def test_readout_escapes_every_token_and_note():
    # a state as another tokenizer might produce it: whole tags as tokens and messages,
    # known and unknown
    state = EmbeddingState(
        text="", d=2, seed=0, tokens=("<script>alert(1)</script>", "<b>bold</b>"),
        ids=np.array([1, 7]), known=(False, True), total_tokens=2, X=np.zeros((2, 2)),
        similarity=np.zeros((2, 2)), notes=(Note("warning", "<b>bold</b> & <script>"),),
    )
    readout = embedding_readout_html(state)
    assert ">&lt;script&gt;alert(1)&lt;/script&gt; &rarr; 1 <i>" in readout
    assert ">&lt;b&gt;bold&lt;/b&gt; &rarr; 7</span>" in readout
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; &lt;script&gt;</li>" in readout
    assert readout.count("<b>") == 2  # ours: "tokens -> ids:" and "warning:"
    assert_only_our_markup(readout)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_factories_never_display(monkeypatch):
    import IPython.core.display_functions as display_functions
    import IPython.display

    def forbidden(*args, **kwargs):
        raise AssertionError("display() was called")

    monkeypatch.setattr(IPython.display, "display", forbidden)
    monkeypatch.setattr(display_functions, "display", forbidden)
    lab = embedding_widget(text="the dog", d=4, seed=2)
    lab.controls["text"].value = "the cat"
    assert_shows(lab, "the cat", 4, 2)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_factory_arguments_are_checked():
    with pytest.raises(ValueError, match="d must be one of"):
        embedding_widget(d=5)
    with pytest.raises(ValueError, match="seed"):
        embedding_widget(seed=-1)


def test_state_function_is_pure_and_shared():
    a, b = embedding_state("the dog", 4, 1), embedding_state("the dog", 4, 1)
    np.testing.assert_array_equal(a.X, b.X)
    assert a.tokens == b.tokens and a.notes == b.notes
    with pytest.raises(ValueError):
        embedding_state("the dog", 0, 1)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_axes_are_titled_labelled_and_colour_blind_safe(lab):
    for panel in (lab.view.x_panel, lab.view.similarity_panel):
        assert panel.ax.get_xlabel() and panel.ax.get_ylabel() and panel.ax.get_title()
        assert panel.colorbar.ax.get_ylabel()
        assert panel.image.get_cmap().name in {"cividis", "viridis"}
    assert lab.view.similarity_panel.image.get_clim() == (-1.0, 1.0)


@pytest.mark.slow  # draws the view or figures (0.2-0.5 s a case)
def test_static_parts_survive_savefig_at_any_dpi():
    # the colour bars and axis labels are pasted from a cache: they must be in every PNG
    view = plots.embedding_view()
    tokens, X, sim = expected(RUNNING_SENTENCE, 8, 0)
    view.update(tokens, X, sim)
    for dpi in (80, 100, 80):
        png = plots.figure_png(view.figure, dpi=dpi)
        pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
        scale = dpi / view.figure.dpi
        x0, y0, x1, y1 = view.x_panel.colorbar.ax.bbox.extents * scale
        height = pixels.shape[0]
        bar = pixels[int(height - y1) + 2:int(height - y0) - 2, int(x0) + 1:int(x1) - 1]
        assert bar.size and (bar.std(axis=(0, 1)) > 10).any()  # the gradient, not blank
        # the text labels drawn from bitmaps: left of the X heatmap there is ink
        ax0 = view.x_panel.ax.bbox.extents * scale
        margin = pixels[int(height - ax0[3]):int(height - ax0[1]), :int(ax0[0]) - 2]
        assert (margin < 128).any()


def test_static_layer_pastes_a_named_variant_again_and_draws_an_unnamed_one():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(3, 2), dpi=50)
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    line, = ax.plot([0, 1], [0, 1])
    layer = plots.freeze_layout(figure, static_axes=(ax,))
    drawn = []
    real = layer._draw_static
    layer._draw_static = lambda renderer: (drawn.append(1), real(renderer))

    def pixels(variant, y):
        line.set_ydata(y)
        layer.invalidate(variant=variant)
        figure.canvas.draw()
        return np.asarray(figure.canvas.buffer_rgba()).copy()

    up, down = pixels("up", [0, 1]), pixels("down", [1, 0])
    assert len(drawn) == 2 and not np.array_equal(up, down)
    assert np.array_equal(pixels("up", [0, 1]), up) and len(drawn) == 2  # pasted
    assert np.array_equal(pixels(None, [0, 1]), up) and len(drawn) == 3  # unnamed: drawn
    for k in range(layer.VARIANTS + 1):  # only the newest few are kept
        pixels(f"v{k}", [0, k])
    pixels("up", [0, 1])
    assert len(drawn) == 3 + layer.VARIANTS + 2


@pytest.mark.slow  # draws the view or figures (0.2-0.5 s a case)
def test_vector_output_draws_text_as_text():
    view = plots.embedding_view()
    tokens, X, sim = expected("the $x$ dog", 4, 0)
    view.update(tokens, X, sim)
    with io.StringIO() as buffer:
        view.figure.savefig(buffer, format="svg")
        svg = buffer.getvalue()
    for text in ("X : (s, d) = (5, 4)", "dimension j (column of X)", "dog", "$"):
        assert f"<!-- {text} -->" in svg


@pytest.mark.slow  # starts a fresh Python (0.5-1 s)
def test_widgets_and_browser_labs_never_import_pyplot():
    code = (
        "import sys\n"
        "from attention_book.controls import live_lab, web_lab\n"
        "lab = live_lab('embedding'); lab.controls['d'].value = 4; lab.figure.canvas.draw()\n"
        "web_lab('embedding')._repr_html_()\n"
        "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_the_image_shows_exactly_the_drawn_pixels():
    """The level-1 PNG sent to the page decodes to exactly what Agg drew, after each change."""
    lab = embedding_widget()
    for value in (4, 64):
        lab.controls["d"].value = value
        shown = np.asarray(Image.open(io.BytesIO(lab.image.value)))
        drawn = np.asarray(lab.figure.canvas.buffer_rgba())[..., :3]
        assert np.array_equal(shown, drawn)
    assert lab.state.d == 64
