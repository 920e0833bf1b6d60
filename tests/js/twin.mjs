// The twin contract's Node side (tests/test_web_twins.py), on a lab's ES source module
// (web/src/labs/<lab>.js):
//   twin.state <lab> [data.js]  < [values, ...]
//     -> [{state} | {error}, ...], typed arrays as {typed, f8} (their float64 bytes, base64)
//   twin.draw <lab> <TOL>  < [{values, py}, ...]
//     -> [{leaves, diff}, ...]: the module's drawing ({figure, readout, alt}) of Python's
//        state `py` (to_js's, its buffers as base64), decoded by the widget's own decode.js,
//        against its drawing of its own state(values), compared here (numbers, also those
//        printed in texts, within TOL); diff is the first difference [where, a, b] or null,
//        leaves how many numbers and texts were compared.
import {classic, lab, plain, source, typed, wired} from "./common.mjs";

export const state = async (input, name, data) => {
  const M = await lab(name);
  if (data) {  // the data file the module reads: a classic script, which sets its globals
    const given = classic(data);
    if (M.useData) M.useData(given);  // (chapter 8's checkpoints, handed to the module)
  }
  const out = [];
  for (const values of input) {
    try { out.push({state: typed(await M.state(values))}); } catch (e) { out.push({error: e.message}); }
  }
  return out;
};

const NUMBER = /(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)/;
const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x);
// as JSON has them: NaN, infinities and undefined are null, keys of undefined left out
const asJson = (x) => (x === undefined || (typeof x === "number" && !Number.isFinite(x)) ? null : x);
const keys = (x) => Object.keys(x).filter((k) => x[k] !== undefined).sort();

/** The first difference between drawings a and b as [where, a, b], or null; counts leaves. */
function difference(a, b, where, count, near) {
  [a, b] = [asJson(a), asJson(b)];
  if (isObject(a)) {
    const ka = keys(a), kb = isObject(b) ? keys(b) : null;
    if (!kb || ka.join("\n") !== kb.join("\n")) { return [where + " (keys)", ka, kb]; }
    for (const k of ka) {
      const d = difference(a[k], b[k], where + "." + k, count, near);
      if (d) { return d; }
    }
    return null;
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) { return [where + " (length)", a, b]; }
    for (let k = 0; k < a.length; k++) {
      const d = difference(a[k], b[k], where + "[" + k + "]", count, near);
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

export const draw = async (input, name, tol) => {
  const M = await lab(name);
  const {decode} = await source("decode.js");
  const TOL = Number(tol);
  const near = (a, b) => a === b || Math.abs(a - b) <= TOL * Math.max(1, Math.abs(b));
  const drawing = (st) => plain({figure: M.figure(st), alt: M.alt(st), readout: M.readoutHtml(st)});
  return input.map(({values, py}) => {
    const count = {leaves: 0};
    const diff = difference(drawing(decode(wired(py))), drawing(M.state(values)), "", count, near);
    return {leaves: count.leaves, diff};
  });
};
