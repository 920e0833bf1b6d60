"""The pictures layer: matplotlib figures built once, with views whose ``show(state)`` only
changes the artists' data. ``core`` holds the shared building blocks; one module per
chapter holds that chapter's views and lists them in a module-level ``VIEWS`` dict (scene
name -> view factory), found here automatically (the names in its ``__all__`` are
re-exported). Imports the math layer, the scenes' states (as data) and matplotlib, never
pyplot."""

from .._chapters import chapter_modules
from . import core
from .core import *  # noqa: F401,F403

#: The view factory of every scene, by scene name.
VIEWS: dict = {}
__all__ = ["VIEWS", *core.__all__]

for _module in chapter_modules(__name__, __path__, globals()):
    VIEWS.update(getattr(_module, "VIEWS", {}))
