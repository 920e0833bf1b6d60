/*
 * model.js: a llama-architecture decoder read from a GGUF file (SmolLM2-135M-Instruct, or a
 * reader's own), run token by token with a KV cache, returning every head's attention.
 *
 *   const model = await loadModel(bytes, {maxContext: 2048});
 *   const run = model.forward(model.tokenizer.encode("The cat sat on the"));
 *   run.logits      // Float32Array (V,): the next token's logits after the last position
 *   run.attention   // Float32Array (L, h, T, S): layer, query head, new position, key
 *                   // (S = model.length, every token so far; a row is 0 past its position)
 *   model.forward([nextId])   // one more position: T = 1, S grows by one
 *
 * One block (llama.cpp's build_llama; transformers' LlamaDecoderLayer), for a residual
 * stream x (T, d):
 *   a = RMSNorm(x) * attn_norm
 *   q = a W^Q^T (T, h, d_head), k = a W^K^T, v = a W^V^T (T, g, d_head)
 *   q, k rotated by RoPE at their positions, on adjacent pairs (2i, 2i+1): GGUF stores W^Q
 *   and W^K with each head's rows permuted for that layout (convert_hf_to_gguf.py), so the
 *   same q.k come out as transformers' split halves (i, i + d_head/2) on its own weights
 *   k, v appended to the cache; query head j reads key/value head j / (h / g) (GQA)
 *   x += softmax(q k^T / sqrt(d_head) + causal mask) v W^O^T
 *   x += (SiLU(b W_gate^T) * (b W_up^T)) W_down^T,  b = RMSNorm(x) * ffn_norm
 * and at the end logits = (RMSNorm(x) * output_norm) W_out^T, W_out = token_embd when the
 * file has no output.weight (tied).
 *
 * The products run in kernels.js (WebAssembly SIMD, or JavaScript), reading the file's
 * blocks; RMSNorm, RoPE, softmax and SiLU run here in double precision. What the file must
 * hold is config.js's; its errors are GGUFError with a code for the page ("architecture",
 * "tensor-type", "model"; gguf.js's own: "not-gguf", "truncated", "version", "corrupt").
 */

import {BIASES, LAYER_MATRICES, LAYER_VECTORS, checkTensors, dequantize, readConfig} from "./config.js";
import {readGGUF} from "./gguf.js";
import {createKernels} from "./kernels.js";
import {inputError} from "./sample.js";
import {Tokenizer} from "./tokenizer.js";

/** Tokens a prefill computes at once (the scratch vectors are sized for this many). */
export const CHUNK = 64;

/**
 * Read a GGUF file and make the model ready to run.
 *
 * @param {ArrayBuffer|Uint8Array} bytes  the whole file (copied: the caller may drop it)
 * @param {{maxContext?: number, backend?: "auto"|"wasm"|"js"}} [options]
 *   maxContext: positions the KV cache holds (default min(2048, the model's context));
 *   backend: kernels.js's
 * @returns {Promise<Model>}
 * @throws {GGUFError|TokenizerError}
 */
