/*
 * rng.js: numpy's default random generator, np.random.default_rng(seed), ported
 * exactly to JavaScript, so that the book's pages draw the same random weights as the
 * Python package (the browser computes every lab's state).
 *
 *   const g = rng.defaultRng(0);   // import rng from "./rng.js"
 *   rng.standardNormal(5)        // == np.random.default_rng(0).standard_normal(5)
 *
 * Generator(PCG64(SeedSequence(seed))), read in numpy v2.4.6's source (the version the book
 * pins; commit b832a09cf2a169c833dd2371e7c07aa00b293242). numpy promises a Generator's
 * stream only per version: tests/test_web_rng.py compares with the installed numpy.
 * Each piece mirrors:
 *   - SeedSequence(seed).generate_state(4, uint64)   numpy/random/bit_generator.pyx
 *   - PCG64: 128-bit LCG, XSL-RR output, and the     numpy/random/src/pcg64/pcg64.h,
 *     32-bit half buffer of next_uint32               numpy/random/_pcg64.pyx
 *   - standard_normal: the 256-step ziggurat          distributions.c random_standard_normal
 *   - normal, random, permutation                    distributions.c, _generator.pyx
 *
 * What the package draws (every rng use reached by a scene's state function):
 * default_rng(int) and default_rng([seed, 1]); .standard_normal(shape), .normal(0, std,
 * shape), .permutation(s). numpy fills an array of any shape in C order from one stream,
 * so a (rows, cols) draw is `rows * cols` draws here, row after row. Not ported, as the
 * package never calls them: integers() (Lemire's bounded integers, random_bounded_uint64;
 * permutation does not use them: numpy's shuffle takes random_interval) and the rest.
 *
 * Numbers: 128-bit arithmetic is done on eight 16-bit limbs held in doubles (every
 * partial sum stays below 2^53, so it is exact): 4x faster than BigInt in Node 20 and 2-3x
 * in chromium (benchmarks/browser_rng.py measures both; 10^5 normals take about 5 ms of
 * CPU here). 64-bit outputs are handled as two uint32 halves (hi, lo).
 *
 * An ES module (its default export; numpy's tables from rng-tables.js), bundled by
 * build.mjs into the labs' classic scripts.
 */
// The ziggurat tables, written by make_rng_tables.py from numpy's source.
import {FI, KI, WI, ZIGGURAT_NOR_INV_R, ZIGGURAT_NOR_R} from "./rng-tables.js";

const TWO16 = 65536;
const TWO32 = 4294967296;
const TWO_53_INV = 1.0 / 9007199254740992.0; // 2^-53, as numpy's uint64_to_double

// ---------------------------------------------------------------- SeedSequence
// numpy/random/bit_generator.pyx: constants of SeedSequence's hash (uint32 arithmetic).
const INIT_A = 0x43b0d7e5;
const MULT_A = 0x931e8875;
const INIT_B = 0x8b51f9dd;
const MULT_B = 0x58f38ded;
const MIX_MULT_L = 0xca01f9dd;
const MIX_MULT_R = 0x4973f715;
const POOL_SIZE = 4; // DEFAULT_POOL_SIZE

function seedError(seed) {
  return new RangeError(
    "seed must be a whole number >= 0 (a Number up to 2^53 - 1 or a BigInt) or a " +
      "non-empty array of them, got " + String(seed));
}

// _int_to_uint32_array: a non-negative integer as uint32 words, lowest first; 0 -> [0].
function intToWords(n, seed) {
  const words = [];
  if (typeof n === "bigint") {
    if (n < BigInt(0)) throw seedError(seed);
    if (n === BigInt(0)) return [0];
    const big32 = BigInt(TWO32);
    while (n > BigInt(0)) {
      words.push(Number(n % big32));
      n = n / big32;
    }
    return words;
  }
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) throw seedError(seed);
  if (n === 0) return [0];
  while (n > 0) {
    words.push(n % TWO32);
    n = Math.floor(n / TWO32);
  }
  return words;
}

// _coerce_to_uint32_array: an integer, or a flat sequence of integers concatenated.
function seedWords(seed) {
  if (Array.isArray(seed)) {
    if (seed.length === 0) throw seedError(seed);
    let words = [];
    for (let i = 0; i < seed.length; i++) {
      if (Array.isArray(seed[i])) throw seedError(seed);
      words = words.concat(intToWords(seed[i], seed));
    }
    return words;
  }
  return intToWords(seed, seed);
}

// hashmix (bit_generator.pyx); hash[0] is the running multiplier, updated in place.
function hashmix(value, hash) {
  value = (value ^ hash[0]) >>> 0;
  hash[0] = Math.imul(hash[0], MULT_A) >>> 0;
  value = Math.imul(value, hash[0]) >>> 0;
  return (value ^ (value >>> 16)) >>> 0;
}

