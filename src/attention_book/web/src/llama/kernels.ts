// kernels.ts: the decoder's matrix products, y = x W^T, read straight from GGUF's blocks,
// in WebAssembly with 128-bit SIMD. AssemblyScript (pinned in package.json), compiled by
// build-wasm.mjs into wasm-bytes.js, which kernels.js instantiates; kernels.js also holds the
// same products in plain JavaScript (the fallback, and the reference the tests compare).
//
// W is (rows, cols), stored row after row as ggml stores a tensor of dims [cols, rows]; each
// row is cols / 32 blocks. A block of 32 weights (ggml-common.h):
//   Q4_0  18 bytes: d (f16), qs[16]           w = d * (q - 8)
//   Q4_1  20 bytes: d (f16), m (f16), qs[16]  w = d * q + m
//   Q8_0  34 bytes: d (f16), qs[32] (int8)    w = d * q
// where a Q4 block's weight j < 16 is the low nibble of qs[j] and weight j + 16 its high one.
// F16 and F32 rows are read as "blocks" of 32 with d = 1, m = 0.
//
// No block is expanded to float32 in memory: a block's integers become four-lane floats in
// registers, and the scale is applied once a block:
//   sum_j w_j x_j = d * sum_j q_j x_j + m * sum_j x_j,
// with sum_j x_j of each block of x computed once per vector (xs, by blockSums), not once per
// row. Q4_0 is Q4_1 with m = -8d; Q8_0's int8 become unsigned by q + 128 (one xor), so it is
// Q4_1's sum with m = -128d. Measured costs (benchmarks/browser_llama.py) are in kernels.js.
//
// Memory is JavaScript's (imported): every pointer is a byte address that kernels.js chose.
// `f16` is the address of a 65,536-entry table, f32 of each half-precision bit pattern.

// i8x16.swizzle masks: bytes 4k..4k+3 of a vector into the low byte of each 32-bit lane,
// the other bytes zero (an index of 0x80 gives 0, in WebAssembly as in x86's pshufb, so
// V8 emits one pshufb).
const Z: i8 = -128;

@inline function lanes(v: v128, k: i32): v128 {
  // the four bytes 4k..4k+3 as four float lanes (exact: they are 0..255)
  let s: v128;
  if (k == 0) s = i8x16(0, Z, Z, Z, 1, Z, Z, Z, 2, Z, Z, Z, 3, Z, Z, Z);
  else if (k == 1) s = i8x16(4, Z, Z, Z, 5, Z, Z, Z, 6, Z, Z, Z, 7, Z, Z, Z);
  else if (k == 2) s = i8x16(8, Z, Z, Z, 9, Z, Z, Z, 10, Z, Z, Z, 11, Z, Z, Z);
  else s = i8x16(12, Z, Z, Z, 13, Z, Z, Z, 14, Z, Z, Z, 15, Z, Z, Z);
  return f32x4.convert_i32x4_s(i8x16.swizzle(v, s));
}

@inline function half(tab: usize, p: usize): f32 {
  return load<f32>(tab + ((<usize>load<u16>(p)) << 2));
}

// F16 -> f32 of four of eight halves (k = 0: the low four, 1: the high four), by the bits:
// a normal half's exponent is rebased by adding 112 to it; a subnormal one (exponent 0) is
// read as 1.m x 2^-14 and 2^-14 taken away, so that no float32 subnormal is ever made (x86
// takes a slow path on those). Infinities and NaNs are not weights; they come out finite.
@inline function halves(v: v128, k: i32): v128 {
  const h = k == 0 ? i32x4.extend_low_i16x8_u(v) : i32x4.extend_high_i16x8_u(v);
  const bits = i32x4.shl(v128.and(h, i32x4.splat(0x7fff)), 13);
  const normal = i32x4.add(bits, i32x4.splat(112 << 23));
  const sub = f32x4.sub(i32x4.add(bits, i32x4.splat(113 << 23)), f32x4.splat(6.103515625e-5));
  const isSub = i32x4.eq(v128.and(h, i32x4.splat(0x7c00)), i32x4.splat(0));
  return v128.or(v128.bitselect(sub, normal, isSub), i32x4.shl(v128.and(h, i32x4.splat(0x8000)), 16));
}

