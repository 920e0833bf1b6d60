/*
 * wordpiece.js: BERT's WordPiece tokenizer of all-MiniLM-L6-v2 (chapter 9), equal to the
 * model's tokenizer.json run by the Rust `tokenizers` (BertNormalizer, BertPreTokenizer,
 * WordPiece, [CLS] ... [SEP], no padding, no truncation); minilm.js's first part.
 *
 * Tokenizer. Rust's `tokenizers` decides what is a control character, a non-spacing mark
 * and punctuation with the tables of its `unicode_categories` crate, which predate the
 * Unicode that browsers ship (U+07FD, a mark since Unicode 11, is kept there; a browser's
 * \p{Mn} would drop it). So this file carries those decisions as code point ranges,
 * measured from the installed `tokenizers` over every code point (bert-tables.js, written whole by
 * web_export.write_char_tables; a test re-measures it); only
 * canonical decomposition (NFD) and lower-casing of a character come from the
 * JavaScript engine (Node 20 lacks 21 decompositions of Unicode 16 that the Rust crate
 * applies, all in scripts absent from the vocabulary: both give [UNK]; every code point
 * tokenizes as in Python, tests). The npm package @huggingface/tokenizers 0.2.0 was
 * measured first: ES module or CommonJS only (no classic script, so not over file://),
 * 36 kB minified plus tokenizer.json, and 11 of 567 test texts tokenized differently
 * (among them final sigma, CJK extension B, titlecase digraphs, 100-character words).
 *
 */

import {TABLES} from "./bert-tables.js";

/** The lab's default cap on tokens ([CLS] and [SEP] included); the model has 512. */
const LAB_MAX_TOKENS = 128;
/** Longest text accepted, in characters (attention_book.tokens.MAX_TEXT_CHARS). */
const MAX_TEXT_CHARS = 100000;

/**
 * An error a reader can act on. `code` says which: "not-text", "empty", "no-tokens",
 * "too-long-text", "too-many-tokens", "bad-ids", "bad-weights".
 */
function MiniLMError(code, message) {
  const error = new Error(message);
  error.name = "MiniLMError";
  error.code = code;
  return error;
}

// ------------------------------------------------------------------ code point ranges

/** "lo-hi,lo-hi,..." (hex) -> Int32Array [lo0, hi0, lo1, hi1, ...], sorted. */
function parseRanges(text) {
  const parts = text ? text.split(",") : [];
  const out = new Int32Array(2 * parts.length);
  for (let i = 0; i < parts.length; i++) {
    const pair = parts[i].split("-");
    out[2 * i] = parseInt(pair[0], 16);
    out[2 * i + 1] = parseInt(pair.length > 1 ? pair[1] : pair[0], 16);
  }
  return out;
}

/** Whether code point c lies in one of the sorted ranges (binary search). */
function inRanges(ranges, c) {
  let lo = 0;
  let hi = ranges.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (c < ranges[2 * mid]) hi = mid - 1;
    else if (c > ranges[2 * mid + 1]) lo = mid + 1;
    else return true;
  }
  return false;
}

const DROP = parseRanges(TABLES.drop); // removed: controls, format, private use, marks
const SPACE = parseRanges(TABLES.space); // whitespace, normalised to " "
const CJK = parseRanges(TABLES.cjk); // CJK ideographs, padded with spaces
const PUNCT = parseRanges(TABLES.punct); // punctuation: a token of its own
const SPLIT = parseRanges(TABLES.split); // whitespace that separates words

// ------------------------------------------------------------------ tokenizer

/**
 * BertNormalizer (clean text, CJK padding, strip accents, lower case) of one code point,
 * as code points pushed onto `out`.
 */
function normalizeCodePoint(c, out) {
  if (c < 128) {  // ASCII: no table needed but for controls and case
    if (c === 9 || c === 10 || c === 13 || c === 32) out.push(32);
    else if (c < 32 || c === 127) return;
    else if (c >= 65 && c <= 90) out.push(c + 32);
    else out.push(c);
    return;
  }
  if (inRanges(DROP, c)) return;
  if (inRanges(SPACE, c)) { out.push(32); return; }
  const cjk = inRanges(CJK, c);
  if (cjk) out.push(32);
  const nfd = String.fromCodePoint(c).normalize("NFD");
  for (let i = 0; i < nfd.length; i++) {
    const d = nfd.codePointAt(i);
    if (d > 0xffff) i++;
    if (inRanges(DROP, d)) continue;  // a non-spacing mark the decomposition split off
    const lower = String.fromCodePoint(d).toLowerCase();  // one character: no final sigma
    for (let j = 0; j < lower.length; j++) {
      const e = lower.codePointAt(j);
      if (e > 0xffff) j++;
      out.push(e);
    }
  }
  if (cjk) out.push(32);
}

/**
 * WordPiece over one vocabulary: encode(text) -> {tokens, ids, offsets}.
 *
 * @param {object} spec  tokenizer section of the weights file: vocab (array, index = id),
 *   unk_token, cls_token, sep_token, continuing_subword_prefix,
 *   max_input_chars_per_word, special_tokens (matched in the raw text, as tokens).
 */
