/*
 * kernels.js: the decoder's memory and its matrix products y = x W^T, computed from GGUF's
 * quantised blocks (Q4_0, Q4_1, Q8_0) or F16/F32 rows without expanding W to float32.
 *
 *   const k = await createKernels(nbytes);            // WebAssembly SIMD where it runs, else JS
 *   const w = k.alloc(tensor.nbytes); k.u8.set(bytes, w);
 *   k.blockSums(x, xs, cols, T);                      // xs: (T, cols / 32)
 *   k.matmul("Q4_1", w, x, xs, y, rows, cols, T);     // x: (T, cols) -> y: (T, rows)
 *
 * Every array lives in one memory (`k.buffer`, views `k.u8`, `k.f32`), addressed in bytes:
 * the WebAssembly module's memory, or a plain ArrayBuffer for the JavaScript backend. It is
 * sized once, by the caller's count (model.js adds the weights, the KV cache and the
 * scratch vectors), and never grows, so views made from it stay valid.
 *
 * Two backends, the same numbers within float32 rounding (tests/test_web_llama.py):
 *   - "wasm": kernels.ts compiled by AssemblyScript (see there how a block is read),
 *     four float lanes at a time. Needs WebAssembly SIMD (chromium 91, Firefox 89,
 *     Safari 16.4).
 *   - "js": the same arithmetic a number at a time, in double precision.
 * Measured in headless chromium on this 2-core VM (benchmarks/browser_llama.py,
 * SmolLM2-135M's shapes): see the numbers there and in the closing note of issue 42.
 */

import {KERNELS_WASM} from "./wasm-bytes.js";

/** The tensor types the kernels read: name -> [block size, bytes a block, wasm export]. */
export const KERNEL_TYPES = new Map([
  ["Q4_0", [32, 18, "matmulQ4_0"]], ["Q4_1", [32, 20, "matmulQ4_1"]],
  ["Q8_0", [32, 34, "matmulQ8_0"]], ["F16", [1, 2, "matmulF16"]], ["F32", [1, 4, "matmulF32"]],
]);

const PAGE = 65536;
/** Tokens the tiled kernel takes at once (more are done MAX_T at a time). */
const MAX_T = 64;

/** float32 of every float16 bit pattern (IEEE 754 binary16), 65,536 entries. */
export const halfTable = () => {
  const table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    table[h] = sign * (e === 0 ? m * 2 ** -24 : e === 31 ? (m ? NaN : Infinity) : (1024 + m) * 2 ** (e - 25));
  }
  return table;
};

/** Can this browser compile WebAssembly SIMD? (validates the kernels' own module) */
const wasmBytes = () => {
  const text = atob(KERNELS_WASM);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
};

/**
 * One row range of y = x W^T in JavaScript, a block at a time (kernels.ts's arithmetic).
 * @param {string} type  a KERNEL_TYPES name
 * @param {{u8: Uint8Array, f32: Float32Array, dv: DataView, half: Float32Array}} m  the memory
 */
const matmulJs = (type, m, w, x, xs, y, rows, cols, T) => {
  const {u8, f32, half} = m;
  const u16 = m.u16, nb = cols >> 5;
  for (let t = 0; t < T; t++) {
    const xt = (x >> 2) + t * cols, xst = (xs >> 2) + t * nb, yt = (y >> 2) + t * rows;
    if (type === "F32" || type === "F16") {
      const row = type === "F32" ? f32 : u16, shift = type === "F32" ? 2 : 1;
      for (let r = 0; r < rows; r++) {
        const p = (w >> shift) + r * cols;
        let s = 0;
        if (type === "F32") for (let c = 0; c < cols; c++) s += row[p + c] * f32[xt + c];
        else for (let c = 0; c < cols; c++) s += half[row[p + c]] * f32[xt + c];
        f32[yt + r] = s;
      }
      continue;
    }
    const B = type === "Q4_0" ? 18 : type === "Q4_1" ? 20 : 34;
    for (let r = 0; r < rows; r++) {
      let p = w + r * nb * B, s = 0;
      for (let b = 0; b < nb; b++, p += B) {
        const d = half[u8[p] | (u8[p + 1] << 8)], xb = xt + 32 * b;
        let q = 0, mTerm;
        if (type === "Q8_0") {
          for (let j = 0; j < 32; j++) q += ((u8[p + 2 + j] << 24) >> 24) * f32[xb + j];
          mTerm = 0;
        } else {
          const at = type === "Q4_0" ? p + 2 : p + 4;
          for (let j = 0; j < 16; j++) {
            const byte = u8[at + j];
            q += (byte & 15) * f32[xb + j] + (byte >> 4) * f32[xb + j + 16];
          }
          mTerm = (type === "Q4_0" ? -8 * d : half[u8[p + 2] | (u8[p + 3] << 8)]) * f32[xst + b];
        }
        s += d * q + mTerm;
      }
      f32[yt + r] = s;
    }
  }
};

/**
 * The memory and the products.
 *
 * @param {number} nbytes  bytes the caller will alloc() in all (alignment included)
 * @param {{backend?: "auto"|"wasm"|"js"}} [options]  "auto": WebAssembly when this browser
 *   compiles the SIMD module, else JavaScript
 * @returns {Promise<{backend: string, buffer: ArrayBuffer, u8: Uint8Array, f32: Float32Array,
 *   alloc: function(number, number=): number, blockSums: function, matmul: function,
 *   half: Float32Array}>}
 */