export const loadModel = async (bytes, {maxContext, backend = "auto"} = {}) => {
  const start = performance.now();
  const file = readGGUF(bytes);
  const config = readConfig(file.metadata);
  const tensors = checkTensors(file, config);
  const tokenizer = new Tokenizer(file.metadata);
  const ctx = Math.min(maxContext ?? 2048, config.contextLength);
  if (!Number.isInteger(ctx) || ctx < 1) {
    throw new RangeError(`maxContext must be a whole number >= 1, got ${maxContext}`);
  }
  const {d, ffn, nHeads: h, nKvHeads: g, dHead, nLayers: L} = config;
  const qDim = h * dHead, kvDim = g * dHead, wide = Math.max(d, ffn, qDim);
  // Sizes in bytes: the matrices as the file has them; the cache; the scratch rows for CHUNK tokens.
  const matrices = [...tensors.values()].filter((t) => t.dims.length === 2);
  const weightBytes = matrices.reduce((n, t) => n + Math.ceil(t.nbytes / 32) * 32, 0);
  const cacheBytes = 2 * L * kvDim * ctx * 4;
  // the scratch rows (floats), each CHUNK tokens of: the residual stream x, a block's input
  // a and its block sums, q, k, v, the heads' outputs, an output o, SwiGLU's two halves,
  // logits, and one row of attention weights (ctx floats in all)
  const rows = {x: d, a: wide, as: wide / 32, q: qDim, kk: kvDim, vv: kvDim, ctxv: qDim, o: d,
    gate: ffn, up: ffn, logits: config.vocab, weights: Math.ceil(ctx / CHUNK)};
  const scratchBytes = Object.values(rows).reduce((n, r) => n + Math.ceil(CHUNK * r * 4 / 16) * 16, 0);
  const k = await createKernels(weightBytes + cacheBytes + scratchBytes, {backend});
  const ptr = new Map();
  for (const t of matrices) {
    const at = k.alloc(t.nbytes, 32);
    k.u8.set(file.bytes.subarray(t.offset, t.offset + t.nbytes), at);
    ptr.set(t.name, at);
  }
  const vector = (name) => {
    const t = tensors.get(name);
    return t ? dequantize(file.bytes, t.typeName, t.offset, t.nElements, k.half) : null;
  };
  const layers = Array.from({length: L}, (_, l) => {
    const layer = {};
    for (const m of LAYER_MATRICES) {
      const name = `blk.${l}.${m}.weight`;
      layer[m] = {at: ptr.get(name), type: tensors.get(name).typeName};
    }
    for (const v of LAYER_VECTORS) layer[v] = vector(`blk.${l}.${v}.weight`);
    for (const b of BIASES) layer[`${b}_bias`] = vector(`blk.${l}.${b}.bias`);
    return layer;
  });
  const outName = tensors.has("output.weight") ? "output.weight" : "token_embd.weight";
  const embd = {at: ptr.get("token_embd.weight"), type: tensors.get("token_embd.weight").typeName};
  const output = {at: ptr.get(outName), type: tensors.get(outName).typeName};
  const outputNorm = vector("output_norm.weight");
  // RoPE's frequencies: theta_i = base^(-2i / n_rot), divided by rope_freqs (Llama 3) if present
  const freqFactors = vector("rope_freqs.weight");
  const invFreq = Float64Array.from({length: config.nRot / 2}, (_, i) =>
    config.ropeBase ** (-2 * i / config.nRot) / (freqFactors ? freqFactors[i] : 1));
  // the KV cache: (L, g, ctx, d_head) each, float32
  const kCache = k.alloc(cacheBytes / 2), vCache = k.alloc(cacheBytes / 2);
  const s = Object.fromEntries(Object.entries(rows).map(([name, r]) => [name,
    {at: k.alloc(CHUNK * r * 4), floats: CHUNK * r}]));
  const view = (b) => new Float32Array(k.buffer, b.at, b.floats);
  const embdTensor = tensors.get("token_embd.weight");
  const rowBytes = embdTensor.nbytes / config.vocab;
  return new Model({config, tokenizer, k, layers, embd, output, outputNorm, invFreq, ctx, kCache, vCache, s, view,
    rowBytes, info: {
      backend: k.backend, loadMs: performance.now() - start, maxContext: ctx,
      bytes: {weights: weightBytes, cache: cacheBytes, scratch: scratchBytes, memory: k.buffer.byteLength},
      types: matrices.reduce((m, t) => ({...m, [t.typeName]: (m[t.typeName] ?? 0) + 1}), {}),
      tied: outName === "token_embd.weight",
    }});
};

/** RMSNorm of each of T rows of n in x, times w, into out (Float32Array views). */
const rmsNorm = (x, w, out, T, n, eps) => {
  for (let t = 0; t < T; t++) {
    let ss = 0;
    for (let i = 0; i < n; i++) ss += x[t * n + i] * x[t * n + i];
    const r = 1 / Math.sqrt(ss / n + eps);
    for (let i = 0; i < n; i++) out[t * n + i] = x[t * n + i] * r * w[i];
  }
};

class Model {
  constructor(parts) {
    Object.assign(this, parts);
    /** @type {number[]} the ids in the cache, in order */
    this.tokens = [];
    const c = this.config;
    this.views = Object.fromEntries(Object.entries(this.s).map(([name, b]) => [name, this.view(b)]));
    const cacheFloats = c.nLayers * c.nKvHeads * this.ctx * c.dHead;
    this.K = new Float32Array(this.k.buffer, this.kCache, cacheFloats);
    this.V = new Float32Array(this.k.buffer, this.vCache, cacheFloats);
  }

  /** Tokens in the cache (the next position). */
  get length() { return this.tokens.length; }

  /** Forget all but the first n tokens (their cache stays valid). */
  reset(n = 0) {
    if (!Number.isInteger(n) || n < 0 || n > this.length) {
      throw new RangeError(`reset(n) needs 0 <= n <= ${this.length}, got ${n}`);
    }
    this.tokens.length = n;
  }

  /** y = x W^T for T rows, with x's block sums (the kernels' xs) computed first. */
  linear(w, x, y, T, cols, rows) {
    this.k.blockSums(x.at, this.s.as.at, cols, T);
    this.k.matmul(w.type, w.at, x.at, this.s.as.at, y.at, rows, cols, T);
  }

  /** The embedding rows of ids into x (T, d). */
  embed(ids) {
    const {d} = this.config, x = this.views.x;
    ids.forEach((id, t) => {
      x.set(dequantize(this.k.u8, this.embd.type, this.embd.at + id * this.rowBytes, d, this.k.half), t * d);
    });
  }

