// What the labs' state modules (embedding.js, attention.js, ...) share in the reader's
// browser: the book's word tokenizer and vocabulary (the twin of attention_book/tokens.py,
// exact for any text: vocab.js holds the character tables measured from Python), reading
// reader-typed text as scenes/core.py's read_tokens does (the same notes and limits),
// chapter 1's embedding table drawn with rng.js (numpy's default_rng, bit for bit), small
// matrix helpers, numbers formatted as Python formats them, and the readouts' HTML, every
// reader-typed text escaped. An ES module (its default export), bundled into web/lab.js by
// build.mjs, where the labs' bundles read it.
//
// The parts, by concern: tokens.js (the tokenizer), matrices.js (the embedding table and
// matrix helpers), html.js (readout HTML and Python's messages); this module gathers them
// into the one object the labs import.

import vocab from "./vocab.js";
import {format} from "../format.js";
import * as html from "./html.js";
import * as matrices from "./matrices.js";
import * as tokens from "./tokens.js";

const api = {vocab, format, ...tokens, ...matrices, ...html};

export default api;