// The same, fast, for halves none of which has exponent 0: the sign-extended half shifted
// into place (its sign lands in bit 31, its exponent and mantissa in bits 13-27) and the
// exponent rebased by adding 112. A block with a zero or a subnormal takes halves() instead.
@inline function halvesFast(v: v128, k: i32): v128 {
  const h = k == 0 ? i32x4.extend_low_i16x8_s(v) : i32x4.extend_high_i16x8_s(v);
  return i32x4.add(v128.and(i32x4.shl(h, 13), i32x4.splat(0x8fffe000)), i32x4.splat(112 << 23));
}

// Whether an F16 block (32 halves at p) holds a half with exponent 0 (a zero or a subnormal).
@inline function exponentZero(p: usize): bool {
  const e = i16x8.splat(0x7c00), z = i16x8.splat(0);
  return v128.any_true(v128.or(
    v128.or(i16x8.eq(v128.and(v128.load(p, 0), e), z), i16x8.eq(v128.and(v128.load(p, 16), e), z)),
    v128.or(i16x8.eq(v128.and(v128.load(p, 32), e), z), i16x8.eq(v128.and(v128.load(p, 48), e), z))));
}

// Block layout by kind: 0 Q4_0, 1 Q4_1, 2 Q8_0, 3 F16, 4 F32; 5 is an F16 block read by the
// exact halves() (one with a zero or a subnormal: exponentZero).
@inline function blockBytes(kind: i32): usize {
  return kind == 0 ? 18 : kind == 1 ? 20 : kind == 2 ? 34 : kind == 4 ? 128 : 64;
}

// A block's sources: the vectors its 32 weights are read from (Q4: the low and high
// nibbles; Q8_0: the two halves, made unsigned; F16: four loads of 8 halves; F32: none, its
// chunks are loaded as they are).
@inline function source(kind: i32, p: usize, i: i32): v128 {
  if (kind <= 1) {
    const q = kind == 0 ? v128.load(p, 2) : v128.load(p, 4);
    return i == 0 ? v128.and(q, i8x16.splat(0x0f)) : i8x16.shr_u(q, 4);
  }
  if (kind == 2) return v128.xor(i == 0 ? v128.load(p, 2) : v128.load(p, 18), i8x16.splat(-128));
  if (kind == 3 || kind == 5) return i == 0 ? v128.load(p, 0) : i == 1 ? v128.load(p, 16) : i == 2 ? v128.load(p, 32) : v128.load(p, 48);
  return i8x16.splat(0);
}

// Weights 4c .. 4c + 3 of the block at p (unscaled), from its sources s0..s3.
@inline function chunk(kind: i32, p: usize, s0: v128, s1: v128, s2: v128, s3: v128, c: i32): v128 {
  if (kind <= 2) return lanes(c < 4 ? s0 : s1, c & 3);
  if (kind == 3) return halvesFast(c < 2 ? s0 : c < 4 ? s1 : c < 6 ? s2 : s3, c & 1);
  if (kind == 5) return halves(c < 2 ? s0 : c < 4 ? s1 : c < 6 ? s2 : s3, c & 1);
  return c == 0 ? v128.load(p, 0) : c == 1 ? v128.load(p, 16) : c == 2 ? v128.load(p, 32) :
    c == 3 ? v128.load(p, 48) : c == 4 ? v128.load(p, 64) : c == 5 ? v128.load(p, 80) :
    c == 6 ? v128.load(p, 96) : v128.load(p, 112);
}

@inline function xAt(x: usize, c: i32): v128 {
  return c == 0 ? v128.load(x, 0) : c == 1 ? v128.load(x, 16) : c == 2 ? v128.load(x, 32) :
    c == 3 ? v128.load(x, 48) : c == 4 ? v128.load(x, 64) : c == 5 ? v128.load(x, 80) :
    c == 6 ? v128.load(x, 96) : v128.load(x, 112);
}

