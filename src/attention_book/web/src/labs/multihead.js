// Chapter 4's multi-head lab computed in the reader's browser: the twin of
// attention_book/scenes/multihead.py's multihead_state; readout and alt text
// are this module's, at every control's full live range: any sentence (32 tokens shown),
// d in (8, 12, 16, 32, 64), every h dividing d up to 16, seeds 0..20, any heads on, X with or
// without positional encoding. The weights are MultiHeadAttention.from_seed(d, h, seed,
// bias=True), drawn by rng.js as numpy draws them: W_q, W_k, W_v, W_o : (d, d) then b_q,
// b_k, b_v, b_o : (d,), all N(0, 1/d), from one default_rng(seed).
// tests/test_web_twins.py checks it against Python (tests/test_web_states.py, slow: 1e-12).
//
// Row-major Float64Arrays: weights (h, s, s), contributions (h, s, d), outputs (s, d).
import {format} from "../format.js";
import {escapeHtml, noTokensAlt, positionsHtml, tracerHtml, wrapReadout} from "../shared/html.js";
import {attentionParameters, cache, embedTokens, kept, matmul, matmulT, nested, sinusoidalEncoding, softmaxRows, stacked} from "../shared/matrices.js";
import {positiveInt} from "../shared/messages.js";
import {asKnown, MAX_WIDGET_TOKENS, readTokens} from "../shared/tokens.js";
import {defaultRng} from "../shared/rng.js";

const MAX_HEADS = 16;                   // scenes.multihead.MAX_HEADS
const MH_D_CHOICES = [8, 12, 16, 32, 64];
const MH_DEFAULT_SEED = 10;

/** multihead._divides: h as a divisor of d, or the API's message. */
function divides(h, d) {
  positiveInt(h, "h");
  if (d % h) {
    throw new Error("h=" + h + " does not divide d=" + d + ": each head gets d_k = d/h columns, " +
                    "so h must be a divisor of d");
  }
  return h;
}

function divisors(d) { const out = []; for (let h = 1; h <= d; h++) { if (d % h === 0) { out.push(h); } } return out; }

/** head_choices(d): the divisors of d up to MAX_HEADS. */
function headChoices(d) { return divisors(d).filter((h) => { return h <= MAX_HEADS; }); }

/** missing_heads_text(d): why some h are not offered (plain text). */
function missingHeadsText(d) {
  let text = "h offered for d=" + d + ": " + headChoices(d).join(", ") + ".";
  const missing = [];
  for (let h = 1; h <= Math.min(d, MAX_HEADS); h++) { if (d % h) { missing.push(h); } }
  if (missing.length) {
    let message;
    try { divides(missing[0], d); } catch (err) { message = err.message; }
    text += " h = " + missing.join(", ") + " cannot be chosen: each head gets d_k = d/h whole " +
      "columns, and the API says \u201c" + message + "\u201d.";
  }
  const bigger = divisors(d).filter((h) => { return h > MAX_HEADS; });
  if (bigger.length) {
    const verbs = bigger.length === 1 ? "divides d too but is" : "divide d too but are";
    text += " h = " + bigger.join(", ") + " " + verbs + " left out: the picture shows at most " +
      MAX_HEADS + " heads.";
  }
  return text;
}

/** multihead.shape_trace(b, s, d, h): (description, shape) of every tensor. */
function shapeTrace(b, s, d, h) {
  const d_k = d / h;
  return [
    ["X", [b, s, d]],
    ["W^Q, W^K, W^V (h blocks W_i of (d, d_k) side by side)", [d, d]],
    ["Q = X W^Q  (likewise K, V)", [b, s, d]],
    ["reshape: cut the last axis into h heads", [b, s, h, d_k]],
    ["swap axes: heads before positions", [b, h, s, d_k]],
    ["scores = Q_i K_i^T / sqrt(d_k), every head", [b, h, s, s]],
    ["weights = softmax(scores), rows sum to 1", [b, h, s, s]],
    ["heads H_i = weights_i V_i", [b, h, s, d_k]],
    ["swap axes back", [b, s, h, d_k]],
    ["reshape: concat(H_0, ..., H_{h-1})", [b, s, h * d_k]],
    ["W^O", [h * d_k, d]],
    ["output = concat(...) W^O + b_o", [b, s, d]],
  ];
}