export const createKernels = async (nbytes, {backend = "auto"} = {}) => {
  // a small reserved head, the f16 table, then the tiled kernel's sums for MAX_T tokens
  const TABLE = 65536 * 4, HEAD = 64, WORK = HEAD + TABLE;
  const total = Math.ceil((WORK + MAX_T * 20 + nbytes) / PAGE) * PAGE;
  let wasm = null, memory = null;
  if (backend !== "js") {
    const bytes = wasmBytes();
    if (WebAssembly.validate(bytes)) {
      if (total > 65536 * PAGE) {
        throw Object.assign(new RangeError(`the model needs ${Math.round(total / 2 ** 20)} MiB, past ` +
          "WebAssembly's 4 GiB: choose a smaller model or a smaller quantisation"), {code: "memory"});
      }
      try {
        memory = new WebAssembly.Memory({initial: total / PAGE, maximum: total / PAGE});
      } catch (err) {
        throw Object.assign(new RangeError(`the model needs ${Math.round(total / 2 ** 20)} MiB of memory, ` +
          `which this browser did not give the page (${err.message})`), {code: "memory"});
      }
      wasm = (await WebAssembly.instantiate(bytes, {env: {memory}})).instance.exports;
    } else if (backend === "wasm") {
      throw new Error("this browser cannot run WebAssembly SIMD: use backend \"js\"");
    }
  }
  const buffer = wasm ? memory.buffer : new ArrayBuffer(total);
  const u8 = new Uint8Array(buffer), f32 = new Float32Array(buffer), u16 = new Uint16Array(buffer);
  const half = new Float32Array(buffer, HEAD, 65536);
  half.set(halfTable());
  let top = WORK + MAX_T * 20;
  let scores = new Float64Array(1024);  // the JS attend's scores, grown to the longest row
  const grow = (n) => { if (scores.length < n) scores = new Float64Array(2 * n); };
  const m = {u8, f32, u16, half};
  return {
    backend: wasm ? "wasm" : "js",
    buffer, u8, f32, half,
    /** Reserve n bytes aligned to `align` (default 16); returns the byte address. */
    alloc: (n, align = 16) => {
      const at = Math.ceil(top / align) * align;
      if (at + n > total) throw new RangeError(`kernels: out of memory (${at + n} > ${total} bytes)`);
      top = at + n;
      return at;
    },
    get used() { return top; },
    /** xs[t, b] = sum of x[t, 32b .. 32b + 31], for T rows of `cols` floats. */
    blockSums: (x, xs, cols, T) => {
      if (wasm) { wasm.blockSums(x, xs, cols, T); return; }
      for (let t = 0; t < T; t++) {
        for (let b = 0; b < cols >> 5; b++) {
          let s = 0;
          for (let j = 0; j < 32; j++) s += f32[(x >> 2) + t * cols + 32 * b + j];
          f32[(xs >> 2) + t * (cols >> 5) + b] = s;
        }
      }
    },
    /**
     * One query's attention over n cached keys (kernels.ts's attend): the weights
     * softmax(q K^T * scale) into `weights` (n,), and out = weights V (dHead,), zero when `skip`.
     * q, K, V, weights, out are byte addresses of f32; dHead a multiple of 4.
     */
    attend: (q, K, V, n, dHead, scale, weights, out, skip) => {
      grow(n);
      const w = weights >> 2;
      if (wasm) {
        wasm.scores(q, K, n, dHead, scale, weights);
        for (let j = 0; j < n; j++) scores[j] = f32[w + j];
      } else {
        for (let j = 0; j < n; j++) {
          let dot = 0;
          const qi = q >> 2, kj = (K >> 2) + j * dHead;
          for (let i = 0; i < dHead; i++) dot += f32[qi + i] * f32[kj + i];
          scores[j] = dot * scale;
        }
      }
      let max = -Infinity, sum = 0;
      for (let j = 0; j < n; j++) if (scores[j] > max) max = scores[j];
      for (let j = 0; j < n; j++) { scores[j] = Math.exp(scores[j] - max); sum += scores[j]; }
      for (let j = 0; j < n; j++) f32[w + j] = scores[j] / sum;
      if (skip) { f32.fill(0, out >> 2, (out >> 2) + dHead); return; }
      if (wasm) { wasm.mix(weights, V, n, dHead, out); return; }
      const acc = new Float64Array(dHead);
      for (let j = 0; j < n; j++) {
        const p = scores[j] / sum, vj = (V >> 2) + j * dHead;
        for (let i = 0; i < dHead; i++) acc[i] += p * f32[vj + i];
      }
      f32.set(acc, out >> 2);
    },
    /**
     * y = x W^T: x (T, cols) f32 at `x`, W (rows, cols) of `type` at `w`, y (T, rows) f32.
     * xs must hold blockSums(x) (Q4_0, Q4_1 and Q8_0 read it). cols is a multiple of 32.
     */
    matmul: (type, w, x, xs, y, rows, cols, T) => {
      if (!wasm) { matmulJs(type, m, w, x, xs, y, rows, cols, T); return; }
      const kernel = wasm[KERNEL_TYPES.get(type)[2]];
      for (let t = 0; t < T; t += MAX_T) {
        kernel(w, x + t * cols * 4, xs + t * (cols >> 5) * 4, y + t * rows * 4, 0, rows, rows, cols,
          Math.min(MAX_T, T - t), HEAD, WORK);
      }
    },
  };
};
