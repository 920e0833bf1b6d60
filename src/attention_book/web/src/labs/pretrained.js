// Chapter 9's lab computed in the reader's browser: the twin of
// attention_book/scenes/pretrained.py (pretrained_state and its query's
// choices); the readout and alt text are this module's: one head of all-MiniLM-L6-v2 on a sentence.
//
// Two sources of maps:
//   - pretrained-gallery.js (web_export.export_pretrained_gallery, ~0.5 MB): the tokenizer,
//     the gallery's head scores and the preset sentences' 72 maps and value norms
//     ||f_h(x_j)|| as the package computes them (float32). A preset answers at once, in
//     both measures, equal to Python (tests/test_web_pretrained.py).
//   - minilm-weights.js (web_export.export_browser_weights, int8, 32.5 MB), loaded only when
//     the reader presses "Load the model" (mountExtra): then any sentence runs through
//     minilm.js's forward pass in a Web Worker built from a Blob URL (a file:// page cannot
//     start a worker from a URL), once per sentence; its 72 maps and value norms are kept
//     (LRU, 64 MB), so a change of layer, head, query, measure or view is a lookup. int8
//     maps are within 0.032 of Python's, the norm shares within 0.067.
// Two switches: the measure (weights, or ||alpha_ij f(x_j)|| with rows scaled to sum to 1)
// and the view (one head, or the model view: 72 thumbnails, a click opens one).
// Before the model is loaded, any other sentence shows its tokens and says how to load it.
//
// It needs pretrained-gallery.js (AttentionBook.pretrainedGallery) before state() is first
// called.
//
// Split by concern: pretrained/data.js (the gallery file, Python's text rules, head scores),
// pretrained/model.js (the model on request, in a worker; the model view's clicks), and
// this file (the state, readout, alt text, numbers and figure).
//
// Row-major: a head's weights (T, T) as a Float64Array (Python: float32 maps .astype(float64)).
import {format} from "../format.js";
import {escapeHtml, noTokensAlt, wrapReadout} from "../shared/html.js";
import {argmax, nested} from "../shared/matrices.js";
import {pyRepr, wholeNumber} from "../shared/messages.js";
import {tokenOptions} from "../shared/tokens.js";
import {HEADS, LAYERS, MEASURES, SCORE_LABELS, SCORE_NAMES, VIEWS, gallery, headScores, pairwiseSum,
  readPieces, shownMaps} from "./pretrained/data.js";
import {compute, engine, loadModel, lookup, modelStatus, mountExtra, pendingNote,
  startModel} from "./pretrained/model.js";

// ------------------------------------------------------------------ state

/** scenes.pretrained.pretrained_state. Returns the state, or a Promise of it when the
 *  model must run on a new sentence. Throws Error(message) for a bad layer, head or query. */
function state(values) {
  const g = gallery();
  const text = values.text === undefined ? g.data.running_sentence : values.text;
  const layer = wholeNumber(values.layer === undefined ? 0 : values.layer, "layer", 0, LAYERS - 1);
  const head = wholeNumber(values.head === undefined ? 2 : values.head, "head", 0, HEADS - 1);
  const query = wholeNumber(values.query === undefined ? 2 : values.query, "query", 0);
  const measure = values.measure === undefined ? "weight" : values.measure;
  const view = values.view === undefined ? "head" : values.view;
  [["measure", measure, MEASURES], ["view", view, VIEWS]].forEach((c) => {
    if (typeof c[1] !== "string" || !Object.prototype.hasOwnProperty.call(c[2], c[1])) {
      throw new Error(c[0] + " must be one of " + pyRepr(Object.keys(c[2])) + ", got " + pyRepr(c[1]));
    }
  });
  const read = readPieces(text, values.maxTokens);
  const galleryScores = {}, k = layer * HEADS + head;
  Object.keys(g.data.gallery.mean).forEach((name) => { galleryScores[name] = g.data.gallery.mean[name][k]; });
  const base = {text: typeof text === "string" ? text : "", layer, head, measure, view,
    tokens: read.tokens,
    totalTokens: read.total, gallery: galleryScores,
    gallerySentences: g.data.gallery.sentences, notes: read.notes.slice()};
  const T = read.tokens.length;
  if (!T) { return build(base, null, 0, "none"); }
  const preset = g.presets.get(read.used);
  if (preset) { return build(base, preset, query, "package"); }
  const entry = lookup(read.used);
  if (entry) { return build(base, entry, query, "browser"); }
  if (engine.status !== "ready") { return build(base, null, query, "pending"); }
  engine.busy.forEach((f) => { f(T); });
  return compute(read.used, read.ids).then((done) => {
    engine.busy.forEach((f) => { f(0); });
    return done ? build(base, done, query, "browser") : build(base, null, query, "pending");
  }, (err) => {
    engine.busy.forEach((f) => { f(0); });
    throw err;
  });
}

