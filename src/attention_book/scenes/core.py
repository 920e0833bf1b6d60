"""The scenes layer: each lab declared as data, with a pure state function.

A :class:`Scene` holds everything about a lab that is neither a widget nor a picture: its
controls, a pure state function from their values to what the picture and readout need,
the name of its browser module (``web/src/labs/<name>.js``: the state's twin, the figure,
the readout and the alt text), and the states the chapter suggests; and
:func:`to_js`, a state as the browser's modules hold it. The controls layer turns a scene
into the live lab of a notebook or the lab the built book computes in the browser; nothing
here imports a widget library or matplotlib, so a scene is testable alone.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..embedding import embed, embedding_table
from ..tokens import Vocabulary, tokenize

__all__ = ["Note", "as_options", "read_tokens", "embed_tokens", "token_options",
           "HasTokens", "Control", "text", "choice", "slider", "seed_slider", "toggle", "multi",
           "when", "compare", "Condition", "Scene", "MAX_WIDGET_TOKENS", "js_name",
           "to_js"]

#: The most tokens a lab shows by default; longer texts are truncated with a visible note.
MAX_WIDGET_TOKENS = 32


@dataclass(frozen=True)
class Note:
    """A message for the reader (plain text, escaped when put into HTML)."""

    level: str  # "error", "warning" or "info"
    text: str


def read_tokens(text, max_tokens: int = MAX_WIDGET_TOKENS, which: str = ""
                ) -> tuple[list[str], list[Note], int]:
    """Tokenise reader-typed text for a lab: never raises, explains in notes.

    A non-string, empty or over-long ``text`` gives no tokens and an error note; beyond
    ``max_tokens`` it is truncated with a warning note; ``which`` names the text in the
    notes when a lab has several ("keys/values sentence").

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
    notes = [] if tokens else [Note("error", prefix + "no tokens; type a sentence")]
    if len(tokens) > max_tokens:
        notes.append(Note("warning",
                          f"{prefix}showing the first {max_tokens} of {len(tokens)} tokens"))
    return tokens[:max_tokens], notes, len(tokens)


@functools.lru_cache(maxsize=32)
def _table(d: int, seed: int) -> np.ndarray:
    """Chapter 1's table (V, d) for ``seed``, built once."""
    table = embedding_table(len(Vocabulary.default()), d, seed)  # (V, d)
    table.flags.writeable = False  # shared by every caller of the cache
    return table


def as_known(tokens, notes: list) -> list[str]:
    """``tokens`` as chapter 1's embedding table sees them: a word outside its vocabulary is
    ``<unk>`` (the one row every unknown word shares), with a note in ``notes`` naming the
    typed words and how many share that row. A lab that labelled them as typed drew equal
    rows under different names (chapters 6-9 review, F2)."""
    vocab = Vocabulary.default()
    unknown = [t for t in tokens if not vocab.is_known(t)]
    if not unknown:
        return list(tokens)
    n, words = len(unknown), list(dict.fromkeys(unknown))
    listed = ", ".join(f"'{t}'" for t in words[:8]) + (", \u2026" if len(words) > 8 else "")
    notes.append(Note("info", f"{n} typed word{'s are' if n != 1 else ' is'} not in chapter "
                              f"1's vocabulary of {len(vocab)}: shown as {vocab.words[1]}, "
                              f"{'they share' if n != 1 else 'it has'} its one row of X "
                              f"({listed})"))
    return [t if vocab.is_known(t) else vocab.words[1] for t in tokens]


def embed_tokens(tokens, d: int, seed: int = 0) -> np.ndarray:
    """Chapter 1's embeddings of the s ``tokens``: a new array (s, d), rows of
    ``embedding_table(V, d, seed)``; (0, d) when there are no tokens."""
    if not tokens:
        return np.zeros((0, d))
    return embed(Vocabulary.default().encode(list(tokens)), _table(d, seed))  # (s, d)