  /** RoPE on adjacent pairs of the first n_rot dims of each head, for T rows at positions pos0.. */
  rope(v, T, nh, pos0) {
    const {dHead, nRot, ropeScale} = this.config;
    for (let t = 0; t < T; t++) {
      const pos = (pos0 + t) / ropeScale;
      for (let i = 0; i < nRot / 2; i++) {
        const angle = pos * this.invFreq[i], cos = Math.cos(angle), sin = Math.sin(angle);
        for (let hh = 0; hh < nh; hh++) {
          const at = (t * nh + hh) * dHead + 2 * i, a = v[at], b = v[at + 1];
          v[at] = a * cos - b * sin;
          v[at + 1] = a * sin + b * cos;
        }
      }
    }
  }

  /**
   * Causal GQA over the cache for T new rows at positions pos0..pos0+T-1, into ctxv (T, h*d_head);
   * each row's weights are written to `att` (L, h, T or 1, stride) when given: every row
   * (attRows "all") or the last. kernels.attend computes one (row, head).
   */
  attend(l, T, pos0, att, attRows, stride, headMask) {
    const {nHeads: h, nKvHeads: g, dHead} = this.config, group = h / g, scale = 1 / Math.sqrt(dHead);
    const weights = this.views.weights;
    for (let t = 0; t < T; t++) {
      const n = pos0 + t + 1;  // keys 0..pos0+t
      for (let hh = 0; hh < h; hh++) {
        const base = (l * g + Math.floor(hh / group)) * this.ctx * dHead * 4, row = (t * h + hh) * dHead * 4;
        this.k.attend(this.s.q.at + row, this.kCache + base, this.vCache + base, n, dHead, scale,
          this.s.weights.at, this.s.ctxv.at + row, headMask && headMask[l * h + hh]);
        if (att && (attRows === "all" || t === T - 1)) {
          const at = ((l * h + hh) * (attRows === "all" ? T : 1) + (attRows === "all" ? t : 0)) * stride;
          att.set(weights.subarray(0, n), at);
        }
      }
    }
  }

  /**
   * Run new tokens through the model, after those in the cache.
   *
   * @param {number[]|Int32Array} ids  T >= 1 token ids
   * @param {{attention?: "all"|"last"|"none", logits?: "last"|"all", hidden?: boolean,
   *          headMask?: Uint8Array}} [options]
   *   attention: every new row's weights (L, h, T, S), the last row's (L, h, 1, S), or none;
   *   logits: the last position's (V,) or every new position's (T, V);
   *   hidden: the residual stream at the last position before each block and after the last
   *   (L + 1, d), for the logit lens (lens());
   *   headMask: (L * h) 1 where a head is switched off: its output is zero before W^O
   * @returns {{logits: Float32Array, attention: Float32Array|null, hidden: Float32Array|null,
   *           T: number, S: number}}
   */
  forward(ids, {attention = "all", logits = "last", hidden = false, headMask = null} = {}) {
    const c = this.config, T = ids.length, pos0 = this.length, S = pos0 + T;
    if (T < 1) throw inputError("empty-prompt", "forward() needs at least one token");
    if (S > this.ctx) throw inputError("context", `${S} tokens exceed the ${this.ctx} positions this model's cache holds`);
    for (const id of ids) {
      if (!Number.isInteger(id) || id < 0 || id >= c.vocab) throw inputError("token", `token id ${id} is outside the vocabulary (0 to ${c.vocab - 1})`);
    }
    const rows = attention === "all" ? T : 1;
    const att = attention === "none" ? null : new Float32Array(c.nLayers * c.nHeads * rows * S);
    const hid = hidden ? new Float32Array((c.nLayers + 1) * c.d) : null;
    const allLogits = logits === "all" ? new Float32Array(T * c.vocab) : null;
    let last = null;
    for (let t0 = 0; t0 < T; t0 += CHUNK) {
      const n = Math.min(CHUNK, T - t0);
      const part = this.chunk(ids.slice(t0, t0 + n), pos0 + t0,
        {att, attention, rows, S, t0, hid: t0 + n === T ? hid : null, headMask});
      if (allLogits) {
        this.outputs(n);
        allLogits.set(this.views.logits.subarray(0, n * c.vocab), t0 * c.vocab);
      }
      if (t0 + n === T) last = part;
    }
    if (!allLogits) this.outputs(1, last);
    const out = allLogits ?? this.views.logits.slice(0, c.vocab);
    return {logits: out, attention: att, hidden: hid, T, S};
  }

