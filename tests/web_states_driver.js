// Node driver of tests/test_web_states.py: runs a lab's state module
// (src/attention_book/web/<module>.js) on the control values read from stdin (JSON list)
// and writes, for each, what the page would show (JSON): every typed array of the state
// as base64 of its float64 bytes (bit for bit), the other fields as JSON, the readout's
// HTML, the alt text and the numbers a reader downloads (numbers(state), plain JSON);
// or {"error": message} when the state function throws.
//   node web_states_driver.js <module> [--time N]   (--time: N runs of each after a warm-up:
//   the median wall ms and the mean CPU ms with the caches warm, and with every cache
//   emptied first: a change that must draw its random numbers afresh)
"use strict";
const fs = require("fs");
const path = require("path");

const WEB = path.join(__dirname, "..", "src", "attention_book", "web");
const M = require(path.join(WEB, process.argv[2] + ".js"));
const core = require(path.join(WEB, "core.js"));
const timeRuns = process.argv[3] === "--time" ? parseInt(process.argv[4], 10) : 0;

function b64(a) {
  const f = Float64Array.from(a);
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString("base64");
}

// typed arrays (also inside plain arrays, e.g. one per head) -> {"f8": base64}
function plain(x) {
  if (ArrayBuffer.isView(x)) return {f8: b64(x)};
  if (Array.isArray(x)) return x.map(plain);
  if (x !== null && typeof x === "object") {
    const out = {};
    for (const k of Object.keys(x)) out[k] = plain(x[k]);
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
  const row = {state: plain(st), readout: M.readoutHtml(st), alt: M.alt(st),
               numbers: M.numbers ? M.numbers(st) : null};
  if (timeRuns) {  // the state, readout and alt text of a change, as the page computes them
    // median wall time, and mean CPU time (steadier on a shared machine; µs resolution)
    const measure = cold => {
      const ms = [];
      let cpu = 0;
      for (let i = 0; i < timeRuns; i++) {
        if (cold) core.clearCaches();
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
    row.state = null;
  }
  return row;
});
process.stdout.write(JSON.stringify(out));