def token_options(tokens) -> tuple:
    """A query drop-down's choices for ``tokens``: ("position: token", i), or one
    "(no tokens)" choice."""
    if not tokens:
        return (("(no tokens)", 0),)
    return tuple((f"{i}: {t}", i) for i, t in enumerate(tokens))


class HasTokens:
    """A state with ``tokens``: gives it ``s``."""

    @property
    def s(self) -> int:
        """The number of tokens."""
        return len(self.tokens)


def as_options(values) -> tuple:
    """``values`` as (label, value) pairs: a bare value is labelled ``str(value)``."""
    return tuple(v if isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str)
                 else (str(v), v) for v in values)


def _values(options) -> tuple:
    return tuple(v for _, v in as_options(options))


@dataclass(frozen=True)
class Control:
    """One control of a lab, declared as data; build it with :func:`text`, :func:`choice`,
    :func:`slider`, :func:`toggle` or :func:`multi`."""

    name: str             # the state function's argument it sets
    label: str            # the visible label (live and HTML)
    kind: str             # "text", "choice", "slider", "toggle" or "multi"
    default: object
    options: tuple = ()   # (label, value) pairs; empty for "text"
    suggestions: tuple = ()  # of a text box: the book's sentences, offered as it is typed in
    # options_for(values) -> the choices allowed given the other values (re-offered live)
    options_for: Callable[[Mapping], tuple] | None = None
    # active_when(values) -> whether it has an effect; if not it is disabled, with `hint`
    active_when: Callable[[Mapping], bool] | None = None
    hint: str = ""
    placeholder: str = ""  # of a text box

    @property
    def values(self) -> tuple:
        """The option values, in order."""
        return tuple(v for _, v in self.options)

    def label_of(self, value) -> str:
        """The visible label of ``value``."""
        return next((label for label, v in self.options if v == value), str(value))

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


def text(name: str, label: str, default: str, *, suggestions: Sequence[str] = (),
         placeholder: str = "type a sentence", **kwargs) -> Control:
    """A text box that takes any text; ``suggestions`` (the book's sentences other than
    ``default``) are offered as the reader types."""
    suggestions = tuple(t for t in dict.fromkeys(suggestions) if t != default)
    return Control(name, label, "text", default, suggestions=suggestions,
                   placeholder=placeholder, **kwargs)


def _listed(kind, name, label, options, default, **kwargs) -> Control:
    options = as_options(options)
    return Control(name, label, kind, options[0][1] if default is None else default, options,
                   **kwargs)


def choice(name: str, label: str, options: Sequence, default=None, **kwargs) -> Control:
    """A drop-down over ``options``: values, or (label, value)."""
    return _listed("choice", name, label, options, default, **kwargs)


def slider(name: str, label: str, values: Sequence, default=None, **kwargs) -> Control:
    """A slider over ``values`` (any ordered values, not necessarily evenly spaced)."""
    return _listed("slider", name, label, values, default, **kwargs)


def seed_slider(label: str, seeds: tuple = (0, 20), **kwargs) -> Control:
    """The slider "seed" over ``seeds`` (first, last), starting at the first."""
    return slider("seed", label, range(seeds[0], seeds[1] + 1), seeds[0], **kwargs)


def toggle(name: str, label: str, default: bool = False, **kwargs) -> Control:
    """A check box (False / True)."""
    return Control(name, label, "toggle", bool(default), (("off", False), ("on", True)),
                   **kwargs)


def multi(name: str, label: str, options: Sequence, default: Sequence = (), **kwargs
          ) -> Control:
    """A multiple selection (check boxes); its value is a tuple of option values."""
    return Control(name, label, "multi", tuple(default), as_options(options), **kwargs)


