// Chapter 3's attention explorer computed in the reader's browser: the twin of
// attention_book/scenes/attention.py's attention_state; readout and alt text
// are this module's, at every control's full live range: any query sentence and
// keys/values sentence (up to 128 tokens each), self or cross, the query, d_k 1..64, every
// temperature, seeds 0..20. X rows come from chapter 1's table (d = 8, seed 0);
// W^Q, W^K, W^V are attention.projection_weights(8, d_k, seed=seed), drawn by rng.js as
// numpy draws them: default_rng(seed).normal(0, 1/sqrt(d), (d, d_k)) three times in a row.
// tests/test_web_twins.py checks it against Python (tests/test_web_states.py, slow: 1e-12).
// An ES module (its default export); build.mjs bundles it into web/attention.js, a classic
// script that sets globalThis.AttentionBook.attention.
//
// Row-vector notation as in the package; matrices row-major in Float64Arrays.
import {format} from "../format.js";
import {escapeHtml, noTokensAlt, wrapReadout} from "../shared/html.js";
import {argmax, cache, embedTokens, matmul, matmulT, nested, projectionWeights, softmaxRows, unique} from "../shared/matrices.js";
import {wholeNumber} from "../shared/messages.js";
import {isKnown, readTokens, tokenOptions} from "../shared/tokens.js";

const ATTENTION_D = 8;              // scenes.attention.ATTENTION_D
const MAX_ATTENTION_TOKENS = 128;   // scenes.attention.MAX_ATTENTION_TOKENS
const TEMPERATURES = [0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0];

// The last sentences, d_k and seed, and the last temperature too: a change of the query
// (or of the temperature) reuses Q, K, V and the scores instead of computing them again,
// which is most of a change at 128 tokens and d_k = 64.
const projectedCache = cache(), weighedCache = cache();

/** The last entry of a one-entry cache under `key`, or make(), kept under it. */
function lastOne(kept, key, make) {
  let hit = key === null ? undefined : kept.get(key);
  if (hit === undefined) {
    hit = make();
    if (key !== null) { kept.clear(); kept.set(key, hit); }
  }
  return hit;
}

/** Tokens, notes, X, Q, K, V and the unscaled scores Q K^T of the sentence(s). */
function project(mode, text, kvText, d_k, seed, maxTokens) {
  const d = ATTENTION_D, W = projectionWeights(d, d_k, seed);  // (d, d_k) each
  const q = readTokens(text, maxTokens, "query sentence"); let notes = q.notes;
  let qTokens = q.tokens, kTokens = qTokens;
  if (mode === "cross") {
    const kv = readTokens(kvText, maxTokens, "keys/values sentence");
    kTokens = kv.tokens;
    notes = notes.concat(kv.notes);
  }
  if (!qTokens.length || !kTokens.length) { qTokens = kTokens = []; }
  const unknown = unique(qTokens.concat(kTokens)).filter((t) => { return !isKnown(t); });
  if (unknown.length) {
    notes.push({level: "info", text: "not in the vocabulary (shown with the <unk> embedding): " +
      unknown.slice(0, 8).map((t) => { return "'" + t + "'"; }).join(", ") +
      (unknown.length > 8 ? ", \u2026" : "")});
  }
  const s_q = qTokens.length, s_k = kTokens.length;
  const X_q = embedTokens(qTokens, d, 0), X_kv = embedTokens(kTokens, d, 0);
  const Q = matmul(X_q, W[0], s_q, d, d_k);   // (s_q, d) @ (d, d_k) -> (s_q, d_k)
  const K = matmul(X_kv, W[1], s_k, d, d_k);  // (s_k, d) @ (d, d_k) -> (s_k, d_k)
  const V = matmul(X_kv, W[2], s_k, d, d_k);  // (s_k, d) @ (d, d_v) -> (s_k, d_v)
  return {qTokens, kTokens, notes, s_q, s_k,
    X_q, X_kv, Q, K, V, scores: scores(X_q, X_kv, Q, K, W, d_k)};
}

/** The unscaled scores Q K^T : (s_q, s_k). When d_k is wider than X's d = 8, as
 *  X_q (W^Q W^K^T) X_kv^T: the same sums regrouped through the narrower width, 8 times
 *  fewer products at d_k = 64 (0.26 instead of 1.5 ms of CPU at 128 x 128 tokens), equal
 *  to rounding (a query's scores of two keys with equal rows of X still equal exactly). */
function scores(X_q, X_kv, Q, K, W, d_k) {
  const d = ATTENTION_D, s_q = X_q.length / d, s_k = X_kv.length / d;
  if (d_k <= d) { return matmulT(Q, K, s_q, d_k, s_k); }  // (s_q, d_k) @ (d_k, s_k) -> (s_q, s_k)
  const M = matmulT(W[0], W[1], d, d_k, d);  // (d, d_k) @ (d_k, d) -> (d, d)
  const XM = matmul(X_q, M, s_q, d, d);      // (s_q, d) @ (d, d) -> (s_q, d)
  return matmulT(XM, X_kv, s_q, d, s_k);     // (s_q, d) @ (d, s_k) -> (s_q, s_k)
}

