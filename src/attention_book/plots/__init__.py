"""Pictures layer: matplotlib figures built once, with views whose ``update`` only changes
the artists' data. ``core`` holds the shared building blocks; one module per chapter holds
that chapter's views. Imports the math layer and matplotlib, never pyplot."""

from .core import *  # noqa: F401,F403
from .core import __all__ as _core_all
from .embedding import *  # noqa: F401,F403
from .embedding import __all__ as _embedding_all

__all__ = [*_core_all, *_embedding_all]
