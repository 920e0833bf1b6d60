/*
 * config.js: what a GGUF file must hold to be a llama model the book runs (model.js loads it).
 *
 *   readConfig(metadata)      the shape: layers, width, heads, RoPE, vocabulary (llama.cpp's keys)
 *   checkTensors(file, c)     every tensor there, of the shape the config implies, of a type
 *                             the kernels read, and no other
 *   dequantize(u8, type, ...) a norm's weights or one embedding row as float32
 *
 * Errors are GGUFError with a code for the page: "architecture" (not llama, or a mixture of
 * experts), "tensor-type" (Q4_K, BF16, ...), "model" (a missing key or tensor, a shape that
 * does not add up).
 */

import {GGUFError} from "./gguf.js";
import {KERNEL_TYPES} from "./kernels.js";

export const LAYER_MATRICES = ["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"];
export const LAYER_VECTORS = ["attn_norm", "ffn_norm"];
export const BIASES = ["attn_q", "attn_k", "attn_v", "attn_output"];

/** A value of the file's metadata, or a clear error when a required one is missing. */
const meta = (metadata, key, fallback) => {
  const value = metadata[key] ?? fallback;
  if (value === undefined) throw new GGUFError("model", `the file lacks ${key}, which a llama model needs`);
  return value;
};

/**
 * The model's shape from the GGUF metadata (llama.cpp's names).
 * @param {Object<string, *>} metadata
 * @returns {{arch: string, name: string, nLayers: number, d: number, ffn: number, nHeads: number,
 *   nKvHeads: number, dHead: number, nRot: number, eps: number, ropeBase: number,
 *   ropeScale: number, contextLength: number, vocab: number}}
 */
export const readConfig = (metadata) => {
  const arch = metadata["general.architecture"];
  if (arch !== "llama") {
    throw new GGUFError("architecture", `this is a${/^[aeiou]/i.test(String(arch)) ? "n" : ""} ` +
      `"${arch ?? "unnamed"}" model; the book runs llama-architecture GGUFs with a byte-level ` +
      "BPE tokenizer (SmolLM2 135M, 360M and 1.7B; Llama 3.x)");
  }
  const key = (name, fallback) => meta(metadata, `llama.${name}`, fallback);
  if (key("expert_count", 0) > 0) {
    throw new GGUFError("architecture", "this llama model is a mixture of experts; the book runs dense ones");
  }
  const d = key("embedding_length"), nHeads = key("attention.head_count");
  const dHead = key("attention.key_length", d / nHeads);
  const scaling = key("rope.scaling.type", "none");
  if (scaling !== "none" && scaling !== "linear") {
    throw new GGUFError("model", `RoPE scaling "${scaling}" is not one the book computes (none, linear)`);
  }
  const config = {
    arch, name: metadata["general.name"] ?? "a llama model",
    nLayers: key("block_count"), d, ffn: key("feed_forward_length"), nHeads,
    nKvHeads: key("attention.head_count_kv", nHeads), dHead,
    nRot: key("rope.dimension_count", dHead),
    eps: key("attention.layer_norm_rms_epsilon", 1e-5),
    ropeBase: key("rope.freq_base", 10000),
    ropeScale: scaling === "linear" ? key("rope.scaling.factor", 1) : 1,
    contextLength: key("context_length", 2048),
    vocab: (metadata["tokenizer.ggml.tokens"] ?? []).length || key("vocab_size"),
  };
  if (key("attention.value_length", dHead) !== dHead || !Number.isInteger(dHead) ||
      dHead % 4 !== 0 || nHeads % config.nKvHeads !== 0 || config.nRot > dHead || config.nRot % 2) {
    throw new GGUFError("model", `heads the book cannot split: d = ${d}, ${nHeads} query heads, ` +
      `${config.nKvHeads} key/value heads, d_head = ${dHead}, RoPE on ${config.nRot}`);
  }
  return config;
};

