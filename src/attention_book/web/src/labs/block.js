// Chapter 7's block lab computed in the reader's browser: the twin of
// attention_book/scenes/block.py's block_state (readout and alt text: this module's), at every
// control's full live range: any sentence (32 tokens kept), post-LN or pre-LN, residuals on
// or off, depth 1..12, any seed the package takes (the slider offers 0..20), a causal mask
// or none. X = chapter 1's embeddings (d = 8, seed 0) + sinusoidal positional encoding.
//
// The blocks are block.encoder_stack(12, 8, 2, seed): layer i is EncoderBlock.from_seed with
// seed 1000 * seed + i, drawn by rng.js as numpy draws them:
//   - attention, MultiHeadAttention.from_seed(8, 2, seed_i, bias=True), one default_rng(seed_i):
//     W_q, W_k, W_v, W_o : (d, d), then b_q, b_k, b_v, b_o : (d,), all N(0, 1/d);
//   - feed-forward, _random_ffn, one default_rng([seed_i, 1]): W_1 : (d, d_ff) ~ N(0, 1/d),
//     W_2 : (d_ff, d) ~ N(0, 1/d_ff), b_1 : (d_ff,) and b_2 : (d,) ~ N(0, 0.1^2);
//   - both LayerNorms fresh (gamma = 1, beta = 0), eps = 1e-5; ReLU.
// The weights do not depend on post-LN or pre-LN, so one draw per seed serves both (cached,
// as Python's lru_cache), and a run computes both settings' norms (cached too): moving
// depth, residual or LayerNorm draws nothing.
// tests/test_web_block.py checks it against Python within 1e-5 on held-out values.
//
// Row-major Float64Arrays: X and output (s, d), weights (L, s, s), norms (2 L + 1,).
import vocab from "../shared/vocab.js";
import {format} from "../format.js";
import {escapeHtml, noTokensAlt, positionsHtml, tracerHtml, wrapReadout} from "../shared/html.js";
import {attentionParameters, cache, embedTokens, futureKeys, kept, layerNorm, matmul, matmulT, nested, sinusoidalEncoding, softmaxRows, stacked} from "../shared/matrices.js";
import {pyRepr, wholeNumber} from "../shared/messages.js";
import {asKnown, MAX_WIDGET_TOKENS, readTokens} from "../shared/tokens.js";
import {defaultRng} from "../shared/rng.js";

const BLOCK_D = 8, BLOCK_H = 2, D_K = BLOCK_D / BLOCK_H, D_FF = 4 * BLOCK_D;  // scenes.block
const MAX_DEPTH = 12;
const MAX_SEED = 999999;  // block.encoder_stack's limit
const EPS = 1e-5;         // LayerNorm's eps (EncoderBlock's default)
const SQRT_D = Math.sqrt(BLOCK_D);
const RUNNING_SENTENCE = vocab.runningSentence;
const BLOCK_SENTENCES = [RUNNING_SENTENCE, "the dog saw the cat",
  "in the morning the sun was warm, so we went to the river"];
// scenes.block.LN_LABELS, by norm_first
const LN_LABELS = {false: "post-LN (the paper, BERT)", true: "pre-LN (GPT-2)"};
// the picture's norm axis, its ticks and the two settings' colours (lighter twins for dark mode)
const NORM_LIMITS = [0.25, 64.0];
const NORM_TICKS = [0.25, 1.0, 4.0, 16.0, 64.0];
const LN_COLORS = {false: "#00204c", true: "#c9a227"};
const LN_DARK = {false: "#8fb3e8", true: "#e8c547"};
// the legend's names: LN_LABELS shortened, as a panel is a third of the figure's width
const LN_SHORT = {false: "post-LN (BERT)", true: "pre-LN (GPT-2)"};
// one block: 12 d^2 + 13 d learned numbers (attention 4 d^2 + 4 d, FFN 8 d^2 + 5 d, norms 4 d)
const N_PARAMETERS = 12 * BLOCK_D * BLOCK_D + 13 * BLOCK_D;