// sum_j q_j x_j over the block at p, one token: two chains of four chunks (ILP).
@inline function dotBlock(kind: i32, p: usize, x: usize): v128 {
  const s0 = source(kind, p, 0), s1 = source(kind, p, 1), s2 = source(kind, p, 2), s3 = source(kind, p, 3);
  let a = f32x4.mul(chunk(kind, p, s0, s1, s2, s3, 0), xAt(x, 0));
  let b = f32x4.mul(chunk(kind, p, s0, s1, s2, s3, 4), xAt(x, 4));
  a = f32x4.add(a, f32x4.mul(chunk(kind, p, s0, s1, s2, s3, 1), xAt(x, 1)));
  b = f32x4.add(b, f32x4.mul(chunk(kind, p, s0, s1, s2, s3, 5), xAt(x, 5)));
  a = f32x4.add(a, f32x4.mul(chunk(kind, p, s0, s1, s2, s3, 2), xAt(x, 2)));
  b = f32x4.add(b, f32x4.mul(chunk(kind, p, s0, s1, s2, s3, 6), xAt(x, 6)));
  a = f32x4.add(a, f32x4.mul(chunk(kind, p, s0, s1, s2, s3, 3), xAt(x, 3)));
  b = f32x4.add(b, f32x4.mul(chunk(kind, p, s0, s1, s2, s3, 7), xAt(x, 7)));
  return f32x4.add(a, b);
}

@inline function scaleOf(kind: i32, tab: usize, p: usize): f32 {
  return kind <= 2 ? half(tab, p) : <f32>1;
}

@inline function offsetOf(kind: i32, tab: usize, p: usize, d: f32): f32 {
  // m of w = d q + m (the xs term): Q4_0 -8d, Q4_1 its own m, Q8_0 -128d (for the xor), F16/F32 0
  return kind == 0 ? -8 * d : kind == 1 ? half(tab, p + 2) : kind == 2 ? -128 * d : <f32>0;
}

@inline function hsum(v: v128): f32 {
  return f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1) + f32x4.extract_lane(v, 2) +
    f32x4.extract_lane(v, 3);
}

// y[t, r] = sum_c W[r, c] x[t, c] for rows r0 <= r < r1 and tokens 0 <= t < T.
// x: (T, cols) f32; xs: (T, cols / 32) f32, each block's sum; y: (T, rows) f32.
@inline function rows(kind: i32, w: usize, x: usize, xs: usize, y: usize, r0: i32, r1: i32,
                      rows: i32, cols: i32, T: i32, tab: usize): void {
  const nb = cols >> 5;
  const B = blockBytes(kind);
  const rowBytes = <usize>nb * B;
  for (let t = 0; t < T; t++) {
    const xt = x + <usize>t * (<usize>cols << 2);
    const xst = xs + <usize>t * (<usize>nb << 2);
    const yt = y + <usize>t * (<usize>rows << 2);
    for (let r = r0; r < r1; r++) {
      let p = w + <usize>r * rowBytes;
      let acc = f32x4.splat(0);
      let macc: f32 = 0;
      for (let b = 0; b < nb; b++) {
        const d = scaleOf(kind, tab, p);
        const xb = xt + (<usize>b << 7);
        const q = kind == 3 && exponentZero(p) ? dotBlock(5, p, xb) : dotBlock(kind, p, xb);
        acc = f32x4.add(acc, f32x4.mul(q, f32x4.splat(d)));
        macc += offsetOf(kind, tab, p, d) * load<f32>(xst + (<usize>b << 2));
        p += B;
      }
      store<f32>(yt + (<usize>r << 2), hsum(acc) + macc);
    }
  }
}

