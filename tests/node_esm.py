"""Node.js runs the browser's ES modules (web/src/) for the tests by ``import()``, not by
``require`` (Node 20 requires an ES module only with ``--experimental-require-module``, and
warns). A test's inline script runs as an ES module (top-level ``await``) with the prelude
:data:`PRELUDE`: ``load(path)`` is a module's default export (or its namespace, when it has
none), ``require`` stays for Node's own modules and the classic scripts (data files such
as ``pretrained-gallery.js``)."""

from __future__ import annotations

import base64

PRELUDE = ('import {createRequire} from "node:module"; import {pathToFileURL} from "node:url";'
           ' const require = createRequire(process.cwd() + "/");'
           " const load = async (file) => {"
           " const m = await import(pathToFileURL(file).href); return m.default ?? m; };\n")


def esm(script: str) -> list[str]:
    """Node's arguments that run ``script`` as an ES module with :data:`PRELUDE` (the
    script's own arguments follow: ``process.argv[1]`` is the first)."""
    return ["--input-type=module", "-e", PRELUDE + script]


def wire(value):
    """``to_js``'s output as JSON for a Node script: its buffers as base64."""
    if isinstance(value, dict):
        if "$array" in value:
            return {**value, "buffer": None, "b64": base64.b64encode(value["buffer"]).decode()}
        return {k: wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [wire(v) for v in value]
    return value
