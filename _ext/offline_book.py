"""Sphinx extension that makes the built book readable with no network.

- Copies the JavaScript the site serves (MathJax) from ``node_modules`` (installed by
  ``npm ci`` from ``package-lock.json``) into ``_static/vendor``, so ``mathjax_path`` in
  ``_config.yml`` points inside the site. Only the files the pages load are copied (see
  ``VENDORED``): MathJax's full ``es5`` tree is 8.3 MB, of which the pages load 1.5 MB.
  (No page carries ipywidgets state, so neither require.js nor the widget manager is
  needed: ``nb_ipywidgets_js`` is empty.)
- Deletes what the theme copies into ``_static`` that no reader's browser fetches
  (``UNFETCHED``: source maps, TrueType copies of the icon fonts, gettext catalogues).
- Sets ``ATTENTION_BOOK_STATIC=1`` so the kernels that execute the chapters during the build
  render each lab as the lab the reader's browser computes (a live slider would be inert in
  HTML, which has no kernel).
- Drops inline scripts that the theme stack adds to a page twice (sphinx-thebe's
  configuration script), which would otherwise raise a SyntaxError in the browser console.
- Serves the book's own stylesheet and script (``_ext/static``): labs and outputs in
  the theme's colours (light and dark), phones, print, and figures that enlarge on a click.
- Labs computed in the reader's browser (``attention_book/controls/web.py``): copies the
  package's ``web/*.js`` into ``_static/ab-web`` and adds to each page the scripts its labs
  name (``data-ab-scripts``), as classic deferred scripts: a page opened as file:// refuses
  ES modules. The data scripts some labs read (MiniLM's weights and preset sentences,
  chapter 8's checkpoints) are a build step: ``python -m attention_book.web_export build
  _build/web-data`` runs beside the chapters' execution (files already there are kept) and
  the build waits for it before copying them beside the scripts.
- Labels the reference list as the citations read, "Vaswani et al., 2017", rather than
  alpha's "VSP+17" (``bibtex_default_style: authoryear``).
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
OWN_STATIC = Path(__file__).parent / "static"
WEB_URL = "ab-web/"  # under _static: the package's browser side (attention_book/web/*.js)
WEB_SCRIPTS = re.compile(r'data-ab-scripts="([^"]*)"')

# (source under node_modules, destination under _static/vendor). A source is a file, a folder
# (copied whole) or a glob pattern (its matches are copied into the destination folder, which
# then ends with "/"). The destinations' top folders are the extension's own: each build
# empties them first, so an older build's files do not linger in _build/html.
#
# MathJax: only what the pages load. Found by building the book, opening every page in
# chromium and recording every request under _static/vendor/mathjax (tests/test_site_weight.py
# does this on each test run and fails on any failed request there, so a file MathJax starts
# to need shows up as a test failure, not as silently broken math). The pages ask for:
# - tex-chtml.js, the combined component: startup, TeX input with the packages base, ams,
#   newcommand, noundefined, require, autoload and configmacros, the CHTML output, the menu
#   code and a11y/assistive-mml (the hidden MathML that screen readers read), all in one file;
# - the CHTML woff-v2 fonts, which its stylesheet fetches per font a page's glyphs use (the
#   chapters fetch 10 of the 23; all 23 are kept, 350 kB, so a new symbol cannot 404);
# - nothing else: no input/tex/extensions/*, a11y/*, sre/* or ui/* request. Those come only
#   from the autoload extension (a macro outside the packages above, e.g. \boldsymbol or
#   \cancel, loads input/tex/extensions/<name>.js: add it to MATHJAX_EXTENSIONS) and from
#   the MathJax menu (explorer, speech, collapsible math, SVG output: a11y/*, sre/*,
#   output/svg.js, ~5 MB), which _config.yml switches off (mathjax3_config.options.enableMenu).
MATHJAX_EXTENSIONS: list[str] = []  # TeX package names, e.g. ["boldsymbol"]

VENDORED = [
    ("mathjax/es5/tex-chtml.js", "mathjax/tex-chtml.js"),
    ("mathjax/es5/output/chtml/fonts/woff-v2", "mathjax/output/chtml/fonts/woff-v2"),
    *[(f"mathjax/es5/input/tex/extensions/{name}.js", f"mathjax/input/tex/extensions/{name}.js")
      for name in MATHJAX_EXTENSIONS],
]


def _sources(app: Sphinx, src: str) -> list[Path]:
    """The files or folders a VENDORED source names (a pattern may name several)."""
    if any(c in src for c in "*?["):
        return sorted(_node_modules(app).glob(src))
    path = _node_modules(app) / src
    return [path] if path.exists() else []


def _node_modules(app: Sphinx) -> Path:
    return Path(app.srcdir) / "node_modules"


def check_vendor(app: Sphinx) -> None:
    """Fail early, with the fix, if ``npm ci`` has not been run."""
    missing = [src for src, _ in VENDORED if not _sources(app, src)]
    if missing:
        raise ExtensionError(
            f"the book serves its own JavaScript but node_modules lacks {missing}; "
            "run `npm ci` (make book does it)"
        )


def copy_vendor(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    vendor = Path(app.outdir) / "_static" / "vendor"
    for top in sorted({dst.split("/")[0] for _, dst in VENDORED}):
        stale = vendor / top
        if stale.is_dir():
            shutil.rmtree(stale)
        elif stale.exists():
            stale.unlink()
    for src, dst in VENDORED:
        for source in _sources(app, src):
            target = vendor / dst / source.name if dst.endswith("/") else vendor / dst
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target, dirs_exist_ok=True)
            else:
                shutil.copy2(source, target)


#: Files the theme copies that no reader's browser fetches: source maps (only an open
#: developer console asks for them), TrueType copies of the icon fonts (the stylesheet lists
#: woff2 first, which every current browser takes) and the theme's gettext catalogues (read
#: at build time, never by a page). 2.6 MB of the site.
UNFETCHED = ("*.map", "vendor/fontawesome/webfonts/*.ttf", "locales")


def drop_unfetched(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    for pattern in UNFETCHED:
        for path in static.rglob(pattern) if "/" not in pattern else static.glob(pattern):
            shutil.rmtree(path) if path.is_dir() else path.unlink()


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


def _data_folder(app: Sphinx) -> Path:
    return Path(app.outdir).parent / "web-data"


def _web_folder() -> Path:
    """The package's browser side, ``attention_book/web`` (found without importing it)."""
    spec = importlib.util.find_spec("attention_book")
    if spec is None or not spec.submodule_search_locations:
        raise ExtensionError("the book's package attention_book is not installed: make env")
    return Path(list(spec.submodule_search_locations)[0]) / "web"


