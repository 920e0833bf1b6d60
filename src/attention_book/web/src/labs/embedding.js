// Chapter 1's lab computed in the reader's browser: the twin of
// attention_book/scenes/embedding.py's embedding_state (the readout and alt text are written
// here only, for both). The reader's own sentence is tokenised by tokens.js exactly as attention_book.tokens does
// (unknown words -> <unk>), the table is default_rng(seed).standard_normal((V, d)) drawn by
// rng.js bit for bit, X = table[ids] and the cosine similarity of its rows.
// tests/test_web_twins.py checks it against Python (tests/test_web_states.py, slow: 1e-12).
//
// X:(s, d) and similarity:(s, s) row-major in Float64Arrays.
import vocab from "../shared/vocab.js";
import {format} from "../format.js";
import {escapeHtml, noTokensAlt, wrapReadout} from "../shared/html.js";
import {cosineSimilarity, embed, embeddingTable, nested, repeated, unique} from "../shared/matrices.js";
import {positiveInt} from "../shared/messages.js";
import {MAX_WIDGET_TOKENS, encode, isKnown, readTokens} from "../shared/tokens.js";

const UNK = vocab.unkToken;

const X_COLOR_LIMITS = [-3, 3];           // X's colour scale

/** embedding_state(text, d, seed): tokens, ids, X and its similarity, with notes. Bad text
 *  never throws (s = 0 and an error note); a bad d throws as Python does. */
function state(values) {
  const text = values.text, d = values.d, seed = values.seed === undefined ? 0 : values.seed;
  const maxTokens = values.maxTokens === undefined ? MAX_WIDGET_TOKENS : values.maxTokens;
  positiveInt(d, "d");
  const table = embeddingTable(d, seed);  // (V, d)
  const read = readTokens(text, maxTokens), tokens = read.tokens, notes = read.notes;
  const ids = encode(tokens), known = tokens.map(isKnown);
  const unknown = unique(tokens.filter((t, i) => { return !known[i]; }));
  const unk = UNK + " (id " + vocab.unkId + ")";
  if (unknown.length <= 3) {
    unknown.forEach((w) => {
      notes.push({level: "info", text: "'" + w + "' is not in the vocabulary: it maps to " + unk});
    });
  } else {
    notes.push({level: "info", text: unknown.length + " words are not in the vocabulary: " +
      unknown.map((w) => { return "'" + w + "'"; }).join(", ") + "; each maps to " + unk});
  }
  if (unknown.length > 1) {
    notes.push({level: "info", text: "every unknown word shares the one embedding of " + UNK +
                                     ", so their rows of X are identical (similarity 1)"});
  }
  const rep = repeated(tokens);
  if (rep.length) {
    const counts = rep.map((w) => {
      return "'" + w + "' (" + tokens.filter((t) => { return t === w; }).length + " times)";
    });
    notes.push({level: "info", text: "repeated tokens: " + counts.join(", ") + "; a repeated " +
                                     "token has identical rows of X, so their cosine similarity is 1"});
  }
  const s = tokens.length, X = embed(ids, table, d);  // (V, d)[s] -> (s, d)
  return {
    text: typeof text === "string" ? text : "", d, seed, s, tokens,
    ids, known, totalTokens: read.total, X,
    similarity: cosineSimilarity(X, s, d),  // (s, s)
    notes,
  };
}

function shapeLine(st) { return "X : (s, d) = (" + st.s + ", " + st.d + ")" + (st.s ? "" : ": no tokens"); }

/** The readout as HTML (every reader-typed text escaped). */
function readoutHtml(st) {
  const chips = st.tokens.map((token, i) => {
    let label = escapeHtml(token) + " &rarr; " + st.ids[i];
    if (!st.known[i]) { label += " <i>(" + escapeHtml(UNK) + ", unknown)</i>"; }
    return '<span class="ab-token' + (st.known[i] ? "" : " ab-token-unknown") + '">' + label + "</span>";
  });
  const shapes = shapeLine(st) + (st.s ? ";  similarity : (s, s) = (" + st.s + ", " + st.s + ")" : "");
  return wrapReadout('<div class="ab-tokens"><b>tokens &rarr; ids:</b> ' +
    (chips.join("") || "<i>none</i>") + '</div><div class="ab-shape ab-mono">' +
    escapeHtml(shapes) + "</div>", st.notes);
}

