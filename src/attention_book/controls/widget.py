"""The controls layer, live form: a scene's lab in a notebook, drawn by the book's own front end.

A :class:`LabWidget` is an anywidget whose page is ``web/widget.mjs``: the front end the built
book draws with (``web/src/``: controls, figure, panels) and every state module's
presentation code (``figure``, ``readoutHtml``, ``alt``, ``numbers``). The page
sets ``values`` as the reader moves a control; the kernel runs the scene's Python state
function on them and answers in ``state``, the state as :func:`~attention_book.scenes.core.to_js`
writes it (the names the browser's module reads, arrays as binary buffers), which the page
presents exactly as the book presents the module's own state (``tests/test_web_twins.py``
checks the two states equal). The page keeps one request in flight: while the kernel
computes, only the latest values wait. Values the state function refuses answer with its
message, which the lab shows as the book does.

An array equal to the one the page received last at the same place of the state is not
sent again: the answer carries ``{"$same": true}`` there, and the page keeps the array it
has (a new view, which has none, gets the whole state). Moving chapter 2's k at s = d = 512
sent 4.2 MB, now 8 kB; a layer or head of chapter 9's model view on 128 tokens 5.1 MB (its
72 maps), now 0.4 MB (a query 2 kB), and the page draws the maps it has painted already.
"""

from __future__ import annotations

import itertools

import anywidget
import traitlets

from ..scenes.core import Scene, as_options, to_js
from ..bundles import WEB_DIR, built
from .web import declaration

__all__ = ["LabWidget"]


class LabWidget(anywidget.AnyWidget):
    """A scene's live lab: the page draws what the kernel computes.

    Attributes
    ----------
    scene : Scene
    declaration : dict
        The lab as the page reads it (:func:`~attention_book.controls.web.declaration`).
    values : dict
        Every control's value (set it to move the controls from Python).
    state : dict
        The answer to ``values``: ``{"values", "state"}`` (the state as ``to_js`` writes it)
        or ``{"values", "error"}``, with ``choices`` (the dependent controls' choices) and
        ``n`` (a count: every answer is new to the page).
    """

    # built by `make js`; a missing one is said when a lab is made (__init__), not at import
    _esm = WEB_DIR / "widget.mjs" if (WEB_DIR / "widget.mjs").is_file() else ""
    _css = WEB_DIR / "lab.css"  # the book's pages load it too (_ext/ab_labs.py)
    declaration = traitlets.Dict().tag(sync=True)
    # no echo of the page's values (ipywidgets 8 sends one back before the answer): the
    # answer carries the values computed, for every view and client
    values = traitlets.Dict().tag(sync=True, echo_update=False)
    state = traitlets.Dict().tag(sync=True)

    def __init__(self, scene: Scene, **values):
        built("widget.mjs")  # else: run make js
        self.scene = scene
        self._answers = itertools.count(1)
        self._sent = None  # the state the page has: the last one sent
        # each control's values by (is a bool, value): 1 finds 1.0, never True (a scan of a
        # seed slider's 10,000 values was half a kernel answer)
        self._values = {c.name: {_key(v): v for v in c.values} for c in scene.controls
                        if c.kind not in ("text", "multi")}
        self.on_msg(lambda _widget, content, _buffers: content.get("whole") and self.send_state())
        super().__init__(declaration=declaration(scene), values=scene.values(**values))
        for warm in scene.warm:  # what the first changes need, computed now (the page waits)
            scene.compute({**self.values, **warm})
        self.observe(lambda _change: self._answer(), names="values")
        self._answer()

    def _typed(self, values: dict) -> dict:
        """The page's values as the state function takes them: JSON's 1 is the slider's
        1.0 again, a selection's list a tuple."""
        out = dict(values)
        for c in self.scene.controls:
            value = out.get(c.name)
            if c.kind == "multi" and isinstance(value, list):
                out[c.name] = tuple(value)
            elif c.name in self._values:
                out[c.name] = self._values[c.name].get(_key(value), value)
        return out

    def _offered(self, values: dict) -> dict:
        """``values`` with each dependent control's value among its choices at the values
        before it, as the page's ``reoffer`` keeps one (web/src/controls.js): the value if
        offered, else the largest offered below it, else the first. The page offers them
        itself where its module can tell; in a notebook it cannot always (chapter 8's
        training data is the kernel's), and a step past the tokens generated was computed
        and drawn once before the choices came back and moved the slider."""
        out = dict(values)
        for c in self.scene.controls:
            if c.options_for is None or c.kind == "multi":
                continue
            try:
                allowed = [v for _, v in as_options(c.options_for(out))]
                if allowed and out[c.name] not in allowed:
                    below = [v for v in allowed if v < out[c.name]]
                    out[c.name] = max(below) if below else allowed[0]
            except (ValueError, TypeError):  # values the state function refuses: its message
                pass
        return out

    def _answer(self) -> None:
        """Compute the state of ``values`` and send it (or the state function's message)."""
        typed = self._typed(self.values)
        values = self._offered(typed)
        moved = {name: v for name, v in values.items() if v != typed[name]}
        answer = {"values": {**self.values, **moved}, "n": next(self._answers), "choices": {}}
        try:
            answer["state"] = to_js(self.scene.compute(values))
            answer["choices"] = {c.name: [list(o) for o in as_options(c.options_for(values))]
                                 for c in self.scene.controls if c.options_for is not None}
        except ValueError as err:
            answer["error"] = str(err)
        self.state = answer

    def get_state(self, key=None, drop_defaults=False) -> dict:
        """ipywidgets' state to send; a change of ``state`` (``key`` given) without the
        arrays the page has already (:func:`unsent`), the whole state otherwise (a new view)."""
        out = super().get_state(key=key, drop_defaults=drop_defaults)
        sent = out.get("state", {}).get("state")
        if sent is not None:
            if key is not None and self._sent is not None:
                out["state"] = {**out["state"], "state": unsent(sent, self._sent)}
            self._sent = sent
        return out

    def __repr__(self) -> str:
        return f"<LabWidget {self.scene.name}: {self.values}>"


def _key(value):
    """A control's value as :meth:`LabWidget._typed` looks it up (JSON's 1 is 1.0, not True);
    a value that cannot be hashed (a list) is its own, unmatched key."""
    try:
        hash(value)
    except TypeError:
        return (None, id(value))
    return (isinstance(value, bool), value)


def unsent(state, before):
    """``state`` (as :func:`~attention_book.scenes.core.to_js` writes it) with every array
    equal to the one at the same place of ``before`` replaced by ``{"$same": True}``."""
    if isinstance(state, dict):
        if "$array" in state:
            return {"$same": True} if state == before else state
        return {k: unsent(v, before.get(k) if isinstance(before, dict) else None)
                for k, v in state.items()}
    if isinstance(state, list):
        return [unsent(v, before[i] if isinstance(before, list) and i < len(before) else None)
                for i, v in enumerate(state)]
    return state
