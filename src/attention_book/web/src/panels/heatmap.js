// A heatmap panel: a matrix through a colour map, its masked cells grey and crossed, a row
// outlined, and a colour bar. The matrix is drawn as an image of one pixel a cell, scaled
// up without smoothing: one putImageData and one drawImage whatever its size.

import {colorize, lut} from "../colormaps.js";
import {general} from "../format.js";
import {cellTicks} from "../ticks.js";
import {ACCENT, MARGIN, TEXT_PX, axes, emptyMessage, rotatedText, text} from "./style.js";

const MASKED = {light: [230, 230, 230], dark: [90, 90, 90]};  // grey, not a colour of the map
const COLORBAR_SPACE = 84;  // px right of the plot: the bar, its ticks and its label

/** The cells' pixels (one a cell) on `scratch`, masked cells grey. */
function paintCells(panel, scratch, th) {
  const {rows, cols} = panel;
  scratch.width = cols;
  scratch.height = rows;
  const sctx = scratch.getContext("2d"), image = sctx.createImageData(cols, rows);
  colorize(panel.data, panel.cmap, panel.vmin, panel.vmax, image.data);
  if (panel.masked) {
    const grey = MASKED[th.dark ? "dark" : "light"];
    for (let m = 0; m < rows * cols; m++) {
      if (panel.masked[m]) { image.data.set(grey, 4 * m); }
    }
  }
  sctx.putImageData(image, 0, 0);
}

/** A cross on each masked cell, when cells are large enough to show one: not colour alone. */
function crossMasked(ctx, panel, box, th) {
  const {rows, cols} = panel, cw = box.w / cols, ch = box.h / rows;
  if (!panel.masked || Math.min(cw, ch) < 7) { return; }
  ctx.strokeStyle = th.dark ? "#cfcfcf" : "#7a7a7a";
  ctx.lineWidth = 1;
  ctx.beginPath();
  const r = Math.min(cw, ch) * 0.22;
  for (let k = 0; k < rows * cols; k++) {
    if (!panel.masked[k]) { continue; }
    const cx = box.x + (k % cols + 0.5) * cw, cy = box.y + (Math.floor(k / cols) + 0.5) * ch;
    ctx.moveTo(cx - r, cy - r);
    ctx.lineTo(cx + r, cy + r);
    ctx.moveTo(cx + r, cy - r);
    ctx.lineTo(cx - r, cy + r);
  }
  ctx.stroke();
}

/** The matrix itself, in `box`: cells, crosses, a fading veil (a head switched off) and the
 *  outline of the chosen row. */
function drawCells(ctx, panel, box, th, scratch) {
  paintCells(panel, scratch, th);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(scratch, box.x, box.y, box.w, box.h);
  crossMasked(ctx, panel, box, th);
  if (panel.faded) {
    ctx.globalAlpha = 0.8;
    ctx.fillStyle = th.background;
    ctx.fillRect(box.x, box.y, box.w, box.h);
    ctx.globalAlpha = 1;
  }
  const row = panel.outlineRow;
  if (row !== undefined && row !== null && row < panel.rows) {
    const ch = box.h / panel.rows;
    ctx.strokeStyle = ACCENT;
    ctx.lineWidth = 2;
    ctx.strokeRect(box.x + 1, box.y + row * ch + 1, box.w - 2, ch - 2);
  }
}

const barImages = new Map();

/** A colour map as a 1 x 256 canvas, the largest value on top: made once a map (a bar drawn
 *  a row at a time cost a fillRect a row at every change). */
function barImage(name) {
  if (!barImages.has(name)) {
    const c = document.createElement("canvas"), table = lut(name);
    c.width = 1;
    c.height = 256;
    const cctx = c.getContext("2d"), image = cctx.createImageData(1, 256);
    for (let y = 0; y < 256; y++) {
      const level = 3 * (255 - y);
      image.data.set([table[level], table[level + 1], table[level + 2], 255], 4 * y);
    }
    cctx.putImageData(image, 0, 0);
    barImages.set(name, c);
  }
  return barImages.get(name);
}

/** The colour bar right of `box`: a strip of the map, its ticks and its label. */
function drawColorbar(ctx, panel, box, th) {
  const bar = {x: box.x + box.w + 8, y: box.y, w: 10, h: box.h};
  ctx.imageSmoothingEnabled = true;  // the map's 256 levels stretched over the bar's height
  ctx.drawImage(barImage(panel.cmap), 0, 0, 1, 256, bar.x, bar.y, bar.w, bar.h);
  ctx.strokeStyle = th.muted;
  ctx.strokeRect(bar.x - 0.5, bar.y - 0.5, bar.w + 1, bar.h + 1);
  const {vmin, vmax} = panel;
  for (const v of panel.colorbarTicks || [vmin, (vmin + vmax) / 2, vmax]) {
    const at = bar.y + (vmax - v) / (vmax - vmin) * bar.h;
    text(ctx, general(v, 3), bar.x + bar.w + 3, at, "left", "middle", TEXT_PX, th.text);
  }
  if (panel.colorbar) { rotatedText(ctx, panel.colorbar, bar.x + bar.w + 30, bar.y + bar.h / 2, th.text); }
}

/**
 * Draw a heatmap panel in `region`.
 * @param {CanvasRenderingContext2D} ctx
 * @param {object} panel {kind: "heatmap", data, rows, cols, cmap, vmin, vmax, extent?,
 *   masked?, faded?, outlineRow?, rowLabels?, colLabels?, colorbar?, colorbarTicks?, empty?,
 *   title?, xlabel?, ylabel?}
 * @param {{x: number, y: number, w: number, h: number}} region CSS px
 * @param {object} th the theme
 * @param {HTMLCanvasElement} scratch a canvas to paint the cells on
 */
export function drawHeatmap(ctx, panel, region, th, scratch) {
  const box = {x: region.x + MARGIN.left, y: region.y + MARGIN.top,
               w: region.w - MARGIN.left - COLORBAR_SPACE, h: region.h - MARGIN.top - MARGIN.bottom};
  const extent = panel.extent || [panel.rows, panel.cols];
  if (panel.rows && panel.cols) {
    drawCells(ctx, panel, box, th, scratch);
  } else {  // no tokens: the frame, its title and why it is empty
    emptyMessage(ctx, panel.empty, box.x + box.w / 2, box.y + box.h / 2, th);
  }
  axes(ctx, box, panel,
       cellTicks(extent[1], box.x, box.w, panel.colLabels, Math.floor(box.w / 40)),
       cellTicks(extent[0], box.y, box.h, panel.rowLabels, Math.floor(box.h / 16)), th);
  if (panel.colorbar === "" || panel.colorbar === false) { return; }  // shares another's
  drawColorbar(ctx, panel, box, th);
}
