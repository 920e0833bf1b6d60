// The labs' readout HTML (every reader-typed text escaped) and the alt text of an empty
// picture. Python's messages are in messages.js.

// ------------------------------------------------------------------ text and HTML

/** Python's html.escape(s) (quote=True): & < > " ' as entities. */
function escapeHtml(s) {
  return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
}

const NOTE_STYLE = {  // a note level's symbol, text colour, background
  error: ["&#9888;", "#8a1c1c", "#fdecea"],
  warning: ["&#9888;", "#6b4e00", "#fff4d6"],
  info: ["&#8505;", "#0b3d6b", "#e8f1fb"],
};

/** The notes as an HTML list, each text escaped. */
function notesHtml(notes) {
  const items = notes.map((note) => {
    const st = NOTE_STYLE[note.level] || NOTE_STYLE.info, level = escapeHtml(note.level);
    return '<li class="ab-note ab-note-' + level + '" style="color:' + st[1] + ";background:" +
      st[2] + ';padding:2px 6px;margin:2px 0;border-radius:3px">' + st[0] + " <b>" + level +
      ":</b> " + escapeHtml(note.text) + "</li>";
  });
  return items.length ? '<ul class="ab-notes" style="list-style:none;padding:0;margin:4px 0">' +
    items.join("") + "</ul>" : "";
}

/** A lab's readout: body (HTML, reader text already escaped), then the notes. */
function wrapReadout(body, notes, style) {
  return '<div class="ab-readout"' + (style ? ' style="' + style + '"' : "") + ">" + body +
    notesHtml(notes || []) + "</div>";
}

/** A readout of plain-text lines (each escaped, in monospace) and notes. */
function linesHtml(lines, notes) {
  return wrapReadout(lines.map((line) => {
    return '<div style="font-family:monospace">' + escapeHtml(line) + "</div>";
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

/** A shape tracer's rows (name, shape) as an open <details> table. */
function tracerHtml(summary, trace, more, empty) {
  const rows = trace.map((row) => {
    return "<tr><td style='padding:0 8px 0 0;text-align:left'>" + escapeHtml(row[0]) + "</td><td><code>(" +
      row[1].join(", ") + ")</code></td></tr>";
  }).join("") || (empty || "");
  return '<details class="ab-trace" open><summary>' + summary + "</summary>" +
    '<table class="ab-shape" style="font-size:90%;margin:0 0 0 1em">' + rows + "</table>" +
    (more || "") + "</details>";
}

export {escapeHtml, notesHtml, wrapReadout, linesHtml, noTokensAlt, positionsHtml, tracerHtml};
