// Chapter 3's sqrt(d_k) lab computed in the reader's browser: the twin of
// attention_book/scenes/attention.py's scaling_state (and of attention.scaling_curves with
// the lab's SCALING_KEYS = 16 keys, SCALING_QUERIES = 300 queries, seed 0), its readout and
// alt text. The lab has 20 states (10 d_k x scaled or not) of one fixed experiment, but
// its random numbers are many (3.8 million normals at d_k = 512, 7.7 million for every
// d_k), so each d_k is measured once, when first asked for, and kept: the first visit of
// d_k = 512 costs about 0.2 s of drawing, every later change a lookup. The figure's curves
// over every d_k come from a table of Python's (CURVES_TABLE).
// tests/test_web_twins.py and tests/test_web_states.py check it against Python.
import {format} from "../format.js";
import {wrapReadout} from "../shared/html.js";
import {cache, softmaxRows} from "../shared/matrices.js";
import {defaultRng} from "../shared/rng.js";

const SCALING_DKS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];  // scenes.attention.SCALING_DKS
const SCALING_KEYS = 16;      // s_k
const SCALING_QUERIES = 300;  // n; the variance takes 4 n pairs
const SEED = 0;

const measured = cache();  // d_k -> {false: stats, true: stats}

const CHUNK = 1 << 15;  // normals drawn between two pauses of a measurement in steps

/** `count` normals of generator `gen`, CHUNK at a time (the same stream as one draw),
 *  pausing (yield) between chunks; returns them. */
function* normals(gen, count) {
  const out = new Float64Array(count);
  for (let at = 0; at < count; at += CHUNK) {
    out.set(gen.standardNormal(Math.min(CHUNK, count - at)), at);
    if (at + CHUNK < count) { yield; }
  }
  return out;
}

/** softmax_saturation(d_k, scaled) for both scalings (they share their samples) and
 *  dot_product_variance(d_k, 4 n), all with seed 0: measured at once. */
function measure(d_k) {
  const got = measured.get(d_k);
  if (got !== undefined) { return got; }
  const steps = measureSteps(d_k); let step;
  do { step = steps.next(); } while (!step.done);
  return step.value;
}

/** measure(d_k) in steps of CHUNK normals, each its own task: a Promise of it. The page
 *  stays responsive (one step is about 10 ms; the whole of d_k = 64 took a task of 0.14 s,
 *  of every d_k 0.6-0.9 s). */
function measureSoon(d_k) {
  const steps = measureSteps(d_k);
  return new Promise((resolve) => {
    (function next() {
      const step = steps.next();
      if (step.done) { resolve(step.value); } else { setTimeout(next, 0); }
    })();
  });
}

/** The steps of measure(d_k): a generator pausing between chunks of normals. */
function* measureSteps(d_k) {
  const n = SCALING_QUERIES, s_k = SCALING_KEYS, g0 = defaultRng(SEED);
  const q = yield* normals(g0, n * d_k);          // (n, 1, d_k)
  const K = yield* normals(g0, n * s_k * d_k);    // (n, s_k, d_k)
  const g = yield* normals(g0, n * s_k);          // (n, s_k)
  const dots = new Float64Array(n * s_k);        // (n, s_k): q_i . K_ij
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < s_k; j++) {
      let sum = 0; const kr = (i * s_k + j) * d_k, qr = i * d_k;
      for (let t = 0; t < d_k; t++) { sum += q[qr + t] * K[kr + t]; }
      dots[i * s_k + j] = sum;
    }
  }
  const got = {};
  [false, true].forEach((scaled) => {
    const scale = scaled ? 1.0 / Math.sqrt(d_k) : 1.0, w = new Float64Array(n * s_k);
    for (let k = 0; k < w.length; k++) { w[k] = dots[k] * scale; }
    softmaxRows(w, n, s_k);  // (n, s_k)
    let maxW = 0, ent = 0, gn = 0;
    for (let r = 0; r < n; r++) {
      const o = r * s_k; let mx = 0, h = 0, inner = 0, sq = 0, c;
      for (c = 0; c < s_k; c++) {
        const p = w[o + c];
        mx = Math.max(mx, p);
        h += p * Math.log(p > 0 ? p : 1.0);
        inner += p * g[o + c];
      }
      for (c = 0; c < s_k; c++) {  // softmax_backward: p * (g - p . g)
        const grad = w[o + c] * (g[o + c] - inner);
        sq += grad * grad;
      }
      maxW += mx; ent += -h; gn += Math.sqrt(sq);
    }
    const first = Array.from(w.subarray(0, s_k)).sort((a, b) => { return b - a; });
    got[scaled] = {max_weight: maxW / n, entropy: ent / n, grad_norm: gn / n,
      weights: Float64Array.from(first)};
  });
  // dot_product_variance(d_k, 4 n, seed 0): the sample variance (ddof 1) of q . k
  const m = 4 * n, g1 = defaultRng(SEED), qv = yield* normals(g1, m * d_k), kv = yield* normals(g1, m * d_k);
  const vals = new Float64Array(m); let mean = 0;
  for (let a = 0; a < m; a++) {
    let dsum = 0;
    for (let b = 0; b < d_k; b++) { dsum += qv[a * d_k + b] * kv[a * d_k + b]; }
    vals[a] = dsum; mean += dsum;
  }
  mean /= m;
  let ss = 0;
  for (let e = 0; e < m; e++) { ss += (vals[e] - mean) * (vals[e] - mean); }
  got[false].variance = ss / (m - 1);
  got[true].variance = got[false].variance / d_k;  // var(x / sqrt(d_k)) = var(x) / d_k
  measured.set(d_k, got);
  return got;
}

