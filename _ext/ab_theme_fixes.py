"""Sphinx extension: the built book readable with no network, and the theme's fixes (the
labs' plumbing is ``ab_labs.py``).

- Copies the JavaScript the site serves (MathJax) from ``node_modules`` (installed by
  ``npm ci`` from ``package-lock.json``) into ``_static/vendor``, so ``mathjax_path`` in
  ``_config.yml`` points inside the site. Only the files the pages load are copied (see
  ``VENDORED``): MathJax's full ``es5`` tree is 8.3 MB, of which the pages load 1.5 MB.
  (No page carries ipywidgets state, so neither require.js nor the widget manager is
  needed: ``nb_ipywidgets_js`` is empty.)
- Deletes what the theme copies into ``_static`` that no reader's browser fetches
  (``UNFETCHED``: source maps, TrueType copies of the icon fonts, gettext catalogues).
- Drops inline scripts that the theme stack adds to a page twice (sphinx-thebe's
  configuration script), which would otherwise raise a SyntaxError in the browser console.
- Serves the book's own stylesheet and script (``_ext/static``): labs and outputs in
  the theme's colours (light and dark), phones, print, and figures that enlarge on a click.
- Loads less on each page (issue 23: chapter 3's load blocked the page 134-585 ms at a time):
  no fontawesome.js (:func:`theme_templates`: 1.5 MB of script that redrew the theme's 13
  icons as SVG, which the theme's stylesheet already draws from its icon font), MathJax set up
  and typeset in tasks of its own (:data:`MATHJAX_IN_BATCHES`), sections off screen left
  unrendered until the reader nears them (``content-visibility: auto`` in
  ``attention-book.css``), and the theme's tab stops on scrolling code and outputs measured a
  section a task (:func:`patch_theme_tab_stops`, ``attention-book.js``).
- Labels the reference list as the citations read, "Vaswani et al., 2017", rather than
  alpha's "VSP+17" (``bibtex_default_style: authoryear``).
"""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

OWN_STATIC = Path(__file__).parent / "static"

# (source under node_modules, destination under _static/vendor). A source is a file, a folder
# (copied whole) or a glob pattern (its matches are copied into the destination folder, which
# then ends with "/"). The destinations' top folders are the extension's own: each build
# empties them first, so an older build's files do not linger in _build/html.
#
# MathJax: only what the pages load, as separate components rather than the combined
# tex-chtml.js. Found by building the book, opening every page in chromium and recording every
# request under _static/vendor/mathjax (tests/test_site_weight.py does this on each test run
# and fails on any failed request there, so a file MathJax starts to need shows up as a test
# failure, not as silently broken math). The pages ask for:
# - startup.js (mathjax_path in _config.yml), whose loader then asks for the components that
#   _config.yml's mathjax3_config.loader.load names, each a script run in a task of its own:
#   core.js, input/tex.js (TeX with the packages base, ams, newcommand, noundefined, require,
#   autoload and configmacros), output/chtml.js and its font data output/chtml/fonts/tex.js,
#   and a11y/assistive-mml.js (the hidden MathML that screen readers read). The combined
#   tex-chtml.js held the same and the menu code (ui/menu, 426 kB of its 1.16 MB) that the book
#   switches off, and ran as one script: 55-75 ms of CPU in one task on chapter 3's page at a
#   load of 16-19, where the components' longest is the startup's 47-52 (issue 23);
# - the CHTML woff-v2 fonts, which its stylesheet fetches per font a page's glyphs use (the
#   chapters fetch 10 of the 23; all 23 are kept, 350 kB, so a new symbol cannot 404);
# - nothing else: no input/tex/extensions/*, sre/* or ui/* request. Those come only from the
#   autoload extension (a macro outside the packages above, e.g. \boldsymbol or \cancel, loads
#   input/tex/extensions/<name>.js: add it to MATHJAX_EXTENSIONS) and from the MathJax menu
#   (explorer, speech, collapsible math, SVG output: a11y/*, sre/*, output/svg.js, ~5 MB),
#   which the book does not load (_config.yml: no ui/menu in mathjax3_config.loader.load).
MATHJAX_EXTENSIONS: list[str] = []  # TeX package names, e.g. ["boldsymbol"]

