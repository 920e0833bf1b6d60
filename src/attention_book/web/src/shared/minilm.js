/*
 * minilm.js: all-MiniLM-L6-v2 in the reader's browser, with no kernel and no network
 * (chapter 9). Two parts, both checked against Python in tests/test_web_minilm.py:
 *
 *   1. BERT's WordPiece tokenizer, equal to the model's tokenizer.json run by the Rust
 *      `tokenizers` (BertNormalizer, BertPreTokenizer, WordPiece, [CLS] ... [SEP], no
 *      padding, no truncation).
 *   2. The encoder's forward pass, returning every layer's attention weights
 *      (n_layers, h, T, T) and hidden states (n_layers + 1, T, d), as the package's
 *      attention_book.pretrained.MiniLM computes them.
 *
 *   const model = minilm.load(AttentionBook.minilmWeights);  // a page with the weights
 *   const model = minilm.load(weights);    // import minilm from "./minilm.js"
 *   const run = model.run("The animal didn't cross the street.", {maxTokens: 128});
 *   run.tokens            // ["[CLS]", "the", "animal", ..., "[SEP]"]        (T,)
 *   run.attention         // Float32Array, (n_layers, h, T, T) = (6, 12, T, T), C order
 *   run.hidden            // Float32Array, (n_layers + 1, T, d) = (7, T, 384)
 *   run.valueNorms        // Float32Array, (n_layers, h, T): ||f_h(x_j)||, what head h
 *                         // writes from token j through W^O (Kobayashi et al. 2020)
 *   model.attentionAt(run, layer, head, q)   // one query's row, a (T,) view
 *
 * The weights come from `minilm-weights.js`, written by
 * attention_book.web_export.export_browser_weights: a classic script that sets
 * AttentionBook.minilmWeights = {config, tokenizer, dtype, tensors}, each tensor base64 of
 * int8 (float32 scales per 64 numbers of a row, i.e. of an output channel or a token,
 * and per column), float16 or float32.
 *
 * Numbers. Weights are decoded to Float32Array once; products are summed in double
 * precision (JavaScript's numbers) and stored as float32: with float32 weights the maps
 * are within 1.6e-6 of numpy's float32 model (the tests allow 1e-5). Matrices are stored as PyTorch's nn.Linear keeps
 * them, W^T:(out, in), so that each output is a dot product of two contiguous rows; the
 * book's y = x @ W + b with W:(in, out) is y[i, j] = b[j] + sum_k x[i, k] W^T[j, k].
 * Speed (benchmarks/browser_minilm.py, 2-core VM, load average 3.5-4.5): a forward pass
 * costs about 21 MFLOP a token; 32 word pieces (T = 34) took 250 ms in chromium and
 * 400 ms in Node 20, 128 (T = 130) 1.05 s and 1.3 s. The int8 weights file (32.5 MB) ran
 * as a script in 560 ms in chromium and decoded in 300 ms.
 *
 * The parts live by concern: wordpiece.js (the tokenizer, with its measured tables in
 * bert-tables.js), tensors.js (the weights file's tensors decoded), encoder-math.js
 * (linear, LayerNorm, GELU) and here the model. An ES module (its default export, the
 * parts' API in one object), bundled by build.mjs into the pretrained lab's classic script
 * and into the Worker's (entries/minilm-worker.js).
 */

import {LAB_MAX_TOKENS, MAX_TEXT_CHARS, MiniLMError, Tokenizer, isPunctuation, normalizeCodePoint}
  from "./wordpiece.js";
import {decodeBase64, decodeTensor} from "./tensors.js";
import {erf, gelu, layerNorm, linear} from "./encoder-math.js";

const LAYER_TENSORS = ["W_q", "b_q", "W_k", "b_k", "W_v", "b_v", "W_o", "b_o",
  "norm1.gamma", "norm1.beta", "W_1", "b_1", "W_2", "b_2", "norm2.gamma", "norm2.beta"];

/**
 * all-MiniLM-L6-v2 (or any post-LN BERT encoder with GELU) from a weights object.
 * The constructor reads the config and the vocabulary; prepare() decodes the tensors.
 *
 * @param {object} weights  AttentionBook.minilmWeights: {config, tokenizer, tensors}
 */