// the model view's 72 maps of each sentence computed (kept while its maps are: a WeakMap
// of the preset or cache entry), in each measure: a change of any control draws them again
// without computing them again (the same array, which the thumbnails panel recognises
// and does not paint again)
const thumbMemo = new WeakMap();

function thumbsOf(from, T, measure) {
  let memo = thumbMemo.get(from);
  if (!memo) { memo = {}; thumbMemo.set(from, memo); }
  if (!memo[measure]) { memo[measure] = shownMaps(from.maps, from.valueNorms, T, measure, true); }
  return memo[measure];
}

/** The state from the sentence's computed maps `from` ({maps (L, h, T, T), valueNorms
 *  (L, h, T)}), or without them ("none": no tokens; "pending": the model has not run on it). */
function build(st, from, query, source) {
  const T = st.tokens.length;
  st.T = T;
  st.source = source;
  st.query = T ? Math.min(query, T - 1) : 0;
  st.weights = new Float64Array(0);
  st.valueNorms = new Float64Array(0);
  st.norms = new Float64Array(0);
  st.shown = new Float64Array(0);
  st.thumbs = new Float64Array(0);
  st.differs = 0;
  st.scores = {};
  if (from) {
    const k = st.layer * HEADS + st.head, start = k * T * T;
    st.weights = Float64Array.from(from.maps.subarray(start, start + T * T));  // (T, T)
    st.scores = headScores(st.weights, T);
    st.valueNorms = Float64Array.from(from.valueNorms.subarray(k * T, (k + 1) * T));  // (T,)
    st.norms = new Float64Array(T * T);  // ||alpha_ij f(x_j)||, rows of weights summing to 1
    for (let i = 0; i < T; i++) {
      const sum = pairwiseSum(st.weights, i * T, T);
      for (let j = 0; j < T; j++) { st.norms[i * T + j] = st.weights[i * T + j] / sum * st.valueNorms[j]; }
      const rowW = st.weights.subarray(i * T, (i + 1) * T), rowN = st.norms.subarray(i * T, (i + 1) * T);
      if (argmax(rowW) !== argmax(rowN)) { st.differs += 1; }
    }
    st.shown = shownMaps(from.maps.subarray(start, start + T * T), st.valueNorms, T, st.measure);
    if (st.view === "model") { st.thumbs = thumbsOf(from, T, st.measure); }
    if (source === "browser" && engine.dtype && engine.dtype !== "float32") {
      st.notes.push({level: "info", text: "computed in your browser from the model's " + engine.dtype + " weights: " +
                                          "each weight within about 0.03 of the book's float32 model"});
    }
  } else if (source === "pending") {
    st.notes.push(pendingNote());
  }
  st.row = T && from ? st.weights.subarray(st.query * T, (st.query + 1) * T) : new Float64Array(0);
  st.shownRow = T && from ? st.shown.subarray(st.query * T, (st.query + 1) * T) : new Float64Array(0);
  return st;
}

function has(st) { return st.T > 0 && st.source !== "pending"; }

/** Indices of the k largest of row, largest first, as np.argsort(row)[::-1][:k]. */
function topKeys(row, k) {
  const idx = Array.from(row, (_, i) => { return i; });
  idx.sort((a, b) => { return row[a] - row[b] || a - b; });
  return idx.reverse().slice(0, k);
}

