// tensors.js: the tensors of chapter 9's weights file (minilm-weights.js, written by
// web_export.export_browser_weights) decoded to Float32Arrays: base64, float16, and int8
// with its scales. Part of minilm.js (the model).

import {MiniLMError} from "./wordpiece.js";

const B64 = new Int16Array(128).fill(-1);
{  // filled once, at load
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (let i = 0; i < 64; i++) B64[alphabet.charCodeAt(i)] = i;
}

/** base64 (no line breaks, "=" padding) -> Uint8Array, by table, in one pass. */
function decodeBase64(text) {
  const n = text.length;
  const pad = n && text.charCodeAt(n - 1) === 61 ? (text.charCodeAt(n - 2) === 61 ? 2 : 1) : 0;
  if (n % 4 !== 0) throw MiniLMError("bad-weights", "a tensor's base64 is cut short");
  const bytes = new Uint8Array(n / 4 * 3 - pad);
  let o = 0;
  const full = pad ? n - 4 : n;
  for (let i = 0; i < full; i += 4) {
    const v = (B64[text.charCodeAt(i)] << 18) | (B64[text.charCodeAt(i + 1)] << 12) |
      (B64[text.charCodeAt(i + 2)] << 6) | B64[text.charCodeAt(i + 3)];
    bytes[o++] = v >> 16;
    bytes[o++] = (v >> 8) & 255;
    bytes[o++] = v & 255;
  }
  if (pad) {
    const w = (B64[text.charCodeAt(full)] << 18) | (B64[text.charCodeAt(full + 1)] << 12) |
      (pad === 1 ? B64[text.charCodeAt(full + 2)] << 6 : 0);
    bytes[o] = w >> 16;
    if (pad === 1) bytes[o + 1] = (w >> 8) & 255;
  }
  return bytes;
}

let HALF = null;  // the 65,536 float16 values as float32, built on first use

function halfTable() {
  if (HALF) return HALF;
  HALF = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >> 10) & 31;
    const mantissa = h & 1023;
    let value;
    if (exponent === 0) value = mantissa * Math.pow(2, -24);  // subnormal
    else if (exponent === 31) value = mantissa ? NaN : Infinity;
    else value = (1024 + mantissa) * Math.pow(2, exponent - 25);
    HALF[h] = sign * value;
  }
  return HALF;
}

/**
 * One stored tensor -> {shape, data: Float32Array} (C order, little-endian bytes).
 * int8 tensors hold a float32 scale per run of `group` numbers of a row and one per
 * column: value[i, j] = q[i, j] * scale[i, floor(j / group)] * col_scale[j].
 */
function decodeTensor(name, stored) {
  const bytes = decodeBase64(stored.data);
  const size = stored.shape.reduce((a, b) => { return a * b; }, 1);
  let out;
  if (stored.dtype === "float32") {
    out = new Float32Array(bytes.buffer, 0, size);
  } else if (stored.dtype === "float16") {
    const halves = new Uint16Array(bytes.buffer, 0, size);
    const table = halfTable();
    out = new Float32Array(size);
    for (let i = 0; i < size; i++) out[i] = table[halves[i]];
  } else if (stored.dtype === "int8") {
    const q = new Int8Array(bytes.buffer, 0, size);
    const rows = stored.shape[0];
    const cols = size / rows;
    const group = stored.group || cols;  // numbers of a row that share a scale
    const groups = Math.ceil(cols / group);
    const scale = new Float32Array(decodeBase64(stored.scale).buffer);  // (rows, groups)
    const colScale = stored.col_scale ?  // (cols,)
      new Float32Array(decodeBase64(stored.col_scale).buffer) : new Float32Array(cols).fill(1);
    out = new Float32Array(size);
    for (let r = 0; r < rows; r++) {
      for (let c = 0, at = r * cols; c < cols; c++, at++) {
        out[at] = q[at] * scale[r * groups + Math.floor(c / group)] * colScale[c];
      }
    }
  } else {
    throw MiniLMError("bad-weights", "tensor " + name + " has unknown dtype " + stored.dtype);
  }
  if (out.length !== size) {
    throw MiniLMError("bad-weights", "tensor " + name + " holds " + out.length +
      " numbers, its shape " + stored.shape.join("x") + " needs " + size);
  }
  return {shape: stored.shape, data: out};
}

export {decodeBase64, decodeTensor};
