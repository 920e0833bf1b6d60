// Chapter 8's generation lab computed in the reader's browser: the twin of
// attention_book/scenes/generation.py's generation_state; readout and alt text
// are this module's, at every control's full live range. The induction model's
// checkpoints come from training-checkpoints.js through training.js (weightsAt); this module
// decodes one token at a time with a key/value cache a layer, as training.CachedDecoder
// does: each new token's query attends to the cached keys of every token before it and to
// its own, and its row of weights is kept as the attention that chose the next token. A
// generation is kept per (prompt, checkpoint, n, temperature, seed): the step slider only
// picks rows. Sampling draws numpy's default_rng(seed).random() (rng.js), one a token.
// Its bundle reads training.js's module from AttentionBook.training (web/training.js loads
// first), and the data (AttentionBook.trainingData, or useData(data) in Node).
//
// Row-major: activations (d,) and the state's weights (n_heads, t, s_0 + t) as Float64Arrays.
import {format} from "../format.js";
import {escapeHtml, wrapReadout} from "../shared/html.js";
import {argmax, cache, layerNorm, softmaxRows, stacked} from "../shared/matrices.js";
import {pyRepr, wholeNumber} from "../shared/messages.js";
import {defaultRng} from "../shared/rng.js";
import training from "./training.js";

const LENGTH = 24, MAX_GENERATED = LENGTH - 1;  // scenes.generation
const TEMPERATURES = [0.0, 0.5, 1.0, 2.0];
const generations = cache();  // "checkpoint|prompt|n|T|seed" -> {generated, rows, probability}

function cfg() { return training.data().tasks.induction.config; }

/** x:(n_in,) @ W^T + b -> (n_out,): training.js's linear on one row. */
function linear(x, W, b, nIn, nOut) { return training.linear(x, W, b, 1, nIn, nOut); }

/** A CachedDecoder of checkpoint c: feed(token) -> {logits (V,), rows (L h) x (length,)}. */
function decoder(c) {
  const conf = cfg(), W = training.weightsAt("induction", c), d = conf.d, h = conf.n_heads, dk = d / h;
  const V = conf.vocab, eps = conf.eps, scale = 1 / Math.sqrt(dk), keys = [], values = []; let length = 0;
  for (let l = 0; l < conf.n_layers; l++) { keys.push([]); values.push([]); }
  return function feed(token) {
    const x = new Float64Array(d); let j, t; const rows = [];
    for (j = 0; j < d; j++) { x[j] = W["embed.weight"][token * d + j] + W["position.weight"][length * d + j]; }
    length++;
    for (let l = 0; l < conf.n_layers; l++) {
      const p = "layers." + l + ".";
      const a = layerNorm(x, 1, d, eps, W[p + "norm1.weight"], W[p + "norm1.bias"]);
      const qkv = linear(a, W[p + "self_attn.in_proj_weight"], W[p + "self_attn.in_proj_bias"], d, 3 * d);  // (3d,)
      keys[l].push(qkv.subarray(d, 2 * d));  // the cache: (length, d) each
      values[l].push(qkv.subarray(2 * d));
      const z = new Float64Array(d);
      for (let hh = 0; hh < h; hh++) {
        const off = hh * dk, w = new Float64Array(length);
        for (j = 0; j < length; j++) {  // q . k_j / sqrt(d_k) over every key so far
          let sum = 0;
          for (t = 0; t < dk; t++) { sum += qkv[off + t] * keys[l][j][off + t]; }
          w[j] = sum * scale;
        }
        softmaxRows(w, 1, length);
        for (j = 0; j < length; j++) {  // z = w v: (length,) @ (length, d_k) -> (d_k,)
          for (t = 0; t < dk; t++) { z[off + t] += w[j] * values[l][j][off + t]; }
        }
        rows.push(w);
      }
      const out = linear(z, W[p + "self_attn.out_proj.weight"], W[p + "self_attn.out_proj.bias"], d, d);
      for (t = 0; t < d; t++) { x[t] += out[t]; }
      const a2 = layerNorm(x, 1, d, eps, W[p + "norm2.weight"], W[p + "norm2.bias"]);
      const hidden = linear(a2, W[p + "linear1.weight"], W[p + "linear1.bias"], d, 4 * d);
      for (t = 0; t < hidden.length; t++) { if (hidden[t] < 0) { hidden[t] = 0; } }  // relu
      const ffn = linear(hidden, W[p + "linear2.weight"], W[p + "linear2.bias"], 4 * d, d);
      for (t = 0; t < d; t++) { x[t] += ffn[t]; }
    }
    const normed = layerNorm(x, 1, d, eps, W["norm.weight"], W["norm.bias"]);
    return {logits: linear(normed, W["unembed.weight"], W["unembed.bias"], d, V), rows};
  };
}