/** The readout as HTML. */
function readoutHtml(st) {
  const T = st.T;
  const parts = ["<b>layer " + st.layer + ", head " + st.head + "</b> of all-MiniLM-L6-v2: weights : (T, T) = (" +
               T + ", " + T + ")"];
  let columns = ["gallery (" + st.gallerySentences + " sentences)"];
  if (has(st)) {
    const who = escapeHtml(st.tokens[st.query]), q = st.query;
    const norms = st.norms.subarray(q * T, (q + 1) * T), total = pairwiseSum(norms, 0, T);
    const top = (row) => {
      return topKeys(row, 3).map((j) => { return j + " '" + escapeHtml(st.tokens[j]) + "' " + format.fixed(row[j], 2); }).join(", ");
    };
    parts.push("query " + q + " '" + who + "' attends most to: " + top(st.row));
    parts.push("by \u2016\u03b1 f(x)\u2016 (share of the row): " + top(norms.map((v) => { return v / total; })));
    parts.push(st.differs + " of " + T + " queries have another strongest key by \u2016\u03b1 f(x)\u2016 than by weight");
    columns = ["this sentence"].concat(columns, ["uniform head"]);
  } else if (T) {  // tokens, no maps yet
    parts.push("tokens: " + st.tokens.map((t, i) => { return i + ":" + escapeHtml(t); }).join(" "));
  }
  const rows = SCORE_NAMES.map((name) => {
    let values = [st.gallery[name]];
    if (has(st)) { values = [st.scores[name], values[0], name === "spread" ? 1.0 : 1 / T]; }
    return "<tr><td>" + escapeHtml(SCORE_LABELS[name]) + "</td>" +
      values.map((v) => { return "<td>" + format.fixed(v, 3) + "</td>"; }).join("") + "</tr>";
  });
  const table = '<table class="ab-small ab-scores"><tr>' +
    ["score"].concat(columns).map((c) => { return "<th>" + c + "</th>"; }).join("") + "</tr>" +
    rows.join("") + "</table>";
  return wrapReadout(parts.join("<br>") + table, st.notes, "ab-small");
}

/** The alt text: the panels in the order drawn. */
function alt(st) {
  const what = st.measure === "weight" ? "attention weights" : "shares of \u2016\u03b1 f(x)\u2016 (each row scaled to sum to 1)";
  const galleryText = "bars of the head's scores averaged over the gallery: " + SCORE_NAMES.map((n) => {
    return SCORE_LABELS[n] + " " + format.fixed(st.gallery[n], 2);
  }).join(", ") + ".";
  const model = st.view === "model";
  const grid = !model ? "" : has(st) ? "Panel 1: the model view, " + LAYERS * HEADS + " thumbnails of the " + what +
    " of every head (" + LAYERS + " rows of layers 0 to " + (LAYERS - 1) + ", " + HEADS + " columns of heads 0 to " +
    (HEADS - 1) + "), layer " + st.layer + ", head " + st.head + " outlined. "
    : "Panel 1: the model view's grid of " + LAYERS * HEADS + " heads (" + LAYERS + " layers by " + HEADS + " heads), empty. ";
  const first = model ? 2 : 1;
  if (!has(st)) {
    const empty = "Empty heatmap and arcs (" + (model ? "panels 2 and 3" : "panels 1 and 2") + ")";
    return grid + (st.T ? noTokensAlt(empty, st.notes, "the model has not run on this sentence yet")
                        : noTokensAlt(empty, st.notes)) + (model ? "" : " Panel 3: " + galleryText);
  }
  const row = st.shownRow, top = argmax(row), T = st.T;
  const out = grid + "Panel " + first + ": heatmap of the " + T + " by " + T + " " + what + " of layer " + st.layer +
    ", head " + st.head + ", tokens (" + st.tokens.slice(0, 20).join(", ") + (T > 20 ? ", ..." : "") +
    ") on both axes, colour 0 to 1, row " + st.query + " outlined. Panel " + (first + 1) + ": arcs from query " +
    st.query + " '" + st.tokens[st.query] + "' to every token; the heaviest goes to " + top + " '" + st.tokens[top] +
    "' with " + (st.measure === "weight" ? "weight" : "share") + " " + format.fixed(row[top], 2) + ".";
  if (model) { return out; }
  const mine = SCORE_NAMES.map((n) => { return SCORE_LABELS[n] + " " + format.fixed(st.scores[n], 2); }).join(", ");
  return out + " Panel 3: bars of the head's scores on this sentence (" + mine + ") beside its " + galleryText;
}

