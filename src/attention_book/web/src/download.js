// The picture download beside the numbers download: the figure shown, drawn again at twice
// its size (2 device pixels a CSS px, whatever the screen's) as a PNG the reader saves. A
// Blob made here: no request.

import {make} from "./dom.js";
import {drawFigure} from "./figure.js";
import {theme} from "./theme.js";

const SCALE = 2;

/**
 * The figure lab `lab` shows, on a new canvas at `scale` device pixels a CSS px.
 * @param {object} lab a mounted Lab (its spec, width, theme, scratch canvas)
 * @param {number} [scale]
 * @returns {HTMLCanvasElement}
 */
export function pictureCanvas(lab, scale = SCALE) {
  const canvas = document.createElement("canvas");
  drawFigure(canvas, lab.spec, lab.width(), lab.looks.theme || theme(lab.element), lab.scratch, scale);
  return canvas;
}

/** Save `blob` as `name` through a link clicked once (both downloads of a lab). */
export function save(blob, name) {
  const a = make("a", {href: URL.createObjectURL(blob), download: name});
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 0);
}

/**
 * A labelled button, after the lab's other controls, that saves its figure as a PNG at
 * twice its size: `<lab name>.png`.
 * @param {object} lab a Lab
 * @returns {HTMLButtonElement}
 */
export function addPictureDownload(lab) {
  const button = make("button", {type: "button", class: "ab-download-picture"}, "Download the picture (PNG)");
  button.addEventListener("click", () => {
    if (!lab.spec) { return; }
    pictureCanvas(lab).toBlob((blob) => save(blob, lab.declaration.name + ".png"), "image/png");
  });
  lab.element.querySelector(".ab-lab-controls").append(button);
  return button;
}
