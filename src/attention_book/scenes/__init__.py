"""The scenes layer: each lab declared as data (see :mod:`.core`), one module a chapter.

:data:`SCENES` maps each scene's name to its :class:`~.core.Scene`; a chapter module
lists its scenes in a module-level ``SCENES`` tuple and is found here automatically.
Imports the math and reference layers, never ipywidgets or matplotlib.
"""

import importlib
import pkgutil

from .core import *  # noqa: F401,F403
from . import core

#: Every scene of the book, by name.
SCENES: dict = {}
__all__ = ["SCENES", *core.__all__]

for _info in pkgutil.iter_modules(__path__):
    if _info.name == "core":
        continue
    _module = importlib.import_module(f"{__name__}.{_info.name}")
    for _name in getattr(_module, "__all__", ()):  # a module's registry entries stay there
        if _name in ("SCENE", "SCENES", "VIEWS"):
            continue
        globals()[_name] = getattr(_module, _name)
        __all__.append(_name)
    SCENES.update({scene.name: scene for scene in getattr(_module, "SCENES", ())})
