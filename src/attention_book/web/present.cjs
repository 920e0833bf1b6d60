// What a lab shows a reader without JavaScript (controls/web.py's present): for each state of
// stdin (scenes.core.to_js's, its binary arrays as base64), the lab's own module, as its
// bundle web/<lab>.js holds it, presents it as the page does: {alt, readout}, the readout
// being readoutHtml(state). The bundles are loaded in the page's order, lab.js first.
//   node present.cjs lab.js [other.js ...] <lab>.js  < [state, ...]  ->  [{alt, readout}, ...]
const loaded = process.argv.slice(2).map((name) => require(`${__dirname}/${name}`));
const {decode} = loaded[0], M = loaded[loaded.length - 1];
const sent = JSON.parse(require("node:fs").readFileSync(0, "utf8"),
  (k, v) => (k === "buffer" && typeof v === "string" ? Buffer.from(v, "base64") : v));
process.stdout.write(JSON.stringify(sent.map(decode).map((st) => ({alt: M.alt(st), readout: M.readoutHtml(st)}))));
