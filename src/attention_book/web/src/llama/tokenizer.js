/*
 * tokenizer.js: the byte-level BPE tokenizer a GGUF file carries (tokenizer.ggml.model =
 * "gpt2"), and its chat template, as Hugging Face's `tokenizers` and transformers apply them.
 *
 *   const tok = new Tokenizer(file.metadata);     // from readGGUF(bytes).metadata
 *   tok.encode("Hello, world!")                   // [19556, 28, 905, 17]
 *   tok.decode([19556, 28])                       // "Hello,"
 *   tok.chat([{role: "user", content: "Hi"}])     // the template's text, then encode() it
 *
 * Encoding, in order:
 *   1. special tokens: the text is cut at every control token written in it
 *      ("<|im_start|>", token type 3; user-defined tokens, type 4, too), longest first;
 *      those become their ids and the pieces between them are encoded alone;
 *   2. the pre-tokenizer the file names (tokenizer.ggml.pre): "smollm" and its kin
 *      split each digit off (Digits(individual_digits=True)), then GPT-2's pattern splits
 *      words, numbers, punctuation and spaces (PRE_TOKENIZERS below);
 *   3. each piece's UTF-8 bytes written as GPT-2's printable characters (byteChars), then
 *      merged pairwise, always the pair of lowest rank in the file's merge list, until no
 *      listed pair is left (BPE, Sennrich et al. 2016; GPT-2's byte-level form).
 * Decoding maps the characters back to bytes and reads them as UTF-8.
 *
 * Errors are TokenizerError (a GGUF without a tokenizer, one of another kind, a pre-tokenizer
 * not listed here, a token id outside the vocabulary).
 */

import {Template} from "@huggingface/jinja";

/** A tokenizer the book cannot build, or an id it cannot decode. */
export class TokenizerError extends Error {
  constructor(message) {
    super(message);
    this.name = "TokenizerError";
    this.code = "tokenizer";
  }
}

// White space as Unicode's White_Space property, which Python's and Rust's \s follow;
// JavaScript's \s differs (it takes U+FEFF and leaves out U+0085), so it is written out.
const WS = "\\t\\n\\v\\f\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
// GPT-2's pattern (tokenizers' ByteLevel pre-tokenizer, use_regex=True):
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// contractions, letters with one optional leading space, numbers likewise, other symbols
// likewise, then runs of spaces (a run before a word leaves its last space to the word).
const GPT2 = new RegExp(`'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^${WS}\\p{L}\\p{N}]+|[${WS}]+(?![^${WS}])|[${WS}]+`, "gu");
// Llama 3's (tokenizer.ggml.pre = "llama-bpe"): case-blind contractions, numbers of at most
// three digits, newlines kept apart.
const LLAMA3 = new RegExp("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|" +
  `\\p{N}{1,3}| ?[^${WS}\\p{L}\\p{N}]+[\\r\\n]*|[${WS}]*[\\r\\n]+|[${WS}]+(?![^${WS}])|[${WS}]+`, "gu");
const DIGIT = /\p{N}/u;

/** Each digit alone (tokenizers' Digits(individual_digits=True)); the rest kept in runs. */
const splitDigits = (text) => {
  const out = [];
  let run = "";
  for (const ch of text) {
    if (DIGIT.test(ch)) {
      if (run) out.push(run);
      out.push(ch);
      run = "";
    } else {
      run += ch;
    }
  }
  if (run) out.push(run);
  return out;
};

const byPattern = (pattern) => (text) => text.match(pattern) ?? [];

/** tokenizer.ggml.pre -> text -> pieces (llama.cpp's llama-vocab.cpp groups them the same). */
export const PRE_TOKENIZERS = new Map([
  ...["smollm", "starcoder", "refact", "codeshell", "command-r", "exaone", "minerva"].map(
    (name) => [name, (text) => splitDigits(text).flatMap(byPattern(GPT2))]),
  ...["default", "gpt-2", "gpt2", "olmo", "jina-es", "jina-de", "jina-v2-es", "jina-v2-de",
    "phi-2", "poro-chat", "viking"].map((name) => [name, byPattern(GPT2)]),
  ...["llama-bpe", "llama3", "falcon3", "smaug-bpe", "pixtral"].map((name) => [name, byPattern(LLAMA3)]),
]);

