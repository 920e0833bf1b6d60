"""The pictures layer: matplotlib figures built once, with views whose ``show(state)`` only
changes the artists' data. ``core`` holds the shared building blocks; one module per
chapter holds that chapter's views and lists them in a module-level ``VIEWS`` dict (scene
name -> view factory), found here automatically (the names in its ``__all__`` are
re-exported). Imports the math layer, the scenes' states (as data) and matplotlib, never
pyplot."""

import importlib
import pkgutil

from . import core
from .core import *  # noqa: F401,F403

#: The view factory of every scene, by scene name.
VIEWS: dict = {}
__all__ = ["VIEWS", *core.__all__]

for _info in pkgutil.iter_modules(__path__):
    if _info.name != "core":
        _module = importlib.import_module(f"{__name__}.{_info.name}")
        _names = [n for n in getattr(_module, "__all__", ())
                  if n not in ("SCENE", "SCENES", "VIEWS")]  # registries stay in the module
        globals().update({n: getattr(_module, n) for n in _names})
        __all__ += _names
        VIEWS.update(getattr(_module, "VIEWS", {}))