MATHJAX_COMPONENTS = ["startup.js", "core.js", "input/tex.js", "output/chtml.js",
                      "output/chtml/fonts/tex.js", "a11y/assistive-mml.js"]
VENDORED = [
    *[(f"mathjax/es5/{name}", f"mathjax/{name}") for name in MATHJAX_COMPONENTS],
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
#: woff2 first, which every current browser takes), the theme's gettext catalogues (read
#: at build time, never by a page) and fontawesome.js, which no page loads
#: (:func:`theme_templates`). 4.1 MB of the site.
UNFETCHED = ("*.map", "vendor/fontawesome/webfonts/*.ttf", "locales", "scripts/fontawesome.js*")


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


# MathJax sets itself up and typesets a page's formulas in tasks of their own, a batch of
# formulas a task, instead of all in the task that runs its last script: chapter 3's 381
# formulas blocked its page for 398-523 ms (quiet machine). ready(): MathJax's input and output
# are set up in a task after its scripts' (the set-up ran in the task of tex-chtml.js, 120-190
# ms of CPU with it at a load of 15-22); pageReady(): the first batch in the task after that.
# Batches of 12 formulas, not 24: the longest task of chapter 3's load, traced at a load of 8,
# 81-160 ms of CPU -> 57-109 (with fontawesome.js gone in both). startup.promise still resolves
# only when every formula is typeset (tests/test_pages.py waits on it), each with its
# assistive MathML. The elements are those MathJax's own processHtmlClass names (myst-parser
# sets it), the outermost only. Runs after Sphinx's `window.MathJax = {...}` and before the
# deferred startup.js.
MATHJAX_IN_BATCHES = """
(function () {
  const BATCH = 12;
  const task = () => new Promise((next) => setTimeout(next, 0));
  const mj = window.MathJax = window.MathJax || {};
  mj.startup = Object.assign(mj.startup || {}, {
    ready() { setTimeout(() => MathJax.startup.defaultReady(), 0); },
    async pageReady() {
      await task();
      const marked = MathJax.config.options.processHtmlClass.split("|").map((c) => "." + c).join(", ");
      const roots = [...document.querySelectorAll(marked)].filter((el) => !el.parentElement.closest(marked));
      for (let i = 0; i < roots.length; i += BATCH) {
        await MathJax.typesetPromise(roots.slice(i, i + BATCH));
        await task();  // let the page answer between batches
      }
    },
  });
})();
"""


#: The line of pydata-sphinx-theme's ``static/webpack-macros.html`` that loads fontawesome.js
#: on every page. The script redraws the theme's 13 icons (search, mode switch, download...)
#: as SVG, for icons a site adds of its own, which this book has none of; the theme's
#: stylesheet already draws the same icons from its icon font (vendor/fontawesome/webfonts).
#: It was 40-43 ms of CPU to run, at the load of 8-17 on the shared machine, then a full style
#: recalculation (42 ms) and a look at every change to the page (each MathJax batch).
FONTAWESOME_SCRIPT = re.compile(
    r"[ \t]*<script defer src=\"\{\{ pathto\('_static/scripts/fontawesome\.js', 1\) \}\}[^\n]*\n")


def theme_templates(app: Sphinx, config) -> None:
    """Load no fontawesome.js: the theme's ``static/webpack-macros.html`` without that script,
    in a templates folder of the build's that Sphinx searches before the theme's."""
    import pydata_sphinx_theme

    macros = (Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme"
              / "static" / "webpack-macros.html")
    text, found = FONTAWESOME_SCRIPT.subn("", macros.read_text(encoding="utf-8"))
    if found != 1:
        raise ExtensionError(f"{macros} no longer loads fontawesome.js as this extension "
                             "expects: see FONTAWESOME_SCRIPT in _ext/ab_theme_fixes.py")
    folder = Path(app.outdir).parent / "templates"
    (folder / "static").mkdir(parents=True, exist_ok=True)
    (folder / "static" / "webpack-macros.html").write_text(text, encoding="utf-8")
    config.templates_path.insert(0, str(folder))


#: The loop of pydata-sphinx-theme.js (minified) that gives a tab stop to every code block and
#: output that scrolls: it reads each one's scrollWidth, at load and 300 ms after any change to
#: the page, which lays out every section the reader has not reached (``content-visibility:
#: auto``, attention-book.css), all in one task (chapter 3: 85-121 ms of CPU at a load of 16).
#: Patched to leave the elements inside those sections to attention-book.js, which applies
#: the same rule a section a task (``LAZY`` there).
THEME_TAB_STOPS = ('].join(", ")).forEach(e=>{e.tabIndex=',
                   '].join(", ")).forEach(e=>{if(e.closest(".bd-article section section"))return;'
                   'e.tabIndex=')


def patch_theme_tab_stops(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    script = Path(app.outdir) / "_static" / "scripts" / "pydata-sphinx-theme.js"
    text = script.read_text(encoding="utf-8")
    if THEME_TAB_STOPS[1] in text:
        return
    if text.count(THEME_TAB_STOPS[0]) != 1:
        raise ExtensionError(f"{script} no longer sets its tab stops as this extension expects: "
                             "see THEME_TAB_STOPS in _ext/ab_theme_fixes.py")
    script.write_text(text.replace(*THEME_TAB_STOPS), encoding="utf-8")


def add_mathjax_batches(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """A page with math typesets it in batches (:data:`MATHJAX_IN_BATCHES`)."""
    if 'class="math' in context.get("body", ""):
        app.add_js_file(None, body=MATHJAX_IN_BATCHES, priority=501)


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
    # sphinxcontrib-bibtex looks up pybtex's plain-text backend for every citation it
    # resolves (211 in the book), and pybtex finds an installed plugin by reading every
    # package's entry points: 6 ms a look-up, 1.3 s of the build's CPU. Registered at run
    # time, the same class is found at once (issue 24).
    from pybtex.backends.plaintext import Backend as PlainText

    register_plugin("pybtex.backends", "plaintext", PlainText, force=True)


#: The book's root (``index.html``): a redirect to the first page, as sphinx-external-toc
#: writes it (which it does only when no index.html exists), but a whole page whose icon is
#: empty and inline. Its bare ``<meta>`` had none, so chromium asked for /favicon.ico (a
#: 404 and a console error) whenever the redirect was slow to follow: a flaky page test.
#: The book's icon file would be fetched, and that fetch aborted by the redirect.
ROOT_REDIRECT = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<link rel="icon" href="data:,">
<meta http-equiv="Refresh" content="0; url={first}">
</head><body><p><a href="{first}">{title}</a></p></body></html>
"""


def write_root_redirect(app: Sphinx, exception) -> None:
    """Write ``index.html`` (ROOT_REDIRECT) before sphinx-external-toc would."""
    if exception is not None or "html" not in app.builder.format or app.config.root_doc == "index":
        return
    first = app.config.root_doc + ".html"
    (Path(app.outdir) / "index.html").write_text(
        ROOT_REDIRECT.format(title=html.escape(app.config.html_title), first=first),
        encoding="utf8")


def setup(app: Sphinx) -> dict:
    author_year_labels()
    app.connect("config-inited", theme_templates)
    app.connect("builder-inited", add_own_static)
    app.add_css_file("attention-book.css")
    app.add_js_file("attention-book.js", defer="defer")
    app.connect("html-page-context", add_mathjax_batches)
    app.connect("builder-inited", check_vendor)
    app.connect("build-finished", copy_vendor)
    app.connect("build-finished", write_root_redirect, priority=400)  # before etoc's (500)
    app.connect("build-finished", drop_unfetched)
    app.connect("build-finished", patch_theme_tab_stops)
    app.connect("html-page-context", drop_duplicate_scripts, priority=1000)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
