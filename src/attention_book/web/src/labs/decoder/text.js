// Chapter 10's lab (labs/decoder.js): the readout (HTML, every reader-typed text escaped)
// and the alt text of a state, in the order the panels are drawn.

import {format} from "../../format.js";
import {escapeHtml, noTokensAlt, wrapReadout} from "../../shared/html.js";

const quote = (token) => "'" + token + "'";
const heads = (off) => off.map(([l, h]) => `L${l} H${h}`).join(", ");

/** The indices of the k largest of row, largest first (ties: the lower index first). */
function topKeys(row, k) {
  return Array.from(row, (_, i) => i).sort((a, b) => row[b] - row[a] || a - b).slice(0, k);
}

/** The readout as HTML. */
export function readoutHtml(st) {
  const parts = [];
  const off = st.off.length ? `${st.off.length} head${st.off.length > 1 ? "s" : ""} switched off (${heads(st.off)})`
    : "no head switched off";
  if (st.T) {
    const q = st.query, prompt = st.tokens.slice(0, st.n_prompt).join("");
    parts.push(`<b>step ${st.t}</b>: after the ${st.n_prompt}-token prompt` + (st.chat ? " (a chat turn)" : "") +
      `, with ${off}, the model wrote: <span class="ab-mono">${escapeHtml(st.generated)}</span>`);
    parts.push(`query ${q} ${escapeHtml(quote(st.tokens[q]))} chose ${escapeHtml(quote(st.tokens[q + 1]))}; ` +
      "the next token's top " + st.nextP.length + ": " + st.nextTokens.map((tok, i) =>
      `${escapeHtml(quote(tok))} ${format.fixed(st.nextP[i], 3)}`).join(", "));
    parts.push(`<b>layer ${st.layer}, head ${st.head}</b> reads key/value head ${st.kvHead}, as query heads ` +
      `${st.group.join(", ")} do; from the query it attends most to: ` + topKeys(st.row, 3).map((j) =>
      `${j} ${escapeHtml(quote(st.tokens[j]))} ${format.fixed(st.row[j], 2)}`).join(", "));
    if (st.view === "lens" && st.lensTokens.length) {
      const cells = st.lensTokens.map((tok, l) => `<tr><td>${l}</td><td>${escapeHtml(quote(tok))}</td>` +
        `<td>${format.fixed(st.lensP[l], 3)}</td></tr>`).join("");
      parts.push('<table class="ab-small ab-scores"><tr><th>blocks read</th><th>top guess</th><th>probability</th></tr>' +
        cells + "</table>");
    }
    parts.push(`prompt: <span class="ab-mono">${escapeHtml(prompt)}</span>`);
  } else {
    parts.push(`<b>layer ${st.layer}, head ${st.head}</b> (key/value head ${st.kvHead}, shared by query heads ` +
      `${st.group.join(", ")}); ${off}`);
  }
  return wrapReadout(parts.map((p) => `<div>${p}</div>`).join(""), st.notes, "ab-small");
}

/** The alt text: the panels in the order drawn. */
export function alt(st) {
  const model = `${st.n_layers} layers of ${st.h} query heads over ${st.g} key/value heads`;
  if (!st.T) {
    return noTokensAlt(`The decoder lab (${model}), empty: no map, arcs or probabilities`, st.notes,
      st.notes.some((n) => n.level === "error") ? "there are no tokens" : "nothing is computed for this prompt yet");
  }
  const q = st.query, size = q + 1, top = topKeys(st.row, 1)[0];
  const tokens = st.tokens.slice(0, size), shown = tokens.slice(0, 20).join(", ") + (size > 20 ? ", ..." : "");
  const arcs = `arcs from query ${q} '${st.tokens[q]}' to every earlier token; the heaviest goes to ${top} ` +
    `'${st.tokens[top]}' with weight ${format.fixed(st.row[top], 2)}.`;
  const how = st.decoding === "greedy" ? "greedy: it writes the most probable"
    : "sampled: it writes the one drawn";
  const next = `bars of the next token's top ${st.nextP.length} probabilities (${how}): ` +
    st.nextTokens.map((tok, i) => `'${tok}' ${format.fixed(st.nextP[i], 2)}`).join(", ") +
    `; the model wrote '${st.tokens[q + 1]}'.`;
  const group = `a heatmap of the rows at the query of query heads ${st.group.join(", ")}, which share key/value ` +
    `head ${st.kvHead}, head ${st.head} outlined.`;
  let first;
  if (st.view === "model") {
    first = `Panel 1: the model view, ${st.n_layers * st.h} strips, one a head (${st.n_layers} rows of layers, ` +
      `${st.h} columns of heads), each its weights from query ${q} '${st.tokens[q]}' over the ${size} tokens, colour ` +
      `0 to 1, layer ${st.layer}, head ${st.head} outlined. Panel 2: ${arcs} Panel 3: ${next}`;
    return `Step ${st.t} of ${st.n_written} of the decoder (${model}). ${first}`;
  }
  if (st.view === "lens") {
    first = st.lensTokens.length ? "Panel 1: bars of the logit lens, each layer's top guess for the next token and " +
      "its probability: " + st.lensTokens.map((tok, l) => `after ${l} blocks '${tok}' ${format.fixed(st.lensP[l], 2)}`)
      .join(", ") + "." : "Panel 1: the logit lens, not computed yet.";
  } else {
    first = `Panel 1: heatmap of the ${size} by ${size} attention weights of layer ${st.layer}, head ${st.head}, ` +
      `tokens (${shown}) on both axes, colour 0 to 1, row ${q} outlined.`;
  }
  return `Step ${st.t} of ${st.n_written} of the decoder (${model}). ${first} Panel 2: ${arcs} Panel 3: ${group} ` +
    `Panel 4: ${next}`;
}
