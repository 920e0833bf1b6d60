// A heatmap panel: a matrix through a colour map, its masked cells in the reserved masked
// style (style.js: grey, hatched), a row outlined, and a colour bar that says when the scale
// clips (its end a triangle, its end label "≥ 3"), or a legend of categories (a 0/1 mask).
// The matrix is drawn as an image of one pixel a cell, scaled up without smoothing: one
// putImageData and one drawImage whatever its size. Its parts are shared with the grid of
// maps (grid.js), which draws several on one scale.

import {colorize, lut} from "../colormaps.js";
import {general} from "../format.js";
import {channels} from "../theme.js";
import {wholeTicks} from "../ticks.js";
import {ACCENT, LINE, MASKED, NAME_ALL, PAD, TEXT_PX, axes, axisLabel, drawTitle, emptyMessage,
  font, hatchMasked, labelLines, maskedSwatch, remembered, rotatedText, text, thin, tickFit,
  titleBlock, widest, widthOf} from "./style.js";

export const TURNED_SPACING = 12;  // px: the least room between two turned (vertical) tick labels
export const CELL_MOST = 48;       // px: the largest cell (a 1 x 1 map is no 240 px block)
const SWATCH = 10;                 // px: a legend entry's square
const MASKED_LABEL = "masked";

/**
 * The cells' pixels (one a cell) of maps of one shape on `scratch`, one map under another
 * (one putImageData: a grid's 16 maps painted one by one uploaded the canvas 16 times): the
 * map's colours, or a category's; masked cells MASKED's grey (their hatch is drawn over the
 * scaled image).
 * @param {object[]} maps each {data, cmap, vmin, vmax, masked?, categories?}, rows x cols
 * @returns {HTMLCanvasElement} scratch, map k at rows k*rows..
 */
export function paintMaps(maps, rows, cols, scratch, th) {
  // resized only when the size changes (a resize reallocates it; the image covers it whole)
  if (scratch.width !== cols) { scratch.width = cols; }
  if (scratch.height !== rows * maps.length) { scratch.height = rows * maps.length; }
  const sctx = scratch.getContext("2d"), image = sctx.createImageData(cols, rows * maps.length);
  maps.forEach((panel, k) => {
    const out = image.data.subarray(4 * k * rows * cols, 4 * (k + 1) * rows * cols);
    if (panel.categories) {
      const colours = panel.categories.map((c) => (c.masked ? MASKED.rgb : channels(c.color || th.background)));
      for (let m = 0; m < rows * cols; m++) { out.set([...colours[panel.data[m]] || MASKED.rgb, 255], 4 * m); }
    } else {
      colorize(panel.data, panel.cmap, panel.vmin, panel.vmax, out);
    }
    if (panel.masked) {
      for (let m = 0; m < rows * cols; m++) {
        if (panel.masked[m]) { out.set(MASKED.rgb, 4 * m); }
      }
    }
  });
  sctx.putImageData(image, 0, 0);
  return scratch;
}

/** Cells masked by a category with `masked` (a 0/1 mask's 0s): the hatch goes on them. */
function categoryMasked(panel) {
  const k = panel.categories.findIndex((c) => c.masked);
  return k < 0 ? null : Uint8Array.from(panel.data, (v) => (v === k ? 1 : 0));
}

/**
 * The matrix itself, in `box`: cells, the hatch of masked cells, a fading veil (a head
 * switched off), the outline of the chosen row and a ring on each marked cell.
 * @param {CanvasRenderingContext2D} ctx
 * @param {object} panel {data, rows, cols, cmap, vmin, vmax, masked?, categories?, faded?,
 *   outlineRow?, marks?}
 * @param {{x: number, y: number, w: number, h: number}} box CSS px
 * @param {object} th the theme
 * @param {HTMLCanvasElement} scratch a canvas to paint the cells on
 * @param {number|null} [at] the map's place on `scratch`, painted already (paintMaps)
 */