// mix (bit_generator.pyx): MIX_MULT_L * x - MIX_MULT_R * y, modulo 2^32.
function mix(x, y) {
  const result = (Math.imul(MIX_MULT_L, x) - Math.imul(MIX_MULT_R, y)) >>> 0;
  return (result ^ (result >>> 16)) >>> 0;
}

// SeedSequence(entropy).pool, via mix_entropy (no spawn key, pool_size 4).
function seedPool(entropy) {
  const hash = [INIT_A];
  const pool = [];
  let i, src, dst;
  for (i = 0; i < POOL_SIZE; i++) {
    pool.push(hashmix(i < entropy.length ? entropy[i] : 0, hash));
  }
  for (src = 0; src < POOL_SIZE; src++) {
    for (dst = 0; dst < POOL_SIZE; dst++) {
      if (src !== dst) pool[dst] = mix(pool[dst], hashmix(pool[src], hash));
    }
  }
  for (src = POOL_SIZE; src < entropy.length; src++) {
    for (dst = 0; dst < POOL_SIZE; dst++) {
      pool[dst] = mix(pool[dst], hashmix(entropy[src], hash));
    }
  }
  return pool;
}

// SeedSequence.generate_state(nWords32, uint32): the pool cycled through a second hash.
function generateState(pool, nWords32) {
  let hash = INIT_B;
  const state = [];
  for (let i = 0; i < nWords32; i++) {
    let value = (pool[i % pool.length] ^ hash) >>> 0;
    hash = Math.imul(hash, MULT_B) >>> 0;
    value = Math.imul(value, hash) >>> 0;
    state.push((value ^ (value >>> 16)) >>> 0);
  }
  return state;
}

/**
 * numpy's SeedSequence(seed).generate_state(n, np.uint32), as an array of n uint32.
 * generate_state(4, np.uint64) is the same 8 words read as little-endian uint64 pairs.
 */
function seedSequenceState(seed, nWords32) {
  return generateState(seedPool(seedWords(seed)), nWords32);
}

// ---------------------------------------------------------------- PCG64
// PCG_DEFAULT_MULTIPLIER_128 = 2549297995355413924 * 2^64 + 4865540595714422341
// = 0x2360ed051fc65da4_4385df649fccf645, as 16-bit limbs, lowest first.
const M0 = 0xf645, M1 = 0x9fcc, M2 = 0xdf64, M3 = 0x4385;
const M4 = 0x5da4, M5 = 0x1fc6, M6 = 0xed05, M7 = 0x2360;
const INV16 = 1 / TWO16;
// Outputs computed per refill of a generator's block (see Generator).
const BLOCK = 256;

// 16-bit limbs (lowest first) of the 128-bit number with uint32 words w3 (top) .. w0.
function limbs(w3, w2, w1, w0) {
  return [w0 & 0xffff, w0 >>> 16, w1 & 0xffff, w1 >>> 16,
    w2 & 0xffff, w2 >>> 16, w3 & 0xffff, w3 >>> 16];
}

/**
 * PCG64's 128-bit LCG, state = state * MULT + inc (mod 2^128): numpy's
 * pcg_setseq_128_step_r, run `n` times on the limbs S[0..7] (S[0] lowest; inc in
 * S[8..15]). With out arrays it writes each new state's XSL-RR output (numpy's
 * pcg_output_xsl_rr_128_64: rotr64(high64 ^ low64, high64 >> 58)) as uint32 halves
 * outHi[i], outLo[i].
 *
 * Exact in doubles: a limb is < 2^16, a column of the schoolbook product sums at most
 * 8 products < 2^32 plus a carry (< 2^36 << 2^53). Speed (V8, this is the one hot loop
 * of the file): carries are taken with Math.floor (a bitwise & on sums past 2^31 takes a
 * slow truncation path); each column's products are summed before its carry is added,
 * so only one addition waits for the previous column (carry-first sums ran 1.6x slower);
 * the limbs live in locals for the whole loop.
 */
