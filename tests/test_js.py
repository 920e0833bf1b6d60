"""The JavaScript tests that need no browser and no Python state: ``tests/js/*.test.mjs``
run by Node's own test runner (``node --test``), in one Node process: the notebook widget's
protocol (KernelModel, decode's ``{$same}`` arrays) with a fake anywidget model."""

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
