// tokens.js: the book's word tokenizer in the reader's browser, the twin of
// attention_book/tokens.py (exact for any text: vocab.js holds the character tables
// measured from Python), and reader-typed text read as scenes/core.py's read_tokens does
// (the same notes and limits).

import vocab from "./vocab.js";
import {format} from "../format.js";

const MAX_WIDGET_TOKENS = 32;  // scenes.core.MAX_WIDGET_TOKENS

// ------------------------------------------------------------------ the tokenizer

/** Whether code point c lies in a flattened list of inclusive ranges (binary search). */
function inRanges(table, c) {
  let lo = 0, hi = table.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (c < table[2 * mid]) { hi = mid - 1; } else if (c > table[2 * mid + 1]) { lo = mid + 1; } else { return true; }
  }
  return false;
}

// code point classes of the token regex [^\W_]+|'s\b|[^\w\s]|_ (Python's Unicode), BMP cached
const WORD = 1, SPACE = 2, UNDERSCORE = 3, OTHER = 0;
const bmpClass = new Uint8Array(65536), lowerOf = new Map();
{  // filled once, at load
  let c;
  for (c = 0; c < 65536; c++) {
    bmpClass[c] = inRanges(vocab.word, c) ? WORD : inRanges(vocab.space, c) ? SPACE : OTHER;
  }
  bmpClass[95] = UNDERSCORE;
  const runs = vocab.lower;  // [first, last, step, delta] runs: lower(c) = c + delta
  for (let r = 0; r < runs.length; r += 4) {
    for (c = runs[r]; c <= runs[r + 1]; c += runs[r + 2]) { lowerOf.set(c, [c + runs[r + 3]]); }
  }
  for (let m = 0; m < vocab.lowerMulti.length; m += 2) { lowerOf.set(vocab.lowerMulti[m], vocab.lowerMulti[m + 1]); }
}

function classOf(c) {
  if (c < 65536) { return bmpClass[c]; }
  return inRanges(vocab.word, c) ? WORD : inRanges(vocab.space, c) ? SPACE : OTHER;
}

/** Whether code point c is whitespace for Python (str.split(), re's \s). */
function isSpace(c) { return classOf(c) === SPACE; }

/** The code points of a string (a lone surrogate stays one code point, as in Python). */
function codePoints(text) {
  const out = [];
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) { c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00); i++; }
    }
    out.push(c);
  }
  return out;
}

/** Python's str.lower on code points, Final_Sigma included (CPython's handle_capital_sigma). */
function lowerCodePoints(cps) {
  const out = [];
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i];
    if (c === 0x3a3) {
      let j = i - 1;
      while (j >= 0 && inRanges(vocab.ignorable, cps[j])) { j--; }
      let final = j >= 0 && inRanges(vocab.cased, cps[j]);
      if (final && i + 1 < cps.length) {
        j = i + 1;
        while (j < cps.length && inRanges(vocab.ignorable, cps[j])) { j++; }
        final = j === cps.length || !inRanges(vocab.cased, cps[j]);
      }
      out.push(final ? 0x3c2 : 0x3c3);
      continue;
    }
    const low = lowerOf.get(c);
    if (low === undefined) { out.push(c); } else { for (let k = 0; k < low.length; k++) { out.push(low[k]); } }
  }
  return out;
}

/** tokens.tokenize: lower-case word and punctuation tokens; throws with Python's messages. */
function tokenize(text) {
  if (typeof text !== "string") { throw new Error("text must be a string, got " + typeof text); }
  let cps = codePoints(text);
  if (cps.length > vocab.maxTextChars) {
    throw new Error("text is " + format.grouped(cps.length) + " characters long; the limit is " +
                    format.grouped(vocab.maxTextChars));
  }
  // what draws nothing goes first (tokens.invisible: Cc and Cf, not spaces)
  cps = lowerCodePoints(cps.filter((c) => { return !inRanges(vocab.invisible, c); }));
  const tokens = [], n = cps.length; let i = 0;
  while (i < n) {
    const k = classOf(cps[i]);
    if (k === WORD) {
      let j = i + 1;
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

const index = new Map(vocab.words.map((w, i) => { return [w, i]; }));

function isKnown(token) { return index.has(token); }

/** Vocabulary.encode: ids (an unknown token gets the id of <unk>). */
function encode(tokens) {
  return tokens.map((t) => { const i = index.get(t); return i === undefined ? vocab.unkId : i; });
}

/** scenes.core.read_tokens: never throws; {tokens (at most maxTokens), notes, total}. */
function readTokens(text, maxTokens, which) {
  maxTokens = maxTokens === undefined ? MAX_WIDGET_TOKENS : maxTokens;
  const prefix = which ? which + ": " : ""; let tokens;
  try {
    tokens = tokenize(text);
  } catch (err) {
    const m = err.message;
    return {tokens: [], notes: [{level: "error", text: prefix + m.charAt(0).toUpperCase() + m.slice(1) + "."}], total: 0};
  }
  const notes = [];
  if (tokens.length > maxTokens) {
    notes.push({level: "warning", text: prefix + "showing the first " + maxTokens + " of " + tokens.length + " tokens"});
  }
  return {tokens: tokens.slice(0, maxTokens), notes, total: tokens.length};
}

/** scenes.core.as_known: the tokens as chapter 1's table sees them, an unknown word as
 *  <unk>, with a note pushed on `notes` naming the typed words that share its row. */
function asKnown(tokens, notes) {
  const unknown = tokens.filter((t) => !isKnown(t));
  if (!unknown.length) { return tokens.slice(); }
  const n = unknown.length, words = unknown.filter((t, i) => unknown.indexOf(t) === i);
  const listed = words.slice(0, 8).map((t) => "'" + t + "'").join(", ") + (words.length > 8 ? ", \u2026" : "");
  notes.push({level: "info", text: n + " typed word" + (n !== 1 ? "s are" : " is") + " not in chapter 1's vocabulary of " +
    vocab.words.length + ": shown as " + vocab.unkToken + ", " + (n !== 1 ? "they share" : "it has") +
    " its one row of X (" + listed + ")"});
  return tokens.map((t) => (isKnown(t) ? t : vocab.unkToken));
}

/** scenes.core.token_options: a query drop-down's choices ["i: token", i], or "(no tokens)". */
function tokenOptions(tokens) {
  return tokens.length ? tokens.map((t, i) => { return [i + ": " + t, i]; }) : [["(no tokens)", 0]];
}

export {MAX_WIDGET_TOKENS, codePoints, isSpace, tokenize, isKnown, asKnown, encode, readTokens, tokenOptions};