// ------------------------------------------------------------------ Python's checks

/** block._flag: only True or False. */
function flag(value, name) {
  if (typeof value !== "boolean") { throw new Error(name + " must be True or False, got " + pyRepr(value)); }
  return value;
}

/** Python's bool(value) (an empty list or string is False). */
function truthy(value) {
  if (Array.isArray(value)) { return value.length > 0; }
  return !!value;
}

// ------------------------------------------------------------------ the random blocks

const stacks = cache();  // seed -> MAX_DEPTH blocks (scenes.block._stack's lru_cache)
let drawn = 0;              // blocks drawn so far (the tests check that the cache works)

/** EncoderBlock.from_seed(8, 2, seed=seed_i, bias=True)'s parameters. */
function drawBlock(seed_i) {
  drawn++;
  const {W, b} = attentionParameters(defaultRng(seed_i), BLOCK_D);
  const f = defaultRng([seed_i, 1]);  // _random_ffn: a stream apart from the attention's
  const W_1 = f.normal(0.0, 1.0 / Math.sqrt(BLOCK_D), BLOCK_D * D_FF);  // (d, d_ff)
  const W_2 = f.normal(0.0, 1.0 / Math.sqrt(D_FF), D_FF * BLOCK_D);     // (d_ff, d)
  const b_1 = f.normal(0.0, 0.1, D_FF);                                  // (d_ff,)
  const b_2 = f.normal(0.0, 0.1, BLOCK_D);                               // (d,)
  return {W_q: W[0], W_k: W[1], W_v: W[2], W_o: W[3], b_q: b[0], b_k: b[1], b_v: b[2], b_o: b[3],
    W_1, b_1, W_2, b_2};
}

/** encoder_stack(MAX_DEPTH, 8, 2, seed): layer i from seed 1000 * seed + i; a shallower
 *  stack is the start of this one. Drawn once per seed (the last 64 kept). */
function stack(seed) {
  return kept(stacks, seed, () => {
    return Array.from({length: MAX_DEPTH}, (_, i) => { return drawBlock(1000 * seed + i); });
  });
}

// ------------------------------------------------------------------ one block's pieces

/** X:(s, k) @ W:(k, m) + b:(m,) -> (s, m). */
function affine(X, W, b, s, k, m) {
  const Y = matmul(X, W, s, k, m);  // (s, k) @ (k, m) -> (s, m)
  for (let r = 0; r < s; r++) { for (let j = 0; j < m; j++) { Y[r * m + j] += b[j]; } }
  return Y;
}

/** MultiHeadAttention(x, mask): the output (s, d), and the weights averaged over the
 *  h heads (s, s), added into wMean (the layer's slice of the state's weights). */
function attention(B, x, s, causal, wMean) {
  const d = BLOCK_D;
  const Q = affine(x, B.W_q, B.b_q, s, d, d);  // (s, d) @ (d, d) + (d,) -> (s, d)
  const K = affine(x, B.W_k, B.b_k, s, d, d);
  const V = affine(x, B.W_v, B.b_v, s, d, d);
  const merged = new Float64Array(s * d), scale = 1.0 / Math.sqrt(D_K);
  const q = new Float64Array(s * D_K), k = new Float64Array(s * D_K), v = new Float64Array(s * D_K);
  const heads = [];
  for (let hd = 0; hd < BLOCK_H; hd++) {
    let r, c;
    for (r = 0; r < s; r++) {  // head hd: columns hd*d_k .. (hd+1)*d_k: (s, d) -> (s, d_k)
      for (c = 0; c < D_K; c++) {
        q[r * D_K + c] = Q[r * d + hd * D_K + c];
        k[r * D_K + c] = K[r * d + hd * D_K + c];
        v[r * D_K + c] = V[r * d + hd * D_K + c];
      }
    }
    const scores = matmulT(q, k, s, D_K, s, scale);  // (s, d_k) @ (d_k, s) -> (s, s)
    if (causal) {  // key j > query i may not be attended to: -inf before the softmax
      for (r = 0; r < s; r++) { for (c = r + 1; c < s; c++) { scores[r * s + c] = -Infinity; } }
    }
    const w = softmaxRows(scores, s, s);
    heads.push(w);
    const H = matmul(w, v, s, s, D_K);  // (s, s) @ (s, d_k) -> (s, d_k)
    for (r = 0; r < s; r++) { merged.set(H.subarray(r * D_K, (r + 1) * D_K), r * d + hd * D_K); }
  }
  for (let e = 0; e < s * s; e++) {  // (h, s, s) -> (s, s): the heads' mean
    let sum = 0;
    for (let hd = 0; hd < BLOCK_H; hd++) { sum += heads[hd][e]; }
    wMean[e] = sum / BLOCK_H;
  }
  return affine(merged, B.W_o, B.b_o, s, d, d);  // concat(H) @ W_o + b_o: (s, d)
}