// One block of one row for T tokens (rowsT's step): the block's 32 weights decoded once into
// eight registers, then each token's 32 multiply-adds added to its sums in `work`.
@inline function tokensBlock(kind: i32, p: usize, xb: usize, sb: usize, T: i32, xStride: usize,
                             sStride: usize, tab: usize, work: usize, mWork: usize): void {
  const s0 = source(kind, p, 0), s1 = source(kind, p, 1), s2 = source(kind, p, 2), s3 = source(kind, p, 3);
  const d = scaleOf(kind, tab, p), m = offsetOf(kind, tab, p, d), ds = f32x4.splat(d);
  const w0 = chunk(kind, p, s0, s1, s2, s3, 0), w1 = chunk(kind, p, s0, s1, s2, s3, 1);
  const w2 = chunk(kind, p, s0, s1, s2, s3, 2), w3 = chunk(kind, p, s0, s1, s2, s3, 3);
  const w4 = chunk(kind, p, s0, s1, s2, s3, 4), w5 = chunk(kind, p, s0, s1, s2, s3, 5);
  const w6 = chunk(kind, p, s0, s1, s2, s3, 6), w7 = chunk(kind, p, s0, s1, s2, s3, 7);
  for (let t = 0; t < T; t++) {
    let a = f32x4.mul(w0, v128.load(xb, 0));
    let c = f32x4.mul(w4, v128.load(xb, 64));
    a = f32x4.add(a, f32x4.mul(w1, v128.load(xb, 16)));
    c = f32x4.add(c, f32x4.mul(w5, v128.load(xb, 80)));
    a = f32x4.add(a, f32x4.mul(w2, v128.load(xb, 32)));
    c = f32x4.add(c, f32x4.mul(w6, v128.load(xb, 96)));
    a = f32x4.add(a, f32x4.mul(w3, v128.load(xb, 48)));
    c = f32x4.add(c, f32x4.mul(w7, v128.load(xb, 112)));
    const at = work + (<usize>t << 4), mt = mWork + (<usize>t << 2);
    v128.store(at, f32x4.add(v128.load(at), f32x4.mul(f32x4.add(a, c), ds)));
    store<f32>(mt, load<f32>(mt) + m * load<f32>(sb));
    xb += xStride;
    sb += sStride;
  }
}

// The same for T > 1 tokens (a prompt's prefill): each block's 32 weights are decoded once
// into eight registers and used for every token, so a token costs the loads and the
// multiply-adds only. Each token's running sums live in `work` (T * 20 bytes: a float4 and a
// float per token), which stays in the L1 cache.
@inline function rowsT(kind: i32, w: usize, x: usize, xs: usize, y: usize, r0: i32, r1: i32,
                       rows: i32, cols: i32, T: i32, tab: usize, work: usize): void {
  const nb = cols >> 5;
  const B = blockBytes(kind);
  const rowBytes = <usize>nb * B;
  const xStride = <usize>cols << 2, sStride = <usize>nb << 2;
  const mWork = work + (<usize>T << 4);
  for (let r = r0; r < r1; r++) {
    let p = w + <usize>r * rowBytes;
    memory.fill(work, 0, <usize>T * 20);
    for (let b = 0; b < nb; b++) {
      const xb = x + (<usize>b << 7), sb = xs + (<usize>b << 2);
      if (kind == 3 && exponentZero(p)) tokensBlock(5, p, xb, sb, T, xStride, sStride, tab, work, mWork);
      else tokensBlock(kind, p, xb, sb, T, xStride, sStride, tab, work, mWork);
      p += B;
    }
    for (let t = 0; t < T; t++) {
      store<f32>(y + ((<usize>t * <usize>rows + <usize>r) << 2),
                 hsum(v128.load(work + (<usize>t << 4))) + load<f32>(mWork + (<usize>t << 2)));
    }
  }
}

// One token: rows(); more: rowsT().
@inline function matmul(kind: i32, w: usize, x: usize, xs: usize, y: usize, r0: i32, r1: i32,
                        nrows: i32, cols: i32, T: i32, tab: usize, work: usize): void {
  if (T == 1) rows(kind, w, x, xs, y, r0, r1, nrows, cols, 1, tab);
  else rowsT(kind, w, x, xs, y, r0, r1, nrows, cols, T, tab, work);
}

