// Chapter 8's training explorer computed in the reader's browser: the twin of
// attention_book/scenes/training.py's training_state (readout, alt text: this module's),
// at every control's full live range: both tasks, all 26 checkpoints, any input the reader
// types (the same parsing, limits and messages as Python). The two trained tiny
// transformers come from training-checkpoints.js (written by
// attention_book.web_export.training_script), whose weights this module decodes once per
// checkpoint and runs with its own forward pass (pre-LN blocks, as training.NumpyModel).
// tests/test_web_training.py checks it against Python's NumpyModel on the same decoded
// weights within 1e-5, and states how far those are from the float32 model.
// It reads the data (AttentionBook.trainingData, or useData(data) in Node).
//
// Row-major: activations (s, d) and weights (n_heads, s, s) as Float64Arrays; the decoded
// weights as Float32Arrays in torch's layout, W:(out, in).
import {format} from "../format.js";
import {escapeHtml, wrapReadout} from "../shared/html.js";
import {argmax, cache, futureKeys, layerNorm, softmaxRows, stacked, unique} from "../shared/matrices.js";
import {pyRepr, wholeNumber} from "../shared/messages.js";
import {codePoints, isSpace} from "../shared/tokens.js";

const root = globalThis;

const TASKS = ["reverse", "induction"];  // scenes.training.TRAINING_TASKS
const CAUSAL = ["induction"];  // training.TASKS[task].causal: future keys in the masked style
const MEANING = {"anti-diagonal": "weight on key 7 \u2212 i", "induction": "key after the earlier copy",
  "previous-token": "key i \u2212 1, first period"};
const INT64_MIN = -(BigInt(2) ** BigInt(63)), INT64_MAX = BigInt(2) ** BigInt(63) - BigInt(1);

let given = null;  // data handed to useData (Node); else AttentionBook.trainingData
const decoded = cache();  // task -> [checkpoint c -> {name: Float32Array}], filled in order

/** Use these checkpoints (training_data's object) instead of AttentionBook.trainingData. */
function useData(checkpoints) { given = checkpoints; decoded.clear(); }

function data() {
  const d = given || (root.AttentionBook && root.AttentionBook.trainingData);
  if (!d) { throw new Error("the trained models are not loaded (training-checkpoints.js)"); }
  return d;
}

// ------------------------------------------------------------------ decoding

function bytes(b64) {
  const text = atob(b64), out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) { out[i] = text.charCodeAt(i); }
  return out;
}

/** Little-endian float32 numbers of base64 text (every browser and Node here is LE). */
function floats(b64) { const b = bytes(b64); return new Float32Array(b.buffer, 0, b.length >> 2); }

/** One matrix at checkpoint c: w = base + q * r in float32, as web_export decodes it. */
function decodeMatrix(t, base, group) {
  const n = t.shape[0] * t.shape[1], packed = bytes(t.q), r = floats(t.scale);
  const bits = t.bits, mask = (1 << bits) - 1, level = (1 << (bits - 1)) - 1;
  const w = new Float32Array(n);
  for (let k = 0; k < n; k++) {
    const p = k * bits, at = p >> 3;
    // a level spans at most two bytes (bits <= 8); past the end reads 0
    const u = ((packed[at] | ((packed[at + 1] || 0) << 8)) >> (p & 7)) & mask;
    const step = Math.fround((u - level) * r[(k / group) | 0]);  // float32 q * r
    w[k] = (base ? base[k] : 0) + step;  // the Float32Array rounds the sum as numpy does
  }
  return w;
}

/** The task's weights at checkpoint c (each change is on the previous checkpoint: decode
 *  them in order, once, and keep them). */
function weightsAt(task, c) {
  const spec = data().tasks[task], group = data().group;
  let chain = decoded.get(task);
  if (chain === undefined) { chain = []; decoded.set(task, chain); }
  for (let k = chain.length; k <= c; k++) {
    const entry = spec.checkpoints[k], now = {};
    for (const name in entry) {
      const t = entry[name];
      now[name] = t.f32 !== undefined ? floats(t.f32) : decodeMatrix(t, t.delta ? chain[k - 1][name] : null, group);
    }
    chain.push(now);
  }
  return chain[c];
}

// ------------------------------------------------------------------ the forward pass

