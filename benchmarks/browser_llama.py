"""SmolLM2-135M-Instruct (Q4_1) in headless chromium, in the llama engine's Worker (issue 42):
what a reader of chapter 10's page waits for.

For each run, a fresh page (served on 127.0.0.1, as the built site serves the model file):
  fetch    the 98.4 MB GGUF over local http, fetched by the worker (with progress)
  load     from the bytes in hand to the model ready, as the page waits for it: GGUF
           parse, the blocks copied into WebAssembly memory, tokenizer built (goal < 3 s)
  prefill  a 32-token prompt through the model, every layer's maps kept (goal < 1 s),
           timed in the worker
  tokens/s 1000 / the median ms of a generated token (greedy, 64 tokens; goal >= 10)
  long     the page's longest main-thread task while all this ran (goal <= 50 ms)
  stop     with --stop-at N: the page stops the generation when token N arrives (as the lab's
           stop button does); the tokens that still arrive and the ms until the worker's
           "done" (the reader's wait after a click)
  RSS      the peak resident memory of the browser's processes, less before the page
The median of --runs runs (default 5), each number's spread, and the load average before and
after (2 shared cores: compare runs made under the same load).

  .venv/bin/python benchmarks/browser_llama.py [--runs 5] [--new 64] [--backend wasm|js]
      [--stop-at N]

--node measures the same engine in Node.js as CPU time (user + system, which a busy shared
machine inflates far less than wall time): WebAssembly against JavaScript for the products
of SmolLM2's shapes (G multiply-adds a CPU-second), a 32-token prefill and a generated token.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from llama_js import RUN_IN_PAGE, run_node, serve, write_page  # noqa: E402 - after the path

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
PROMPT = ("The history of the printing press begins in the fifteenth century, when Johannes "
          "Gutenberg combined movable metal type, oil-based ink and a wooden screw press into a "
          "system that could print books quickly and cheaply.")


def _browser_rss() -> int:
    """Bytes resident in this process's chromium descendants."""
    total = 0
    for p in psutil.Process().children(recursive=True):
        try:
            if "chrom" in p.name():
                total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


class _PeakRss:
    """The peak of _browser_rss() sampled every 20 ms while in the with block."""

    def __enter__(self):
        self.base, self.peak, self.done = _browser_rss(), 0, False
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()
        return self

    def _poll(self):
        while not self.done:
            self.peak = max(self.peak, _browser_rss())
            time.sleep(0.02)

    def __exit__(self, *exc):
        self.done = True
        self.thread.join()


def _long_tasks(out: dict) -> str:
    """The page's tasks over 50 ms, each with the phase it started in."""
    ph = out["phases"]
    def phase(t):
        return ("before" if t < ph["start"] else "fetch" if t < ph.get("fetched", 0) else
                "load" if t < ph.get("loaded", 1e18) else "generate" if t < ph.get("generated", 1e18) else "after")
    tasks = [f"{d:.0f} ms in {phase(t)}" for t, d in out["longTasks"] if d > 50]
    return f" (long tasks: {', '.join(tasks)})" if tasks else ""


