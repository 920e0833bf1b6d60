// Chapter 9's lab (labs/pretrained.js): all-MiniLM-L6-v2 on the reader's request. The
// "Load the model" button (mountExtra) loads minilm-weights.js (int8, 32.5 MB) and starts
// minilm.js's forward pass in a Web Worker; each new sentence runs once, and its maps and
// value norms are kept (LRU, 64 MB). Also the model view's clicks: a thumbnail opens its head.
import {format} from "../../format.js";
import {Model} from "../../shared/minilm.js";
import {gallery} from "./data.js";

const root = globalThis;
// The Worker's program (entries/minilm-worker.js, bundled by build.mjs and written into this
// bundle as text): a Blob URL, since a page opened as file:// cannot start a worker from a
// script's URL. Run from the sources (Node), there is none: the model runs on the thread.
/* global __MINILM_WORKER__ */
const WORKER_SOURCE = typeof __MINILM_WORKER__ === "string" ? __MINILM_WORKER__ : null;
// the script's own URL, read while it runs: minilm-weights.js lies beside it
const scriptSrc = typeof document !== "undefined" && document.currentScript ? document.currentScript.src : null;

const WEIGHTS_FILE = "minilm-weights.js";
const CACHE_BYTES = 64 * 1048576;  // the computed sentences' maps kept

// ------------------------------------------------------------------ the model, on request

export const engine = {
  status: "none",  // none, loading, preparing, ready, missing, failed
  message: "",
  url: null,  // the weights file's URL (default: beside this script)
  worker: null, model: null,  // a Web Worker, or the model on the main thread
  dtype: null,
  cache: new Map(),  // used text -> {T, maps: Float32Array (L, h, T, T)}, oldest first
  cacheBytes: 0,
  inFlight: null, queued: null, seq: 0,
  timing: {},  // ms: load (the script), prepare (decode), last forward
  listeners: [],
  busy: [],  // f(tokens or 0): a sentence is being computed (its token count), or done
  pause: null,  // the timer of a sentence waiting for the reader to stop typing
};

// A new sentence runs once typing pauses (QA Q20: every key press ran the model, 41-66
// forward passes for a 70-character sentence); the picture dims only when an answer is
// slower than DIM_MS after the last key (the canvas flickered 50 times for one sentence).
export const PAUSE_MS = 300, DIM_MS = PAUSE_MS + 200;

function setStatus(status, message) {
  engine.status = status;
  engine.message = message || "";
  engine.listeners.forEach((f) => { f(engine.status, engine.message); });
}

function weightsBytes() {
  const w = gallery().data.weights;
  return w && w.bytes ? w.bytes : null;
}

/** "32.5 MB", or "" when the gallery file does not know the size. */
function sizeText() {
  const bytes = weightsBytes();
  return bytes ? format.fixed(bytes / 1e6, 1) + " MB" : "";
}

function weightsUrl() {
  if (engine.url) { return engine.url; }
  const name = (gallery().data.weights && gallery().data.weights.file) || WEIGHTS_FILE;
  return scriptSrc ? scriptSrc.replace(/[^/]*$/, name) : "_static/ab-web/" + name;
}

/** What the reader reads when the model file is missing; what a developer needs goes to
 *  the console. */
function missingMessage(url) {
  if (typeof console !== "undefined") {
    console.warn("The model file " + WEIGHTS_FILE + " is missing (looked for " + url + "). The book's build " +
      "writes it beside this page's scripts: run `make book`, or write it alone with " +
      "`.venv/bin/python -m attention_book.web_export _build/html/_static/ab-web/" + WEIGHTS_FILE + " int8` " +
      "(attention_book.web_export.export_browser_weights).");
  }
  return "The model is not part of this copy of the book, so only the preset sentences can be shown.";
}

function remember(used, entry) {
  if (engine.cache.has(used)) { return; }
  engine.cache.set(used, entry);
  engine.cacheBytes += entry.maps.byteLength + entry.valueNorms.byteLength;
  while (engine.cacheBytes > CACHE_BYTES && engine.cache.size > 1) {
    const oldest = engine.cache.keys().next().value;
    engine.cacheBytes -= engine.cache.get(oldest).maps.byteLength + engine.cache.get(oldest).valueNorms.byteLength;
    engine.cache.delete(oldest);
  }
}

export function lookup(used) {
  const entry = engine.cache.get(used);
  if (entry) { engine.cache.delete(used); engine.cache.set(used, entry); }  // most recent last
  return entry || null;
}

function pump() {
  if (engine.inFlight || !engine.queued) { return; }
  const job = engine.inFlight = engine.queued;
  engine.queued = null;
  job.id = ++engine.seq;
  if (engine.worker) {
    engine.worker.postMessage({kind: "run", id: job.id, ids: job.ids});
    return;
  }
  setTimeout(() => {  // main thread: after the page painted what it has
    const t = performance.now(); let run;
    try { run = engine.model.forward(job.ids); } catch (err) { finish({kind: "error", message: err.message}); return; }
    finish({kind: "result", T: run.T, maps: run.attention, valueNorms: run.valueNorms, ms: performance.now() - t});
  }, 0);
}

