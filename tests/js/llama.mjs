// The llama engine (src/attention_book/web/src/llama/) run in Node.js for the tests and
// benchmarks (tests/llama_js.py): GGUF files, a list of operations on each, float32 arrays
// written one after another to OUT (their offsets in the JSON answer).
//
//   llama.run OUT.bin < [{gguf, backend?, maxContext?, ops: [{op, ...}]}, ...]
//     -> per request, each op's result: an object whose arrays are {offset, length, dtype}
//        into OUT, or {error: {name, code, message}}
//   llama.harness <out.js>  -> null: the page harness (HARNESS) bundled by esbuild into a
//        classic script, as web/build.mjs bundles the engine and its worker
//        (tests/llama_js.py's write_page)

import {closeSync, openSync, readFileSync, writeSync} from "node:fs";
import path from "node:path";

import {source, SRC} from "./common.mjs";

const LLAMA = path.join(SRC, "llama");
const load = (name) => source(path.join("llama", name));
const {loadModel} = await load("model.js");
const {readGGUF} = await load("gguf.js");
const {createKernels} = await load("kernels.js");
const {sampler, samplingDistribution, topKTopP} = await load("sample.js");
const {generate} = await load("generate.js");
const {Tokenizer} = await load("tokenizer.js");

let out = null, offset = 0;
/** An array written to OUT as float32 (or int32): its place there. */
const put = (array, Type = Float32Array) => {
  const typed = array instanceof Type ? array : Type.from(array);
  writeSync(out, new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength));
  const at = {offset, length: typed.length, dtype: Type === Float32Array ? "float32" : "int32"};
  offset += typed.byteLength;
  return at;
};
const fileBytes = (file) => {
  const b = readFileSync(file);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
};
const ms = () => performance.now();
/** CPU milliseconds (user + system) of this process: what a busy machine does not inflate. */
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };

