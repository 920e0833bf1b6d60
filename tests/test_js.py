"""The JavaScript tests that need no browser and no Python state: ``tests/js/*.test.mjs``
run by Node's own test runner (``node --test``), in one Node process: the notebook widget's
protocol (KernelModel, decode's ``{$same}`` arrays) with a fake anywidget model. And the
functions the browser tests evaluate in pages (``tests/js/pages.mjs`` and ``site.mjs``): what
Python reads of those files is each function whole."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

JS_TESTS = Path(__file__).parent / "js"


def test_the_node_tests_pass():
    node = shutil.which("node")
    assert node, "the browser code is tested in Node.js 20: install it"
    files = sorted(JS_TESTS.glob("*.test.mjs"))
    assert files, JS_TESTS
    out = subprocess.run([node, "--test", *map(str, files)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "# fail 0" in out.stdout and "# pass 0" not in out.stdout, out.stdout[-2000:]


def test_the_page_functions_python_reads_are_whole():
    """node_driver.page_functions (a regular expression over pages.mjs and site.mjs) gives
    every export, each exactly as V8 prints the function: none cut short or run into the
    next."""
    from node_driver import page_functions, run

    read = page_functions()
    assert len(read) >= 7 and read == run("bundle.pages")
