/*
 * engine.js: the page's side of the model. It starts worker.js from its bundled text as a
 * Blob URL (a page opened as file:// cannot start a worker from a script's URL) and turns its
 * messages into promises, so that the page's main thread only posts and draws.
 *
 *   const engine = startEngine(WORKER_SOURCE);           // web/llama-worker.js's string
 *   const {config, info} = await engine.load(bytes);     // an ArrayBuffer: transferred
 *   const {ids} = await engine.encode({messages: [{role: "user", content: "Hi"}]});
 *   await engine.generate(ids, {maxNew: 32, temperature: 0}, (step) => draw(step));
 *   engine.stop();                                       // the running generation ends
 *   const layers = await engine.lens(step.hidden);       // (L + 1) lists of {id, p}
 *
 * The bytes come from a file the reader picks (file.arrayBuffer()) or from the site, with
 * fetchBytes() below, which reports progress and can be cancelled. Errors reject with an
 * Error whose `code` is gguf.js's or model.js's ("not-gguf", "truncated", "architecture",
 * "tensor-type", ...) for the page's message.
 */

/** An Error from the worker, with its code. */
const workerError = ({code, message}) => Object.assign(new Error(message), {code});

/**
 * Start the worker.
 * @param {string} source  the worker's bundled script (worker.js and what it imports)
 * @returns {{load: Function, encode: Function, generate: Function, stop: Function,
 *            lens: Function, terminate: Function, worker: Worker}}
 */
export const startEngine = (source) => {
  const url = URL.createObjectURL(new Blob([source], {type: "text/javascript"}));
  const worker = new Worker(url);
  URL.revokeObjectURL(url);  // the worker has started loading it
  let next = 0;
  const pending = new Map();  // id -> {resolve, reject, onStep}
  worker.onmessage = ({data}) => {
    const call = pending.get(data.id);
    if (!call) return;
    if (data.kind === "step") { call.onStep?.(data.step); return; }
    pending.delete(data.id);
    if (data.kind === "error") call.reject(workerError(data));
    else call.resolve(data);
  };
  worker.onerror = (event) => {
    event.preventDefault?.();
    const err = workerError({code: "worker", message: `the model's worker failed: ${event.message ?? "unknown error"}`});
    for (const call of pending.values()) call.reject(err);
    pending.clear();
  };
  const call = (message, transfer = [], onStep = null) => new Promise((resolve, reject) => {
    const id = next++;
    pending.set(id, {resolve, reject, onStep});
    worker.postMessage({...message, id}, transfer);
  });
  let generating = null;
  return {
    worker,
    /** Read the GGUF bytes into the model (transferred: `bytes` is empty afterwards). */
    load: (bytes, options = {}) => call({kind: "load", bytes, options}, [bytes]),
    /** Token ids of {text} or of {messages} through the chat template. */
    encode: (what) => call({kind: "encode", ...what}),
    /** Generate; onStep(step) for the prompt and each token (generate.js's steps). */
    generate: (ids, options, onStep) => {
      const done = call({kind: "generate", ids, options}, [], onStep);
      generating = next - 1;
      return done.finally(() => { generating = null; });
    },
    /** Stop the running generation at its next step (its promise resolves "stopped"). */
    stop: () => (generating === null ? Promise.resolve({kind: "idle"}) : call({kind: "stop", target: generating})),
    /** The logit lens of one step's hidden states: each layer's top tokens. */
    lens: (hidden, top = 5) => call({kind: "lens", hidden, top}),
    terminate: () => worker.terminate(),
  };
};

/**
 * A file's bytes from the site, with progress (loaded, total) and cancellation.
 * @param {string} url
 * @param {{onProgress?: function(number, number): void, signal?: AbortSignal}} [options]
 * @returns {Promise<ArrayBuffer>}
 */
export const fetchBytes = async (url, {onProgress = null, signal = undefined} = {}) => {
  const response = await fetch(url, {signal});
  if (!response.ok) throw Object.assign(new Error(`the model file could not be loaded (HTTP ${response.status})`), {code: "fetch"});
  const total = Number(response.headers.get("content-length")) || 0;
  if (!response.body || !total) return response.arrayBuffer();
  const bytes = new Uint8Array(total);
  const reader = response.body.getReader();
  let loaded = 0, since = performance.now();
  for (;;) {
    const {done, value} = await reader.read();
    if (done) break;
    if (loaded + value.length > total) throw Object.assign(new Error("the model file is longer than announced"), {code: "fetch"});
    bytes.set(value, loaded);
    loaded += value.length;
    // chunks already received resolve one after another without a break: hand the page
    // its thread back every ~10 ms, so that it can draw the progress and answer the reader
    if (performance.now() - since > 10) {
      onProgress?.(loaded, total);
      await new Promise((resolve) => setTimeout(resolve, 0));
      since = performance.now();
    }
  }
  onProgress?.(loaded, total);
  return loaded === total ? bytes.buffer : bytes.buffer.slice(0, loaded);
};