function runLcg(S, n, outHi, outLo) {
  let s0 = S[0], s1 = S[1], s2 = S[2], s3 = S[3], s4 = S[4], s5 = S[5], s6 = S[6], s7 = S[7];
  const c0 = S[8], c1 = S[9], c2 = S[10], c3 = S[11];
  const c4 = S[12], c5 = S[13], c6 = S[14], c7 = S[15];
  let t, c, n0, n1, n2, n3, n4, n5, n6, xh, xl, rot, r, a, b;
  for (let i = 0; i < n; i++) {
    t = s0 * M0 + c0;
    c = Math.floor(t * INV16); n0 = t - c * TWO16;
    t = (s0 * M1 + s1 * M0 + c1) + c;
    c = Math.floor(t * INV16); n1 = t - c * TWO16;
    t = (s0 * M2 + s1 * M1 + s2 * M0 + c2) + c;
    c = Math.floor(t * INV16); n2 = t - c * TWO16;
    t = (s0 * M3 + s1 * M2 + s2 * M1 + s3 * M0 + c3) + c;
    c = Math.floor(t * INV16); n3 = t - c * TWO16;
    t = (s0 * M4 + s1 * M3 + s2 * M2 + s3 * M1 + s4 * M0 + c4) + c;
    c = Math.floor(t * INV16); n4 = t - c * TWO16;
    t = (s0 * M5 + s1 * M4 + s2 * M3 + s3 * M2 + s4 * M1 + s5 * M0 + c5) + c;
    c = Math.floor(t * INV16); n5 = t - c * TWO16;
    t = (s0 * M6 + s1 * M5 + s2 * M4 + s3 * M3 + s4 * M2 + s5 * M1 + s6 * M0 + c6) + c;
    c = Math.floor(t * INV16); n6 = t - c * TWO16;
    t = s0 * M7 + s1 * M6 + s2 * M5 + s3 * M4 + s4 * M3 + s5 * M2 + s6 * M1 + s7 * M0 + c7 +
      c;
    s7 = t - Math.floor(t * INV16) * TWO16;
    s0 = n0; s1 = n1; s2 = n2; s3 = n3; s4 = n4; s5 = n5; s6 = n6;
    if (outHi) {
      xh = ((s7 << 16) | s6) ^ ((s3 << 16) | s2); // high64 ^ low64, as two halves
      xl = ((s5 << 16) | s4) ^ ((s1 << 16) | s0);
      rot = s7 >>> 10; // high64 >> 58: the state's top 6 bits
      // rotr64 on two halves: by 32 or more swaps them, then both turn by r = rot & 31
      // (x << (31 - r) << 1 is 0 when r = 0, where x << 32 would be x)
      r = rot & 31;
      a = rot >= 32 ? xl : xh;
      b = rot >= 32 ? xh : xl;
      outHi[i] = (a >>> r) | ((b << (31 - r)) << 1);
      outLo[i] = (b >>> r) | ((a << (31 - r)) << 1);
    }
  }
  S[0] = s0; S[1] = s1; S[2] = s2; S[3] = s3; S[4] = s4; S[5] = s5; S[6] = s6; S[7] = s7;
}

/**
 * A numpy Generator(PCG64(SeedSequence(seed))).
 *
 * The outputs of the LCG are computed BLOCK at a time into hi/lo arrays and handed out in
 * order, so every draw sees exactly numpy's stream of pcg64_next64 values (the LCG runs
 * ahead, which nothing can observe); this keeps the limbs in locals instead of closure
 * variables (1.7x faster, benchmarks/browser_rng.py).
 */
