// matrices.js: chapter 1's embedding table drawn with rng.js (numpy's default_rng, bit for
// bit), the caches a lab keeps, the labs' random weights and small matrix helpers.
//
// Matrices are row-major Float64Arrays: entry (i, j) of an (n, m) matrix at i * m + j.

import vocab from "./vocab.js";
import {defaultRng} from "./rng.js";
import {encode} from "./tokens.js";
import {positiveInt, wholeNumber} from "./messages.js";

// ------------------------------------------------------------------ embeddings

const tables = new Map();  // "d,seed" -> (V, d), as scenes.core._table (the last 32)

/** embedding.embedding_table(V, d, seed): default_rng(seed).standard_normal((V, d)). */
function embeddingTable(d, seed) {
  return kept(tables, d + "," + seed, () => {
    return defaultRng(seed).standardNormal(vocab.words.length * d);  // (V, d)
  }, 32);
}

/** The rows of ``ids`` of an (V, d) table: X:(s, d) (embedding.embed). */
function embed(ids, table, d) {
  const X = new Float64Array(ids.length * d);
  for (let i = 0; i < ids.length; i++) { X.set(table.subarray(ids[i] * d, (ids[i] + 1) * d), i * d); }
  return X;
}

/** scenes.core.embed_tokens: chapter 1's embeddings (s, d) of the tokens. */
function embedTokens(tokens, d, seed) {
  return embed(encode(tokens), embeddingTable(d, seed || 0), d);
}

// ------------------------------------------------------------------ matrices

const caches = [tables];

/** Empty every cache (the embedding tables and those a lab registered: benchmarks time a
 *  change that must draw its random numbers afresh). */
function clearCaches() { caches.forEach((c) => { c.clear(); }); }

/** A Map-like cache a lab keeps (cleared by clearCaches). */
function cache() { const c = new Map(); caches.push(c); return c; }

/** The value of `c` under `key`, or make()'s, kept (the oldest dropped beyond `most`). */
function kept(c, key, make, most = 64) {
  let value = c.get(key);
  if (value === undefined) {
    value = make();
    if (c.size >= most) { c.delete(c.keys().next().value); }
    c.set(key, value);
  }
  return value;
}

// ------------------------------------------------------------------ random weights

const projections = cache();  // "d,d_k,seed" -> [W_q, W_k, W_v]

/** attention.projection_weights(d, d_k, seed=seed): W_q, W_k, W_v : (d, d_k), N(0, 1/d),
 *  drawn in that order from default_rng(seed). */
function projectionWeights(d, d_k, seed) {
  positiveInt(d_k, "d_k");
  wholeNumber(seed, "seed", 0);
  return kept(projections, d + "," + d_k + "," + seed, () => {
    const g = defaultRng(seed), std = 1.0 / Math.sqrt(d);
    return [g.normal(0.0, std, d * d_k), g.normal(0.0, std, d * d_k), g.normal(0.0, std, d * d_k)];
  });
}

/** MultiHeadAttention.from_seed(d, h, seed, bias=True)'s parameters from generator `g` (they
 *  do not depend on h): W: [W_q, W_k, W_v, W_o] (d, d) each, then b: [b_q, b_k, b_v, b_o]
 *  (d,) each, N(0, 1/d). */
function attentionParameters(g, d) {
  const std = 1.0 / Math.sqrt(d), W = [], b = []; let i;
  for (i = 0; i < 4; i++) { W.push(g.normal(0.0, std, d * d)); }  // (d, d) each
  for (i = 0; i < 4; i++) { b.push(g.normal(0.0, std, d)); }      // (d,) each
  return {W, b};
}

/** A:(n, k) @ B:(k, m) -> (n, m). */
function matmul(A, B, n, k, m) {
  const C = new Float64Array(n * m);
  for (let i = 0; i < n; i++) {
    for (let t = 0; t < k; t++) {
      const a = A[i * k + t], row = t * m, out = i * m;
      for (let j = 0; j < m; j++) { C[out + j] += a * B[row + j]; }
    }
  }
  return C;
}

/** A:(n, k) @ B^T with B:(m, k) -> (n, m), times scale. */
function matmulT(A, B, n, k, m, scale) {
  const C = new Float64Array(n * m);
  scale = scale === undefined ? 1 : scale;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < m; j++) {
      let sum = 0;
      for (let t = 0; t < k; t++) { sum += A[i * k + t] * B[j * k + t]; }
      C[i * m + j] = sum * scale;
    }
  }
  return C;
}