/** The position-wise network relu(x W_1 + b_1) W_2 + b_2: (s, d) -> (s, d). */
function ffn(B, x, s) {
  const hidden = affine(x, B.W_1, B.b_1, s, BLOCK_D, D_FF);  // (s, d) @ (d, d_ff) -> (s, d_ff)
  for (let i = 0; i < hidden.length; i++) { if (hidden[i] < 0) { hidden[i] = 0; } }
  return affine(hidden, B.W_2, B.b_2, s, D_FF, BLOCK_D);  // (s, d_ff) @ (d_ff, d) -> (s, d)
}

function add(a, b) {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) { out[i] = a[i] + b[i]; }
  return out;
}

/** One EncoderBlock (block._run with its two sub-layers): {mid: the stream after the
 *  attention sub-layer (post-LN: h1; pre-LN: x + attention), out: the block's output}. */
function runBlock(B, x, s, normFirst, residual, causal, wMean) {
  const d = BLOCK_D;
  let y = attention(B, normFirst ? layerNorm(x, s, d, EPS) : x, s, causal, wMean);
  x = residual ? add(x, y) : y;
  if (!normFirst) { x = layerNorm(x, s, d, EPS); }
  const mid = x;
  y = ffn(B, normFirst ? layerNorm(x, s, d, EPS) : x, s);
  x = residual ? add(x, y) : y;
  if (!normFirst) { x = layerNorm(x, s, d, EPS); }
  return {mid, out: x};
}

/** block.stream_norms of one point: the mean over tokens of each row's length. */
function meanNorm(x, s, d) {
  let total = 0;
  for (let r = 0; r < s; r++) {
    let sq = 0;
    for (let j = 0; j < d; j++) { sq += x[r * d + j] * x[r * d + j]; }
    total += Math.sqrt(sq);
  }
  return total / s;
}

/** EncoderBlock.trace's (name, shape) of one block on s tokens (block._run's names). */
function blockTrace(s, normFirst, residual) {
  const d = BLOCK_D, out = [["x", [s, d]]]; let stream = "x";
  const steps = ["attention", "FFN out"];
  for (let i = 1; i <= 2; i++) {
    const name = steps[i - 1], last = i === 2;
    if (normFirst) { out.push(["LN" + i + "(" + stream + ")", [s, d]]); }
    if (name === "FFN out") { out.push(["FFN hidden (d_ff)", [s, D_FF]]); }
    out.push([name, [s, d]]);
    const summed = residual ? stream + " + " + name : name;
    if (normFirst) {
      stream = summed;
      if (residual && !last) { out.push([stream, [s, d]]); }
    } else {
      if (residual) { out.push([summed, [s, d]]); }
      stream = "h" + i;
      if (!last) { out.push(["h" + i + " = LN" + i + "(" + summed + ")", [s, d]]); }
    }
  }
  out.push(["output", [s, d]]);
  return out;
}

