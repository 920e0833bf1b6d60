/*
 * engine.js: the page's side of the model. It starts worker.js from its bundled text as a
 * Blob URL (a page opened as file:// cannot start a worker from a script's URL) and turns its
 * messages into promises, so that the page's main thread only posts and draws.
 *
 *   const engine = startEngine();                        // the worker web/build.mjs bundled
 *   const {config, info} = await engine.load(url, {}, (loaded, total) => bar(loaded / total));
 *   await engine.load(input.files[0]);                   // a reader's own file (file://)
 *   const {ids} = await engine.encode({messages: [{role: "user", content: "Hi"}]});
 *   await engine.generate(ids, {maxNew: 32, temperature: 0}, (step) => draw(step));
 *   engine.stop();                                       // the running generation ends
 *   const layers = await engine.lens(step.hidden);       // (L + 1) lists of {id, p}
 *
 * The worker reads the file itself: it fetches a URL (the site's copy) or reads a File (a
 * reader's own, from a file picker, which a page opened as file:// still has), so the page's
 * thread never holds the 98 MB; it reports progress while a URL streams in. Errors reject with an
 * Error whose `code` is gguf.js's or model.js's ("not-gguf", "truncated", "architecture",
 * "tensor-type", ...) for the page's message.
 */

/* global __LLAMA_WORKER__ */
/** The worker's bundled script: web/build.mjs defines __LLAMA_WORKER__ in the page's bundles
 *  (llama/build.mjs's bundleWorker); run from the sources (Node) there is none. */
export const WORKER_SOURCE = typeof __LLAMA_WORKER__ === "string" ? __LLAMA_WORKER__ : null;

/** An Error from the worker, with its code. */
const workerError = ({code, message}) => Object.assign(new Error(message), {code});

/**
 * Start the worker.
 * @param {string|object} source  the worker's bundled script (worker.js and what it imports),
 *   or an object that speaks to one as a Worker does (postMessage, onmessage, terminate: the
 *   tests run worker.js's serve() on a MessageChannel in Node)
 * @returns {{load: Function, encode: Function, generate: Function, stop: Function,
 *            lens: Function, terminate: Function, worker: Worker}}
 */
export const startEngine = (source = WORKER_SOURCE) => {
  let worker = source;
  if (typeof source === "string") {
    const url = URL.createObjectURL(new Blob([source], {type: "text/javascript"}));
    worker = new Worker(url);
    URL.revokeObjectURL(url);  // the worker has started loading it
  } else if (!source || typeof source.postMessage !== "function") {
    throw new Error("the model's worker was not built into this script: run `make js`");
  }
  let next = 0;
  const pending = new Map();  // id -> {resolve, reject, onEvent}
  worker.onmessage = ({data}) => {
    const call = pending.get(data.id);
    if (!call) return;
    if (data.kind === "step" || data.kind === "progress") { call.onEvent?.(data); return; }
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
  const call = (message, transfer = [], onEvent = null) => new Promise((resolve, reject) => {
    const id = next++;
    pending.set(id, {resolve, reject, onEvent});
    worker.postMessage({...message, id}, transfer);
  });
  let generating = null;
  return {
    worker,
    /**
     * Load a GGUF file: a URL (relative to the page), a File or Blob, or an ArrayBuffer
     * (transferred: empty afterwards); onProgress(loaded, total) while it arrives.
     */
    load: (file, options = {}, onProgress = null) => {
      const what = typeof file === "string" ? new URL(file, globalThis.location?.href).href : file;
      return call({kind: "load", source: what, options}, what instanceof ArrayBuffer ? [what] : [],
        onProgress && (({loaded, total}) => onProgress(loaded, total)));
    },
    /** Token ids of {text} or of {messages} through the chat template. */
    encode: (what) => call({kind: "encode", ...what}),
    /** Generate; onStep(step) for the prompt and each token (generate.js's steps). */
    generate: (ids, options, onStep) => {
      const done = call({kind: "generate", ids, options}, [], onStep && (({step}) => onStep(step)));
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