/** attention_state: sentence(s) -> X -> Q, K, V -> weights and output, with notes. */
function state(values) {
  const text = values.text, kvText = values.kv_text, mode = values.mode || "self";
  const d_k = values.d_k, temperature = values.temperature, seed = values.seed, query = values.query;
  const maxTokens = values.maxTokens === undefined ? MAX_ATTENTION_TOKENS : values.maxTokens;
  if (mode !== "self" && mode !== "cross") { throw new Error("mode must be 'self' or 'cross', got '" + mode + "'"); }
  if (typeof temperature !== "number" || !isFinite(temperature) || !(temperature > 0)) {
    throw new Error("temperature must be a positive number, got " + temperature);
  }
  wholeNumber(query, "query", 0);
  // Only well-typed sentences are cached, so that a bad one always meets its error.
  const cacheable = typeof text === "string" && (mode === "self" || typeof kvText === "string");
  const key = cacheable ? [mode, text, mode === "cross" ? kvText : "", d_k, seed, maxTokens].join("\u0000") : null;
  const p = lastOne(projectedCache, key, () => {
    return project(mode, text, kvText, d_k, seed, maxTokens);
  });
  const s_q = p.s_q, s_k = p.s_k, scale = 1.0 / (temperature * Math.sqrt(d_k));
  const w = lastOne(weighedCache, key === null ? null : key + "\u0000" + temperature, () => {
    const scaled = p.scores.map((x) => { return x * scale; });  // (s_q, s_k)
    const weights = softmaxRows(scaled, s_q, s_k);  // softmax over each row
    let output = null;  // (s_q, d_v): computed when read (the picture does not show it)
    return {weights, output () {
      // (s_q, s_k) @ (s_k, d_v) -> (s_q, d_v)
      return output || (output = matmul(weights, p.V, s_q, s_k, d_k));
    }};
  });
  return {
    text: typeof text === "string" ? text : "", kvText: typeof kvText === "string" ? kvText : "",
    mode, d_k, temperature, seed,
    query: s_q ? Math.min(query, s_q - 1) : 0, queryTokens: p.qTokens, keyTokens: p.kTokens,
    s_q, s_k, X_q: p.X_q, X_kv: p.X_kv, Q: p.Q, K: p.K, V: p.V, scale,
    weights: w.weights, get output() { return w.output(); }, notes: p.notes.slice(),
  };
}

/** The chosen query's weights (s_k,). */
function row(st) { return st.weights.subarray(st.query * st.s_k, (st.query + 1) * st.s_k); }

/** Whether keys j and k have equal rows of X_kv (so every query weighs them exactly alike). */
function sameKey(st, j, k) {
  const d = ATTENTION_D, X = st.X_kv;
  for (let t = 0; t < d; t++) { if (X[j * d + t] !== X[k * d + t]) { return false; } }
  return true;
}

/** Groups (at least two, at most 8) of keys with equal rows of X_kv, which every query weighs
 *  alike: read off X, not off the weights, which the products may round an ulp apart. */
function equalKeys(st) {
  const groups = [], done = new Uint8Array(st.s_k);
  for (let j = 0; j < st.s_k; j++) {
    if (done[j]) { continue; }
    const group = [j];
    for (let k = j + 1; k < st.s_k; k++) { if (!done[k] && sameKey(st, j, k)) { group.push(k); done[k] = 1; } }
    if (group.length > 1) { groups.push(group); }
  }
  return groups.slice(0, 8);
}

/** _top_key: the key the chosen query weighs most; the first among keys with its row of X. */
function topKey(st) {
  const top = argmax(row(st));
  for (let j = 0; j < top; j++) { if (sameKey(st, j, top)) { return j; } }
  return top;
}

/** The readout as HTML (every token escaped). */
function readoutHtml(st) {
  const parts = ["<b>" + st.mode + "-attention</b>: Q = X<sub>q</sub>W<sup>Q</sup> : (" + st.s_q +
    ", " + st.d_k + "), K = X<sub>kv</sub>W<sup>K</sup> : (" + st.s_k + ", " + st.d_k +
    "), V : (" + st.s_k + ", " + st.d_k + "), with W<sup>Q</sup>, W<sup>K</sup>, W<sup>V</sup> : (" +
    ATTENTION_D + ", " + st.d_k + ") shared by every position; weights : (" + st.s_q + ", " +
    st.s_k + "); scale = 1/(" + format.general(st.temperature, 6) + "\u00b7\u221a" + st.d_k +
    ") = " + format.fixed(st.scale, 3)];
  if (st.s_q) {
    const r = row(st), top = topKey(st), keys = st.keyTokens; let total = 0, j;
    for (j = 0; j < r.length; j++) { total += r[j]; }
    const chips = keys.slice(0, 16).map((t, n) => {
      return '<span class="ab-weight">' + escapeHtml(t) + "&nbsp;" +
        format.fixed(r[n], 2) + "</span>";
    }).join(" ");
    const tied = [];
    for (j = 0; j < st.s_k; j++) { if (j !== top && sameKey(st, j, top)) { tied.push(j); } }
    let line = "query " + st.query + " ('" + escapeHtml(st.queryTokens[st.query]) + "') attends most to key " +
      top + " ('" + escapeHtml(keys[top]) + "', weight " + format.fixed(r[top], 2) + ")";
    if (tied.length) {
      line += ", tied exactly with key " + tied.map((k) => { return k + " ('" + escapeHtml(keys[k]) + "')"; }).join(", ");
    }
    if (st.mode === "self") {
      line += top === st.query ? ": itself" : ", not to itself (weight " + format.fixed(r[st.query], 2) + ")";
    }
    parts.push(line, "its row (sums to " + format.fixed(total, 2) + "): " + chips + (st.s_k > 16 ? " \u2026" : ""));
    const same = equalKeys(st);
    if (same.length) {
      parts.push("weighed exactly alike by every query (equal rows of X: no positions tell them apart): " +
        same.map((g) => {
          return "keys " + g.map((k) => { return k + " ('" + escapeHtml(keys[k]) + "')"; }).join(", ");
        }).join("; "));
    }
  }
  return wrapReadout(parts.join("<br>"), st.notes, "ab-small");
}

