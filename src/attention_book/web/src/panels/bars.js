// A bars panel: horizontal bars, one group a label (down the left), one bar a series, over
// xlim, with a legend of the series above the plot. Every label is named up to NAME_ALL
// groups (the plot grows to a line of text a group); beyond, every k-th, said on the axis.

import {general} from "../format.js";
import {LINE, NAME_ALL, PAD, TEXT_PX, axes, axisLabel, drawTitle, font, labelLines, remembered,
  text, thin, titleBlock, widest, widthOf} from "./style.js";

const KEY = 16;  // px of a legend entry's swatch and gap

/** Where everything of a bars panel goes in `w` px. */
function layoutOnce(ctx, panel, w) {
  const title = titleBlock(ctx, panel.title || "", w - 2 * PAD);
  const n = panel.labels.length, named = thin(n, NAME_ALL);
  font(ctx);
  const labels = named.shown.map((i) => panel.labels[i]);
  const left = PAD + widest(ctx, labels) + 10;
  const right = PAD + 10;  // half the last tick label
  const pw = Math.max(40, w - left - right);
  // the legend, above the plot: as many entries a row as fit
  // a legend only to tell two series or more apart, and only those with a bar drawn (a one-
  // entry legend repeated the axis title; "later steps" showed when there were none)
  const shown = panel.series.filter((se) => se.values.some((v) => v !== null && v > 0));
  const places = [];
  let x = 0, y = 0;
  for (const series of shown.length > 1 ? shown : []) {
    const sw = KEY + widthOf(ctx, series.label);
    if (x > 0 && x + sw > pw) {
      x = 0;
      y += LINE + 2;
    }
    places.push({series, x, y});
    x += sw + 16;
  }
  const legendH = places.length ? y + LINE + 6 : 0;
  const ph = Math.max(64, Math.min(n, NAME_ALL) * LINE);
  const xlabel = labelLines(ctx, axisLabel(panel.xlabel, named.step), pw + left);
  const bottom = 6 + LINE + 4 + xlabel.length * LINE + 2;
  return {title, named, labels, left, pw, ph, places, legendH, xlabel, bottom,
    height: title.height + legendH + ph + bottom, minW: left + right + 80};
}

const layout = remembered(layoutOnce);

/** The least width (CSS px) a bars panel needs, and its height at width `w`. */
export function measureBars(ctx, panel, w) {
  const g = layout(ctx, panel, w);
  return {minW: g.minW, height: g.height};
}

/**
 * Draw a bars panel in `region`.
 * @param {CanvasRenderingContext2D} ctx
 * @param {object} panel {kind: "bars", labels, series: [{label, values, color, dark?}],
 *   xlim: [lo, hi], title?, xlabel?}
 * @param {{x: number, y: number, w: number, h: number}} region CSS px
 * @param {object} th the theme
 */
export function drawBars(ctx, panel, region, th) {
  const g = layout(ctx, panel, region.w);
  drawTitle(ctx, g.title, region.x + region.w / 2, region.y, th);
  const box = {x: region.x + g.left, y: region.y + g.title.height + g.legendH, w: g.pw, h: g.ph};
  const [lo, hi] = panel.xlim, n = panel.labels.length, k = panel.series.length;
  const group = box.h / Math.max(n, 1), bar = group * 0.8 / Math.max(k, 1);
  const X = (v) => box.x + (Math.min(Math.max(v, lo), hi) - lo) / (hi - lo) * box.w;
  panel.series.forEach((series, j) => {
    ctx.fillStyle = th.dark && series.dark ? series.dark : series.color;
    series.values.forEach((v, i) => {
      if (v === null || Number.isNaN(v)) { return; }
      ctx.fillRect(X(lo), box.y + i * group + group * 0.1 + j * bar, X(v) - X(lo), Math.max(bar - 1, 0.5));
    });
  });
  for (const p of g.places) {  // the legend
    const lx = box.x + p.x, ly = region.y + g.title.height + p.y;
    ctx.fillStyle = th.dark && p.series.dark ? p.series.dark : p.series.color;
    ctx.fillRect(lx, ly + 2, 12, 10);
    text(ctx, p.series.label, lx + KEY, ly + 7, "left", "middle", TEXT_PX, th.text);
  }
  axes(ctx, box, {
    xticks: [lo, (lo + hi) / 2, hi].map((v) => ({at: X(v), label: general(v, 3)})),
    yticks: g.named.shown.map((i, m) => ({at: box.y + (i + 0.5) * group, label: g.labels[m]})),
    xlabel: g.xlabel, xlabelAt: box.y + box.h + 6 + LINE + 4}, th);
}
