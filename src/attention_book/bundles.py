"""The browser bundles ``make js`` builds (``web/build.mjs``) and their registry,
``web/labs.json``: where they are, and a clear error when they have not been built. They are
package data, not committed; the controls layer (a lab's element, the live widget) and the
data export (which data a lab reads) look them up here. Imports nothing of the package."""

from __future__ import annotations

import functools
import json
from pathlib import Path

__all__ = ["WEB_DIR", "built", "registry"]

#: The browser side: lab.js (the front end), one bundle a lab, widget.mjs and labs.json,
#: all built by ``make js`` (``web/build.mjs``) and not committed.
WEB_DIR = Path(__file__).resolve().parent / "web"


def built(name: str) -> Path:
    """``web/<name>``, a file ``make js`` builds; a clear error when it has not run."""
    path = WEB_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: the browser bundles are built, not "
                                "committed: run `make js` (or `make book`)")
    return path


@functools.cache
def registry() -> dict:
    """``web/labs.json``, which ``web/build.mjs`` writes from the lab modules and esbuild's
    metafile: per browser module (``labs/<name>.js``), its ``bundle``, the other labs'
    modules it ``imports``, the data scripts its page loads first (``pageData``) or on the
    reader's request (``requestData``), and ``scripts``, all its page loads, in order."""
    return json.loads(built("labs.json").read_text(encoding="utf-8"))
