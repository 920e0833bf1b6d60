// Chapter 5's permutation playground computed in the reader's browser: the twin of
// attention_book/scenes/permutation.py's permutation_state (readout and alt text: here only) at
// every control's full live range: any sentence (up to 128 tokens), every named order, any
// typed order (parse_permutation's messages), shuffle seeds 0..99 (rng.js's permutation is
// numpy's Generator.permutation), positional encoding and the causal mask on or off.
// W^Q, W^K, W^V = projection_weights(8, 8, seed=0) and X from chapter 1's table (d = 8).
// tests/test_web_twins.py checks it against Python (tests/test_web_states.py, slow: 1e-12).
//
// Row-major Float64Arrays; a permutation is an array: new position i holds old token perm[i].
import {format} from "../format.js";
import {escapeHtml, noTokensAlt, wrapReadout} from "../shared/html.js";
import {embedTokens, matmul, matmulT, nested, projectionWeights, sinusoidalEncoding, softmaxRows} from "../shared/matrices.js";
import {asKnown, codePoints, isSpace, readTokens} from "../shared/tokens.js";
import {defaultRng} from "../shared/rng.js";

const PERMUTATION_NAMES = ["identity", "reverse", "rotate", "swap", "shuffle"];
const EQUIVARIANCE_TOL = 1e-9;   // scenes.permutation.EQUIVARIANCE_TOL
const SHUFFLE_SEEDS = [0, 99];
const D = 8, MODEL_SEED = 0, MAX_TOKENS = 128;

function range(s) { const p = []; for (let i = 0; i < s; i++) { p.push(i); } return p; }

/** permutation.named_permutation(name, s, seed). */
function namedPermutation(name, s, seed) {
  if (PERMUTATION_NAMES.indexOf(name) < 0) {
    throw new Error("unknown permutation '" + name + "': choose one of ['" + PERMUTATION_NAMES.join("', '") + "']");
  }
  const perm = range(s);
  if (name === "reverse") { return perm.reverse(); }
  if (name === "rotate") { return perm.map((i) => { return (i + 1) % s; }); }
  if (name === "shuffle") { return Array.from(defaultRng(seed).permutation(s)); }
  if (name === "swap") { const t = perm[0]; perm[0] = perm[s - 1]; perm[s - 1] = t; }
  return perm;
}

const shuffles = new Map();  // s -> the lab's shuffled orders of s positions

/** scenes.permutation.shuffle_order: distinct permutations drawn in turn from one generator
 *  (seed 0), one a shuffle seed while s! allows; seeds past it repeat the first. */
function shuffleOrder(s, seed) {
  if (!shuffles.has(s)) {
    let want = SHUFFLE_SEEDS[1] - SHUFFLE_SEEDS[0] + 1;
    if (s < 8) { let f = 1; for (let k = 2; k <= s; k++) { f *= k; } want = Math.min(want, f); }
    const rng = defaultRng(0), seen = new Set(), out = [];
    while (out.length < want) {
      const perm = Array.from(rng.permutation(s)), key = perm.join(",");
      if (!seen.has(key)) { seen.add(key); out.push(perm); }
    }
    shuffles.set(s, out);
  }
  const orders = shuffles.get(s);
  return orders[seed % orders.length].slice();
}

/** A run of ASCII digits as Python's int() prints it ("007" -> "7"). */
function intText(p) { const t = p.replace(/^0+/, ""); return t === "" ? "0" : t; }

