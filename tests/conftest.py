"""Shared fixtures: the repository's paths, the book built once per test session, the built
site served on 127.0.0.1, and Debian's chromium with every request off the machine recorded."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import gc
import os
import socket
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
LOCAL_HOSTS = {"127.0.0.1"}
# A plain `pytest` writes bytecode as `make` does (the Makefile unexports
# PYTHONDONTWRITEBYTECODE): where that variable is set, every worker rewrote the asserts of
# all 55 test modules and compiled them again at each start (2.5 s of CPU a worker).
sys.dont_write_bytecode = False
# One BLAS thread and one OpenMP thread in each worker, as `make` sets them (the Makefile
# says why): a plain `pytest` (the edit loop) ran two workers of two threads each on the two
# cores. Here, before any test module imports numpy or torch. Default tier on a 2-core
# machine: 39.5 -> 36-37 s, 66 -> 60 s of CPU.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Node reads and parses the certificates NODE_EXTRA_CA_CERTS names at every start (the CI
# machines set it for npm: 150 certificates, 0.10 against 0.03 s of CPU for `node -e 0`).
# The tests start Node about 140 times in the edit loop alone (Node parity, the labs' texts,
# playwright's driver), and JupyterLab's kernels start it too, always offline: no TLS.
os.environ.pop("NODE_EXTRA_CA_CERTS", None)


#: The tests that take longest, with their seconds on a 2-core machine (rounded, from
#: `--durations`): a test id starting with a key. Nothing else decides their order. Leave
#: out a test that shares a costly module fixture with others (test_pretrained's
#: transformers model): moved to the other worker, it would build the fixture twice.
LONG_TESTS = {
    # 1-3-4-5-9 (with Notebook 7's chapters 4 and 5) and 2-6-7-8: 155 s and 165 s on a quiet
    # machine for the split before (1-3-4-9, 2-5-6-7-8), about equal since (409 s, 408 s at
    # load 9-32); one JupyterLab page a run since: 111-135 and 134-152 CPU-s (the whole tree)
    # (in fresh clones' runs since chapter 10 joined, load 2-6: 2-6-7-8-10 197 s and 176 s,
    # 1-3-4-5-9 151 s and 139 s)
    "tests/test_jupyterlab.py::test_run_all_and_every_control_without_page_errors[2": 185,
    "tests/test_jupyterlab.py::test_run_all_and_every_control_without_page_errors[1": 145,
    # one test a page, a load a width, each checked in light then dark in the same tab, then
    # its labs' design checks: a numbered chapter's page 22-41 s in fresh clones' runs on 2
    # workers (87206b2), the others 5-13
    "tests/test_pages.py::test_every_page_loads_reads_and_passes_axe[chapters/0": 35,
    "tests/test_pages.py::test_every_page_loads_reads_and_passes_axe[chapters/1": 35,
    "tests/test_pages.py::test_every_page_loads_reads_and_passes_axe": 6,
    # the whole rule set and axe_plan's in four visits of chapter 1 (21 s of chromium's CPU)
    "tests/test_pages.py::test_the_axe_plan_finds_what_the_whole_set_finds_in_every_setting[c": 15,
    "tests/test_web_block.py::test_block_parity_on_many_held_out_values": 20,  # CI: 19.0 s
    # one test: over http every value, as file:// and each lab's standalone page three a
    # control (was 13 tests: the standalone pages' and chapter 2's own visits); 64-65 s,
    # 73-75 in fresh clones' runs
    "tests/test_web_labs.py::test_built_book_computes_every_lab_in_the_browser": 73,
    "tests/test_web_lab.py::test_node_parity_on_many_held_out_values": 12,
    "tests/test_web_states.py::test_parity_on_many_held_out_values": 12,
    "tests/test_build_cache.py::test_the_cache_keeps_unchanged": 15,
    "tests/test_pages.py::test_one_span_a_code_style_finds_what_every_span_finds": 20,
    "tests/test_web_lab.py::test_standalone_lab_in_chromium": 12,
    "tests/test_web_minilm.py::test_forward_float32_parity": 8,
    "tests/test_build_cache.py::test_a_cell_error": 6,
}


def _seconds(item) -> float:
    return max((s for key, s in LONG_TESTS.items() if item.nodeid.startswith(key)), default=0)


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected: the slices are of what runs
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist, share the long tests out evenly, at the start of each worker's queue.

    worksteal sends worker i the i-th contiguous slice of the collection (len // workers
    tests each), and a worker that runs out takes tests from the end of another's queue. In
    collection order the long tests sat together, so one worker could be left running a 90 s
    test alone at the end. Here each slice starts with its share of the long tests (longest
    first, each given to the worker with the fewest seconds so far), followed by a stretch
    of the others in their own order, so that a module's tests stay on one worker (its
    module fixtures built once) and what is stolen at the end is short. (Chapter 9's gallery,
    which test_pretrained_lab and test_web_pretrained both read, is a disk cache: a second
    worker loads it, or waits for the first to save it.)
    """
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    if workers < 2:
        return
    long = sorted((item for item in items if _seconds(item)), key=_seconds, reverse=True)
    rest = [item for item in items if not _seconds(item)]
    shares = [[] for _ in range(workers)]
    for item in long:  # each to the worker with the fewest seconds so far
        min(shares, key=lambda share: sum(map(_seconds, share))).append(item)
    ordered, left = [], len(items)
    for i, mine in enumerate(shares):
        size = left // (workers - i)  # what worksteal sends this worker
        take = max(size - len(mine), 0)
        ordered += mine + rest[:take]
        rest, left = rest[take:], left - size
    items[:] = ordered + rest


