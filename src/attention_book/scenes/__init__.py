"""The scenes layer: each lab declared as data (see :mod:`.core`), one module a chapter.

:data:`SCENES` maps each scene's name to its :class:`~.core.Scene`; a chapter module lists
its scenes in a module-level ``SCENES`` tuple and is found here automatically (the names in
its ``__all__`` are re-exported). Imports the math and reference layers, never ipywidgets or
matplotlib.
"""

from .._chapters import chapter_modules
from . import core
from .core import *  # noqa: F401,F403 - core.__all__, the scenes' vocabulary, re-exported

#: Every scene of the book, by name.
SCENES: dict = {}
__all__ = ["SCENES", *core.__all__]

for _module in chapter_modules(__name__, __path__, globals()):  # noqa: F405 - the package's own __path__
    SCENES.update({scene.name: scene for scene in getattr(_module, "SCENES", ())})