/** The numbers a reader downloads: the head's weights (one row per query) and scores. */
function numbers(st) {
  return {lab: "pretrained", model: "all-MiniLM-L6-v2", layer: st.layer, head: st.head, query: st.query,
    tokens: st.tokens, weights: has(st) ? nested(st.weights, st.T, st.T) : [],
    weighted_norms: has(st) ? nested(st.norms, st.T, st.T) : [],
    value_norms: Array.from(st.valueNorms),
    computed: st.source === "package" ? "the book's float32 model" :
            st.source === "browser" ? "in the browser (" + engine.dtype + " weights)" : "not yet",
    scores: st.scores, gallery: st.gallery};
}

/** The picture as panels. One head: its map (weights or norm shares) with the query's row
 *  outlined, arcs from the query, its scores here and on the gallery. All 72 heads (the
 *  model view): every head's map as a thumbnail, the chosen one outlined, then its map and
 *  arcs (a row of its own: `small` panels with smallColumns 1). */
function figure(st) {
  const T = has(st) ? st.T : 0, model = st.view === "model";
  const title = "layer " + st.layer + ", head " + st.head + (model ? " (opened)" : "");
  // a sentence the model has not run on: no map and no arcs, only what it waits for
  const waiting = engine.status === "ready" ? "computing this sentence\u2026"
    : "not computed yet: press \u201cLoad the model\u201d";
  const empty = st.T ? waiting : "(no tokens)";
  const q = st.query, token = st.tokens.length ? st.tokens[q] : "";
  const panels = [
    {kind: "heatmap", title, data: st.shown, rows: T, cols: T, extent: [T, T], cmap: "viridis",
      vmin: 0, vmax: 1, xlabel: "key j", ylabel: "query i", colorbar: MEASURES[st.measure][1],
      rowLabels: st.tokens.slice(0, T), colLabels: st.tokens.slice(0, T), outlineRow: T ? q : undefined,
      empty},
    {kind: "arcs", title: st.tokens.length ? "query " + q + " '" + token.slice(0, 16) + "' \u2192 every token" : "",
      tokens: st.tokens, query: q, weights: has(st) ? st.shownRow : null, empty},
  ];
  if (model) {
    panels.unshift({kind: "thumbs", small: true, title: "all " + LAYERS * HEADS + " heads, " + (st.measure === "weight" ? "weights" :
      "shares of \u2016\u03b1 f(x)\u2016") + ": layers down, heads across", rows: LAYERS, cols: HEADS, size: T,
    data: st.thumbs, cmap: "viridis", vmin: 0, vmax: 1, chosen: [st.layer, st.head], rowPrefix: "L",
    colPrefix: "H", empty});
    return {columns: 2, panels};  // the grid of thumbnails a row of its own (figure.js)
  }
  const series = [];
  if (has(st)) {
    series.push({label: "this sentence", color: "#1f5fa8", dark: "#6fa8e8",
      values: SCORE_NAMES.map((n) => { return st.scores[n]; })});
  }
  series.push({label: "gallery mean", color: "#9dbfe3", dark: "#3d5f85",
    values: SCORE_NAMES.map((n) => { return st.gallery[n]; })});
  panels.push({kind: "bars", title: "head scores of the weights (0 to 1)", labels: SCORE_NAMES.map((n) => {
    return SCORE_LABELS[n];
  }), series, xlim: [0, 1], xlabel: "score"});
  return {columns: 2, panels};
}

/** scenes.pretrained.pretrained_query_options: ("position: token", i) for the text's tokens. */
function choices(name, values) {
  if (name !== "query") { return null; }
  const tokens = readPieces(values.text === undefined ? gallery().data.running_sentence : values.text).tokens;
  return tokenOptions(tokens);
}

export default {
  // the data scripts the page loads before this lab, and the one it loads on the reader's
  // request (build.mjs writes them into labs.json; attention_book.web_export writes them)
  pageData: ["pretrained-gallery.js"], requestData: ["minilm-weights.js"],
  SCORE_NAMES, SCORE_LABELS, MEASURES, VIEWS, state, readoutHtml, alt, numbers, figure, choices,
  mountExtra, readPieces, headScores, pairwiseSum, pyRepr, loadModel, startModel,
  modelStatus, setWeightsUrl (url) { engine.url = url; },
};