/** permutation.parse_permutation(text, s): the typed order, or throws Python's message. */
function parsePermutation(text, s) {
  if (typeof text !== "string") { throw new Error("the order must be text such as '4 3 2 1 0', got " + text); }
  const parts = []; let cur = [];  // text.replace(",", " ").split(): Python's whitespace
  codePoints(text).forEach((c) => {
    if (c === 44 || isSpace(c)) {
      if (cur.length) { parts.push(String.fromCodePoint.apply(null, cur)); cur = []; }
    } else { cur.push(c); }
  });
  if (cur.length) { parts.push(String.fromCodePoint.apply(null, cur)); }
  if (!parts.length) { throw new Error("type " + s + " positions, e.g. '" + range(s).reverse().join(" ") + "'"); }
  const bad = parts.filter((p) => { return !/^[0-9]+$/.test(p); });
  if (bad.length) { throw new Error("'" + bad[0] + "' is not a position: use whole numbers 0.." + (s - 1)); }
  if (parts.length !== s) {
    throw new Error("the sentence has s=" + s + " tokens, so type " + s + " positions, got " + parts.length);
  }
  const texts = parts.map(intText);
  const out = texts.filter((t) => { return t.length > 15 || parseInt(t, 10) >= s; });
  if (out.length) { throw new Error("position " + out[0] + " does not exist: positions run 0.." + (s - 1)); }
  const values = texts.map((t) => { return parseInt(t, 10); }), count = new Array(s).fill(0);
  values.forEach((v) => { count[v]++; });
  const repeated = count.findIndex((c) => { return c > 1; });
  if (repeated >= 0) {
    throw new Error("position " + repeated + " appears twice and " + count.indexOf(0) +
                    " is missing: each of 0.." + (s - 1) + " must appear exactly once");
  }
  return values;
}

/** f(x_in) = softmax(Q K^T / sqrt(d) [causal]) V with Q = x_in W^Q, ...: [output, weights]. */
function attend(x, W, s, causal) {
  const Q = matmul(x, W[0], s, D, D);  // (s, d) @ (d, d) -> (s, d)
  const K = matmul(x, W[1], s, D, D);
  const V = matmul(x, W[2], s, D, D);
  const scores = matmulT(Q, K, s, D, s, 1.0 / Math.sqrt(D));  // (s, d) @ (d, s) -> (s, s)
  if (causal) {  // True = may attend: key j <= query i
    for (let i = 0; i < s; i++) { for (let j = i + 1; j < s; j++) { scores[i * s + j] = -Infinity; } }
  }
  const weights = softmaxRows(scores, s, s);
  return [matmul(weights, V, s, s, D), weights];  // (s, s) @ (s, d) -> (s, d)
}

/** Rows perm of a (s, n) matrix: P A. */
function rows(A, perm, n) {
  const out = new Float64Array(perm.length * n);
  perm.forEach((j, i) => { out.set(A.subarray(j * n, (j + 1) * n), i * n); });
  return out;
}

/** permutation.same_rows_up_to_order(a, b, atol): greedy pairing of equal rows. */
function sameRowsUpToOrder(a, b, s, d, atol) {
  const used = new Uint8Array(s);
  for (let i = 0; i < s; i++) {
    let found = -1;
    for (let j = 0; j < s && found < 0; j++) {
      if (used[j]) { continue; }
      let ok = true;
      for (let t = 0; t < d && ok; t++) { ok = Math.abs(a[i * d + t] - b[j * d + t]) <= atol; }
      if (ok) { found = j; }
    }
    if (found < 0) { return false; }
    used[found] = 1;
  }
  return true;
}

