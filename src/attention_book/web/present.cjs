// What a lab shows a reader without JavaScript (controls/web.py's present): for each state of
// stdin (scenes.core.to_js's, its binary arrays as base64), the lab's own module, as its
// bundle web/<lab>.js holds it, presents it as the page does: {alt, readout}, the readout
// being readoutHtml(state) or the {lines, notes, mono} of readout(state).
//   node present.cjs <lab>  < [state, ...]   ->  [{alt, readout}, ...]
const M = require(`${__dirname}/${process.argv[2]}.js`);
const TYPED = {float64: Float64Array, float32: Float32Array, int32: Int32Array, uint8: Uint8Array};
const decode = (x) => Array.isArray(x) ? x.map(decode) : (x === null || typeof x !== "object") ? x :
  x.$array ? new TYPED[x.$array](Uint8Array.from(Buffer.from(x.b64, "base64")).buffer) :
  Object.fromEntries(Object.entries(x).map(([k, v]) => [k, decode(v)]));
const states = JSON.parse(require("node:fs").readFileSync(0, "utf8")).map(decode);
process.stdout.write(JSON.stringify(states.map((st) => (
  {alt: M.alt(st), readout: M.readoutHtml ? M.readoutHtml(st) : M.readout(st)}))));
