"""The scenes layer: each lab declared as data (see :mod:`.core`), one module a chapter.

:data:`SCENES` maps each scene's name to its :class:`~.core.Scene`; a chapter module lists
its scenes in a module-level ``SCENES`` tuple and is found here automatically (the names in
its ``__all__`` are re-exported). Imports the math and reference layers, never ipywidgets or
matplotlib.
"""

import importlib
import pkgutil

from . import core
from .core import *  # noqa: F401,F403

#: Every scene of the book, by name.
SCENES: dict = {}
__all__ = ["SCENES", *core.__all__]

for _info in pkgutil.iter_modules(__path__):
    if _info.name != "core":
        _module = importlib.import_module(f"{__name__}.{_info.name}")
        _names = [n for n in getattr(_module, "__all__", ())
                  if n not in ("SCENE", "SCENES", "VIEWS")]  # registries stay in the module
        globals().update({n: getattr(_module, n) for n in _names})
        __all__ += _names
        SCENES.update({scene.name: scene for scene in getattr(_module, "SCENES", ())})