/** permutation_state: attention before and after a permutation of the tokens. */
function state(values) {
  const text = values.text, order = values.order === undefined ? "reverse" : values.order;
  const custom = values.custom === undefined ? "" : values.custom, seed = values.seed || 0;
  const pe = !!values.pe, causal = !!values.causal, d = D;
  const maxTokens = values.maxTokens === undefined ? MAX_TOKENS : values.maxTokens;
  const W = projectionWeights(d, d, MODEL_SEED);  // (d, d) each
  const read = readTokens(text, maxTokens), notes = read.notes, tokens = asKnown(read.tokens, notes);
  const s = tokens.length; let perm;
  if (s === 0) {
    const e = new Float64Array(0);
    return {tokens: [], s: 0, perm: [], permutedTokens: [], pe, causal,
      after: [e, e, e], before: [e, e, e], difference: e, maxError: 0, weightsError: 0,
      sameSet: true, equivariant: true, notes};
  }
  if (order === "custom") {
    try {
      perm = parsePermutation(custom, s);
    } catch (err) {
      notes.push({level: "error", text: "custom order: " + err.message + "; showing the identity"});
      perm = range(s);
    }
  } else if (order === "shuffle") {
    perm = shuffleOrder(s, seed);
  } else {
    perm = namedPermutation(order, s, seed);
  }
  const X = embedTokens(tokens, d, MODEL_SEED);  // (s, d)
  let xIn = X, pxIn = rows(X, perm, d);  // the tokens move, the positions do not
  if (pe) {
    const PE = sinusoidalEncoding(s, d);  // (s, d)
    xIn = X.map((x, k) => { return x + PE[k]; });
    pxIn = pxIn.map((x, k) => { return x + PE[k]; });
  }
  const f = attend(xIn, W, s, causal), fp = attend(pxIn, W, s, causal);
  const pw = new Float64Array(s * s);  // P A P^T: (s, s)
  for (let i = 0; i < s; i++) { for (let j = 0; j < s; j++) { pw[i * s + j] = f[1][perm[i] * s + perm[j]]; } }
  const after = [rows(xIn, perm, d), pw, rows(f[0], perm, d)];
  const difference = new Float64Array(s * d); let maxError = 0, weightsError = 0, k;
  for (k = 0; k < s * d; k++) {
    difference[k] = Math.abs(fp[0][k] - after[2][k]);
    maxError = Math.max(maxError, difference[k]);
  }
  for (k = 0; k < s * s; k++) { weightsError = Math.max(weightsError, Math.abs(fp[1][k] - pw[k])); }
  const identity = perm.every((p, n) => { return p === n; });
  if (identity) {
    notes.push({level: "info", text: "the identity moves nothing, so both rows agree trivially: choose another order"});
  } else if (maxError > EQUIVARIANCE_TOL) {
    if (pe) {
      notes.push({level: "info", text: "positional encoding is added by position, not moved with the tokens: PX + PE is not P(X + PE)"});
    }
    if (causal) {
      notes.push({level: "info", text: "the causal mask lets position i see only positions 0..i: a moved token sees a different set of tokens"});
    }
  }
  return {
    tokens, s, perm, permutedTokens: perm.map((j) => { return tokens[j]; }),
    pe, causal, after, before: [pxIn, fp[1], fp[0]], difference,
    maxError, weightsError,
    sameSet: sameRowsUpToOrder(fp[0], f[0], s, d, 1e-9), equivariant: maxError <= EQUIVARIANCE_TOL,
    notes,
  };
}

function verdict(st) { return "equivariant: " + (st.equivariant ? "yes" : "no") + " (max error " + format.exponent(st.maxError, 1) + ")"; }

/** The readout as HTML (every text escaped). */
function readoutHtml(st) {
  if (st.s === 0) { return wrapReadout("", st.notes); }
  const mono = 'class="ab-mono"', answer = st.equivariant ? "yes" : "no";
  const symbol = st.equivariant ? "&#10004;" : "&#10008;";
  const identity = Array.from(st.perm).every((j, i) => { return j === i; });
  const same = !st.sameSet ? "no: the rows themselves changed" :
    identity ? "yes, in the same order (the identity permutation)" : "yes: only their order differs";
  return wrapReadout(
    "<div " + mono + ">perm = [" + st.perm.join(" ") + "] &rarr; " + escapeHtml(st.permutedTokens.join(" ")) + "</div>" +
    '<div class="ab-verdict ab-verdict-' + answer + '">' + symbol + " " +
    escapeHtml(verdict(st)) + "</div><div " + mono + ">max |A(PX) &minus; P A(X) P&#7488;| = " +
    format.exponent(st.weightsError, 1) + "</div><div>f(PX) and f(X) hold the same rows up to order: " +
    same + "</div>", st.notes);
}

/** The alt text (plain text). */
function alt(st) {
  if (st.s === 0) { return noTokensAlt("Seven empty heatmaps", st.notes); }
  return "Tokens reordered as: " + st.permutedTokens.join(", ") + " (perm " + st.perm.join(" ") +
    "), positional encoding " + (st.pe ? "on" : "off") + ", causal mask " + (st.causal ? "on" : "off") +
    ". Left column: input, weights and output of the original sentence, permuted after attention. " +
    "Right column: the same computed from the permuted sentence" + (st.causal ? ", the keys the causal mask " +
    "hides hatched in each" : "") + ". Below: their difference, on a log scale from 1e-12 to 10. " +
    (st.equivariant ? "The two columns are identical and the difference map is dark (1e-12 or less) everywhere: " :
      "The two columns differ and the difference map is bright in the rows that differ: ") + verdict(st) + ".";
}