class Model {
  constructor(weights) {
    if (!weights || !weights.config || !weights.tokenizer) {
      throw MiniLMError("bad-weights", "no model weights: load minilm-weights.js first " +
        "(AttentionBook.minilmWeights is missing)");
    }
    const cfg = weights.config;
    this.config = cfg;
    this.dtype = weights.dtype;
    this.nLayers = cfg.num_hidden_layers;
    this.h = cfg.num_attention_heads;
    this.d = cfg.hidden_size;
    this.dK = this.d / this.h;
    this.dFF = cfg.intermediate_size;
    this.maxPositions = cfg.max_position_embeddings;
    this.eps = cfg.layer_norm_eps;
    this.tokenizer = new Tokenizer(weights.tokenizer);
    this._stored = weights.tensors;
    this.ready = false;
  }

  /**
   * Decode the tensors (base64, dequantisation) into Float32Arrays: the slow part of
   * loading, done once, by load() or by the first forward(). tokenize() never needs it.
   */
  prepare() {
    if (this.ready) return this;
    const stored = this._stored;
    const self = this;
    function get(name) {
      if (!stored || !stored[name]) {
        throw MiniLMError("bad-weights", "the weights file lacks the tensor " + name);
      }
      return decodeTensor(name, stored[name]).data;
    }
    this.word = get("embeddings.word");  // (V, d)
    this.position = get("embeddings.position");  // (max_positions, d)
    this.tokenType = get("embeddings.token_type");  // (d,): segment A
    this.embNorm = [get("embeddings.norm.gamma"), get("embeddings.norm.beta")];  // (d,) x 2
    this.layers = [];
    for (let l = 0; l < this.nLayers; l++) {
      const layer = {};
      LAYER_TENSORS.forEach((n) => { layer[n] = get("layers." + l + "." + n); });
      self.layers.push(layer);
    }
    this._stored = null;  // the base64 strings can go
    this.ready = true;
    return this;
  }

  /**
   * Tokens of a text the model can read, with [CLS] and [SEP].
   *
   * @param {string} text
   * @param {object} [options]  maxTokens: the most tokens allowed (default the model's
   *   max_position_embeddings, 512); cut: true to keep the text's beginning that fits,
   *   cut after a whole word, instead of refusing a longer text.
   * @returns {{tokens, ids, offsets, total, kept, text}}  total: tokens of the whole text;
   *   kept: tokens used ([CLS], pieces, [SEP]); text: the part of the text used.
   * @throws {MiniLMError} not a string, empty, no readable character, too long.
   */
  tokenize(text, options) {
    const maxTokens = (options && options.maxTokens) || this.maxPositions;
    if (!(maxTokens >= 3 && maxTokens <= this.maxPositions && maxTokens % 1 === 0)) {
      throw MiniLMError("bad-ids", "maxTokens must be a whole number in 3.." +
        this.maxPositions + ", got " + maxTokens);
    }
    if (typeof text !== "string") {
      throw MiniLMError("not-text", "text must be a string, got " + typeof text);
    }
    if (!text.trim()) {
      throw MiniLMError("empty", "the text is empty (or only spaces): type at least one word");
    }
    if (text.length > MAX_TEXT_CHARS) {
      throw MiniLMError("too-long-text", "the text is " + text.length + " characters " +
        "long; the limit is " + MAX_TEXT_CHARS);
    }
    const enc = this.tokenizer.encode(text);
    const T = enc.ids.length;
    if (T <= 2) {
      throw MiniLMError("no-tokens", "the text holds no token the model can read (only " +
        "control or formatting characters): type at least one word");
    }
    enc.total = T;
    enc.kept = T;
    enc.text = text;
    if (T > maxTokens) {
      if (!(options && options.cut)) {
        throw MiniLMError("too-many-tokens", "the text is " + T + " tokens long (" +
          (T - 2) + " word pieces plus [CLS] and [SEP]), but the limit is " + maxTokens +
          " tokens: shorten it to at most " + (maxTokens - 2) + " word pieces");
      }
      let keep = maxTokens - 2;  // index of the last piece kept; [SEP] goes after it
      while (keep > 1 && enc.tokens[keep + 1].indexOf(this.tokenizer.prefix) === 0) {
        keep -= 1;  // a word must not lose its last pieces
      }
      enc.text = text.slice(0, enc.offsets[keep][1]);
      enc.tokens = enc.tokens.slice(0, keep + 1).concat([this.tokenizer.sep]);
      enc.offsets = enc.offsets.slice(0, keep + 1).concat([[0, 0]]);
      const ids = new Int32Array(keep + 2);
      ids.set(enc.ids.subarray(0, keep + 1));
      ids[keep + 1] = enc.ids[T - 1];
      enc.ids = ids;
      enc.kept = keep + 2;
    }
    return enc;
  }

