// Chapter 7's block lab (web/src/labs/block.js) for tests/test_web_block.py: its random
// blocks and its cache of them. (Its states, figures and numbers: states.mjs.)
//
//   block.stack < [seed, ...]  -> each seed's 12 blocks, every weight as the base64 of its
//                                 float64 bytes
//   block.drawn                -> how many blocks the lab has drawn after each change of a
//                                 fixed sequence (a new seed draws 12; clearCaches() empties)
import {bytes64, lab, source} from "./common.mjs";

export const stack = async (seeds) => {
  const B = await lab("block");
  return seeds.map((seed) => B.stack(seed).map(
    (p) => Object.fromEntries(Object.entries(p).map(([k, v]) => [k, bytes64(v)]))));
};

export const drawn = async () => {
  const B = await lab("block"), {clearCaches} = await source("shared/matrices.js");
  const counts = [];
  const at = (v) => { B.state({text: "the cat sat", seed: 4, ...v}); counts.push(B.blocksDrawn()); };
  at({});
  at({depth: 12});
  at({depth: 1, residual: false});
  at({norm_first: true});
  at({causal: true});
  at({text: "a dog ran"});
  at({seed: 5});
  at({seed: 4});
  clearCaches();
  at({seed: 4});
  return counts;
};