/** x:(s, n_in) @ W^T with W:(n_out, n_in) (torch's layout) + b -> (s, n_out). */
function linear(x, W, b, s, nIn, nOut) {
  const y = new Float64Array(s * nOut);
  for (let i = 0; i < s; i++) {
    for (let o = 0; o < nOut; o++) {
      const wo = o * nIn, xi = i * nIn;
      let sum = b[o];
      for (let t = 0; t < nIn; t++) { sum += x[xi + t] * W[wo + t]; }
      y[i * nOut + o] = sum;
    }
  }
  return y;
}

/** NumpyModel.forward on valid tokens (s,): logits (s, V) and maps (L h, s, s). */
function forward(task, c, tokens) {
  const cfg = data().tasks[task].config, W = weightsAt(task, c);
  const s = tokens.length, d = cfg.d, h = cfg.n_heads, dk = d / h, V = cfg.vocab, eps = cfg.eps;
  const x = new Float64Array(s * d);
  let i, j, t;
  for (i = 0; i < s; i++) {  // E[tokens] + P[:s]: (s, d)
    for (j = 0; j < d; j++) { x[i * d + j] = W["embed.weight"][tokens[i] * d + j] + W["position.weight"][i * d + j]; }
  }
  const maps = new Float64Array(cfg.n_layers * h * s * s), scale = 1 / Math.sqrt(dk);
  for (let l = 0; l < cfg.n_layers; l++) {
    const p = "layers." + l + ".";
    const a = layerNorm(x, s, d, eps, W[p + "norm1.weight"], W[p + "norm1.bias"]);
    // q, k, v side by side: (s, d) @ (d, 3d) -> (s, 3d)
    const qkv = linear(a, W[p + "self_attn.in_proj_weight"], W[p + "self_attn.in_proj_bias"], s, d, 3 * d);
    const z = new Float64Array(s * d);  // the heads' outputs, concatenated: (s, h d_k)
    for (let hh = 0; hh < h; hh++) {
      const w = maps.subarray((l * h + hh) * s * s, (l * h + hh + 1) * s * s), off = hh * dk;
      for (i = 0; i < s; i++) {  // scores q_i . k_j / sqrt(d_k): (s, d_k) @ (d_k, s) -> (s, s)
        for (j = 0; j < s; j++) {
          if (cfg.causal && j > i) { w[i * s + j] = -Infinity; continue; }
          let sum = 0;
          for (t = 0; t < dk; t++) { sum += qkv[i * 3 * d + off + t] * qkv[j * 3 * d + d + off + t]; }
          w[i * s + j] = sum * scale;
        }
      }
      softmaxRows(w, s, s);
      for (i = 0; i < s; i++) {  // z = weights v: (s, s) @ (s, d_k) -> (s, d_k)
        for (j = 0; j < s; j++) {
          const wij = w[i * s + j];
          if (wij === 0) { continue; }
          for (t = 0; t < dk; t++) { z[i * d + off + t] += wij * qkv[j * 3 * d + 2 * d + off + t]; }
        }
      }
    }
    const out = linear(z, W[p + "self_attn.out_proj.weight"], W[p + "self_attn.out_proj.bias"], s, d, d);
    for (t = 0; t < x.length; t++) { x[t] += out[t]; }
    const a2 = layerNorm(x, s, d, eps, W[p + "norm2.weight"], W[p + "norm2.bias"]);
    const hidden = linear(a2, W[p + "linear1.weight"], W[p + "linear1.bias"], s, d, 4 * d);  // (s, 4d)
    for (t = 0; t < hidden.length; t++) { if (hidden[t] < 0) { hidden[t] = 0; } }  // relu
    const ffn = linear(hidden, W[p + "linear2.weight"], W[p + "linear2.bias"], s, 4 * d, d);  // (s, d)
    for (t = 0; t < x.length; t++) { x[t] += ffn[t]; }
  }
  const normed = layerNorm(x, s, d, eps, W["norm.weight"], W["norm.bias"]);
  return {logits: linear(normed, W["unembed.weight"], W["unembed.bias"], s, d, V), maps};  // (s, V)
}

// ------------------------------------------------------------------ reading the input

const DIGIT = /^\p{Nd}$/u;

/** The value 0..9 of a Unicode decimal digit: its place in its run of digits (runs of
 *  Nd start at a zero, in blocks of ten). */
function digitValue(c) {
  let k = 0;
  while (c - k - 1 >= 0 && DIGIT.test(String.fromCodePoint(c - k - 1))) { k++; }
  return k % 10;
}

