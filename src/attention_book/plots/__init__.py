"""Pictures layer: matplotlib figures built once, with views whose ``update`` only changes
the artists' data. ``core`` holds the shared building blocks; one module per chapter holds
that chapter's views. Imports the math layer and matplotlib, never pyplot."""

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
