"""The controls layer: a scene and its view, shown as a live lab or a static explorer.

A chapter shows a lab with one call, ``lab("embedding")`` or ``lab("attention", text="the
dog saw the cat")``. While ``jupyter-book build`` runs (the book's Sphinx extension sets
``ATTENTION_BOOK_STATIC=1``) it returns the kernel-free :class:`~.static.Explorer` and
ipywidgets is never imported; in a reader's notebook it returns the live
:class:`~.live.LiveLab`, and the explorer's precomputation is never paid.
"""

from __future__ import annotations

import os

from ..plots import VIEWS
from ..scenes import SCENES
from .static import Explorer, explorer
from .web import BrowserLab, browser_lab

__all__ = ["STATIC_ENV_VAR", "is_static_build", "lab", "live_lab", "static_explorer",
           "web_lab", "Explorer", "BrowserLab"]

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
    """The live lab of scene ``name`` (an ipywidgets VBox), starting at ``values``."""
    from .live import LiveLab  # ipywidgets only where a kernel shows it

    return LiveLab(_scene(name), VIEWS[name](), **values)


def static_explorer(name: str, **explore) -> Explorer:
    """The kernel-free explorer of scene ``name``; ``explore[control]``, a tuple of values,
    replaces a control's precomputed values."""
    return explorer(_scene(name), VIEWS[name](), **explore)


def web_lab(name: str) -> BrowserLab:
    """The lab of scene ``name`` computed in the reader's browser (the scene has ``web``),
    its default state drawn by the view as the picture shown without JavaScript."""
    return browser_lab(_scene(name), VIEWS[name]())


def lab(name: str, **values):
    """The lab of scene ``name`` (a key of :data:`attention_book.scenes.SCENES`): the live
    lab starting at ``values`` in a notebook; in the built book the lab computed in the
    browser if the scene has a browser state function (``Scene.web``), else the explorer
    (its declared states). Not displayed: make it the last expression of a cell."""
    if not is_static_build():
        return live_lab(name, **values)
    return web_lab(name) if _scene(name).web else static_explorer(name)