/** attention.softmax over the rows of X:(n, m), in place; -inf gets 0, an all -inf row 0s. */
function softmaxRows(X, n, m) {
  for (let i = 0; i < n; i++) {
    const o = i * m; let max = -Infinity, j;
    for (j = 0; j < m; j++) { if (X[o + j] > max) { max = X[o + j]; } }
    if (max === -Infinity) { max = 0; }
    let total = 0;
    for (j = 0; j < m; j++) { X[o + j] = Math.exp(X[o + j] - max); total += X[o + j]; }
    if (!(total > 0)) { total = 1; }
    for (j = 0; j < m; j++) { X[o + j] /= total; }
  }
  return X;
}

/** embedding.cosine_similarity of the rows of X:(s, d) -> (s, s), clipped to [-1, 1]. */
function cosineSimilarity(X, s, d) {
  const unit = new Float64Array(s * d);
  for (let i = 0; i < s; i++) {
    let norm = 0, j;
    for (j = 0; j < d; j++) { norm += X[i * d + j] * X[i * d + j]; }
    norm = Math.sqrt(norm);
    if (norm > 0) { for (j = 0; j < d; j++) { unit[i * d + j] = X[i * d + j] / norm; } }
  }
  const S = matmulT(unit, unit, s, d, s);  // (s, d) @ (d, s) -> (s, s)
  for (let k = 0; k < S.length; k++) { S[k] = Math.min(1, Math.max(-1, S[k])); }
  return S;
}

/** Tokens in order of first occurrence that occur more than once (scenes.embedding._repeated). */
function repeated(tokens) {
  const count = new Map();
  tokens.forEach((t) => { count.set(t, (count.get(t) || 0) + 1); });
  return Array.from(count.keys()).filter((t) => { return count.get(t) > 1; });
}

function unique(list) { return Array.from(new Set(list)); }

/** A row-major (n, m) matrix as n plain arrays (for the numbers a reader downloads). */
function nested(a, n, m) {
  const out = [];
  for (let i = 0; i < n; i++) { out.push(Array.from(a.subarray(i * m, (i + 1) * m))); }
  return out;
}

/** A stack a:(k, n, m) as k nested (n, m) lists (each head's or layer's map, for JSON). */
function stacked(a, k, n, m) {
  return Array.from({length: k}, (_, i) => {
    return nested(a.subarray(i * n * m, (i + 1) * n * m), n, m);
  });
}

/** positional.sinusoidal_encoding(s, d, base): PE:(s, d), PE[p, 2i] = sin(p w_i),
 *  PE[p, 2i+1] = cos(p w_i), w_i = base^(-2i/d) (chapters 4, 5 and 7 add it to X). */
function sinusoidalEncoding(s, d, base) {
  base = base || 10000.0;
  const pe = new Float64Array(s * d), half = d / 2;
  for (let i = 0; i < half; i++) {
    const omega = Math.pow(base, -2 * i / d);
    for (let p = 0; p < s; p++) {
      const a = p * omega;  // (s,) outer (d/2,) -> (s, d/2), one entry
      pe[p * d + 2 * i] = Math.sin(a);
      pe[p * d + 2 * i + 1] = Math.cos(a);
    }
  }
  return pe;
}

/** block.layer_norm over the rows of x:(s, d): (x - mean) / sqrt(var + eps) (biased
 *  variance, as torch), times gamma:(d,) and plus beta:(d,) when given -> (s, d).
 *  (minilm.js keeps its own: it also runs alone in a worker.) */
function layerNorm(x, s, d, eps, gamma, beta) {
  const y = new Float64Array(s * d);
  for (let r = 0; r < s; r++) {
    const o = r * d; let mean = 0, v = 0, j;
    for (j = 0; j < d; j++) { mean += x[o + j]; }
    mean /= d;
    for (j = 0; j < d; j++) { v += (x[o + j] - mean) * (x[o + j] - mean); }
    const root = Math.sqrt(v / d + eps);
    for (j = 0; j < d; j++) {
      const n = (x[o + j] - mean) / root;
      y[o + j] = gamma ? n * gamma[j] + (beta ? beta[j] : 0) : n;
    }
  }
  return y;
}

/** The cells a causal mask hides in an (s, s) map: (s, s), 1 where key j > query i (the
 *  masked style's cells, panels/style.js). */
function futureKeys(s) {
  const out = new Uint8Array(s * s);
  for (let i = 0; i < s; i++) { out.fill(1, i * s + i + 1, (i + 1) * s); }
  return out;
}

/** The first index of a's largest entry (numpy's argmax). */
function argmax(a) {
  let best = 0;
  for (let j = 1; j < a.length; j++) { if (a[j] > a[best]) { best = j; } }
  return best;
}

export {embeddingTable, embed, embedTokens, clearCaches, cache, kept, projectionWeights,
  attentionParameters, matmul, matmulT, softmaxRows,
  cosineSimilarity, repeated, unique, nested, stacked, sinusoidalEncoding, layerNorm, argmax, futureKeys};
