/*
 * rng.js: numpy's default random generator, np.random.default_rng(seed), ported
 * exactly to JavaScript, so that the book's pages draw the same random weights as the
 * Python package (the browser computes every lab's state).
 *
 *   var rng = AttentionBook.rng.defaultRng(0);   // or require("./rng.js").defaultRng(0)
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
 * A classic script with no dependencies (pages opened as file:// refuse ES modules and
 * fetch): in a browser it sets globalThis.AttentionBook.rng, in Node module.exports.
 */
(function (root, factory) {
  "use strict";
  var api = factory();
  if (typeof module === "object" && module && module.exports) {
    module.exports = api;
  } else {
    root.AttentionBook = root.AttentionBook || {};
    root.AttentionBook.rng = api;
  }
})(typeof globalThis !== "undefined" ? globalThis : this, function () {
  "use strict";

  var TWO16 = 65536;
  var TWO32 = 4294967296;
  var TWO_53_INV = 1.0 / 9007199254740992.0; // 2^-53, as numpy's uint64_to_double

  // ---------------------------------------------------------------- SeedSequence
  // numpy/random/bit_generator.pyx: constants of SeedSequence's hash (uint32 arithmetic).
  var INIT_A = 0x43b0d7e5;
  var MULT_A = 0x931e8875;
  var INIT_B = 0x8b51f9dd;
  var MULT_B = 0x58f38ded;
  var MIX_MULT_L = 0xca01f9dd;
  var MIX_MULT_R = 0x4973f715;
  var POOL_SIZE = 4; // DEFAULT_POOL_SIZE

  function seedError(seed) {
    return new RangeError(
      "seed must be a whole number >= 0 (a Number up to 2^53 - 1 or a BigInt) or a " +
        "non-empty array of them, got " + String(seed));
  }

  // _int_to_uint32_array: a non-negative integer as uint32 words, lowest first; 0 -> [0].
  function intToWords(n, seed) {
    var words = [];
    if (typeof n === "bigint") {
      if (n < BigInt(0)) throw seedError(seed);
      if (n === BigInt(0)) return [0];
      var big32 = BigInt(TWO32);
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
      var words = [];
      for (var i = 0; i < seed.length; i++) {
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
    var result = (Math.imul(MIX_MULT_L, x) - Math.imul(MIX_MULT_R, y)) >>> 0;
    return (result ^ (result >>> 16)) >>> 0;
  }

  // SeedSequence(entropy).pool, via mix_entropy (no spawn key, pool_size 4).
  function seedPool(entropy) {
    var hash = [INIT_A];
    var pool = [];
    var i, src, dst;
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
    var hash = INIT_B;
    var state = [];
    for (var i = 0; i < nWords32; i++) {
      var value = (pool[i % pool.length] ^ hash) >>> 0;
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
  var M0 = 0xf645, M1 = 0x9fcc, M2 = 0xdf64, M3 = 0x4385;
  var M4 = 0x5da4, M5 = 0x1fc6, M6 = 0xed05, M7 = 0x2360;
  var INV16 = 1 / TWO16;
  // Outputs computed per refill of a generator's block (see Generator).
  var BLOCK = 256;

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
    var s0 = S[0], s1 = S[1], s2 = S[2], s3 = S[3], s4 = S[4], s5 = S[5], s6 = S[6], s7 = S[7];
    var c0 = S[8], c1 = S[9], c2 = S[10], c3 = S[11];
    var c4 = S[12], c5 = S[13], c6 = S[14], c7 = S[15];
    var t, c, n0, n1, n2, n3, n4, n5, n6, xh, xl, rot, r, a, b;
    for (var i = 0; i < n; i++) {
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
    var w = seedSequenceState(seed, 8);
    // pcg64_set_seed(state, seed = val[0:2], inc = val[2:4]) with val = the 8 words as
    // little-endian uint64 (val[0] high, val[1] low), then pcg_setseq_128_srandom_r.
    var initState = limbs(w[1], w[0], w[3], w[2]);
    var initSeq = limbs(w[5], w[4], w[7], w[6]);
    var S = new Float64Array(16);
    var k, t;
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

    var HI = new Uint32Array(BLOCK);
    var LO = new Uint32Array(BLOCK);
    var pos = BLOCK; // the next unused output; BLOCK: none left
    // numpy's PCG64 keeps the high half of a 64-bit draw that next_uint32 split (see
    // next32); it survives across method calls, as in numpy.
    var hasUint32 = false;
    var uinteger = 0;

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
      var i = next64();
      hasUint32 = true;
      uinteger = HI[i];
      return LO[i];
    }

    // pcg64_double = uint64_to_double(next64) = (next64 >> 11) * 2^-53.
    function nextDouble() {
      var i = next64();
      return (HI[i] * 2097152 + (LO[i] >>> 11)) * TWO_53_INV; // 2^21 * hi + lo >> 11
    }

    // distributions.c random_standard_normal: Marsaglia & Tsang's ziggurat on 256 steps,
    // with numpy's tables and its bit layout of one 64-bit draw: idx = r & 0xff,
    // sign = bit 8, rabs = bits 9..60 (52 bits).
    function standardNormal1() {
      for (;;) {
        var i = next64();
        var lo = LO[i];
        var idx = lo & 0xff;
        var rabs = (HI[i] & 0x1fffffff) * 8388608 + (lo >>> 9); // 2^23 * hi29 + lo >> 9
        var x = rabs * WI[idx];
        if ((lo >>> 8) & 1) x = -x;
        if (rabs < KI[idx]) return x; // 99.3% of draws end here
        if (idx === 0) {
          // The tail beyond r: log1p(-u) with u = next_double (numpy, GH 13361).
          for (;;) {
            var xx = -ZIGGURAT_NOR_INV_R * Math.log1p(-nextDouble());
            var yy = -Math.log1p(-nextDouble());
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
      var mask = max;
      mask |= mask >>> 1;
      mask |= mask >>> 2;
      mask |= mask >>> 4;
      mask |= mask >>> 8;
      mask |= mask >>> 16;
      mask >>>= 0;
      var value;
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
      standardNormal: function (n) {
        var out = new Float64Array(count(n, "n"));
        for (var i = 0; i < out.length; i++) out[i] = standardNormal1();
        return out;
      },
      /** n draws of N(loc, scale^2): Generator.normal(loc, scale, n), which is
       * loc + scale * standard_normal (distributions.c random_normal). */
      normal: function (loc, scale, n) {
        if (!(scale >= 0)) throw new RangeError("scale must be >= 0, got " + String(scale));
        var out = new Float64Array(count(n, "n"));
        for (var i = 0; i < out.length; i++) out[i] = loc + scale * standardNormal1();
        return out;
      },
      /** n doubles in [0, 1): Generator.random(n) (random_standard_uniform_fill). */
      random: function (n) {
        var out = new Float64Array(count(n, "n"));
        for (var i = 0; i < out.length; i++) out[i] = nextDouble();
        return out;
      },
      /** A permutation of 0..n-1: Generator.permutation(n), i.e. arange(n) shuffled by
       * Generator.shuffle's Fisher-Yates (_shuffle_raw: i from n-1 down to 1, swap with
       * j = random_interval(i)). */
      permutation: function (n) {
        count(n, "n");
        if (n > 2147483647) throw new RangeError("n must be at most 2^31 - 1, got " + n);
        var out = new Int32Array(n);
        var i, j, tmp;
        for (i = 0; i < n; i++) out[i] = i;
        for (i = n - 1; i >= 1; i--) {
          j = randomInterval(i);
          tmp = out[j]; out[j] = out[i]; out[i] = tmp;
        }
        return out;
      },
      /** The next raw 64-bit output as [hi, lo] uint32 (PCG64.random_raw()). */
      nextUint64: function () {
        var i = next64();
        return [HI[i], LO[i]];
      },
    };
  }

  // The ziggurat tables, written by make_rng_tables.py from numpy's source.
  // BEGIN GENERATED by make_rng_tables.py from numpy v2.4.6
  // ziggurat_constants.h (sha256 9f8b114014b84757...): do not edit.
  // ki_double: 256 integers < 2^52 (exact as numbers)
  var KI = new Float64Array([
    0xEF33D8025EF6A, 0x0000000000000, 0xC08BE98FBC6A8, 0xDA354FABD8142, 0xE51F67EC1EEEA,
    0xEB255E9D3F77E, 0xEEF4B817ECAB9, 0xF19470AFA44AA, 0xF37ED61FFCB18, 0xF4F469561255C,
    0xF61A5E41BA396, 0xF707A755396A4, 0xF7CB2EC28449A, 0xF86F10C6357D3, 0xF8FA6578325DE,
    0xF9724C74DD0DA, 0xF9DA907DBF509, 0xFA360F581FA74, 0xFA86FDE5B4BF8, 0xFACF160D354DC,
    0xFB0FB6718B90F, 0xFB49F8D5374C6, 0xFB7EC2366FE77, 0xFBAECE9A1E50E, 0xFBDAB9D040BED,
    0xFC03060FF6C57, 0xFC2821037A248, 0xFC4A67AE25BD1, 0xFC6A2977AEE31, 0xFC87AA92896A4,
    0xFCA325E4BDE85, 0xFCBCCE902231A, 0xFCD4D12F839C4, 0xFCEB54D8FEC99, 0xFD007BF1DC930,
    0xFD1464DD6C4E6, 0xFD272A8E2F450, 0xFD38E4FF0C91E, 0xFD49A9990B478, 0xFD598B8920F53,
    0xFD689C08E99EC, 0xFD76EA9C8E832, 0xFD848547B08E8, 0xFD9178BAD2C8C, 0xFD9DD07A7ADD2,
    0xFDA9970105E8C, 0xFDB4D5DC02E20, 0xFDBF95C5BFCD0, 0xFDC9DEBB99A7D, 0xFDD3B8118729D,
    0xFDDD288342F90, 0xFDE6364369F64, 0xFDEEE708D514E, 0xFDF7401A6B42E, 0xFDFF46599ED40,
    0xFE06FE4BC24F2, 0xFE0E6C225A258, 0xFE1593C28B84C, 0xFE1C78CBC3F99, 0xFE231E9DB1CAA,
    0xFE29885DA1B91, 0xFE2FB8FB54186, 0xFE35B33558D4A, 0xFE3B799D0002A, 0xFE410E99EAD7F,
    0xFE46746D47734, 0xFE4BAD34C095C, 0xFE50BAED29524, 0xFE559F74EBC78, 0xFE5A5C8E41212,
    0xFE5EF3E138689, 0xFE6366FD91078, 0xFE67B75C6D578, 0xFE6BE661E11AA, 0xFE6FF55E5F4F2,
    0xFE73E5900A702, 0xFE77B823E9E39, 0xFE7B6E37070A2, 0xFE7F08D774243, 0xFE8289053F08C,
    0xFE85EFB35173A, 0xFE893DC840864, 0xFE8C741F0CEBC, 0xFE8F9387D4EF6, 0xFE929CC879B1D,
    0xFE95909D388EA, 0xFE986FB939AA2, 0xFE9B3AC714866, 0xFE9DF2694B6D5, 0xFEA0973ABE67C,
    0xFEA329CF166A4, 0xFEA5AAB32952C, 0xFEA81A6D5741A, 0xFEAA797DE1CF0, 0xFEACC85F3D920,
    0xFEAF07865E63C, 0xFEB13762FEC13, 0xFEB3585FE2A4A, 0xFEB56AE3162B4, 0xFEB76F4E284FA,
    0xFEB965FE62014, 0xFEBB4F4CF9D7C, 0xFEBD2B8F449D0, 0xFEBEFB16E2E3E, 0xFEC0BE31EBDE8,
    0xFEC2752B15A15, 0xFEC42049DAFD3, 0xFEC5BFD29F196, 0xFEC75406CEEF4, 0xFEC8DD2500CB4,
    0xFECA5B6911F12, 0xFECBCF0C427FE, 0xFECD38454FB15, 0xFECE97488C8B3, 0xFECFEC47F91B7,
    0xFED1377358528, 0xFED278F844903, 0xFED3B10242F4C, 0xFED4DFBAD586E, 0xFED605498C3DD,
    0xFED721D414FE8, 0xFED8357E4A982, 0xFED9406A42CC8, 0xFEDA42B85B704, 0xFEDB3C8746AB4,
    0xFEDC2DF416652, 0xFEDD171A46E52, 0xFEDDF813C8AD3, 0xFEDED0F909980, 0xFEDFA1E0FD414,
    0xFEE06AE124BC4, 0xFEE12C0D95A06, 0xFEE1E579006E0, 0xFEE29734B6524, 0xFEE34150AE4BC,
    0xFEE3E3DB89B3C, 0xFEE47EE2982F4, 0xFEE51271DB086, 0xFEE59E9407F41, 0xFEE623528B42E,
    0xFEE6A0B5897F1, 0xFEE716C3E077A, 0xFEE7858327B82, 0xFEE7ECF7B06BA, 0xFEE84D2484AB2,
    0xFEE8A60B66343, 0xFEE8F7ACCC851, 0xFEE94207E25DA, 0xFEE9851A829EA, 0xFEE9C0E13485C,
    0xFEE9F557273F4, 0xFEEA22762CCAE, 0xFEEA4836B42AC, 0xFEEA668FC2D71, 0xFEEA7D76ED6FA,
    0xFEEA8CE04FA0A, 0xFEEA94BE8333B, 0xFEEA950296410, 0xFEEA8D9C0075E, 0xFEEA7E7897654,
    0xFEEA678481D24, 0xFEEA48AA29E83, 0xFEEA21D22E4DA, 0xFEE9F2E352024, 0xFEE9BBC26AF2E,
    0xFEE97C524F2E4, 0xFEE93473C0A3A, 0xFEE8E40557516, 0xFEE88AE369C7A, 0xFEE828E7F3DFD,
    0xFEE7BDEA7B888, 0xFEE749BFF37FF, 0xFEE6CC3A9BD5E, 0xFEE64529E007E, 0xFEE5B45A32888,
    0xFEE51994E57B6, 0xFEE474A0006CF, 0xFEE3C53E12C50, 0xFEE30B2E02AD8, 0xFEE2462AD8205,
    0xFEE175EB83C5A, 0xFEE09A22A1447, 0xFEDFB27E349CC, 0xFEDEBEA76216C, 0xFEDDBE422047E,
    0xFEDCB0ECE39D3, 0xFEDB964042CF4, 0xFEDA6DCE938C9, 0xFED937237E98D, 0xFED7F1C38A836,
    0xFED69D2B9C02B, 0xFED538D06AE00, 0xFED3C41DEA422, 0xFED23E76A2FD8, 0xFED0A732FE644,
    0xFECEFDA07FE34, 0xFECD4100EB7B8, 0xFECB708956EB4, 0xFEC98B61230C1, 0xFEC790A0DA978,
    0xFEC57F50F31FE, 0xFEC356686C962, 0xFEC114CB4B335, 0xFEBEB948E6FD0, 0xFEBC429A0B692,
    0xFEB9AF5EE0CDC, 0xFEB6FE1C98542, 0xFEB42D3AD1F9E, 0xFEB13B00B2D4B, 0xFEAE2591A02E9,
    0xFEAAEAE992257, 0xFEA788D8EE326, 0xFEA3FCFFD73E5, 0xFEA044C8DD9F6, 0xFE9C5D62F563B,
    0xFE9843BA947A4, 0xFE93F471D4728, 0xFE8F6BD76C5D6, 0xFE8AA5DC4E8E6, 0xFE859E07AB1EA,
    0xFE804F690A940, 0xFE7AB488233C0, 0xFE74C751F6AA5, 0xFE6E8102AA202, 0xFE67DA0B6ABD8,
    0xFE60C9F38307E, 0xFE5947338F742, 0xFE51470977280, 0xFE48BD436F458, 0xFE3F9BFFD1E37,
    0xFE35D35EEB19C, 0xFE2B5122FE4FE, 0xFE20003995557, 0xFE13C82788314, 0xFE068C4EE67B0,
    0xFDF82B02B71AA, 0xFDE87C57EFEAA, 0xFDD7509C63BFD, 0xFDC46E529BF13, 0xFDAF8F82E0282,
    0xFD985E1B2BA75, 0xFD7E6EF48CF04, 0xFD613ADBD650B, 0xFD40149E2F012, 0xFD1A1A7B4C7AC,
    0xFCEE204761F9E, 0xFCBA8D85E11B2, 0xFC7D26ECD2D22, 0xFC32B2F1E22ED, 0xFBD6581C0B83A,
    0xFB606C4005434, 0xFAC40582A2874, 0xF9E971E014598, 0xF89FA48A41DFC, 0xF66C5F7F0302C,
    0xF1A5A4B331C4A
  ]);
  // wi_double
  var WI = new Float64Array([
    8.683627060801306e-16, 4.779330175727737e-17, 6.354352417405262e-17, 7.454870481247696e-17,
    8.3293668157931e-17, 9.068060405059482e-17, 9.714860076567762e-17, 1.0294750314241019e-16,
    1.0823430288447684e-16, 1.131147019610903e-16, 1.176635945702292e-16, 1.2193617278714363e-16,
    1.2597439914637093e-16, 1.2981099886264032e-16, 1.3347203736824123e-16, 1.3697864842571203e-16,
    1.4034823001242382e-16, 1.4359529452056943e-16, 1.4673208742364422e-16, 1.4976904668391037e-16,
    1.5271515003596198e-16, 1.5557818169460764e-16, 1.5836494009290885e-16, 1.6108140175274928e-16,
    1.6373285203969853e-16, 1.6632399058420835e-16, 1.6885901708676596e-16, 1.713417017655966e-16,
    1.737754436586486e-16, 1.7616331923000996e-16, 1.7850812316976727e-16, 1.8081240285799152e-16,
    1.830784876482675e-16, 1.853085138861802e-16, 1.8750444639373882e-16, 1.896680970077476e-16,
    1.918011406483862e-16, 1.9390512930625104e-16, 1.9598150426628824e-16, 1.9803160683128174e-16,
    2.000566877627333e-16, 2.0205791562071654e-16, 2.0403638415480212e-16, 2.0599311887403706e-16,
    2.079290829041402e-16, 2.0984518222370352e-16, 2.1174227035760342e-16, 2.1362115259449868e-16,
    2.1548258978581458e-16, 2.1732730177564367e-16, 2.191559705042727e-16, 2.2096924282235318e-16,
    2.2276773304789553e-16, 2.2455202529414355e-16, 2.263226755928568e-16, 2.280802138345017e-16,
    2.2982514554424684e-16, 2.3155795351040804e-16, 2.3327909928004356e-16, 2.3498902453470955e-16,
    2.3668815235791604e-16, 2.3837688840454243e-16, 2.4005562198135063e-16, 2.4172472704675025e-16,
    2.433845631371103e-16, 2.4503547622614954e-16, 2.466777995232705e-16, 2.4831185421610877e-16,
    2.4993795016204524e-16, 2.515563865329658e-16, 2.5316745241713583e-16, 2.547714273816944e-16,
    2.563685819989397e-16, 2.579591783392867e-16, 2.5954347043351707e-16, 2.6112170470670194e-16,
    2.6269412038597256e-16, 2.6426094988411895e-16, 2.658224191608307e-16, 2.6737874806323633e-16,
    2.689301506472616e-16, 2.704768354811995e-16, 2.720190059327732e-16, 2.735568604408679e-16,
    2.7509059277301666e-16, 2.7662039226963903e-16, 2.781464440759544e-16, 2.79668929362423e-16,
    2.8118802553450207e-16, 2.827039064324479e-16, 2.842167425218406e-16, 2.8572670107546015e-16,
    2.87233946347098e-16, 2.887386397378482e-16, 2.9024093995538423e-16, 2.9174100316669455e-16,
    2.9323898314471816e-16, 2.947350314092935e-16, 2.9622929736280665e-16, 2.977219284209029e-16,
    2.992130701386013e-16, 3.007028663321331e-16, 3.0219145919680615e-16, 3.036789894211802e-16,
    3.051655962978219e-16, 3.0665141783089545e-16, 3.081365908408297e-16, 3.0962125106629225e-16,
    3.111055332636893e-16, 3.125895713043999e-16, 3.140734982699446e-16, 3.1555744654528006e-16,
    3.1704154791040285e-16, 3.1852593363044065e-16, 3.2001073454440114e-16, 3.214960811527447e-16,
    3.2298210370394156e-16, 3.244689322801698e-16, 3.2595669688230784e-16, 3.2744552751437067e-16,
    3.2893555426753697e-16, 3.3042690740391284e-16, 3.3191971744017523e-16, 3.3341411523123725e-16,
    3.3491023205407785e-16, 3.364081996918765e-16, 3.37908150518595e-16, 3.394102175841489e-16,
    3.409145347003126e-16, 3.424212365275018e-16, 3.4393045866258313e-16, 3.454423377278584e-16,
    3.4695701146137835e-16, 3.4847461880874137e-16, 3.499953000165381e-16, 3.5151919672760744e-16,
    3.53046452078274e-16, 3.5457721079774357e-16, 3.5611161930983884e-16, 3.5764982583726505e-16,
    3.59191980508603e-16, 3.6073823546823514e-16, 3.6228874498941915e-16, 3.6384366559073444e-16,
    3.65403156156137e-16, 3.669673780588701e-16, 3.685364952894914e-16, 3.7011067458828983e-16,
    3.716900855823823e-16, 3.7327490092779435e-16, 3.7486529645684887e-16, 3.7646145133120287e-16,
    3.7806354820089604e-16, 3.7967177336979443e-16, 3.8128631696783774e-16, 3.829073731305243e-16,
    3.8453514018609596e-16, 3.8616982085091493e-16, 3.878116224335587e-16, 3.894607570481926e-16,
    3.9111744183782054e-16, 3.9278189920805415e-16, 3.944543570720877e-16, 3.9613504910761354e-16,
    3.9782421502646826e-16, 3.995221008578565e-16, 4.012289592460629e-16, 4.029450497636328e-16,
    4.04670639241075e-16, 4.0640600211422504e-16, 4.0815142079049387e-16, 4.0990718603532664e-16,
    4.1167359738030257e-16, 4.134509635544236e-16, 4.1523960294026883e-16, 4.170398440568316e-16,
    4.1885202607101123e-16, 4.206764993399015e-16, 4.2251362598620494e-16, 4.243637805093078e-16,
    4.262273504347798e-16, 4.2810473700531167e-16, 4.2999635591638323e-16, 4.3190263810026294e-16,
    4.338240305622791e-16, 4.357609972736849e-16, 4.3771402012585875e-16, 4.3968359995105214e-16,
    4.4167025761542035e-16, 4.4367453519065673e-16, 4.456969972112043e-16, 4.477382320247534e-16,
    4.49798853244555e-16, 4.518795013130059e-16, 4.539808451870034e-16, 4.561035841567422e-16,
    4.582484498109567e-16, 4.604162081631153e-16, 4.626076619547846e-16, 4.648236531543207e-16,
    4.670650656712631e-16, 4.693328283093329e-16, 4.716279179838351e-16, 4.739513632325867e-16,
    4.763042480533137e-16, 4.786877161048723e-16, 4.811029753147417e-16, 4.835513029411525e-16,
    4.860340511450812e-16, 4.885526531353603e-16, 4.91108629959527e-16, 4.937035980240335e-16,
    4.963392774403987e-16, 4.990175013091822e-16, 5.017402260718089e-16, 5.045095430818727e-16,
    5.073276915733542e-16, 5.101970732341562e-16, 5.131202686306784e-16, 5.161000557743228e-16,
    5.191394311757699e-16, 5.222416338000234e-16, 5.254101724177597e-16, 5.286488569504945e-16,
    5.3196183453384e-16, 5.353536311816497e-16, 5.388292001334053e-16, 5.423939782201712e-16,
    5.46053951907478e-16, 5.498157350892814e-16, 5.536866612467876e-16, 5.576748932926576e-16,
    5.617895553555417e-16, 5.660408920082422e-16, 5.704404621291389e-16, 5.750013768919895e-16,
    5.797385945724594e-16, 5.846692893455479e-16, 5.898133176477899e-16, 5.951938149641444e-16,
    6.008379696271908e-16, 6.067780409333449e-16, 6.130527208725282e-16, 6.197089894581626e-16,
    6.268046963301284e-16, 6.344122407127506e-16, 6.426239659548055e-16, 6.515603317344994e-16,
    6.613827885097664e-16, 6.723150462505587e-16, 6.846803417564259e-16, 6.98971833638762e-16,
    7.159994934830664e-16, 7.372424301798799e-16, 7.658936370805573e-16, 8.113849337656484e-16
  ]);
  // fi_double
  var FI = new Float64Array([
    1.0, 0.9771017012676716, 0.9598790918001067, 0.9451989534422996,
    0.9320600759592305, 0.919991505039347, 0.9087264400521309, 0.8980959218983434,
    0.8879846607558334, 0.8783096558089174, 0.869008688036857, 0.8600336211963315,
    0.851346258458678, 0.8429156531122042, 0.8347162929868834, 0.8267268339462214,
    0.8189291916037024, 0.8113078743126563, 0.8038494831709643, 0.796542330422959,
    0.7893761435660246, 0.7823418326548025, 0.7754313049811872, 0.7686373157984863,
    0.7619533468367954, 0.7553735065070961, 0.7488924472191568, 0.742505296340151,
    0.7362075981268627, 0.7299952645614762, 0.7238645334686302, 0.717811932630722,
    0.7118342488782484, 0.7059285013327543, 0.7000919181365116, 0.6943219161261167,
    0.6886160830046718, 0.6829721616449949, 0.6773880362187735, 0.6718617198970821,
    0.6663913439087501, 0.6609751477766631, 0.6556114705796973, 0.6502987431108167,
    0.6450354808208223, 0.6398202774530566, 0.6346517992876236, 0.6295287799248367,
    0.6244500155470265, 0.6194143606058343, 0.6144207238889139, 0.6094680649257734,
    0.6045553906974678, 0.5996817526191253, 0.5948462437679874, 0.590047996332826,
    0.5852861792633715, 0.5805599961007909, 0.5758686829723537, 0.5712115067352532,
    0.5665877632561644, 0.5619967758145243, 0.557437893618766, 0.5529104904258323,
    0.5484139632552658, 0.5439477311900263, 0.5395112342569521, 0.5351039323804576,
    0.5307253044036621, 0.5263748471716845, 0.5220520746723218, 0.5177565172297564,
    0.513487720747327, 0.5092452459957479, 0.5050286679434681, 0.5008375751261487,
    0.4966715690524897, 0.49253026364386854, 0.48841328470545803, 0.4843202694266833,
    0.48025086590904675, 0.47620473271950586, 0.4721815384677302, 0.4681809614056936,
    0.46420268904817436, 0.46024641781284287, 0.45631185267871643, 0.4523987068618485,
    0.44850670150720306, 0.4446355653957394, 0.440785034665804, 0.43695485254798555,
    0.43314476911265226, 0.4293545410294414, 0.42558393133802197, 0.4218327092294959,
    0.4181006498378482, 0.4143875340408911, 0.41069314827018816, 0.40701728432947337,
    0.4033597392211145, 0.3997203149801972, 0.39609881851583245, 0.3924950614593156,
    0.3889088600187887, 0.3853400348400773, 0.38178841087339366, 0.3782538172456192,
    0.37473608713789114, 0.3712350576682395, 0.3677505697790326, 0.36428246812900406,
    0.36083060098964803, 0.3573948201457805, 0.3539749808000768, 0.3505709414814061,
    0.34718256395679364, 0.3438097131468507, 0.34045225704452187, 0.33711006663700605,
    0.33378301583071845, 0.3304709813791636, 0.3271738428136014, 0.3238914823763911,
    0.32062378495690536, 0.3173706380299136, 0.3141319315963372, 0.3109075581262865,
    0.30769741250429206, 0.30450139197665, 0.30131939610080305, 0.2981513266966855,
    0.2949970877999618, 0.2918565856170952, 0.2887297284821829, 0.28561642681550176,
    0.2825165930837076, 0.27943014176163794, 0.2763569892956683, 0.27329705406857707,
    0.27025025636587546, 0.26721651834356147, 0.2641957639972612, 0.2611879191327212,
    0.25819291133761924, 0.25521066995466196, 0.2522411260559422, 0.24928421241852852,
    0.24633986350126383, 0.2434080154227503, 0.2404886059405006, 0.2375815744312381,
    0.23468686187233, 0.23180441082433872, 0.22893416541468034, 0.22607607132238028,
    0.22323007576391748, 0.220396127480152, 0.21757417672433113, 0.21476417525117358,
    0.21196607630703018, 0.20917983462112508, 0.2064054063978808, 0.2036427493103349,
    0.2008918224946566, 0.19815258654577514, 0.1954250035141343, 0.19270903690358918,
    0.19000465167046499, 0.1873118142238003, 0.18463049242679927, 0.18196065559952251,
    0.17930227452284758, 0.17665532144373486, 0.17401977008183855, 0.17139559563750575,
    0.1687827748012113, 0.1661812857644819, 0.16359110823236558, 0.161012223437511,
    0.15844461415592428, 0.1558882647244792, 0.15334316106026286, 0.15080929068184568,
    0.14828664273257455, 0.14577520800599403, 0.14327497897351346, 0.1407859498144447,
    0.13830811644855073, 0.13584147657125376, 0.13338602969166916, 0.13094177717364436,
    0.12850872227999957, 0.1260868702201859, 0.12367622820159657, 0.1212768054847903,
    0.11888861344291006, 0.11651166562561087, 0.11414597782783849, 0.11179156816383809,
    0.1094484571468118, 0.1071166677746838, 0.10479622562248707, 0.10248715894193525,
    0.10018949876881002, 0.09790327903886246, 0.095628536713009, 0.09336531191269101,
    0.09111364806637376, 0.08887359206827589, 0.08664519445055807, 0.08442850957035347,
    0.0822235958132029, 0.08003051581466307, 0.07784933670209612, 0.07568013035892718,
    0.07352297371398132, 0.0713779490588904, 0.06924514439700676, 0.0671246538277885,
    0.0650165779712429, 0.06292102443775814, 0.06083810834953988, 0.05876795292093374,
    0.0567106901062029, 0.05466646132488892, 0.05263541827679219, 0.05061772386094778,
    0.04861355321586854, 0.04662309490193038, 0.044646552251294463, 0.04268414491647446,
    0.04073611065594094, 0.03880270740452615, 0.036884215688567305, 0.034980941461716125,
    0.03309321945857858, 0.0312214171919203, 0.02936593975813336, 0.027527235669603113,
    0.02570580400854891, 0.02390220330579588, 0.02211706270730885, 0.02035109623004451,
    0.018605121275724622, 0.016880083152543142, 0.01517708830793531, 0.013497450601739867,
    0.011842757857907879, 0.010214971439701459, 0.008616582769398726, 0.007050875471373222,
    0.0055224032992509916, 0.0040379725933630236, 0.0026090727461021593, 0.001260285930498598
  ]);
  var ZIGGURAT_NOR_R = 3.654152885361009;
  var ZIGGURAT_NOR_INV_R = 0.2736612373297583;
  // END GENERATED

  /**
   * np.random.default_rng(seed): seed a whole number >= 0 (a Number up to 2^53 - 1, or a
   * BigInt of any size) or a non-empty array of them, e.g. [seed, 1].
   */
  function defaultRng(seed) {
    return Generator(seed);
  }

  return {
    defaultRng: defaultRng,
    seedSequenceState: seedSequenceState,
  };
});