export function drawCells(ctx, panel, box, th, scratch, at = null) {
  const source = at === null ? paintMaps([panel], panel.rows, panel.cols, scratch, th) : scratch;
  // cells of 4 device px or more: sharp edges; smaller ones (chapter 2's 256 rows in 300
  // px): interpolated, as picking the nearest doubled every sixth row and drew moiré curves
  // that are not in the data
  const dpr = ctx.getTransform().a || 1;
  ctx.imageSmoothingEnabled = Math.min(box.w / panel.cols, box.h / panel.rows) * dpr < 4;
  ctx.imageSmoothingQuality = "low";  // bilinear: "high" cost 8 ms of raster at 512 x 512
  ctx.drawImage(source, 0, (at || 0) * panel.rows, panel.cols, panel.rows, box.x, box.y, box.w, box.h);
  const masked = panel.categories ? categoryMasked(panel) : panel.masked;
  if (masked) { hatchMasked(ctx, masked, panel.rows, panel.cols, box); }
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
  // a ring on each marked cell [row, col] (the key a row weighs most): a shape, not colour
  for (const [r, c] of panel.marks || []) {
    const cw = box.w / panel.cols, ch = box.h / panel.rows;
    ctx.strokeStyle = ACCENT;
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.arc(box.x + (c + 0.5) * cw, box.y + (r + 0.5) * ch, Math.max(2, Math.min(cw, ch) * 0.32), 0, 2 * Math.PI);
    ctx.stroke();
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

/** The labels along one axis of n cells: a token a cell (every one up to `most`, at most
 *  NAME_ALL, else evenly thinned, `keep` always), or whole numbers, about `most` of them. */
export function axisTicks(n, labels, most, keep) {
  if (labels && labels.length === n) {
    const {shown, step} = thin(n, Math.min(most, NAME_ALL), keep);
    return {at: shown, labels: shown.map((i) => String(labels[i])), step, tokens: true};
  }
  const at = wholeTicks(n, Math.max(2, Math.min(most, 6)));
  return {at, labels: at.map(String), step: 1, tokens: false};
}

/**
 * Whether a map's values leave its scale, below and above: [low, high]. Masked cells and
 * what is not a number are left out. Then the colour bar's end says so.
 * @param {ArrayLike<number>[]} datas the maps on one scale
 * @param {number} vmin
 * @param {number} vmax
 * @param {ArrayLike<number>} [masked] (one map's size) 1 where masked
 * @returns {[boolean, boolean]}
 */
export function clips(datas, vmin, vmax, masked) {
  const tol = 1e-9 * (vmax - vmin);
  let low = false, high = false;
  for (const data of datas) {
    for (let k = 0; k < data.length; k++) {
      if (masked && masked[k % masked.length]) { continue; }
      const v = data[k];
      if (v < vmin - tol) { low = true; }
      if (v > vmax + tol) { high = true; }
    }
  }
  return [low, high];
}

/**
 * A colour bar's or a legend's layout, right of a plot: its ticks' labels (the clipped end
 * "≥ 3"), the masked swatch's row, and the width it all takes.
 * @param {CanvasRenderingContext2D} ctx
 * @param {object} p {vmin, vmax, colorbarTicks?, colorbarLabels?, categories?, colorbar (its
 *   label; "": room kept, drawn by another), clipped: [low, high], masked: boolean}
 * @param {number} height px of the plot beside it
 * @returns {object} {ticks, labels, tickW, label lines, masked, width, shared, categories}
 */
export function barLayout(ctx, p, height) {
  font(ctx);
  const g = {shared: p.colorbar === "", masked: !!p.masked && !p.categories, categories: p.categories || null};
  if (g.categories) {
    const w = widest(ctx, g.categories.map((c) => c.label));
    g.width = 8 + SWATCH + 4 + w + PAD;
    g.lines = [];
    return g;
  }
  g.ticks = p.colorbarTicks || [p.vmin, (p.vmin + p.vmax) / 2, p.vmax];
  const [low, high] = p.clipped || [false, false];
  g.labels = g.ticks.map((v, k) => (p.colorbarLabels ? p.colorbarLabels[k] : general(v, 3)));
  g.labels = g.labels.map((label, k) => {
    if (high && g.ticks[k] === p.vmax) { return "\u2265 " + label; }
    return low && g.ticks[k] === p.vmin ? "\u2264 " + label : label;
  });
  g.clipped = [low, high];
  g.tickW = widest(ctx, g.labels);
  g.lines = g.shared ? [""] : labelLines(ctx, p.colorbar || "", height + 20);
  const swatch = g.masked ? 8 + SWATCH + 4 + widthOf(ctx, MASKED_LABEL) + PAD : 0;
  g.width = Math.max(8 + 10 + 4 + g.tickW + 4 + g.lines.length * LINE + 2, swatch);
  return g;
}

/** The colour bar (or the categories' legend) right of `box`, as barLayout laid it out. */
export function drawBar(ctx, p, g, box, th) {
  const x = box.x + box.w + 8;
  if (g.categories) {
    g.categories.forEach((c, k) => {
      const y = box.y + k * (LINE + 6);
      if (c.masked) {
        maskedSwatch(ctx, x, y + 1, SWATCH, th);
      } else {
        ctx.fillStyle = c.color || th.background;
        ctx.fillRect(x, y + 1, SWATCH, SWATCH);
        ctx.strokeStyle = th.muted;
        ctx.strokeRect(x - 0.5, y + 0.5, SWATCH + 1, SWATCH + 1);
      }
      text(ctx, c.label, x + SWATCH + 4, y + 1 + SWATCH / 2, "left", "middle", TEXT_PX, th.text);
    });
    return;
  }
  const bar = {x, y: box.y, w: 10, h: box.h};
  ctx.imageSmoothingEnabled = true;  // the map's 256 levels stretched over the bar's height
  ctx.drawImage(barImage(p.cmap), 0, 0, 1, 256, bar.x, bar.y, bar.w, bar.h);
  ctx.strokeStyle = th.muted;
  ctx.lineWidth = 1;
  ctx.strokeRect(bar.x - 0.5, bar.y - 0.5, bar.w + 1, bar.h + 1);
  const [low, high] = g.clipped;
  const table = lut(p.cmap), level = (k) => `rgb(${table[3 * k]},${table[3 * k + 1]},${table[3 * k + 2]})`;
  const cap = (y, dir, colour) => {  // a triangle past the bar's end: values beyond it clipped
    ctx.fillStyle = colour;
    ctx.beginPath();
    ctx.moveTo(bar.x - 0.5, y);
    ctx.lineTo(bar.x + bar.w / 2, y + dir * 7);
    ctx.lineTo(bar.x + bar.w + 0.5, y);
    ctx.closePath();
    ctx.fill();
    ctx.stroke();
  };
  if (high) { cap(bar.y - 0.5, -1, level(255)); }
  if (low) { cap(bar.y + bar.h + 0.5, 1, level(0)); }
  const {vmin, vmax} = p;
  g.ticks.forEach((v, k) => {
    const at = bar.y + (vmax - v) / (vmax - vmin) * bar.h;
    text(ctx, g.labels[k], bar.x + bar.w + 4, at, "left", "middle", TEXT_PX, th.text);
  });
  const lx = bar.x + bar.w + 4 + g.tickW + 4 + LINE / 2;
  g.lines.forEach((line, k) => rotatedText(ctx, line, lx + k * LINE, bar.y + bar.h / 2, th.text));
  if (g.masked) {  // under the bar, beside the x axis's labels (below the plot, not beside them)
    const y = box.y + box.h + 8 + (g.clipped[0] ? 6 : 0);
    maskedSwatch(ctx, x, y, SWATCH, th);
    text(ctx, MASKED_LABEL, x + SWATCH + 4, y + SWATCH / 2, "left", "middle", TEXT_PX, th.text);
  }
}

/**
 * Where everything of a heatmap goes in a panel `w` px wide: the title's lines, the margins
 * measured from the labels, the plot's size (cells close to square, at most CELL_MOST, every
 * named row a line of text tall), the ticks, and the least width that keeps the named
 * columns apart.
 */
function layoutOnce(ctx, panel, w, h = 0) {
  const [rows, cols] = panel.extent || [panel.rows, panel.cols];
  const title = titleBlock(ctx, panel.title || "", w - 2 * PAD);
  font(ctx);
  const y = axisTicks(rows, panel.rowLabels, NAME_ALL, panel.outlineRow);
  const yTickW = widest(ctx, y.labels) + 10;
  const clipped = panel.categories ? [false, false] : clips([panel.data], panel.vmin, panel.vmax, panel.masked);
  const barOf = (height) => (panel.colorbar === false ? null : barLayout(ctx, {...panel, clipped}, height));
  const xNamed = panel.colLabels && panel.colLabels.length === cols;
  const g = {title, rows, cols, y, bar: barOf(200)};
  let ylabel = [];
  for (let pass = 0; pass < 3; pass++) {  // the wrapped labels' widths depend on the height
    g.left = PAD + ylabel.length * LINE + yTickW;
    g.barW = g.bar ? g.bar.width : 0;
    const room = Math.max(20, w - g.left - g.barW - PAD);
    g.pw = Math.min(room, cols ? cols * CELL_MOST : room);
    const need = y.tokens ? LINE * rows / y.step : 0;  // px: the named rows a line apart
    const lo = rows ? Math.min(Math.max(64, need), Math.max(need, rows * CELL_MOST)) : 64;
    const hi = Math.max(lo, Math.min(Math.max(g.pw, 150), 340));
    g.ph = Math.round(Math.min(hi, Math.max(lo, cols ? g.pw * rows / cols : lo)));
    ylabel = labelLines(ctx, axisLabel(panel.ylabel, y.tokens ? y.step : 1), g.ph + 20);
    g.bar = barOf(g.ph);
  }
  g.ylabel = ylabel;
  const mostX = Math.max(2, Math.floor(g.pw / (widthOf(ctx, String(cols)) + 12)));
  let x = axisTicks(cols, panel.colLabels, xNamed ? NAME_ALL : mostX);
  const spacing = (t) => (t.at.length > 1 ? (t.at[1] - t.at[0]) * g.pw / cols : g.pw);
  let fit = tickFit(ctx, x.labels, spacing(x));
  if (fit.turned && spacing(x) < TURNED_SPACING) {  // too narrow even turned: fewer
    x = axisTicks(cols, panel.colLabels, Math.floor(g.pw / TURNED_SPACING));
    fit = tickFit(ctx, x.labels, spacing(x));
  }
  g.x = x;
  g.turned = fit.turned;
  g.xlabel = labelLines(ctx, axisLabel(panel.xlabel, x.tokens ? x.step : 1), g.pw + g.left);
  g.bottom = 6 + fit.extent + 4 + g.xlabel.length * LINE + 2;
  if (panel.fillRow && h) {  // as tall as the row: the maps of a row, one height
    g.ph = Math.max(g.ph, Math.floor(h - title.height - g.bottom));
  }
  g.height = title.height + g.ph + g.bottom;
  g.minW = g.left + g.barW + PAD + Math.max(72, xNamed ? Math.min(cols, NAME_ALL) * TURNED_SPACING : 0);
  return g;
}

const layout = remembered(layoutOnce);

/** The least width (CSS px) a heatmap panel needs, and its height at width `w`. */
export function measureHeatmap(ctx, panel, w) {
  const g = layout(ctx, panel, w);
  return {minW: g.minW, height: g.height};
}

/**
 * Draw a heatmap panel in `region`.
 * @param {CanvasRenderingContext2D} ctx
 * @param {object} panel {kind: "heatmap", data, rows, cols, cmap, vmin, vmax, extent?,
 *   masked? (1 where masked), categories? ([{label, color?, masked?}]: data holds each
 *   cell's index, a legend replaces the colour bar), faded?, outlineRow?, rowLabels?,
 *   colLabels?, colorbar? (its label; "": room kept; false: none), colorbarTicks?,
 *   colorbarLabels?, empty?, title?, xlabel?, ylabel?, marks? ([row, col] cells to ring),
 *   fillRow? (the plot as tall as the row allows: maps side by side, one height)}
 * @param {{x: number, y: number, w: number, h: number}} region CSS px
 * @param {object} th the theme
 * @param {HTMLCanvasElement} scratch a canvas to paint the cells on
 * @returns {{box: object}} the plot's box (CSS px): where the cells are
 */
export function drawHeatmap(ctx, panel, region, th, scratch) {
  const g = layout(ctx, panel, region.w, region.h);
  const box = {x: region.x + g.left, y: region.y + g.title.height, w: g.pw, h: g.ph};
  drawTitle(ctx, g.title, region.x + region.w / 2, region.y, th);
  if (panel.rows && panel.cols) {
    drawCells(ctx, panel, box, th, scratch);
  } else {  // no tokens: the frame, its title and why it is empty
    emptyMessage(ctx, panel.empty, box.x + box.w / 2, box.y + box.h / 2, box.w - 8, th);
  }
  const cell = (n, start, length) => (i) => start + (i + 0.5) / n * length;
  const X = cell(g.cols, box.x, box.w), Y = cell(g.rows, box.y, box.h);
  axes(ctx, box, {
    xticks: g.x.at.map((i, k) => ({at: X(i), label: g.x.labels[k]})),
    yticks: g.y.at.map((i, k) => ({at: Y(i), label: g.y.labels[k]})),
    turned: g.turned, xlabel: g.xlabel, xlabelAt: box.y + box.h + g.bottom - 2 - g.xlabel.length * LINE,
    ylabel: g.ylabel, ylabelAt: region.x + PAD + g.ylabel.length * LINE - LINE / 2}, th);
  if (g.bar && !g.bar.shared) { drawBar(ctx, panel, g.bar, box, th); }
  return {box};
}