/** decoding.softmax_temperature of one row. */
function softmaxT(logits, T) {
  const p = Float64Array.from(logits, (v) => { return v / T; });
  softmaxRows(p, 1, p.length);
  return p;
}

/** decoding.generate around the cached decoder: greedy (T = 0) or sampled. */
function generate(c, prompt, n, T, seed) {
  const key = [c, prompt.join(" "), n, T, seed].join("|"); let hit = generations.get(key);
  if (hit) { return hit; }
  const feed = decoder(c), draw = T ? defaultRng(seed) : null; let out, k;
  for (k = 0; k < prompt.length; k++) { out = feed(prompt[k]); }
  const generated = [], rows = [], probability = [];
  for (k = 0; k < n; k++) {
    rows.push(out.rows);
    let token; const p = softmaxT(out.logits, T || 1);
    if (!T) {
      token = argmax(out.logits);
    } else {  // the inverse CDF: the first token whose cumulative probability exceeds u
      const u = draw.random(1)[0]; let cum = 0;
      for (token = 0; token < p.length; token++) { cum += p[token]; if (!(cum <= u)) { break; } }
      token = Math.min(token, p.length - 1);
    }
    generated.push(token);
    probability.push(p[token]);
    if (k + 1 < n) { out = feed(token); }
  }
  hit = {generated, rows, probability};
  generations.set(key, hit);
  return hit;
}

/** scenes.generation._targets: keys j < q whose previous token is the query's symbol. */
function inductionTargets(tokens, q) {
  const out = [];
  for (let j = 1; j < q; j++) { if (tokens[j - 1] === tokens[q]) { out.push(j); } }
  return out;
}

/** generation_state. */
function state(values) {
  const spec = training.data().tasks.induction, conf = spec.config, last = spec.steps.length - 1;
  const get = (name, dflt) => { return values[name] === undefined ? dflt : values[name]; };
  const c = wholeNumber(get("checkpoint", last), "checkpoint", 0, last);
  let n = wholeNumber(get("n", 7), "n", 1, MAX_GENERATED); const asked = n;
  let t = wholeNumber(get("t", 7), "t", 1, MAX_GENERATED); const tAsked = t;
  const seed = wholeNumber(get("seed", 0), "seed", 0, 20), T = get("temperature", 0.0);
  if (typeof T !== "number" || TEMPERATURES.indexOf(T) < 0) {
    throw new Error("temperature must be one of [0.0, 0.5, 1.0, 2.0], got " + pyRepr(T));
  }
  const heads = [];
  for (let l = 0; l < conf.n_layers; l++) { for (let j = 0; j < conf.n_heads; j++) { heads.push("layer " + l + ", head " + j); } }
  const read = training.readSymbols(get("prompt", "31 29 28 3 10 4 12 31 29")), notes = read.notes; let prompt = [];
  if (read.symbols.length) {
    const error = training.tokenError("induction", conf, read.symbols);
    if (error !== null) {
      notes.push({level: "error", text: error});
    } else if (read.symbols.length > MAX_GENERATED) {
      notes.push({level: "error", text: "a prompt has at most " + MAX_GENERATED + " symbols: the model has " +
                  LENGTH + " positions and one at least is for a generated token; got " + read.symbols.length});
    } else {
      prompt = read.symbols.map(Number);
    }
  }
  const s0 = prompt.length; let run = {generated: [], rows: [], probability: []};
  if (s0) {
    if (s0 + n > LENGTH) {
      const fit = LENGTH - s0;
      notes.push({level: "warning", text: fit + (fit === 1 ? " token fits" : " tokens fit") + " after a prompt of " + s0 + " (the model has " +
                  LENGTH + " positions): generating " + (LENGTH - s0) + ", not " + n});
      n = LENGTH - s0;
    }
    run = generate(c, prompt, n, T, seed);
    if (t > n) {
      notes.push({level: "info", text: "step " + t + " is past the last generated token: showing step " + n});
      t = n;
    }
  } else {
    t = 0;
  }
  const sequence = prompt.concat(run.generated), width = s0 + t, H = heads.length;
  const weights = new Float64Array(H * t * width);
  for (let k = 0; k < t; k++) {  // row k: the query at position s0 + k - 1, keys 0..s0 + k - 1
    for (let i = 0; i < H; i++) { weights.set(run.rows[k][i], (i * t + k) * width); }
  }
  const targets = run.generated.map((_, k) => { return inductionTargets(sequence, s0 + k - 1); });
  return {
    checkpoint: c, step: spec.steps[c], steps: spec.steps[last], temperature: T, seed, prompt,
    generated: run.generated, asked, t, t_asked: tAsked, tokens: sequence.slice(0, width), s: width, heads, weights,
    top: t ? run.rows[t - 1].map(argmax) : [], targets,
    expected: targets.map((keys) => { return keys.length ? sequence[keys[keys.length - 1]] : null; }),
    probability: run.probability, notes,
  };
}