const paramsCache = cache();  // "d,seed" -> {W: [W_q, W_k, W_v, W_o], b: [...]}

/** MultiHeadAttention.from_seed(d, h, seed, bias=True)'s parameters (they do not depend on h). */
function parameters(d, seed) {
  return kept(paramsCache, d + "," + seed, () => {
    return attentionParameters(defaultRng(seed), d);
  }, 32);
}

/** X:(s, d) @ W:(d, d) + b -> (s, d). */
function project(X, W, b, s, d) {
  const Y = matmul(X, W, s, d, d);  // (s, d) @ (d, d) -> (s, d)
  for (let r = 0; r < s; r++) { for (let j = 0; j < d; j++) { Y[r * d + j] += b[j]; } }
  return Y;
}

/** multihead_state: sentence -> X -> h heads' weights, contributions and outputs. */
function state(values) {
  const text = values.text, d = values.d, h = values.h;
  const seed = values.seed === undefined ? MH_DEFAULT_SEED : values.seed;
  const positional = !!values.positional, headsOn = values.heads_on;
  const maxTokens = values.maxTokens === undefined ? MAX_WIDGET_TOKENS : values.maxTokens;
  positiveInt(d, "d");
  divides(h, d);
  const P = parameters(d, seed), d_k = d / h;
  const onSet = new Set(headsOn === undefined || headsOn === null ?
    Array.from({length: h}, (_, i) => { return i; }) : headsOn);
  const bad = Array.from(onSet).filter((i) => { return !(i >= 0 && i < h); }).sort((a, b) => { return a - b; });
  if (bad.length) {
    throw new Error("heads_on has head index " + bad[0] + ", but h=" + h + " heads are numbered 0.." + (h - 1));
  }
  const on = [];
  for (let i = 0; i < h; i++) { on.push(onSet.has(i)); }
  const read = readTokens(text, maxTokens), notes = read.notes, tokens = asKnown(read.tokens, notes);
  const s = tokens.length;
  const X = embedTokens(tokens, d, seed);  // (s, d)
  if (positional && s) {
    const pe = sinusoidalEncoding(s, d);  // (s, d)
    for (let k = 0; k < X.length; k++) { X[k] += pe[k]; }
  }
  const Q = project(X, P.W[0], P.b[0], s, d);  // (s, d) @ (d, d) + (d,) -> (s, d)
  const K = project(X, P.W[1], P.b[1], s, d);
  const V = project(X, P.W[2], P.b[2], s, d);
  const weights = new Float64Array(h * s * s), contributions = new Float64Array(h * s * d);
  const merged = new Float64Array(s * d), scale = 1.0 / Math.sqrt(d_k);
  for (let hd = 0; hd < h; hd++) {
    // head hd: columns hd*d_k .. (hd+1)*d_k of Q, K, V: (s, d) -> (s, d_k) each
    const q = new Float64Array(s * d_k), kk = new Float64Array(s * d_k), v = new Float64Array(s * d_k);
    for (let r = 0; r < s; r++) {
      for (let c = 0; c < d_k; c++) {
        q[r * d_k + c] = Q[r * d + hd * d_k + c];
        kk[r * d_k + c] = K[r * d + hd * d_k + c];
        v[r * d_k + c] = V[r * d + hd * d_k + c];
      }
    }
    // (s, d_k) @ (d_k, s) -> (s, s), softmax over keys
    const w = softmaxRows(matmulT(q, kk, s, d_k, s, scale), s, s);
    weights.set(w, hd * s * s);
    const H = matmul(w, v, s, s, d_k);  // (s, s) @ (s, d_k) -> (s, d_k)
    for (let r = 0; r < s; r++) { merged.set(H.subarray(r * d_k, (r + 1) * d_k), r * d + hd * d_k); }
    // H_i @ W^O_i: (s, d_k) @ (d_k, d) -> (s, d), W^O_i = rows hd*d_k.. of W_o
    contributions.set(matmul(H, P.W[3].subarray(hd * d_k * d, (hd + 1) * d_k * d), s, d_k, d), hd * s * d);
  }
  const output = project(merged, P.W[3], P.b[3], s, d);  // concat(H) @ W_o + b_o: (s, d)
  const onOutput = new Float64Array(s * d), offOutput = new Float64Array(s * d); let check = 0;
  const headNorms = new Float64Array(h);
  for (let e = 0; e < s * d; e++) {
    let all = 0, onSum = 0, offSum = 0;
    for (let hd = 0; hd < h; hd++) {
      const x = contributions[hd * s * d + e];
      all += x;
      if (on[hd]) { onSum += x; } else { offSum += x; }
    }
    onOutput[e] = onSum + P.b[3][e % d];
    offOutput[e] = offSum;
    check = Math.max(check, Math.abs(all + P.b[3][e % d] - output[e]));
  }
  for (let hd = 0; hd < h; hd++) {
    let sq = 0;
    for (let e = 0; e < s * d; e++) { sq += contributions[hd * s * d + e] * contributions[hd * s * d + e]; }
    headNorms[hd] = Math.sqrt(sq);
  }
  if (!on.some(Boolean)) {
    notes.push({level: "info", text: "every head is off: the output is just the bias b_o in every row"});
  }
  return {
    text: typeof text === "string" ? text : "", d, h, d_k, seed, on,
    positional, tokens, s, X, weights,
    contributions, output, onOutput, offOutput,
    headNorms, checkError: check, trace: shapeTrace(1, s, d, h), notes,
  };
}