function Generator(seed) {
  const w = seedSequenceState(seed, 8);
  // pcg64_set_seed(state, seed = val[0:2], inc = val[2:4]) with val = the 8 words as
  // little-endian uint64 (val[0] high, val[1] low), then pcg_setseq_128_srandom_r.
  const initState = limbs(w[1], w[0], w[3], w[2]);
  const initSeq = limbs(w[5], w[4], w[7], w[6]);
  const S = new Float64Array(16);
  let k, t;
  // inc = (initseq << 1) | 1
  for (k = 0, t = 0; k < 8; k++) {
    t = initSeq[k] * 2 + t;
    S[8 + k] = t % TWO16;
    t = t >= TWO16 ? 1 : 0;
  }
  S[8] += 1; // the low bit was 0 after the shift
  // state = 0; step; state += initstate; step
  runLcg(S, 1, null, null);
  for (k = 0, t = 0; k < 8; k++) {
    t = S[k] + initState[k] + t;
    S[k] = t % TWO16;
    t = t >= TWO16 ? 1 : 0;
  }
  runLcg(S, 1, null, null);

  const HI = new Uint32Array(BLOCK);
  const LO = new Uint32Array(BLOCK);
  let pos = BLOCK; // the next unused output; BLOCK: none left
  // numpy's PCG64 keeps the high half of a 64-bit draw that next_uint32 split (see
  // next32); it survives across method calls, as in numpy.
  let hasUint32 = false;
  let uinteger = 0;

  // Index of the next pcg64_next64 output in HI/LO (refilled when used up).
  function next64() {
    if (pos === BLOCK) {
      runLcg(S, BLOCK, HI, LO);
      pos = 0;
    }
    return pos++;
  }

  // pcg64_next32: the low half of a 64-bit draw, and its high half at the next call.
  function next32() {
    if (hasUint32) {
      hasUint32 = false;
      return uinteger;
    }
    const i = next64();
    hasUint32 = true;
    uinteger = HI[i];
    return LO[i];
  }

  // pcg64_double = uint64_to_double(next64) = (next64 >> 11) * 2^-53.
  function nextDouble() {
    const i = next64();
    return (HI[i] * 2097152 + (LO[i] >>> 11)) * TWO_53_INV; // 2^21 * hi + lo >> 11
  }

  // distributions.c random_standard_normal: Marsaglia & Tsang's ziggurat on 256 steps,
  // with numpy's tables and its bit layout of one 64-bit draw: idx = r & 0xff,
  // sign = bit 8, rabs = bits 9..60 (52 bits).
  function standardNormal1() {
    for (;;) {
      const i = next64();
      const lo = LO[i];
      const idx = lo & 0xff;
      const rabs = (HI[i] & 0x1fffffff) * 8388608 + (lo >>> 9); // 2^23 * hi29 + lo >> 9
      let x = rabs * WI[idx];
      if ((lo >>> 8) & 1) x = -x;
      if (rabs < KI[idx]) return x; // 99.3% of draws end here
      if (idx === 0) {
        // The tail beyond r: log1p(-u) with u = next_double (numpy, GH 13361).
        for (;;) {
          const xx = -ZIGGURAT_NOR_INV_R * Math.log1p(-nextDouble());
          const yy = -Math.log1p(-nextDouble());
          if (yy + yy > xx * xx) {
            // ((rabs >> 8) & 1) is bit 17 of the draw's low half
            return ((lo >>> 17) & 1) ? -(ZIGGURAT_NOR_R + xx) : ZIGGURAT_NOR_R + xx;
          }
        }
      } else if ((FI[idx - 1] - FI[idx]) * nextDouble() + FI[idx] < Math.exp(-0.5 * x * x)) {
        return x;
      }
    }
  }

  // distributions.c random_interval: a uniform integer in 0..max by masked rejection,
  // on next_uint32 (numpy takes next_uint64 only when max > 2^32 - 1, which a
  // permutation of at most 2^31 - 1 items never needs).
  function randomInterval(max) {
    if (max === 0) return 0;
    let mask = max;
    mask |= mask >>> 1;
    mask |= mask >>> 2;
    mask |= mask >>> 4;
    mask |= mask >>> 8;
    mask |= mask >>> 16;
    mask >>>= 0;
    let value;
    while ((value = (next32() & mask) >>> 0) > max);
    return value;
  }

  function count(n, what) {
    if (!Number.isSafeInteger(n) || n < 0) {
      throw new RangeError(what + " must be a whole number >= 0, got " + String(n));
    }
    return n;
  }

  return {
    /** n draws of N(0, 1): Generator.standard_normal(n) (float64). */
    standardNormal (n) {
      const out = new Float64Array(count(n, "n"));
      for (let i = 0; i < out.length; i++) out[i] = standardNormal1();
      return out;
    },
    /** n draws of N(loc, scale^2): Generator.normal(loc, scale, n), which is
     * loc + scale * standard_normal (distributions.c random_normal). */
    normal (loc, scale, n) {
      if (!(scale >= 0)) throw new RangeError("scale must be >= 0, got " + String(scale));
      const out = new Float64Array(count(n, "n"));
      for (let i = 0; i < out.length; i++) out[i] = loc + scale * standardNormal1();
      return out;
    },
    /** n doubles in [0, 1): Generator.random(n) (random_standard_uniform_fill). */
    random (n) {
      const out = new Float64Array(count(n, "n"));
      for (let i = 0; i < out.length; i++) out[i] = nextDouble();
      return out;
    },
    /** A permutation of 0..n-1: Generator.permutation(n), i.e. arange(n) shuffled by
     * Generator.shuffle's Fisher-Yates (_shuffle_raw: i from n-1 down to 1, swap with
     * j = random_interval(i)). */
    permutation (n) {
      count(n, "n");
      if (n > 2147483647) throw new RangeError("n must be at most 2^31 - 1, got " + n);
      const out = new Int32Array(n);
      let i, j, tmp;
      for (i = 0; i < n; i++) out[i] = i;
      for (i = n - 1; i >= 1; i--) {
        j = randomInterval(i);
        tmp = out[j]; out[j] = out[i]; out[i] = tmp;
      }
      return out;
    },
    /** The next raw 64-bit output as [hi, lo] uint32 (PCG64.random_raw()). */
    nextUint64 () {
      const i = next64();
      return [HI[i], LO[i]];
    },
  };
}

/**
 * np.random.default_rng(seed): seed a whole number >= 0 (a Number up to 2^53 - 1, or a
 * BigInt of any size) or a non-empty array of them, e.g. [seed, 1].
 */
function defaultRng(seed) {
  return Generator(seed);
}

export {defaultRng, seedSequenceState};