def pytest_collection_finish(session):
    """What collection imported (torch, matplotlib, hypothesis, the book) lives until the end:
    take it out of the garbage collector's generations, so that the many full collections
    the figure-heavy tests trigger do not walk it again each time."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _close_new_widgets():
    """Close the ipywidgets a test created, once it is over.

    ipywidgets keeps every widget in a registry until it is closed, so each test's labs, and
    their figures, stayed alive for the whole session: 2200 widgets and 0.65 GB after three
    lab files, which the garbage collector walked again and again (5.8 s of their 32 s of
    CPU; 3.2 s with this and the freeze above, and 0.2 GB). Widgets that existed before the
    test (module fixtures) stay open. ipywidgets is not imported here: a test that never
    imported it has nothing to close.
    """
    registry = _widget_registry()
    before = set(registry) if registry is not None else set()
    yield
    registry = _widget_registry()
    if registry is not None:
        for key in [key for key in registry if key not in before]:
            registry[key].close()


def _widget_registry():
    module = sys.modules.get("ipywidgets.widgets.widget")
    return getattr(module, "_instances", None)


@pytest.fixture(scope="module")
def one_torch_thread():
    """Torch on one thread for a module of tiny tensors: one thread is faster than several
    waiting on each other (half the CPU time on a busy machine). Restored afterwards."""
    import torch  # here, so that modules without torch do not pay for importing it

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture
def fastpath():
    """A setter for torch's MHA/encoder fast path; the old setting is restored after."""
    import torch

    old = torch.backends.mha.get_fastpath_enabled()
    yield torch.backends.mha.set_fastpath_enabled
    torch.backends.mha.set_fastpath_enabled(old)


@pytest.fixture(scope="session")
def reverse():
    """Chapter 8's reversal model (trained once: train_tiny is memoised)."""
    from attention_book import training  # here: torch only for the tests that train

    return training.train_tiny("reverse")


@pytest.fixture(scope="session")
def induction():
    """Chapter 8's induction model (trained once)."""
    from attention_book import training

    return training.train_tiny("induction")


#: The tiny llama model's induction heads, as chapter 10's lab is told in its tests (the
#: survey is of SmolLM2: the tiny random model has none to find).
TINY_INDUCTION = ((1, 2),)


