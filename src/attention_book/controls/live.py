"""The controls layer, live form: one generic ipywidgets lab for every scene.

A :class:`LiveLab` is a column of labelled controls built from a scene's declarations, an
HTML readout, the figure and a description of it. The figure is built once by its view;
on every control change the lab

1. computes the state with the scene's pure state function,
2. moves it into the view's existing artists (``view.show``) and the readout, and
3. sends the figure as one PNG to an ``ipywidgets.Image``.

Why an Image and not ipympl's canvas: measured in JupyterLab in chromium (see
``benchmarks/lab_latency.py``), ipympl's round trip (the kernel announces a frame, the page
asks for it, the kernel sends a diff PNG) costs about two messages more than setting an
Image's bytes, which the page shows as soon as they arrive. The PNG is encoded at zlib
level 1: about twice as fast as the default for frames about 15 % larger.

Factories return the widget; they never call ``display``.
"""

from __future__ import annotations

import html

import ipywidgets
from matplotlib.backends.backend_agg import FigureCanvasAgg

from ..plots.core import figure_png
from ..scenes.core import Control, Scene, as_options

__all__ = ["LiveLab", "control_widget"]

_STYLE = {"description_width": "10em"}
_WIDE = "min(100%, 44em)"


def _is_int_range(values: tuple) -> bool:
    """Whether ``values`` are evenly spaced whole numbers (an IntSlider can show them)."""
    if len(values) < 3 or not all(isinstance(v, int) and not isinstance(v, bool)
                                  for v in values):
        return False
    step = values[1] - values[0]
    return step > 0 and all(b - a == step for a, b in zip(values, values[1:]))


def _options(control: Control, options: tuple):
    """ipywidgets options: bare values when every label is just str(value)."""
    plain = all(label == str(value) for label, value in options)
    return [v for _, v in options] if plain else list(options)


def control_widget(control: Control, value, options: tuple | None = None):
    """The ipywidgets control for a declared :class:`Control`, set to ``value``."""
    options = control.options if options is None else options
    common = dict(description=control.label, style=_STYLE)
    if control.kind == "text":
        return ipywidgets.Text(value=value, placeholder=control.placeholder,
                               continuous_update=True, layout=ipywidgets.Layout(width=_WIDE),
                               **common)
    if control.kind == "toggle":
        return ipywidgets.Checkbox(value=bool(value), indent=False,
                                   description=control.label)
    if control.kind == "multi":
        return ipywidgets.SelectMultiple(options=_options(control, options), value=value,
                                         rows=min(len(options), 6), **common)
    if control.kind == "slider":
        values = tuple(v for _, v in options)
        if _is_int_range(values):
            return ipywidgets.IntSlider(value=value, min=values[0], max=values[-1],
                                        step=values[1] - values[0], continuous_update=True,
                                        **common)
        return ipywidgets.SelectionSlider(options=_options(control, options), value=value,
                                          continuous_update=True, **common)
    if control.buttons:
        return ipywidgets.ToggleButtons(options=_options(control, options), value=value,
                                        **common)
    return ipywidgets.Dropdown(options=_options(control, options), value=value, **common)


class LiveLab(ipywidgets.VBox):
    """A scene's live lab: its controls, a readout, the figure and its description.

    Parameters
    ----------
    scene : Scene
    view : object
        A pictures-layer view with ``figure`` and ``show(state)``, built once.
    **values
        Starting values of some controls (checked against their declarations).

    Attributes
    ----------
    controls : dict of str to ipywidgets.ValueWidget
        Keyed by the state function's argument each one sets.
    buttons : list of ipywidgets.Button
        The scene's actions.
    view, figure, state
        The view, its figure (on an Agg canvas) and the state shown now.
    image : ipywidgets.Image
        The figure as PNG.
    readout, description : ipywidgets.HTML
        The scene's readout, and the alt text of the figure in a ``<details>``.
    """

    def __init__(self, scene: Scene, view, **values):
        super().__init__(layout=ipywidgets.Layout(width="100%"))
        values = scene.values(**values)
        self.scene, self.view, self.figure = scene, view, view.figure
        FigureCanvasAgg(self.figure)  # draws into memory; the Image widget shows it
        self.controls = {}
        for c in scene.controls:
            options = as_options(c.options_for(values)) if c.options_for else None
            self.controls[c.name] = control_widget(c, values[c.name], options)
        self.hints = {c.name: ipywidgets.HTML() for c in scene.controls if c.active_when}
        self.buttons = []
        for action in scene.actions:
            button = ipywidgets.Button(description=action.label, tooltip=action.tooltip)
            button.on_click(lambda _b, act=action: self.set_values(act.apply(self.values)))
            self.buttons.append(button)
        rows = [ipywidgets.HBox([w, self.hints[n]]) if n in self.hints else w
                for n, w in self.controls.items()]
        self.image = ipywidgets.Image(format="png", layout=ipywidgets.Layout(
            max_width="100%", height="auto"))
        self.readout, self.description = ipywidgets.HTML(), ipywidgets.HTML()
        self.children = [ipywidgets.VBox(rows + self.buttons), self.readout, self.image,
                         self.description]
        self._syncing = False
        self.state = None
        self._sync_controls()
        self.refresh()
        for control in self.controls.values():
            control.observe(self._on_change, names="value")

    @property
    def values(self) -> dict:
        """The current value of every control, keyed by control name."""
        return {name: control.value for name, control in self.controls.items()}

    def set_values(self, values: dict) -> None:
        """Set several controls at once, with one redraw."""
        self._syncing = True
        try:
            for name, value in values.items():
                self.controls[name].value = value
        finally:
            self._syncing = False
        self._sync_controls()
        self.refresh()

    def refresh(self) -> None:
        """Recompute the state from the controls and show it (no re-plotting)."""
        self.state = self.scene.compute(self.values)
        self.view.show(self.state)
        self.readout.value = self.scene.readout(self.state)
        self.description.value = (
            '<details class="ab-alt"><summary>Describe the picture</summary>'
            f"<p>{html.escape(self.scene.alt(self.state))}</p></details>")
        self.image.value = figure_png(self.figure, compress_level=1)

    def _sync_controls(self) -> None:
        """Re-offer dependent choices and disable the controls without effect."""
        values = self.values
        self._syncing = True
        try:
            for c in self.scene.controls:
                widget = self.controls[c.name]
                if c.options_for is not None:
                    self._reoffer(c, widget, as_options(c.options_for(values)))
                    values = self.values
            for name, active in self.scene.active(values).items():
                if name in self.hints:
                    self.controls[name].disabled = not active
                    hint = self.scene.control(name).hint
                    self.hints[name].value = ("" if active else
                                              f"<i>({html.escape(hint)})</i>")
        finally:
            self._syncing = False

    @staticmethod
    def _reoffer(control: Control, widget, options: tuple) -> None:
        """Offer ``options``, keeping the value if it is still allowed (else the nearest
        one below it, or all of them for a multiple selection)."""
        new = _options(control, options)
        if list(widget.options) == new:
            return
        values = [v for _, v in options]
        if control.kind == "multi":
            value = tuple(values)
        elif widget.value in values:
            value = widget.value
        else:
            below = [v for v in values if isinstance(v, (int, float)) and v <= widget.value]
            value = max(below) if below else values[0]
        with widget.hold_sync():  # options and value reach the page as one update
            widget.options = new
            widget.value = value
            if control.kind == "multi":
                widget.rows = min(len(new), 6)

    def _on_change(self, change) -> None:
        if self._syncing:
            return
        self._sync_controls()
        self.refresh()
