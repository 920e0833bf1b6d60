// A figure: its panels laid out on one canvas, `columns` to a row (one column on a phone),
// drawn at the screen's device pixel ratio.

import {drawArcs} from "./panels/arcs.js";
import {drawBars} from "./panels/bars.js";
import {drawHeatmap} from "./panels/heatmap.js";
import {drawLines} from "./panels/lines.js";
import {TEXT_PX} from "./panels/style.js";

/** Each panel kind's drawing function (ctx, panel, region, theme, scratch canvas). */
const DRAW = new Map([["heatmap", drawHeatmap], ["lines", drawLines], ["arcs", drawArcs], ["bars", drawBars]]);

const NARROW = 560;  // CSS px: below it, one column of panels

/** Size the canvas for a figure `width` x `height` CSS px. The backing store only grows in
 *  height: a figure with fewer panels draws in its top, and the lab's frame (the canvas's
 *  parent, its overflow hidden) shows just that part; a new height at each change of the
 *  number of panels reallocated the backing store every time. */
function fit(canvas, width, height, dpr) {
  const pw = Math.round(width * dpr), ph = Math.round(height * dpr);
  const parent = canvas.parentNode;
  const frame = parent && parent.classList && parent.classList.contains("ab-lab-figure") ? parent : null;
  if (canvas.width !== pw || canvas.height < ph || (!frame && canvas.height !== ph)) {
    canvas.width = pw;
    canvas.height = ph;
  }
  canvas.style.width = width + "px";
  canvas.style.height = canvas.height / dpr + "px";
  if (frame) {
    frame.style.height = height + "px";
    frame.style.overflow = "hidden";
  }
}

/**
 * Draw figure `spec` on `canvas`, `width` CSS px wide.
 * @param {HTMLCanvasElement} canvas
 * @param {{columns?: number, panels: object[]}} spec the state module's figure(state)
 * @param {number} width CSS px
 * @param {object} th the theme's colours (theme.js)
 * @param {HTMLCanvasElement} scratch a canvas the heatmaps paint their cells on
 */
export function drawFigure(canvas, spec, width, th, scratch) {
  const columns = width >= NARROW ? spec.columns || 1 : 1;
  const panelW = width / columns, panelH = Math.round(Math.max(210, Math.min(300, panelW * 0.62)));
  const height = Math.ceil(spec.panels.length / columns) * panelH;
  const dpr = globalThis.devicePixelRatio || 1;
  fit(canvas, width, height, dpr);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = th.background;
  ctx.fillRect(0, 0, width, height);
  spec.panels.forEach((panel, i) => {
    const draw = DRAW.get(panel.kind);
    if (!draw) { throw new Error("unknown panel kind " + panel.kind); }
    const region = {x: (i % columns) * panelW, y: Math.floor(i / columns) * panelH, w: panelW, h: panelH};
    draw(ctx, panel, region, th, scratch);
  });
  canvas.setAttribute("data-text-px", String(TEXT_PX * dpr));  // the smallest text, in its pixels
}
