"""The shared code of the book: every number, figure and widget comes from here.

Layers, each importing only the ones above it:

- math (numpy only): ``tokens``, ``embedding``, ``positional``, ``attention``,
  ``multihead``, ``permutation``
- reference (PyTorch parity): ``reference``
- pictures (matplotlib figure builders): ``plots`` (``plots.core`` and one module per
  chapter)
- controls: ``explorer`` (the kernel-free HTML form of a lab) and ``widgets``
  (``widgets.core``, the base ``Lab``; one module per chapter with its state function,
  its live lab and its explorer)
"""

__version__ = "0.1.0"
