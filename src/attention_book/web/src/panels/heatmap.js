// A heatmap panel: a matrix through a colour map, its masked cells grey and crossed, a row
// outlined, and a colour bar. The matrix is drawn as an image of one pixel a cell, scaled
// up without smoothing: one putImageData and one drawImage whatever its size.

import {colorize, lut} from "../colormaps.js";
import {general} from "../format.js";
import {wholeTicks} from "../ticks.js";
import {ACCENT, LINE, NAME_ALL, PAD, TEXT_PX, axes, axisLabel, drawTitle, emptyMessage, font,
  labelLines, remembered, rotatedText, text, thin, tickFit, titleBlock, widest,
  widthOf} from "./style.js";

const MASKED = {light: [230, 230, 230], dark: [90, 90, 90]};  // grey, not a colour of the map
const TURNED_SPACING = 12;  // px: the least room between two turned (vertical) tick labels

/** The cells' pixels (one a cell) on `scratch`, masked cells grey. */
function paintCells(panel, scratch, th) {
  const {rows, cols} = panel;
  // resized only when the size changes (a resize reallocates it; the image covers it whole)
  if (scratch.width !== cols) { scratch.width = cols; }
  if (scratch.height !== rows) { scratch.height = rows; }
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
function axisTicks(n, labels, most, keep) {
  if (labels && labels.length === n) {
    const {shown, step} = thin(n, Math.min(most, NAME_ALL), keep);
    return {at: shown, labels: shown.map((i) => String(labels[i])), step, tokens: true};
  }
  const at = wholeTicks(n, Math.max(2, Math.min(most, 6)));
  return {at, labels: at.map(String), step: 1, tokens: false};
}

/**
 * Where everything of a heatmap goes in a panel `w` px wide: the title's lines, the margins
 * measured from the labels, the plot's size (cells close to square, every named row a line
 * of text tall), the ticks, and the least width that keeps the named columns apart.
 */
function layoutOnce(ctx, panel, w, h = 0) {
  const [rows, cols] = panel.extent || [panel.rows, panel.cols];
  const title = titleBlock(ctx, panel.title || "", w - 2 * PAD);
  font(ctx);
  const y = axisTicks(rows, panel.rowLabels, NAME_ALL, panel.outlineRow);
  const yTickW = widest(ctx, y.labels) + 10;
  // a colour bar shared with the panel beside it (colorbar ""): its room kept, so that the
  // maps of a row are one size; none (false): no room
  const bar = panel.colorbar === false ? null
    : {ticks: panel.colorbarTicks || [panel.vmin, (panel.vmin + panel.vmax) / 2, panel.vmax],
      shared: panel.colorbar === ""};
  if (bar) { bar.tickW = widest(ctx, bar.ticks.map((v) => general(v, 3))); }
  const xNamed = panel.colLabels && panel.colLabels.length === cols;
  const g = {title, rows, cols, y, bar};
  let ylabel = [], barLabel = [];
  for (let pass = 0; pass < 3; pass++) {  // the wrapped labels' widths depend on the height
    g.left = PAD + ylabel.length * LINE + yTickW;
    g.barW = bar ? 8 + 10 + 4 + bar.tickW + 4 + barLabel.length * LINE + 2 : 0;
    g.pw = Math.max(20, w - g.left - g.barW - PAD);
    const need = y.tokens ? LINE * rows / y.step : 0;  // px: the named rows a line apart
    const lo = Math.max(64, need), hi = Math.max(lo, Math.min(Math.max(g.pw, 150), 340));
    g.ph = Math.round(Math.min(hi, Math.max(lo, cols ? g.pw * rows / cols : lo)));
    ylabel = labelLines(ctx, axisLabel(panel.ylabel, y.tokens ? y.step : 1), g.ph + 20);
    barLabel = bar ? (bar.shared ? [""] : labelLines(ctx, panel.colorbar || "", g.ph + 20)) : [];
  }
  g.ylabel = ylabel;
  g.barLabel = barLabel;
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

/** The colour bar right of `box`: a strip of the map, its ticks and its label's lines. */
function drawColorbar(ctx, panel, g, box, th) {
  const bar = {x: box.x + box.w + 8, y: box.y, w: 10, h: box.h};
  ctx.imageSmoothingEnabled = true;  // the map's 256 levels stretched over the bar's height
  ctx.drawImage(barImage(panel.cmap), 0, 0, 1, 256, bar.x, bar.y, bar.w, bar.h);
  ctx.strokeStyle = th.muted;
  ctx.strokeRect(bar.x - 0.5, bar.y - 0.5, bar.w + 1, bar.h + 1);
  const {vmin, vmax} = panel;
  for (const v of g.bar.ticks) {
    const at = bar.y + (vmax - v) / (vmax - vmin) * bar.h;
    text(ctx, general(v, 3), bar.x + bar.w + 4, at, "left", "middle", TEXT_PX, th.text);
  }
  const lx = bar.x + bar.w + 4 + g.bar.tickW + 4 + LINE / 2;
  g.barLabel.forEach((line, k) => rotatedText(ctx, line, lx + k * LINE, bar.y + bar.h / 2, th.text));
}

/** The least width (CSS px) a heatmap panel needs, and its height at width `w`. */
export function measureHeatmap(ctx, panel, w) {
  const g = layout(ctx, panel, w);
  return {minW: g.minW, height: g.height};
}

/**
 * Draw a heatmap panel in `region`.
 * @param {CanvasRenderingContext2D} ctx
 * @param {object} panel {kind: "heatmap", data, rows, cols, cmap, vmin, vmax, extent?,
 *   masked?, faded?, outlineRow?, rowLabels?, colLabels?, colorbar?, colorbarTicks?, empty?,
 *   title?, xlabel?, ylabel?, marks? ([row, col] cells to ring), fillRow? (the plot as tall
 *   as the row allows: maps side by side, one height)}
 * @param {{x: number, y: number, w: number, h: number}} region CSS px
 * @param {object} th the theme
 * @param {HTMLCanvasElement} scratch a canvas to paint the cells on
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
  if (g.bar && !g.bar.shared) { drawColorbar(ctx, panel, g, box, th); }
}