  /** One chunk of at most CHUNK tokens through every block; leaves x (n, d) final. */
  chunk(ids, pos0, {att, attention, rows, S, t0, hid, headMask}) {
    const c = this.config, n = ids.length, {d, ffn, nHeads: h, nKvHeads: g, dHead} = c, V = this.views;
    const kvDim = g * dHead, qDim = h * dHead;
    this.embed(ids);
    // a chunk's attention rows go into the caller's (L, h, rows, S) array at row t0 (all) or
    // only the call's last row (last): attend() writes a chunk-sized array copied in below
    const chunkAtt = att ? new Float32Array(c.nLayers * h * (attention === "all" ? n : 1) * S) : null;
    for (let l = 0; l < c.nLayers; l++) {
      const L = this.layers[l];
      if (hid) hid.set(V.x.subarray((n - 1) * d, n * d), l * d);
      rmsNorm(V.x, L.attn_norm, V.a, n, d, c.eps);
      this.linear(L.attn_q, this.s.a, this.s.q, n, d, qDim);
      this.linear(L.attn_k, this.s.a, this.s.kk, n, d, kvDim);
      this.linear(L.attn_v, this.s.a, this.s.vv, n, d, kvDim);
      this.addBias(V.q, L.attn_q_bias, n);
      this.addBias(V.kk, L.attn_k_bias, n);
      this.addBias(V.vv, L.attn_v_bias, n);
      this.rope(V.q, n, h, pos0);
      this.rope(V.kk, n, g, pos0);
      for (let t = 0; t < n; t++) {
        for (let kv = 0; kv < g; kv++) {
          const at = ((l * g + kv) * this.ctx + pos0 + t) * dHead, from = (t * g + kv) * dHead;
          this.K.set(V.kk.subarray(from, from + dHead), at);
          this.V.set(V.vv.subarray(from, from + dHead), at);
        }
      }
      this.attend(l, n, pos0, chunkAtt, attention === "all" ? "all" : "last", S, headMask);
      this.linear(L.attn_output, this.s.ctxv, this.s.o, n, qDim, d);
      this.addBias(V.o, L.attn_output_bias, n);
      for (let i = 0; i < n * d; i++) V.x[i] += V.o[i];
      rmsNorm(V.x, L.ffn_norm, V.a, n, d, c.eps);
      this.linear(L.ffn_gate, this.s.a, this.s.gate, n, d, ffn);
      this.linear(L.ffn_up, this.s.a, this.s.up, n, d, ffn);
      for (let i = 0; i < n * ffn; i++) {
        const gv = V.gate[i];
        V.a[i] = (gv / (1 + Math.exp(-gv))) * V.up[i];
      }
      this.linear(L.ffn_down, this.s.a, this.s.o, n, ffn, d);
      for (let i = 0; i < n * d; i++) V.x[i] += V.o[i];
    }
    if (hid) hid.set(V.x.subarray((n - 1) * d, n * d), c.nLayers * d);
    if (chunkAtt) this.placeAttention(att, chunkAtt, attention, n, rows, S, t0);
    this.tokens.push(...ids);
    return {n};
  }

  /** Copy a chunk's attention (L, h, n or 1, S_chunk) into the call's (L, h, rows, S). */
  placeAttention(att, chunkAtt, attention, n, rows, S, t0) {
    const {nLayers, nHeads} = this.config, r = attention === "all" ? n : 1;
    for (let lh = 0; lh < nLayers * nHeads; lh++) {
      for (let t = 0; t < r; t++) {
        const from = (lh * r + t) * S, to = (lh * rows + (attention === "all" ? t0 + t : 0)) * S;
        att.set(chunkAtt.subarray(from, from + S), to);
      }
    }
  }

  addBias(v, bias, n) {
    if (!bias) return;
    for (let t = 0; t < n; t++) for (let i = 0; i < bias.length; i++) v[t * bias.length + i] += bias[i];
  }

  /** Logits of the last `n` rows of x (after the final norm) into views.logits. */
  outputs(n, last = null) {
    const c = this.config, V = this.views, rows = last ? last.n : n;
    const from = (rows - n) * c.d;
    rmsNorm(V.x.subarray(from), this.outputNorm, V.a, n, c.d, c.eps);
    this.linear(this.output, this.s.a, this.s.logits, n, c.d, c.vocab);
  }

  /**
   * The logit lens: what the model would say if the residual stream `x` (d,) were the last
   * block's output (final RMSNorm, then the output layer).
   * @param {Float32Array} x  (d,), e.g. a row of forward(..., {hidden: true}).hidden
   * @returns {Float32Array} (V,)
   */
  lens(x) {
    const c = this.config;
    if (!x || x.length !== c.d) throw new RangeError(`lens() needs a residual stream of ${c.d} numbers`);
    rmsNorm(x, this.outputNorm, this.views.a, 1, c.d, c.eps);
    this.linear(this.output, this.s.a, this.s.logits, 1, c.d, c.vocab);
    return this.views.logits.slice(0, c.vocab);
  }
}