function finish(m) {
  const job = engine.inFlight;
  engine.inFlight = null;
  if (job) {
    if (m.kind === "result") {
      engine.timing.forward = m.ms;
      const entry = {T: m.T, maps: m.maps, valueNorms: m.valueNorms};
      remember(job.used, entry);
      job.waiters.forEach((w) => { w.resolve(entry); });
    } else {
      job.waiters.forEach((w) => { w.reject(new Error("the model failed on this sentence: " + m.message)); });
    }
  }
  if (engine.pause === null) { pump(); }  // a sentence still being typed waits for its pause
}

/** The maps of `used` (its ids), computed by the model: a Promise of {T, maps, valueNorms}, or of
 *  null when a newer sentence took its turn before it started. */
export function compute(used, ids) {
  return new Promise((resolve, reject) => {
    const waiter = {resolve, reject};
    const job = engine.inFlight && engine.inFlight.used === used ? engine.inFlight :
      engine.queued && engine.queued.used === used ? engine.queued : null;
    if (job) { job.waiters.push(waiter); return; }
    if (engine.queued) { engine.queued.waiters.forEach((w) => { w.resolve(null); }); }  // superseded
    engine.queued = {used, ids, waiters: [waiter]};
    clearTimeout(engine.pause);
    engine.pause = setTimeout(() => {  // the reader stopped typing: its turn
      engine.pause = null;
      pump();
    }, PAUSE_MS);
  });
}

/** Start the model from a weights object (AttentionBook.minilmWeights): in a Web Worker
 *  where the page can make one, else on the main thread. A Promise of the engine. */
export function startModel(weights, options) {
  const useWorker = !(options && options.worker === false) && typeof Worker !== "undefined" &&
    typeof Blob !== "undefined" && typeof URL !== "undefined" && WORKER_SOURCE !== null;
  setStatus("preparing");
  engine.dtype = weights && weights.dtype;
  if (!useWorker) {
    return new Promise((resolve, reject) => {
      setTimeout(() => {
        const t = performance.now();
        try {
          engine.model = new Model(weights).prepare();
        } catch (err) {
          setStatus("failed", "The model could not be read: " + err.message);
          reject(err);
          return;
        }
        engine.timing.prepare = performance.now() - t;
        setStatus("ready");
        resolve(engine);
      }, 0);
    });
  }
  const url = URL.createObjectURL(new Blob([WORKER_SOURCE], {type: "text/javascript"}));
  const worker = new Worker(url);
  URL.revokeObjectURL(url);
  return new Promise((resolve, reject) => {
    worker.onmessage = (event) => {
      const m = event.data;
      if (m.kind === "ready") {
        engine.worker = worker;
        engine.timing.prepare = m.ms;
        worker.onmessage = (e) => { finish(e.data); };
        setStatus("ready");
        resolve(engine);
      } else {
        setStatus("failed", "The model could not be read: " + m.message);
        reject(new Error(m.message));
      }
    };
    worker.onerror = (event) => {
      event.preventDefault();
      worker.terminate();
      // a page that refuses workers: the main thread instead
      startModel(weights, {worker: false}).then(resolve, reject);
    };
    worker.postMessage({kind: "weights", weights});
  });
}

/** Load minilm-weights.js with a <script> element (works over http and file://), then
 *  start the model. A Promise of the engine; the status says what happens. */
export function loadModel() {
  if (engine.status === "ready") { return Promise.resolve(engine); }
  if (engine.loading) { return engine.loading; }
  const url = weightsUrl();
  engine.loading = new Promise((resolve, reject) => {
    const AB = root.AttentionBook;
    if (AB.minilmWeights && AB.minilmWeights.tensors) { resolve(AB.minilmWeights); return; }
    setStatus("loading");
    const t = performance.now();
    const script = document.createElement("script");
    script.src = url;
    script.async = true;
    script.onload = () => {
      engine.timing.load = performance.now() - t;
      if (AB.minilmWeights && AB.minilmWeights.tensors) { resolve(AB.minilmWeights); } else { reject(new Error("failed")); setStatus("failed", "The file " + url + " ran but holds no model weights."); }
    };
    script.onerror = () => {
      setStatus("missing", missingMessage(url));
      reject(new Error("missing"));
    };
    document.head.appendChild(script);
  }).then((weights) => {
    return startModel(weights).then((e) => {
      // the worker holds its own copy: the page's 32 MB of base64 can go
      if (engine.worker && root.AttentionBook.minilmWeights === weights) {
        root.AttentionBook.minilmWeights = undefined;
      }
      return e;
    });
  });
  engine.loading.catch(() => { engine.loading = null; });  // a retry may follow
  return engine.loading;
}

/** The status note of a sentence the model has not run yet. */
export function pendingNote() {
  const size = sizeText();
  switch (engine.status) {
    case "loading": return {level: "info", text: "loading the model (" + (size || "all-MiniLM-L6-v2") + ")\u2026"};
    case "preparing": return {level: "info", text: "preparing the model's weights\u2026"};
    case "ready": return {level: "info", text: "computing this sentence in your browser\u2026"};
    case "missing": return {level: "error", text: engine.message};
    case "failed": return {level: "error", text: engine.message};
    default: return {level: "info", text: "this sentence is not one of the book's presets: press \u201cLoad the model" +
                                          (size ? " (" + size + ")" : "") + "\u201d to run all-MiniLM-L6-v2 on it in " +
                                          "your browser (the presets need no download)"};
  }
}

