/*
 * gguf.js: read a GGUF file (llama.cpp's model format, version 2 or 3) from its bytes:
 * the header, the metadata, the tensor table and where each tensor's data starts.
 *
 *   const file = readGGUF(bytes);            // an ArrayBuffer or a Uint8Array
 *   file.metadata["llama.block_count"]       // 30
 *   file.tensors.get("blk.0.attn_q.weight")  // {name, dims: [576, 576], type: 3,
 *                                            //  typeName: "Q4_1", offset, nbytes}
 *
 * The layout (ggml's GGUF specification; gguf-py's GGUFReader reads it the same way), all
 * little-endian:
 *   "GGUF", version u32, n_tensors u64, n_kv u64,
 *   n_kv times: key (string), value type u32, value,
 *   n_tensors times: name (string), n_dims u32, dims u64 x n_dims, type u32, offset u64,
 *   padding to `general.alignment` (32 unless the metadata says), then the tensors' data;
 *   each tensor's offset counts from there and is a multiple of the alignment.
 * A string is a u64 byte count and UTF-8; an array is an item type u32, a u64 count, items.
 * dims[0] is the fastest-moving axis: a (rows, cols) matrix in C order has dims [cols, rows].
 *
 * Errors are GGUFError with a `code` a page can show a message for: "not-gguf",
 * "truncated", "version", "corrupt". Whether the model is one the book runs (its
 * architecture, its tensor types) is model.js's question, not this reader's.
 *
 * Written here rather than taken from @huggingface/gguf 0.4.6: that package reads remote
 * files by HTTP ranges and depends on @huggingface/tasks; this reader is the ~150 lines a
 * reader of the book can follow, and it reads the bytes a page already holds.
 */

/** ggml's tensor types (ggml.h, enum ggml_type): number -> [name, block size, bytes a block]. */
export const GGML_TYPES = new Map([
  [0, ["F32", 1, 4]], [1, ["F16", 1, 2]], [2, ["Q4_0", 32, 18]], [3, ["Q4_1", 32, 20]],
  [6, ["Q5_0", 32, 22]], [7, ["Q5_1", 32, 24]], [8, ["Q8_0", 32, 34]], [9, ["Q8_1", 32, 36]],
  [10, ["Q2_K", 256, 84]], [11, ["Q3_K", 256, 110]], [12, ["Q4_K", 256, 144]],
  [13, ["Q5_K", 256, 176]], [14, ["Q6_K", 256, 210]], [15, ["Q8_K", 256, 292]],
  [16, ["IQ2_XXS", 256, 66]], [17, ["IQ2_XS", 256, 74]], [18, ["IQ3_XXS", 256, 98]],
  [19, ["IQ1_S", 256, 50]], [20, ["IQ4_NL", 32, 18]], [21, ["IQ3_S", 256, 110]],
  [22, ["IQ2_S", 256, 82]], [23, ["IQ4_XS", 256, 136]], [24, ["I8", 1, 1]], [25, ["I16", 1, 2]],
  [26, ["I32", 1, 4]], [27, ["I64", 1, 8]], [28, ["F64", 1, 8]], [29, ["IQ1_M", 256, 56]],
  [30, ["BF16", 1, 2]], [34, ["TQ1_0", 256, 54]], [35, ["TQ2_0", 256, 66]],
  [39, ["MXFP4", 32, 17]],
]);

/** A file the reader cannot read, with a `code` for the page's message. */
export class GGUFError extends Error {
  /** @param {"not-gguf"|"truncated"|"version"|"corrupt"|"architecture"|"tensor-type"|"model"} code
   *  @param {string} message */
  constructor(code, message) {
    super(message);
    this.name = "GGUFError";
    this.code = code;
  }
}

const MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
const MAX_ENTRIES = 1 << 20;
const utf8 = new TextDecoder("utf-8", {fatal: false});

/**
 * A cursor over the file's bytes: each read checks that the bytes are there, so a cut
 * file fails with "truncated" at the first field it lacks.
 * @param {DataView} view
 */
const cursor = (view) => {
  let at = 0;
  const need = (n, what) => {
    if (at + n > view.byteLength) {
      throw new GGUFError("truncated", `the file ends inside ${what} (byte ${at} of ` +
        `${view.byteLength}): it is truncated; download it again`);
    }
    const start = at;
    at += n;
    return start;
  };
  const u64 = (what) => {
    const start = need(8, what);
    const value = view.getBigUint64(start, true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new GGUFError("corrupt", `${what} is ${value}, too large: the file is damaged`);
    }
    return Number(value);
  };
  const string = (what) => {
    const n = u64(`the length of ${what}`);
    const start = need(n, what);
    return utf8.decode(new Uint8Array(view.buffer, view.byteOffset + start, n));
  };
  return {
    get at() { return at; },
    u32: (what) => view.getUint32(need(4, what), true),
    u64,
    string,
    // GGUF's value types (gguf.md, gguf_metadata_value_type): 0 u8 ... 12 f64.
    scalar: (type, what) => {
      switch (type) {
        case 0: return view.getUint8(need(1, what));
        case 1: return view.getInt8(need(1, what));
        case 2: return view.getUint16(need(2, what), true);
        case 3: return view.getInt16(need(2, what), true);
        case 4: return view.getUint32(need(4, what), true);
        case 5: return view.getInt32(need(4, what), true);
        case 6: return view.getFloat32(need(4, what), true);
        case 7: return view.getUint8(need(1, what)) !== 0;
        case 8: return string(what);
        case 10: return u64(what);
        case 11: return Number(view.getBigInt64(need(8, what), true));
        case 12: return view.getFloat64(need(8, what), true);
        default: throw new GGUFError("corrupt", `${what} has value type ${type}, which GGUF ` +
          "does not define: the file is damaged");
      }
    },
  };
};

