// Node driver of tests/test_web_training.py and benchmarks/browser_training.py: runs
// src/attention_book/web/training.js on a training-checkpoints.js file and the control
// values read from stdin (JSON list), and writes for each what the page would show (JSON):
// the state's maps as base64 of their float64 bytes (bit for bit), its other fields as
// JSON, the readout's HTML, the alt text, numbers(state) and figure(state) (its typed
// arrays as plain lists); or {"error": message} when the state function throws.
//   node web_training_driver.js <training-checkpoints.js> [--time N]
// --time: N runs of each after a warm-up: median wall ms and mean CPU ms of state + readout
// + alt, warm (checkpoints decoded) and cold (every decoded checkpoint forgotten first, so
// the change decodes the chain up to its checkpoint).
"use strict";
const fs = require("fs");
const path = require("path");

const WEB = path.join(__dirname, "..", "src", "attention_book", "web");
const core = require(path.join(WEB, "core.js"));
const M = require(path.join(WEB, "training.js"));
const ms = () => Number(process.hrtime.bigint()) / 1e6;
let t0 = ms();
const data = require(path.resolve(process.argv[2]));
const loadMs = ms() - t0;
M.useData(data);
const timeRuns = process.argv[3] === "--time" ? parseInt(process.argv[4], 10) : 0;

function b64(a) {
  const f = Float64Array.from(a);
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString("base64");
}

function plain(x, typed) {
  if (ArrayBuffer.isView(x)) return typed(x);
  if (Array.isArray(x)) return x.map(v => plain(v, typed));
  if (x !== null && typeof x === "object") {
    const out = {};
    for (const k of Object.keys(x)) out[k] = plain(x[k], typed);
    return out;
  }
  return x;
}

const list = JSON.parse(fs.readFileSync(0, "utf8"));
const out = list.map(values => {
  let st;
  try {
    st = M.state(values);
  } catch (e) {
    return {error: e.message};
  }
  const row = {state: plain(st, a => ({f8: b64(a)})), readout: M.readoutHtml(st), alt: M.alt(st),
               numbers: M.numbers(st), figure: plain(M.figure(st), a => Array.from(a))};
  if (timeRuns) {
    const measure = cold => {
      const times = [];
      let cpu = 0;
      for (let i = 0; i < timeRuns; i++) {
        if (cold) core.clearCaches();
        const c0 = process.cpuUsage(), t = process.hrtime.bigint();
        const s2 = M.state(values); M.readoutHtml(s2); M.alt(s2);
        times.push(Number(process.hrtime.bigint() - t) / 1e6);
        const c = process.cpuUsage(c0);
        cpu += (c.user + c.system) / 1000;
      }
      times.sort((a, b) => a - b);
      return [times[times.length >> 1], cpu / timeRuns];
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
