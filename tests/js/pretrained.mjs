// Chapter 9's lab (web/src/labs/pretrained.js) for tests/test_web_pretrained.py, with a
// gallery file (pretrained-gallery.js, a classic script: AttentionBook.pretrainedGallery).
//
//   pretrained.states <gallery.js> < [values, ...]
//     -> per values what the page shows (arrays as the base64 of their float64 bytes; the
//        figure as [kind, rows, cols] a panel), or {error}
//   pretrained.grid <gallery.js>   -> {grid: the module's [LAYERS, HEADS], file: the gallery's,
//                                     error: what state() says of a gallery of 5 layers}
//   pretrained.pyRepr < [text, ...]     -> the module's Python repr of each text
//   pretrained.pairwiseSum < [[x, ...], ...] -> its numpy-order sum of each array
import {b64, classic, lab, source} from "./common.mjs";

const size = (p, n, m) => (p[n] === undefined ? (p[m] ? p[m].length : null) : p[n]);

export const states = async (list, gallery) => {
  const P = await lab("pretrained");
  classic(gallery);
  const out = [];
  for (const values of list) {
    let st;
    try { st = await P.state(values); } catch (e) { out.push({error: e.message}); continue; }
    out.push({tokens: st.tokens, query: st.query, source: st.source, weights: b64(st.weights),
      norms: b64(st.norms), shown: b64(st.shown), valueNorms: b64(st.valueNorms),
      thumbs: b64(st.thumbs), differs: st.differs,
      scores: st.scores, gallery: st.gallery, notes: st.notes, readout: P.readoutHtml(st),
      alt: P.alt(st), numbers: P.numbers(st), choices: P.choices("query", values),
      figure: P.figure(st).panels.map((p) => [p.kind, size(p, "rows", "series"), size(p, "cols", "labels")])});
  }
  return out;
};

export const grid = async (_input, gallery) => {
  const D = await source("labs/pretrained/data.js");
  const P = await lab("pretrained");
  classic(gallery);
  const data = globalThis.AttentionBook.pretrainedGallery;
  const out = {grid: [D.LAYERS, D.HEADS], file: [data.config.num_hidden_layers, data.config.num_attention_heads]};
  globalThis.AttentionBook.pretrainedGallery = {...data, config: {...data.config, num_hidden_layers: 5}};
  try { P.state({}); } catch (e) { out.error = e.message; }
  return out;
};

export const pyRepr = async (texts) => texts.map((await lab("pretrained")).pyRepr);

export const pairwiseSum = async (arrays) => {
  const P = await lab("pretrained");
  return arrays.map((x) => P.pairwiseSum(x, 0, x.length));
};
