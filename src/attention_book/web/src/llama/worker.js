/*
 * worker.js: the Web Worker that holds the model (engine.js starts it from a Blob URL, which
 * works under file://, and speaks to it). Its messages, each with the caller's `id`:
 *
 *   in                                        out
 *   {kind: "load", bytes, options}            {kind: "loaded", config, info}
 *   {kind: "encode", text} or {messages}      {kind: "encoded", ids, pieces, text}
 *   {kind: "generate", ids, options}          {kind: "step", step} ... then {kind: "done", reason}
 *   {kind: "stop"}                            (the running generation ends: reason "stopped")
 *   {kind: "lens", hidden, top}               {kind: "lens", layers}
 *   any failure                               {kind: "error", code, message}
 *
 * `bytes` is the GGUF file's ArrayBuffer, transferred (not copied); a step's attention and
 * hidden arrays are transferred back. Between two steps the worker lets its message queue
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
    load: async ({bytes, options}) => {
      if (running !== null) throw Object.assign(new Error("a generation is under way: stop it first"), {code: "busy"});
      model = null;
      model = await loadModel(bytes, options);
      return {kind: "loaded", config: model.config, info: model.info,
        tokenizer: {bos: model.tokenizer.bos, eos: model.tokenizer.eos, chat: model.tokenizer.template !== null,
          vocab: model.tokenizer.tokens.length}};
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

if (typeof WorkerGlobalScope !== "undefined" && globalThis instanceof WorkerGlobalScope) serve(globalThis);
