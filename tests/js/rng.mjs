// rng.js (web/src/shared/rng.js, the ES source) for tests/test_web_rng.py: what it draws,
// arrays as base64 of their little-endian bytes, so doubles arrive bit for bit.
//
//   rng.draw < {"jobs": [{"seed": SEED, "calls": [CALL, ...]}, ...],
//               "bad_seeds": [SEED, ...], "bad_counts": [N, ...], "browser": true}
//   SEED:   a number, {"bigint": "decimal digits"}, or an array of these
//   CALL:   ["standardNormal", n] | ["normal", loc, scale, n] | ["random", n] |
//           ["permutation", n] | ["raw", n] (n pcg64 outputs as [hi, lo] uint32 pairs) |
//           ["state", n] (SeedSequence(seed).generate_state(n, uint32); no generator)
//   -> {"jobs": [[{"dtype": "<f8" | "<i4" | "<u4", "b64": ...}, ...], ...],
//       "bad_seeds": [error message or null, ...], "bad_counts": [...],
//       "browser": [three normals of seed 0, drawn through globalThis.AttentionBook.rng]}
import vm from "node:vm";

import {build, bytes64, errorOf, source} from "./common.mjs";

const seedOf = (spec) => (Array.isArray(spec) ? spec.map(seedOf)
  : spec !== null && typeof spec === "object" && "bigint" in spec ? BigInt(spec.bigint) : spec);

const encode = (array, dtype) => ({dtype, b64: bytes64(array)});

const CALLS = {
  standardNormal: (g, n) => encode(g.standardNormal(n), "<f8"),
  normal: (g, loc, scale, n) => encode(g.normal(loc, scale, n), "<f8"),
  random: (g, n) => encode(g.random(n), "<f8"),
  permutation: (g, n) => encode(g.permutation(n), "<i4"),
  raw: (g, n) => {
    const out = new Uint32Array(2 * n);
    for (let i = 0; i < n; i++) out.set(g.nextUint64(), 2 * i);
    return encode(out, "<u4");
  },
};

export const draw = async (request) => {
  const rng = await source("shared/rng.js");
  const run = (job) => {
    const seed = seedOf(job.seed);
    let generator = null;
    return job.calls.map(([name, ...args]) => {
      if (name === "state") return encode(Uint32Array.from(rng.seedSequenceState(seed, args[0])), "<u4");
      if (!CALLS[name]) throw new Error(`unknown call ${name}`);
      generator = generator || rng.defaultRng(seed);
      return CALLS[name](generator, ...args);
    });
  };
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
    const {classicScript} = await build();
    const page = {};
    vm.runInNewContext(await classicScript("shared/rng.js", "rng"), page, {filename: "rng.js"});
    reply.browser = Array.from(page.AttentionBook.rng.defaultRng(0).standardNormal(3));
  }
  return reply;
};