/** scaling_state(d_k, scaled): the measurements at d_k. Throws as Python does. With
 *  `{steps: true}` (the page's lab: lab.js's LocalModel) a d_k not measured yet is measured
 *  in steps, and the state is a Promise. */
function state(values, {steps = false} = {}) {
  const d_k = values.d_k, scaled = values.scaled;
  if (SCALING_DKS.indexOf(d_k) < 0) {
    throw new Error("d_k must be one of (" + SCALING_DKS.join(", ") + "), got " + d_k);
  }
  if (typeof scaled !== "boolean") { throw new Error("scaled must be True or False, got " + scaled); }
  function of(got) {
    const m = got[scaled];
    return {d_k, scaled, variance: m.variance, maxWeight: m.max_weight,
      entropy: m.entropy, gradNorm: m.grad_norm, weights: m.weights, s_k: SCALING_KEYS};
  }
  const got = measured.get(d_k);
  // in the page, a d_k not measured yet is measured in steps: a Promise of the state, which
  // the lab draws when it comes (lab.js), without blocking the page meanwhile; a direct
  // call (the parity tests) measures at once
  if (got === undefined && steps) { return measureSoon(d_k).then(of); }
  return of(got === undefined ? measure(d_k) : got);
}

// scaling_curves() over SCALING_DKS to 6 digits, for the figure: measuring every d_k here
// drew 7.7 million normals and blocked the page for 0.6-0.9 s when it loaded.
// tests/test_lab_legibility.py checks the table against Python's scaling_curves().
const CURVES_TABLE = {
  false: {variance: [0.96042, 1.93316, 3.77983, 7.95811, 15.4459, 32.2883, 61.9812, 127.646, 271.347, 483.988],
    max_weight: [0.206502, 0.298556, 0.424736, 0.572035, 0.69499, 0.775107, 0.844842, 0.87745, 0.91361, 0.955111],
    entropy: [2.4335, 2.16435, 1.7742, 1.27767, 0.872096, 0.605507, 0.414219, 0.30048, 0.216469, 0.10906],
    grad_norm: [0.263798, 0.293111, 0.287663, 0.291133, 0.226321, 0.176022, 0.149143, 0.117892, 0.0836987, 0.0502817]},
  true: {variance: [0.96042, 0.96658, 0.944958, 0.994763, 0.965369, 1.00901, 0.968457, 0.997232, 1.05995, 0.945289],
    max_weight: [0.206502, 0.224082, 0.23648, 0.247127, 0.248597, 0.256496, 0.249878, 0.247124, 0.235035, 0.247684],
    entropy: [2.4335, 2.39912, 2.38085, 2.3562, 2.35671, 2.33408, 2.35337, 2.35588, 2.37437, 2.36657],
    grad_norm: [0.263798, 0.280764, 0.277439, 0.28671, 0.281768, 0.272966, 0.282467, 0.288463, 0.276533, 0.285983]},
};

/** scaling_curves()[(quantity, scaled)] over SCALING_DKS, for the figure (from the table). */
function curves(scaled) {
  const out = {};
  Object.keys(CURVES_TABLE[scaled]).forEach((k) => { out[k] = Float64Array.from(CURVES_TABLE[scaled][k]); });
  return out;
}

/** The readout as HTML. */
function readoutHtml(st) {
  const mode = st.scaled ? "scaled: scores = q\u00b7k / \u221ad<sub>k</sub>" : "unscaled: scores = q\u00b7k";
  const row = Array.from(st.weights.subarray(0, 6)).map((w) => { return format.fixed(w, 2); }).join(", ");
  const lines = [
    "<b>" + mode + "</b>, d<sub>k</sub> = " + st.d_k,
    "variance of the scores: " + format.general(st.variance, 3) +
      " (q\u00b7k alone has variance \u2248 d<sub>k</sub> = " + st.d_k + ")",
    "mean over " + SCALING_QUERIES + " queries: largest weight " + format.fixed(st.maxWeight, 3) +
      " (uniform would be 1/" + st.s_k + " = " +
      format.fixed(1 / st.s_k, 3) + "); entropy " + format.fixed(st.entropy, 3) + " nats (max log " +
      st.s_k + " = " + format.fixed(Math.log(st.s_k), 3) + "); gradient norm " + format.fixed(st.gradNorm, 3),
    "an example row of " + st.s_k + " weights, largest first: " + row + ", \u2026",
  ];
  return wrapReadout(lines.join("<br>"), [], "ab-mono ab-small");
}