const runs = cache();  // scenes.block._run's lru_cache: one run computes both LN settings

/** scenes.block._run: X:(s, d), and per LN setting (false: post-LN, true: pre-LN) the
 *  norms (2 L + 1,), the head-averaged weights (L, s, s) and the output (s, d). */
function run(tokens, seed, depth, residual, causal) {
  return kept(runs, JSON.stringify([tokens, seed, depth, residual, causal]), () => {
    const s = tokens.length, d = BLOCK_D;
    const X = embedTokens(tokens, d, 0), pe = sinusoidalEncoding(s, d);  // (s, d) each
    for (let k = 0; k < X.length; k++) { X[k] += pe[k]; }
    const blocks = stack(seed), result = {X, norms: {}, weights: {}, output: {}};
    [false, true].forEach((nf) => {
      const norms = new Float64Array(2 * depth + 1), weights = new Float64Array(depth * s * s);
      let x = X;
      norms[0] = meanNorm(x, s, d);
      for (let l = 0; l < depth; l++) {
        const r = runBlock(blocks[l], x, s, nf, residual, causal,
          weights.subarray(l * s * s, (l + 1) * s * s));
        norms[2 * l + 1] = meanNorm(r.mid, s, d);
        norms[2 * l + 2] = meanNorm(r.out, s, d);
        x = r.out;
      }
      result.norms[nf] = norms;
      result.weights[nf] = weights;
      result.output[nf] = x;
    });
    return result;
  });
}

// ------------------------------------------------------------------ the state

/** block_state: sentence -> X:(s, d) -> a stack of `depth` random encoder blocks.
 *  values: text, norm_first, residual, depth, seed, causal (each optional: the scene's
 *  defaults). Throws Python's message for a depth or seed out of range. */
function state(values) {
  const text = values.text === undefined ? RUNNING_SENTENCE : values.text;
  const normFirst = values.norm_first === undefined ? false : values.norm_first;
  const residual = values.residual === undefined ? true : truthy(values.residual);
  const causal = values.causal === undefined ? false : truthy(values.causal);
  const depth = wholeNumber(values.depth === undefined ? 6 : values.depth, "depth", 1, MAX_DEPTH);
  const seed = wholeNumber(values.seed === undefined ? 0 : values.seed, "seed", 0);
  const maxTokens = values.maxTokens === undefined ? MAX_WIDGET_TOKENS : values.maxTokens;
  const read = readTokens(text, maxTokens), notes = read.notes, tokens = asKnown(read.tokens, notes);
  wholeNumber(seed, "seed", 0, MAX_SEED);  // encoder_stack's range, checked as Python does
  flag(normFirst, "norm_first");           // EncoderBlock's check
  const s = tokens.length, d = BLOCK_D; let X, norms, weights, output, trace;
  if (s) {
    const r = run(tokens, seed, depth, residual, causal);
    X = r.X;
    norms = r.norms;
    weights = r.weights[normFirst];
    output = r.output[normFirst];
    trace = blockTrace(s, normFirst, residual);
  } else {
    X = new Float64Array(0);
    output = new Float64Array(0);
    weights = new Float64Array(0);
    trace = [];
    norms = {false: new Float64Array(0), true: new Float64Array(0)};
  }
  if (s && !residual) {
    notes.push({level: "info", text: "residual connections are off: each sub-layer's output " +
                "replaces the stream instead of being added to it"});
  }
  if (s && normFirst && residual) {
    const n = norms[true];
    notes.push({level: "info", text: "pre-LN: the stream's norm grew from " + format.fixed(n[0], 2) +
                " to " + format.fixed(n[n.length - 1], 2) + " over " + depth + " block(s); post-LN " +
                "holds it at \u221ad = " + format.fixed(SQRT_D, 2) + " after every sub-layer"});
  }
  return {
    text: typeof text === "string" ? text : "", tokens, s, normFirst,
    residual, causal, depth, seed, d, h: BLOCK_H, d_ff: D_FF,
    X, normsPost: norms[false], normsPre: norms[true], weights, output,
    trace, n_parameters: N_PARAMETERS, notes,
  };
}