  /**
   * The forward pass on token ids.
   *
   * @param {Int32Array|number[]} ids  (T,), T <= max_position_embeddings
   * @returns {{T, attention: Float32Array, hidden: Float32Array, valueNorms: Float32Array,
   *   shape: object}}
   *   attention (n_layers, h, T, T): [l, i, q, k] is how much token q attends to token k
   *   in head i of layer l (rows sum to 1); hidden (n_layers + 1, T, d): the embeddings'
   *   output, then each layer's; valueNorms (n_layers, h, T): [l, i, j] = ||f_i(x_j)||,
   *   f_i(x_j) = (x_j W^V + b^V)_i W^O_i, the length of what head i of layer l writes from
   *   token j before its weight scales it (heads.value_writes, pretrained.MiniLM.weighted_norms).
   */
  forward(ids) {
    this.prepare();
    const T = ids.length;
    const d = this.d, h = this.h, dK = this.dK, dFF = this.dFF, L = this.nLayers;
    const V = this.word.length / d;
    if (!(T >= 1 && T <= this.maxPositions)) {
      throw MiniLMError("bad-ids", T + " ids, but the model reads 1.." + this.maxPositions);
    }
    for (let t = 0; t < T; t++) {
      if (!(ids[t] >= 0 && ids[t] < V && ids[t] % 1 === 0)) {
        throw MiniLMError("bad-ids", "ids must be whole numbers in 0.." + (V - 1) +
          ", got " + ids[t]);
      }
    }
    const attention = new Float32Array(L * h * T * T);  // (L, h, T, T)
    const hidden = new Float32Array((L + 1) * T * d);  // (L + 1, T, d)
    const valueNorms = new Float32Array(L * h * T);  // (L, h, T)
    const x = new Float32Array(T * d);  // (T, d)
    for (let t = 0; t < T; t++) {  // word[ids] + position[0..T-1] + token_type[0]: (T, d)
      for (let j = 0; j < d; j++) {
        x[t * d + j] = this.word[ids[t] * d + j] + this.position[t * d + j] + this.tokenType[j];
      }
    }
    layerNorm(x, T, d, this.embNorm[0], this.embNorm[1], this.eps);
    hidden.set(x, 0);
    const q = new Float32Array(T * d), k = new Float32Array(T * d), v = new Float32Array(T * d);
    const context = new Float32Array(T * d), out = new Float32Array(T * d);
    const inner = new Float32Array(T * dFF);
    const row = new Float64Array(T);
    const scale = 1 / Math.sqrt(dK);
    for (let l = 0; l < L; l++) {
      const p = this.layers[l];
      linear(x, T, d, p.W_q, p.b_q, d, q);  // (T, d) @ (d, d) -> (T, d)
      linear(x, T, d, p.W_k, p.b_k, d, k);  // (T, d) @ (d, d) -> (T, d)
      linear(x, T, d, p.W_v, p.b_v, d, v);  // (T, d) @ (d, d) -> (T, d)
      if (!p.gram) p.gram = headGrams(p.W_o, d, h, dK);  // once a layer
      writeNorms(v, T, d, h, dK, p.gram, valueNorms, l * h * T);
      for (let head = 0; head < h; head++) {
        const c0 = head * dK;  // head i reads columns i*d_k .. (i+1)*d_k of q, k, v
        const base = (l * h + head) * T * T;  // attention[l, head]: (T, T)
        for (let i = 0; i < T; i++) {
          // scores[i, :] = q_i k^T / sqrt(d_k): (d_k,) @ (d_k, T) -> (T,)
          let max = -Infinity;
          for (let jj = 0; jj < T; jj++) {
            let s = 0;
            for (let c = 0; c < dK; c++) s += q[i * d + c0 + c] * k[jj * d + c0 + c];
            s *= scale;
            row[jj] = s;
            if (s > max) max = s;
          }
          let sum = 0;  // softmax over the keys, shifted by the row's max
          for (let jj = 0; jj < T; jj++) { row[jj] = Math.exp(row[jj] - max); sum += row[jj]; }
          for (let jj = 0; jj < T; jj++) attention[base + i * T + jj] = row[jj] / sum;
          // context[i, head cols] = A[i, :] @ v[:, head cols]: (T,) @ (T, d_k) -> (d_k,)
          for (let c = 0; c < dK; c++) {
            let acc = 0;
            for (let jj = 0; jj < T; jj++) acc += attention[base + i * T + jj] * v[jj * d + c0 + c];
            context[i * d + c0 + c] = acc;
          }
        }
      }
      linear(context, T, d, p.W_o, p.b_o, d, out);  // (T, d) @ (d, d) -> (T, d)
      for (let i = 0; i < T * d; i++) x[i] += out[i];  // residual
      layerNorm(x, T, d, p["norm1.gamma"], p["norm1.beta"], this.eps);  // post-LN
      linear(x, T, d, p.W_1, p.b_1, dFF, inner);  // (T, d) @ (d, d_ff) -> (T, d_ff)
      gelu(inner);
      linear(inner, T, dFF, p.W_2, p.b_2, d, out);  // (T, d_ff) @ (d_ff, d) -> (T, d)
      for (let i = 0; i < T * d; i++) x[i] += out[i];  // residual
      layerNorm(x, T, d, p["norm2.gamma"], p["norm2.beta"], this.eps);
      hidden.set(x, (l + 1) * T * d);
    }
    return {
      T, attention, hidden, valueNorms,
      shape: {attention: [L, h, T, T], hidden: [L + 1, T, d], valueNorms: [L, h, T]},
    };
  }

