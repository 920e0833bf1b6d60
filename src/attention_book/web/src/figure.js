// A figure: its panels laid out on one canvas, drawn at the screen's device pixel ratio.
// The number of columns comes from the width: as many as the figure asks for while every
// panel gets the width its content needs (measured: its labels, its named cells); a row is
// as tall as its tallest panel needs at that width.

import {drawArcs, measureArcs} from "./panels/arcs.js";
import {drawBars, measureBars} from "./panels/bars.js";
import {drawHeatmap, measureHeatmap} from "./panels/heatmap.js";
import {drawLines, measureLines} from "./panels/lines.js";
import {TEXT_PX} from "./panels/style.js";

/** Each panel kind's [draw(ctx, panel, region, theme, scratch), measure(ctx, panel, w)]. */
const KINDS = new Map([["heatmap", [drawHeatmap, measureHeatmap]], ["lines", [drawLines, measureLines]],
                       ["arcs", [drawArcs, measureArcs]], ["bars", [drawBars, measureBars]]]);

const ROW_GAP = 8;  // px between rows of panels

function kind(panel) {
  const k = KINDS.get(panel.kind);
  if (!k) { throw new Error("unknown panel kind " + panel.kind); }
  return k;
}

/**
 * Where each panel of `spec` goes in a figure `width` CSS px wide.
 * @param {CanvasRenderingContext2D} ctx (to measure text)
 * @param {{columns?: number, panels: object[]}} spec
 * @param {number} width CSS px
 * @returns {{columns: number, regions: {x: number, y: number, w: number, h: number}[], height: number}}
 */
export function layoutFigure(ctx, spec, width) {
  const {panels} = spec;
  let columns = Math.max(1, Math.min(spec.columns || 1, panels.length));
  let sizes;
  for (;; columns--) {
    const w = width / columns;
    sizes = panels.map((p) => kind(p)[1](ctx, p, w));
    if (columns === 1 || sizes.every((s) => s.minW <= w)) { break; }
  }
  const w = width / columns, regions = [];
  let y = 0;
  for (let start = 0; start < panels.length; start += columns) {
    const row = sizes.slice(start, start + columns), h = Math.ceil(Math.max(...row.map((s) => s.height)));
    row.forEach((_, k) => regions.push({x: k * w, y, w, h}));
    y += h + ROW_GAP;
  }
  return {columns, regions, height: Math.max(1, y - ROW_GAP)};
}

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
 * @param {number} [dpr] device pixels a CSS px (the screen's by default)
 * @returns {{columns: number, regions: object[], height: number}} the layout drawn
 */
export function drawFigure(canvas, spec, width, th, scratch, dpr = globalThis.devicePixelRatio || 1) {
  const ctx = canvas.getContext("2d");
  const layout = layoutFigure(ctx, spec, width);
  fit(canvas, width, layout.height, dpr);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = th.background;
  ctx.fillRect(0, 0, width, canvas.height / dpr);
  spec.panels.forEach((panel, i) => kind(panel)[0](ctx, panel, layout.regions[i], th, scratch));
  canvas.setAttribute("data-text-px", String(TEXT_PX * dpr));  // the smallest text, in its pixels
  return layout;
}
