"""Chapter 2's lab (scenes/positional.py, shown by controls.live_lab("positional")), its view
(plots/positional.py) and the chapter's static figures.

Expected values come from the math layer directly (sinusoidal_encoding, encoding_at,
relative_rotation, offset_similarity), not from the state function under test.
"""

from __future__ import annotations

import io
import re

import ipywidgets
import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image

from attention_book import plots
from attention_book import positional as P
from attention_book.controls import lab as book_lab, live_lab
from attention_book.controls.live import LiveLab
from attention_book.plots import positional_view
from attention_book.scenes import (
    BASE_CHOICES,
    MAX_IMAGE_SIDE,
    SCENES,
    image_stride,
    positional_alt_text,
    positional_readout_html,
    positional_state,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def positional_widget(**values) -> LiveLab:
    return live_lab("positional", **values)


def expected_similarity(s, d, base):
    pe = P.sinusoidal_encoding(s, d, base)
    return pe @ pe.T / (d / 2)  # (s, s)


def assert_shows(lab: LiveLab, s: int, d: int, base: float, k: int):
    """The lab's artists and readout show exactly (s, d, base, k)."""
    view = lab.view
    pe = P.sinusoidal_encoding(s, d, base)  # (s, d)
    rs, cs = -(-s // MAX_IMAGE_SIDE), -(-d // MAX_IMAGE_SIDE)
    pairs = [j for j in range(d) if (j // 2) % cs == 0]  # every cs-th (sin, cos) pair, whole
    np.testing.assert_array_equal(np.asarray(view.pe_panel.image.get_array()), pe[::rs, pairs])
    np.testing.assert_allclose(np.asarray(view.similarity_panel.image.get_array()),
                               expected_similarity(s, d, base)[::rs, ::rs], atol=1e-9)
    assert view.pe_panel.image.get_extent() == [-0.5, d - 0.5, s - 0.5, -0.5]
    assert view.similarity_panel.image.get_extent() == [-0.5, s - 0.5, s - 0.5, -0.5]
    assert view.pe_panel.ax.get_title().startswith(f"PE : (s, d) = ({s}, {d})")
    # waves: sine columns 2i for i = 0, d/8, d/4, d/2 - 1, over positions 0..s-1
    pairs = (0, d // 8, d // 4, d // 2 - 1)
    for line, i in zip(view.wave_lines, pairs):
        x, y = line.get_data()
        np.testing.assert_array_equal(x, np.arange(s))
        np.testing.assert_array_equal(y, pe[:, 2 * i])
    assert view.wave_panel.ax.get_xlim() == (-0.5, max(s - 0.5, 0.5))
    # rotation check at p = s // 2
    p = s // 2
    shifted = P.encoding_at([p + k], d, base)[0]
    rotated = pe[p] @ P.relative_rotation(k, d, base)
    np.testing.assert_allclose(view.shifted_line.get_ydata(), shifted, atol=1e-12)
    np.testing.assert_allclose(view.rotated_line.get_ydata(), rotated, atol=1e-12)
    np.testing.assert_allclose(view.rotated_line.get_ydata(), view.shifted_line.get_ydata(),
                               atol=1e-10)
    np.testing.assert_array_equal(view.rotated_line.get_xdata(), np.arange(d))
    assert view.rot_panel.ax.get_title() == f"p = {p}, k = {k}: " + (
        f"max error {lab.state.max_error:.0e}")
    assert lab.state.max_error < 1e-10
    assert f"PE : (s, d) = ({s}, {d})" in lab.readout.value
    assert f"base = {float(base):g}" in lab.readout.value
    assert f"rotation check, k = {k}" in lab.readout.value


@pytest.fixture
def lab():
    return positional_widget()


def test_factory_returns_a_widget_with_labelled_controls(lab):
    assert isinstance(lab, ipywidgets.VBox)
    assert set(lab.controls) == {"s", "d", "base", "k"}
    s, d, base, k = (lab.controls[n] for n in ("s", "d", "base", "k"))
    assert isinstance(s, ipywidgets.IntSlider) and (s.min, s.max) == (1, 512)
    # odd d cannot be chosen: the slider steps from 2 by 2
    assert isinstance(d, ipywidgets.IntSlider) and (d.min, d.max, d.step) == (2, 512, 2)
    assert tuple(base.options) == BASE_CHOICES == (10, 100, 1000, 10000, 100000)
    assert isinstance(k, ipywidgets.IntSlider)
    for control in lab.controls.values():
        assert control.description.strip() and control.continuous_update
    # the figure is shown as a PNG in an Image widget inside the lab, described in text
    assert isinstance(lab.image, ipywidgets.Image) and lab.image in lab.children
    assert bytes(lab.image.value[:8]) == PNG_SIGNATURE
    assert "Describe the picture" in lab.description.value


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_the_ui_refuses_odd_d_and_s_below_one(lab):
    # the page's slider offers even values only; set from code, an odd d is refused
    # with the math layer's message and the picture keeps the last valid state
    with pytest.raises(ValueError, match="d must be even for sinusoidal encoding"):
        lab.controls["d"].value = 7
    lab.controls["d"].value = 64
    lab.controls["s"].value = 0  # an IntSlider clamps to its minimum
    assert lab.controls["s"].value == 1
    assert_shows(lab, 1, 64, 10000, 3)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_initial_state(lab):
    assert lab.values == {"s": 64, "d": 64, "base": 10000, "k": 3}
    assert_shows(lab, 64, 64, 10000, 3)


@pytest.mark.slow  # a live lab per case (0.2-0.5 s each); the fast loop keeps two lab tests per lab
@pytest.mark.parametrize("name, value, state", [
    ("s", 100, (100, 64, 10000, 3)),
    ("s", 1, (1, 64, 10000, 3)),
    ("s", 512, (512, 64, 10000, 3)),
    ("d", 2, (64, 2, 10000, 3)),
    ("d", 8, (64, 8, 10000, 3)),
    ("d", 512, (64, 512, 10000, 3)),
    ("base", 10, (64, 64, 10, 3)),
    ("base", 100000, (64, 64, 100000, 3)),
    ("k", -40, (64, 64, 10000, -40)),
    ("k", 0, (64, 64, 10000, 0)),
    ("k", 64, (64, 64, 10000, 64)),
])
def test_every_control_updates_the_artists_in_place(lab, name, value, state):
    fig, canvas = lab.figure, lab.figure.canvas
    view = lab.view
    artists = (view.pe_panel.image, view.similarity_panel.image, *view.wave_lines,
               view.pe_line, view.shifted_line, view.rotated_line)
    n_axes = len(fig.axes)
    before = [np.asarray(a.get_array() if hasattr(a, "get_array") else a.get_ydata()).copy()
              for a in artists[:2]] + [view.rotated_line.get_ydata().copy()]
    lab.controls[name].value = value
    assert_shows(lab, *state)
    after = [np.asarray(view.pe_panel.image.get_array()),
             np.asarray(view.similarity_panel.image.get_array()),
             view.rotated_line.get_ydata()]
    changed = [b.shape != a.shape or not np.array_equal(b, a) for b, a in zip(before, after)]
    if name == "k":
        assert changed[2] and not changed[0]  # only the rotation check moves
    else:
        assert changed[0]
    # not re-plotted: the same figure, canvas, axes and artists
    assert lab.figure is fig and fig.canvas is canvas and len(fig.axes) == n_axes
    now = (view.pe_panel.image, view.similarity_panel.image, *view.wave_lines,
           view.pe_line, view.shifted_line, view.rotated_line)
    assert all(a is b for a, b in zip(artists, now))
    assert len(view.wave_panel.ax.lines) == 5 and len(view.rot_panel.ax.lines) == 4
    canvas.draw()
    shown = np.asarray(Image.open(io.BytesIO(lab.image.value)))
    assert np.array_equal(shown, np.asarray(canvas.buffer_rgba())[..., :3])


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_the_base_is_disabled_while_it_has_no_effect(lab):
    lab.controls["d"].value = 2
    assert lab.controls["base"].disabled and "whatever the base" in lab.hints["base"].value
    assert "one frequency pair" in lab.readout.value
    lab.controls["d"].value = 4
    assert not lab.controls["base"].disabled and lab.hints["base"].value == ""


def test_all_controls_in_sequence(lab):
    lab.controls["d"].value = 16
    lab.controls["base"].value = 100
    lab.controls["k"].value = -7
    lab.controls["s"].value = 33
    assert_shows(lab, 33, 16, 100, -7)
    lab.controls["s"].value = 512
    lab.controls["d"].value = 512
    assert_shows(lab, 512, 512, 100, -7)
    assert "every 2nd cell" in lab.view.pe_panel.ax.get_title()
    assert "the heatmaps show 1 in 2 rows and 1 in 2 columns" in lab.readout.value
    lab.controls["s"].value = 64
    assert "the heatmaps show 1 in 2 columns (" in lab.readout.value
    lab.figure.canvas.draw()


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_offset_outside_the_sequence_is_explained(lab):
    lab.controls["s"].value = 4
    lab.controls["k"].value = 10
    assert "p + k = 12 lies outside 0..3" in lab.readout.value
    assert_shows(lab, 4, 64, 10000, 10)


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
        positional_widget(**kwargs)


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


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_factories_never_display(monkeypatch):
    import IPython.display

    def forbidden(*args, **kwargs):
        raise AssertionError("display() was called")

    monkeypatch.setattr(IPython.display, "display", forbidden)
    lab = positional_widget(s=10, d=4, base=10, k=1)
    lab.controls["k"].value = 2
    assert_shows(lab, 10, 4, 10, 2)


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_axes_are_titled_labelled_and_colour_blind_safe(lab):
    view = lab.view
    for panel in (view.pe_panel, view.similarity_panel):
        assert panel.ax.get_xlabel() and panel.ax.get_ylabel() and panel.ax.get_title()
        assert panel.colorbar.ax.get_ylabel()
        assert panel.image.get_cmap().name in {"cividis", "viridis"}
    for panel in (view.wave_panel, view.rot_panel):
        assert panel.ax.get_xlabel() and panel.ax.get_ylabel() and panel.ax.get_title()
    labels = [t.get_text() for t in view.rot_legend.get_texts()]
    assert labels == ["PE[p]", "PE[p+k]", "PE[p] T(k)"]


def test_readout_and_alt_text_are_plain_and_escaped():
    st = positional_state(12, 8, 100, 3)
    readout = positional_readout_html(st)
    assert "<script" not in readout
    assert re.search(r"max over p = 0\.\.11 of \|PE\[p\+k\] \u2212 PE\[p\] T\(k\)\| = ", readout)
    alt = positional_alt_text(st)
    assert "12 positions" in alt and "8 dimensions" in alt and "base 100" in alt
    assert "<" not in alt


@pytest.mark.slow  # draws the view or figures (0.2-0.5 s a case)
def test_view_rejects_mismatched_shapes():
    view = positional_view()
    with pytest.raises(ValueError, match="expected pe"):
        view.update(np.zeros((3, 4)), (0,), np.zeros((2, 2)), 1, 1, np.zeros(4), np.zeros(4), 0.0)
    with pytest.raises(ValueError, match="at most 4 wave columns"):
        view.update(np.zeros((3, 4)), (0,) * 5, np.zeros((3, 3)), 1, 1, np.zeros(4),
                    np.zeros(4), 0.0)


# ------------------------------------------------------------------------ the book's lab


def test_the_states_the_chapter_asks_for_say_what_it_says():
    scene = SCENES["positional"]
    assert scene.suggested
    for values in scene.suggested:
        scene.values(**values)  # each one the controls can show
    # base 10: the band narrows, far positions nearly orthogonal (the readout says so)
    st = positional_state(64, 64, 10, 3)
    assert "mean similarity of two distinct positions: -0.01" in positional_readout_html(st)
    # d = 2: one frequency, so the base has no effect and its control is disabled
    for d in (2, 4, 64):
        assert scene.active(scene.values(d=d))["base"] == (d != 2)
    # s = 8, k = 16: p + k past the end of the sequence, and the rotation still holds
    assert "p + k = 20 lies outside 0..7" in positional_readout_html(positional_state(8, 64, 10000, 16))


@pytest.mark.slow  # builds a live lab (0.2-0.5 s); the fast loop keeps two lab tests per lab
def test_lab_picks_the_browser_lab_in_a_static_build(monkeypatch):
    monkeypatch.setenv("ATTENTION_BOOK_STATIC", "1")
    # chapter 2's lab computes in the reader's browser (web/positional.js)
    monkeypatch.setattr("attention_book.controls.web_lab", lambda name: ("browser", name))
    assert book_lab("positional") == ("browser", "positional")
    monkeypatch.setenv("ATTENTION_BOOK_STATIC", "0")
    made = book_lab("positional", s=8)
    assert isinstance(made, LiveLab) and made.values["s"] == 8


# ----------------------------------------------------------- the chapter's figures


def test_image_stride_keeps_heatmaps_within_the_limit():
    assert MAX_IMAGE_SIDE == 256
    for n in (1, 255, 256, 257, 512):
        stride = image_stride(n)
        assert -(-n // stride) <= MAX_IMAGE_SIDE and (stride == 1 or -(-n // (stride - 1)) > 256)
    assert positional_state(512, 8, 10000, 1).notes[-1].text.startswith(
        "the heatmaps show 1 in 2 rows (")


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


@pytest.mark.parametrize("d, shown", [(2, ["i = 0"]), (4, ["i = 0", "i = 1"]),
                                      (6, ["i = 0", "i = 1", "i = 2"]),
                                      (8, ["i = 0", "i = d/8", "i = d/4", "i = d/2 \u2212 1"]),
                                      (64, ["i = 0", "i = d/8", "i = d/4", "i = d/2 \u2212 1"])])
def test_the_wave_legend_lists_one_entry_per_distinct_curve(d, shown):
    """d = 2 has one frequency pair: one curve and one legend entry, not four."""
    view = positional_view()
    for state in (positional_state(16, 64, 10000, 3), positional_state(16, d, 10000, 3)):
        view.show(state)  # from the full legend to this d's
    entries = [(e.get_children()[1].get_text(), e.get_visible()) for e in view.wave_entries]
    assert [text for text, visible in entries if visible] == shown
    lines = [line for line in view.wave_lines if line.get_visible()]
    assert len(lines) == len(shown)
    assert len({tuple(line.get_ydata()) for line in lines}) == len(shown)  # all distinct
    assert "columns 0, 0" not in positional_alt_text(positional_state(16, 2, 10000, 3))
    view.figure.canvas.draw()  # the repainted legend draws