function decoding(st) {
  return st.temperature ? "sampled at T = " + format.general(st.temperature) + ", seed " + st.seed : "greedy";
}

function marks(st) {
  return st.generated.map((g, k) => {
    const e = st.expected[k];
    return g + (e === null ? "" : g === e ? "\u2713" : "\u2717");
  }).join(" ");
}

function weightAt(st, i, k) { return st.weights[(i * st.t + st.t - 1) * st.s + k]; }

/** The readout as HTML. */
function readoutHtml(st) {
  const parts = ["<div><b>checkpoint " + st.checkpoint + "</b> (optimiser step " + st.step + " of " + st.steps + "), " +
               decoding(st) + "</div>"];
  if (st.t) {
    const s0 = st.prompt.length, t = st.t, q = s0 + t - 2, chosen = st.generated[t - 1];
    const keys = st.targets[t - 1], expected = st.expected[t - 1];
    const copy = keys.length ? "a copy of the pattern gives " + expected + " (" + (chosen === expected ? "\u2713" : "\u2717") + ")"
      : "symbol " + st.tokens[q] + " did not occur before: nothing to copy";
    parts.push("<div><b>generation step t = " + t + " of " + st.generated.length + "</b>: the query at position " + q +
               " (symbol " + st.tokens[q] + ") chose <b>" + chosen + "</b> with probability " +
               format.fixed(st.probability[t - 1], 2) + "; " + copy + ".</div>");
    const rows = st.heads.map((head, i) => {
      const k = st.top[i];
      return "<tr><td>" + head + "</td><td>key " + k + " (symbol " + st.tokens[k] + ")</td><td>" +
        format.fixed(weightAt(st, i, k), 2) + "</td><td>" + (keys.indexOf(k) >= 0 ? "yes" : "no") + "</td></tr>";
    }).join("");
    parts.push('<table class="ab-small"><tr><th>head</th><th>heaviest key</th>' +
               "<th>weight</th><th>after an earlier copy?</th></tr>" + rows + "</table>");
    const counted = st.expected.filter((e) => { return e !== null; }).length;
    const right = st.generated.filter((g, k) => { return st.expected[k] !== null && g === st.expected[k]; }).length;
    parts.push("<div>prompt <code>" + st.prompt.join(" ") + "</code><br>generated " +
               "(\u2713/\u2717 where a copy tells the token): <code>" + escapeHtml(marks(st)) + "</code> (" + right +
               " of " + counted + " right)</div>");
  }
  return wrapReadout(parts.join(""), st.notes);
}

/** The alt text (plain text). */
function alt(st) {
  let text = "Generation by the induction model at checkpoint " + st.checkpoint + " (optimiser step " + st.step +
    " of " + st.steps + "), " + decoding(st) + ". ";
  if (!st.t) {
    return text + "No heatmaps: the prompt is not valid. " + st.notes.map((n) => { return n.text; }).join(" ");
  }
  text += "Prompt " + st.prompt.join(" ") + "; generated so far " + st.generated.slice(0, st.t).join(" ") +
    ". One heatmap a head, rows the steps 1 to " + st.t + ", columns the " + st.s + " positions so far; each row is " +
    "the attention of the query that produced that step's token, over the keys before it, step " + st.t + " outlined: ";
  text += st.heads.map((head, i) => {
    const k = st.top[i];
    return head + " weighs key " + k + " (symbol " + st.tokens[k] + ") most, " + format.fixed(weightAt(st, i, k), 2);
  }).join("; ");
  return text + ". Below, a bar for each of the " + st.generated.length + " generated tokens: the probability it " +
    "was chosen with, " + format.fixed(st.probability[st.t - 1], 2) + " at step " + st.t + ".";
}

