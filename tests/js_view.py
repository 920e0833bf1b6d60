"""What a lab's browser module shows for Python states: its readout (HTML) and alt text.

The readout and alt text are written once, in each lab's module (``web/src/labs/<lab>.js``);
:func:`attention_book.controls.web.present` runs the module's bundle in Node.js on a Python
state as the live lab sends it, which is what the notebook shows and, for the default state,
what the built book's ``<noscript>`` shows. The labs' tests read their texts through here.
"""
from __future__ import annotations

import dataclasses
import pickle

import numpy as np

from attention_book.controls.web import present
from attention_book.scenes import SCENES
from attention_book.scenes.core import to_js

#: (lab, the state as Node is sent it, pickled) -> its view: a test that reads a state's
#: readout and its alt text runs Node once, not twice (0.1 s of CPU a run).
_SEEN: dict = {}


def views(lab: str, *states) -> list[dict]:
    """``{"alt", "readout"}`` of each state of scene ``lab``, in one run of Node."""
    return present(SCENES[lab], states)


#: The arrays of each lab's state that its readout and alt text never read (a Proxy on the
#: state, in Node, over 300 held-out values a lab, recorded every key read): most of what
#: Python's states are as JSON (permutation's 20 of 21 MB, multihead's 17 of 28, attention's
#: 13 of 22, masking's 2.1 of 4.3, positional's PE and similarity: 321 MB of 204 states).
UNREAD = {"embedding": ("X",), "attention": ("Q", "K", "V", "X_q", "output"),
          "multihead": ("X", "contributions", "output", "on_output", "off_output"),
          "permutation": ("after", "before", "difference"),
          "masking": ("scores", "output"),  # its row sums are a property of the weights
          "positional": ("pe", "similarity", "by_offset")}


def text_views(lab: str, *states) -> list[dict]:
    """:func:`views` of ``states`` sent without their :data:`UNREAD` arrays (emptied), for the
    parity tests, which compare them with the texts the module wrote from its own whole
    state: a readout or alt text that did read an emptied array would differ from those (or
    throw) and fail the test, never pass it wrongly (test_web_states's
    test_an_emptied_array_the_texts_read_changes_them). The views' CPU (Python and Node) of
    the slow runs: multihead 2.35 -> 1.63 s, permutation 2.03 -> 0.64, attention 1.87 ->
    1.40; on every held-out value of the parity tests, the same views as whole states."""
    fields = UNREAD.get(lab, ())

    def emptied(value):
        return value[:0] if isinstance(value, np.ndarray) else type(value)()

    return views(lab, *(dataclasses.replace(st, **{f: emptied(getattr(st, f)) for f in fields})
                        for st in states))


def view(lab: str, state) -> dict:
    """:func:`views` of one state, kept for the next call on an equal state (the same
    values and buffers sent to Node, so the same answer)."""
    return prefetch(lab, [state])[0]


def prefetch(lab: str, states) -> list[dict]:
    """:func:`views` of ``states``, those not kept already made in one run of Node, and kept
    for :func:`view`: for the cases of a parametrized test, each of which reads one state's
    texts (a module fixture calls this with every case's state; each case's :func:`view`
    then runs no Node)."""
    keys = [(lab, pickle.dumps(to_js(state))) for state in states]
    found = {key: _SEEN[key] for key in keys if key in _SEEN}
    new = {key: state for key, state in zip(keys, states) if key not in found}
    if new:
        found.update(zip(new, views(lab, *new.values())))
        if len(_SEEN) + len(new) > 64:
            _SEEN.clear()
        _SEEN.update(found)
    return [found[key] for key in keys]


def readout(lab: str, state) -> str:
    """The readout's HTML of ``state``."""
    return view(lab, state)["readout"]


def alt(lab: str, state) -> str:
    """The alt text of ``state``."""
    return view(lab, state)["alt"]


def states_and_views(lab: str, values: list) -> list[tuple]:
    """(state, view) of each values of scene ``lab``; (None, None) where the state function
    refuses them."""
    states = []
    for v in values:
        try:
            states.append(SCENES[lab].state(**v))
        except ValueError:
            states.append(None)
    shown = iter(views(lab, *[st for st in states if st is not None]))
    return [(None, None) if st is None else (st, next(shown)) for st in states]
