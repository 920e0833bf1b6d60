"""A reader's own GGUF: SmolLM2-135M's weights written again as other tensor types, run by the
browser's llama engine (in Node.js) against the book's numpy model of each new file.

For each type given (default Q4_0 Q8_0 F16 F32), the real file's matrices are dequantised
and quantised again to that type (gguf.quants; the norms stay F32, the metadata and the
tokenizer as they were), written to a temporary GGUF, and then:
  - parity: logits and attention of a prompt against ``SmolLM.load(file)``, and 16 greedy
    tokens against its ``generate``;
  - speed: the CPU time of loading, of a 32-token prefill and of a generated token.

  .venv/bin/python benchmarks/browser_llama_types.py [Q4_0 Q8_0 F16 F32]
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from llama_js import run_node  # noqa: E402 - after the path


def requantize(src: Path, dst: Path, kind: str) -> Path:
    """``src``'s model with every matrix as ``kind`` (norms F32), metadata copied."""
    import gguf

    reader = gguf.GGUFReader(src)
    writer = gguf.GGUFWriter(dst, arch=str(reader.fields["general.architecture"].contents()))
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key in ("general.architecture", "general.alignment"):
            continue
        vtype = field.types[0]
        sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(key, field.contents(), vtype, sub_type=sub)
    qtype = gguf.GGMLQuantizationType[kind]
    for t in reader.tensors:
        shape = [int(n) for n in reversed(t.shape)]  # numpy order: (rows, cols)
        w = gguf.quants.dequantize(t.data, t.tensor_type).reshape(shape).astype(np.float32)
        target = qtype if len(shape) == 2 else gguf.GGMLQuantizationType.F32
        data = gguf.quants.quantize(w, target)
        writer.add_tensor(t.name, data, raw_shape=data.shape, raw_dtype=target)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return dst


def main() -> None:
    from attention_book.smollm import SmolLM, gguf_path

    kinds = sys.argv[1:] or ["Q4_0", "Q8_0", "F16", "F32"]
    load_before = os.getloadavg()
    print("| file | MB | logits max diff | attention max diff | 16 greedy tokens | load CPU ms "
          "| prefill 32 CPU ms | token CPU ms |\n|---|---:|---:|---:|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ["Q4_1 (the file)", *kinds]:
            path = gguf_path() if kind.startswith("Q4_1") else requantize(
                gguf_path(), Path(tmp) / f"smollm2-{kind}.gguf", kind)
            model = SmolLM.load(path, cache=False)
            prompt = list(model.tokenizer.encode("The cat sat on the mat. The cat sat on the"))
            ids = list(range(1000, 1032))
            load, fwd, gen, timed = run_node(path, [
                {"op": "load"}, {"op": "forward", "ids": prompt},
                {"op": "generate", "ids": prompt, "options": {"maxNew": 16, "stop": None}},
                {"op": "forward", "ids": ids, "repeats": 3, "logits": "last", "more": list(range(2000, 2016))},
            ], max_context=256)
            ref = model.model.forward(prompt)
            T = len(prompt)
            dl = np.abs(fwd["logits"].reshape(T, -1) - ref.logits).max()
            da = np.abs(fwd["attention"] - np.stack(ref.weights).ravel()).max()
            same = gen["tokens"] == list(model.model.generate(prompt, 16).tokens)
            step = statistics.median(s["cpuMs"] for s in timed["steps"])
            print(f"| {kind} {load['info']['types']} | {path.stat().st_size / 1e6:.0f} | {dl:.1e} | "
                  f"{da:.1e} | {'same' if same else 'DIFFERENT'} | {load['cpuMs']:.0f} | "
                  f"{statistics.median(timed['cpuMs']):.0f} | {step:.1f} |", flush=True)
            del model
    print(f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f} "
          f"(1 min; {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
