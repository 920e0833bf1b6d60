/*
 * sample.js: the next token from a row of logits, greedy or sampled, as the book's Python
 * does it (attention_book.decoding: next_token, top_k_top_p, sampling_distribution), with
 * numpy's default_rng ported to JavaScript (../shared/rng.js): the same seed draws the same
 * uniform numbers, so the same logits give the same tokens.
 *
 *   const pick = sampler({temperature: 0.8, topK: 50, topP: 0.95, seed: 0});
 *   pick(logits)            // a token id; one uniform draw per sampled token
 *   sampler()(logits)       // greedy: the argmax (the first one on a tie)
 *
 * A draw: z = logits / T; top-k keeps the logits at least the k-th largest (ties stay);
 * top-p sorts what is left by increasing logit (stable) and drops a token while the
 * cumulative probability up to it is at most 1 - p (the most likely token always stays);
 * p = softmax(z); u = rng.random(); the token is the first whose cumulative probability
 * exceeds u (at most the last token with any probability). All in double precision.
 */

import {defaultRng} from "../shared/rng.js";

/** A RangeError with a `code` the page shows a message for. */
export const inputError = (code, message) => Object.assign(new RangeError(message), {code});

const number = (value, what, ok, rule) => {
  if (typeof value !== "number" || !Number.isFinite(value) || !ok(value)) {
    throw inputError("sampling", `${what} must be ${rule}, got ${String(value)}`);
  }
  return value;
};

/** Refuse logits with a NaN (a broken model's), which no rule can choose from. */
const finite = (logits) => {
  for (let i = 0; i < logits.length; i++) {
    if (Number.isNaN(logits[i])) throw inputError("nan", `the logits hold NaN (token ${i}): the model's numbers broke`);
  }
};

/** softmax of a row of numbers (-Infinity allowed: probability 0), in double precision. */
export const softmax = (z) => {
  let max = -Infinity;
  for (let i = 0; i < z.length; i++) if (z[i] > max) max = z[i];
  if (max === -Infinity) throw inputError("nan", "a row of logits is all -inf: no token is possible");
  const p = new Float64Array(z.length);
  let sum = 0;
  for (let i = 0; i < z.length; i++) { p[i] = Math.exp(z[i] - max); sum += p[i]; }
  for (let i = 0; i < z.length; i++) p[i] /= sum;
  return p;
};

/**
 * Logits (already divided by the temperature) with every token outside the top k, or
 * outside the nucleus p, set to -Infinity (decoding.top_k_top_p).
 * @param {ArrayLike<number>} z  (V,)
 * @param {number|null} topK  >= 1, or null
 * @param {number|null} topP  in (0, 1], or null
 * @returns {Float64Array} (V,)
 */
export const topKTopP = (z, topK = null, topP = null) => {
  const out = Float64Array.from(z);
  if (topK !== null && topK < out.length) {
    const kth = Float64Array.from(out).sort()[out.length - topK];
    for (let i = 0; i < out.length; i++) if (out[i] < kth) out[i] = -Infinity;
  }
  if (topP !== null && topP < 1) {
    // increasing, stable: equal logits keep their index order, as numpy's kind="stable"
    const order = Array.from(out.keys()).sort((a, b) => out[a] - out[b] || a - b);
    const probs = softmax(order.map((i) => out[i]));
    let cum = 0;
    for (let r = 0; r < order.length - 1; r++) {
      cum += probs[r];
      if (cum <= 1 - topP) out[order[r]] = -Infinity;
    }
  }
  return out;
};

/**
 * The distribution a token is drawn from: softmax(topKTopP(logits / T)).
 * @returns {Float64Array} (V,), summing to 1
 */
export const samplingDistribution = (logits, {temperature = 1, topK = null, topP = null} = {}) => {
  const z = Float64Array.from(logits, (v) => v / temperature);
  return softmax(topK === null && topP === null ? z : topKTopP(z, topK, topP));
};

/**
 * A function logits -> token id, greedy (temperature 0) or sampled with its own seeded
 * generator (np.random.default_rng(seed)): call it once per step, in order.
 *
 * @param {{temperature?: number, topK?: number|null, topP?: number|null, seed?: number|null}} [options]
 * @returns {function(ArrayLike<number>): number}
 * @throws {RangeError} (code "sampling") a temperature < 0, top-k < 1, top-p outside (0, 1], or sampling without a seed
 */
export const sampler = ({temperature = 0, topK = null, topP = null, seed = null} = {}) => {
  number(temperature, "temperature", (t) => t >= 0, "a finite number >= 0 (0 = greedy)");
  if (topK !== null) number(topK, "top_k", (k) => Number.isInteger(k) && k >= 1, "a whole number >= 1");
  if (topP !== null) number(topP, "top_p", (p) => p > 0 && p <= 1, "a number in (0, 1] (1 keeps every token)");
  if (temperature === 0) {
    return (logits) => {
      finite(logits);
      let best = 0;
      for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
      return best;
    };
  }
  if (seed === null) throw inputError("sampling", "sampling (temperature > 0) needs a seed, so that the text can be generated again");
  const g = defaultRng(seed);
  return (logits) => {
    finite(logits);
    const p = samplingDistribution(logits, {temperature, topK, topP});
    const u = g.random(1)[0];
    let cum = 0, chosen = 0, last = 0;
    for (let i = 0; i < p.length; i++) {
      cum += p[i];
      if (cum <= u) chosen = i + 1;
      if (p[i] > 0) last = i;
    }
    return Math.min(chosen, last);
  };
};

/**
 * The k most likely tokens of a distribution, most likely first.
 * @param {ArrayLike<number>} p  (V,) probabilities
 * @returns {{id: number, p: number}[]}
 */
export const topTokens = (p, k = 10) => {
  const best = [];
  for (let i = 0; i < p.length; i++) {
    if (best.length < k || p[i] > best[best.length - 1].p) {
      best.push({id: i, p: p[i]});
      best.sort((a, b) => b.p - a.p || a.id - b.id);
      if (best.length > k) best.pop();
    }
  }
  return best;
};
