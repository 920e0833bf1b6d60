"""The browser's llama engine (``src/attention_book/web/src/llama/``) run from Python: the
tests' and benchmarks' harness.

- :func:`build_engine` writes the engine's generated file (``wasm-bytes.js``, the kernels
  compiled by AssemblyScript) with its ``build.mjs``, which compiles only when the file's
  stamp is not kernels.ts's (``make js`` does the same).
- :func:`run_node` runs the tests' Node driver's ``llama.run`` (``tests/js/llama.mjs``) on a
  GGUF file and a list of operations, and returns their results with the arrays read back
  as numpy; :func:`run_files` on several files in one run of Node.
"""
from __future__ import annotations

import contextlib
import functools
import subprocess
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

import node_driver

ROOT = Path(__file__).resolve().parents[1]
LLAMA = ROOT / "src" / "attention_book" / "web" / "src" / "llama"
NODE = node_driver.NODE


@functools.cache
def build_engine() -> None:
    """wasm-bytes.js current (the engine's build.mjs; once a process)."""
    subprocess.run([NODE, str(LLAMA / "build.mjs")], cwd=ROOT, check=True, capture_output=True,
                   timeout=300)


def _arrays(value, data: bytes):
    """The driver's {offset, length, dtype} entries replaced by numpy arrays."""
    if isinstance(value, dict):
        if set(value) == {"offset", "length", "dtype"}:
            return np.frombuffer(data, dtype=value["dtype"], count=value["length"],
                                 offset=value["offset"]).copy()
        return {k: _arrays(v, data) for k, v in value.items()}
    if isinstance(value, list):
        return [_arrays(v, data) for v in value]
    return value


def run_files(requests: list[dict], *, timeout: float = 600) -> list[list]:
    """The results of each request's ops (``{gguf, ops, backend?, maxContext?}``: the ops of
    tests/js/llama.mjs on the model in file ``gguf``), in one run of Node."""
    build_engine()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.bin"
        sent = [{"backend": "auto", "maxContext": None, **r, "gguf": str(r["gguf"])} for r in requests]
        answer = node_driver.run("llama.run", out, input=sent, timeout=timeout)
        return _arrays(answer, out.read_bytes())


def run_node(gguf: Path, ops: list[dict], *, backend: str = "auto", max_context: int | None = None,
             timeout: float = 600) -> list:
    """The results of ``ops`` (tests/js/llama.mjs's) on the model in ``gguf``, in order."""
    [results] = run_files([{"gguf": gguf, "backend": backend, "maxContext": max_context, "ops": ops}],
                          timeout=timeout)
    return results


#: A page that loads the harness as a classic script (module scripts do not run from file://)
#: and offers a file picker, as the lab will for a reader's own GGUF.
_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>llama engine</title><link rel="icon" href="data:,">
<script>
globalThis.longTasks = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) longTasks.push([e.startTime, e.duration]); })
  .observe({type: "longtask", buffered: true});
</script>
<script src="harness.js"></script></head>
<body><label>GGUF file <input type="file" id="file" accept=".gguf"></label></body></html>
"""


def write_page(folder: Path) -> Path:
    """index.html and harness.js (engine.js + the worker, bundled by esbuild as web/build.mjs
    bundles them) in ``folder``."""
    build_engine()
    node_driver.run("llama.harness", folder / "harness.js", timeout=120)
    (folder / "index.html").write_text(_PAGE)
    return folder / "index.html"


#: In the page: load a GGUF, encode, generate, ask for the logit lens (tests/js/pages.mjs's
#: llamaRun, which says what it returns).
RUN_IN_PAGE = node_driver.page_function("llamaRun")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(folder: Path):
    """``folder`` served on a free port of 127.0.0.1, as the site serves the model file: its
    base URL while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
