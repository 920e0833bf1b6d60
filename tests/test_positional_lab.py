"""Chapter 2's lab (widgets/positional.py), its view (plots/positional.py) and its explorer.

Expected values come from the math layer directly (sinusoidal_encoding, encoding_at,
relative_rotation, offset_similarity), not from the state function under test.
"""

from __future__ import annotations

import base64
import io
import json
import re

import ipywidgets
import numpy as np
import pytest
from ipympl.backend_nbagg import Canvas
from PIL import Image

from attention_book import positional as P
from attention_book.explorer import Explorer, interactive
from attention_book.plots import MAX_IMAGE_SIDE, positional_view
from attention_book.widgets import (
    BASE_CHOICES,
    PositionalLab,
    positional_alt_text,
    positional_explorer,
    positional_readout_html,
    positional_state,
    positional_widget,
)

pytestmark = pytest.mark.filterwarnings(
    "ignore:Passing unrecognized arguments to super\\(Toolbar\\)")


def expected_similarity(s, d, base):
    pe = P.sinusoidal_encoding(s, d, base)
    return pe @ pe.T / (d / 2)  # (s, s)


def assert_shows(lab: PositionalLab, s: int, d: int, base: float, k: int):
    """The lab's artists and readout show exactly (s, d, base, k)."""
    view = lab.view
    pe = P.sinusoidal_encoding(s, d, base)  # (s, d)
    rs, cs = -(-s // MAX_IMAGE_SIDE), -(-d // MAX_IMAGE_SIDE)
    np.testing.assert_array_equal(np.asarray(view.pe_panel.image.get_array()), pe[::rs, ::cs])
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
    assert isinstance(d, ipywidgets.SelectionSlider)
    assert tuple(d.options) == tuple(range(2, 513, 2))  # odd d cannot be chosen
    assert tuple(base.options) == BASE_CHOICES == (10, 100, 1000, 10000, 100000)
    assert isinstance(k, ipywidgets.IntSlider)
    for control in lab.controls.values():
        assert control.description.strip() and control.continuous_update
    assert isinstance(lab.figure.canvas, Canvas) and lab.figure.canvas in lab.children


def test_the_ui_refuses_odd_d_and_s_below_one(lab):
    import traitlets

    with pytest.raises(traitlets.TraitError):
        lab.controls["d"].value = 7  # not an option of the slider
    lab.controls["s"].value = 0  # an IntSlider clamps to its minimum
    assert lab.controls["s"].value == 1
    assert_shows(lab, 1, 64, 10000, 3)


def test_initial_state(lab):
    assert lab.values == {"s": 64, "d": 64, "base": 10000, "k": 3}
    assert_shows(lab, 64, 64, 10000, 3)


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


def test_offset_outside_the_sequence_is_explained(lab):
    lab.controls["s"].value = 4
    lab.controls["k"].value = 10
    assert "p + k = 12 lies outside 0..3" in lab.readout.value
    assert_shows(lab, 4, 64, 10000, 10)


@pytest.mark.parametrize("kwargs, match", [
    (dict(d=7), r"d must be even for sinusoidal encoding.*got d=7"),
    (dict(d=1), r"d must be even"),
    (dict(d=0), r"d must be at least 1"),
    (dict(s=0), r"s must be at least 1, got 0"),
    (dict(s=-3), r"s must be at least 1"),
    (dict(s=513), r"s must be at most 512"),
    (dict(d=514), r"d must be at most 512"),
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


def test_factories_never_display(monkeypatch):
    import IPython.display

    def forbidden(*args, **kwargs):
        raise AssertionError("display() was called")

    monkeypatch.setattr(IPython.display, "display", forbidden)
    lab = positional_widget(s=10, d=4, base=10, k=1)
    lab.controls["k"].value = 2
    assert_shows(lab, 10, 4, 10, 2)


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


def test_view_rejects_mismatched_shapes():
    view = positional_view()
    with pytest.raises(ValueError, match="expected pe"):
        view.update(np.zeros((3, 4)), (0,), np.zeros((2, 2)), 1, 1, np.zeros(4), np.zeros(4), 0.0)
    with pytest.raises(ValueError, match="at most 4 wave columns"):
        view.update(np.zeros((3, 4)), (0,) * 5, np.zeros((3, 3)), 1, 1, np.zeros(4),
                    np.zeros(4), 0.0)


# ------------------------------------------------------------------------ explorer


@pytest.fixture(scope="module")
def small_explorer():
    return positional_explorer(ss=(16, 32), ds=(4, 8), bases=(100, 10000), ks=(1, 5), dpi=40)


def script_frames(html_text: str) -> dict:
    match = re.search(r"var id = (\"[^\"]*\"), data = (\{.*?\});\n", html_text, re.S)
    assert match
    return json.loads(match.group(2))


def test_explorer_has_one_state_per_combination(small_explorer):
    assert isinstance(small_explorer, Explorer)
    assert len(small_explorer) == 2 * 2 * 2 * 2
    assert [c.name for c in small_explorer.controls] == ["s", "d", "base", "k"]
    html_text = small_explorer._repr_html_()
    data = script_frames(html_text)
    assert len(data["frames"]) == 16
    assert data["labels"] == [["16", "32"], ["4", "8"], ["100", "10000"], ["1", "5"]]
    pngs = set()
    for url, alt, caption in data["frames"].values():
        png = base64.b64decode(url.split(",", 1)[1])
        Image.open(io.BytesIO(png)).verify()
        pngs.add(png)
        assert alt and "positions" in alt
        assert "rotation check" in caption
    assert len(pngs) == 16  # every state draws differently
    for label in ("s (positions)", "d (width)", "base", "k (offset)"):
        assert f">{label}</label>" in html_text


def test_explorer_states_come_from_the_state_function_and_view(small_explorer):
    index = (1, 0, 1, 1)  # s=32, d=4, base=10000, k=5
    frame = small_explorer.frames[index]
    st = positional_state(32, 4, 10000, 5)
    assert frame.alt == positional_alt_text(st)
    assert frame.caption_html == positional_readout_html(st)


def test_default_explorer_is_modest_and_starts_at_the_default():
    ex = positional_explorer()
    assert len(ex) < 60
    assert [c.name for c in ex.controls] == ["d", "base", "k"]  # one s: no s control
    assert ex.initial == (1, 1, 0)  # d = 64, base = 10000, k = 1
    html_text = ex._repr_html_()
    assert len(html_text) < 3_000_000
    assert "http://" not in html_text and "https://" not in html_text


def test_interactive_picks_the_explorer_in_a_static_build(monkeypatch):
    monkeypatch.setenv("ATTENTION_BOOK_STATIC", "1")
    made = interactive(positional_widget, lambda: "explorer")
    assert made == "explorer"
    monkeypatch.setenv("ATTENTION_BOOK_STATIC", "0")
    assert isinstance(interactive(positional_widget, lambda: "explorer", s=8), PositionalLab)
