"""Chapter 2's lab's state function (scenes/positional.py), the lab's two forms and the
chapter's static figures.

Expected values come from the math layer directly (sinusoidal_encoding, encoding_at,
relative_rotation, offset_similarity), not from the state function under test.
"""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image

from attention_book import plots
from attention_book import positional as P
from attention_book.controls import lab as book_lab
from attention_book.controls.widget import LabWidget
from attention_book.scenes import MAX_IMAGE_SIDE, SCENES, image_stride, positional_state
from attention_book.controls import live_lab
from js_view import alt as alt_of, readout as readout_of

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def expected_similarity(s, d, base):
    pe = P.sinusoidal_encoding(s, d, base)
    return pe @ pe.T / (d / 2)  # (s, s)


def test_state_function_errors_and_purity():
    with pytest.raises(ValueError, match="d must be even"):
        positional_state(8, 9, 10000, 1)
    with pytest.raises(ValueError, match="s must be at least 1"):
        positional_state(0, 8, 10000, 1)
    with pytest.raises(ValueError, match="k must be a whole number"):
        positional_state(8, 8, 10000, "2")
    a, b = positional_state(10, 8, 100, 2), positional_state(10, 8, 100, 2)
    np.testing.assert_array_equal(a.pe, b.pe)
    np.testing.assert_array_equal(a.similarity, b.similarity)
    assert a.max_error == b.max_error


def test_state_values():
    st = positional_state(40, 16, 1000, 5)
    np.testing.assert_allclose(st.similarity, expected_similarity(40, 16, 1000), atol=1e-12)
    np.testing.assert_allclose(st.wavelengths, 2 * np.pi * 1000 ** (np.arange(8) * 2 / 16))
    assert st.wave_columns == (0, 4, 8, 14)
    assert positional_state(4, 2, 10, 1).wave_columns == (0, 0, 0, 0)


def test_readout_and_alt_text_are_plain_and_escaped():
    st = positional_state(12, 8, 100, 3)
    readout = readout_of("positional", st)
    assert "<script" not in readout
    assert re.search(r"max over p = 0\.\.11 of \|PE\[p\+k\] \u2212 PE\[p\] T\(k\)\| = ", readout)
    alt = alt_of("positional", st)
    assert "12 positions" in alt and "8 dimensions" in alt and "base 100" in alt
    assert "<" not in alt


# ------------------------------------------------------------------------ the book's lab


def test_the_states_the_chapter_asks_for_say_what_it_says():
    scene = SCENES["positional"]
    assert scene.suggested
    for values in scene.suggested:
        scene.values(**values)  # each one the controls can show
    # base 10: the band narrows, far positions nearly orthogonal (the readout says so)
    st = positional_state(64, 64, 10, 3)
    assert "mean similarity of two distinct positions: -0.01" in readout_of("positional", st)
    # d = 2: one frequency, so the base has no effect and its control is disabled
    for d in (2, 4, 64):
        assert scene.active(scene.values(d=d))["base"] == (d != 2)
    # s = 8, k = 16: p + k past the end of the sequence, and the rotation still holds
    assert "p + k = 20 lies outside 0..7" in readout_of("positional", positional_state(8, 64, 10000, 16))


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_lab_picks_the_browser_lab_in_a_static_build(monkeypatch):
    monkeypatch.setenv("ATTENTION_BOOK_STATIC", "1")
    # chapter 2's lab computes in the reader's browser (web/positional.js)
    monkeypatch.setattr("attention_book.controls.web_lab", lambda name: ("browser", name))
    assert book_lab("positional") == ("browser", "positional")
    monkeypatch.setenv("ATTENTION_BOOK_STATIC", "0")
    made = book_lab("positional", s=8)
    assert isinstance(made, LabWidget) and made.values["s"] == 8


# ----------------------------------------------------------- the chapter's figures


def test_image_stride_keeps_heatmaps_within_the_limit():
    assert MAX_IMAGE_SIDE == 256
    for n in (1, 255, 256, 257, 512):
        stride = image_stride(n)
        assert -(-n // stride) <= MAX_IMAGE_SIDE and (stride == 1 or -(-n // (stride - 1)) > 256)
    assert positional_state(512, 8, 10000, 1).notes[-1].text.startswith(
        "the heatmaps show 1 in 2 rows (")


@pytest.mark.slow  # a chapter's figures drawn to PNG (1.6 s); the build draws them too
def test_chapter_figures_show_as_png_without_pyplot():
    pe = P.sinusoidal_encoding(64, 16)  # (s, d)
    sim = P.position_similarity(P.sinusoidal_encoding(64, 64)) / 32  # (s, s)
    X = np.random.default_rng(0).standard_normal((5, 8))  # (s, d)
    figures = [
        plots.layouts_figure(pe, P.concatenated_encoding(64, 16)),
        plots.encoding_figure(P.sinusoidal_encoding(64, 64), (0, 8, 16, 32)),
        plots.wavelengths_figure(P.wavelengths(512), 10000),
        plots.similarity_figure(sim),
        plots.sum_figure(X, P.sinusoidal_encoding(5, 8), ["a", "b", "c", "d", "e"]),
    ]
    for fig in figures:
        assert isinstance(fig, Figure)
        png, size = fig._repr_png_()  # what Jupyter and myst-nb display: drawn at 2x
        assert png.startswith(PNG_SIGNATURE)
        assert Image.open(io.BytesIO(png)).size == (2 * size["width"], 2 * size["height"])
        for ax in fig.axes:
            assert ax.get_xlabel() or ax.get_ylabel()
    # the similarity heatmap's colours span its data (0.42..1 here), said on the colour bar
    image = figures[3].axes[0].images[0]
    assert image.get_clim() == (0.4, 1.0) and sim.min() > 0.4
    assert "0.4 to 1" in figures[3].axes[-1].get_ylabel()
    # the offset curve is the heatmap's first column and row, i.e. sum_i cos(k omega_i)
    k, curve = figures[3].axes[1].lines[0].get_data()
    np.testing.assert_allclose(curve, P.offset_similarity(k, 64) / 32, atol=1e-12)
    # the wave colours are the module's, so the chapter and the lab agree
    colors = [line.get_color() for line in figures[1].axes[1].lines]
    assert tuple(colors) == plots.WAVE_COLORS


@pytest.mark.slow  # starts a fresh Python (0.5-1 s)
def test_static_figures_never_import_pyplot():
    import subprocess
    import sys

    code = ("import sys\n"
            "from attention_book.plots import wavelengths_figure\n"
            "from attention_book.positional import wavelengths\n"
            "assert wavelengths_figure(wavelengths(8), 100)._repr_png_()[0][:4] == b'\\x89PNG'\n"
            "assert 'matplotlib.pyplot' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow  # a live lab per case (0.2-0.5 s each); the fast loop keeps two lab tests per lab
@pytest.mark.parametrize("kwargs, match", [
    (dict(d=7), r"d must be even for sinusoidal encoding.*got d=7"),
    (dict(d=1), r"d must be even"),
    (dict(d=0), r"d must be at least 1"),
    (dict(s=0), r"s must be at least 1, got 0"),
    (dict(s=-3), r"s must be at least 1"),
    (dict(s=513), r"s must be one of 1\.\.512, got 513"),
    (dict(d=514), r"d must be one of 2\.\.512, got 514"),
    (dict(base=1), r"base must be greater than 1"),
    (dict(base=50), r"base must be one of"),
    (dict(k=65), r"k must be a whole number in -64..64"),
    (dict(k=1.5), r"k must be a whole number"),
])
def test_values_the_ui_cannot_offer_raise_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        live_lab("positional", **kwargs)