  /**
   * Tokenize and run: model.run(text, {maxTokens: 128, cut: true}).
   * @returns the tokenize result with forward's attention, hidden and shape.
   */
  run(text, options) {
    const enc = this.tokenize(text, options);
    const result = this.forward(enc.ids);
    enc.T = result.T;
    enc.attention = result.attention;
    enc.hidden = result.hidden;
    enc.valueNorms = result.valueNorms;
    enc.shape = result.shape;
    return enc;
  }

  /** One query's attention row in head `head` of layer `layer`: a (T,) view. */
  attentionAt(run, layer, head, query) {
    const T = run.T;
    const start = ((layer * this.h + head) * T + query) * T;
    return run.attention.subarray(start, start + T);
  }
}

/**
 * The Gram matrices G_i = W^O_i (W^O_i)^T, (d_k, d_k) for each head i of one layer, where
 * W^O_i:(d_k, d) are the d_k rows of W^O that multiply head i's output. W^O is stored
 * transposed, Wt:(d, d_in), so G_i[a, b] = sum_o Wt[o, i d_k + a] Wt[o, i d_k + b].
 * @returns {Float64Array} (h, d_k, d_k)
 */
function headGrams(Wt, d, h, dK) {
  const G = new Float64Array(h * dK * dK);
  for (let i = 0; i < h; i++) {
    for (let a = 0; a < dK; a++) {
      for (let b = a; b < dK; b++) {
        let s = 0;
        for (let o = 0; o < d; o++) s += Wt[o * d + i * dK + a] * Wt[o * d + i * dK + b];
        G[(i * dK + a) * dK + b] = G[(i * dK + b) * dK + a] = s;
      }
    }
  }
  return G;
}

/**
 * ||f_i(x_j)|| for every head i and token j of one layer: f_i(x_j) = v_j[i] W^O_i, where
 * v_j[i] are head i's d_k columns of token j's value and W^O_i the d_k rows of W^O that
 * multiply them. ||f||^2 = v_j[i] G_i v_j[i]^T with G_i from headGrams: d_k^2 products a
 * head and token instead of d_k d (12 times fewer; about 0.07 MFLOP a token for the 6
 * layers, 0.3 % of the forward pass).
 * @param {Float32Array} v (T, d) the layer's values, x W^V + b^V
 * @param {Float64Array} G (h, d_k, d_k) headGrams of the layer's W^O
 * @param {Float32Array} out written at out[at + i T + j]: (h, T)
 */
function writeNorms(v, T, d, h, dK, G, out, at) {
  for (let i = 0; i < h; i++) {
    const c0 = i * dK, g0 = i * dK * dK;
    for (let j = 0; j < T; j++) {
      let sq = 0; const vj = j * d + c0;
      for (let a = 0; a < dK; a++) {
        let row = 0; const ga = g0 + a * dK;
        for (let b = 0; b < dK; b++) row += G[ga + b] * v[vj + b];
        sq += v[vj + a] * row;
      }
      out[at + i * T + j] = Math.sqrt(Math.max(sq, 0));
    }
  }
}

/** A model, decoded, from the weights object (default: AttentionBook.minilmWeights). */
function load(weights) {
  if (weights === undefined && typeof globalThis !== "undefined" &&
      globalThis.AttentionBook) {
    weights = globalThis.AttentionBook.minilmWeights;
  }
  return new Model(weights).prepare();
}

// decodeBase64 ... erf: exposed for the tests and the benchmark
export {load, Model, Tokenizer, MiniLMError, LAB_MAX_TOKENS, MAX_TEXT_CHARS, decodeBase64, decodeTensor,
  normalizeCodePoint, writeNorms, headGrams, isPunctuation, erf};