/** The readout as HTML (every text escaped). */
function readoutHtml(st) {
  const sizes = "b=1, s=" + st.s + ", d=" + st.d + ", h=" + st.h + ", d<sub>k</sub>=d<sub>v</sub>=d/h=" +
    st.d_k + (st.positional ? "  (X includes positional encoding)" : "") +
    (st.s === 0 ? "  (no tokens: s = 0)" : "");
  const heads = st.on.map((on, i) => { return i + (on ? "" : " (off)") + ": " + format.fixed(st.headNorms[i], 2); }).join(", ");
  const missing = '<div class="ab-small">' + escapeHtml(missingHeadsText(st.d)) + "</div>";
  return wrapReadout(positionsHtml(st.tokens) +
    tracerHtml("<b>shape tracer</b> <code>" + sizes + "</code>", st.trace, missing) +
    '<div class="ab-contrib ab-small"><b>each head\u2019s write \u2016' +
    "H<sub>i</sub>W<sup>O</sup><sub>i</sub>\u2016:</b> " + escapeHtml(heads) + "<br>sum of all " +
    "heads\u2019 writes + b<sub>o</sub> vs the output: max difference " +
    format.exponent(st.checkError, 1) + "</div>", st.notes);
}

/** The alt text (plain text). */
function alt(st) {
  if (st.s === 0) { return noTokensAlt("Empty heatmaps", st.notes); }
  const s = st.s, off = [], peaks = [];
  st.on.forEach((on, i) => { if (!on) { off.push(String(i)); } });
  for (let hd = 0; hd < st.h; hd++) {  // (h, s, s) -> mean over queries (h, s) -> a key
    const means = new Float64Array(s); let best = -Infinity, at = 0, j;
    for (j = 0; j < s; j++) {
      for (let i = 0; i < s; i++) { means[j] += st.weights[(hd * s + i) * s + j]; }
      means[j] /= s;
      best = Math.max(best, means[j]);
    }
    while (means[at] < best - 1e-9) { at++; }  // the first key within 1e-9 of the largest
    peaks.push("head " + hd + " '" + st.tokens[at] + "'");
  }
  return "First: " + st.h + " heatmaps, one per head, of " + s + " by " + s + " attention weights " +
    "for the tokens " + st.tokens.join(", ") + " (d=" + st.d + ", d_k=" + st.d_k + ", input " +
    (st.positional ? "X + PE" : "X, no positions") + "); " +
    (off.length ? "heads " + off.join(", ") + " are switched off and drawn faded. " : "all heads are on. ") +
    "Most-attended key per head: " + peaks.join("; ") + ". Then " +
    (off.length ? "two " + s + " by " + st.d + " heatmaps: the output of the heads that are on (plus b_o) and what " +
      "the switched-off heads would add; their sum is the full output."
      : "a " + s + " by " + st.d + " heatmap of the output of all heads (plus b_o).");
}

