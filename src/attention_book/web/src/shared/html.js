// The labs' readout HTML (every reader-typed text escaped) and the alt text of an empty
// picture. Python's messages are in messages.js.

// ------------------------------------------------------------------ text and HTML

/** Python's html.escape(s) (quote=True): & < > " ' as entities. */
function escapeHtml(s) {
  return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
}

const NOTE_SYMBOL = {error: "&#9888;", warning: "&#9888;", info: "&#8505;"};

/** The notes as an HTML list, each text escaped. */
function notesHtml(notes) {
  const items = notes.map((note) => {  // coloured by lab.css's .ab-note-<kind>
    const kind = Object.hasOwn(NOTE_SYMBOL, note.level) ? note.level : "info";
    return '<li class="ab-note ab-note-' + kind + '">' + NOTE_SYMBOL[kind] + " <b>" +
      escapeHtml(note.level) + ":</b> " + escapeHtml(note.text) + "</li>";
  });
  return items.length ? '<ul class="ab-notes">' + items.join("") + "</ul>" : "";
}

/** A lab's readout: body (HTML, reader text already escaped), then the notes; `classes`
 *  (lab.css's: "ab-small", "ab-mono") style the whole. */
function wrapReadout(body, notes, classes) {
  return '<div class="ab-readout' + (classes ? " " + classes : "") + '">' + body +
    notesHtml(notes || []) + "</div>";
}

/** A readout of plain-text lines (each escaped, in monospace) and notes. */
function linesHtml(lines, notes) {
  return wrapReadout(lines.map((line) => {
    return '<div class="ab-mono">' + escapeHtml(line) + "</div>";
  }).join(""), notes);
}

/** The alt text of a picture with no tokens: why, then the notes. */
function noTokensAlt(picture, notes, why) {
  return picture + ": " + (why || "there are no tokens") + ". " +
    notes.map((n) => { return n.text; }).join(" ");
}

/** The tokens with their positions, as HTML. */
function positionsHtml(tokens) {
  const listed = tokens.map((t, i) => { return i + ":" + escapeHtml(t); }).join(" ") || "<i>none</i>";
  return '<div class="ab-tokens"><b>positions:</b> <code>' + listed + "</code></div>";
}

/** The package's plain notation typeset as the readout's prose is: `sqrt(d_k)` as
 *  \u221ad<sub>k</sub>, `K_i^T` as K<sub>i</sub><sup>T</sup>, `H_{h-1}` as H<sub>h-1</sub> (the
 *  text escaped first; a name's letters only, so `d_k = 4` and prose keep their words). */
function notationHtml(text) {
  return escapeHtml(text)
    .replace(/sqrt\(([^()]*)\)/g, "\u221a$1")
    .replace(/([A-Za-z\u221a])_\{([^{}]*)\}/g, "$1<sub>$2</sub>")
    .replace(/([A-Za-z\u221a])_([A-Za-z0-9]+)/g, "$1<sub>$2</sub>")
    .replace(/([A-Za-z>])\^([A-Z])/g, "$1<sup>$2</sup>");
}

/** A shape tracer's rows (name, shape) as an open <details> table. */
function tracerHtml(summary, trace, more, empty) {
  const rows = trace.map((row) => {
    return '<tr><td class="ab-trace-name">' + notationHtml(row[0]) + "</td><td><code>(" +
      row[1].join(", ") + ")</code></td></tr>";
  }).join("") || (empty || "");
  return '<details class="ab-trace" open><summary>' + summary + "</summary>" +
    '<table class="ab-shape">' + rows + "</table>" +
    (more || "") + "</details>";
}

export {escapeHtml, notesHtml, wrapReadout, linesHtml, noTokensAlt, positionsHtml, notationHtml, tracerHtml};
