"""The scenes layer: each lab declared as data, with a pure state function.

A :class:`Scene` says everything about a lab that is neither a widget nor a picture:

- its controls (:class:`Control`: name, label, kind, choices, default, and which values
  the kernel-free HTML explorer precomputes),
- a pure *state function* from the controls' values to everything the picture and the
  readout need,
- the readout (an HTML fragment, every reader-typed text escaped) and the alt text,
- optional *presets* (one HTML control that sets several values at once), *actions*
  (buttons of the live lab) and the states the chapter's text suggests trying.

The controls layer turns a scene and a view into a live ipywidgets lab or a static HTML
explorer; nothing here imports ipywidgets or matplotlib, so a scene is unit-testable
without a figure.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..tokens import tokenize

__all__ = [
    "Note",
    "notes_html",
    "as_options",
    "read_tokens",
    "Control",
    "text",
    "choice",
    "slider",
    "toggle",
    "multi",
    "Preset",
    "Action",
    "Scene",
    "MAX_WIDGET_TOKENS",
]

#: The most tokens a lab shows by default; longer texts are truncated with a visible note.
MAX_WIDGET_TOKENS = 32


# ------------------------------------------------------------------ reader messages


@dataclass(frozen=True)
class Note:
    """A message for the reader: ``level`` is "error", "warning" or "info"; ``text`` is
    plain text (escaped when it is put into HTML)."""

    level: str
    text: str


_NOTE_STYLE = {
    "error": ("&#9888;", "#8a1c1c", "#fdecea"),    # warning sign, dark red on pale red
    "warning": ("&#9888;", "#6b4e00", "#fff4d6"),  # dark amber on pale amber
    "info": ("&#8505;", "#0b3d6b", "#e8f1fb"),     # information source, dark blue on pale blue
}


def notes_html(notes: Sequence[Note]) -> str:
    """The notes as an HTML list, each text escaped and marked by a symbol and a word
    (not by colour alone); "" when there are none."""
    items = []
    for note in notes:
        symbol, fg, bg = _NOTE_STYLE.get(note.level, _NOTE_STYLE["info"])
        items.append(
            f'<li class="ab-note ab-note-{html.escape(note.level)}" style="color:{fg};'
            f'background:{bg};padding:2px 6px;margin:2px 0;border-radius:3px">'
            f"{symbol} <b>{html.escape(note.level)}:</b> {html.escape(note.text)}</li>")
    if not items:
        return ""
    return ('<ul class="ab-notes" style="list-style:none;padding:0;margin:4px 0">'
            + "".join(items) + "</ul>")


def read_tokens(text, max_tokens: int = MAX_WIDGET_TOKENS, which: str = ""
                ) -> tuple[list[str], list[Note], int]:
    """Tokenise reader-typed text for a lab: never raises, explains in notes.

    Parameters
    ----------
    text : object
        What the reader typed (anything: a non-string, empty or over-long text gives no
        tokens and an error note).
    max_tokens : int
        The most tokens kept; a longer text is truncated with a warning note.
    which : str
        Names the text in the notes when a lab has several ("keys/values sentence").

    Returns
    -------
    tokens : list of str, length s <= max_tokens
    notes : list of Note
    total : int
        The number of tokens of the whole text (>= s).
    """
    prefix = f"{which}: " if which else ""
    try:
        tokens = tokenize(text)
    except ValueError as err:
        message = str(err)
        return [], [Note("error", prefix + message[:1].upper() + message[1:] + ".")], 0
    notes = []
    if not tokens:
        notes.append(Note("error", prefix + "no tokens; type a sentence"))
    if len(tokens) > max_tokens:
        notes.append(Note("warning", f"{prefix}showing the first {max_tokens} of "
                                     f"{len(tokens)} tokens"))
    return tokens[:max_tokens], notes, len(tokens)


# ------------------------------------------------------------------ declarations


@dataclass(frozen=True)
class Control:
    """One control of a lab, declared as data. Build it with :func:`text`,
    :func:`choice`, :func:`slider`, :func:`toggle` or :func:`multi`.

    Attributes
    ----------
    name : str
        The state function's argument it sets.
    label : str
        The visible label (live and HTML).
    kind : {"text", "choice", "slider", "toggle", "multi"}
    default : object
        The value at the start.
    options : tuple of (str, object)
        (label, value) pairs: the choices of "choice", "slider" and "multi" (empty for
        "text"; (("off", False), ("on", True)) for "toggle").
    explore : tuple
        The values the HTML explorer precomputes: a single value means the control is
        fixed there (and not shown); for "text", the preset sentences.
    buttons : bool
        Show a "choice" as a row of buttons rather than a drop-down.
    options_for : callable, optional
        ``options_for(values) -> options``: the choices allowed given the other controls'
        values (e.g. the head counts that divide d). The live lab re-offers them.
    active_when : callable, optional
        ``active_when(values) -> bool``: whether the control has an effect now; when it
        has none it is disabled (live and HTML) and :attr:`hint` says why.
    hint : str
        Shown next to the control while it is disabled.
    placeholder : str
        Placeholder of a text box.
    """

    name: str
    label: str
    kind: str
    default: object
    options: tuple = ()
    explore: tuple = ()
    buttons: bool = False
    options_for: Callable[[Mapping], tuple] | None = None
    active_when: Callable[[Mapping], bool] | None = None
    hint: str = ""
    placeholder: str = ""

    @property
    def values(self) -> tuple:
        """The option values, in order."""
        return tuple(value for _, value in self.options)

    def label_of(self, value) -> str:
        """The visible label of ``value``."""
        for label, v in self.options:
            if v == value:
                return label
        return str(value)

    def check(self, value) -> None:
        """Raise ValueError if ``value`` is not one this control can take."""
        if self.kind == "text":
            if not isinstance(value, str):
                raise ValueError(f"{self.name} must be text, got {value!r}")
        elif self.kind == "multi":
            bad = [v for v in value if v not in self.values]
            if bad:
                raise ValueError(f"{self.name}: {bad[0]!r} is not one of {list(self.values)}")
        elif self.options_for is None and value not in self.values:
            shown = list(self.values) if len(self.values) <= 12 else (
                f"{self.values[0]!r}..{self.values[-1]!r}")
            raise ValueError(f"{self.name} must be one of {shown}, got {value!r}")


def as_options(values) -> tuple:
    """``values`` as (label, value) pairs: a bare value is labelled ``str(value)``."""
    return tuple(v if isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str)
                 else (str(v), v) for v in values)


def text(name: str, label: str, default: str, *, presets: Sequence[str] = (),
         placeholder: str = "type a sentence", **kwargs) -> Control:
    """A text box; the HTML explorer offers ``presets`` (default: just ``default``)."""
    return Control(name, label, "text", default, explore=tuple(presets) or (default,),
                   placeholder=placeholder, **kwargs)


def choice(name: str, label: str, options: Sequence, default=None, *,
           explore: Sequence | None = None, buttons: bool = False, **kwargs) -> Control:
    """A drop-down (or a row of buttons) over ``options``: values, or (label, value)."""
    options = as_options(options)
    default = options[0][1] if default is None else default
    explore = tuple(explore) if explore is not None else tuple(v for _, v in options)
    return Control(name, label, "choice", default, options, explore, buttons=buttons,
                   **kwargs)


def slider(name: str, label: str, values: Sequence, default=None, *,
           explore: Sequence | None = None, **kwargs) -> Control:
    """A slider over ``values`` (any ordered values, not necessarily evenly spaced)."""
    options = as_options(values)
    default = options[0][1] if default is None else default
    explore = tuple(explore) if explore is not None else tuple(v for _, v in options)
    return Control(name, label, "slider", default, options, explore, **kwargs)


def toggle(name: str, label: str, default: bool = False, *,
           explore: Sequence = (False, True), **kwargs) -> Control:
    """A check box (False / True)."""
    return Control(name, label, "toggle", bool(default), (("off", False), ("on", True)),
                   tuple(explore), **kwargs)


def multi(name: str, label: str, options: Sequence, default: Sequence = (), **kwargs
          ) -> Control:
    """A multiple selection; its value is a tuple of option values. Not offered by the HTML
    explorer (give the scene a :class:`Preset` group instead)."""
    return Control(name, label, "multi", tuple(default), as_options(options), (tuple(default),),
                   **kwargs)


@dataclass(frozen=True)
class Preset:
    """An HTML-explorer control that sets several values at once.

    Attributes
    ----------
    name, label : str
    options : tuple of (str, dict or callable)
        Each option's label and the values it sets: a dict, or a function of the values
        set so far (by earlier controls) that returns a dict.
    default : int
        The option shown first.
    """

    name: str
    label: str
    options: tuple
    default: int = 0

    def values_for(self, index: int, values: Mapping) -> dict:
        setter = self.options[index][1]
        return dict(setter(values) if callable(setter) else setter)


@dataclass(frozen=True)
class Action:
    """A button of the live lab: ``apply(values) -> dict`` of new control values."""

    label: str
    tooltip: str
    apply: Callable[[Mapping], dict]


@dataclass(frozen=True)
class Scene:
    """One lab, declared as data.

    Attributes
    ----------
    name : str
        Its key in :data:`attention_book.scenes.SCENES` (and of its view).
    title : str
        The explorer's heading.
    controls : tuple of Control
        In display order; their names are the state function's arguments.
    state : callable
        ``state(**values) -> state``: pure (same values, same state).
    readout : callable
        ``readout(state) -> str``: an HTML fragment (reader text escaped).
    alt : callable
        ``alt(state) -> str``: plain text describing the picture.
    presets : tuple of Preset
        HTML-explorer controls that set several values (their values are hidden as
        separate controls there).
    actions : tuple of Action
        Buttons of the live lab.
    suggested : tuple of dict
        The states the chapter's "things to try" and exercises name; each must be
        reachable in the HTML explorer (a test checks it).
    check : callable, optional
        ``check(values)`` raises ValueError for a combination the controls cannot show
        (e.g. "h=3 does not divide d=8", the API's own message), before the generic checks.
    """

    name: str
    title: str
    controls: tuple
    state: Callable
    readout: Callable
    alt: Callable
    presets: tuple = ()
    actions: tuple = ()
    suggested: tuple = field(default=())
    check: Callable[[Mapping], None] | None = None

    def __post_init__(self):
        names = [c.name for c in self.controls]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: control names must be distinct, got {names}")

    @property
    def defaults(self) -> dict:
        """Every control's default value."""
        return {c.name: c.default for c in self.controls}

    def control(self, name: str) -> Control:
        """The control called ``name``."""
        for c in self.controls:
            if c.name == name:
                return c
        raise ValueError(f"{self.name} has no control {name!r}: "
                         f"choose one of {[c.name for c in self.controls]}")

    def values(self, **overrides) -> dict:
        """The defaults with ``overrides``, each checked against its control."""
        unknown = set(overrides) - {c.name for c in self.controls}
        if unknown:
            raise ValueError(f"{self.name} has no control {sorted(unknown)[0]!r}: "
                             f"choose from {[c.name for c in self.controls]}")
        values = {**self.defaults, **overrides}
        if self.check is not None:
            self.check(values)
        for c in self.controls:
            if c.kind == "multi" and c.options_for is not None and c.name not in overrides:
                # a selection whose choices follow other controls starts with all of them
                values[c.name] = tuple(v for _, v in as_options(c.options_for(values)))
            c.check(values[c.name])
            if c.options_for is not None and c.kind != "multi":
                allowed = tuple(v for _, v in as_options(c.options_for(values)))
                if values[c.name] not in allowed:
                    raise ValueError(f"{c.name} must be one of {list(allowed)} here, "
                                     f"got {values[c.name]!r}")
        return values

    def compute(self, values: Mapping):
        """The state for ``values`` (a dict with every control's value)."""
        return self.state(**values)

    def active(self, values: Mapping) -> dict:
        """Whether each control has an effect for ``values``."""
        return {c.name: c.active_when is None or bool(c.active_when(values))
                for c in self.controls}
