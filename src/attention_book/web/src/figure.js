// A figure: its panels laid out on one canvas, drawn at the screen's device pixel ratio.
// The number of columns comes from the width: as many as the figure asks for while every
// panel gets the width its content needs (measured: its labels, its named cells); a row is
// as tall as its tallest panel needs at that width, and a panel may fill the row's height.

import {drawArcs, measureArcs} from "./panels/arcs.js";
import {drawBars, measureBars} from "./panels/bars.js";
import {drawHeatmap, measureHeatmap} from "./panels/heatmap.js";
import {drawLines, measureLines} from "./panels/lines.js";
import {drawThumbs, measureThumbs} from "./panels/thumbs.js";
import {TEXT_PX, fontReset} from "./panels/style.js";

/** Each panel kind's [draw(ctx, panel, region, theme, scratch), measure(ctx, panel, w)]. */
const KINDS = new Map([["heatmap", [drawHeatmap, measureHeatmap]], ["lines", [drawLines, measureLines]],
  ["arcs", [drawArcs, measureArcs]], ["bars", [drawBars, measureBars]],
  ["thumbs", [drawThumbs, measureThumbs]]]);

const ROW_GAP = 8;  // px between rows of panels

function kind(panel) {
  const k = KINDS.get(panel.kind);
  if (!k) { throw new Error("unknown panel kind " + panel.kind); }
  return k;
}

/**
 * Where each panel of `spec` goes in a figure `width` CSS px wide: rows filled in order,
 * each with as many panels as fit (every one at least its least width) up to the figure's
 * `columns`, or its `smallColumns` for a row of `small` panels (a stack's later maps); a
 * `newRow` panel starts a row;
 * the most of these a row seen before are kept, so that the panels line up in columns.
 * @param {CanvasRenderingContext2D} ctx (to measure text)
 * @param {{columns?: number, smallColumns?: number, panels: object[]}} spec
 * @param {number} width CSS px
 * @returns {{regions: {x: number, y: number, w: number, h: number}[], height: number}}
 */
export function layoutFigure(ctx, spec, width) {
  const {panels} = spec, regions = [], memo = new Map();
  const measure = (p, w) => {  // a panel's size at a width, measured once a layout
    const key = panels.indexOf(p) + "@" + w;
    if (!memo.has(key)) { memo.set(key, kind(p)[1](ctx, p, w)); }
    return memo.get(key);
  };
  // whether panels fit side by side in the width, each at least its least width
  const fits = (row) => row.every((p) => measure(p, width / row.length).minW <= width / row.length);
  const most = (p) => Math.max(1, p.small ? spec.smallColumns || spec.columns || 1 : spec.columns || 1);
  let y = 0, start = 0;
  const cap = {};  // the columns of the first row of small panels, and of the others
  while (start < panels.length) {
    const small = !!panels[start].small;
    let limit = Math.min(most(panels[start]), cap[small] || Infinity);
    let k = 1, full = false;  // full: the next panel did not fit beside these
    while (k < limit && start + k < panels.length && !!panels[start + k].small === small &&
           !panels[start + k].newRow) {
      full = !fits(panels.slice(start, start + k + 1));
      if (full) { break; }
      k += 1;
    }
    if (cap[small] === undefined) {  // as many as fit, had the row gone on with its like
      let cols = k;
      if (full) { limit = k; }
      while (cols < limit && fits(new Array(cols + 1).fill(panels[start]))) { cols += 1; }
      cap[small] = cols;
    }
    // a short row keeps the columns of the first, if its panels fit them
    const row = panels.slice(start, start + k), shared = width / Math.max(k, cap[small]);
    const w = row.every((p) => measure(p, shared).minW <= shared) ? shared : width / k;
    const sizes = row.map((p) => measure(p, w));
    const h = Math.ceil(Math.max(...sizes.map((s) => s.height)));
    for (let i = 0; i < k; i++) { regions.push({x: i * w, y, w, h}); }
    y += h + ROW_GAP;
    start += k;
  }
  return {regions, height: Math.max(1, y - ROW_GAP)};
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