/** A word of [+-]?\d+ (Python's Unicode \d) as a BigInt, or null. */
function symbol(word) {
  const cps = codePoints(word);
  let sign = 1, i = 0, text = "";
  if (cps[0] === 43 || cps[0] === 45) { sign = cps[0] === 45 ? -1 : 1; i = 1; }
  if (i >= cps.length) { return null; }
  for (; i < cps.length; i++) {
    if (!DIGIT.test(String.fromCodePoint(cps[i]))) { return null; }
    text += cps[i] < 128 ? String.fromCharCode(cps[i]) : String(digitValue(cps[i]));
  }
  const v = BigInt(text);
  return sign < 0 ? -v : v;
}

const EXAMPLE = "type whole numbers separated by spaces, e.g. 3 1 4 1 5 9 2 6";

/** scenes.training.read_symbols: {symbols: [BigInt], notes}; never throws. */
function readSymbols(text) {
  const words = [];
  if (typeof text === "string") {
    let word = [];
    codePoints(text.replace(/,/g, " ")).forEach((c) => {
      if (isSpace(c)) {
        if (word.length) { words.push(String.fromCodePoint.apply(null, word)); word = []; }
      } else { word.push(c); }
    });
    if (word.length) { words.push(String.fromCodePoint.apply(null, word)); }
  }
  if (!words.length) { return {symbols: [], notes: [{level: "error", text: "no symbols: " + EXAMPLE}]}; }
  const symbols = [];
  for (let k = 0; k < words.length; k++) {
    const v = symbol(words[k]);
    if (v === null) {
      return {symbols: [], notes: [{level: "error", text: pyRepr(words[k]) + " is not a symbol: " + EXAMPLE}]};
    }
    symbols.push(v);
  }
  return {symbols, notes: []};
}

/** training._check_tokens (and numpy's int64 overflow): the message, or null if valid. */
function tokenError(task, cfg, symbols) {
  const V = cfg.vocab, L = cfg.length, s = symbols.length;
  let lo = symbols[0], hi = symbols[0];
  symbols.forEach((v) => { if (v < lo) { lo = v; } if (v > hi) { hi = v; } });
  if (lo < INT64_MIN || hi > INT64_MAX) { return "symbols must be 0.." + (V - 1); }
  if (lo < BigInt(0) || hi >= BigInt(V)) {
    return "tokens must be symbols 0.." + (V - 1) + " (the " + task + " task's alphabet of " + V + "), got " +
      (lo < BigInt(0) ? lo : hi).toString();
  }
  if (task === "reverse" && s !== L) {
    return "the reversal model reads exactly " + L + " symbols (position i is answered from position " +
      (L - 1) + " - i), got " + s;
  }
  if (s > L) {
    return "the " + task + " model learned positions 0.." + (L - 1) + " only, so give at most " + L +
      " symbols, got " + s;
  }
  return null;
}

// ------------------------------------------------------------------ scores and outputs

/** training.correct_outputs: true/false per position, null where the input cannot tell. */
function correctOutputs(task, tokens, predicted) {
  const s = tokens.length;
  return tokens.map((_, i) => {
    if (task === "reverse") { return predicted[i] === tokens[s - 1 - i]; }
    const seen = tokens.slice(0, i).indexOf(tokens[i]) >= 0 && i + 1 < s;
    return seen ? predicted[i] === tokens[i + 1] : null;
  });
}

/** training.headline_scores: one score per head (null where no query counts). */
function headlineScores(task, maps, tokens) {
  const s = tokens.length;
  let i, j, sum;
  function at(head, q, k) { return maps[head * s * s + q * s + k]; }
  if (task === "reverse") {
    return [0, 1].map((head) => {  // heads.anti_diagonal_score: key s - 1 - i
      for (sum = 0, i = 0; i < s; i++) { sum += at(head, i, s - 1 - i); }
      return sum / s;
    });
  }
  let first = s;  // the first position whose symbol occurred before
  for (i = 0; i < s; i++) { if (tokens.slice(0, i).indexOf(tokens[i]) >= 0) { first = i; break; } }
  let previous = null;
  if (first > 1) {  // heads.previous_token_score of layer 0 over queries 1..first-1
    for (sum = 0, i = 1; i < first; i++) { sum += at(0, i, i - 1); }
    previous = sum / (first - 1);
  }
  let total = 0, n = 0;  // heads.induction_score of layer 1: keys j < i after a copy of t[i]
  for (i = 0; i < s; i++) {
    let value = 0, counts = false;
    for (j = 1; j < i; j++) { if (tokens[j - 1] === tokens[i]) { value += at(1, i, j); counts = true; } }
    if (counts) { total += value; n++; }
  }
  return [previous, n ? total / n : null];
}

