"""Sphinx extension: the labs computed in the reader's browser (``attention_book/controls/web.py``).

- Sets ``ATTENTION_BOOK_STATIC=1`` so the kernels that execute the chapters during the build
  render each lab as the lab the reader's browser computes (a live slider would be inert in
  HTML, which has no kernel).
- Copies the package's ``web/*.js`` (built by ``make js``) and ``web/lab.css`` into
  ``_static/ab-web``, adds the lab stylesheet to every page and to each page the scripts its
  labs name (``data-ab-scripts``, from ``web/labs.json``), as classic deferred scripts: a
  page opened as file:// refuses ES modules.
- The data scripts some labs read (MiniLM's weights and preset sentences, chapter 8's
  checkpoints, chapter 10's gallery) are a build step: ``python -m attention_book.web_export
  build _build/web-data`` runs beside the chapters' execution (files already there are kept)
  and the build waits for it before copying them beside the scripts, with chapter 10's
  model file (a ``.gguf``, hard-linked where the file system allows: 98 MB).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

STATIC_ENV = "ATTENTION_BOOK_STATIC"
WEB_URL = "ab-web/"  # under _static: the package's browser side (attention_book/web/*.js)
WEB_SCRIPTS = re.compile(r'data-ab-scripts="([^"]*)"')


def _data_folder(app: Sphinx) -> Path:
    return Path(app.outdir).parent / "web-data"


def _web_folder() -> Path:
    """The package's browser side, ``attention_book/web`` (found without importing it)."""
    spec = importlib.util.find_spec("attention_book")
    if spec is None or not spec.submodule_search_locations:
        raise ExtensionError("the book's package attention_book is not installed: make env")
    return Path(list(spec.submodule_search_locations)[0]) / "web"


def add_web_scripts(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """A page with a lab computed in the browser loads the scripts it names
    (``data-ab-scripts="lab.js positional.js"``), from ``_static/ab-web``, in order."""
    names = dict.fromkeys(name for found in WEB_SCRIPTS.findall(context.get("body", ""))
                          for name in found.split())
    for name in names:
        app.add_js_file(f"{WEB_URL}{name}", defer="defer")


def start_web_data(app: Sphinx) -> None:
    """Start writing the data scripts (``attention_book.web_export.write_all``) into
    ``_build/web-data``, in a process of its own while the chapters execute."""
    app.ab_web_data = subprocess.Popen(
        [sys.executable, "-m", "attention_book.web_export", "build", str(_data_folder(app))],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def copy_web(app: Sphinx, exception: Exception | None) -> None:
    """Copy the package's browser side into ``_static/ab-web`` (emptied first)."""
    writing = getattr(app, "ab_web_data", None)
    if writing is not None:
        _, errors = writing.communicate()
        if writing.returncode and exception is None:
            raise ExtensionError(f"writing the labs' data scripts failed:\n{errors[-3000:]}")
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / WEB_URL
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for source in sorted([*_web_folder().glob("*.js"), _web_folder() / "lab.css"]):
        shutil.copy2(source, target / source.name)
    # the data scripts the build step wrote (MiniLM's weights and its preset sentences,
    # chapter 8's checkpoints, chapter 10's gallery: attention_book.web_export.DATA) and
    # chapter 10's model file, which the page fetches (or the reader picks) on request
    for source in sorted([*_data_folder(app).glob("*.js"), *_data_folder(app).glob("*.gguf")]):
        try:
            os.link(source, target / source.name)
        except OSError:  # another file system: a copy
            shutil.copy2(source, target / source.name)


def setup(app: Sphinx) -> dict:
    os.environ[STATIC_ENV] = "1"
    app.connect("builder-inited", start_web_data)
    app.add_css_file(f"{WEB_URL}lab.css")
    app.connect("html-page-context", add_web_scripts)
    app.connect("build-finished", copy_web)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
