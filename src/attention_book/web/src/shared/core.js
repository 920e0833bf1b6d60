// What the labs' state modules (embedding.js, attention.js, ...) share in the reader's
// browser: the book's word tokenizer and vocabulary (the twin of attention_book/tokens.py,
// exact for any text: vocab.js holds the character tables measured from Python), reading
// reader-typed text as scenes/core.py's read_tokens does (the same notes and limits),
// chapter 1's embedding table drawn with rng.js (numpy's default_rng, bit for bit), small
// matrix helpers, numbers formatted as Python formats them, and HTML built as Python's
// readout_html builds it, every reader-typed text escaped. An ES module (its default
// export), bundled into each lab's classic script by build.mjs.
//
// Matrices are row-major Float64Arrays: entry (i, j) of an (n, m) matrix at i * m + j.
import vocab from "./vocab.js";
import rng from "./rng.js";
// numbers as Python formats them: one implementation for every lab
import {format} from "../format.js";


  var MAX_WIDGET_TOKENS = 32;  // scenes.core.MAX_WIDGET_TOKENS

  // ------------------------------------------------------------------ text and HTML

  /** Python's html.escape(s) (quote=True): & < > " ' as entities. */
  function escapeHtml(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
  }

  var NOTE_STYLE = {  // scenes.core._NOTE_STYLE: symbol, text colour, background
    error: ["&#9888;", "#8a1c1c", "#fdecea"],
    warning: ["&#9888;", "#6b4e00", "#fff4d6"],
    info: ["&#8505;", "#0b3d6b", "#e8f1fb"],
  };

  /** scenes.core.notes_html: the notes as an HTML list, each text escaped. */
  function notesHtml(notes) {
    var items = notes.map(function (note) {
      var st = NOTE_STYLE[note.level] || NOTE_STYLE.info, level = escapeHtml(note.level);
      return '<li class="ab-note ab-note-' + level + '" style="color:' + st[1] + ";background:" +
        st[2] + ';padding:2px 6px;margin:2px 0;border-radius:3px">' + st[0] + " <b>" + level +
        ":</b> " + escapeHtml(note.text) + "</li>";
    });
    return items.length ? '<ul class="ab-notes" style="list-style:none;padding:0;margin:4px 0">' +
      items.join("") + "</ul>" : "";
  }

  /** scenes.core.readout_html: body (HTML, reader text already escaped), then the notes. */
  function readoutHtml(body, notes, style) {
    return '<div class="ab-readout"' + (style ? ' style="' + style + '"' : "") + ">" + body +
      notesHtml(notes || []) + "</div>";
  }

  /** scenes.core.no_tokens_alt. */
  function noTokensAlt(picture, notes, why) {
    return picture + ": " + (why || "there are no tokens") + ". " +
      notes.map(function (n) { return n.text; }).join(" ");
  }

  // ------------------------------------------------------------------ the tokenizer

  /** Whether code point c lies in a flattened list of inclusive ranges (binary search). */
  function inRanges(table, c) {
    var lo = 0, hi = table.length / 2 - 1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      if (c < table[2 * mid]) { hi = mid - 1; } else if (c > table[2 * mid + 1]) { lo = mid + 1; } else { return true; }
    }
    return false;
  }

  // code point classes of the token regex [^\W_]+|'s\b|[^\w\s]|_ (Python's Unicode), BMP cached
  var WORD = 1, SPACE = 2, UNDERSCORE = 3, OTHER = 0;
  var bmpClass = new Uint8Array(65536), lowerOf = new Map();
  (function () {
    var c;
    for (c = 0; c < 65536; c++) {
      bmpClass[c] = inRanges(vocab.word, c) ? WORD : inRanges(vocab.space, c) ? SPACE : OTHER;
    }
    bmpClass[95] = UNDERSCORE;
    var runs = vocab.lower;  // [first, last, step, delta] runs: lower(c) = c + delta
    for (var r = 0; r < runs.length; r += 4) {
      for (c = runs[r]; c <= runs[r + 1]; c += runs[r + 2]) { lowerOf.set(c, [c + runs[r + 3]]); }
    }
    for (var m = 0; m < vocab.lowerMulti.length; m += 2) { lowerOf.set(vocab.lowerMulti[m], vocab.lowerMulti[m + 1]); }
  })();

  function classOf(c) {
    if (c < 65536) { return bmpClass[c]; }
    return inRanges(vocab.word, c) ? WORD : inRanges(vocab.space, c) ? SPACE : OTHER;
  }

  /** Whether code point c is whitespace for Python (str.split(), re's \s). */
  function isSpace(c) { return classOf(c) === SPACE; }

  /** The code points of a string (a lone surrogate stays one code point, as in Python). */
  function codePoints(text) {
    var out = [];
    for (var i = 0; i < text.length; i++) {
      var c = text.charCodeAt(i);
      if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
        var d = text.charCodeAt(i + 1);
        if (d >= 0xdc00 && d < 0xe000) { c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00); i++; }
      }
      out.push(c);
    }
    return out;
  }

  /** Python's str.lower on code points, Final_Sigma included (CPython's handle_capital_sigma). */
  function lowerCodePoints(cps) {
    var out = [];
    for (var i = 0; i < cps.length; i++) {
      var c = cps[i];
      if (c === 0x3a3) {
        var j = i - 1;
        while (j >= 0 && inRanges(vocab.ignorable, cps[j])) { j--; }
        var final = j >= 0 && inRanges(vocab.cased, cps[j]);
        if (final && i + 1 < cps.length) {
          j = i + 1;
          while (j < cps.length && inRanges(vocab.ignorable, cps[j])) { j++; }
          final = j === cps.length || !inRanges(vocab.cased, cps[j]);
        }
        out.push(final ? 0x3c2 : 0x3c3);
        continue;
      }
      var low = lowerOf.get(c);
      if (low === undefined) { out.push(c); } else { for (var k = 0; k < low.length; k++) { out.push(low[k]); } }
    }
    return out;
  }

  /** tokens.tokenize: lower-case word and punctuation tokens; throws with Python's messages. */
  function tokenize(text) {
    if (typeof text !== "string") { throw new Error("text must be a string, got " + typeof text); }
    var cps = codePoints(text);
    if (cps.length > vocab.maxTextChars) {
      throw new Error("text is " + format.grouped(cps.length) + " characters long; the limit is " +
                      format.grouped(vocab.maxTextChars));
    }
    cps = lowerCodePoints(cps);
    var tokens = [], n = cps.length, i = 0;
    while (i < n) {
      var k = classOf(cps[i]);
      if (k === WORD) {
        var j = i + 1;
        while (j < n && classOf(cps[j]) === WORD) { j++; }
        tokens.push(String.fromCodePoint.apply(null, cps.slice(i, j)));
        i = j;
      } else if (cps[i] === 39 && i + 1 < n && cps[i + 1] === 115 &&  // 's then not \w
                 (i + 2 === n || (classOf(cps[i + 2]) !== WORD && cps[i + 2] !== 95))) {
        tokens.push("'s");
        i += 2;
      } else {
        if (k !== SPACE) { tokens.push(String.fromCodePoint(cps[i])); }
        i++;
      }
    }
    if (!tokens.length) { throw new Error("text is empty: type at least one word"); }
    return tokens;
  }

  var index = new Map(vocab.words.map(function (w, i) { return [w, i]; }));

  function isKnown(token) { return index.has(token); }

  /** Vocabulary.encode: ids (an unknown token gets the id of <unk>). */
  function encode(tokens) {
    return tokens.map(function (t) { var i = index.get(t); return i === undefined ? vocab.unkId : i; });
  }

  /** scenes.core.read_tokens: never throws; {tokens (at most maxTokens), notes, total}. */
  function readTokens(text, maxTokens, which) {
    maxTokens = maxTokens === undefined ? MAX_WIDGET_TOKENS : maxTokens;
    var prefix = which ? which + ": " : "", tokens;
    try {
      tokens = tokenize(text);
    } catch (err) {
      var m = err.message;
      return {tokens: [], notes: [{level: "error", text: prefix + m.charAt(0).toUpperCase() + m.slice(1) + "."}], total: 0};
    }
    var notes = [];
    if (tokens.length > maxTokens) {
      notes.push({level: "warning", text: prefix + "showing the first " + maxTokens + " of " + tokens.length + " tokens"});
    }
    return {tokens: tokens.slice(0, maxTokens), notes: notes, total: tokens.length};
  }

  // ------------------------------------------------------------------ embeddings

  var tables = new Map();  // "d,seed" -> (V, d), as scenes.core._table (the last 32)

  /** embedding.embedding_table(V, d, seed): default_rng(seed).standard_normal((V, d)). */
  function embeddingTable(d, seed) {
    var key = d + "," + seed, t = tables.get(key);
    if (t === undefined) {
      t = rng.defaultRng(seed).standardNormal(vocab.words.length * d);  // (V, d)
      if (tables.size >= 32) { tables.delete(tables.keys().next().value); }
      tables.set(key, t);
    }
    return t;
  }

  /** The rows of ``ids`` of an (V, d) table: X:(s, d) (embedding.embed). */
  function embed(ids, table, d) {
    var X = new Float64Array(ids.length * d);
    for (var i = 0; i < ids.length; i++) { X.set(table.subarray(ids[i] * d, (ids[i] + 1) * d), i * d); }
    return X;
  }

  /** scenes.core.embed_tokens: chapter 1's embeddings (s, d) of the tokens. */
  function embedTokens(tokens, d, seed) {
    return embed(encode(tokens), embeddingTable(d, seed || 0), d);
  }

  // ------------------------------------------------------------------ matrices

  var caches = [tables];

  /** Empty every cache (the tables of core.js and those a lab registered: benchmarks time a
   *  change that must draw its random numbers afresh). */
  function clearCaches() { caches.forEach(function (c) { c.clear(); }); }

  /** A Map-like cache a lab keeps (cleared by clearCaches). */
  function cache() { var c = new Map(); caches.push(c); return c; }

  /** A:(n, k) @ B:(k, m) -> (n, m). */
  function matmul(A, B, n, k, m) {
    var C = new Float64Array(n * m);
    for (var i = 0; i < n; i++) {
      for (var t = 0; t < k; t++) {
        var a = A[i * k + t], row = t * m, out = i * m;
        for (var j = 0; j < m; j++) { C[out + j] += a * B[row + j]; }
      }
    }
    return C;
  }

  /** A:(n, k) @ B^T with B:(m, k) -> (n, m), times scale. */
  function matmulT(A, B, n, k, m, scale) {
    var C = new Float64Array(n * m);
    scale = scale === undefined ? 1 : scale;
    for (var i = 0; i < n; i++) {
      for (var j = 0; j < m; j++) {
        var sum = 0;
        for (var t = 0; t < k; t++) { sum += A[i * k + t] * B[j * k + t]; }
        C[i * m + j] = sum * scale;
      }
    }
    return C;
  }

  /** attention.softmax over the rows of X:(n, m), in place; -inf gets 0, an all -inf row 0s. */
  function softmaxRows(X, n, m) {
    for (var i = 0; i < n; i++) {
      var o = i * m, max = -Infinity, j;
      for (j = 0; j < m; j++) { if (X[o + j] > max) { max = X[o + j]; } }
      if (max === -Infinity) { max = 0; }
      var total = 0;
      for (j = 0; j < m; j++) { X[o + j] = Math.exp(X[o + j] - max); total += X[o + j]; }
      if (!(total > 0)) { total = 1; }
      for (j = 0; j < m; j++) { X[o + j] /= total; }
    }
    return X;
  }

  /** embedding.cosine_similarity of the rows of X:(s, d) -> (s, s), clipped to [-1, 1]. */
  function cosineSimilarity(X, s, d) {
    var unit = new Float64Array(s * d);
    for (var i = 0; i < s; i++) {
      var norm = 0, j;
      for (j = 0; j < d; j++) { norm += X[i * d + j] * X[i * d + j]; }
      norm = Math.sqrt(norm);
      if (norm > 0) { for (j = 0; j < d; j++) { unit[i * d + j] = X[i * d + j] / norm; } }
    }
    var S = matmulT(unit, unit, s, d, s);  // (s, d) @ (d, s) -> (s, s)
    for (var k = 0; k < S.length; k++) { S[k] = Math.min(1, Math.max(-1, S[k])); }
    return S;
  }

  /** Tokens in order of first occurrence that occur more than once (scenes.embedding._repeated). */
  function repeated(tokens) {
    var count = new Map();
    tokens.forEach(function (t) { count.set(t, (count.get(t) || 0) + 1); });
    return Array.from(count.keys()).filter(function (t) { return count.get(t) > 1; });
  }

  function unique(list) { return Array.from(new Set(list)); }

  /** A row-major (n, m) matrix as n plain arrays (for the numbers a reader downloads). */
  function nested(a, n, m) {
    var out = [];
    for (var i = 0; i < n; i++) { out.push(Array.from(a.subarray(i * m, (i + 1) * m))); }
    return out;
  }

  // ------------------------------------------------------------------ Python's messages

  var NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

  function hex(c, width) {
    var s = c.toString(16);
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
    var quote = v.indexOf("'") >= 0 && v.indexOf('"') < 0 ? '"' : "'", out = quote;
    for (var ch of v) {
      var c = ch.codePointAt(0);
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

  /** _validate.whole_number(value, name, low, high): the value, or Python's message. */
  function wholeNumber(value, name, low, high) {
    var bounds = high === undefined ? " >= " + low : " in " + low + ".." + high;
    if (typeof value !== "number" || !Number.isInteger(value) || value < low ||
        (high !== undefined && value > high)) {
      throw new Error(name + " must be a whole number" + bounds + ", got " + pyRepr(value));
    }
    return value;
  }

  /** positional.sinusoidal_encoding(s, d, base): PE:(s, d), PE[p, 2i] = sin(p w_i),
   *  PE[p, 2i+1] = cos(p w_i), w_i = base^(-2i/d) (chapters 4, 5 and 7 add it to X). */
  function sinusoidalEncoding(s, d, base) {
    base = base || 10000.0;
    var pe = new Float64Array(s * d), half = d / 2;
    for (var i = 0; i < half; i++) {
      var omega = Math.pow(base, -2 * i / d);
      for (var p = 0; p < s; p++) {
        var a = p * omega;  // (s,) outer (d/2,) -> (s, d/2), one entry
        pe[p * d + 2 * i] = Math.sin(a);
        pe[p * d + 2 * i + 1] = Math.cos(a);
      }
    }
    return pe;
  }

  /** block.layer_norm over the rows of x:(s, d): (x - mean) / sqrt(var + eps) (biased
   *  variance, as torch), times gamma:(d,) and plus beta:(d,) when given -> (s, d).
   *  (minilm.js keeps its own: it also runs alone in a worker.) */
  function layerNorm(x, s, d, eps, gamma, beta) {
    var y = new Float64Array(s * d);
    for (var r = 0; r < s; r++) {
      var o = r * d, mean = 0, v = 0, j;
      for (j = 0; j < d; j++) { mean += x[o + j]; }
      mean /= d;
      for (j = 0; j < d; j++) { v += (x[o + j] - mean) * (x[o + j] - mean); }
      var root = Math.sqrt(v / d + eps);
      for (j = 0; j < d; j++) {
        var n = (x[o + j] - mean) / root;
        y[o + j] = gamma ? n * gamma[j] + (beta ? beta[j] : 0) : n;
      }
    }
    return y;
  }

  /** The first index of a's largest entry (numpy's argmax). */
  function argmax(a) {
    var best = 0;
    for (var j = 1; j < a.length; j++) { if (a[j] > a[best]) { best = j; } }
    return best;
  }

  /** scenes.core.positions_html. */
  function positionsHtml(tokens) {
    var listed = tokens.map(function (t, i) { return i + ":" + escapeHtml(t); }).join(" ") || "<i>none</i>";
    return '<div class="ab-tokens"><b>positions:</b> <code>' + listed + "</code></div>";
  }

  /** scenes.core.tracer_html. */
  function tracerHtml(summary, trace, more, empty) {
    var rows = trace.map(function (row) {
      return "<tr><td style='padding:0 8px 0 0;text-align:left'>" + escapeHtml(row[0]) + "</td><td><code>(" +
        row[1].join(", ") + ")</code></td></tr>";
    }).join("") || (empty || "");
    return '<details class="ab-trace" open><summary>' + summary + "</summary>" +
      '<table class="ab-shape" style="font-size:90%;margin:0 0 0 1em">' + rows + "</table>" +
      (more || "") + "</details>";
  }

  const api = {
    MAX_WIDGET_TOKENS: MAX_WIDGET_TOKENS, vocab: vocab, escapeHtml: escapeHtml,
    positionsHtml: positionsHtml, tracerHtml: tracerHtml,
    sinusoidalEncoding: sinusoidalEncoding, layerNorm: layerNorm, argmax: argmax,
    pyRepr: pyRepr, wholeNumber: wholeNumber,
    notesHtml: notesHtml, readoutHtml: readoutHtml, noTokensAlt: noTokensAlt,
    format: format,
    codePoints: codePoints, isSpace: isSpace, tokenize: tokenize, isKnown: isKnown, encode: encode, readTokens: readTokens,
    embeddingTable: embeddingTable, embed: embed, embedTokens: embedTokens, matmul: matmul,
    matmulT: matmulT, softmaxRows: softmaxRows, cosineSimilarity: cosineSimilarity,
    repeated: repeated, unique: unique, nested: nested, clearCaches: clearCaches, cache: cache,
  };

export default api;
