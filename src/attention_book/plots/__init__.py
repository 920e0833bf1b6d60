"""The pictures layer: matplotlib figures built once, with views whose ``show(state)`` only
changes the artists' data. ``core`` holds the shared building blocks; one module per
chapter holds that chapter's views, and lists them in a module-level ``VIEWS`` dict
(scene name -> view factory), found here automatically. Imports the math layer, the
scenes' states (as data) and matplotlib, never pyplot."""

import importlib
import pkgutil

from .core import *  # noqa: F401,F403
from . import core

#: The view factory of every scene, by scene name.
VIEWS: dict = {}
__all__ = ["VIEWS", *core.__all__]

for _info in pkgutil.iter_modules(__path__):
    if _info.name == "core":
        continue
    _module = importlib.import_module(f"{__name__}.{_info.name}")
    for _name in getattr(_module, "__all__", ()):  # a module's registry entries stay there
        if _name in ("SCENE", "SCENES", "VIEWS"):
            continue
        globals()[_name] = getattr(_module, _name)
        __all__.append(_name)
    VIEWS.update(getattr(_module, "VIEWS", {}))
