"""The controls layer, live form: ipywidgets labs that answer a control within a frame.

A lab (:class:`Lab`) is a column of labelled controls, an HTML readout and one matplotlib
figure shown through ipympl's widget canvas. The figure is built once; on every control
change the lab

1. computes a *state* from the control values with a pure state function (the same
   function the kernel-free explorer in :mod:`attention_book.explorer` uses),
2. moves the state into the existing artists (``view.update``) and the readout, and
3. asks the front end to redraw (``canvas.draw_idle()``).

Factories return the widget; they never call ``display`` (a notebook cell shows the
value of its last expression).

This module holds the base :class:`Lab` and the readout helpers; one module per chapter
holds that chapter's state function and lab.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from io import BytesIO

import ipywidgets
import numpy as np
from ipympl.backend_nbagg import Canvas, FigureManager
from PIL import Image

__all__ = ["Lab", "FastCanvas", "widget_canvas", "Note", "notes_html", "MAX_WIDGET_TOKENS"]

#: The most tokens a lab shows; longer texts are truncated with a visible note.
MAX_WIDGET_TOKENS = 32


# --------------------------------------------------------------------------- the base lab


class FastCanvas(Canvas):
    """ipympl's canvas, sending each frame as a PNG compressed at zlib level 1.

    After a draw, ipympl sends the changed pixels to the front end as a PNG; with PIL's
    default compression (level 6) that encoding is the largest single cost of a slider
    update (about half of it here). Level 1 encodes about twice as fast for frames about
    15 % larger. The method is matplotlib 3.11's ``get_diff_image`` with only the
    ``compress_level`` added.
    """

    def get_diff_image(self):
        if not self._png_is_old:
            return None
        pixels = np.asarray(self.get_renderer().buffer_rgba())  # (height, width, 4) uint8
        buff = pixels.view(np.uint32).squeeze(2)  # (height, width): one uint32 a pixel
        if (self._force_full or buff.shape != self._last_buff.shape
                or (pixels[:, :, 3] != 255).any()):
            self.set_image_mode("full")
            output = buff
        else:
            self.set_image_mode("diff")
            output = np.where(buff != self._last_buff, buff, 0)  # unchanged pixels: 0
        self._last_buff = buff.copy()
        self._force_full = False
        self._png_is_old = False
        data = output.view(dtype=np.uint8).reshape((*output.shape, 4))  # back to RGBA
        with BytesIO() as png:
            Image.fromarray(data).save(png, format="png", compress_level=1)
            return png.getvalue()


def widget_canvas(figure) -> FastCanvas:
    """Attach ipympl's widget canvas to ``figure`` (without pyplot) and return it.

    The canvas is an ipywidgets ``DOMWidget``; put it in a box to show the figure. Its
    header (the figure title bar) and toolbar are hidden and it cannot be resized by
    dragging (the views lay their figure out once); its footer, which shows the value
    under the mouse pointer, stays.
    """
    canvas = FastCanvas(figure)
    FigureManager(canvas, 0)
    canvas.header_visible = False
    canvas.toolbar_visible = False
    canvas.resizable = False  # the views lay out once, for this size
    return canvas


class Lab(ipywidgets.VBox):
    """Base of the book's live labs: labelled controls, a readout and one figure.

    Subclasses provide :meth:`compute` (values of the controls -> state, pure) and
    :meth:`show` (state -> existing artists and readout). Nothing is re-plotted per event.

    Parameters
    ----------
    controls : dict of str to ipywidgets.ValueWidget
        The controls, keyed by the name of the state function's argument they set. Each
        must have a ``description`` (its visible label).
    view : object with a ``figure`` attribute
        The pictures-layer view built once (e.g. :class:`~attention_book.plots.EmbeddingView`).
    header : str, optional
        HTML shown above the controls (write it escaped).

    Attributes
    ----------
    controls : dict of str to ipywidgets.ValueWidget
    view : object
    figure : matplotlib.figure.Figure
        Its canvas is ipympl's widget canvas (``figure.canvas``).
    readout : ipywidgets.HTML
        The text readout, rewritten by :meth:`show`.
    state : object
        The state shown now.
    """

    def __init__(self, controls: dict, view, *, header: str | None = None):
        super().__init__(layout=ipywidgets.Layout(width="100%"))
        for name, control in controls.items():
            if not getattr(control, "description", ""):
                raise ValueError(f"control {name!r} needs a description (its visible label)")
        self.controls = dict(controls)
        self.view = view
        self.figure = view.figure
        self.readout = ipywidgets.HTML()
        canvas = widget_canvas(self.figure)
        children = [ipywidgets.HTML(header)] if header else []
        self.children = [*children, ipywidgets.VBox(list(self.controls.values())),
                         self.readout, canvas]
        self.state = None
        self.refresh()
        for control in self.controls.values():
            control.observe(self._on_change, names="value")

    @property
    def values(self) -> dict:
        """The current value of every control, keyed by control name."""
        return {name: control.value for name, control in self.controls.items()}

    def compute(self, **values):
        """The pure state function: control values -> state. Subclasses override it."""
        raise NotImplementedError

    def show(self, state) -> None:
        """Move ``state`` into the view's artists and the readout. Subclasses override it."""
        raise NotImplementedError

    def refresh(self) -> None:
        """Recompute the state from the controls and show it (no re-plotting)."""
        self.state = self.compute(**self.values)
        self.show(self.state)
        self.figure.canvas.draw_idle()

    def _on_change(self, change) -> None:
        self.refresh()



# ------------------------------------------------------------------ readout helpers


@dataclass(frozen=True)
class Note:
    """A message for the reader: ``level`` is "error", "warning" or "info"; ``text`` is
    plain text (escape it before putting it in HTML)."""

    level: str
    text: str


_NOTE_STYLE = {
    "error": ("&#9888;", "#8a1c1c", "#fdecea"),    # warning sign, dark red on pale red
    "warning": ("&#9888;", "#6b4e00", "#fff4d6"),  # dark amber on pale amber
    "info": ("&#9432;", "#0b3d6b", "#e8f1fb"),     # circled i, dark blue on pale blue
}


def notes_html(notes) -> str:
    """The notes as an HTML list, each text escaped and marked by a symbol and a word
    (not by colour alone)."""
    items = []
    for note in notes:
        symbol, fg, bg = _NOTE_STYLE.get(note.level, _NOTE_STYLE["info"])
        items.append(
            f'<li class="ab-note ab-note-{html.escape(note.level)}" style="color:{fg};'
            f'background:{bg};padding:2px 6px;margin:2px 0;border-radius:3px">'
            f"{symbol} <b>{html.escape(note.level)}:</b> {html.escape(note.text)}</li>"
        )
    if not items:
        return ""
    return '<ul class="ab-notes" style="list-style:none;padding:0;margin:4px 0">' + "".join(
        items) + "</ul>"
