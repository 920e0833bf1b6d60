// What a lab shows a reader without JavaScript (controls/web.py's present): for each state of
// stdin (scenes.core.to_js's, its binary arrays as base64), the lab's own module, as its
// bundle web/<lab>.js holds it, presents it as the page does: {alt, readout}, the readout
// being readoutHtml(state).
//   node present.cjs <lab>  < [state, ...]   ->  [{alt, readout}, ...]
const {decode} = require(`${__dirname}/lab.js`);  // the front end and the code the labs share
const M = require(`${__dirname}/${process.argv[2]}.js`);
const sent = JSON.parse(require("node:fs").readFileSync(0, "utf8"),
                        (k, v) => (k === "buffer" && typeof v === "string" ? Buffer.from(v, "base64") : v));
process.stdout.write(JSON.stringify(sent.map(decode).map((st) => ({alt: M.alt(st), readout: M.readoutHtml(st)}))));
