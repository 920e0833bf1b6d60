// Node driver of the browser labs' parity tests (tests/test_web_states.py,
// test_web_training.py, ...) and of benchmarks/browser_states.py and browser_training.py:
// runs a lab's state module (src/attention_book/web/src/labs/<module>.js, the ES source) on the control values read
// from stdin (JSON list) and writes, for each, what the page would show (JSON): every typed
// array of the state as base64 of its float64 bytes (bit for bit), the other fields as JSON,
// the readout's HTML, the alt text and the numbers a reader downloads (numbers(state), plain
// JSON); or {"error": message} when the state function throws.
//   node web_states_driver.js <module> [--data FILE] [--figure] [--no-numbers] [--time N]
// --data: a data script the module reads (chapter 8's training-checkpoints.js), given to its
//   useData() (in a page it is a <script> before the module); its load time is reported.
// --figure: also figure(state), its typed arrays as plain lists.
// --no-numbers: leave out numbers(state) (60% of the output's bytes, for tests that do not
//   read it: JSON.stringify and Python's json.loads of its decimals cost most of a run).
// --time: N runs of each after a warm-up: the median wall ms and the mean CPU ms with the
//   caches warm, and with every cache emptied first (a change that must draw its random
//   numbers, or decode its checkpoints, afresh).
"use strict";
const fs = require("fs");
const path = require("path");

const {pathToFileURL} = require("url");

const SRC = path.join(__dirname, "..", "src", "attention_book", "web", "src");
const load = async (file) => (await import(pathToFileURL(path.join(SRC, file)).href)).default;

(async () => {  // the sources are ES modules: imported, not required
  const M = await load(path.join("labs", process.argv[2] + ".js"));
  const matrices = await import(pathToFileURL(path.join(SRC, "shared", "matrices.js")).href);
  const args = process.argv.slice(3);
  const option = (name) => { const i = args.indexOf(name); return i < 0 ? null : args[i + 1]; };
  const timeRuns = option("--time") ? parseInt(option("--time"), 10) : 0;
  const withFigure = args.includes("--figure");
  const withNumbers = !args.includes("--no-numbers");
  let loadMs = null;
  if (option("--data")) {
    const t0 = process.hrtime.bigint();
    M.useData(require(path.resolve(option("--data"))));
    loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  }

  function b64(a) {
    const f = Float64Array.from(a);
    return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString("base64");
  }

  // typed arrays (also inside plain arrays and objects) -> typed(array)
  function plain(x, typed) {
    if (ArrayBuffer.isView(x)) return typed(x);
    if (Array.isArray(x)) return x.map((v) => plain(v, typed));
    if (x !== null && typeof x === "object") {
      const out = {};
      for (const k of Object.keys(x)) out[k] = plain(x[k], typed);
      return out;
    }
    return x;
  }

  const list = JSON.parse(fs.readFileSync(0, "utf8"));
  const out = list.map((values) => {
    let st;
    try {
      st = M.state(values);
    } catch (e) {
      return {error: e.message};
    }
    const row = {state: plain(st, (a) => ({f8: b64(a)})), readout: M.readoutHtml(st), alt: M.alt(st),
      numbers: M.numbers && withNumbers ? M.numbers(st) : null};
    if (withFigure) row.figure = plain(M.figure(st), (a) => Array.from(a));
    if (timeRuns) {  // the state, readout and alt text of a change, as the page computes them
    // median wall time, and mean CPU time (steadier on a shared machine; µs resolution)
      const measure = (cold) => {
        const ms = [];
        let cpu = 0;
        for (let i = 0; i < timeRuns; i++) {
          if (cold) matrices.clearCaches();
          const c0 = process.cpuUsage(), t0 = process.hrtime.bigint();
          const s2 = M.state(values); M.readoutHtml(s2); M.alt(s2);
          ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
          const c = process.cpuUsage(c0);
          cpu += (c.user + c.system) / 1000;
        }
        ms.sort((a, b) => a - b);
        return [ms[ms.length >> 1], cpu / timeRuns];
      };
      measure(false);  // warm-up: the JIT compiles
      [row.warm_ms, row.warm_cpu_ms] = measure(false);
      [row.cold_ms, row.cold_cpu_ms] = measure(true);
      row.load_ms = loadMs;
      row.state = row.numbers = row.figure = null;
    }
    return row;
  });
  process.stdout.write(JSON.stringify(out));
})().catch((err) => { console.error(err); process.exit(1); });
