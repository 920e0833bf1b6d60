// Chapter 6's mask editor computed in the reader's browser: the twin of
// attention_book/scenes/masking.py's masking_state; the readout and alt text are this module's,
// at every control's full live range: any sentence (32 tokens shown), every mask kind,
// padding length 0..32, window 1..16, band 0..16 each way, masked before or after the
// softmax. X from chapter 1's table (d = 8, seed 0); W^Q, W^K, W^V = projection_weights(8, 4,
// seed=0), drawn by rng.js as numpy draws them.
// tests/test_web_twins.py checks it against Python (tests/test_web_states.py, slow: 1e-12).
//
// Row-major: mask (s, s) as a Uint8Array (1 = query i may attend to key j), scores and
// weights (s, s), output (s, d_k) as Float64Arrays.
import vocab from "../shared/vocab.js";
import {format} from "../format.js";
import {escapeHtml, noTokensAlt, wrapReadout} from "../shared/html.js";
import {embedTokens, matmul, matmulT, nested, projectionWeights, softmaxRows} from "../shared/matrices.js";
import {wholeNumber} from "../shared/messages.js";
import {asKnown, MAX_WIDGET_TOKENS, readTokens} from "../shared/tokens.js";

const MASK_KINDS = ["none", "causal", "padding", "window", "band"];
const MASKING_D = 8, MASKING_D_K = 4;
/** masking.named_mask(kind, s, ...): (s, s), 1 = may attend. */
function namedMask(kind, s, real, window, lower, upper) {
  const mask = new Uint8Array(s * s);
  for (let i = 0; i < s; i++) {
    for (let j = 0; j < s; j++) {
      const back = i - j; let ok;
      if (kind === "causal") { ok = j <= i; } else if (kind === "padding") { ok = real[j]; } else if (kind === "window") { ok = back >= 0 && back < window; } else if (kind === "band") { ok = -back >= -lower && -back <= upper; } else { ok = true; }
      mask[i * s + j] = ok ? 1 : 0;
    }
  }
  return mask;
}

function description(st) {
  switch (st.kind) {
    case "none": return "no mask: every query sees every key, the future included";
    case "causal": return "causal: query i sees keys 0..i";
    case "padding": return "padding: the first " + Math.min(st.length, st.s) + " tokens are real; no query sees a <pad> key";
    case "window": return "sliding window of " + st.window + ": query i sees keys i\u2212" + (st.window - 1) + "..i";
    default: return "band: query i sees keys i\u2212" + st.lower + "..i+" + st.upper;
  }
}

