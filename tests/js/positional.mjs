// Chapter 2's lab (web/src/labs/positional.js) for tests/test_web_lab.py: its states as the
// parity tests read them, in Node and in a page. (Its numbers, figures, errors: states.mjs.)
//
//   positional.states < [values, ...]  -> computeAll's rows
//   positional.source                  -> computeAll's source, which the page test evaluates
//                                         in chromium on AttentionBook.positional
import {bytes64, lab} from "./common.mjs";

/** The state of each values, its arrays as base64 float64 (toBase64 of a Float64Array): no
 * import and no Node API in it, as a page runs its source too. */
export function computeAll(P, list, toBase64) {
  return list.map((values) => {
    const st = P.state(values);
    const b64 = (a) => toBase64(new Float64Array(a));
    return {maxError: st.maxError, meanSimilarity: st.meanSimilarity, waveColumns: st.waveColumns,
      p: st.p, notes: st.notes, readout: P.readout(st).lines, alt: P.alt(st),
      arrays: {pe: b64(st.pe), similarity: b64(st.similarity), wavelengths: b64(st.wavelengths),
        shifted: b64(st.shifted), rotated: b64(st.rotated)}};
  });
}

export const states = async (list) => computeAll(await lab("positional"), list, bytes64);

export const source = () => computeAll.toString();
