// The readout under a lab's figure: lines of text and notes (info, warning, error), every
// text through textContent.

import {make} from "./dom.js";

/** One note as a list item: its symbol, its level in bold, its text, in the level's colours. */
function noteItem(note, styles) {
  const [symbol, colour, background] = styles[note.level] || styles.info;
  const item = make("li", {class: "ab-note ab-note-" + note.level,
                           style: `color:${colour};background:${background};` +
                                  "padding:2px 6px;margin:2px 0;border-radius:3px"});
  item.append(symbol + " ", make("b", {}, note.level + ":"), " " + note.text);
  return item;
}

/**
 * The readout as elements.
 * @param {{lines: string[], notes?: {level: string, text: string}[], mono?: boolean}} readout
 * @param {Object<string, string[]>} styles each note level's [symbol, colour, background]
 *   (the declaration's note_styles)
 * @returns {HTMLDivElement}
 */
export function readoutElement(readout, styles) {
  const box = make("div", {class: "ab-readout"});
  for (const line of readout.lines) {
    const div = make("div", {}, line);
    if (readout.mono !== false) { div.style.fontFamily = "monospace"; }
    box.append(div);
  }
  if (readout.notes && readout.notes.length) {
    const list = make("ul", {class: "ab-notes", style: "list-style:none;padding:0;margin:4px 0"});
    list.append(...readout.notes.map((note) => noteItem(note, styles)));
    box.append(list);
  }
  return box;
}

/**
 * A readout of one error: a clear message in the lab's error style.
 * @param {*} err an Error or a message
 * @param {Object<string, string[]>} styles the declaration's note_styles
 * @returns {HTMLDivElement}
 */
export const errorElement = (err, styles) =>
  readoutElement({lines: [], notes: [{level: "error", text: String((err && err.message) || err)}]}, styles);