/** masking_state: sentence -> X -> scores -> masked weights -> output, for one mask. */
function state(values) {
  const text = values.text, kind = values.kind === undefined ? "causal" : values.kind;
  const method = values.method === undefined ? "before" : values.method;
  const maxTokens = values.maxTokens === undefined ? MAX_WIDGET_TOKENS : values.maxTokens;
  if (MASK_KINDS.indexOf(kind) < 0) {
    throw new Error("kind must be one of ['" + MASK_KINDS.join("', '") + "'], got '" + kind + "'");
  }
  if (method !== "before" && method !== "after") {
    throw new Error("method must be 'before' or 'after', got '" + method + "'");
  }
  const length = wholeNumber(values.length === undefined ? 3 : values.length, "length (real tokens)", 0);
  const window = wholeNumber(values.window === undefined ? 2 : values.window, "window", 1);
  const lower = wholeNumber(values.lower === undefined ? 1 : values.lower, "lower", 0);
  const upper = wholeNumber(values.upper === undefined ? 1 : values.upper, "upper", 0);
  const read = readTokens(text, maxTokens), notes = read.notes; let tokens = asKnown(read.tokens, notes);
  const s = tokens.length; let real = [], i, j;
  for (i = 0; i < s; i++) { real.push(true); }
  if (kind === "padding" && s) {
    real = real.map((_, k) => { return k < Math.min(length, s); });
    tokens = tokens.map((t, k) => { return real[k] ? t : vocab.padToken; });
    if (length >= s) {
      notes.push({level: "info", text: "length " + length + " \u2265 s = " + s + ": every token is real, nothing is padded"});
    } else if (length) {
      notes.push({level: "info", text: "the <pad> query rows " + length + ".." + (s - 1) + " still compute an output, " +
                                       "which the loss ignores; no query gives a <pad> key any weight"});
    }
  }
  const d = MASKING_D, d_k = MASKING_D_K, P = projectionWeights(d, d_k, 0);  // (d, d_k) each
  const X = embedTokens(tokens, d, 0);  // (s, d)
  const Q = matmul(X, P[0], s, d, d_k);  // (s, d) @ (d, d_k) -> (s, d_k)
  const K = matmul(X, P[1], s, d, d_k);
  const V = matmul(X, P[2], s, d, d_k);
  const mask = namedMask(kind, s, real, window, lower, upper);  // (s, s)
  const scores = matmulT(Q, K, s, d_k, s, 1.0 / Math.sqrt(d_k));  // (s, d_k) @ (d_k, s) -> (s, s)
  let weights;
  if (method === "before") {  // -inf where masked, then softmax (an all -inf row: zeros)
    weights = scores.map((x, k) => { return mask[k] ? x : -Infinity; });
    softmaxRows(weights, s, s);
  } else {  // softmax(scores) * mask: rows lose the hidden keys' share
    weights = softmaxRows(scores.slice(), s, s).map((x, k) => { return x * mask[k]; });
  }
  const output = matmul(weights, V, s, s, d_k);  // (s, s) @ (s, d_k) -> (s, d_k)
  const seen = [], rowSums = new Float64Array(s), empty = [];
  for (i = 0; i < s; i++) {
    let n = 0, sum = 0;
    for (j = 0; j < s; j++) { n += mask[i * s + j]; sum += weights[i * s + j]; }
    seen.push(n); rowSums[i] = sum;
    if (!n) { empty.push(i); }
  }
  if (empty.length) {
    notes.push({level: "warning", text: "rows " + empty.slice(0, 12).join(", ") + (empty.length > 12 ? ", \u2026" : "") +
      " may attend to nothing (fully masked): the book gives them zero weights and a zero output; " +
      "a plain softmax of all \u2212\u221e gives NaN"});
  }
  if (kind === "window" && s && window >= s) {
    notes.push({level: "info", text: "window " + window + " \u2265 s = " + s + ": the same as the causal mask"});
  }
  if (kind === "band" && s && (Math.max(lower, upper) > s - 1 || Math.min(lower, upper) >= s - 1)) {  // scenes.masking.band_past_note
    notes.push({level: "info", text: "keys before " + lower + ", after " + upper + ": no query of these s = " + s +
      " tokens has more than " + (s - 1) + " keys on either side, so values past " + (s - 1) + " draw the same mask" +
      (lower >= s - 1 && upper >= s - 1 ? "; this band covers every key, as no mask does" : "")});
  }
  if (kind === "band" && s && lower >= s - 1 && upper === 0) {
    notes.push({level: "info", text: "a band reaching every earlier key and none after is the causal mask"});
  }
  const sums = [];
  for (i = 0; i < s; i++) { if (seen[i]) { sums.push(rowSums[i]); } }
  if (method === "after" && sums.length && Math.min.apply(null, sums) < 1 - 1e-9) {
    notes.push({level: "warning", text: "masked after the softmax: the rows sum to " + format.fixed(Math.min.apply(null, sums), 2) +
      ".." + format.fixed(Math.max.apply(null, sums), 2) + ", not 1; the hidden keys kept their share of the softmax"});
  }
  return {
    text: typeof text === "string" ? text : "", kind, method, length,
    window, lower, upper, tokens, s, real, mask,
    scores, weights, output, rowSums, seen,
    fullyMasked: seen.map((n) => { return n === 0; }), notes,
  };
}

/** The readout as HTML. */
function readoutHtml(st) {
  const s = st.s, d_k = MASKING_D_K;
  const parts = ["<b>" + escapeHtml(description(st)) + "</b>",
    "X : (" + s + ", " + MASKING_D + "); Q, K, V : (" + s + ", " + d_k + "); mask, scores, weights : (" +
    s + ", " + s + "); output : (" + s + ", " + d_k + ")"];
  if (s) {
    const shown = Math.min(s, 16), more = s > shown ? ", \u2026" : "";
    parts.push("keys each query may see: " + st.seen.slice(0, shown).join(", ") + more);
    parts.push("row sums of the weights: " + Array.from(st.rowSums.subarray(0, shown)).map((x) => {
      return format.fixed(x, 2);
    }).join(", ") + more);
  }
  return wrapReadout(parts.join("<br>"), st.notes, "ab-small");
}

