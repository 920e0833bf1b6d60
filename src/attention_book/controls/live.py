"""The controls layer, live form: one generic ipywidgets lab for every scene.

A :class:`LiveLab` shows a scene's controls, its readout, the figure and a description of
it. On every change it computes the state (the scene's pure state function), moves it into
the view's existing artists (``view.show``) and sends the figure as one PNG to an
``ipywidgets.Image``. Why an Image and not ipympl's canvas: measured in JupyterLab
(``benchmarks/lab_latency.py``), ipympl's round trip (the kernel announces a frame, the page
asks for it, the kernel sends it) costs about two messages more than setting an Image's
bytes, which the page shows on arrival. Encoding at zlib level 1 is about twice as fast as
the default, for frames about 15 % larger. Factories return the widget, never ``display``.
"""

from __future__ import annotations

import html

import ipywidgets
from matplotlib.backends.backend_agg import FigureCanvasAgg

from ..plots.core import figure_png
from ..scenes.core import Control, Scene, as_options

__all__ = ["LiveLab", "control_widget"]

_STYLE = {"description_width": "10em"}


def _options(options: tuple) -> list:
    """ipywidgets options: bare values when every label is just str(value)."""
    plain = all(label == str(value) for label, value in options)
    return [v for _, v in options] if plain else list(options)


def control_widget(control: Control, value, options: tuple | None = None):
    """The ipywidgets control for a declared :class:`Control`, set to ``value``."""
    options = control.options if options is None else options
    kind, common = control.kind, dict(description=control.label, style=_STYLE)
    if kind == "text":
        return ipywidgets.Text(value=value, placeholder=control.placeholder,
                               continuous_update=True,
                               layout=ipywidgets.Layout(width="min(100%, 44em)"), **common)
    if kind == "toggle":
        return ipywidgets.Checkbox(value=bool(value), indent=False, description=control.label)
    if kind == "multi":
        return ipywidgets.SelectMultiple(options=_options(options), value=value,
                                         rows=min(len(options), 6), **common)
    if kind == "slider":
        values = tuple(v for _, v in options)
        ints = len(values) >= 3 and all(isinstance(v, int) and not isinstance(v, bool)
                                        for v in values)
        step = values[1] - values[0] if ints else 0
        if step > 0 and all(b - a == step for a, b in zip(values, values[1:])):
            # evenly spaced whole numbers: an IntSlider shows them
            return ipywidgets.IntSlider(value=value, min=values[0], max=values[-1], step=step,
                                        continuous_update=True, **common)
        return ipywidgets.SelectionSlider(options=_options(options), value=value,
                                          continuous_update=True, **common)
    widget = ipywidgets.ToggleButtons if control.buttons else ipywidgets.Dropdown
    return widget(options=_options(options), value=value, **common)


class LiveLab(ipywidgets.VBox):
    """A scene's live lab: its controls, a readout, the figure and its description.

    ``view`` is a pictures-layer view (``figure`` and ``show(state)``, built once);
    ``values`` are starting values of some controls (checked against their declarations).

    Attributes
    ----------
    controls, hints : dict of str to ipywidgets widget
        The control of each state-function argument; why one is disabled (ipywidgets.HTML,
        for controls with ``active_when``).
    buttons : list of ipywidgets.Button
        The scene's actions.
    view, figure, state, image, readout, description
        The view, its figure (on an Agg canvas), the state shown now, the figure as PNG
        (ipywidgets.Image), the readout and the alt text in a ``<details>`` (HTML).
    """

    def __init__(self, scene: Scene, view, **values):
        super().__init__(layout=ipywidgets.Layout(width="100%"))
        values = scene.values(**values)
        self.scene, self.view, self.figure, self.state = scene, view, view.figure, None
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
        for warm in scene.warm:  # fill the view's caches; the page is sent nothing
            self.view.show(scene.compute({**values, **warm}))
            self.figure.canvas.draw()
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
        # the picture first: its message leaves before the texts are even computed, which
        # took 7-20 ms off what a reader waits for in JupyterLab (benchmarks/lab_latency.py)
        self.image.value = figure_png(self.figure, compress_level=1)
        self.readout.value = self.scene.readout(self.state)
        self.description.value = (
            '<details class="ab-alt"><summary>Describe the picture</summary>'
            f"<p>{html.escape(self.scene.alt(self.state))}</p></details>")

    def _sync_controls(self) -> None:
        """Re-offer dependent choices and disable the controls without effect."""
        self._syncing = True
        try:
            for c in self.scene.controls:
                if c.options_for is not None:
                    options = as_options(c.options_for(self.values))
                    self._reoffer(c, self.controls[c.name], options)
            for name, active in self.scene.active(self.values).items():
                if name in self.hints:
                    self.controls[name].disabled = not active
                    hint = html.escape(self.scene.control(name).hint)
                    self.hints[name].value = "" if active else f"<i>({hint})</i>"
        finally:
            self._syncing = False

    @staticmethod
    def _reoffer(control: Control, widget, options: tuple) -> None:
        """Offer ``options``, keeping the value if still allowed (else the nearest one below
        it, or all of them for a multiple selection), in one update to the page."""
        new = _options(options)
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
            widget.options, widget.value = new, value
            if control.kind == "multi":
                widget.rows = min(len(new), 6)

    def _on_change(self, change) -> None:
        if not self._syncing:
            self._sync_controls()
            self.refresh()
