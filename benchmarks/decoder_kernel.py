"""How fast chapter 10's SmolLM2 runs in a reader's Jupyter kernel (the book's numpy code).

Starts a fresh IPython kernel (jupyter_client, the kernel a notebook gets, with the
Makefile's one BLAS and one OpenMP thread), and in it times:

- ``load``: ``SmolLM.load()`` from the disk cache (``_build/cache/smollm``: the float32
  weights and the tokenizer), the import of the package included; and from the GGUF file
  (``cache=False``: the ``gguf`` reader and the book's dequantisation);
- ``prefill``: ``model.forward(ids)`` of a prompt of 16, 64, 256 and 512 tokens (weights of
  every layer returned, as the chapter asks), in ms and tokens/s;
- ``decode``: greedy generation of 32 tokens after a 16-token prompt with the key/value
  cache, in tokens/s (and ms per token);
- ``lab``: the scene's state function (``scenes.decoder.decoder_state``) for a control
  that does not generate (the step t, the head, the view), median ms once the generation
  is cached; and for a new prompt (generation included).

Each figure is the median of ``--repeats`` runs (load: of fresh kernels). Usage::

    .venv/bin/python benchmarks/decoder_kernel.py [--repeats 5] [--json]

Measured on 2 Dec 2026 on the 2-core VM, ``--repeats 5``, quiet (load 1.8 -> 1.4): load
0.69 s from the disk cache and 5.0 s from the GGUF file; prefill of 16/64/256/512 tokens
133/291/1125/2874 ms (120/220/228/178 tokens/s); decoding 19.1 tokens/s (52 ms a token); the
lab 5.2 ms median for a control that does not generate (205 ms the slowest), 0.87 s for a
new prompt of 12 tokens. At load 9-12, with other sessions' builds: 1.87 s, 14.3 s,
51-87 tokens/s, 9.8 tokens/s, 9.9 ms. Since e0dfe96 (the top 5 by a partition, the
controls' values by a dict) the control is 0.8 ms median (load 1.0; the rest unchanged).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

from jupyter_client.manager import start_new_kernel

ROOT = Path(__file__).resolve().parents[1]

SETUP = """
import os, time
t0 = time.perf_counter()
from attention_book.smollm import SmolLM
smol = SmolLM.load(cache={cache})
LOAD_S = time.perf_counter() - t0
"""

MEASURE = """
import json, statistics, time
import numpy as np
from attention_book.scenes import decoder as lab

def timed(f, n):
    out = []
    for _ in range(n):
        t = time.perf_counter(); f(); out.append(time.perf_counter() - t)
    return statistics.median(out)

rng = np.random.default_rng(0)
res = {{"load_s": LOAD_S, "prefill": {{}}}}
for s in (16, 64, 256, 512):
    ids = rng.integers(17, 49152, size=s)
    sec = timed(lambda: smol.model.forward(ids), {repeats})
    res["prefill"][s] = {{"ms": 1000 * sec, "tokens_per_s": s / sec}}
prompt = rng.integers(17, 49152, size=16)
sec = timed(lambda: smol.model.generate(prompt, 32), {repeats})
res["decode"] = {{"tokens_per_s": 32 / sec, "ms_per_token": 1000 * sec / 32}}
lab.decoder_state(n_new=12, t=1)  # the generation, computed once
moves = [dict(t=t) for t in (2, 5, 9, 12)] + [dict(head=h) for h in (0, 3, 8)] + [
    dict(view="model", t=6), dict(view="lens", t=6), dict(layer=29)]
each = []
for m in moves:
    t = time.perf_counter(); lab.decoder_state(n_new=12, **m); each.append(time.perf_counter() - t)
res["lab_ms"] = 1000 * statistics.median(each)
res["lab_max_ms"] = 1000 * max(each)
t = time.perf_counter(); lab.decoder_state(prompt="A new prompt, never seen before", n_new=12)
res["lab_new_prompt_s"] = time.perf_counter() - t
print(json.dumps(res))
"""


def run(code: str, kc) -> str:
    """Execute code in the kernel; return its stdout, raise on an error."""
    out = []

    def hook(msg):
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            raise RuntimeError("\n".join(msg["content"]["traceback"]))

    reply = kc.execute_interactive(code, output_hook=hook, timeout=900)
    if reply["content"]["status"] != "ok":
        raise RuntimeError(reply["content"])
    return "".join(out)


def kernel(cache: bool, measure: bool, repeats: int) -> dict:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(ROOT / "chapters"), env=env)
    try:
        run(SETUP.format(cache=cache), kc)
        if not measure:
            return {"load_s": float(run("print(LOAD_S)", kc))}
        return json.loads(run(MEASURE.format(repeats=repeats), kc).strip().splitlines()[-1])
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    before = os.getloadavg()[0]
    cold = statistics.median(kernel(False, False, 0)["load_s"] for _ in range(2))
    warm = [kernel(True, False, 0)["load_s"] for _ in range(max(1, args.repeats - 1))]
    full = kernel(True, True, args.repeats)
    full["load_s"] = statistics.median([*warm, full["load_s"]])
    full["load_from_file_s"] = cold
    full["load_average"] = [round(before, 1), round(os.getloadavg()[0], 1)]
    if args.json:
        print(json.dumps(full))
        return
    print(f"load: {full['load_s']:.2f} s from the disk cache, {cold:.2f} s from the GGUF file "
          f"(import included; median of fresh kernels)")
    for s, r in full["prefill"].items():
        print(f"prefill {int(s):4d} tokens: {r['ms']:8.0f} ms  {r['tokens_per_s']:6.0f} tokens/s")
    d = full["decode"]
    print(f"decode (greedy, cached): {d['tokens_per_s']:.1f} tokens/s, {d['ms_per_token']:.0f} ms a token")
    print(f"lab, a control that does not generate: median {full['lab_ms']:.1f} ms "
          f"(max {full['lab_max_ms']:.1f}); a new prompt of 12 tokens: {full['lab_new_prompt_s']:.2f} s")
    print(f"load average {full['load_average'][0]} -> {full['load_average'][1]}")


if __name__ == "__main__":
    sys.exit(main())