def node_figures(gguf: Path, runs: int, new: int) -> None:
    """Node's CPU time: the kernels by backend, then the model's prefill and steps."""
    import numpy as np

    print("| what | backend | CPU ms, median | G multiply-adds / CPU-s |\n|---|---|---:|---:|")
    shapes = [("blk.0.ffn_gate.weight", 1536, 576, 1), ("blk.0.ffn_gate.weight", 1536, 576, 32),
              ("blk.0.ffn_down.weight", 576, 1536, 1), ("token_embd.weight", 49152, 576, 1)]
    with tempfile.TemporaryDirectory() as tmp:
        for backend in ("wasm", "js"):
            ops = []
            for name, _rows, cols, T in shapes:
                x = Path(tmp) / f"x{cols}-{T}.f32"
                np.random.default_rng(0).standard_normal((T, cols)).astype(np.float32).tofile(x)
                ops.append({"op": "matmul", "tensor": name, "xFile": str(x), "T": T, "backend": backend,
                            "repeats": runs * (3 if backend == "js" else 8) + 2})
            for (name, rows, cols, T), r in zip(shapes, run_node(gguf, ops)):
                cpu = statistics.median(r["cpuMs"][2:])  # after the compilers' warm-up
                print(f"| {name} ({r['type']}) x ({T}, {cols}) | {backend} | {cpu:.2f} | "
                      f"{rows * cols * T / cpu / 1e6:.2f} |")
    ids = list(range(1000, 1032))
    for backend in ("wasm", "js"):
        n = new if backend == "wasm" else max(4, new // 8)
        load, fwd = run_node(gguf, [{"op": "load"},
                                    {"op": "forward", "ids": ids, "repeats": runs, "logits": "last",
                                     "more": list(range(2000, 2000 + n))}],
                             backend=backend, max_context=512)
        c = load["config"]
        # multiply-adds of the products a token: the blocks', and the output layer's
        block = c["nLayers"] * c["d"] * (2 * c["nHeads"] * c["dHead"] + 2 * c["nKvHeads"] * c["dHead"] + 3 * c["ffn"])
        out = c["d"] * c["vocab"]
        steps = statistics.median(s["cpuMs"] for s in fwd["steps"])
        prefill = statistics.median(fwd["cpuMs"])
        print(f"| load (parse, copy, tokenizer) | {backend} | {load['cpuMs']:.0f} | |")
        print(f"| prefill of 32 tokens, maps kept | {backend} | {prefill:.0f} | "
              f"{(32 * block + out) / prefill / 1e6:.2f} |")
        print(f"| a generated token ({n} steps) | {backend} | {steps:.1f} | {(block + out) / steps / 1e6:.2f} "
              f"({1000 / steps:.1f} tokens per CPU-s) |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--new", type=int, default=64, help="tokens generated a run")
    parser.add_argument("--backend", default="wasm", choices=["wasm", "js", "auto"])
    parser.add_argument("--gguf", default=None, help="another llama GGUF (default: SmolLM2's)")
    parser.add_argument("--node", action="store_true", help="CPU time in Node.js instead")
    parser.add_argument("--stop-at", type=int, default=None, metavar="N",
                        help="stop each generation when its token N arrives, and time the stop")
    args = parser.parse_args()
    from attention_book.smollm import gguf_path

    gguf = Path(args.gguf or gguf_path())
    load_before = os.getloadavg()
    if args.node:
        node_figures(gguf, args.runs, args.new)
        print(f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f} "
              f"(1 min; {os.cpu_count()} cores)")
        return
    from playwright.sync_api import sync_playwright

    rows = []
    ids = run_node(gguf, [{"op": "encode", "texts": [PROMPT]}])[0]["ids"][0][:32]  # the tokenizer alone
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        folder = Path(tmp)
        write_page(folder)
        (folder / "model.gguf").symlink_to(gguf)
        with serve(folder) as base:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            for run in range(args.runs):
                page = browser.new_page()
                page.goto(f"{base}/index.html")
                with _PeakRss() as rss:
                    out = page.evaluate(RUN_IN_PAGE, {
                        "url": f"{base}/model.gguf", "ids": ids, "prompt": None, "keep": False,
                        "stopAt": args.stop_at,
                        "lensAt": None,
                        "options": {"load": {"backend": args.backend, "maxContext": 512},
                                    "generate": {"maxNew": args.new, "stop": None}}})
                page.close()
                if "error" in out:
                    raise SystemExit(f"run {run}: {out['error']}")
                steps = [s["ms"] for s in out["steps"] if s["kind"] == "token"]
                rows.append({
                    "fetch": out["fetchMs"], "load": out["loadMs"],
                    "prefill": next(s["ms"] for s in out["steps"] if s["kind"] == "prompt"),
                    "token": statistics.median(steps), "tps": 1000 / statistics.median(steps),
                    "long": max((d for _, d in out["longTasks"]), default=0.0),
                    "rss": (rss.peak - rss.base) / 2**20,
                })
                if args.stop_at is not None:
                    tokens = [s for s in out["steps"] if s["kind"] == "token"]
                    rows[-1]["after_stop"] = len(tokens) - args.stop_at
                    rows[-1]["stop_ms"] = out["phases"]["generated"] - out["phases"]["stopped"]
                print(f"run {run + 1}: " + ", ".join(f"{k} {v:.1f}" for k, v in rows[-1].items())
                      + _long_tasks(out), flush=True)
            browser.close()
    info = out["info"]
    print(f"\n{gguf.name}: backend {info['backend']}, {info['types']}, WebAssembly memory "
          f"{info['bytes']['memory'] / 2**20:.0f} MiB (weights {info['bytes']['weights'] / 2**20:.0f}, "
          f"KV cache of {info['maxContext']} positions {info['bytes']['cache'] / 2**20:.0f}); "
          f"prompt {len(ids)} tokens, {args.new} generated, {args.runs} runs")
    print("| measure | median | min | max | goal |\n|---|---:|---:|---:|---|")
    goals = {"fetch": "", "load": "< 3000 ms", "prefill": "< 1000 ms", "token": "",
             "tps": ">= 10", "long": "<= 50 ms", "rss": "stated", "after_stop": "",
             "stop_ms": ""}
    units = {"fetch": "ms", "load": "ms", "prefill": "ms (32 tokens)", "token": "ms",
             "tps": "tokens/s", "long": "ms (longest task)", "rss": "MiB (peak RSS added)",
             "after_stop": "tokens written after the stop", "stop_ms": "ms from stop to done"}
    for key in rows[0]:
        values = [r[key] for r in rows]
        print(f"| {key} {units[key]} | {statistics.median(values):.1f} | {min(values):.1f} | "
              f"{max(values):.1f} | {goals[key]} |")
    print(f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f} "
          f"(1 min; {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