// ------------------------------------------------------------------ the state

/** training_state: a task's model at a checkpoint on the reader's input. */
function state(values) {
  const task = values.task === undefined ? "reverse" : values.task;
  if (TASKS.indexOf(task) < 0) {
    throw new Error("task must be one of ['" + TASKS.join("', '") + "'], got " +
                    (typeof task === "string" ? pyRepr(task) : String(task)));
  }
  const spec = data().tasks[task], cfg = spec.config, n = spec.steps.length;
  const c = wholeNumber(values.checkpoint === undefined ? n - 1 : values.checkpoint,
    "checkpoint", 0, n - 1);
  const text = task === "reverse" ? values.reverse_input : values.induction_input;
  const read = readSymbols(text), notes = read.notes, predicted = [];
  const L = cfg.n_layers, h = cfg.n_heads;
  let tokens = [], maps = new Float64Array(0);
  if (read.symbols.length) {
    const error = tokenError(task, cfg, read.symbols);
    if (error !== null) {
      notes.push({level: "error", text: error});
    } else {
      tokens = read.symbols.map(Number);
      const run = forward(task, c, tokens), s = tokens.length, V = cfg.vocab;
      maps = run.maps;
      for (let i = 0; i < s; i++) { predicted.push(argmax(run.logits.subarray(i * V, (i + 1) * V))); }
    }
  }
  const right = correctOutputs(task, tokens, predicted);
  if (task === "induction" && tokens.length && right.every((r) => { return r === null; })) {
    notes.push({level: "info", text: "no symbol occurs twice: nothing to copy, so no output is predictable"});
  }
  const step = spec.steps[c], last = spec.steps[n - 1], heads = [];
  for (let l = 0; l < L; l++) { for (let j = 0; j < h; j++) { heads.push("layer " + l + ", head " + j); } }
  return {
    task, vocab: cfg.vocab, checkpoint: c, step, steps: last, tokens,
    s: tokens.length, heads, weights: maps, predicted, right,
    inputScores: tokens.length ? headlineScores(task, maps, tokens) : heads.map(() => { return null; }),
    loss: spec.loss, scoreSteps: spec.steps, scoreCurves: spec.score_curves, scoreNames: spec.score_names,
    lossNow: spec.loss[Math.min(step, spec.loss.length - 1)],
    accuracyNow: step === last ? spec.held_out : spec.accuracy[step], notes,
  };
}

function score(v) { return v === null ? "n/a" : format.fixed(v, 2); }

function curvesAt(st) { return st.scoreCurves.map((curve) => { return curve[st.checkpoint]; }); }

/** The readout as HTML. */
function readoutHtml(st) {
  const end = st.step === st.steps;
  const what = end ? "held-out accuracy (1000 sequences)" : "accuracy on step " + st.step + "\u2019s fresh batch";
  const loss = end ? "last training loss " + format.fixed(st.lossNow, 3) : "loss " + format.fixed(st.lossNow, 3);
  const parts = ["<div><b>step " + st.step + " of " + st.steps + "</b> (checkpoint " + st.checkpoint + "): " +
               loss + ", " + what + " " + format.fixed(st.accuracyNow, 3) + "</div>"];
  if (st.s) {
    const marks = st.predicted.map((p, i) => {
      const r = st.right[i];
      return p + (r === null ? "" : r ? "\u2713" : "\u2717");
    }).join(" ");
    const told = st.task === "reverse" ? "output (should be the input reversed)" :
      "predicted next symbol (\u2713/\u2717 at symbols seen before)";
    const counted = st.right.filter((r) => { return r !== null; }).length;
    const got = st.right.filter((r) => { return r === true; }).length;
    parts.push("<div>input <code>" + st.tokens.join(" ") + "</code><br>" + told + ": <code>" + escapeHtml(marks) +
               "</code> (" + got + " of " + counted + " right)</div>");
  }
  const rows = st.heads.map((head, i) => {
    const name = st.scoreNames[i];
    return "<tr><td>" + head + "</td><td>" + name + " (" + MEANING[name] + ")</td><td>" + score(st.inputScores[i]) +
      "</td><td>" + format.fixed(st.scoreCurves[i][st.checkpoint], 2) + "</td></tr>";
  }).join("");
  parts.push('<table class="ab-small"><tr><th>head</th><th>score</th>' +
             "<th>this input</th><th>held-out</th></tr>" + rows + "</table>");
  return wrapReadout(parts.join(""), st.notes);
}

