"""What a lab's browser module shows for Python states: its readout (HTML) and alt text.

The readout and alt text are written once, in each lab's module (``web/src/labs/<lab>.js``);
:func:`attention_book.controls.web.present` runs the module's bundle in Node.js on a Python
state as the live lab sends it, which is what the notebook shows and, for the default state,
what the built book's ``<noscript>`` shows. The labs' tests read their texts through here.
"""
from __future__ import annotations

from attention_book.controls.web import present
from attention_book.scenes import SCENES

def views(lab: str, *states) -> list[dict]:
    """``{"alt", "readout"}`` of each state of scene ``lab``, in one run of Node."""
    return present(SCENES[lab], states)


def readout(lab: str, state) -> str:
    """The readout's HTML of ``state``."""
    return views(lab, state)[0]["readout"]


def alt(lab: str, state) -> str:
    """The alt text of ``state``."""
    return views(lab, state)[0]["alt"]


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
