"""The shared code of the book: every number, figure and lab comes from here.

Layers, each importing only the ones above it (docs/architecture.md has the whole story):

- math (numpy only): ``tokens``, ``embedding``, ``positional``, ``attention``,
  ``multihead``, ``permutation``, ``masking``, ``block``, ``heads``, ``decoding``,
  ``cost``
- reference (PyTorch and pretrained weights): ``reference`` (torch twins), ``training``
  (the tiny transformers of chapter 8), ``pretrained`` (all-MiniLM-L6-v2, chapter 9)
- scenes: each lab declared as data, with its pure state function (``scenes.core`` and
  one module per chapter); no ipywidgets, no matplotlib, no HTML: a lab's readout and alt
  text are its browser module's
- pictures: ``plots`` (``plots.core`` and one module per chapter), the chapters' figures
- controls: ``controls.lab(name)``: in a notebook the live lab (``controls.widget``, an
  anywidget: the kernel runs the scene's state function, the page draws it with the
  browser front end), in the built book the lab the reader's browser computes
  (``controls.web``, with the scene's twin ``web/<name>.js``); both drawn by the same
  front end (``web/src/``) and the module's figure, readout and alt text
- ``web_export``: the data some browser labs read (MiniLM's weights and preset sentences,
  chapter 8's checkpoints), one module a file, written by a build step
  (``python -m attention_book.web_export build``), and the tokenizer's tables of minilm.js
"""

__version__ = "0.2.0"
