// Chapter 9's lab (labs/pretrained.js): what it reads before any model runs. The gallery
// file pretrained-gallery.js decoded (the tokenizer, the gallery's scores, the presets' maps
// and value norms), Python's rules for reader-typed text (scenes.pretrained.read_pieces),
// heads.head_scores with numpy's summation, and scenes.pretrained.shown_maps.
import {format} from "../../format.js";
import {pyRepr} from "../../shared/messages.js";
import {codePoints, isSpace} from "../../shared/tokens.js";
import {Tokenizer, decodeBase64} from "../../shared/minilm.js";

const root = globalThis;

/** scenes.pretrained.SCORE_LABELS: what each head score measures, in display order. */
export const SCORE_NAMES = ["previous", "next", "cls", "sep", "self", "spread"];
export const SCORE_LABELS = {previous: "previous token", next: "next token", cls: "[CLS]",
  sep: "[SEP]", self: "itself", spread: "entropy / log T"};
const GALLERY_FORMAT = 2;  // web_export.GALLERY_FORMAT
/** scenes.pretrained.MEASURES and VIEWS: what the maps show, and the two views. */
export const MEASURES = {weight: ["weights \u03b1", "weight (each row sums to 1)"],
  norm: ["\u2016\u03b1 f(x)\u2016", "share of \u2016\u03b1 f(x)\u2016 (rows sum to 1)"]};
/** all-MiniLM-L6-v2's layers and heads: the one statement of the grid, used with and
 *  without the gallery (a notebook's widget has the kernel's state and no data file);
 *  gallery() refuses a file whose model differs. */
export const LAYERS = 6, HEADS = 12;
export const VIEWS = {head: "one head", model: "all " + LAYERS * HEADS + " heads"};

// ------------------------------------------------------------------ the gallery file

let G = null;  // the decoded gallery: {data, tokenizer, presets: Map text -> preset}

/** pretrained-gallery.js's data, decoded once (the tokenizer, the presets' maps). */
export function gallery() {
  const data = root.AttentionBook && root.AttentionBook.pretrainedGallery;
  if (G && G.data === data) { return G; }
  if (!data) {
    throw new Error("the lab's data file pretrained-gallery.js is not loaded: `make book` writes it " +
                    "(attention_book.web_export.export_pretrained_gallery)");
  }
  if (data.format !== GALLERY_FORMAT) {
    throw new Error("pretrained-gallery.js has format " + data.format + ", this pretrained.js reads " +
                    GALLERY_FORMAT + ": rebuild the book");
  }
  const cfg = data.config;
  if (cfg.num_hidden_layers !== LAYERS || cfg.num_attention_heads !== HEADS) {
    throw new Error("pretrained-gallery.js holds a model of " + cfg.num_hidden_layers + " layers and " +
                    cfg.num_attention_heads + " heads, but this pretrained.js draws " + LAYERS + " layers and " +
                    HEADS + " heads (LAYERS, HEADS in labs/pretrained/data.js): rebuild the book");
  }
  const spec = Object.assign({}, data.tokenizer, {vocab: data.tokenizer.vocab.split("\n")});
  const presets = new Map();
  data.presets.forEach((p) => {
    const bytes = decodeBase64(p.maps), norms = decodeBase64(p.norms);
    presets.set(p.text, {label: p.label, text: p.text, query: p.query, tokens: p.tokens,
      maps: new Float32Array(bytes.buffer, 0, bytes.length / 4),  // (L, h, T, T)
      valueNorms: new Float32Array(norms.buffer, 0, norms.length / 4)});  // (L, h, T)
  });
  G = {data, tokenizer: new Tokenizer(spec), presets,
    maxPositions: cfg.max_position_embeddings};
  return G;
}

// ------------------------------------------------------------------ Python's text rules

/** Python's type(value).__name__. */
function pyType(v) {
  if (v === null || v === undefined) { return "NoneType"; }
  if (typeof v === "boolean") { return "bool"; }
  if (typeof v === "number") { return Number.isInteger(v) ? "int" : "float"; }
  if (Array.isArray(v)) { return "list"; }
  return typeof v === "object" ? "dict" : typeof v;
}

/** MiniLM._encoding's refusals before tokenizing (the message, or null). */
function textError(text, g) {
  if (typeof text !== "string") { return "text must be a string, got " + pyType(text); }
  const cps = codePoints(text), n = cps.length;
  if (cps.every(isSpace)) {  // Python's `not text.strip()`
    return "text is empty (or only spaces): type at least one word, e.g. " + pyRepr(g.data.running_sentence);
  }
  if (n > g.data.max_text_chars) {
    return "text is " + format.grouped(n) + " characters long; the limit is " + format.grouped(g.data.max_text_chars) +
      " (and the model reads at most " + g.maxPositions + " tokens)";
  }
  return null;
}

/**
 * scenes.pretrained.read_pieces: the tokens of reader-typed text, cut to maxTokens
 * (MiniLM.cut: a word is never split); never throws.
 * @returns {{used: string, tokens: string[], ids: Int32Array, notes: object[], total: number}}
 */