/** GPT-2's bytes_to_unicode: byte -> a printable character (printable bytes keep theirs). */
export const byteChars = () => {
  const keep = (b) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const chars = new Array(256);
  let next = 256;
  for (let b = 0; b < 256; b++) chars[b] = String.fromCharCode(keep(b) ? b : next++);
  return chars;
};

const utf8 = new TextEncoder();

/** A binary min-heap of [rank, position, ...] entries, ordered by rank then position. */
class MinHeap {
  constructor() { this.items = []; }
  get size() { return this.items.length; }
  static less(a, b) { return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]); }
  push(item) {
    const h = this.items;
    h.push(item);
    for (let i = h.length - 1; i > 0;) {
      const up = (i - 1) >> 1;
      if (!MinHeap.less(h[i], h[up])) break;
      [h[i], h[up]] = [h[up], h[i]];
      i = up;
    }
  }
  pop() {
    const h = this.items, top = h[0], last = h.pop();
    if (h.length) {
      h[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < h.length && MinHeap.less(h[l], h[m])) m = l;
        if (r < h.length && MinHeap.less(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
}
const fromUtf8 = new TextDecoder("utf-8");

export class Tokenizer {
  /**
   * @param {Object<string, *>} metadata  a GGUF file's metadata (readGGUF(bytes).metadata)
   * @throws {TokenizerError} no tokenizer, another kind, or an unlisted pre-tokenizer
   */
  constructor(metadata) {
    const kind = metadata["tokenizer.ggml.model"];
    if (kind === undefined) throw new TokenizerError("this GGUF file has no tokenizer (tokenizer.ggml.model)");
    if (kind !== "gpt2") {
      throw new TokenizerError(`this GGUF file's tokenizer is "${kind}"` +
        (kind === "llama" ? " (SentencePiece, as in TinyLlama and Llama 2)" : "") +
        "; the book reads byte-level BPE (tokenizer.ggml.model = \"gpt2\"), as in SmolLM2 and Llama 3");
    }
    const pre = metadata["tokenizer.ggml.pre"] ?? "default";
    this.preTokenize = PRE_TOKENIZERS.get(pre);
    if (!this.preTokenize) {
      throw new TokenizerError(`this GGUF file's pre-tokenizer "${pre}" is not one the book knows ` +
        `(${[...PRE_TOKENIZERS.keys()].join(", ")})`);
    }
    this.pre = pre;
    /** @type {string[]} the vocabulary, id -> token (byte characters for ordinary tokens) */
    this.tokens = metadata["tokenizer.ggml.tokens"];
    this.ids = new Map(this.tokens.map((token, id) => [token, id]));
    const types = metadata["tokenizer.ggml.token_type"] ?? [];
    /** @type {Map<string, number>} "a b" -> rank (lower merges first) */
    this.ranks = new Map((metadata["tokenizer.ggml.merges"] ?? []).map((pair, rank) => [pair, rank]));
    // control (3) and user-defined (4) tokens are matched in the text, longest first
    this.special = this.tokens.filter((_, id) => types[id] === 3 || types[id] === 4)
      .sort((a, b) => b.length - a.length);
    this.specialIds = new Set(this.special.map((token) => this.ids.get(token)));
    const escaped = this.special.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    this.specialPattern = escaped.length ? new RegExp(`(${escaped.join("|")})`) : null;
    this.bos = metadata["tokenizer.ggml.bos_token_id"];
    this.eos = metadata["tokenizer.ggml.eos_token_id"];
    this.addBos = metadata["tokenizer.ggml.add_bos_token"] ?? false;
    this.template = metadata["tokenizer.chat_template"] ?? null;
    this.chars = byteChars();
    this.bytesOf = new Map(this.chars.map((ch, b) => [ch, b]));
    this.cache = new Map();
  }

  /**
   * The BPE merges of one pre-tokenized piece: its tokens' ids. The pair of lowest rank is
   * merged first, the leftmost of equal ranks first (tokenizers' word merges): a heap of the
   * candidate pairs over a linked list of symbols, so a long piece costs n log n, not n^2
   * (16,000 random letters: 16.7 s with a rescan a merge).
   */
  bpe(piece) {
    const known = this.cache.get(piece);
    if (known) return known;
    const sym = Array.from(utf8.encode(piece), (b) => this.chars[b]);
    const n = sym.length, next = Int32Array.from(sym, (_, i) => i + 1), prev = Int32Array.from(sym, (_, i) => i - 1);
    const version = new Int32Array(n);
    next[n - 1] = -1;
    const heap = new MinHeap();
    const consider = (i) => {  // the pair starting at symbol i, if the merges list it
      const j = next[i];
      if (i < 0 || j < 0) return;
      const rank = this.ranks.get(sym[i] + " " + sym[j]);
      if (rank !== undefined) heap.push([rank, i, j, version[i], version[j]]);
    };
    for (let i = 0; i + 1 < n; i++) consider(i);
    while (heap.size) {
      const [, i, j, vi, vj] = heap.pop();
      if (sym[i] === null || next[i] !== j || version[i] !== vi || version[j] !== vj) continue;  // stale
      sym[i] += sym[j];
      sym[j] = null;
      version[i]++;
      next[i] = next[j];
      if (next[j] >= 0) prev[next[j]] = i;
      consider(prev[i]);
      consider(i);
    }
    const ids = [];
    for (let i = 0; i >= 0 && i < n; i = next[i]) {
      const id = this.ids.get(sym[i]);
      if (id === undefined) throw new TokenizerError(`the vocabulary lacks the token "${sym[i]}" its merges make`);
      ids.push(id);
    }
    if (this.cache.size < 50000) this.cache.set(piece, ids);
    return ids;
  }

  /**
   * Token ids of `text`, special tokens written in it included (no BOS is added unless the
   * file asks for one: tokenizer.ggml.add_bos_token).
   * @param {string} text
   * @returns {number[]}
   */
  encode(text) {
    if (typeof text !== "string") throw new TokenizerError(`expected text, got ${typeof text}`);
    const ids = this.addBos && this.bos !== undefined ? [this.bos] : [];
    const parts = this.specialPattern ? text.split(this.specialPattern) : [text];
    parts.forEach((part, i) => {
      if (i % 2 === 1) ids.push(this.ids.get(part));
      else if (part) for (const piece of this.preTokenize(part)) ids.push(...this.bpe(piece));
    });
    return ids;
  }

  /** The bytes of token `id` (a special token's text as UTF-8). @returns {Uint8Array} */
  tokenBytes(id) {
    const token = this.tokens[id];
    if (!Number.isInteger(id) || token === undefined) {
      throw new TokenizerError(`token id ${id} is outside the vocabulary (0 to ${this.tokens.length - 1})`);
    }
    if (this.specialIds.has(id)) return utf8.encode(token);
    return Uint8Array.from(token, (ch) => this.bytesOf.get(ch) ?? 63);
  }

  /**
   * The text of `ids` (bytes that do not form UTF-8 read as U+FFFD).
   * @param {number[]} ids
   * @returns {string}
   */
  decode(ids) {
    const parts = Array.from(ids, (id) => this.tokenBytes(id));
    const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) { bytes.set(p, at); at += p.length; }
    return fromUtf8.decode(bytes);
  }

  /**
   * The chat template's text for `messages` ([{role, content}]), with the assistant's turn
   * opened (add_generation_prompt), as transformers' apply_chat_template renders it.
   * @param {{role: string, content: string}[]} messages
   * @returns {string}
   */
  chat(messages, {addGenerationPrompt = true} = {}) {
    if (!this.template) throw new TokenizerError("this GGUF file declares no chat template (tokenizer.chat_template)");
    try {
      this.compiled ??= new Template(this.template);
      return this.compiled.render({
        messages, add_generation_prompt: addGenerationPrompt,
        bos_token: this.bos === undefined ? "" : this.tokens[this.bos],
        eos_token: this.eos === undefined ? "" : this.tokens[this.eos],
      });
    } catch (err) {
      throw new TokenizerError(`this GGUF file's chat template could not be rendered: ${err.message}`);
    }
  }
}