class Tokenizer {
  constructor(spec) {
    if (!spec || !Array.isArray(spec.vocab)) {
      throw MiniLMError("bad-weights", "the weights file holds no tokenizer vocabulary");
    }
    this.vocab = spec.vocab;
    this.ids = new Map();
    for (let i = 0; i < spec.vocab.length; i++) this.ids.set(spec.vocab[i], i);
    this.unk = spec.unk_token;
    this.cls = spec.cls_token;
    this.sep = spec.sep_token;
    this.prefix = spec.continuing_subword_prefix;
    this.maxChars = spec.max_input_chars_per_word;
    const specials = (spec.special_tokens || []).slice().sort((a, b) => {
      return b.length - a.length;  // longest first: leftmost-longest matching
    });
    this.special = specials.length ? new RegExp(specials.map((s) => {
      return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    }).join("|"), "g") : null;
  }

  /**
   * Words of one stretch of raw text (no special token in it): [{cps, starts, ends}],
   * each a word or a punctuation mark, with each normalised code point's source span in
   * UTF-16 units of the whole text.
   */
  _words(text, from, to, words) {
    let word = null;
    const buffer = [];
    for (let i = from; i < to;) {
      const c = text.codePointAt(i);
      const width = c > 0xffff ? 2 : 1;
      buffer.length = 0;
      normalizeCodePoint(c, buffer);
      for (let k = 0; k < buffer.length; k++) {
        const n = buffer[k];
        if (n === 32 || inRanges(SPLIT, n)) {  // BertPreTokenizer: whitespace ends a word
          word = null;
        } else if ((n < 128 && isAsciiPunct(n)) || inRanges(PUNCT, n)) {
          words.push({cps: [n], starts: [i], ends: [i + width]});  // alone
          word = null;
        } else {
          if (word === null) { word = {cps: [], starts: [], ends: []}; words.push(word); }
          word.cps.push(n);
          word.starts.push(i);
          word.ends.push(i + width);
        }
      }
      i += width;
    }
  }

  /** WordPiece of one word: greedy longest match first; [UNK] for the whole word. */
  _pieces(word, out) {
    const cps = word.cps;
    const n = cps.length;
    let start = 0;
    let pieces = [];
    if (n <= this.maxChars) {
      while (start < n) {
        let end = n;
        let found = null;
        while (start < end) {
          let piece = String.fromCodePoint.apply(null, cps.slice(start, end));
          if (start > 0) piece = this.prefix + piece;
          if (this.ids.has(piece)) { found = piece; break; }
          end -= 1;
        }
        if (found === null) { pieces = null; break; }
        pieces.push([found, start, end]);
        start = end;
      }
    } else {
      pieces = null;
    }
    if (pieces === null) {  // too long, or a character with no piece: one [UNK]
      out.push([this.unk, word.starts[0], word.ends[n - 1]]);
      return;
    }
    for (let p = 0; p < pieces.length; p++) {
      out.push([pieces[p][0], word.starts[pieces[p][1]], word.ends[pieces[p][2] - 1]]);
    }
  }

  /**
   * Every token of `text`, [CLS] first and [SEP] last, as tokenizers' encode gives them.
   *
   * @param {string} text  any string (no limit here: see Model.tokenize)
   * @returns {{tokens: string[], ids: Int32Array, offsets: number[][]}}  T of each;
   *   offsets[t] = [start, end) in UTF-16 units of `text` ([0, 0] for [CLS] and [SEP]).
   */
  encode(text) {
    const triples = [[this.cls, 0, 0]];
    let at = 0;
    let match;
    if (this.special) {
      this.special.lastIndex = 0;
      while ((match = this.special.exec(text)) !== null) {
        this._stretch(text, at, match.index, triples);
        triples.push([match[0], match.index, match.index + match[0].length]);
        at = match.index + match[0].length;
      }
    }
    this._stretch(text, at, text.length, triples);
    triples.push([this.sep, 0, 0]);
    const T = triples.length;
    const tokens = new Array(T);
    const ids = new Int32Array(T);
    const offsets = new Array(T);
    for (let t = 0; t < T; t++) {
      tokens[t] = triples[t][0];
      ids[t] = this.ids.get(triples[t][0]);
      offsets[t] = [triples[t][1], triples[t][2]];
    }
    return {tokens, ids, offsets};
  }

  _stretch(text, from, to, out) {
    if (from >= to) return;
    const words = [];
    this._words(text, from, to, words);
    for (let w = 0; w < words.length; w++) this._pieces(words[w], out);
  }
}

function isAsciiPunct(c) {  // Rust's char::is_ascii_punctuation
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
    (c >= 123 && c <= 126);
}

/** Whether code point c is split off as a token of its own by the pre-tokenizer. */
function isPunctuation(c) { return (c < 128 && isAsciiPunct(c)) || inRanges(PUNCT, c); }

export {LAB_MAX_TOKENS, MAX_TEXT_CHARS, MiniLMError, Tokenizer, normalizeCodePoint, isPunctuation};