/** The alt text. */
function alt(st) {
  const mode = st.scaled ? "scaled by 1/sqrt(d_k)" : "unscaled";
  return "Four panels against d_k from 1 to 512 on log axes, each with an unscaled " +
    "(orange) and a scaled (blue) curve; the " + mode + " curve is bold and d_k = " + st.d_k +
    " is circled. Top left: the variance of the score, which for unscaled q.k follows the " +
    "dashed line d_k and for the scaled score stays near 1; here " + format.general(st.variance, 3) +
    ". Top right: the mean largest softmax weight, here " + format.fixed(st.maxWeight, 2) +
    ". Bottom left: the mean entropy, here " + format.fixed(st.entropy, 2) + " nats. Bottom right: " +
    "the mean gradient norm through the softmax, here " + format.fixed(st.gradNorm, 3) +
    ". Unscaled, the largest weight climbs towards 1 and entropy and gradient fall towards 0 " +
    "as d_k grows; scaled, all stay flat.";
}

/** The numbers the lab shows, for download: no tokens; the example row of weights and
 *  the four measurements at this d_k. */
function numbers(st) {
  return {lab: "scaling", d_k: st.d_k, scaled: st.scaled, tokens: [], weights: [Array.from(st.weights)],
    variance: st.variance, max_weight: st.maxWeight, entropy: st.entropy, grad_norm: st.gradNorm};
}

const CURVES = [  // the four panels: [measure, title, y label]
  ["variance", "variance of the score q\u00b7k", "variance"],
  ["max_weight", "largest softmax weight", "mean largest weight"],
  ["entropy", "entropy of the weights", "nats"],
  ["grad_norm", "gradient through the softmax", "mean norm"],
];

/** The picture as panels for lab.js: the four
 *  measurements against d_k on a log axis (one step a doubling), unscaled (orange) and
 *  scaled (blue), the chosen mode's curve bold and the chosen d_k marked. The variance is
 *  on a log axis too, with the dashed line d_k that the unscaled variance follows; the
 *  largest weight and the entropy have the uniform weights' value as a dashed line. */
function figure(st) {
  const un = curves(false), sc = curves(true), n = SCALING_DKS.length;
  function flat(v) { const a = []; for (let i = 0; i < n; i++) { a.push(v); } return a; }
  function reference(label, y) {
    return {label, color: "#555555", dark: "#bbbbbb", width: 1.0, dashed: true, y};
  }
  const extra = {
    variance: [reference("the line d_k", SCALING_DKS)],
    max_weight: [reference("uniform 1/" + SCALING_KEYS, flat(1 / SCALING_KEYS))],
    entropy: [reference("uniform: log " + SCALING_KEYS, flat(Math.log(SCALING_KEYS)))],
    grad_norm: [],
  };
  return {
    columns: 2,
    panels: CURVES.map((c) => {
      const lines = [
        {label: "unscaled", color: "#d55e00", dark: "#f0a060", width: st.scaled ? 1.0 : 2.4, y: un[c[0]]},
        {label: "scaled", color: "#0072b2", dark: "#56b4e9", width: st.scaled ? 2.4 : 1.0, y: sc[c[0]]},
      ].concat(extra[c[0]]);
      let lo = Infinity, hi = 0;
      lines.forEach((l) => {
        for (let i = 0; i < l.y.length; i++) { lo = Math.min(lo, l.y[i]); hi = Math.max(hi, l.y[i]); }
      });
      const panel = {kind: "lines", title: c[1], xlabel: "d_k (log scale)", ylabel: c[2],
        n, xs: SCALING_DKS, marker: SCALING_DKS.indexOf(st.d_k), lines};
      if (c[0] === "variance") {  // log axis: powers of 8 as ticks
        panel.ylog = true;
        panel.ylim = [lo / 1.5, hi * 1.5];
        panel.yticks = [1, 8, 64, 512].filter((v) => { return v >= lo / 1.5 && v <= hi * 1.5; });
      } else {
        panel.ylim = [0, hi * 1.1];
        panel.zero = true;
      }
      return panel;
    }),
  };
}

export default {
  SCALING_DKS, measure, state, curves,
  // the d_k measured so far (the page's load must measure only the default's)
  measuredDks () { return Array.from(measured.keys()); }, readoutHtml, alt, numbers,
  figure,
};
