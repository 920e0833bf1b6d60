"""The shared code of the book: every number, figure and widget comes from here.

Layers, each importing only the ones above it:

- math (numpy only): ``tokens``, ``embedding``, ``positional``, ``attention``,
  ``multihead``, ``permutation``
- reference (PyTorch parity): ``reference``
- pictures (matplotlib figure builders): ``plots``
- controls: ``widgets`` (live ipywidgets UIs), ``explorer`` (their kernel-free HTML form)
"""

__version__ = "0.1.0"
