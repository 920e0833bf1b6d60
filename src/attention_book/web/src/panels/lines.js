// A lines panel: n points a line over x = 0..n-1 (linear or log y), a zero line, a dashed
// marker (the checkpoint shown) with a dot on each line, and a legend right of the plot or,
// when that would take over a third of the panel, inside it on a veil.

import {general} from "../format.js";
import {wholeTicks} from "../ticks.js";
import {ACCENT, FONT, MARGIN, TEXT_PX, axes, text} from "./style.js";

const LEGEND_ROW = 16;  // px a legend entry

const lineColour = (line, th) => (th.dark && line.dark ? line.dark : line.color);

/** Set the stroke of `line`: its colour, width and dashes. */
function strokeOf(ctx, line, th) {
  ctx.strokeStyle = lineColour(line, th);
  ctx.lineWidth = line.width * 1.2;
  ctx.setLineDash(line.dashed ? [5, 4] : []);
}

/** The panel's scales: its plot area and the maps X (index) and Y (value) to CSS px. */
function layout(ctx, panel, region) {
  ctx.font = TEXT_PX + "px " + FONT;
  const labels = panel.lines.map((l) => l.label).concat(panel.legendTitle ? [panel.legendTitle] : []);
  const legendW = Math.max(0, ...labels.map((l) => ctx.measureText(l).width)) + 34;
  const inside = legendW > region.w / 3;
  const box = {x: region.x + MARGIN.left, y: region.y + MARGIN.top,
               w: region.w - MARGIN.left - (inside ? 16 : legendW + 14),
               h: region.h - MARGIN.top - MARGIN.bottom};
  const {n} = panel, [lo, hi] = panel.ylim;
  const log = !!panel.ylog || panel.yscale === "log";  // then lo > 0
  const sx = box.w / Math.max(n, 1), sy = box.h / (log ? Math.log(hi / lo) : hi - lo);
  const X = (i) => box.x + (i + 0.5) * sx;  // x from -0.5 to n - 0.5
  const Y = (v) => box.y + (log ? Math.log(hi / v) : hi - v) * sy;
  return {box, X, Y, log, legendW, inside};
}

/** One line's points, stroked. A dense line (more points than half its pixels) is stroked in
 *  runs of 32 points with bevel joins: one stroke of a long thick zigzag is slow to
 *  rasterise (benchmarks/README.md), the runs about a tenth of it. */
function strokeLine(ctx, ys, X, Y, run) {
  ctx.beginPath();
  for (let i = 0; i < ys.length; i++) {
    if (i === 0) { ctx.moveTo(X(i), Y(ys[i])); } else { ctx.lineTo(X(i), Y(ys[i])); }
    if (i % run === run - 1 && i < ys.length - 1) {  // end this run; the next starts here
      ctx.stroke();
      ctx.beginPath();
      ctx.moveTo(X(i), Y(ys[i]));
    }
  }
  if (ys.length === 1) { ctx.lineTo(X(0) + 0.01, Y(ys[0])); }
  ctx.stroke();
}

/** The dashed marker at index panel.marker and a dot where each solid line crosses it. */
function drawMarker(ctx, panel, {box, X, Y}, th) {
  const at = Math.round(X(panel.marker)) + 0.5;
  ctx.strokeStyle = ACCENT;
  ctx.lineWidth = 1.5;
  ctx.setLineDash([4, 3]);
  ctx.beginPath();
  ctx.moveTo(at, box.y);
  ctx.lineTo(at, box.y + box.h);
  ctx.stroke();
  ctx.setLineDash([]);
  for (const line of panel.lines) {
    const v = line.y[panel.marker];
    if (line.dashed || v === undefined || Number.isNaN(v)) { continue; }
    ctx.fillStyle = lineColour(line, th);
    ctx.beginPath();
    ctx.arc(X(panel.marker), Y(v), 3.5, 0, 2 * Math.PI);
    ctx.fill();
  }
}

/** Everything inside the plot area, clipped to it: the zero line, the lines, the marker. */
function drawPlot(ctx, panel, scales, th) {
  const {box, Y, log} = scales;
  ctx.save();
  ctx.beginPath();
  ctx.rect(box.x, box.y, box.w, box.h);
  ctx.clip();
  if (panel.zero && !log) {
    ctx.strokeStyle = th.border;
    ctx.lineWidth = 0.8;
    ctx.beginPath();
    ctx.moveTo(box.x, Math.round(Y(0)) + 0.5);
    ctx.lineTo(box.x + box.w, Math.round(Y(0)) + 0.5);
    ctx.stroke();
  }
  const dense = panel.n > box.w / 2;
  ctx.lineJoin = dense ? "bevel" : "round";
  for (const line of panel.lines) {
    strokeOf(ctx, line, th);
    strokeLine(ctx, line.y, scales.X, Y, dense ? 32 : Infinity);
  }
  ctx.setLineDash([]);
  if (panel.marker !== undefined && panel.marker !== null) { drawMarker(ctx, panel, scales, th); }
  ctx.restore();
}

/** The legend: right of the plot, or inside it (top right) on a veil. */
function drawLegend(ctx, panel, {box, legendW, inside}, th) {
  const lx = inside ? box.x + box.w - legendW + 4 : box.x + box.w + 12;
  let ly = box.y + 2;
  if (inside) {
    const rows = panel.lines.length + (panel.legendTitle ? 1 : 0);
    ctx.globalAlpha = 0.85;
    ctx.fillStyle = th.background;
    ctx.fillRect(lx - 6, ly - 2, legendW + 2, rows * LEGEND_ROW + 4);
    ctx.globalAlpha = 1;
  }
  if (panel.legendTitle) {
    text(ctx, panel.legendTitle, lx, ly, "left", "top", TEXT_PX, th.text);
    ly += LEGEND_ROW;
  }
  for (const line of panel.lines) {
    strokeOf(ctx, line, th);
    ctx.beginPath();
    ctx.moveTo(lx, ly + 7);
    ctx.lineTo(lx + 22, ly + 7);
    ctx.stroke();
    ctx.setLineDash([]);
    text(ctx, line.label, lx + 28, ly + 7, "left", "middle", TEXT_PX, th.text);
    ly += LEGEND_ROW;
  }
}

/**
 * Draw a lines panel in `region`.
 * @param {CanvasRenderingContext2D} ctx
 * @param {object} panel {kind: "lines", n, lines: [{y, label, color, dark?, width, dashed?}],
 *   ylim: [lo, hi], ylog?|yscale?, yticks?, xs?, zero?, marker?, legendTitle?, title?,
 *   xlabel?, ylabel?}
 * @param {{x: number, y: number, w: number, h: number}} region CSS px
 * @param {object} th the theme
 */
export function drawLines(ctx, panel, region, th) {
  const scales = layout(ctx, panel, region), {box, X, Y} = scales;
  drawPlot(ctx, panel, scales, th);
  const xticks = wholeTicks(panel.n, Math.max(2, Math.min(6, Math.floor(box.w / 45))))
    .map((t) => ({at: X(t), label: panel.xs ? general(panel.xs[t], 4) : String(t)}));
  const yticks = (panel.yticks || [panel.ylim[0], panel.ylim[1]]).map((v) => ({at: Y(v), label: general(v, 3)}));
  axes(ctx, box, panel, xticks, yticks, th);
  drawLegend(ctx, panel, scales, th);
}
