"""The controls layer: a scene shown as a live lab or as a lab computed in the browser.

A chapter shows a lab with one call, ``lab("embedding")`` or ``lab("attention", text="the
dog saw the cat")``. While ``jupyter-book build`` runs (the book's Sphinx extension sets
``ATTENTION_BOOK_STATIC=1``) it returns a :class:`~.web.BrowserLab`, which the reader's
browser computes with the scene's twin in ``web/`` (the HTML has no kernel), and no widget
library is imported; in a reader's notebook it returns the live :class:`~.widget.LabWidget`,
which the same front end draws from the kernel's Python state.
"""

from __future__ import annotations

import os

from ..scenes import SCENES
from .web import BrowserLab

__all__ = ["STATIC_ENV_VAR", "is_static_build", "lab", "live_lab", "web_lab", "BrowserLab"]

#: The environment variable the book's Sphinx extension sets to "1" during a build.
STATIC_ENV_VAR = "ATTENTION_BOOK_STATIC"


def is_static_build() -> bool:
    """True while the static HTML book is being built (``ATTENTION_BOOK_STATIC=1``)."""
    return os.environ.get(STATIC_ENV_VAR) == "1"


def _scene(name: str):
    if name not in SCENES:
        raise ValueError(f"no lab called {name!r}: choose one of {sorted(SCENES)}")
    return SCENES[name]


def live_lab(name: str, **values):
    """The live lab of scene ``name`` (an anywidget), starting at ``values``."""
    from .widget import LabWidget  # anywidget only where a kernel shows it

    return LabWidget(_scene(name), **values)


def web_lab(name: str, **values) -> BrowserLab:
    """The lab of scene ``name`` computed in the reader's browser, starting at ``values``."""
    return BrowserLab(_scene(name), **values)


def lab(name: str, **values):
    """The lab of scene ``name`` (a key of :data:`attention_book.scenes.SCENES`) starting at
    ``values`` (the scene's defaults for the others): in a notebook the live lab, in the
    built book the lab computed in the reader's browser. Not displayed: make it the last
    expression of a cell."""
    return live_lab(name, **values) if not is_static_build() else web_lab(name, **values)
