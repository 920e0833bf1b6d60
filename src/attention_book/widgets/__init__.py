"""Controls layer, live form: ipywidgets labs (see :mod:`.core`), one module per chapter."""

from .core import *  # noqa: F401,F403
from .embedding import *  # noqa: F401,F403  (chapter 1)
from .positional import *  # noqa: F401,F403  (chapter 2)
from .attention import *  # noqa: F401,F403  (chapter 3)
from .multihead import *  # noqa: F401,F403  (chapter 4)
from .permutation import *  # noqa: F401,F403  (chapter 5)
from . import attention, core, embedding, multihead, permutation, positional

__all__ = [
    name
    for module in (core, embedding, positional, attention, multihead, permutation)
    for name in module.__all__
]
