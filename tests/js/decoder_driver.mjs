// Chapter 10's lab module (web/src/labs/decoder.js) in Node, for tests/test_web_decoder.py:
// its gallery file, and optionally a GGUF file run by the llama engine in this thread
// (worker.js's message loop on a MessageChannel: the page's Worker, without the thread).
//
//   node tests/js/decoder_driver.mjs GALLERY.js MODEL.gguf|- < [{values, py?}, ...]
//     -> {load: {status, message, isGallery}, states: [{state, readout, alt, kinds, numbers,
//        drawn?} | {error}, ...]}, typed arrays as {typed, f8} (their float64 bytes, base64);
//        drawn: the module's readout, alt text and panel kinds of Python's state `py` (to_js's,
//        buffers as base64), decoded by the widget's own decode.js: what the notebook shows
//
// A state the model is still computing (being written, its logit lens asked for) is asked
// again once nothing is under way, as the page redraws at each step.
import {readFileSync, writeSync} from "node:fs";
import {createRequire} from "node:module";
import path from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

import {decode} from "../../src/attention_book/web/src/decode.js";

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "src", "attention_book", "web", "src");
const load = async (file) => import(pathToFileURL(path.join(SRC, file)).href);
const [galleryJs, gguf] = process.argv.slice(2);
createRequire(import.meta.url)(path.resolve(galleryJs));  // a classic script: sets AttentionBook.decoderGallery
const M = (await load("labs/decoder.js")).default;
const {serve} = await load("llama/worker.js");
const {startEngine} = await load("llama/engine.js");

/** An engine whose worker is worker.js's serve() at the other end of a MessageChannel. */
M.model.factory = () => {
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

const b64 = (a) => Buffer.from(Float64Array.from(a).buffer).toString("base64");
const typed = (x) => (ArrayBuffer.isView(x) ? {typed: x.constructor.name, f8: b64(x)}
  : Array.isArray(x) ? x.map(typed)
    : x !== null && typeof x === "object" ? Object.fromEntries(Object.keys(x).map((k) => [k, typed(x[k])]))
      : x);
const busy = (st) => st.notes.some((n) => /^(writing:|computing the logit lens|the model is reading)/.test(n.text));

const out = {load: null, states: []};
if (gguf && gguf !== "-") {
  const bytes = readFileSync(gguf);
  await M.loadModel(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
    {name: path.basename(gguf), bytes: bytes.length});
  out.load = {status: M.model.status, message: M.model.message, isGallery: M.model.isGallery,
    config: M.model.config};
}
const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x);
const wired = (x) => (Array.isArray(x) ? x.map(wired) : !isObject(x) ? x
  : x.$array ? {...x, buffer: Buffer.from(x.b64, "base64")}
    : Object.fromEntries(Object.entries(x).map(([k, v]) => [k, wired(v)])));
const shown = (st) => ({readout: M.readoutHtml(st), alt: M.alt(st), kinds: M.figure(st).panels.map((p) => p.kind)});

for (const {values, py} of JSON.parse(readFileSync(0, "utf8"))) {
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
writeSync(1, JSON.stringify(out));  // all of it before the exit (a pipe's write is asynchronous)
process.exit(0);  // the channel's ports would keep Node running
