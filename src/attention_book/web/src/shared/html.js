// html.js: the labs' readout HTML (every reader-typed text escaped) and Python's messages
// (repr, whole-number checks). Part of core.js.

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
    const items = notes.map(function (note) {
      const st = NOTE_STYLE[note.level] || NOTE_STYLE.info, level = escapeHtml(note.level);
      return '<li class="ab-note ab-note-' + level + '" style="color:' + st[1] + ";background:" +
        st[2] + ';padding:2px 6px;margin:2px 0;border-radius:3px">' + st[0] + " <b>" + level +
        ":</b> " + escapeHtml(note.text) + "</li>";
    });
    return items.length ? '<ul class="ab-notes" style="list-style:none;padding:0;margin:4px 0">' +
      items.join("") + "</ul>" : "";
  }

  /** A lab's readout: body (HTML, reader text already escaped), then the notes. */
  function readoutHtml(body, notes, style) {
    return '<div class="ab-readout"' + (style ? ' style="' + style + '"' : "") + ">" + body +
      notesHtml(notes || []) + "</div>";
  }

  /** A readout of plain-text lines (each escaped, in monospace) and notes. */
  function linesHtml(lines, notes) {
    return readoutHtml(lines.map(function (line) {
      return '<div style="font-family:monospace">' + escapeHtml(line) + "</div>";
    }).join(""), notes);
  }

  /** The alt text of a picture with no tokens: why, then the notes. */
  function noTokensAlt(picture, notes, why) {
    return picture + ": " + (why || "there are no tokens") + ". " +
      notes.map(function (n) { return n.text; }).join(" ");
  }

  // ------------------------------------------------------------------ Python's messages

  const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

  function hex(c, width) {
    let s = c.toString(16);
    while (s.length < width) { s = "0" + s; }
    return s;
  }

  /** Python's repr(value) of what a control or a text may hold: None, True/False, a str
   *  (the quotes Python picks, its escapes of what str.isprintable refuses), a list, a
   *  number (a float's exponent written with two digits, as 1e-07). */
  function pyRepr(v) {
    if (v === null || v === undefined) { return "None"; }
    if (typeof v === "boolean") { return v ? "True" : "False"; }
    if (Array.isArray(v)) { return "[" + v.map(pyRepr).join(", ") + "]"; }
    if (typeof v === "number") {
      if (v !== v) { return "nan"; }
      if (!isFinite(v)) { return v > 0 ? "inf" : "-inf"; }
      return String(v).replace(/e([+-])(\d)$/, "e$10$2");
    }
    if (typeof v !== "string") { return String(v); }
    const quote = v.indexOf("'") >= 0 && v.indexOf('"') < 0 ? '"' : "'"; let out = quote;
    for (const ch of v) {
      const c = ch.codePointAt(0);
      if (ch === quote || ch === "\\") { out += "\\" + ch; }
      else if (ch === "\t") { out += "\\t"; }
      else if (ch === "\n") { out += "\\n"; }
      else if (ch === "\r") { out += "\\r"; }
      else if (c < 0x20 || c === 0x7f) { out += "\\x" + hex(c, 2); }
      else if (c < 0x7f || (c !== 0x20 && !NOT_PRINTABLE.test(ch))) { out += ch; }
      else if (c <= 0xff) { out += "\\x" + hex(c, 2); }
      else if (c <= 0xffff) { out += "\\u" + hex(c, 4); }
      else { out += "\\U" + hex(c, 8); }
    }
    return out + quote;
  }

  /** _validate.positive_int(value, name): the value, or Python's message. */
  function positiveInt(value, name) {
    if (typeof value !== "number" || !Number.isInteger(value)) {
      throw new Error(name + " must be a whole number, got " + pyRepr(value));
    }
    if (value < 1) { throw new Error(name + " must be at least 1, got " + value); }
    return value;
  }

  /** _validate.whole_number(value, name, low, high): the value, or Python's message. */
  function wholeNumber(value, name, low, high) {
    const bounds = high === undefined ? " >= " + low : " in " + low + ".." + high;
    if (typeof value !== "number" || !Number.isInteger(value) || value < low ||
        (high !== undefined && value > high)) {
      throw new Error(name + " must be a whole number" + bounds + ", got " + pyRepr(value));
    }
    return value;
  }

  /** The tokens with their positions, as HTML. */
  function positionsHtml(tokens) {
    const listed = tokens.map(function (t, i) { return i + ":" + escapeHtml(t); }).join(" ") || "<i>none</i>";
    return '<div class="ab-tokens"><b>positions:</b> <code>' + listed + "</code></div>";
  }

  /** A shape tracer's rows (name, shape) as an open <details> table. */
  function tracerHtml(summary, trace, more, empty) {
    const rows = trace.map(function (row) {
      return "<tr><td style='padding:0 8px 0 0;text-align:left'>" + escapeHtml(row[0]) + "</td><td><code>(" +
        row[1].join(", ") + ")</code></td></tr>";
    }).join("") || (empty || "");
    return '<details class="ab-trace" open><summary>' + summary + "</summary>" +
      '<table class="ab-shape" style="font-size:90%;margin:0 0 0 1em">' + rows + "</table>" +
      (more || "") + "</details>";
  }

export {escapeHtml, notesHtml, readoutHtml, linesHtml, noTokensAlt, pyRepr, positiveInt, wholeNumber,
        positionsHtml, tracerHtml};