@pytest.fixture(scope="session")
def tiny_decoder(tmp_path_factory):
    """Chapter 10's lab on the tests' tiny GGUF (write_tiny_gguf, with room for the lab's
    128-token prompts): the file, its numpy model, and the lab's gallery file of it
    (web_export.export_decoder_gallery), in one folder."""
    from attention_book import smollm
    from attention_book.scenes import decoder
    from attention_book.web_export import export_decoder_gallery

    folder = tmp_path_factory.mktemp("decoder")
    path = smollm.write_tiny_gguf(folder / "tiny.gguf", seed=2, context=256)
    model = smollm.SmolLM.load(path, cache=False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(decoder, "induction_heads", lambda model=None: TINY_INDUCTION)
        export_decoder_gallery(folder / "decoder-gallery.js", model=model)
    return path, model, folder / "decoder-gallery.js"


@pytest.fixture()
def decoder_scene(tiny_decoder, monkeypatch):
    """Chapter 10's scene (scenes.decoder) on the tiny model."""
    from attention_book.scenes import decoder

    monkeypatch.setattr(decoder, "_model", lambda: tiny_decoder[1])
    monkeypatch.setattr(decoder, "induction_heads", lambda model=None: TINY_INDUCTION)
    decoder.decoder_generation.cache_clear()
    yield decoder
    decoder.decoder_generation.cache_clear()


def run_folder(tmp_path_factory) -> Path:
    """The temporary folder of this run that every pytest-xdist worker shares (a worker's
    own basetemp lies in it), or the basetemp itself without workers."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def locked(path: Path):
    """Held by one process at a time (an exclusive flock on ``path``): what the first
    worker makes inside, the others find made."""
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield


@pytest.fixture(scope="session")
def built_book(tmp_path_factory) -> Path:
    """The strictly built book (-W -n --keep-going): its html dir, its log beside it
    (``_build/build.log``, which tests/test_book.py reads).

    ``ATTENTION_BOOK_BUILT=<dir>`` uses the build in ``<dir>/_build``: ``make test`` passes
    the repository, whose ``make book`` it has just run (which saves its output as
    ``_build/build.log``). Without it (pytest run by hand) the book is built here into a
    fresh folder, executing every chapter from scratch (a fresh folder has no execution
    cache); either way the build proves the chapters run in the static book. Under
    pytest-xdist the workers share that one build: the first to ask builds it, under a
    lock in the run's common temporary folder, and the others wait for it.
    """
    if os.environ.get("ATTENTION_BOOK_BUILT"):
        html = Path(os.environ["ATTENTION_BOOK_BUILT"]) / "_build" / "html"
        assert (html / "index.html").exists(), f"no built book in {html}: run `make book`"
        assert (html.parent / "build.log").exists(), f"no {html.parent}/build.log: run `make book`"
        return html
    out = run_folder(tmp_path_factory) / "book"
    out.mkdir(exist_ok=True)
    with locked(out / ".lock"):
        if not (out / "_build" / "done").exists():
            _build_book(out)
            (out / "_build" / "done").write_text("")
    if not (out / "_build" / "html" / "index.html").exists():
        pytest.fail(f"the book was not built: see {out / '_build' / 'build.log'}")
    return out / "_build" / "html"


def _build_book(out: Path) -> None:
    """Build the book strictly into ``out``; its output goes to ``out/_build/build.log``."""
    jb = Path(sys.executable).with_name("jupyter-book")
    result = subprocess.run(
        [str(jb), "build", str(ROOT), "-W", "-n", "--keep-going", "--path-output", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    log = result.stdout + result.stderr
    (out / "_build").mkdir(exist_ok=True)  # absent when the build failed to start
    (out / "_build" / "build.log").write_text(log)
    if result.returncode != 0:
        pytest.fail(f"jupyter-book build failed (exit {result.returncode}):\n{log[-6000:]}")


@pytest.fixture(scope="session")
def web_data(tmp_path_factory) -> Path:
    """The folder with the browser labs' data scripts (web_export.DATA: MiniLM's int8
    weights, chapter 9's preset gallery, chapter 8's checkpoints), made once a run.

    Under ``make test`` (``ATTENTION_BOOK_BUILT``) the ones the build wrote into
    ``_build/web-data`` (``web_export.write_all``): :func:`write_data` writes the same bytes
    (compared file by file), and ``make book`` empties ``_build`` when the package changes,
    so they are current. Otherwise written here, once per worker, instead of once per module
    that needs them.
    """
    from attention_book.web_export import DATA, write_all

    if os.environ.get("ATTENTION_BOOK_BUILT"):
        folder = Path(os.environ["ATTENTION_BOOK_BUILT"]) / "_build" / "web-data"
        missing = [n for names, _ in DATA.values() for n in names if not (folder / n).exists()]
        assert not missing, f"{folder} lacks {missing}: run `make book`"
        return folder
    folder = tmp_path_factory.mktemp("web-data")
    write_all(folder)
    return folder


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def site(built_book):
    """The built site served on a free port of 127.0.0.1, for the whole run."""
    handler = functools.partial(_QuietHandler, directory=str(built_book))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium, launched once a run (once a worker under pytest-xdist)."""
    assert Path(CHROMIUM).exists(), f"no browser at {CHROMIUM}: run `make test` (it installs chromium)"
    # imported here, so that the fast loop (-m "not slow") collects without playwright
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