/** A tensor's float32 values (a norm's weights, or one embedding row), dequantised in JS. */
export const dequantize = (u8, type, at, n, half) => {
  const out = new Float32Array(n), dv = new DataView(u8.buffer, u8.byteOffset);
  if (type === "F32") { for (let i = 0; i < n; i++) out[i] = dv.getFloat32(at + 4 * i, true); return out; }
  if (type === "F16") { for (let i = 0; i < n; i++) out[i] = half[dv.getUint16(at + 2 * i, true)]; return out; }
  const [, B] = KERNEL_TYPES.get(type);
  for (let b = 0; b < n / 32; b++) {
    const p = at + b * B, d = half[dv.getUint16(p, true)];
    for (let j = 0; j < 32; j++) {
      let w;
      if (type === "Q8_0") w = d * dv.getInt8(p + 2 + j);
      else {
        const byte = u8[p + (type === "Q4_0" ? 2 : 4) + (j & 15)], q = j < 16 ? byte & 15 : byte >> 4;
        w = type === "Q4_0" ? d * (q - 8) : d * q + half[dv.getUint16(p + 2, true)];
      }
      out[32 * b + j] = w;
    }
  }
  return out;
};

/**
 * Check the file's tensors against the config: every one a llama model needs, of a type the
 * kernels read, of the right shape, and no other.
 * @returns {Map<string, object>} name -> the tensor (gguf.js's entry)
 */
export const checkTensors = (file, c) => {
  const {tensors} = file;
  const want = new Map();  // name -> dims (ggml order: [cols, rows])
  const qkv = {attn_q: c.nHeads * c.dHead, attn_k: c.nKvHeads * c.dHead, attn_v: c.nKvHeads * c.dHead};
  want.set("token_embd.weight", [c.d, c.vocab]);
  want.set("output_norm.weight", [c.d]);
  for (let l = 0; l < c.nLayers; l++) {
    const rows = {...qkv, attn_output: c.d, ffn_gate: c.ffn, ffn_up: c.ffn, ffn_down: c.d};
    const cols = {attn_output: c.nHeads * c.dHead, ffn_down: c.ffn};
    for (const m of LAYER_MATRICES) want.set(`blk.${l}.${m}.weight`, [cols[m] ?? c.d, rows[m]]);
    for (const v of LAYER_VECTORS) want.set(`blk.${l}.${v}.weight`, [c.d]);
  }
  const optional = new Map([["output.weight", [c.d, c.vocab]], ["rope_freqs.weight", [c.nRot / 2]]]);
  for (let l = 0; l < c.nLayers; l++) {
    for (const b of BIASES) optional.set(`blk.${l}.${b}.bias`, [b === "attn_output" ? c.d : {...qkv}[b]]);
  }
  for (const name of want.keys()) {
    if (!tensors.has(name)) throw new GGUFError("model", `the file lacks ${name}, which a llama model needs`);
  }
  for (const [name, t] of tensors) {
    const dims = want.get(name) ?? optional.get(name);
    if (!dims) throw new GGUFError("model", `tensor ${name} is not part of a llama model the book runs`);
    if (t.dims.join() !== dims.join()) {
      throw new GGUFError("model", `tensor ${name} has shape [${t.dims}], expected [${dims}] from the metadata`);
    }
    if (!KERNEL_TYPES.has(t.typeName)) {
      throw new GGUFError("tensor-type", `tensor ${name} is ${t.typeName}; the book computes with ` +
        `${[...KERNEL_TYPES.keys()].join(", ")} (llama.cpp's llama-quantize can convert a model to Q4_0, Q4_1 or Q8_0)`);
    }
    if (dims.length === 2 && dims[0] % 32 !== 0) {
      throw new GGUFError("model", `tensor ${name} has rows of ${dims[0]} numbers; the kernels need a multiple of 32`);
    }
  }
  return tensors;
};