/** The first pair (i, j), i != j, in reading order within 1e-9 of the largest similarity. */
function mostSimilarPair(st) {
  const s = st.s, S = st.similarity; let best = -Infinity, i, j;
  for (i = 0; i < s; i++) { for (j = 0; j < s; j++) { if (i !== j && S[i * s + j] > best) { best = S[i * s + j]; } } }
  for (i = 0; i < s; i++) {
    for (j = 0; j < s; j++) { if (i !== j && S[i * s + j] >= best - 1e-9) { return [i, j]; } }
  }
  return null;
}

/** The alt text: the figure in plain text (set it as text, never as HTML). */
function alt(st) {
  if (st.s === 0) { return noTokensAlt("Two empty heatmaps", st.notes, "there are no tokens to embed"); }
  let text = "First: a heatmap of X with " + st.s + " rows (tokens: " + st.tokens.join(", ") +
    ") and " + st.d + " columns (dimensions), values coloured from -3 (blue) through 0 (white) to 3 (red). Then the " +
    st.s + " by " + st.s + " cosine-similarity matrix of the rows, coloured from -1 to 1, " +
    "with 1 on the diagonal.";
  if (st.s > 1) {
    const p = mostSimilarPair(st), i = p[0], j = p[1];
    text += " The most similar pair of positions is " + i + " and " + j + " ('" + st.tokens[i] +
      "' and '" + st.tokens[j] + "', " + format.fixed(st.similarity[i * st.s + j], 2) + ").";
  }
  const rep = repeated(st.tokens);
  if (rep.length) {
    text += " Repeated tokens have identical rows and similarity 1: " +
      rep.map((t) => { return "'" + t + "'"; }).join(", ") + ".";
  }
  const unknown = unique(st.tokens.filter((t, k) => { return !st.known[k]; }));
  if (unknown.length) {
    text += " Unknown words mapped to <unk>: " + unknown.map((t) => { return "'" + t + "'"; }).join(", ") + ".";
  }
  return text;
}

/** The picture as panels for lab.js: X and its similarity. */
function figure(st) {
  return {
    columns: 2,
    panels: [
      // both signed: the diverging map, 0 white (a cosine of 0 is no similarity)
      {kind: "heatmap", title: "X : (s, d) = (" + st.s + ", " + st.d + ")", data: st.X,
        rows: st.s, cols: st.d, extent: [st.s, st.d], cmap: "RdBu_r", vmin: X_COLOR_LIMITS[0],
        vmax: X_COLOR_LIMITS[1], xlabel: "dimension j (column of X)",
        ylabel: "token (row i of X)", colorbar: "X[i, j]", rowLabels: st.tokens, fillRow: true},
      {kind: "heatmap", title: "cosine similarity : (s, s) = (" + st.s + ", " + st.s + ")",
        data: st.similarity, rows: st.s, cols: st.s, extent: [st.s, st.s], cmap: "RdBu_r",
        vmin: -1, vmax: 1, xlabel: "token j", ylabel: "token i",
        colorbar: "cosine similarity of rows i and j", rowLabels: st.tokens, colLabels: st.tokens,
        fillRow: true},
    ],
  };
}

/** The numbers the lab shows, for the reader to download as JSON: the tokens and the
 *  lab's main matrix X as "weights" (one row per token), and the similarity. */
function numbers(st) {
  return {lab: "embedding", text: st.text, d: st.d, seed: st.seed, tokens: st.tokens, ids: st.ids,
    known: st.known, weights: nested(st.X, st.s, st.d), X: nested(st.X, st.s, st.d),
    similarity: nested(st.similarity, st.s, st.s)};
}

export default {
  state, readoutHtml, alt, figure, numbers,
};
