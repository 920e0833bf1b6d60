// Node driver of tests/test_web_rng.py: runs src/attention_book/web/src/shared/rng.js (the ES source) on the jobs read
// from stdin (JSON) and writes what it drew to stdout (JSON; arrays as base64 of their
// little-endian bytes, so doubles arrive bit for bit).
//
// stdin:  {"jobs": [{"seed": SEED, "calls": [CALL, ...]}, ...],
//          "bad_seeds": [SEED, ...], "bad_counts": [N, ...], "browser": true}
// SEED:   a number, {"bigint": "decimal digits"}, or an array of these
// CALL:   ["standardNormal", n] | ["normal", loc, scale, n] | ["random", n] |
//         ["permutation", n] | ["raw", n] (n pcg64 outputs as [hi, lo] uint32 pairs) |
//         ["state", n] (SeedSequence(seed).generate_state(n, uint32); no generator)
// stdout: {"jobs": [[{"dtype": "<f8" | "<i4" | "<u4", "b64": ...}, ...], ...],
//          "bad_seeds": [error message or null, ...], "bad_counts": [...],
//          "browser": [three normals of seed 0, drawn through globalThis.AttentionBook.rng]}
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

const {pathToFileURL} = require("url");

const WEB = path.join(__dirname, "..", "src", "attention_book", "web");
const RNG_JS = path.join(WEB, "src", "shared", "rng.js");

(async () => {  // the source is an ES module: imported, not required
  const rng = await import(pathToFileURL(RNG_JS).href);

  function seedOf(spec) {
    if (Array.isArray(spec)) return spec.map(seedOf);
    if (spec !== null && typeof spec === "object" && "bigint" in spec) return BigInt(spec.bigint);
    return spec;
  }

  function encode(array, dtype) {
    const bytes = Buffer.from(array.buffer, array.byteOffset, array.byteLength);
    return {dtype, b64: bytes.toString("base64")};
  }

  function run(job) {
    const seed = seedOf(job.seed);
    let generator = null;
    return job.calls.map((call) => {
      const name = call[0];
      if (name === "state") {
        return encode(Uint32Array.from(rng.seedSequenceState(seed, call[1])), "<u4");
      }
      generator = generator || rng.defaultRng(seed);
      if (name === "standardNormal") return encode(generator.standardNormal(call[1]), "<f8");
      if (name === "normal") return encode(generator.normal(call[1], call[2], call[3]), "<f8");
      if (name === "random") return encode(generator.random(call[1]), "<f8");
      if (name === "permutation") return encode(generator.permutation(call[1]), "<i4");
      if (name === "raw") {
        const out = new Uint32Array(2 * call[1]);
        for (let i = 0; i < call[1]; i++) out.set(generator.nextUint64(), 2 * i);
        return encode(out, "<u4");
      }
      throw new Error("unknown call " + name);
    });
  }

  function errorOf(f) {
    try {
      f();
      return null;
    } catch (error) {
      return error.constructor.name + ": " + error.message;
    }
  }

  const request = JSON.parse(fs.readFileSync(0, "utf8"));
  const reply = {jobs: (request.jobs || []).map(run)};
  if (request.bad_seeds) {
    reply.bad_seeds = request.bad_seeds.map((s) => errorOf(() => rng.defaultRng(seedOf(s))));
  }
  if (request.bad_counts) {
    const g = rng.defaultRng(0);
    reply.bad_counts = request.bad_counts.map((n) => errorOf(() => g.standardNormal(n)));
  }
  if (request.browser) {
  // As a page loads it: bundled by build.mjs into a classic script, run in a global without
  // `module` (file:// pages).
    const build = await import(pathToFileURL(path.join(WEB, "build.mjs")).href);
    const page = {};
    vm.runInNewContext(await build.classicScript("shared/rng.js", "rng"), page, {filename: "rng.js"});
    reply.browser = Array.from(page.AttentionBook.rng.defaultRng(0).standardNormal(3));
  }
  process.stdout.write(JSON.stringify(reply));
})().catch((err) => { console.error(err); process.exit(1); });
