// Chapter 10's lab module (web/src/labs/decoder.js) in Node, for tests/test_web_decoder.py:
// its gallery file, and optionally a GGUF file run by the llama engine in this thread
// (worker.js's message loop on a MessageChannel: the page's Worker, without the thread).
//
//   decoder.run GALLERY.js MODEL.gguf|- < [{values, py?}, ...]
//     -> {load: {status, message, isGallery}, states: [{state, readout, alt, kinds, numbers,
//        drawn?} | {error}, ...]}, typed arrays as {typed, f8} (their float64 bytes, base64);
//        drawn: the module's readout, alt text and panel kinds of Python's state `py` (to_js's,
//        buffers as base64), decoded by the widget's own decode.js: what the notebook shows
//   decoder.readable < [piece, ...] -> the page's spelling of each token piece
//
// A state the model is still computing (being written, its logit lens asked for) is asked
// again once nothing is under way, as the page redraws at each step.
import {readFileSync} from "node:fs";
import path from "node:path";

import {classic, lab, source, typed, wired} from "./common.mjs";

/** An engine whose worker is worker.js's serve() at the other end of a MessageChannel. */
const inThisThread = (serve, startEngine) => () => {
  const {port1, port2} = new MessageChannel();
  const scope = {postMessage: (message, transfer) => port2.postMessage(message, transfer)};
  serve(scope);
  port2.onmessage = (event) => scope.onmessage(event);
  return startEngine({
    postMessage: (message, transfer) => port1.postMessage(message, transfer),
    set onmessage(f) { port1.onmessage = f; },
    set onerror(_f) { /* no thread to fail */ },
    terminate: () => { port1.close(); port2.close(); },
  });
};

const busy = (st) => st.notes.some((n) => /^(writing:|computing the logit lens|the model is reading)/.test(n.text));

export const run = async (rows, gallery, gguf) => {
  classic(gallery);  // a classic script: sets AttentionBook.decoderGallery
  const M = await lab("decoder");
  const {decode} = await source("decode.js");
  M.model.factory = inThisThread((await source("llama/worker.js")).serve, (await source("llama/engine.js")).startEngine);
  const out = {load: null, states: []};
  if (gguf && gguf !== "-") {
    const bytes = readFileSync(gguf);
    await M.loadModel(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
      {name: path.basename(gguf), bytes: bytes.length});
    out.load = {status: M.model.status, message: M.model.message, isGallery: M.model.isGallery,
      config: M.model.config};
  }
  const shown = (st) => ({readout: M.readoutHtml(st), alt: M.alt(st), kinds: M.figure(st).panels.map((p) => p.kind)});
  for (const {values, py} of rows) {
    let st;
    try {
      st = M.state(values);
      for (let tries = 0; busy(st) && tries < 8; tries++) {
        await M.settled();
        st = M.state(values);
      }
    } catch (e) {
      out.states.push({error: e.message});
      continue;
    }
    out.states.push({state: typed(st), ...shown(st), numbers: M.numbers(st),
      drawn: py ? shown(decode(wired(py))) : null});
  }
  return out;  // the driver exits once it is written: the channel's ports would keep Node running
};

export const readable = async (pieces) => pieces.map((await source("labs/decoder/gallery.js")).readable);
