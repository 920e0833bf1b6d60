"""The pictures layer: the chapters' matplotlib figures (the labs are drawn by the browser
front end, ``web/``, in the book and in a notebook alike). ``core`` holds the shared parts;
one module per chapter holds that chapter's figures, found here automatically (the names in
its ``__all__`` are re-exported). Imports the math layer and matplotlib, never pyplot."""

from .._chapters import chapter_modules
from . import core
from .core import *  # noqa: F401,F403 - core.__all__, the shared parts, re-exported

__all__ = [*core.__all__]
chapter_modules(__name__, __path__, globals())  # noqa: F405 - the package's own __path__