export function readPieces(text, maxTokens) {
  const g = gallery();
  maxTokens = maxTokens === undefined ? g.data.max_tokens : maxTokens;
  let message = textError(text, g), enc = null, used = text, total = 0;
  if (message === null) {
    enc = g.tokenizer.encode(text);  // every piece, no limit
    total = enc.ids.length;
    if (total > maxTokens) {
      let keep = maxTokens - 2;  // the last piece kept; [SEP] is added back
      while (keep > 1 && enc.tokens[keep + 1].indexOf(g.tokenizer.prefix) === 0) { keep -= 1; }
      used = text.slice(0, enc.offsets[keep][1]);  // UTF-16 offsets: JavaScript's slice
      enc = g.tokenizer.encode(used);  // as Python: tokenize(used)
    }
    if (enc.ids.length <= 2) {
      message = "text " + pyRepr(used) + " holds no token the model can read (only control or formatting " +
        "characters): type at least one word";
    }
  }
  if (message !== null) {
    return {used: "", tokens: [], ids: new Int32Array(0), total: 0,
      notes: [{level: "error", text: message.charAt(0).toUpperCase() + message.slice(1) + "."}]};
  }
  const kept = enc.ids.length;
  const notes = kept < total ? [{level: "warning", text: "showing the first " + kept + " of " + total +
                               " tokens (the lab reads at most " + maxTokens + ")"}] : [];
  return {used, tokens: enc.tokens, ids: enc.ids, notes, total};
}

// ------------------------------------------------------------------ heads.head_scores

/** numpy's pairwise summation of a[from .. from + n) (np.add.reduce on contiguous float64:
 *  bit for bit the same sum, so that scores round as Python rounds them). */
export function pairwiseSum(a, from, n) {
  let i, res;
  if (n < 8) {
    res = 0;
    for (i = 0; i < n; i++) { res += a[from + i]; }
    return res;
  }
  if (n <= 128) {
    let r0 = a[from], r1 = a[from + 1], r2 = a[from + 2], r3 = a[from + 3];
    let r4 = a[from + 4], r5 = a[from + 5], r6 = a[from + 6], r7 = a[from + 7];
    for (i = 8; i < n - (n % 8); i += 8) {
      r0 += a[from + i]; r1 += a[from + i + 1]; r2 += a[from + i + 2]; r3 += a[from + i + 3];
      r4 += a[from + i + 4]; r5 += a[from + i + 5]; r6 += a[from + i + 6]; r7 += a[from + i + 7];
    }
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
    for (; i < n; i++) { res += a[from + i]; }
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwiseSum(a, from, n2) + pairwiseSum(a, from + n2, n - n2);
}

/**
 * heads.head_scores of one head's map.
 * @param {Float64Array} weights  (T, T), rows = queries, T >= 2
 * @returns {object} name -> float: previous, next, cls, sep, self, entropy, spread
 */
export function headScores(weights, T) {
  const w = new Float64Array(T * T); let i, j;
  for (i = 0; i < T; i++) {  // rows divided by their sums: rows sum to 1 in float64
    const sum = pairwiseSum(weights, i * T, T);
    for (j = 0; j < T; j++) { w[i * T + j] = weights[i * T + j] / sum; }
  }
  const column = new Float64Array(T);
  function mean(pick, counts, n) {  // _mean: the values where counts, over n queries
    for (let q = 0; q < T; q++) { column[q] = counts(q) ? pick(q) : 0; }
    return pairwiseSum(column, 0, T) / n;
  }
  function all() { return true; }
  const terms = new Float64Array(T), entropy = new Float64Array(T);
  for (i = 0; i < T; i++) {  // attention_entropy: -sum_j w log w (w = 0 adds 0)
    for (j = 0; j < T; j++) { const x = w[i * T + j]; terms[j] = x * Math.log(x > 0 ? x : 1); }
    entropy[i] = -pairwiseSum(terms, 0, T);
  }
  const meanEntropy = pairwiseSum(entropy, 0, T) / T;
  return {
    previous: mean((q) => { return w[q * T + q - 1]; }, (q) => { return q >= 1; }, T - 1),
    next: mean((q) => { return w[q * T + q + 1]; }, (q) => { return q + 1 <= T - 1; }, T - 1),
    cls: mean((q) => { return w[q * T]; }, all, T),
    sep: mean((q) => { return w[q * T + T - 1]; }, all, T),
    self: mean((q) => { return w[q * T + q]; }, all, T),
    entropy: meanEntropy,
    spread: meanEntropy / Math.log(T),
  };
}

/** scenes.pretrained.shown_maps of n heads: the weights, or ||alpha_ij f(x_j)|| with each
 *  row scaled to sum to 1. maps (n, T, T) float32, valueNorms (n, T); returns a
 *  Float64Array, or a Float32Array with `single` (the model view's 72 maps, as Python's). */
export function shownMaps(maps, valueNorms, T, measure, single) {
  const out = single ? Float32Array.from(maps) : Float64Array.from(maps);  // (n, T, T)
  if (measure === "weight") { return out; }
  for (let r = 0; r < out.length / T; r++) {  // one row of one head: (T,)
    const at = r * T, nAt = Math.floor(r / T) * T;
    const sum = pairwiseSum(out, at, T);
    let j;
    for (j = 0; j < T; j++) { out[at + j] = out[at + j] / sum * valueNorms[nAt + j]; }
    const total = pairwiseSum(out, at, T);
    for (j = 0; j < T; j++) { out[at + j] /= total; }
  }
  return out;
}