/** The model view's thumbnail under a click on the lab's canvas: [layer, head], or null. */
function thumbAt(lab, event) {
  const panel = lab.spec && lab.spec.panels[0], hit = panel && panel.kind === "thumbs" && panel.hit;
  if (!hit) { return null; }
  const box = lab.canvas.getBoundingClientRect(), scale = box.width ? lab.width() / box.width : 1;
  const x = (event.clientX - box.left) * scale, y = (event.clientY - box.top) * scale;
  const j = Math.floor((x - hit.x) / hit.step), i = Math.floor((y - hit.y) / hit.step);
  if (i < 0 || j < 0 || i >= hit.rows || j >= hit.cols) { return null; }
  return x - hit.x - j * hit.step <= hit.size && y - hit.y - i * hit.step <= hit.size ? [i, j] : null;
}

/** A click on a thumbnail opens its head: the layer and head controls move to it (one draw). */
function routeClicks(lab) {
  if (!lab || !lab.canvas || typeof lab.set !== "function") { return; }
  lab.canvas.addEventListener("click", (event) => {
    const at = thumbAt(lab, event);
    if (!at) { return; }
    const layer = lab.controls.find((c) => { return c.name === "layer"; });
    layer.value = at[0];  // read with the head's change: one state, one draw
    lab.set("head", at[1]);
  });
  lab.canvas.addEventListener("mousemove", (event) => {
    lab.canvas.style.cursor = thumbAt(lab, event) ? "pointer" : "";
  });
}

/** The "Load the model" button and its status line, under the lab's controls. */
export function mountExtra(lab, container) {
  const doc = container.ownerDocument;
  const box = doc.createElement("div");
  box.className = "ab-pretrained-model";
  const button = doc.createElement("button");
  button.type = "button";
  button.className = "ab-load-model";
  const size = sizeText();
  button.textContent = "Load the model" + (size ? " (" + size + ")" : "");
  const status = doc.createElement("p");
  status.className = "ab-model-status";
  status.setAttribute("role", "status");
  status.setAttribute("aria-live", "polite");
  status.textContent = "The preset sentences are shown from the book's own numbers. For your own sentence, load " +
    "all-MiniLM-L6-v2" + (size ? " (" + size + ", once)" : "") + ": it then runs in your browser.";
  let timer = null, started = 0;
  function show(st) {
    if (timer !== null && st !== "loading") { clearInterval(timer); timer = null; }
    if (st === "loading") {
      started = performance.now();
      const tick = () => {
        status.textContent = "Loading the model" + (size ? " (" + size + ")" : "") + "\u2026 " +
          Math.round((performance.now() - started) / 1000) + " s";
      };
      tick();
      if (timer === null) { timer = setInterval(tick, 500); }
      button.disabled = true;
    } else if (st === "preparing") {
      status.textContent = "Preparing the weights\u2026";
    } else if (st === "ready") {
      status.textContent = "Model loaded" + (engine.timing.load ? " in " + format.fixed((engine.timing.load +
        (engine.timing.prepare || 0)) / 1000, 1) + " s" : "") + ": type any sentence (up to " + gallery().data.max_tokens +
        " tokens), it runs in your browser" + (engine.worker ? "" : " (on the page's thread)") + ".";
      button.hidden = true;
    } else if (st === "missing" || st === "failed") {
      status.textContent = "The model could not be loaded (the note below says why).";
      button.disabled = false;
      button.textContent = "Try again";
    }
    if (lab && typeof lab.update === "function" && st !== "loading") { lab.update(); }
  }
  engine.listeners.push(show);
  // while a sentence is computed: a sign beside the button, the old picture dimmed
  let ready = "", slow = null;
  engine.busy.push((tokens) => {
    clearTimeout(slow);
    slow = null;
    if (tokens) {  // a sign only for an answer slower than DIM_MS
      slow = setTimeout(() => {
        ready = ready || status.textContent;
        status.textContent = "Computing this sentence (" + tokens + " tokens) in your browser\u2026";
        if (lab && lab.canvas) { lab.canvas.style.opacity = "0.45"; }
      }, DIM_MS);
      return;
    }
    if (ready) {
      status.textContent = ready;
      ready = "";
    }
    if (lab && lab.canvas) { lab.canvas.style.opacity = ""; }
  });
  button.addEventListener("click", () => { loadModel().catch(() => {}); });
  routeClicks(lab);
  box.appendChild(button);
  box.appendChild(status);
  container.appendChild(box);
  if (engine.status !== "none") { show(engine.status); }
}

/** What the tests and the benchmark read: the model's status and timings. */
export function modelStatus() {
  return {status: engine.status, message: engine.message, dtype: engine.dtype, worker: !!engine.worker,
    cached: engine.cache.size, timing: Object.assign({}, engine.timing), url: weightsUrl()};
}

