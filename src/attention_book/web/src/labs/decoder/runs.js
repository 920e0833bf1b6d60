// Chapter 10's lab (labs/decoder.js): the model in the reader's browser, on request. The
// GGUF file (SmolLM2's beside the site, or the reader's own from the file picker) is read by
// the llama engine in a Web Worker (web/src/llama/: engine.js starts it, the worker fetches
// or reads the file itself, so the page never holds the 98 MB); each generation the lab
// asks for runs there once, streaming its steps back, and is kept as a run (gallery.js's
// shape) until its memory is wanted: moving t, the layer, the head or the view reads it.
//
// Everything here is asynchronous; the lab's state(values) never waits: it shows what a run
// holds so far, and `model.listeners` are told at each step, so that the page redraws
// (mountExtra: lab.update()). `settled()` resolves when nothing is under way (the tests).

import {startEngine} from "../../llama/engine.js";
import {gallery, readable} from "./gallery.js";

/** Positions the page's key/value cache holds: the lab's 128 prompt tokens, 24 written, and
 *  room (a chat template's system turn counts in the prompt). */
export const MAX_CONTEXT = 256;
/** The runs kept (their maps and streams), oldest dropped first. */
const KEEP_BYTES = 128 * 1048576;

export const model = {
  status: "none",  // none, loading, ready, failed
  message: "",     // why loading failed
  progress: null,  // [loaded, total] bytes while the file arrives
  file: null,      // {name, bytes} of the file loaded (or loading)
  config: null, info: null, vocab: null, eos: null, chat: false,
  isGallery: false,  // the gallery's model: its presets stand for it
  engine: null,
  runs: new Map(),  // key -> run, the oldest first
  bytes: 0,
  current: null,   // the run being written
  queued: null,    // the run to write once the current one stopped
  pending: 0,      // requests under way (encode, generate, lens)
  idle: [],        // resolvers of settled()
  listeners: [],   // f(what): "status", "progress", "step", "run", "lens"
  timing: {},      // ms: read (the file arrived), ready (the model read it), prefill, tokens
  factory: startEngine,  // how an engine is made (the tests give an in-thread one)
};

const tell = (what) => { model.listeners.forEach((f) => f(what)); };

const begin = () => { model.pending += 1; };
const end = () => {
  model.pending -= 1;
  if (model.pending === 0) { model.idle.splice(0).forEach((resolve) => resolve()); }
};

/** A Promise resolved when no request to the model is under way. */
export const settled = () => (model.pending === 0 ? Promise.resolve() : new Promise((r) => model.idle.push(r)));

/** The message a reader reads for a model that could not be loaded (the engine's `code`). */
export function loadMessage(err, name) {
  const what = name ? `${name}: ` : "";
  const text = String((err && err.message) || err);
  if (err && err.code === "fetch") {
    return `The model file could not be fetched (${text}). Open the page from a web server ` +
      "(`make book` then `python -m http.server -d _build/html`), or open the file with the file picker.";
  }
  const sentence = text.charAt(0).toUpperCase() + text.slice(1);
  return what + sentence + (/[.!?)]$/.test(sentence) ? "" : ".");
}

/**
 * Load a GGUF file: a URL (the site's copy), a File (the reader's, from the picker), or its
 * bytes (an ArrayBuffer, handed over: the tests).
 * @param {string|Blob|ArrayBuffer} source
 * @param {{name?: string, bytes?: number}} [about] what the status line says of it
 * @returns {Promise<void>} resolves when it is loaded or failed (the status says which)
 */
export async function loadModel(source, about = {}) {
  if (model.status === "loading") { return; }
  await stopWriting();
  const name = about.name || (typeof source === "string" ? source.split("/").pop() : source.name) || "the model";
  const bytes = about.bytes || (typeof source === "string" ? 0 : source.size ?? source.byteLength) || 0;
  Object.assign(model, {status: "loading", message: "", progress: [0, bytes], file: {name, bytes}, config: null,
    info: null, vocab: null, isGallery: false, runs: new Map(), bytes: 0, current: null, queued: null});
  tell("status");
  model.engine = model.engine || model.factory();
  const t0 = performance.now();
  begin();
  try {
    const loaded = await model.engine.load(source, {maxContext: MAX_CONTEXT, tokens: true}, (got, total) => {
      model.progress = [got, total || bytes];
      tell("progress");
    });
    const g = gallery().data.model, c = loaded.config;
    model.timing.read = loaded.readMs;
    model.timing.ready = performance.now() - t0 - loaded.readMs;
    model.file.bytes = model.file.bytes || (model.progress && model.progress[1]) || 0;
    Object.assign(model, {status: "ready", config: c, info: loaded.info, vocab: loaded.tokenizer.tokens,
      eos: loaded.tokenizer.eos ?? null, chat: loaded.tokenizer.chat, progress: null,
      isGallery: c.nLayers === g.n_layers && c.nHeads === g.h && c.nKvHeads === g.g && c.d === g.d &&
        c.vocab === g.vocab && model.file.bytes === g.bytes});
  } catch (err) {
    Object.assign(model, {status: "failed", message: loadMessage(err, name), progress: null});
  } finally {
    end();
  }
  tell("status");
}

/** The shape of the model the lab shows: the loaded one, else the gallery's. */
export function shape() {
  if (model.status === "ready") {
    const c = model.config;
    return {n_layers: c.nLayers, h: c.nHeads, g: c.nKvHeads};
  }
  const m = gallery().data.model;
  return {n_layers: m.n_layers, h: m.h, g: m.g};
}

/** The run of `key` the page computed (the latest first: a cache hit moves it last). */
export function cachedRun(key) {
  const run = model.runs.get(key);
  if (run) { model.runs.delete(key); model.runs.set(key, run); }
  return run || null;
}

