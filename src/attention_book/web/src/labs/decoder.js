// Chapter 10's lab computed in the reader's browser: the twin of
// attention_book/scenes/decoder.py (decoder_state). A llama-architecture decoder
// (SmolLM2-135M-Instruct, or the reader's own GGUF) writes after the reader's prompt; the
// step t shows what each head looked at to write token t: one head's map, all the model's
// heads' rows (the model view) or each layer's guess (the logit lens); the query heads that
// share the chosen head's key/value head; the next token's top probabilities; heads switched
// off while it writes.
//
// Where the states come from (a run: decoder/gallery.js's shape):
//   - decoder-gallery.js (web_export.export_decoder_gallery, pageData): the suggested
//     prompts' generations as the package computed them, every map and lens, so the lab's
//     first view needs no model (equal to Python's state within 1e-5);
//   - the model, once the reader loads it (decoder/runs.js: the GGUF beside the site, or one
//     from the file picker; decoder/ui.js: the buttons), in a Web Worker: each generation
//     once, shown as it is written (state() answers at once with what is there; each step
//     redraws), within the engine's parity bounds of Python's (logits 1e-3, attention 1e-4).
// state(values) never waits: a state the model has not computed yet says so in its notes.
//
// Row-major: a head's map (T, T) as a Float64Array; the model view's rows (L, h, T) float32.
import {nested} from "../shared/matrices.js";
import {pyRepr, wholeNumber} from "../shared/messages.js";
import {gallery, runKey, samplingOf} from "./decoder/gallery.js";
import {figure} from "./decoder/figure.js";
import {alt, readoutHtml} from "./decoder/text.js";
import {cachedRun, loadModel, model, requestLens, settled, shape, startRun} from "./decoder/runs.js";
import {mountExtra} from "./decoder/ui.js";

