// A bars panel: horizontal bars, one group a label (down the left), one bar a series, over
// xlim, with a legend of the series above the plot.

import {general} from "../format.js";
import {FONT, MARGIN, TEXT_PX, axes, fittedTitle, text} from "./style.js";

/**
 * Draw a bars panel in `region`.
 * @param {CanvasRenderingContext2D} ctx
 * @param {object} panel {kind: "bars", labels, series: [{label, values, color, dark?}],
 *   xlim: [lo, hi], title?, xlabel?}
 * @param {{x: number, y: number, w: number, h: number}} region CSS px
 * @param {object} th the theme
 */
export function drawBars(ctx, panel, region, th) {
  ctx.font = TEXT_PX + "px " + FONT;
  const labelW = Math.max(0, ...panel.labels.map((l) => ctx.measureText(l).width));
  const box = {x: region.x + Math.min(labelW + 14, region.w * 0.45), y: region.y + MARGIN.top + 18,
               h: region.h - MARGIN.top - 18 - MARGIN.bottom};
  box.w = region.x + region.w - 16 - box.x;
  const [lo, hi] = panel.xlim, n = panel.labels.length, k = panel.series.length;
  const group = box.h / Math.max(n, 1), bar = group * 0.8 / Math.max(k, 1);
  const X = (v) => box.x + (Math.min(Math.max(v, lo), hi) - lo) / (hi - lo) * box.w;
  panel.series.forEach((series, j) => {
    ctx.fillStyle = th.dark && series.dark ? series.dark : series.color;
    series.values.forEach((v, i) => {
      if (v === null || Number.isNaN(v)) { return; }
      ctx.fillRect(X(lo), box.y + i * group + group * 0.1 + j * bar, X(v) - X(lo), bar - 1);
    });
    // legend, above the plot, left to right
    const lx = box.x + j * (box.w / k);
    ctx.fillRect(lx, region.y + MARGIN.top, 12, 10);
    text(ctx, series.label, lx + 16, region.y + MARGIN.top + 5, "left", "middle", TEXT_PX, th.text);
  });
  const xticks = [lo, (lo + hi) / 2, hi].map((v) => ({at: X(v), label: general(v, 3)}));
  // every label when a group is a line of text tall; else every step-th, so none overlaps
  // (chapter 3's 128 keys: every 9th, the heatmap beside names them all)
  const step = Math.max(1, Math.ceil((TEXT_PX + 2) / group));
  const yticks = panel.labels.flatMap((l, i) => (i % step ? [] : [{at: box.y + (i + 0.5) * group, label: l}]));
  axes(ctx, box, {...panel, title: ""}, xticks, yticks, th);
  fittedTitle(ctx, panel.title || "", region.x + region.w / 2, region.y + MARGIN.top - 8, region.w - 8, th);
}