export function matmulQ4_0(w: usize, x: usize, xs: usize, y: usize, r0: i32, r1: i32, nrows: i32, cols: i32, T: i32, tab: usize, work: usize): void {
  matmul(0, w, x, xs, y, r0, r1, nrows, cols, T, tab, work);
}
export function matmulQ4_1(w: usize, x: usize, xs: usize, y: usize, r0: i32, r1: i32, nrows: i32, cols: i32, T: i32, tab: usize, work: usize): void {
  matmul(1, w, x, xs, y, r0, r1, nrows, cols, T, tab, work);
}
export function matmulQ8_0(w: usize, x: usize, xs: usize, y: usize, r0: i32, r1: i32, nrows: i32, cols: i32, T: i32, tab: usize, work: usize): void {
  matmul(2, w, x, xs, y, r0, r1, nrows, cols, T, tab, work);
}
export function matmulF16(w: usize, x: usize, xs: usize, y: usize, r0: i32, r1: i32, nrows: i32, cols: i32, T: i32, tab: usize, work: usize): void {
  matmul(3, w, x, xs, y, r0, r1, nrows, cols, T, tab, work);
}
export function matmulF32(w: usize, x: usize, xs: usize, y: usize, r0: i32, r1: i32, nrows: i32, cols: i32, T: i32, tab: usize, work: usize): void {
  matmul(4, w, x, xs, y, r0, r1, nrows, cols, T, tab, work);
}

// xs[t, b] = sum of x[t, 32b .. 32b + 31]: the m term's sums, once per vector.
export function blockSums(x: usize, xs: usize, cols: i32, T: i32): void {
  const nb = cols >> 5;
  for (let t = 0; t < T; t++) {
    for (let b = 0; b < nb; b++) {
      const p = x + ((<usize>t * <usize>cols + (<usize>b << 5)) << 2);
      let s = f32x4.add(f32x4.add(v128.load(p, 0), v128.load(p, 16)), f32x4.add(v128.load(p, 32), v128.load(p, 48)));
      s = f32x4.add(s, f32x4.add(f32x4.add(v128.load(p, 64), v128.load(p, 80)), f32x4.add(v128.load(p, 96), v128.load(p, 112))));
      store<f32>(xs + ((<usize>t * <usize>nb + <usize>b) << 2), hsum(s));
    }
  }
}

// One query's attention over n cached keys of one key/value head, in two halves around the
// softmax, which kernels.js computes in double precision between them (a call here to
// Math.exp would bring its tables as static data, and the memory is all JavaScript's):
//   scores: weights_j = (q . k_j) * scale           q: (dHead,), K: (n, dHead) f32
//   mix:    out = sum_j weights_j v_j               V: (n, dHead), out: (dHead,) f32
// dHead a multiple of 4: four lanes at a time.
export function scores(q: usize, K: usize, n: i32, dHead: i32, scale: f32, weights: usize): void {
  const rowBytes = <usize>dHead << 2;
  let k = K;
  for (let j = 0; j < n; j++) {
    let acc = f32x4.splat(0);
    for (let i: usize = 0; i < rowBytes; i += 16) {
      acc = f32x4.add(acc, f32x4.mul(v128.load(q + i), v128.load(k + i)));
    }
    store<f32>(weights + (<usize>j << 2), hsum(acc) * scale);
    k += rowBytes;
  }
}

export function mix(weights: usize, V: usize, n: i32, dHead: i32, out: usize): void {
  const rowBytes = <usize>dHead << 2;
  for (let i: usize = 0; i < rowBytes; i += 16) v128.store(out + i, f32x4.splat(0));
  let v = V;
  for (let j = 0; j < n; j++) {
    const w = f32x4.splat(load<f32>(weights + (<usize>j << 2)));
    for (let i: usize = 0; i < rowBytes; i += 16) {
      v128.store(out + i, f32x4.add(v128.load(out + i), f32x4.mul(w, v128.load(v + i))));
    }
    v += rowBytes;
  }
}
