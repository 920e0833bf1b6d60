"""The tests' one Node driver, ``tests/js/driver.mjs``, run from Python: a command of a module
of ``tests/js/`` (``"twin.state"``: ``tests/js/twin.mjs``'s ``state``) on JSON sent to its
stdin, its JSON answer read back. The browser's ES modules (web/src/) are imported there;
the JavaScript the tests run lives in those modules, linted by eslint, not in Python strings.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import shutil
import subprocess
from pathlib import Path

NODE = shutil.which("node")
DRIVER = Path(__file__).resolve().parent / "js" / "driver.mjs"
#: Functions the browser tests evaluate in a page, linted with the rest of tests/js/: those of
#: tests/test_pages.py (the built book's pages) in site.mjs, the others' in pages.mjs.
PAGE_MODULES = (DRIVER.with_name("pages.mjs"), DRIVER.with_name("site.mjs"))


def completed(command: str, *args, input=None, timeout: float = 600) -> subprocess.CompletedProcess:
    """The driver's run of ``command`` (``MODULE.COMMAND``) with ``args`` on ``input`` (sent
    as JSON; none: empty stdin), whatever its exit status. Its output stays bytes: json.loads
    reads them without decoding and newline translation of the megabytes."""
    if NODE is None:
        raise RuntimeError("node is not on PATH: the tests run the browser's modules in Node.js 20")
    return subprocess.run([NODE, str(DRIVER), command, *map(str, args)],
                          input=b"" if input is None else json.dumps(input).encode(),
                          capture_output=True, timeout=timeout)


def run(command: str, *args, input=None, timeout: float = 600):
    """The answer of ``command`` (``MODULE.COMMAND``) with ``args`` on ``input``, from JSON; an
    error with Node's stderr when it fails."""
    done = completed(command, *args, input=input, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"driver.mjs {command} failed ({done.returncode}):\n"
                           f"{done.stderr.decode(errors='replace')[-4000:]}")
    return json.loads(done.stdout)


def wire(value):
    """``to_js``'s output as JSON for a Node command: its buffers as base64."""
    if isinstance(value, dict):
        if "$array" in value:
            return {**value, "buffer": None, "b64": base64.b64encode(value["buffer"]).decode()}
        return {k: wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [wire(v) for v in value]
    return value


@functools.cache
def page_functions() -> dict[str, str]:
    """Each ``export const NAME = ...;`` of :data:`PAGE_MODULES`: its name -> its source (a
    function expression for ``page.evaluate``), up to the ``}`` that starts a line; a name
    exported by both modules is an error."""
    found = {}
    for module in PAGE_MODULES:
        text = module.read_text(encoding="utf-8")
        for name, source in re.findall(r"^export const (\w+) = (.*?^\});$", text, re.S | re.M):
            if name in found:
                raise ValueError(f"{name} is exported by more than one of {PAGE_MODULES}")
            found[name] = source
    return found


def page_function(name: str) -> str:
    """The source of the page function ``name`` (tests/js/pages.mjs or site.mjs), for
    ``page.evaluate``."""
    return page_functions()[name]