function chosenNorms(st) { return st.normFirst ? st.normsPre : st.normsPost; }

/** The readout as HTML (every text escaped). */
function readoutHtml(st) {
  const d = st.d, L = st.depth, n = st.n_parameters;
  const stackText = L + " block(s), " + LN_LABELS[st.normFirst] + ", residuals " +
    (st.residual ? "on" : "off") + ", " + (st.causal ? "causal mask" : "no mask") + "; d=" + d +
    ", h=" + st.h + ", d<sub>ff</sub>=" + st.d_ff + ", seed=" + st.seed;
  const params = "one block: 12 d\u00b2 + 13 d = 12\u00b7" + d * d + " + 13\u00b7" + d + " = " +
    format.grouped(n) + " (attention " + (4 * d * d + 4 * d) + ", feed-forward " + (8 * d * d + 5 * d) +
    ", two LayerNorms " + 4 * d + "); " + L + " block(s): " + format.grouped(n * L);
  const chosen = chosenNorms(st), after = [];
  for (let i = 0; i < chosen.length; i += 2) { after.push(format.fixed(chosen[i], 2)); }
  return wrapReadout(
    positionsHtml(st.tokens) + "<div><b>stack:</b> " + stackText + "</div>" +
    tracerHtml("<b>shape tracer, layer 1</b> (every block maps (s, d) = (" + st.s + ", " + d +
               ") to (" + st.s + ", " + d + "))", st.trace, "",
    "<tr><td><i>no tokens: s = 0</i></td></tr>") +
    '<div class="ab-small"><b>parameters:</b> ' + escapeHtml(params) + "</div>" +
    '<div class="ab-small"><b>mean \u2016token\u2016 after each block:</b> ' +
    escapeHtml(after.join(" \u2192 ") || "none") + "</div>", st.notes);
}

/** The most-attended key of each layer: the mean over queries of (L, s, s) -> (L, s),
 *  then the first key within 1e-9 of the largest (numpy's argmax up to rounding). */
function peaks(st) {
  const s = st.s, out = [];
  for (let l = 0; l < st.depth; l++) {
    const means = new Float64Array(s); let best = -Infinity, at = 0, j;
    for (j = 0; j < s; j++) {
      for (let i = 0; i < s; i++) { means[j] += st.weights[(l * s + i) * s + j]; }
      means[j] /= s;
      best = Math.max(best, means[j]);
    }
    while (means[at] < best - 1e-9) { at++; }
    out.push(at);
  }
  return out;
}

/** The alt text (plain text). */
function alt(st) {
  if (st.s === 0) { return noTokensAlt("Empty panels", st.notes); }
  const post = st.normsPost, pre = st.normsPre; let largest = -Infinity;
  for (let i = 0; i < pre.length; i++) { largest = Math.max(largest, pre[i]); }
  let text = "First: the mean norm of a token's vector in the residual stream after each of " +
    "the " + 2 * st.depth + " sub-layers of " + st.depth + " random block(s), residuals " +
    (st.residual ? "on" : "off") + ", on a log scale: post-LN goes from " + format.fixed(post[0], 2) +
    " to " + format.fixed(post[post.length - 1], 2) + " (sqrt(d) = " + format.fixed(SQRT_D, 2) +
    "), pre-LN from " + format.fixed(pre[0], 2) + " to " + format.fixed(pre[pre.length - 1], 2) +
    " (largest " + format.fixed(largest, 2) + "); " + LN_LABELS[st.normFirst] + " is highlighted. ";
  text += "Then " + st.depth + " heatmap(s) of " + st.s + " by " + st.s + " attention weights, " +
    "one per layer (mean over the " + st.h + " heads), for the tokens " + st.tokens.join(", ") +
    (st.causal ? ", zero above the diagonal (causal mask)" : "") + ". Most-attended key per layer: " +
    peaks(st).map((p, l) => { return "layer " + (l + 1) + " '" + st.tokens[p] + "'"; }).join("; ") +
    ".";
  return text;
}

