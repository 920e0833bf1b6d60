// Draws per second of src/attention_book/web/rng.js (numpy's default_rng in JavaScript),
// and of the same PCG64 done with BigInt, the alternative it was measured against.
// Run by benchmarks/browser_rng.py in Node and in chromium; on its own:
//     node benchmarks/browser_rng.js [n] [repeats]      (prints JSON rows)
// A classic script: in a page it defines globalThis.browserRngBenchmark(rngApi, n, repeats).
(function (root) {
  "use strict";

  // PCG64 (numpy's pcg64_next64: 128-bit LCG, XSL-RR output) with BigInt arithmetic,
  // seeded like rng.js from SeedSequence's 8 words; returns (next64 >> 11) * 2^-53.
  function bigIntDoubles(words, n) {
    const B = BigInt;
    const MASK128 = (B(1) << B(128)) - B(1), MASK64 = (B(1) << B(64)) - B(1);
    const MULT = (B("2549297995355413924") << B(64)) + B("4865540595714422341");
    function u64(lo, hi) { return (B(hi) << B(32)) | B(lo); }
    const initState = (u64(words[0], words[1]) << B(64)) | u64(words[2], words[3]);
    const initSeq = (u64(words[4], words[5]) << B(64)) | u64(words[6], words[7]);
    const inc = ((initSeq << B(1)) | B(1)) & MASK128;
    let state = inc; // state = 0 * MULT + inc
    state = (((state + initState) & MASK128) * MULT + inc) & MASK128;
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      state = (state * MULT + inc) & MASK128;
      const x = ((state >> B(64)) ^ state) & MASK64;
      const rot = state >> B(122);
      const r = ((x >> rot) | (x << ((B(64) - rot) & B(63)))) & MASK64;
      out[i] = Number(r >> B(11)) * Math.pow(2, -53);
    }
    return out;
  }

  function median(values) {
    const s = values.slice().sort((a, b) => { return a - b; });
    return s[Math.floor(s.length / 2)];
  }

  function browserRngBenchmark(rng, n, repeats) {
    const cases = [
      ["standardNormal", function (g) { return g.standardNormal(n); }],
      ["normal(0, 0.35)", function (g) { return g.normal(0, 0.35, n); }],
      ["random", function (g) { return g.random(n); }],
      ["permutation", function (g) { return g.permutation(n); }],
      ["random, BigInt PCG64", null],
      ["defaultRng(seed), 1000 seeds", null],
    ];
    const words = rng.seedSequenceState(0, 8);
    // the BigInt twin draws numpy's doubles too: check it before timing it
    const check = bigIntDoubles(words, 1000), ref = rng.defaultRng(0).random(1000);
    for (let k = 0; k < 1000; k++) {
      if (check[k] !== ref[k]) throw new Error("the BigInt PCG64 differs at " + k);
    }
    return cases.map((c) => {
      const times = [], cpu = [];
      const seeding = c[0].indexOf("1000 seeds") >= 0;
      const draws = seeding ? 1000 : n;
      // CPU time where there is one (Node): on a shared machine it hardly changes with the
      // load, while the wall time does
      const cpuUsage = typeof process === "object" && process.cpuUsage ? process.cpuUsage : null;
      for (let rep = 0; rep < repeats + 1; rep++) {
        const c0 = cpuUsage && cpuUsage();
        const t0 = performance.now();
        if (c[1]) c[1](rng.defaultRng(rep));
        else if (seeding) for (let s = 0; s < 1000; s++) rng.defaultRng(s);
        else bigIntDoubles(words, n);
        const dt = performance.now() - t0;
        const du = cpuUsage && cpuUsage(c0);
        if (rep > 0) { // the first run warms the JIT up
          times.push(dt);
          if (du) cpu.push((du.user + du.system) / 1000);
        }
      }
      const ms = median(times);
      return {what: c[0], n: draws, median_ms: ms, min_ms: Math.min.apply(null, times),
        cpu_median_ms: cpu.length ? median(cpu) : null, draws_per_s: draws / (ms / 1000)};
    });
  }

  if (typeof module === "object" && module && module.exports && require.main === module) {
    const n = Number(process.argv[2] || 100000), repeats = Number(process.argv[3] || 15);
    import("../src/attention_book/web/src/shared/rng.js").then((m) => {  // an ES module
      process.stdout.write(JSON.stringify(browserRngBenchmark(m, n, repeats)) + "\n");
    });
  } else {
    root.browserRngBenchmark = browserRngBenchmark;
  }
})(typeof globalThis !== "undefined" ? globalThis : this);
