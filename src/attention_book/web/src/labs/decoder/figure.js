// Chapter 10's lab (labs/decoder.js): the picture of a state, as panels (figure.js draws
// them). One head: its map up to the query (queries down, keys across), the query's arcs to
// every earlier token, the rows of the query heads that share its key/value head, and the
// next token's top probabilities. All heads (the model view): every head's row at the query
// as a strip (layers down, heads across), then the chosen head's arcs and the next tokens.
// The logit lens: each layer's top guess for the next token, then the arcs and next tokens.

const quote = (token) => "'" + String(token).slice(0, 16) + "'";

/** The empty panels' words: why there is nothing to draw. */
export const why = (st) => (st.notes.some((n) => n.level === "error") ? "(no tokens)" : "not computed yet");

function nextBars(st) {
  const labels = st.nextTokens.map((tok, i) => (st.nextIds[i] === st.chosen ? "\u2192 " : "") + quote(tok));
  const how = st.decoding === "greedy" ? "the most probable" : "drawn";
  return {kind: "bars", title: st.T ? `step ${st.t} of ${st.n_written}: top ${st.nextP.length} next tokens ` +
    `(\u2192 written: ${how})`
    : "the next token's top probabilities", labels: labels.length ? labels : ["(none)"],
  series: [{label: "probability", color: "#1f5fa8", dark: "#6fa8e8", values: st.nextP.length ? st.nextP : [null]}],
  xlim: [0, 1], xlabel: "probability"};
}

function lensBars(st) {
  const labels = st.lensTokens.map((tok, l) => `${l}: ${quote(tok)}`);
  return {kind: "bars", title: st.T ? `logit lens at step ${st.t}: after each block, its top guess` : "logit lens",
    labels: labels.length ? labels : ["(not computed)"],
    series: [{label: "its probability", color: "#1f5fa8", dark: "#6fa8e8",
      values: st.lensP.length ? st.lensP : [null]}],
    xlim: [0, 1], xlabel: "probability of its top guess"};
}

/** The picture as panels. */
export function figure(st) {
  const T = st.T, q = st.query, size = T ? q + 1 : 0, empty = why(st);
  const keys = st.tokens.slice(0, size), token = T ? st.tokens[q] : "";
  const arcs = {kind: "arcs", title: T ? `layer ${st.layer}, head ${st.head}: query ${q} ${quote(token)} \u2192 every ` +
    `token (it chose ${quote(st.tokens[q + 1])})` : "", tokens: keys, query: q, weights: T ? st.row : null, empty};
  const panels = [];
  if (st.view === "model") {
    const per = st.h / st.g;
    panels.push({kind: "thumbs", small: true, title: `all ${st.n_layers * st.h} heads at step ${st.t}: each head's ` +
      `row from ${quote(token)} (layers down, heads across; heads ${per} by ${per} share a key/value head)`,
    rows: st.n_layers, cols: st.h, size, mapRows: 1, data: st.rows, cmap: "viridis", vmin: 0, vmax: 1,
    chosen: [st.layer, st.head], rowPrefix: "L", colPrefix: "H", empty});
    panels.push(arcs, nextBars(st));
    return {columns: 2, smallColumns: 1, panels};
  }
  if (st.view === "lens") {
    panels.push(lensBars(st));
  } else {
    panels.push({kind: "heatmap", title: `layer ${st.layer}, head ${st.head} (key/value head ${st.kvHead}): queries down, ` +
      "keys across", data: st.weights, rows: size, cols: size, extent: [size, size], cmap: "viridis", vmin: 0, vmax: 1,
    xlabel: "", ylabel: "", colorbar: "weight", rowLabels: keys, colLabels: keys, outlineRow: T ? q : undefined, empty});
  }
  panels.push(arcs);
  panels.push({kind: "heatmap", title: `query heads ${st.group.join(", ")} share key/value head ${st.kvHead}: ` +
    "their rows at the query", data: st.groupRows, rows: T ? st.group.length : 0, cols: size,
  extent: [st.group.length, size], cmap: "viridis", vmin: 0, vmax: 1, xlabel: "", ylabel: "", colorbar: "weight",
  rowLabels: st.group.map((h) => "head " + h), colLabels: keys, outlineRow: T ? st.group.indexOf(st.head) : undefined,
  empty});
  panels.push(nextBars(st));
  return {columns: 2, panels};
}