/** One metadata value (a scalar, or an array of scalars; arrays of arrays are read too). */
const readValue = (c, type, what) => {
  if (type !== 9) return c.scalar(type, what);
  const itemType = c.u32(`the item type of ${what}`);
  const n = c.u64(`the length of ${what}`);
  // numbers as a typed array where they have one (a vocabulary's token types: 49,152 of them)
  const Typed = {0: Uint8Array, 1: Int8Array, 2: Uint16Array, 3: Int16Array, 4: Uint32Array,
    5: Int32Array, 6: Float32Array, 12: Float64Array}[itemType];
  const out = Typed ? new Typed(n) : new Array(n);
  for (let i = 0; i < n; i++) out[i] = readValue(c, itemType, what);
  return out;
};

/**
 * Read a GGUF file's header, metadata and tensor table (the tensors' data is not copied).
 *
 * @param {ArrayBuffer|Uint8Array} bytes  the whole file
 * @returns {{version: number, metadata: Object<string, *>, alignment: number,
 *            dataOffset: number, bytes: Uint8Array,
 *            tensors: Map<string, {name: string, dims: number[], type: number,
 *              typeName: string, offset: number, nbytes: number, nElements: number}>}}
 *   `offset` counts from the file's first byte; `typeName` is ggml's ("Q4_1", "F32", ...).
 * @throws {GGUFError} not-gguf, truncated, version or corrupt
 */
export const readGGUF = (bytes) => {
  const u8 = bytes instanceof Uint8Array ? bytes
    : bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : null;
  if (!u8) throw new GGUFError("not-gguf", "expected the file's bytes (an ArrayBuffer or a Uint8Array)");
  const view = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  if (u8.byteLength < 4 || view.getUint32(0, true) !== MAGIC) {
    const big = u8.byteLength >= 4 && view.getUint32(0, false) === MAGIC;
    throw new GGUFError("not-gguf", big ? "this GGUF file is big-endian; the book reads little-endian ones"
      : "this is not a GGUF file (it does not start with the bytes \"GGUF\")");
  }
  const c = cursor(view);
  c.u32("the magic");
  const version = c.u32("the version");
  if (version !== 2 && version !== 3) {
    throw new GGUFError("version", `GGUF version ${version}: the book reads versions 2 and 3`);
  }
  const nTensors = c.u64("the tensor count");
  const nKv = c.u64("the metadata count");
  // a count no model has (SmolLM2: 272 tensors, 33 entries) is a damaged header, not a loop
  // to run; a plausible one past the file's end is found by the reads below (truncated)
  if (nTensors > MAX_ENTRIES || nKv > MAX_ENTRIES) {
    throw new GGUFError("corrupt", `the header claims ${nTensors} tensors and ${nKv} metadata ` +
      "entries: the file is damaged");
  }
  const metadata = {};
  for (let i = 0; i < nKv; i++) {
    const key = c.string(`metadata key ${i}`);
    metadata[key] = readValue(c, c.u32(`the type of ${key}`), key);
  }
  const alignment = metadata["general.alignment"] ?? 32;
  if (!Number.isInteger(alignment) || alignment < 1 || alignment % 8 !== 0) {
    throw new GGUFError("corrupt", `general.alignment is ${alignment}; GGUF needs a multiple of 8`);
  }
  const infos = [];
  for (let i = 0; i < nTensors; i++) {
    const name = c.string(`tensor name ${i}`);
    const nDims = c.u32(`the dimension count of ${name}`);
    if (nDims > 4) throw new GGUFError("corrupt", `tensor ${name} has ${nDims} dimensions (GGUF allows 4)`);
    const dims = Array.from({length: nDims}, (_, k) => c.u64(`dimension ${k} of ${name}`));
    infos.push({name, dims, type: c.u32(`the type of ${name}`), offset: c.u64(`the offset of ${name}`)});
  }
  const dataOffset = Math.ceil(c.at / alignment) * alignment;
  const tensors = new Map();
  for (const {name, dims, type, offset} of infos) {
    const nElements = dims.reduce((a, b) => a * b, 1);
    const [typeName, block, blockBytes] = GGML_TYPES.get(type) ?? [`type ${type}`, 1, 0];
    if (nElements % block !== 0 || (block > 1 && dims[0] % block !== 0)) {
      throw new GGUFError("corrupt", `tensor ${name} (${typeName}) has rows of ${dims[0]} numbers, ` +
        `not whole blocks of ${block}`);
    }
    const nbytes = (nElements / block) * blockBytes;
    if (offset % alignment !== 0) {
      throw new GGUFError("corrupt", `tensor ${name} starts at ${offset}, off the file's alignment ${alignment}`);
    }
    if (dataOffset + offset + nbytes > u8.byteLength) {
      throw new GGUFError("truncated", `tensor ${name} ends at byte ${dataOffset + offset + nbytes} ` +
        `but the file has ${u8.byteLength}: it is truncated; download it again`);
    }
    if (tensors.has(name)) throw new GGUFError("corrupt", `tensor ${name} is listed twice`);
    tensors.set(name, {name, dims, type, typeName, offset: dataOffset + offset, nbytes, nElements});
  }
  return {version, metadata, alignment, dataOffset, tensors, bytes: u8};
};