@dataclass(frozen=True)
class Condition:
    """An ``active_when`` that is also data: ``values[name] <op> value``, so that the
    browser's front end (``web/lab.js``) can evaluate it too. Build it with :func:`when`
    or :func:`compare`."""

    name: str
    op: str  # one of "==", "!=", ">", ">=", "<", "<="
    value: object

    _OPS = {"==": operator.eq, "!=": operator.ne, ">": operator.gt, ">=": operator.ge,
            "<": operator.lt, "<=": operator.le}

    def __post_init__(self):
        if self.op not in self._OPS:
            raise ValueError(f"op must be one of {list(self._OPS)}, got {self.op!r}")

    def __call__(self, values: Mapping) -> bool:
        return bool(self._OPS[self.op](values[self.name], self.value))


def when(name: str, value) -> Callable[[Mapping], bool]:
    """An ``active_when``: the control has an effect while control ``name`` is ``value``."""
    return Condition(name, "==", value)


def compare(name: str, op: str, value) -> Condition:
    """An ``active_when``: the control has an effect while ``values[name] <op> value``
    (``compare("d", ">", 2)``)."""
    return Condition(name, op, value)


@dataclass(frozen=True)
class Scene:
    """One lab, declared as data."""

    name: str           # its key in attention_book.scenes.SCENES
    title: str          # the lab's heading
    controls: tuple     # of Control, in display order; names = the state function's arguments
    state: Callable     # state(**values) -> state, pure
    suggested: tuple = ()  # dicts of values the chapter names; each reachable by the controls
    # dicts of values the live lab computes once when it opens, so that the first change
    # to them finds its caches full (chapter 8: the other task's model, loaded)
    warm: tuple = ()
    # check(values) raises ValueError for a combination the controls cannot show (e.g.
    # "h=3 does not divide d=8", the API's own message), before the generic checks
    check: Callable[[Mapping], None] | None = None
    # the lab's twin in the reader's browser, web/<web>.js (e.g. "positional"): the built
    # book, which has no kernel, computes the state there
    web: str = ""

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
                values[c.name] = _values(c.options_for(values))
            c.check(values[c.name])
            if c.options_for is not None and c.kind != "multi":
                allowed = _values(c.options_for(values))
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


def js_name(name: str) -> str:
    """The name a state's field has in the browser's state modules (``web/<lab>.js``):
    snake_case becomes camelCase (``max_error`` -> ``maxError``), except a name whose first
    part is one letter, which is notation and stays (``d_k``, ``X_kv``, ``n_parameters``)."""
    first, *rest = name.split("_")
    if not rest or len(first) == 1:
        return name
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def _public_properties(cls) -> list[str]:
    return [name for name in dir(cls) if not name.startswith("_")
            and isinstance(inspect.getattr_static(cls, name), property)]


def to_js(value):
    """A scene's state as the browser's state modules hold it, for the live lab to send.

    A dataclass becomes a dict of its fields and public properties, named by
    :func:`js_name`; tuples and lists become lists; dicts keep their keys (as text); numpy
    scalars become numbers, and a float that is not finite ``None`` (JSON has no NaN). A
    floating array, or one of more than one axis, becomes ``{"$array": dtype, "shape": [...],
    "buffer": bytes}``, sent as binary (row-major; booleans as uint8, integers as
    int32), which the page reads as a typed array; a 1-D array of integers or booleans
    becomes a list (the modules hold ids, permutations and flags as arrays).
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = [f.name for f in dataclasses.fields(value)] + _public_properties(type(value))
        return {js_name(name): to_js(getattr(value, name)) for name in dict.fromkeys(names)}
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biu" and value.ndim == 1:
            return value.tolist()
        if value.dtype.kind == "b":
            value = value.astype(np.uint8)
        elif value.dtype.kind in "iu":
            value = value.astype(np.int32)
        elif value.dtype.kind != "f":
            raise TypeError(f"to_js: cannot send an array of {value.dtype}")
        return {"$array": value.dtype.name, "shape": list(value.shape),
                "buffer": value.tobytes()}
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)):
        return [to_js(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): to_js(v) for k, v in value.items()}
    raise TypeError(f"to_js: cannot send a {type(value).__name__}")
