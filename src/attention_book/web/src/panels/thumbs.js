// A thumbnails panel: a grid of small maps, one a head (rows: layers, columns: heads), the
// chosen one outlined (chapter 9's model view, all 72 heads of MiniLM). Every map is
// mapRows x T values (T x T unless `mapRows` says otherwise: chapter 10's model view has one
// row a head, the query's, drawn as a strip STRIP px tall) through one colour map; the n maps
// are painted as one image (T wide, n*mapRows tall: the C order of (rows, cols, mapRows, T))
// with one putImageData, each scaled into its cell with one drawImage on a canvas of the grid,
// which is kept for the next drawing of the same maps. Where the maps went is kept on the
// panel (`panel.hit`: the first map's corner, the step from one to the next across and down,
// a map's size and height), so that the lab's module can tell which map a click fell on.

import {colorize} from "../colormaps.js";
import {ACCENT, LINE, PAD, TEXT_PX, drawTitle, emptyMessage, font, text, thin, titleBlock,
  widest} from "./style.js";

const GAP = 3;      // px between two maps
const MOST = 56;    // px: the largest map (a wide page leaves room to spare)
const LEAST = 16;   // px: the least map that still shows a pattern
const STRIP = 10;   // px: the height of a map of one row

/** The labels along the left (rows) and the top (columns). */
const rowLabels = (panel) => Array.from({length: panel.rows}, (_, i) => (panel.rowPrefix || "") + i);
const colLabels = (panel) => Array.from({length: panel.cols}, (_, j) => (panel.colPrefix || "") + j);

/** Where everything goes in `w` px: the title, the left labels' column, the maps' size. */
function layout(ctx, panel, w) {
  const title = titleBlock(ctx, panel.title || "", w - 2 * PAD);
  font(ctx);
  const left = PAD + widest(ctx, rowLabels(panel)) + 6;
  const cell = Math.floor((w - left - PAD) / panel.cols);  // a map and its gap
  const size = Math.max(LEAST, Math.min(MOST, cell - GAP));
  // the column labels: with their prefix when they fit over a map, else the numbers alone
  const fits = widest(ctx, colLabels(panel)) + 4 <= size + GAP;
  const top = title.height + LINE + 2;
  const mapRows = panel.mapRows || panel.size, tall = mapRows === panel.size ? size : STRIP;
  return {title, left, size, tall, mapRows, step: size + GAP, stepY: tall + GAP, top, prefixed: fits,
    height: top + panel.rows * (tall + GAP), minW: left + PAD + panel.cols * (40 + GAP)};
}

/** The least width (CSS px) a thumbnails panel would like, and its height at width `w`. */
export function measureThumbs(ctx, panel, w) {
  const g = layout(ctx, panel, w);
  return {minW: g.minW, height: g.height};
}

// The last grids painted: maps at their drawn size, kept while their data, size and colours
// stay (a change of the chosen head, of the query or back to a measure or a sentence shown
// before draws one image). At most KEEP, about 1 MB each at 1280 px.
const painted = new Map(), KEEP = 4;

/** The n maps scaled into their cells on a canvas of the grid's size in device pixels. */
function grid(panel, g, whole, dpr, scratch) {
  const T = panel.size, n = panel.rows * panel.cols, R = g.mapRows;
  const key = [T, R, g.size, dpr, panel.cmap, panel.vmin, panel.vmax, panel.rows, panel.cols].join("|");
  const hit = painted.get(panel.data);
  if (hit && hit.key === key) { return hit.canvas; }
  scratch.width = T;
  scratch.height = n * R;
  const sctx = scratch.getContext("2d"), image = sctx.createImageData(T, n * R);
  colorize(panel.data, panel.cmap, panel.vmin, panel.vmax, image.data);
  sctx.putImageData(image, 0, 0);
  const canvas = hit ? hit.canvas : document.createElement("canvas");
  canvas.width = Math.round(whole.w * dpr);
  canvas.height = Math.round(whole.h * dpr);
  const gctx = canvas.getContext("2d");
  gctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  gctx.imageSmoothingEnabled = T > g.size;  // more tokens than pixels: average, not pick
  for (let k = 0; k < n; k++) {
    const i = Math.floor(k / panel.cols), j = k % panel.cols;
    gctx.drawImage(scratch, 0, k * R, T, R, j * g.step, i * g.stepY, g.size, g.tall);
  }
  painted.delete(panel.data);
  painted.set(panel.data, {key, canvas});
  if (painted.size > KEEP) { painted.delete(painted.keys().next().value); }
  return canvas;
}

/**
 * Draw a thumbnails panel in `region`.
 * @param {CanvasRenderingContext2D} ctx
 * @param {object} panel {kind: "thumbs", rows, cols, size (T), mapRows? (R, default T), data
 *   (rows*cols*R*T, C order of (rows, cols, R, T); empty: no maps), cmap, vmin, vmax,
 *   chosen?: [row, col], title?, rowPrefix?, colPrefix?, empty?}
 * @param {{x: number, y: number, w: number, h: number}} region CSS px
 * @param {object} th the theme
 * @param {HTMLCanvasElement} scratch a canvas to paint the maps on
 */
export function drawThumbs(ctx, panel, region, th, scratch) {
  const g = layout(ctx, panel, region.w), T = panel.size, n = panel.rows * panel.cols * g.mapRows;
  drawTitle(ctx, g.title, region.x + region.w / 2, region.y, th);
  const x0 = region.x + g.left, y0 = region.y + g.top;
  panel.hit = {x: x0, y: y0, step: g.step, stepY: g.stepY, size: g.size, height: g.tall, rows: panel.rows,
    cols: panel.cols};
  const cols = colLabels(panel), rows = rowLabels(panel);
  cols.forEach((label, j) => text(ctx, g.prefixed ? label : String(j), x0 + j * g.step + g.size / 2,
    y0 - 4, "center", "bottom", TEXT_PX, th.text));
  // every row named where a label fits its row, else every k-th
  const named = thin(panel.rows, g.stepY >= TEXT_PX + 2 ? panel.rows : Math.floor(panel.rows * g.stepY / LINE));
  named.shown.forEach((i) => text(ctx, rows[i], x0 - 6, y0 + i * g.stepY + g.tall / 2, "right", "middle",
    TEXT_PX, th.text));
  const whole = {x: x0, y: y0, w: panel.cols * g.step - GAP, h: panel.rows * g.stepY - GAP};
  if (!(T && panel.data && panel.data.length === n * T)) {
    ctx.strokeStyle = th.muted;
    ctx.strokeRect(whole.x - 0.5, whole.y - 0.5, whole.w + 1, whole.h + 1);
    emptyMessage(ctx, panel.empty, whole.x + whole.w / 2, whole.y + whole.h / 2, whole.w - 8, th);
    return;
  }
  const dpr = ctx.getTransform().a || 1;
  ctx.drawImage(grid(panel, g, whole, dpr, scratch), whole.x, whole.y, whole.w, whole.h);
  if (panel.chosen) {
    const [i, j] = panel.chosen;
    ctx.strokeStyle = ACCENT;
    ctx.lineWidth = 2;
    ctx.strokeRect(x0 + j * g.step - 1.5, y0 + i * g.stepY - 1.5, g.size + 3, g.tall + 3);
    ctx.lineWidth = 1;
  }
}