/** The alt text (plain text). */
function alt(st) {
  if (st.s === 0) { return noTokensAlt("Four empty heatmaps", st.notes); }
  const s = st.s; let hidden = 0, k;
  for (k = 0; k < st.mask.length; k++) { hidden += 1 - st.mask[k]; }
  const sums = Array.from(st.rowSums);
  const how = st.method === "before" ?
    "set to minus infinity before the softmax, so each row is renormalised over the keys it may see" :
    "zeroed after the softmax, so rows lose the share of the hidden keys";
  const middle = hidden ? "masked cells " + how : "nothing masked";
  let text = "Four heatmaps for the " + s + " tokens " + st.tokens.slice(0, 16).join(", ") + " with the mask '" +
    description(st) + "'. First: the " + s + " by " + s + " scores, " + hidden + " of " + (s * s) +
    " cells masked (grey, hatched). Second: the mask, open where a query may attend, " + (s * s - hidden) +
    " of " + (s * s) + " cells. Third: the weights, " + middle + "; row sums from " +
    format.fixed(Math.min.apply(null, sums), 2) + " to " + format.fixed(Math.max.apply(null, sums), 2) +
    ". Fourth: the output, " + s + " rows of " + MASKING_D_K + " numbers.";
  const empty = st.fullyMasked.filter(Boolean).length;
  if (empty) {
    text += " " + empty + " rows are fully masked: zero weights and a zero output row.";
  }
  return text;
}

/** The numbers the lab shows, for download: the masked weights (one row per query), the
 *  tokens, the mask (true = may attend), the scores and the output. */
function numbers(st) {
  const n = nested, s = st.s, mask = [];
  for (let i = 0; i < s; i++) { mask.push(Array.from(st.mask.subarray(i * s, (i + 1) * s), Boolean)); }
  return {lab: "masking", kind: st.kind, method: st.method, tokens: st.tokens, mask,
    scores: n(st.scores, s, s), weights: n(st.weights, s, s), output: n(st.output, s, MASKING_D_K)};
}

const SCORE_LIMITS = [-3, 3], OUTPUT_LIMITS = [-1.5, 1.5];  // colour scales

/** The picture as panels for lab.js, two a row whatever the state: the scores (signed: the
 *  diverging map) and the weights (the weights' map), their masked cells in the masked
 *  style of every lab; the mask itself as two categories, may attend or masked; the output. */
function figure(st) {
  const s = st.s; let hidden = 0; const masked = new Uint8Array(st.mask.length);
  for (let k = 0; k < st.mask.length; k++) { masked[k] = 1 - st.mask[k]; hidden += masked[k]; }
  const map = (title, more) => Object.assign({kind: "heatmap", title, rows: s, cols: s, extent: [s, s],
    xlabel: "key j", ylabel: "query i", rowLabels: st.tokens, colLabels: st.tokens, fillRow: true}, more);
  return {
    columns: 2,
    panels: [
      map("scores (" + s + ", " + s + "): " + hidden + " masked", {data: st.scores, cmap: "RdBu_r",
        vmin: SCORE_LIMITS[0], vmax: SCORE_LIMITS[1], masked, colorbar: "score q\u00b7k/\u221ad_k"}),
      map("mask (" + (s * s - hidden) + " of " + (s * s) + " may attend)", {data: st.mask,
        categories: [{label: "masked", masked: true}, {label: "may attend"}]}),
      map("weights (" + (st.method === "before" ? "\u2212\u221e before softmax" : "0 after softmax") + ")",
        {data: st.weights, cmap: "viridis", vmin: 0, vmax: 1, masked, colorbar: "weight"}),
      {kind: "heatmap", title: "output (" + s + ", " + MASKING_D_K + ")", data: st.output, rows: s,
        cols: MASKING_D_K, extent: [s, MASKING_D_K], cmap: "RdBu_r", vmin: OUTPUT_LIMITS[0],
        vmax: OUTPUT_LIMITS[1], xlabel: "dimension", ylabel: "query i", colorbar: "output = weights \u00b7 V",
        rowLabels: st.tokens, fillRow: true},
    ],
  };
}

export default {
  MASK_KINDS, MASKING_D, MASKING_D_K, description, state, readoutHtml, alt, numbers, figure,
};
