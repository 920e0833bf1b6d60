// Chapter 10's lab (labs/decoder.js): the gallery file, decoder-gallery.js
// (attention_book.web_export.export_decoder_gallery), read into runs. A run is one
// generation, whatever computed it, as the state reads it (runs.js makes the same from the
// model in the page):
//   {source: "package" | "browser", key, ids, pieces, nPrompt, n (tokens written so far),
//    limit (tokens it can hold), ended (the model ended its text at n), generated[i] (the
//    text after step i + 1), next[i] ({ids, tokens, p}: the top of the distribution token
//    i + 1 was drawn from), lens[i] ({tokens, p}, or undefined: not computed yet), row(l, h, i) (the
//    head's weights at position i, i + 1 numbers)}
// The gallery's maps are uint16 (w * 65535 rounded, within 7.7e-6 of the package's float32
// numbers), the lower triangles of every head's map row by row.

export const GALLERY_FORMAT = 1;

const root = globalThis;
let read = null;  // {data, runs: Map key -> run}

/** Byte-level BPE's printable character of each byte, read back: GPT-2's bytes_to_unicode
 *  (the printable bytes spell themselves, the others 256 on, in order). */
const BYTE_OF = (() => {
  const of = new Map();
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    of.set(String.fromCodePoint(printable ? b : 256 + extra++), b);
  }
  return of;
})();
const SHOWN = {"\n": "\\n", "\t": "\\t", "\r": "\\r"};

/** The length of the UTF-8 sequence at bytes[i] if it is a whole, valid one (Python's strict
 *  decoder: no overlong forms, no surrogates, nothing past U+10FFFF), else 0. */
function sequence(bytes, i) {
  const b = bytes[i], cont = (k, lo = 0x80, hi = 0xbf) => bytes[i + k] >= lo && bytes[i + k] <= hi;
  if (b < 0x80) { return 1; }
  if (b >= 0xc2 && b <= 0xdf) { return cont(1) ? 2 : 0; }
  if (b >= 0xe0 && b <= 0xef) {
    const [lo, hi] = b === 0xe0 ? [0xa0, 0xbf] : b === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    const [lo, hi] = b === 0xf0 ? [0x90, 0xbf] : b === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

const hex = (b) => "\\x" + b.toString(16).padStart(2, "0");

/** A token's spelling as a reader reads it, as scenes.decoder._readable: its bytes as UTF-8
 *  text ("Ġ" a space, "âĢĵ" an en dash); a newline, tab or carriage return as \n, \t, \r;
 *  another control character, or a byte that is no whole character, as \xNN; a piece
 *  outside the byte alphabet as it is. */
export function readable(piece) {
  const bytes = [];
  for (const ch of piece) {
    const b = BYTE_OF.get(ch);
    if (b === undefined) { return piece; }
    bytes.push(b);
  }
  let out = "";
  for (let i = 0; i < bytes.length;) {
    const n = sequence(bytes, i);
    if (!n) { out += hex(bytes[i]); i += 1; continue; }
    const ch = new TextDecoder().decode(Uint8Array.from(bytes.slice(i, i + n)));
    const code = ch.codePointAt(0);
    out += SHOWN[ch] || (code < 32 || code === 127 ? hex(code) : ch);
    i += n;
  }
  return out;
}

/** The key of a generation: what decides its tokens (prompt, turn, sampling, heads off). */
export const runKey = (prompt, chat, sampling, off) =>
  JSON.stringify([prompt, !!chat, sampling.temperature, sampling.topK, sampling.topP, sampling.seed, off]);

/** scenes.decoder._sampling: (temperature, top_k, top_p, seed) as the generation reads them. */
export function samplingOf(decoding, temperature, topK, topP, seed) {
  if (decoding !== "sampled") { return {temperature: 0, topK: null, topP: null, seed: 0}; }
  return {temperature, topK: topK || null, topP: topP < 1 ? topP : null, seed};
}

const fromBase64 = (text) => {
  const bin = atob(text), bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) { bytes[i] = bin.charCodeAt(i); }
  return bytes;
};

/** A preset of the gallery as a run (its maps decoded on first use). */
function presetRun(p, model) {
  const T = p.positions, perHead = T * (T + 1) / 2, n = p.generated.length;
  let maps = null;
  const scale = 1 / 65535;
  return {
    source: "package", key: runKey(p.prompt, p.chat,
      samplingOf(p.decoding, p.temperature, p.top_k, p.top_p, p.seed), p.off),
    ids: p.ids, pieces: p.pieces, nPrompt: p.n_prompt, n, limit: n,
    ended: n < p.n_new, done: true, generated: p.generated,
    next: p.next_ids.map((ids, i) => ({ids, tokens: p.next_tokens[i], p: p.next_p[i]})),
    lens: p.lens_tokens.map((tokens, i) => ({tokens, p: p.lens_p[i]})),
    row(l, h, i) {
      if (!maps) {
        const bytes = fromBase64(p.maps);
        maps = new Uint16Array(bytes.buffer, 0, bytes.length / 2);
      }
      const at = (l * model.h + h) * perHead + i * (i + 1) / 2, out = new Float64Array(i + 1);
      for (let j = 0; j <= i; j++) { out[j] = maps[at + j] * scale; }
      return out;
    },
  };
}

/** The gallery file's data and its runs. Throws when decoder-gallery.js did not load. */
export function gallery() {
  const data = root.AttentionBook && root.AttentionBook.decoderGallery;
  if (!data) {
    throw new Error("decoder-gallery.js did not load: this lab's first view is missing (run `make book`)");
  }
  if (read && read.data === data) { return read; }
  if (data.format !== GALLERY_FORMAT) {
    throw new Error(`decoder-gallery.js has format ${data.format}; this lab reads ${GALLERY_FORMAT}: ` +
      "rebuild the book (`make book`)");
  }
  read = {data, runs: new Map()};
  for (const p of data.presets) {
    const run = presetRun(p, data.model);
    if (!read.runs.has(run.key)) { read.runs.set(run.key, run); }
  }
  return read;
}