/** The alt text: the figure in plain text (set it as text, never as HTML). */
function alt(st) {
  if (st.s_q === 0) { return noTokensAlt("Empty heatmap, arcs and bars", st.notes); }
  const r = row(st), top = topKey(st); let min = Infinity;
  for (let j = 0; j < r.length; j++) { min = Math.min(min, r[j]); }
  return "First: a heatmap of the " + st.s_q + " by " + st.s_k + " attention weights (" + st.mode +
    "-attention, d_k = " + st.d_k + ", temperature " + format.general(st.temperature, 6) + ", seed " +
    st.seed + "), query tokens (" + st.queryTokens.slice(0, 16).join(", ") + ") down and key tokens (" +
    st.keyTokens.slice(0, 16).join(", ") + ") across, colour 0 to 1, row " + st.query +
    " outlined. Then arcs and bars from query " + st.query + " '" + st.queryTokens[st.query] +
    "' to every key; the heaviest goes to key " + top + " '" + st.keyTokens[top] + "' with weight " +
    format.fixed(r[top], 2) + ", the lightest has " + format.fixed(min, 2) + ".";
}

/** query_options: the query drop-down's choices for the current sentence(s). */
function queryOptions(values) {
  const tokens = readTokens(values.text, MAX_ATTENTION_TOKENS).tokens;
  const keys = values.mode === "self" || readTokens(values.kv_text).tokens.length > 0;
  return tokenOptions(keys ? tokens : []);
}

/** The numbers the lab shows, for download: the attention weights drawn (one row per
 *  query), the tokens, Q, K, V and the output. */
function numbers(st) {
  const n = nested;
  return {lab: "attention", mode: st.mode, d_k: st.d_k, temperature: st.temperature, seed: st.seed,
    scale: st.scale, query: st.query, tokens: st.queryTokens, key_tokens: st.keyTokens,
    weights: n(st.weights, st.s_q, st.s_k), Q: n(st.Q, st.s_q, st.d_k), K: n(st.K, st.s_k, st.d_k),
    V: n(st.V, st.s_k, st.d_k), output: n(st.output, st.s_q, st.d_k)};
}

/** The picture as panels for lab.js:
 *  the weights (s_q, s_k) with the tokens, and the chosen query's row of weights. */
function figure(st) {
  return {
    columns: 2,
    panels: [
      {kind: "heatmap", title: "weights : (s_q, s_k) = (" + st.s_q + ", " + st.s_k + ")",
        data: st.weights, rows: st.s_q, cols: st.s_k, extent: [st.s_q, st.s_k], cmap: "viridis",
        vmin: 0, vmax: 1, xlabel: "key token j", ylabel: "query token i",
        colorbar: "weight (each row sums to 1)", rowLabels: st.queryTokens, colLabels: st.keyTokens,
        outlineRow: st.query},
      {kind: "arcs", title: st.s_q ? "query " + st.query + " '" + st.queryTokens[st.query] + "' attends to"
                                  : "no tokens",
      tokens: st.keyTokens, query: st.query, weights: row(st),
      // cross-attention: the query is not among the keys; drawn at its place in its sentence
      queryAt: st.mode === "cross" ? (st.s_q > 1 ? st.query / (st.s_q - 1) : 0.5) : undefined},
      // the same row as bars, one a key: the weights the arcs draw, read off a scale
      {kind: "bars", title: st.s_q ? "query " + st.query + "'s weights over the keys" : "no tokens",
        labels: st.s_q ? st.keyTokens.map((t, j) => { return j + ": " + t; }) : [],
        series: [{label: "weight", color: "#0072b2", dark: "#56b4e9", values: Array.from(row(st))}],
        xlim: [0, 1], xlabel: "weight"},
    ],
  };
}

const api = {
  ATTENTION_D, TEMPERATURES, projectionWeights, state,
  choices (name, values) { return name === "query" ? queryOptions(values) : null; },
  readoutHtml, alt, queryOptions, row, numbers, figure,
};

export default api;