/** The numbers a reader downloads: the prompt, the generation, each step's rows. */
function numbers(st) {
  return {lab: "generation", checkpoint: st.checkpoint, step: st.step, temperature: st.temperature, seed: st.seed,
    prompt: st.prompt, generated: st.generated, t: st.t, tokens: st.tokens, heads: st.heads,
    weights: stacked(st.weights, st.heads.length, st.t, st.s),
    heaviest_key: st.top, probability: st.probability};
}

/** The heads' maps as a grid of equal maps on one scale: rows the generation steps 1..t
 *  (each labelled with the token it chose), columns the sequence so far; the keys a query
 *  could not see (its own new token and later) in the masked style of every lab, step t
 *  outlined, and each head's heaviest key at step t ringed. Below, a bar for each of the n
 *  generated tokens: the probability of the token chosen, the steps after t in a second
 *  colour. "Step" is the generation's; the checkpoint names its optimiser step. */
function figure(st) {
  if (!st.t) {
    return {columns: 1, panels: [{kind: "heatmap", title: "no generation", empty: "the prompt is not valid: see the notes",
      data: new Float64Array(0), rows: 0, cols: 0, extent: [0, 0], cmap: "viridis", vmin: 0, vmax: 1}]};
  }
  const t = st.t, s = st.s, s0 = st.prompt.length, labels = st.tokens.map(String);
  const masked = new Uint8Array(t * s);
  for (let k = 0; k < t; k++) { for (let j = s0 + k; j < s; j++) { masked[k * s + j] = 1; } }
  const rowLabels = st.generated.slice(0, t).map((g) => { return "\u2192 " + g; });
  const split = (before) => {  // the steps shown above, or the later ones
    return st.probability.map((p, k) => { return (k < t) === before ? p : 0; });
  };
  const bars = {kind: "bars", xlim: [0, 1], xlabel: "probability of the token chosen",
    labels: st.generated.map((g, k) => { return (k + 1) + ": \u2192 " + g; }),
    title: "checkpoint " + st.checkpoint + " (optimiser step " + st.step + "), " + decoding(st) +
      ": the probability of each token written",
    series: [{label: "generation steps 1.." + t, values: split(true), color: "#31688e", dark: "#6ea8d8"},
      {label: "later steps", values: split(false), color: "#b5651d", dark: "#e09a5a"}]};
  const grid = {kind: "grid", title: "generation step t = " + t + ": what each head looked at", rows: t, cols: s,
    cmap: "viridis", vmin: 0, vmax: 1, masked, outlineRow: t - 1, xlabel: "key (the sequence so far)",
    ylabel: "generation step: token chosen", colorbar: "attention weight", rowLabels, colLabels: labels,
    columns: 2, least: 110,
    maps: st.heads.map((head, i) => {
      const top = st.top[i];
      return {title: head + ": key " + top + " most (" + format.fixed(weightAt(st, i, top), 2) + ")",
        data: st.weights.subarray(i * t * s, (i + 1) * t * s), marks: [[t - 1, top]]};
    })};
  return {columns: 1, panels: [grid, bars]};
}

/** scenes.generation.room: how many tokens fit after the prompt (the most for one the model
 *  refuses). */
function room(prompt) {
  const read = training.readSymbols(prompt), conf = cfg();
  if (!read.symbols.length || read.symbols.length > MAX_GENERATED ||
      training.tokenError("induction", conf, read.symbols) !== null) { return MAX_GENERATED; }
  return LENGTH - read.symbols.length;
}

/** The choices that follow the prompt, as the scene's options_for: n up to the room left,
 *  t up to n. */
function choices(name, values) {
  const upTo = (k) => Array.from({length: k}, (_, i) => [String(i + 1), i + 1]);
  if (name === "n") { return upTo(room(values.prompt)); }
  if (name === "t") { return upTo(Math.min(values.n, room(values.prompt))); }
  return null;
}

/** Use these checkpoints (training_data's object) instead of AttentionBook.trainingData. */
function useData(d) { training.useData(d); generations.clear(); }

export default {
  useData, generate, state, readoutHtml, alt, numbers, figure, choices, room,
};