@functools.cache
def dead_proxy() -> str:
    """A proxy that refuses every connection: a port of 127.0.0.1 bound for the whole run
    and never listened on, so that no other program can answer there."""
    port = socket.socket()
    port.bind(("127.0.0.1", 0))
    dead_proxy.port = port  # held open until the run ends
    return f"http://127.0.0.1:{port.getsockname()[1]}"


def offline_context(browser, outside: list[str], **options):
    """A new context of ``browser`` (``options``: playwright's) that reaches LOCAL_HOSTS only:
    its proxy is :func:`dead_proxy`, bypassed for LOCAL_HOSTS alone (``<-loopback>`` drops
    chromium's own bypass of localhost and the rest of 127/8), so that a request to any other
    host fails at the proxy, unanswered (no name is looked up either: a proxy does that).
    Each such request is appended to ``outside``. data:, blob: and file: URLs use no proxy."""
    bypass = ",".join(["<-loopback>", *sorted(LOCAL_HOSTS)])
    context = browser.new_context(proxy={"server": dead_proxy(), "bypass": bypass}, **options)

    def record(request):
        url = urlparse(request.url)
        if url.scheme not in ("data", "blob", "file") and url.hostname not in LOCAL_HOSTS:
            outside.append(request.url)

    context.on("request", record)
    return context


class PageWatch:
    """A page with its console errors, its requests and its failed requests recorded;
    ``width`` and ``scale`` (device pixels per CSS pixel) set the screen, ``init_script``
    runs before each page's own scripts.

    Offline: its context is :func:`offline_context`'s, each request to a host past
    LOCAL_HOSTS recorded in ``outside`` (and, failed at the dead proxy, in ``failed``).
    Until stop 35 every request went through playwright (``context.route``): a round trip
    from the browser to playwright's driver and to this process and back, for each file of
    each page, and chromium's cache was off (interception turns it off).
    """

    def __init__(self, browser, *, width: int = 1280, scale: float = 1,
                 init_script: str | None = None):
        self.outside: list[str] = []
        self.context = offline_context(browser, self.outside, device_scale_factor=scale,
                                       viewport={"width": width, "height": 900})
        if init_script:
            self.context.add_init_script(init_script)
        self.page = self.context.new_page()
        self.console_errors: list[str] = []
        self.console_warnings: list[str] = []  # (MathJax warned on every page: QA Q23)
        self.failed: list[str] = []
        self.requested: list[str] = []
        self.in_flight: set = set()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda err: self.console_errors.append(f"pageerror: {err}"))
        self.page.on("request", self._request)
        self.page.on("requestfinished", lambda r: self.in_flight.discard(r))
        self.page.on("requestfailed", self._failed)
        self.page.on("response", lambda r: r.status >= 400 and self.failed.append(f"{r.url} {r.status}"))

    def _console(self, msg):
        if msg.type == "error":  # with where it came from: a 404's message names no file
            where = (msg.location or {}).get("url")
            self.console_errors.append(f"{msg.text} ({where})" if where else msg.text)
        elif msg.type == "warning":
            self.console_warnings.append(msg.text)

    def _request(self, request):
        self.requested.append(request.url)
        self.in_flight.add(request)

    def _failed(self, request):
        self.in_flight.discard(request)
        self.failed.append(f"{request.url} ({request.failure})")

    def open(self, url, idle: bool = True):
        """The page at ``url`` once loaded and, with ``idle``, once the network has been
        quiet for 500 ms (playwright's "networkidle"). Without it, call :meth:`settle`
        before reading the requests: the checks that follow the load then overlap the
        quiet time instead of waiting it out."""
        self.page.goto(url, wait_until="load")
        if idle:
            self.page.wait_for_load_state("networkidle")
        return self.page

    def settle(self, timeout_ms: float = 15_000) -> None:
        """Wait until no request of the page is in flight: the requests, failures and
        requests outside 127.0.0.1 recorded so far are then complete. One still open
        after ``timeout_ms`` is counted as failed."""
        waited = 0
        while self.in_flight and waited < timeout_ms:
            self.page.wait_for_timeout(20)
            waited += 20
        self.failed += [f"{r.url} (no answer in {timeout_ms / 1000:.0f} s)" for r in self.in_flight]

    def close(self):
        self.context.close()


def built_pages(built_book) -> list[str]:
    """Every page of the built site (not the theme's files), relative to its root."""
    return sorted(str(p.relative_to(built_book)) for p in built_book.rglob("*.html")
                  if "_static" not in p.parts and "reports" not in p.parts)
