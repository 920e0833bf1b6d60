"""Controls layer, live form: ipywidgets labs (see :mod:`.core`), one module per chapter."""

from .core import *  # noqa: F401,F403
from .core import __all__ as _core_all
from .embedding import *  # noqa: F401,F403
from .embedding import __all__ as _embedding_all

__all__ = [*_core_all, *_embedding_all]