function keep(run) {
  model.runs.set(run.key, run);
  model.bytes += run.bytes;
  while (model.bytes > KEEP_BYTES && model.runs.size > 1) {
    const [oldest, old] = model.runs.entries().next().value;
    if (old === model.current) { break; }
    model.runs.delete(oldest);
    model.bytes -= old.bytes;
  }
}

/** The head mask the engine reads, (L * h) with 1 where a head is switched off. */
function headMask(off) {
  if (!off.length) { return null; }
  const {nLayers, nHeads} = model.config, mask = new Uint8Array(nLayers * nHeads);
  off.forEach(([l, h]) => { mask[l * nHeads + h] = 1; });
  return mask;
}

/** Positions' rows of attention from the engine's steps: the prompt's (L, h, s0, s0), then
 *  each written token's (L, h, 1, S) as it was fed. */
function rowReader(run) {
  const {nLayers: L, nHeads: H} = model.config;
  return (l, h, i) => {
    const s0 = run.nPrompt;
    if (i < s0) {
      const at = ((l * H + h) * s0 + i) * s0;
      return Float64Array.from(run.prompt.subarray(at, at + i + 1));
    }
    const step = run.steps[i - s0], S = step.length / (L * H), at = (l * H + h) * S;
    return Float64Array.from(step.subarray(at, at + i + 1));
  };
}

/** A new run of `request` ({key, prompt, chat, sampling, off}), written now or after the one
 *  under way stops. */
export function startRun(request, maxNew) {
  const run = {source: "browser", key: request.key, request, ids: [], pieces: [], nPrompt: 0, n: 0,
    limit: maxNew, ended: false, done: false, stopped: false, error: null, generated: [], next: [],
    lens: [], hidden: [], steps: [], prompt: null, bytes: 0, started: false};
  run.row = rowReader(run);
  keep(run);
  if (model.current && !model.current.done) {
    if (model.queued) { model.runs.delete(model.queued.key); }  // never started: superseded
    model.queued = run;
    model.current.superseded = true;
    model.engine.stop();
  } else {
    write(run);
  }
  queueMicrotask(() => tell("run"));  // after the state that asked for it is drawn
  return run;
}

/** Stop the run under way (the reader's stop button): it keeps what it wrote. */
export function stopRun() {
  if (model.current && !model.current.done && model.engine) { model.engine.stop(); }
}

/** Stop writing, and wait until the engine is free. */
async function stopWriting() {
  model.queued = null;
  if (model.current && !model.current.done) {
    model.current.superseded = true;
    model.engine.stop();
    await settled();
  }
}

async function write(run) {
  model.current = run;
  run.started = true;
  begin();
  const r = run.request, limit = run.limit;
  try {
    const encoded = await model.engine.encode(r.chat ? {messages: [{role: "user", content: r.prompt}]} : {text: r.prompt});
    const ids = encoded.ids, most = Math.min(r.maxTokens, model.config.contextLength);
    if (ids.length > most) {
      run.error = {level: "error", text: `The prompt has ${ids.length} tokens; the limit is ${most} ` +
        "(the lab reads at most that many; the chapter's functions take 512)."};
    } else {
      Object.assign(run, {ids: Array.from(ids), nPrompt: ids.length});
      run.pieces = run.ids.map((i) => readable(model.vocab[i]));
      const t0 = performance.now();
      const done = await model.engine.generate(ids, {maxNew: limit, temperature: r.sampling.temperature,
        topK: r.sampling.topK, topP: r.sampling.topP, seed: r.sampling.temperature ? r.sampling.seed : null,
        hidden: true, headMask: headMask(r.off), promptAttention: "all", top: r.topK}, (step) => taken(run, step, t0));
      run.stopped = done.reason === "stopped";
    }
  } catch (err) {
    run.error = {level: "error", text: loadMessage(err)};
  } finally {
    run.done = true;
    end();
  }
  if (run.superseded) { model.runs.delete(run.key); model.bytes -= run.bytes; }
  model.current = null;
  const next = model.queued;
  model.queued = null;
  if (next) { write(next); }
  tell("run");
}

/** One step of the engine's generation into the run. */
function taken(run, step, t0) {
  if (step.kind === "prompt") {
    run.prompt = step.attention;
    run.hidden.push(step.hidden);
    run.bytes += step.attention.byteLength + step.hidden.byteLength;
    model.timing.prefill = step.ms;
    model.timing.first = performance.now() - t0;
  } else {
    run.ids.push(step.id);
    run.pieces.push(readable(model.vocab[step.id]));
    run.generated.push(step.text);
    const top = step.drawn || step.top;
    run.next.push({ids: top.map((x) => x.id), tokens: top.map((x) => readable(model.vocab[x.id])),
      p: top.map((x) => x.p)});
    run.steps.push(step.attention);
    run.hidden.push(step.hidden);
    run.bytes += step.attention.byteLength + step.hidden.byteLength;
    run.n += 1;
    run.ended = step.ends;
    model.timing.tokens = (model.timing.tokens || []).concat([step.ms]).slice(-64);
  }
  tell("step");
}

/** Ask for the logit lens of step `i` of a run (its query's stream); told when it arrives. */
export function requestLens(run, i) {
  if (run.lens[i] !== undefined || !run.hidden[i]) { return; }
  run.lens[i] = null;  // asked
  begin();
  model.engine.lens(run.hidden[i], 1).then(({layers}) => {
    run.lens[i] = {tokens: layers.map((top) => readable(model.vocab[top[0].id])), p: layers.map((top) => top[0].p)};
  }, (err) => {
    run.lens[i] = {error: loadMessage(err)};
  }).finally(() => {
    end();
    tell("lens");
  });
}