/** The numbers the lab shows, for download: the weights of the permuted sentence A(PX)
 *  (one row per query) and P A(X) P^T, the tokens and the order, both outputs. */
function numbers(st) {
  const n = nested, s = st.s, d = D;
  return {lab: "permutation", pe: st.pe, causal: st.causal, tokens: st.tokens, perm: st.perm,
    permuted_tokens: st.permutedTokens, weights: n(st.before[1], s, s),
    weights_permuted_after: n(st.after[1], s, s), output_permuted_before: n(st.before[2], s, d),
    output_permuted_after: n(st.after[2], s, d), max_error: st.maxError, equivariant: st.equivariant};
}

// the colour scales of the inputs and outputs (signed: the diverging map); the most tick
// labels named; the difference's scale, log10 of |f(PX) - P f(X)| from 1e-12 to 10
const LIMITS = {input: [-3, 3], output: [-2, 2]}, MAX_LABELS = 16, LOG_DIFF = [-12, 1];

/** log10 of each difference; 1e-13 and less (rounding, 0) all at 1e-13, the colour bar's
 *  "<= 1e-12" end, so that rounding a few ulps apart draws alike. */
function logDifference(diff) {
  return Float64Array.from(diff, (v) => Math.max(LOG_DIFF[0] - 1, v > 0 ? Math.log10(v) : -Infinity));
}

/** The picture as panels for lab.js: three pairs, each a grid of two maps of one size on one
 *  scale, the left permuted after attention and the right computed from the permuted
 *  sentence, which should be equal: the inputs, the weights (a causal mask's cells masked,
 *  in each map where it hides a key), the outputs; then their difference on a log scale, so
 *  that rows that differ by 0.05 stand out as brightly as rows that differ by 3. */
function figure(st) {
  const s = st.s, d = D, labels = s <= MAX_LABELS ? st.permutedTokens : undefined;
  const pair = (title, kind, maps, cols, xlabel, more) => Object.assign({kind: "grid", title, rows: s, cols,
    cmap: kind === "weight" ? "viridis" : "RdBu_r", vmin: kind === "weight" ? 0 : LIMITS[kind][0],
    vmax: kind === "weight" ? 1 : LIMITS[kind][1], colorbar: kind, rowLabels: labels, columns: 2, least: 90,
    ylabel: labels ? "" : "position", xlabel, maps}, more);
  let masked = [undefined, undefined];
  if (st.causal && s) {  // A(PX): key j > query i; P A(X) P^T: key perm[j] after query perm[i]
    masked = [new Uint8Array(s * s), new Uint8Array(s * s)];
    for (let i = 0; i < s; i++) {
      for (let j = 0; j < s; j++) {
        masked[0][i * s + j] = st.perm[j] > st.perm[i] ? 1 : 0;
        masked[1][i * s + j] = j > i ? 1 : 0;
      }
    }
  }
  return {
    columns: 2,
    panels: [
      pair("inputs", "input", [{title: st.pe ? "P(X + PE)" : "P(X)", data: st.after[0]},
        {title: st.pe ? "PX + PE" : "PX", data: st.before[0]}], d, "dimension"),
      // P A P^T moves A's rows and columns alike: its keys are in the permuted order too
      pair("weights", "weight", [{title: "P A(X) P\u1d40", data: st.after[1], masked: masked[0]},
        {title: "A(PX)", data: st.before[1], masked: masked[1]}], s, "key", {colLabels: labels}),
      pair("outputs", "output", [{title: "P f(X)", data: st.after[2]}, {title: "f(PX)", data: st.before[2]}],
        d, "dimension"),
      {kind: "heatmap", title: "|f(PX) \u2212 P f(X)| (log scale)", data: logDifference(st.difference),
        rows: s, cols: d, extent: [s, d], cmap: "viridis", vmin: LOG_DIFF[0], vmax: LOG_DIFF[1],
        colorbarTicks: [-12, -8, -4, 0], colorbarLabels: ["1e-12", "1e-8", "1e-4", "1"],
        colorbar: "difference", xlabel: "dimension", ylabel: labels ? "" : "position",
        rowLabels: labels, row: true},
    ],
  };
}

export default {
  PERMUTATION_NAMES, SHUFFLE_SEEDS, state, readoutHtml, alt, numbers, figure,
};
