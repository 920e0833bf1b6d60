// The twin contract's Node side (tests/test_web_twins.py), on a lab's ES source module
// (web/src/labs/<lab>.js):
//   node tests/js/twin.mjs state <lab> [data.js]  < [values, ...]
//     -> [{state} | {error}, ...], typed arrays as {typed, f8} (their float64 bytes, base64)
//   node tests/js/twin.mjs draw <lab> <TOL>  < [{values, py}, ...]
//     -> [{leaves, diff}, ...]: the module's drawing ({figure, readout, alt}) of Python's
//        state `py` (to_js's, its buffers as base64), decoded by the widget's own decode.js,
//        against its drawing of its own state(values), compared here (numbers, also those
//        printed in texts, within TOL); diff is the first difference [where, a, b] or null,
//        leaves how many numbers and texts were compared.
import {readFileSync} from "node:fs";
import {createRequire} from "node:module";
import path from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

import {decode} from "../../src/attention_book/web/src/decode.js";

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "src", "attention_book", "web", "src");
const [command, lab, arg] = process.argv.slice(2);
const M = (await import(pathToFileURL(path.join(SRC, "labs", `${lab}.js`)).href)).default;
const input = JSON.parse(readFileSync(0, "utf8"));

const b64 = (a) => Buffer.from(Float64Array.from(a).buffer).toString("base64");
const typed = (x) => (ArrayBuffer.isView(x) ? {typed: x.constructor.name, f8: b64(x)}
  : Array.isArray(x) ? x.map(typed)
    : x !== null && typeof x === "object" ? Object.fromEntries(Object.keys(x).map((k) => [k, typed(x[k])]))
      : x);

async function states() {
  if (arg) {  // the data file the module reads (chapter 8's checkpoints)
    const data = createRequire(import.meta.url)(path.resolve(arg));  // a classic script: sets globals
    if (M.useData) { M.useData(data); }
  }
  const out = [];
  for (const values of input) {
    try { out.push({state: typed(await M.state(values))}); } catch (e) { out.push({error: e.message}); }
  }
  return out;
}

const TOL = Number(arg);
const NUMBER = /(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)/;
const near = (a, b) => a === b || Math.abs(a - b) <= TOL * Math.max(1, Math.abs(b));
const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x);
// as JSON has them: NaN, infinities and undefined are null, keys of undefined left out
const asJson = (x) => (x === undefined || (typeof x === "number" && !Number.isFinite(x)) ? null : x);
const keys = (x) => Object.keys(x).filter((k) => x[k] !== undefined).sort();
const plain = (x) => (ArrayBuffer.isView(x) ? Array.from(x) : Array.isArray(x) ? x.map(plain)
  : isObject(x) ? Object.fromEntries(Object.keys(x).map((k) => [k, plain(x[k])])) : x);
const draw = (st) => plain({figure: M.figure(st), alt: M.alt(st), readout: M.readoutHtml(st)});
// to_js's arrays as the kernel sends them: a buffer view, as anywidget hands decode one
const wired = (x) => (Array.isArray(x) ? x.map(wired) : !isObject(x) ? x
  : x.$array ? {...x, buffer: Buffer.from(x.b64, "base64")}
    : Object.fromEntries(Object.entries(x).map(([k, v]) => [k, wired(v)])));

/** The first difference between drawings a and b as [where, a, b], or null; counts leaves. */
function difference(a, b, where, count) {
  [a, b] = [asJson(a), asJson(b)];
  if (isObject(a)) {
    const ka = keys(a), kb = isObject(b) ? keys(b) : null;
    if (!kb || ka.join("\n") !== kb.join("\n")) { return [where + " (keys)", ka, kb]; }
    for (const k of ka) {
      const d = difference(a[k], b[k], where + "." + k, count);
      if (d) { return d; }
    }
    return null;
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) { return [where + " (length)", a, b]; }
    for (let k = 0; k < a.length; k++) {
      const d = difference(a[k], b[k], where + "[" + k + "]", count);
      if (d) { return d; }
    }
    return null;
  }
  count.leaves += 1;
  if (typeof a === "number" && typeof b === "number") { return near(a, b) ? null : [where, a, b]; }
  if (typeof a === "string" && typeof b === "string") {  // the numbers in a text within TOL too
    // (a round-off error printed: "max error 6e-14" from Python's state, "5e-14" from JS's)
    const pa = a.split(NUMBER), pb = b.split(NUMBER);
    const ok = pa.length === pb.length && pa.every((p, i) => (i % 2 ? near(Number(p), Number(pb[i])) : p === pb[i]));
    return ok ? null : [where, a, b];
  }
  return a === b ? null : [where, a, b];
}

function drawings() {
  return input.map(({values, py}) => {
    const count = {leaves: 0};
    const diff = difference(draw(decode(wired(py))), draw(M.state(values)), "", count);
    return {leaves: count.leaves, diff};
  });
}

const out = command === "state" ? await states() : command === "draw" ? drawings() : null;
if (out === null) { throw new Error(`usage: twin.mjs state|draw <lab> ...: got ${command}`); }
process.stdout.write(JSON.stringify(out));
