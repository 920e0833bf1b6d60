// Chapter 3's sqrt(d_k) lab in the reader's browser: the twin of
// attention_book/scenes/attention.py's scaling_state, its readout and alt text. The lab
// shows one fixed experiment (scaling_curves: 16 keys, 300 queries, seed 0) at 10 values of
// d_k, scaled or not: 20 states and nothing the reader types, so its module looks them up in
// scaling/table.js, which make_scaling_table.py writes from Python (float64, equal to
// Python's). Measured in the page instead, the first visit to d_k = 512 drew 3.8 million
// normals and held the page 0.2-0.8 s (QA Q4); a change is now a lookup.
// tests/test_web_states.py checks the table against Python.
import {format} from "../format.js";
import {wrapReadout} from "../shared/html.js";
import TABLE from "./scaling/table.js";

const SCALING_DKS = TABLE.d_k;        // scenes.attention.SCALING_DKS
const SCALING_KEYS = TABLE.keys;      // s_k
const SCALING_QUERIES = TABLE.queries;  // n; the variance takes 4 n pairs

/** scaling_state(d_k, scaled): the measurements at d_k. Throws as Python does. */
function state(values) {
  const d_k = values.d_k, scaled = values.scaled;
  if (SCALING_DKS.indexOf(d_k) < 0) {
    throw new Error("d_k must be one of (" + SCALING_DKS.join(", ") + "), got " + d_k);
  }
  if (typeof scaled !== "boolean") { throw new Error("scaled must be True or False, got " + scaled); }
  const m = TABLE[scaled], k = SCALING_DKS.indexOf(d_k);
  return {d_k, scaled, variance: m.variance[k], maxWeight: m.max_weight[k], entropy: m.entropy[k],
    gradNorm: m.grad_norm[k], weights: Float64Array.from(m.weights[k]), s_k: SCALING_KEYS};
}

/** scaling_curves()[(quantity, scaled)] over SCALING_DKS, for the figure. */
function curves(scaled) {
  const out = {};
  ["variance", "max_weight", "entropy", "grad_norm"].forEach((k) => { out[k] = Float64Array.from(TABLE[scaled][k]); });
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
    " is circled. First: the variance of the score, which for unscaled q.k follows the " +
    "dashed line d_k and for the scaled score stays near 1; here " + format.general(st.variance, 3) +
    ". Second: the mean largest softmax weight, here " + format.fixed(st.maxWeight, 2) +
    ". Third: the mean entropy, here " + format.fixed(st.entropy, 2) + " nats. Fourth: " +
    "the mean gradient norm through the softmax, here " + format.fixed(st.gradNorm, 3) +
    ". Unscaled, the largest weight climbs towards 1 and entropy and gradient fall towards 0 " +
    "as d_k grows; scaled, all stay flat.";
}

/** The numbers the lab shows, for download: no tokens; the example row of weights, the
 *  four measurements at this d_k, and every curve the figure draws (in its "figure"). */
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
  SCALING_DKS, state, curves, readoutHtml, alt, numbers, figure,
};
