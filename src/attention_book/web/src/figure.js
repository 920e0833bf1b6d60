// A figure: its panels laid out on one canvas, drawn at the screen's device pixel ratio.
// The number of columns comes from the figure's width and the lab alone (its `columns`, and
// `least` px a panel at the least): never from a state's labels, so a figure does not jump
// from 2 x 2 to 3 + 1 while a reader scrubs a control. Rows are filled in order; a grid of
// maps or of thumbnails takes a row of its own, and so does a panel that starts one (`row`);
// a row of lines, bars or arcs with fewer panels than columns spans the width (a bar chart
// left alone does not leave half the canvas empty), while a heatmap keeps its column's
// width. A row is as tall as its tallest panel needs at that width, and a panel may fill
// the row's height (`fillRow`).

import {drawArcs, measureArcs} from "./panels/arcs.js";
import {drawBars, measureBars} from "./panels/bars.js";
import {drawGrid, measureGrid} from "./panels/grid.js";
import {drawHeatmap, measureHeatmap} from "./panels/heatmap.js";
import {drawLines, measureLines} from "./panels/lines.js";
import {drawThumbs, measureThumbs} from "./panels/thumbs.js";
import {TEXT_PX, fontReset} from "./panels/style.js";

/** Each panel kind's [draw(ctx, panel, region, theme, scratch), measure(ctx, panel, w)]. */
const KINDS = new Map([["heatmap", [drawHeatmap, measureHeatmap]], ["lines", [drawLines, measureLines]],
  ["arcs", [drawArcs, measureArcs]], ["bars", [drawBars, measureBars]],
  ["thumbs", [drawThumbs, measureThumbs]], ["grid", [drawGrid, measureGrid]]]);
/** The kinds that take a row of their own: maps to compare, side by side. */
const WHOLE_ROW = new Set(["grid", "thumbs"]);

const ROW_GAP = 8;   // px between rows of panels
const LEAST = 300;   // px: the least width of a panel beside another, unless the figure says

function kind(panel) {
  const k = KINDS.get(panel.kind);
  if (!k) { throw new Error("unknown panel kind " + panel.kind); }
  return k;
}

/**
 * The columns of a figure `width` px wide: its `columns`, as many as leave each panel its
 * `least` px (LEAST unless it says).
 * @param {{columns?: number, least?: number}} spec
 * @param {number} width CSS px
 * @returns {number}
 */
export function columnsOf(spec, width) {
  return Math.max(1, Math.min(spec.columns || 1, Math.floor(width / (spec.least || LEAST))));
}

/**
 * Where each panel of `spec` goes in a figure `width` CSS px wide (see the top of this file).
 * @param {CanvasRenderingContext2D} ctx (to measure text)
 * @param {{columns?: number, least?: number, panels: object[]}} spec
 * @param {number} width CSS px
 * @returns {{regions: {x: number, y: number, w: number, h: number}[], height: number, columns: number}}
 */
export function layoutFigure(ctx, spec, width) {
  const {panels} = spec, regions = [], columns = columnsOf(spec, width);
  const whole = (p) => WHOLE_ROW.has(p.kind);
  let y = 0, start = 0;
  while (start < panels.length) {
    let k = 1;
    if (!whole(panels[start])) {
      while (k < columns && start + k < panels.length && !whole(panels[start + k]) && !panels[start + k].row) { k++; }
    }
    const row = panels.slice(start, start + k);
    const spans = whole(row[0]) || row.every((p) => p.kind !== "heatmap");
    const w = spans ? width / k : width / columns;
    const h = Math.ceil(Math.max(...row.map((p) => kind(p)[1](ctx, p, w).height)));
    for (let i = 0; i < k; i++) { regions.push({x: i * w, y, w, h}); }
    y += h + ROW_GAP;
    start += k;
  }
  return {regions, height: Math.max(1, y - ROW_GAP), columns};
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
 * @returns {{regions: object[], height: number, drawn: Array}} the layout drawn, and what
 *   each panel's draw returned
 */
export function drawFigure(canvas, spec, width, th, scratch, dpr = globalThis.devicePixelRatio || 1) {
  const ctx = canvas.getContext("2d");
  fontReset(ctx);
  const layout = layoutFigure(ctx, spec, width);
  fit(canvas, width, layout.height, dpr);
  fontReset(ctx);  // a resized canvas has its state reset
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = th.background;
  ctx.fillRect(0, 0, width, canvas.height / dpr);
  // what each panel's draw tells of where it drew (the arcs: their ends), for the tests
  layout.drawn = spec.panels.map((panel, i) => kind(panel)[0](ctx, panel, layout.regions[i], th, scratch));
  canvas.setAttribute("data-text-px", String(TEXT_PX * dpr));  // the smallest text, in its pixels
  return layout;
}
