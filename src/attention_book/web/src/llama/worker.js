/*
 * worker.js: the Web Worker that holds the model (engine.js starts it from a Blob URL, which
 * works under file://, and speaks to it). Its messages, each with the caller's `id`:
 *
 *   in                                        out
 *   {kind: "load", source, options}           {kind: "progress", loaded, total} ... then
 *                                             {kind: "loaded", config, info, readMs, tokenizer}
 *                                             (options.tokens: the vocabulary's pieces too)
 *   {kind: "encode", text} or {messages}      {kind: "encoded", ids, pieces, text}
 *   {kind: "generate", ids, options}          {kind: "step", step} ... then {kind: "done", reason}
 *   {kind: "stop"}                            (the running generation ends: reason "stopped")
 *   {kind: "lens", hidden, top}               {kind: "lens", layers}
 *   any failure                               {kind: "error", code, message}
 *
 * `source` is the GGUF file: a URL the worker fetches itself (the site's copy), a File or Blob
 * it reads (the reader's own, from a file picker: a page opened as file:// cannot fetch), or
 * an ArrayBuffer, transferred. So the page's thread never holds or copies the 98 MB. A step's
 * attention and hidden arrays are transferred back. Between two steps the worker lets its message queue
 * run (a MessageChannel round, ~0.1 ms), so a "stop" is seen at the next step.
 */

import {MAX_TEXT_CHARS, generate} from "./generate.js";
import {loadModel} from "./model.js";
import {inputError, softmax, topTokens} from "./sample.js";

/** A macrotask boundary: lets queued messages (a "stop") run before the next step. */
const yieldToMessages = () => new Promise((resolve) => {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => resolve();
  channel.port2.postMessage(null);
});

/**
 * The bytes of `source` (a URL, a Blob, or an ArrayBuffer), with progress(loaded, total)
 * while a URL streams in.
 * @returns {Promise<ArrayBuffer>}
 */
const readSource = async (source, progress) => {
  if (source instanceof ArrayBuffer) return source;
  if (typeof Blob !== "undefined" && source instanceof Blob) {
    progress(0, source.size);
    const bytes = await source.arrayBuffer();
    progress(bytes.byteLength, bytes.byteLength);
    return bytes;
  }
  if (typeof source !== "string") throw Object.assign(new Error("expected a URL, a File or the file's bytes"), {code: "fetch"});
  let response;
  try {
    response = await fetch(source);
  } catch (err) {
    throw Object.assign(new Error(`the model file could not be fetched (${err.message})`), {code: "fetch"});
  }
  if (!response.ok) throw Object.assign(new Error(`the model file could not be loaded (HTTP ${response.status})`), {code: "fetch"});
  const total = Number(response.headers.get("content-length")) || 0;
  if (!response.body || !total) return response.arrayBuffer();
  const bytes = new Uint8Array(total), reader = response.body.getReader();
  let loaded = 0, shown = 0;
  for (;;) {
    const {done, value} = await reader.read();
    if (done) break;
    if (loaded + value.length > total) throw Object.assign(new Error("the model file is longer than announced"), {code: "fetch"});
    bytes.set(value, loaded);
    loaded += value.length;
    if (loaded - shown > total / 100) { progress(loaded, total); shown = loaded; }  // about 100 updates
  }
  progress(loaded, total);
  return loaded === total ? bytes.buffer : bytes.buffer.slice(0, loaded);
};

/** The worker's message loop, on `scope` (self in a Worker). */
export const serve = (scope) => {
  let model = null;
  let running = null;  // the id of the generation under way
  const stopped = new Set();
  const post = (message, transfer = []) => scope.postMessage(message, transfer);
  const need = () => {
    if (!model) throw Object.assign(new Error("no model is loaded yet"), {code: "no-model"});
    return model;
  };

  const handlers = {
    load: async ({id, source, options}) => {
      if (running !== null) throw Object.assign(new Error("a generation is under way: stop it first"), {code: "busy"});
      model = null;
      const t = performance.now();
      const bytes = await readSource(source, (loaded, total) => post({kind: "progress", id, loaded, total}));
      const readMs = performance.now() - t;
      model = await loadModel(bytes, options);
      return {kind: "loaded", config: model.config, info: model.info, readMs,
        tokenizer: {bos: model.tokenizer.bos, eos: model.tokenizer.eos, chat: model.tokenizer.template !== null,
          vocab: model.tokenizer.tokens.length, tokens: options?.tokens ? model.tokenizer.tokens : undefined}};
    },
    encode: async ({text, messages}) => {
      const tok = need().tokenizer;
      const full = messages ? tok.chat(messages) : text;
      if (typeof full !== "string") throw inputError("empty-prompt", "the prompt must be text");
      if (full.length > MAX_TEXT_CHARS) {
        throw inputError("long-prompt", `the text is ${full.length.toLocaleString("en")} characters; ` +
          `the lab takes at most ${MAX_TEXT_CHARS.toLocaleString("en")}`);
      }
      const ids = tok.encode(full);
      return {kind: "encoded", ids, pieces: ids.map((i) => tok.decode([i])), text: full};
    },
    generate: async ({id, ids, options}) => {
      const m = need();
      if (running !== null) throw Object.assign(new Error("a generation is under way: stop it first"), {code: "busy"});
      running = id;
      let reason = "length";
      try {
        for (const step of generate(m, ids, options)) {
          const transfer = [step.attention, step.hidden].filter(Boolean).map((a) => a.buffer);
          post({kind: "step", id, step}, transfer);
          if (step.ends) reason = "stop";
          await yieldToMessages();
          if (stopped.has(id)) { reason = "stopped"; break; }
        }
      } finally {
        running = null;
        stopped.delete(id);
      }
      return {kind: "done", reason, length: m.length};
    },
    stop: async ({target}) => {
      if (running !== null && (target === undefined || target === running)) stopped.add(running);
      return {kind: "stopping"};
    },
    lens: async ({hidden, top = 5}) => {
      const m = need(), d = m.config.d, layers = [];
      for (let l = 0; l * d < hidden.length; l++) {
        layers.push(topTokens(softmax(m.lens(hidden.subarray(l * d, (l + 1) * d))), top));
      }
      return {kind: "lens", layers};
    },
  };

  scope.onmessage = async (event) => {
    const message = event.data;
    const handler = handlers[message?.kind];
    try {
      if (!handler) throw new Error(`unknown message ${JSON.stringify(message?.kind)}`);
      post({...(await handler(message)), id: message.id});
    } catch (err) {
      post({kind: "error", id: message?.id, code: err.code ?? err.name ?? "error", message: String(err?.message ?? err)});
    }
  };
};

/* global WorkerGlobalScope */
if (typeof WorkerGlobalScope !== "undefined" && globalThis instanceof WorkerGlobalScope) serve(globalThis);