/** The numbers the lab shows, for download: each head's weights (h, s, s), one row per
 *  query, the tokens, the heads on, the outputs. */
function numbers(st) {
  const n = nested, s = st.s, d = st.d, heads = stacked(st.weights, st.h, s, s);
  return {lab: "multihead", d, h: st.h, seed: st.seed, positional: st.positional, on: st.on,
    tokens: st.tokens, weights: heads, output: n(st.output, s, d), on_output: n(st.onOutput, s, d),
    off_output: n(st.offOutput, s, d), head_norms: Array.from(st.headNorms)};
}

const HEADS_OUTPUT_COLOR_LIMITS = [-3, 3];  // the outputs' colour scale

/** The picture as panels for lab.js: the heads' weights as a grid of equal maps on one
 *  scale (head 0 is no bigger than the others: it is not special), a head switched off
 *  faded; then the output of the heads on and, when a head is off, what the heads off add
 *  (signed values: the diverging map). */
function figure(st) {
  const s = st.s, d = st.d, nOn = st.on.filter(Boolean).length;
  const panels = [{kind: "grid", title: "each head's weights : (h, s, s) = (" + st.h + ", " + s + ", " + s + ")",
    rows: s, cols: s, cmap: "viridis", vmin: 0, vmax: 1, xlabel: "key j", ylabel: "query i",
    colorbar: "attention weight", rowLabels: st.tokens, colLabels: st.tokens, columns: 4, least: 70,
    maps: st.on.map((on, i) => ({title: "head " + i + (on ? "" : " (off)"), faded: !on,
      data: st.weights.subarray(i * s * s, (i + 1) * s * s)}))}];
  const output = (title, data) => ({kind: "heatmap", title, data, rows: s, cols: d, extent: [s, d],
    cmap: "RdBu_r", vmin: HEADS_OUTPUT_COLOR_LIMITS[0], vmax: HEADS_OUTPUT_COLOR_LIMITS[1],
    xlabel: "dimension", ylabel: "token", colorbar: "value", rowLabels: st.tokens, fillRow: true});
  panels.push(output("output of " + nOn + " head" + (nOn === 1 ? "" : "s") + " on : (" + s + ", " + d + ")",
    st.onOutput));
  if (nOn < st.h) {  // nothing is added by no head: no flat panel
    panels.push(output("added by " + (st.h - nOn) + " head" + (st.h - nOn === 1 ? "" : "s") + " off : (" +
      s + ", " + d + ")", st.offOutput));
  }
  return {columns: 2, panels};
}

/** The choices that follow other controls, as the scene's options_for: the head counts
 *  that divide d, and the heads of h. */
function choices(name, values) {
  if (name === "h") { return headChoices(values.d).map((h) => { return [String(h), h]; }); }
  if (name === "heads_on") {
    return Array.from({length: values.h}, (_, i) => { return ["head " + i, i]; });
  }
  return null;
}

export default {
  MH_D_CHOICES, MH_DEFAULT_SEED, headChoices, missingHeadsText, parameters, state, readoutHtml,
  alt, choices, numbers, figure,
};