/** The alt text (plain text). */
function alt(st) {
  let text = "Training of the " + st.task + " model, step " + st.step + " of " + st.steps + ". ";
  if (st.s) {
    text += "Two attention heatmaps for the input " + st.tokens.join(" ") + " (" + st.s + " by " + st.s +
      ", rows are queries): " + st.heads.map((head, i) => {
      return head + ", " + st.scoreNames[i] + " score " + score(st.inputScores[i]);
    }).join("; ") + ". ";
  } else {
    text += "No heatmaps: the input is not valid. ";
  }
  const names = unique(st.scoreNames).join(" and ");
  return text + "Right, the training loss falling from " + format.fixed(st.loss[0], 2) + " to " +
    format.fixed(st.loss[st.loss.length - 1], 3) + " over " + st.steps + " steps, and each head's held-out " + names +
    " score over training, with step " + st.step + " marked (loss " + format.fixed(st.lossNow, 3) + "; " +
    curvesAt(st).map((v) => { return format.fixed(v, 2); }).join(", ") + ").";
}

/** The numbers a reader downloads: the input, each head's map (one row per query), the
 *  outputs, and the checkpoint's place in training. */
function numbers(st) {
  const s = st.s;
  return {lab: "training", task: st.task, checkpoint: st.checkpoint, step: st.step, tokens: st.tokens,
    heads: st.heads, weights: stacked(st.weights, st.heads.length, s, s),
    predicted: st.predicted, right: st.right, input_scores: st.inputScores,
    loss: st.lossNow, accuracy: st.accuracyNow, held_out_scores: curvesAt(st)};
}

// plots.training: SCORE_COLORS (light) and lighter twins for dark mode
const COLORS = ["#31688e", "#b5651d", "#35b779", "#6a3d9a"], DARK = ["#6ea8d8", "#e09a5a", "#5fd39a", "#b48fd8"];

/** The picture as panels for lab.js: each head's map, the
 *  loss of every step with ln V (the loss axis is logarithmic in Python: yscale "log"),
 *  and each head's held-out score at the checkpoints, the current step marked. */
function figure(st) {
  const s = st.s, labels = st.tokens.map(String), chance = Math.log(st.vocab), n = st.loss.length;
  const masked = CAUSAL.includes(st.task) ? futureKeys(s) : undefined;  // hidden by the causal mask
  const maps = [{kind: "grid", title: "each head's weights on this input", rows: s, cols: s, cmap: "viridis",
    vmin: 0, vmax: 1, xlabel: "key j", ylabel: "query i", colorbar: "attention weight", rowLabels: labels,
    colLabels: labels, masked, columns: 2, least: 110, maps: st.heads.map((head, k) => ({
      title: head + ": " + st.scoreNames[k] + " " + (st.inputScores[k] === null ? "n/a" : format.fixed(st.inputScores[k], 2)),
      data: st.weights.subarray(k * s * s, (k + 1) * s * s)}))}];
  const lo = 0.5 * Math.min(...st.loss, chance), hi = 2.0 * Math.max(...st.loss, chance);
  const xs = st.loss.map((_, k) => { return k; }), flat = st.loss.map(() => { return chance; });
  return {
    columns: 2,  // the maps, then the curves side by side below them
    panels: maps.concat([
      {kind: "lines", title: "training loss", xlabel: "optimiser step", ylabel: "loss (cross-entropy)", n,
        xs, ylim: [lo, hi], yscale: "log", marker: Math.min(st.step, n - 1),
        lines: [{label: "training loss", color: COLORS[0], dark: DARK[0], width: 1.4, y: st.loss},
          {label: "uniform guess ln V = " + format.fixed(chance, 2), color: "#555555", dark: "#aaaaaa",
            width: 1.0, y: flat, dashed: true}]},
      {kind: "lines", title: "what each head does, at each checkpoint", xlabel: "optimiser step",
        ylabel: "head score (held-out)", n: st.scoreSteps.length, xs: st.scoreSteps, ylim: [-0.03, 1.03],
        yticks: [0, 0.5, 1], marker: st.checkpoint,
        lines: st.heads.map((head, k) => {
          return {label: head + ": " + st.scoreNames[k], color: COLORS[k % 4], dark: DARK[k % 4], width: 1.2,
            y: st.scoreCurves[k]};
        })},
    ]),
  };
}

export default {
  pageData: ["training-checkpoints.js"], TASKS, useData, data, weightsAt, linear, forward, pyRepr, readSymbols, tokenError, state,
  readoutHtml, alt, numbers, figure,
};