/** The views and the heads-off switches, as scenes.decoder's DECODER_VIEWS and OFF. */
export const VIEWS = ["head", "model", "lens"];
export const OFF = ["none", "head", "group", "layer", "induction"];
/** Python's str.strip() whitespace (not JavaScript's trim: \x1c-\x1f and \x85 are, \ufeff is not). */
// eslint-disable-next-line no-control-regex -- Python counts the separators \x1c-\x1f as space
const BLANK = /^[\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/;

const oneOf = (name, value, allowed) => {
  if (!allowed.includes(value)) { throw new Error(`${name} must be one of ${pyRepr(allowed)}, got ${pyRepr(value)}`); }
};

/** The heads switched off (scenes.decoder._off_heads), with a note where they are unknown. */
function offHeads(off, layer, head, m, notes) {
  const per = m.h / m.g, kv = Math.floor(head / per);
  if (off === "head") { return [[layer, head]]; }
  if (off === "group") { return Array.from({length: per}, (_, i) => [layer, kv * per + i]); }
  if (off === "layer") { return Array.from({length: m.h}, (_, i) => [layer, i]); }
  if (off === "induction") {
    if (model.status !== "ready" || model.isGallery) { return gallery().data.induction; }
    notes.push({level: "info", text: "the induction heads were measured for SmolLM2-135M (chapter 10's survey), " +
      "not for this model: none is switched off"});
  }
  return [];
}

/** A state with no tokens (no prompt, or none computed yet), as Python's empty state. */
function emptyState(base, notes) {
  return Object.assign(base, {tokens: [], ids: [], n_prompt: 0, generated: "", n_written: 0, t: 0, query: 0,
    weights: new Float64Array(0), row: new Float64Array(0), rows: new Float64Array(0),
    groupRows: new Float64Array(0), nextIds: [], nextTokens: [], nextP: [], chosen: -1, lensTokens: [],
    lensP: [], notes, T: 0});
}

/** Why a state has no run yet (the model is not loaded, or is loading). */
function waiting(notes) {
  const size = (gallery().data.model.bytes / 1e6).toFixed(1);
  notes.push({level: "info", text: model.status === "loading" ? "the model is loading: this prompt runs once it is in"
    : model.status === "failed" ? "the model could not be loaded (see above): the suggested prompts are shown"
      : `this prompt is not one of the book's suggestions: load the model (${size} MB) to run it in your browser`});
}

/** The run that answers `request`: the gallery's, one the page computed, or one started now;
 *  null when none can be (no model). Notes say what is missing. */
function findRun(request, nNew, notes) {
  const g = gallery(), preset = model.status !== "ready" || model.isGallery ? g.runs.get(request.key) : null;
  if (preset && (preset.ended || preset.n >= nNew)) { return preset; }
  if (model.status === "ready") { return cachedRun(request.key) || startRun(request, g.data.max_new); }
  if (preset) {
    notes.push({level: "info", text: `the book's numbers for this prompt stop at ${preset.n} tokens: load the model ` +
      "to write more"});
  } else {
    waiting(notes);
  }
  return preset;
}

/** scenes.decoder.decoder_state: the state, from what the gallery or the page's model holds. */
function state(values) {
  const g = gallery(), m = shape();
  wholeNumber(values.seed, "seed", 0);
  const layer = wholeNumber(values.layer, "layer", 0, m.n_layers - 1);
  const head = wholeNumber(values.head, "head", 0, m.h - 1);
  const nNew = wholeNumber(values.n_new, "n_new", 1, g.data.max_new);
  let t = wholeNumber(values.t, "t", 1, g.data.max_new);
  oneOf("decoding", values.decoding, ["greedy", "sampled"]);
  oneOf("view", values.view, VIEWS);
  oneOf("off", values.off, OFF);
  const notes = [], prompt = typeof values.prompt === "string" ? values.prompt : "", chat = !!values.chat;
  const per = m.h / m.g, kv = Math.floor(head / per);
  const st = {prompt, chat, layer, head, n_layers: m.n_layers, h: m.h, g: m.g, view: values.view,
    decoding: values.decoding, kvHead: kv,
    group: Array.from({length: per}, (_, i) => kv * per + i), off: offHeads(values.off, layer, head, m, notes)};
  if (BLANK.test(prompt)) {
    return emptyState(st, [{level: "error", text: "Type a prompt for the model to continue."}, ...notes]);
  }
  const sampling = samplingOf(values.decoding, values.temperature, values.top_k, values.top_p, values.seed);
  const request = {key: runKey(prompt, chat, sampling, st.off), prompt, chat, sampling, off: st.off,
    maxTokens: g.data.max_lab_tokens, topK: g.data.top_k};
  const run = findRun(request, nNew, notes);
  if (run && run.error) { return emptyState(st, [run.error, ...notes]); }
  if (!run || run.n === 0) {
    if (run) {
      notes.push({level: "info", text: run.done ? "stopped before the first token"
        : `the model is reading the prompt${run.nPrompt ? ` (${run.nPrompt} tokens)` : ""}…`});
    }
    return emptyState(st, notes);
  }
  const n = Math.min(run.n, nNew), complete = run.ended || run.n >= nNew || run.done;
  if (!complete) {
    notes.push({level: "info", text: `writing: ${run.n} of ${nNew} tokens so far\u2026`});
  } else if (n < nNew) {
    notes.push({level: "info", text: run.ended ? `the model ended its text after ${n} tokens`
      : run.source === "browser" ? `stopped after ${n} tokens` : ""});
  }
  if (t > n) {
    if (complete) { notes.push({level: "info", text: `step ${t} is past the last written token: showing step ${n}`}); }
    t = n;
  }
  return fromRun(Object.assign(st, {notes: notes.filter((x) => x.text)}), run, t, n);
}

/** The state at step t of a run with n tokens written (Python's fields, in its order). */
function fromRun(st, run, t, n) {
  const s0 = run.nPrompt, q = s0 + t - 2, size = q + 1;
  Object.assign(st, {tokens: run.pieces.slice(0, q + 2), ids: run.ids.slice(0, q + 2), n_prompt: s0,
    generated: run.generated[n - 1], n_written: n, t, query: q});
  st.weights = new Float64Array(st.view === "head" ? size * size : 0);
  if (st.view === "head") { for (let i = 0; i < size; i++) { st.weights.set(run.row(st.layer, st.head, i), i * size); } }
  st.row = run.row(st.layer, st.head, q);
  st.rows = new Float64Array(0);
  if (st.view === "model") {
    st.rows = new Float32Array(st.n_layers * st.h * size);
    for (let l = 0; l < st.n_layers; l++) {
      for (let h = 0; h < st.h; h++) { st.rows.set(run.row(l, h, q), (l * st.h + h) * size); }
    }
  }
  st.groupRows = new Float64Array(st.group.length * size);
  st.group.forEach((h, k) => { st.groupRows.set(run.row(st.layer, h, q), k * size); });
  const next = run.next[t - 1];
  Object.assign(st, {nextIds: next.ids.slice(), nextTokens: next.tokens.slice(), nextP: next.p.slice(),
    chosen: run.ids[s0 + t - 1], lensTokens: [], lensP: []});
  if (st.view === "lens") {
    const lens = run.lens[t - 1];
    if (lens && lens.tokens) {
      st.lensTokens = lens.tokens.slice();
      st.lensP = lens.p.slice();
    } else if (lens && lens.error) {
      st.notes.push({level: "error", text: lens.error});
    } else {
      st.notes.push({level: "info", text: "computing the logit lens of this step\u2026"});
      requestLens(run, t - 1);
    }
  }
  st.T = st.tokens.length;
  return st;
}

/** The numbers a reader downloads: what the picture shows, with the settings. */
function numbers(st) {
  const size = st.T ? st.query + 1 : 0;
  const heads = [];
  if (st.view === "model" && size) {
    for (let l = 0; l < st.n_layers; l++) {
      for (let h = 0; h < st.h; h++) {
        const at = (l * st.h + h) * size;
        heads.push({layer: l, head: h, row: Array.from(st.rows.subarray(at, at + size))});
      }
    }
  }
  return {lab: "decoder", prompt: st.prompt, chat: st.chat, tokens: st.tokens, ids: st.ids, n_prompt: st.n_prompt,
    generated: st.generated, t: st.t, query: st.query, chosen: st.chosen, layer: st.layer, head: st.head,
    view: st.view, weights: st.view === "head" ? nested(st.weights, size, size) : [Array.from(st.row)],
    kv_head: st.kvHead, group: st.group, group_rows: nested(st.groupRows, st.group.length, size),
    heads, off: st.off,
    next: st.nextIds.map((id, i) => ({id, token: st.nextTokens[i], p: st.nextP[i]})),
    lens: st.lensTokens.map((token, layer) => ({after_blocks: layer, token, p: st.lensP[layer]}))};
}

/** The choices that follow other controls, as the scene's options_for: t up to n_new. */
function choices(name, values) {
  return name === "t" ? Array.from({length: values.n_new}, (_, i) => [String(i + 1), i + 1]) : null;
}

export default {
  // the gallery the page loads before this lab; the model file it loads on request
  // (build.mjs writes them into labs.json; attention_book.web_export writes them)
  pageData: ["decoder-gallery.js"], requestData: ["SmolLM2-135M-Instruct.Q4_1.gguf"],
  VIEWS, OFF, state, readoutHtml, alt, numbers, figure, choices, mountExtra,
  // the model in the page: its status (model), loading one (a URL, a File, its bytes), and
  // a Promise of the moment nothing is under way (the tests and benchmarks)
  model, loadModel, settled,
};
