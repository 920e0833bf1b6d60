// minilm.js (web/src/shared/minilm.js) on a weights file that
// attention_book.web_export.export_browser_weights wrote (a classic script that sets
// AttentionBook.minilmWeights): tests/minilm_node.py's harness, and tests/test_web_minilm.py.
//
//   minilm.run <weights.js> <out.bin> < {texts, mode, maxTokens, cut, hidden, repeats}
//     -> {timing, results, dtype}; with mode "forward" each text's float32 attention, hidden
//        states (if asked for) and value norms written one after another to out.bin
//        (minilm_node.run_in_node reads them back)
//   minilm.refusals <weights.js>  -> what tokenize() says of non-text, forward() of a file
//                                    without the tensors, load() of a page without the file
//   minilm.numerics < {xs, b64}   -> its erf of each x and decodeBase64 of each text
import {closeSync, openSync, writeSync} from "node:fs";

import {classic, source} from "./common.mjs";

const ms = () => Number(process.hrtime.bigint()) / 1e6;

/** One text through the model as `request` asks; its arrays written to `out`. */
const one = (model, request, text, out) => {
  if (request.mode === "encode") {
    const enc = model.tokenizer.encode(text);
    return {tokens: enc.tokens, ids: Array.from(enc.ids), offsets: enc.offsets};
  }
  const enc = model.tokenize(text, {maxTokens: request.maxTokens, cut: request.cut});
  const read = {tokens: enc.tokens, ids: Array.from(enc.ids), offsets: enc.offsets, kept: enc.kept,
    total: enc.total, text: enc.text};
  if (request.mode === "tokenize") return read;
  const times = [];
  let run;
  for (let r = 0; r < (request.repeats || 1); r++) {
    const t = ms();
    run = model.forward(enc.ids);
    times.push(ms() - t);
  }
  writeSync(out, new Uint8Array(run.attention.buffer));
  if (request.hidden) writeSync(out, new Uint8Array(run.hidden.buffer));
  writeSync(out, new Uint8Array(run.valueNorms.buffer));
  return {...read, T: run.T, forward_ms: times};
};

export const run = async (request, weightsJs, outPath) => {
  const minilm = await source("shared/minilm.js");
  let t = ms();
  classic(weightsJs);  // sets globalThis.AttentionBook.minilmWeights
  const weights = globalThis.AttentionBook.minilmWeights;
  const timing = {parse_ms: ms() - t};
  t = ms();
  const model = new minilm.Model(weights);  // config and vocabulary
  if (request.mode === "forward") model.prepare();  // base64 and dequantisation
  timing.decode_ms = ms() - t;
  const out = openSync(outPath, "w");
  const results = [];
  for (const text of request.texts) {
    try {
      results.push(one(model, request, text, out));
    } catch (error) {
      if (error.name !== "MiniLMError") throw error;
      results.push({error: error.code, message: error.message});
    }
  }
  closeSync(out);
  return {timing, results, dtype: weights.dtype};
};

export const refusals = async (_input, weightsJs) => {
  const m = await source("shared/minilm.js");
  classic(weightsJs);
  const model = new m.Model(globalThis.AttentionBook.minilmWeights);
  const refused = (f) => {
    try {
      f();
      return "none";
    } catch (e) {
      return `${e.code}: ${e.message}`;
    }
  };
  const out = [null, 42].map((t) => refused(() => model.tokenize(t)));
  out.push(refused(() => model.forward([101, 102])));
  delete globalThis.AttentionBook.minilmWeights;  // a page without the weights file
  out.push(refused(() => m.load()));
  return out;
};

export const numerics = async ({xs, b64}) => {
  const m = await source("shared/minilm.js");
  return {erf: xs.map(m.erf), bytes: b64.map((s) => Array.from(m.decodeBase64(s)))};
};