# MathJax typesets a page's formulas a batch at a time, one task each, instead of all of them
# in one task: chapter 3's 381 formulas blocked its page for 398-523 ms (quiet), 134-212 ms
# in batches. startup.promise still resolves only when every formula is typeset
# (tests/test_pages.py waits on it), each with its assistive MathML. The elements are those
# MathJax's own processHtmlClass names (myst-parser sets it), the outermost only. Runs after
# Sphinx's `window.MathJax = {...}` and before the deferred tex-chtml.js.
MATHJAX_IN_BATCHES = """
(function () {
  const BATCH = 24;
  const mj = window.MathJax = window.MathJax || {};
  mj.startup = Object.assign(mj.startup || {}, {
    async pageReady() {
      const marked = MathJax.config.options.processHtmlClass.split("|").map((c) => "." + c).join(", ");
      const roots = [...document.querySelectorAll(marked)].filter((el) => !el.parentElement.closest(marked));
      for (let i = 0; i < roots.length; i += BATCH) {
        await MathJax.typesetPromise(roots.slice(i, i + BATCH));
        await new Promise((next) => setTimeout(next, 0));  // let the page answer between batches
      }
    },
  });
})();
"""


def add_mathjax_batches(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """A page with math typesets it in batches (:data:`MATHJAX_IN_BATCHES`)."""
    if 'class="math' in context.get("body", ""):
        app.add_js_file(None, body=MATHJAX_IN_BATCHES, priority=501)


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
    for source in sorted(_web_folder().glob("*.js")):
        shutil.copy2(source, target / source.name)
    # the data scripts the build step wrote (MiniLM's weights and its preset sentences,
    # chapter 8's checkpoints: attention_book.web_export.DATA)
    for source in sorted(_data_folder(app).glob("*.js")):
        shutil.copy2(source, target / source.name)


def add_own_static(app: Sphinx) -> None:
    app.config.html_static_path.append(str(OWN_STATIC))


def author_year_labels() -> None:
    """Register the pybtex style ``authoryear``: alpha's formatting and sorting, with labels
    "Vaswani et al., 2017" (as sphinxcontrib-bibtex's author_year citations read)."""
    from pybtex.plugin import register_plugin
    from pybtex.style.formatting.alpha import Style as AlphaStyle
    from pybtex.style.labels import BaseLabelStyle

    class AuthorYearLabels(BaseLabelStyle):
        def format_labels(self, sorted_entries):
            for entry in sorted_entries:
                people = entry.persons.get("author") or entry.persons.get("editor") or []
                names = [" ".join(p.last_names) for p in people]
                who = (names[0] if len(names) == 1 else " and ".join(names) if len(names) == 2
                       else f"{names[0]} et al." if names else entry.fields.get("title", "?"))
                yield f"{who}, {entry.fields.get('year', 'n.d.')}"

    class AuthorYearStyle(AlphaStyle):
        default_label_style = AuthorYearLabels

    register_plugin("pybtex.style.formatting", "authoryear", AuthorYearStyle)


def setup(app: Sphinx) -> dict:
    os.environ[STATIC_ENV] = "1"
    author_year_labels()
    app.connect("builder-inited", add_own_static)
    app.connect("builder-inited", start_web_data)
    app.add_css_file("attention-book.css")
    app.add_js_file("attention-book.js", defer="defer")
    app.connect("html-page-context", add_web_scripts)
    app.connect("html-page-context", add_mathjax_batches)
    app.connect("build-finished", copy_web)
    app.connect("builder-inited", check_vendor)
    app.connect("build-finished", copy_vendor)
    app.connect("build-finished", drop_unfetched)
    app.connect("html-page-context", drop_duplicate_scripts, priority=1000)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
