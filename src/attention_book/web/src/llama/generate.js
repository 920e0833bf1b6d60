/*
 * generate.js: the decoding loop (attention_book.decoding.generate's twin), one step at a
 * time, with what the lab draws at each step.
 *
 *   for (const step of generate(model, ids, {maxNew: 32, temperature: 0})) { ... }
 *
 * It yields first the prompt, then each new token:
 *   {kind: "prompt", ids, attention (L, h, T, T), hidden, ms}
 *   {kind: "token", step, id, piece, text, p, top, drawn, attention (L, h, 1, S), hidden, ends, ms}
 * where a token's attention is its own row as the query (how it looks back at the prompt
 * and at the tokens before it, itself included), computed when it is fed to the model;
 * `top` are the model's 10 most likely tokens at that step (softmax of the logits, T = 1)
 * and `p` the chosen token's probability in the distribution it was drawn from, `drawn`
 * that distribution's most likely tokens when sampled (null when greedy); `ends` is
 * true for the stop token, the last step.
 * A generator, so that a Worker can stop between any two steps (worker.js).
 */

import {inputError, sampler, samplingDistribution, softmax, topTokens} from "./sample.js";

/** The longest prompt the lab takes, in tokens (the lab says so to a reader past it). */
export const MAX_PROMPT_TOKENS = 512;
/** The longest text the worker tokenizes, in characters (a prompt of 512 tokens is at most a
 * few thousand): a paste of a whole book is refused before it is tokenized. */
export const MAX_TEXT_CHARS = 20000;
/** The most tokens one generation writes. */
export const MAX_NEW_TOKENS = 256;

/**
 * @param {object} model  model.js's Model
 * @param {number[]} prompt  token ids (at least one)
 * @param {{maxNew?: number, temperature?: number, topK?: number|null, topP?: number|null,
 *   seed?: number|null, stop?: number|null, hidden?: boolean, headMask?: Uint8Array|null,
 *   promptAttention?: "all"|"last"|"none", top?: number}} [options]
 *   stop: a token that ends the text after it is written (default: the file's EOS);
 *   hidden: each step's residual stream (L + 1, d) too, for the logit lens
 * @throws {RangeError} with a `code`: "empty-prompt", "long-prompt", "context" (prompt and
 *   new tokens past the positions loaded), "sampling" (a bad setting), "token" (an id
 *   outside the vocabulary)
 */
export function* generate(model, prompt, {
  maxNew = 32, temperature = 0, topK = null, topP = null, seed = null, stop = model.tokenizer.eos ?? null,
  hidden = false, headMask = null, promptAttention = "all", top = 10,
} = {}) {
  if (!prompt || prompt.length === 0) throw inputError("empty-prompt", "the prompt is empty: write something for the model to continue");
  if (prompt.length > MAX_PROMPT_TOKENS) {
    throw inputError("long-prompt", `the prompt is ${prompt.length} tokens; the lab takes at most ${MAX_PROMPT_TOKENS}`);
  }
  if (!Number.isInteger(maxNew) || maxNew < 0 || maxNew > MAX_NEW_TOKENS) {
    throw inputError("sampling", `maxNew must be a whole number from 0 to ${MAX_NEW_TOKENS}, got ${maxNew}`);
  }
  if (prompt.length + maxNew > model.info.maxContext) {
    throw inputError("context", `${prompt.length} + ${maxNew} tokens exceed the ${model.info.maxContext} positions loaded`);
  }
  const pick = sampler({temperature, topK, topP, seed});
  model.reset(0);
  let t = performance.now();
  const first = model.forward(prompt, {attention: promptAttention, hidden, headMask});
  yield {kind: "prompt", ids: Array.from(prompt), attention: first.attention, hidden: first.hidden,
    ms: performance.now() - t};
  let logits = first.logits;
  const written = [];
  for (let step = 0; step < maxNew; step++) {
    t = performance.now();
    const id = pick(logits);
    const dist = temperature === 0 ? null : samplingDistribution(logits, {temperature, topK, topP});
    const probs = softmax(logits);
    written.push(id);
    const run = model.forward([id], {attention: "last", hidden, headMask});
    yield {
      kind: "token", step, id, piece: model.tokenizer.decode([id]), text: model.tokenizer.decode(written),
      p: dist ? dist[id] : probs[id], top: topTokens(probs, top), drawn: dist && topTokens(dist, top),
      attention: run.attention,
      hidden: run.hidden, ends: id === stop, ms: performance.now() - t,
    };
    if (id === stop) return;
    logits = run.logits;
  }
}