/** The numbers a reader downloads: the weights drawn, (L, s, s) one (s, s) per layer
 *  (mean over heads, the chosen LN setting), one row per query; both settings' norms. */
function numbers(st) {
  const s = st.s, layers = stacked(st.weights, st.depth, s, s);
  return {lab: "block", norm_first: st.normFirst, residual: st.residual, causal: st.causal,
    depth: st.depth, seed: st.seed, d: st.d, h: st.h, tokens: st.tokens, weights: layers,
    norms: {"post-LN": Array.from(st.normsPost), "pre-LN": Array.from(st.normsPre)},
    X: nested(st.X, s, st.d), output: nested(st.output, s, st.d)};
}

/** The picture as panels for lab.js: the residual stream's norm
 *  after every sub-layer, post-LN and pre-LN, the chosen one thick, sqrt(d) thin (x = 0 the
 *  input, 2l - 1 after block l's attention, 2l after its feed-forward network; log y);
 *  then one heatmap per layer of its weights averaged over the heads. Two fields go beyond
 *  lab.js's protocol today, harmless where it ignores them: the lines panel's `ylog` (a
 *  log y axis, as the matplotlib view's) and a line's `dashed` (sqrt(d), dashed there). */
function figure(st) {
  const L = st.depth, s = st.s, n = 2 * L + 1, xs = []; let i;
  for (i = 0; i < n; i++) { xs.push(i / 2); }  // in blocks: block l's attention at l - 1/2, its FFN at l
  const lines = [];
  if (s) {
    [false, true].forEach((nf) => {
      const chosen = nf === st.normFirst;
      lines.push({label: LN_SHORT[nf], color: LN_COLORS[nf], dark: LN_DARK[nf],
        width: chosen ? 2.4 : 1.0, y: Array.from(nf ? st.normsPre : st.normsPost)});
    });
  }
  const flat = [];
  for (i = 0; i < n; i++) { flat.push(SQRT_D); }
  lines.push({label: "\u221ad", color: "#595959", dark: "#a6a6a6", width: 1.0, dashed: true, y: flat});
  const panels = [{kind: "lines", title: "stream, L = " + L + ", residuals " + (st.residual ? "on" : "off"),
    xlabel: "after block l (\u00bd steps: attention)",
    ylabel: "mean \u2016token\u2016 (log scale)", n, xs, xstep: 2, ylim: NORM_LIMITS.slice(),
    ylog: true, yticks: NORM_TICKS.slice(), lines}];
  // the layers' maps at one size on one scale (layer 1 no bigger: it is not special), the
  // keys a causal mask hides in the masked style
  const masked = st.causal ? futureKeys(s) : undefined;
  const title = "each layer's weights, mean of " + st.h + " heads : (L, s, s) = (" + L + ", " + s + ", " + s + ")";
  const maps = Array.from({length: L}, (_, l) => ({title: "layer " + (l + 1),
    data: st.weights.subarray(l * s * s, (l + 1) * s * s)}));
  panels.push({kind: "grid", title, rows: s, cols: s, cmap: "viridis", vmin: 0, vmax: 1, xlabel: "key j",
    ylabel: "query i", colorbar: "weight", rowLabels: st.tokens, colLabels: st.tokens, masked, columns: 4, least: 70, maps});
  return {columns: 2, panels};
}

export default {
  BLOCK_D, BLOCK_H, MAX_DEPTH, BLOCK_SENTENCES, LN_LABELS, stack,
  blocksDrawn () { return drawn; }, state, readoutHtml, alt, numbers, figure,
};
