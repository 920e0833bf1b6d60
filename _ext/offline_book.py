"""Sphinx extension that makes the built book readable with no network.

- Copies the JavaScript the site serves (MathJax, require.js, the widget manager) from
  ``node_modules`` (installed by ``npm ci`` from ``package-lock.json``) into
  ``_static/vendor``, so ``mathjax_path`` and ``nb_ipywidgets_js`` in ``_config.yml`` point
  inside the site.
- Sets ``ATTENTION_BOOK_STATIC=1`` so the kernels that execute the chapters during the build
  render each widget as its kernel-free HTML explorer (a live slider would be inert in HTML).
- Drops inline scripts that the theme stack adds to a page twice (sphinx-thebe's
  configuration script), which would otherwise raise a SyntaxError in the browser console.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

STATIC_ENV = "ATTENTION_BOOK_STATIC"

# (source under node_modules, destination under _static/vendor)
VENDORED = [
    ("mathjax/es5/tex-chtml.js", "mathjax/tex-chtml.js"),
    ("mathjax/es5/input", "mathjax/input"),
    ("mathjax/es5/output/chtml", "mathjax/output/chtml"),
    ("mathjax/es5/output/chtml.js", "mathjax/output/chtml.js"),
    ("mathjax/es5/ui", "mathjax/ui"),
    ("mathjax/es5/a11y", "mathjax/a11y"),
    ("mathjax/es5/adaptors", "mathjax/adaptors"),
    ("mathjax/es5/sre", "mathjax/sre"),
    ("requirejs/require.js", "require.js"),
    ("@jupyter-widgets/html-manager/dist", "html-manager"),
]


def _node_modules(app: Sphinx) -> Path:
    return Path(app.srcdir) / "node_modules"


def check_vendor(app: Sphinx) -> None:
    """Fail early, with the fix, if ``npm ci`` has not been run."""
    missing = [src for src, _ in VENDORED if not (_node_modules(app) / src).exists()]
    if missing:
        raise ExtensionError(
            f"the book serves its own JavaScript but node_modules lacks {missing}; "
            "run `npm ci` (make book does it)"
        )


def copy_vendor(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    vendor = Path(app.outdir) / "_static" / "vendor"
    for src, dst in VENDORED:
        source, target = _node_modules(app) / src, vendor / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            shutil.copy2(source, target)


def drop_duplicate_scripts(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Keep the first of any scripts with the same inline body (or, if not inline, file).

    The same inline script reaches the page once with filename None and once with ''.
    """
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for script in scripts:
        body = getattr(script, "attributes", {}).get("body")
        key = ("body", body) if body else ("file", str(getattr(script, "filename", script)))
        if key not in seen:
            seen.add(key)
            kept.append(script)
    scripts[:] = kept


def setup(app: Sphinx) -> dict:
    os.environ[STATIC_ENV] = "1"
    app.connect("builder-inited", check_vendor)
    app.connect("build-finished", copy_vendor)
    app.connect("html-page-context", drop_duplicate_scripts, priority=1000)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