/** The operations on one request's file: getModel() loads it once, on first use. */
const operations = (request, getModel) => ({
  // the model's info, or the error loading it raises
  load: async () => {
    const c = cpuMs(), m = await getModel();
    return {config: m.config, info: m.info, cpuMs: cpuMs() - c};
  },
  // the tokenizer alone (needs no weights): ids of each text, and of each chat
  encode: async ({texts = [], chats = []}) => {
    const tok = new Tokenizer(readGGUF(fileBytes(request.gguf)).metadata);
    return {ids: texts.map((t) => tok.encode(t)), decoded: texts.map((t) => tok.decode(tok.encode(t))),
      chats: chats.map((messages) => tok.chat(messages))};
  },
  // one forward pass over ids from an empty cache, then optionally more tokens one at a time
  forward: async ({ids, more = [], attention = "all", logits = "all", hidden = false, headMask = null, repeats = 1}) => {
    const m = await getModel();
    const times = [], cpu = [];
    let run;
    for (let r = 0; r < repeats; r++) {
      m.reset(0);
      const t = ms(), c = cpuMs();
      run = m.forward(ids, {attention, logits, hidden, headMask: headMask && Uint8Array.from(headMask)});
      times.push(ms() - t);
      cpu.push(cpuMs() - c);
    }
    const steps = more.map((id) => {
      const t = ms(), c = cpuMs();
      const s = m.forward([id], {attention: "last", logits: "last", hidden, headMask: headMask && Uint8Array.from(headMask)});
      return {logits: put(s.logits), attention: put(s.attention), hidden: s.hidden && put(s.hidden), ms: ms() - t,
        cpuMs: cpuMs() - c};
    });
    return {T: run.T, S: run.S, logits: put(run.logits), attention: run.attention && put(run.attention),
      hidden: run.hidden && put(run.hidden), steps, ms: times, cpuMs: cpu};
  },
  // generate.js's loop: the tokens, each step's attention row and time
  generate: async ({ids, options = {}, keepAttention = false}) => {
    const m = await getModel();
    const tokens = [], times = [], rows = [], top = [];
    let promptMs = 0;
    for (const step of generate(m, ids, options)) {
      if (step.kind === "prompt") { promptMs = step.ms; continue; }
      tokens.push(step.id);
      times.push(step.ms);
      top.push(step.top);
      if (keepAttention) rows.push(put(step.attention));
    }
    return {tokens, promptMs, ms: times, attention: rows, top, text: m.tokenizer.decode(tokens)};
  },
  // the logit lens of a position's residual stream (L + 1, d), each layer's logits
  lens: async ({ids}) => {
    const m = await getModel();
    m.reset(0);
    const run = m.forward(ids, {attention: "none", hidden: true});
    const d = m.config.d, layers = [];
    for (let l = 0; l * d < run.hidden.length; l++) layers.push(put(m.lens(run.hidden.subarray(l * d, (l + 1) * d))));
    return {layers};
  },
  // the sampler on given logits (a float32 file of rows of V): the ids a seed draws
  sample: async ({logitsFile, V, options}) => {
    const b = readFileSync(logitsFile);
    const rows = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    const pick = sampler(options), ids = [], dists = [];
    for (let r = 0; r * V < rows.length; r++) {
      const row = rows.subarray(r * V, (r + 1) * V);
      ids.push(pick(row));
      if (options.temperature > 0) dists.push(put(Float32Array.from(samplingDistribution(row, options))));
    }
    return {ids, dists, filtered: options.temperature > 0
      ? put(Float32Array.from(topKTopP(Float64Array.from(rows.subarray(0, V), (v) => v / options.temperature),
        options.topK ?? null, options.topP ?? null)))
      : null};
  },
  // one product y = x W^T on a tensor of the file: x is a float32 file (T, cols)
  matmul: async ({tensor, xFile, T, backend, repeats = 1}) => {
    const file = readGGUF(fileBytes(request.gguf));
    const t = file.tensors.get(tensor);
    const [cols, rows] = t.dims;
    const k = await createKernels(t.nbytes + T * cols * 4 + T * cols / 8 + T * rows * 4 + 1024, {backend});
    const w = k.alloc(t.nbytes, 32), x = k.alloc(T * cols * 4), xs = k.alloc(T * cols / 8), y = k.alloc(T * rows * 4);
    k.u8.set(file.bytes.subarray(t.offset, t.offset + t.nbytes), w);
    const xb = readFileSync(xFile);
    k.u8.set(new Uint8Array(xb.buffer, xb.byteOffset, xb.byteLength), x);
    const times = [], cpu = [];
    for (let r = 0; r < repeats; r++) {
      const s = ms(), c = cpuMs();
      k.blockSums(x, xs, cols, T);
      k.matmul(t.typeName, w, x, xs, y, rows, cols, T);
      times.push(ms() - s);
      cpu.push(cpuMs() - c);
    }
    return {backend: k.backend, type: t.typeName, y: put(new Float32Array(k.buffer, y, T * rows)), ms: times,
      cpuMs: cpu};
  },
});

/** Each op of a request, on its own model (loaded from its file once). */
const answer = async (request) => {
  let model = null;
  const ops = operations(request, async () => {
    if (!model) {
      const t = ms();
      model = await loadModel(fileBytes(request.gguf), {backend: request.backend ?? "auto", maxContext: request.maxContext});
      model.info.driverLoadMs = ms() - t;
    }
    return model;
  });
  const results = [];
  for (const op of request.ops) {
    try {
      results.push(await ops[op.op](op));
    } catch (err) {
      results.push({error: {name: err.name, code: err.code ?? null, message: err.message}});
    }
  }
  return results;
};

export const run = async (requests, outPath) => {
  out = openSync(outPath, "w");
  offset = 0;
  const results = [];
  for (const request of requests) results.push(await answer(request));
  closeSync(out);
  return results;
};

/** The page harness's entry: the engine and its worker's source on globalThis.llama. */
const HARNESS = `import {startEngine, WORKER_SOURCE} from "./engine.js";
globalThis.llama = {startEngine, WORKER_SOURCE};`;

export const harness = async (_input, outFile) => {
  const {bundleWorker} = await load("build.mjs");
  const esbuild = await import("esbuild");
  await esbuild.build({stdin: {contents: HARNESS, resolveDir: LLAMA}, bundle: true, format: "iife", target: "es2022",
    outfile: outFile, define: {__LLAMA_WORKER__: JSON.stringify(await bundleWorker())}});
  return null;
};
