// A grid panel: maps to compare (heads, layers, a permutation's pair), each in a plot box of
// one size, on one colour scale with one colour bar outside them (right of the first row),
// as small multiples: the rows named on the left of the first column only, the columns
// under the lowest map of each column, the axis titles once. The number of maps a row comes
// from the width and the grid's least map width (`least`), never from a state's labels, so
// scrubbing a control never moves a map.

import {LINE, NAME_ALL, PAD, TEXT_PX, axes, axisLabel, drawTitle, emptyMessage, font, labelLines,
  remembered, rotatedText, text, tickFit, titleBlock, widest, widthOf} from "./style.js";
import {CELL_MOST, TURNED_SPACING, axisTicks, barLayout, clips, drawBar, drawCells, paintMaps} from "./heatmap.js";

const GAP = 12;     // px between two maps across
const ROW_GAP = 6;  // px between two rows of maps
const LEAST = 96;   // px: the least map width, unless the grid says

/** Where everything goes in `w` px: the columns of maps, one map's plot box, each row's
 *  titles and ticks, the colour bar, the axis titles. */
function layoutOnce(ctx, panel, w) {
  const n = panel.maps.length, {rows, cols} = panel;
  const title = titleBlock(ctx, panel.title || "", w - 2 * PAD);
  font(ctx);
  const y = axisTicks(rows, panel.rowLabels, NAME_ALL, panel.outlineRow);
  const yTickW = widest(ctx, y.labels) + 10;
  const datas = panel.maps.map((m) => m.data);
  const clipped = clips(datas, panel.vmin, panel.vmax, panel.masked);
  const masked = !!panel.masked || panel.maps.some((m) => m.masked);  // then the legend names it
  const g = {title, n, y};
  let ylabel = [], bar = barLayout(ctx, {...panel, clipped, masked}, 200);
  for (let pass = 0; pass < 3; pass++) {  // the wrapped labels depend on the plot's height
    g.left = PAD + ylabel.length * LINE + yTickW;
    g.barW = panel.colorbar === false ? 0 : bar.width;
    const room = w - g.left - g.barW - PAD;
    // a map at least `least` px, and wide enough to name every column of up to NAME_ALL (the
    // labs' legibility contract; past it every k-th is named, as on any axis): the columns
    // follow the width and the tokens' count, never their labels' widths
    const least = Math.max(panel.least || LEAST, cols <= NAME_ALL ? cols * TURNED_SPACING + 8 : 0);
    g.columns = Math.max(1, Math.min(n, panel.columns || n, Math.floor((room + GAP) / (least + GAP))));
    const each = Math.floor((room - (g.columns - 1) * GAP) / g.columns);
    g.pw = Math.max(20, Math.min(each, cols ? cols * CELL_MOST : each));
    const need = y.tokens ? LINE * rows / y.step : 0;
    const lo = rows ? Math.min(Math.max(48, need), Math.max(need, rows * CELL_MOST)) : 64;
    g.ph = Math.round(Math.min(Math.max(lo, 340), Math.max(lo, g.pw * rows / Math.max(cols, 1))));
    ylabel = labelLines(ctx, axisLabel(panel.ylabel, y.tokens ? y.step : 1), g.ph + 20);
    bar = barLayout(ctx, {...panel, clipped, masked}, g.ph);
  }
  g.bar = panel.colorbar === false ? null : bar;
  g.ylabel = ylabel;
  const xNamed = panel.colLabels && panel.colLabels.length === cols;
  const mostX = Math.max(2, Math.floor(g.pw / (widthOf(ctx, String(cols)) + 12)));
  let x = axisTicks(cols, panel.colLabels, xNamed ? NAME_ALL : mostX);
  const spacing = (t) => (t.at.length > 1 ? (t.at[1] - t.at[0]) * g.pw / cols : g.pw);
  let fit = tickFit(ctx, x.labels, spacing(x));
  if (fit.turned && spacing(x) < TURNED_SPACING) {
    x = axisTicks(cols, panel.colLabels, Math.floor(g.pw / TURNED_SPACING));
    fit = tickFit(ctx, x.labels, spacing(x));
  }
  g.x = x;
  g.turned = fit.turned;
  g.tickH = 6 + fit.extent + 4;
  g.gridRows = Math.max(1, Math.ceil(n / g.columns));
  // each row of maps: its titles' height (the tallest), and whether a map in it is the
  // lowest of its column (then the column's tick labels go under it)
  g.rowsOf = [];
  let top = title.height;
  for (let r = 0; r < g.gridRows; r++) {
    const ks = Array.from({length: Math.min(g.columns, n - r * g.columns)}, (_, c) => r * g.columns + c);
    const titles = ks.map((k) => titleBlock(ctx, panel.maps[k].title || "", g.pw));
    const titleH = Math.max(8, ...titles.map((t) => t.height));
    const lowest = ks.some((k) => k + g.columns >= n);
    g.rowsOf.push({ks, titles, top, titleH, lowest});
    top += titleH + g.ph + (lowest ? g.tickH : 0) + ROW_GAP;
  }
  g.xlabel = labelLines(ctx, axisLabel(panel.xlabel, x.tokens ? x.step : 1), g.columns * (g.pw + GAP));
  g.height = top - ROW_GAP + (g.xlabel.length ? 2 + g.xlabel.length * LINE : 0) + PAD;
  g.minW = g.left + g.barW + PAD + Math.min(n, 2) * 72;
  return g;
}

const layout = remembered(layoutOnce);

/** The least width (CSS px) a grid panel needs, and its height at width `w`. */
export function measureGrid(ctx, panel, w) {
  const g = layout(ctx, panel, w);
  return {minW: g.minW, height: g.height};
}

/**
 * Draw a grid panel in `region`.
 * @param {CanvasRenderingContext2D} ctx
 * @param {object} panel {kind: "grid", maps: [{title, data, faded?, masked?, marks?}], rows,
 *   cols, cmap, vmin, vmax, masked? (one map's cells, every map), outlineRow?, rowLabels?,
 *   colLabels?, colorbar?, colorbarTicks?, colorbarLabels?, xlabel?, ylabel?, title?,
 *   columns? (the most maps a row), least? (px: the least map width), empty?}
 * @param {{x: number, y: number, w: number, h: number}} region CSS px
 * @param {object} th the theme
 * @param {HTMLCanvasElement} scratch a canvas to paint the cells on
 * @returns {{boxes: object[]}} each map's plot box (CSS px)
 */
export function drawGrid(ctx, panel, region, th, scratch) {
  const g = layout(ctx, panel, region.w);
  drawTitle(ctx, g.title, region.x + region.w / 2, region.y, th);
  const boxes = [], x0 = region.x + g.left;
  const {rows, cols} = panel;
  const maps = panel.maps.map((m) => ({...panel, ...m, masked: m.masked || panel.masked}));
  if (rows && cols) { paintMaps(maps, rows, cols, scratch, th); }  // every map in one image
  for (const row of g.rowsOf) {
    row.ks.forEach((k, c) => {
      const box = {x: x0 + c * (g.pw + GAP), y: region.y + row.top + row.titleH, w: g.pw, h: g.ph};
      boxes.push(box);
      drawTitle(ctx, row.titles[c], box.x + box.w / 2, region.y + row.top + row.titleH - row.titles[c].height, th);
      if (rows && cols) {
        drawCells(ctx, maps[k], box, th, scratch, k);
      } else {
        emptyMessage(ctx, panel.empty, box.x + box.w / 2, box.y + box.h / 2, box.w - 8, th);
      }
      const X = (i) => box.x + (i + 0.5) / cols * box.w, Y = (i) => box.y + (i + 0.5) / rows * box.h;
      const bottom = k + g.columns >= g.n;  // the lowest map of its column: its ticks named
      axes(ctx, box, {
        xticks: bottom ? g.x.at.map((i, m) => ({at: X(i), label: g.x.labels[m]})) : [],
        yticks: c === 0 ? g.y.at.map((i, m) => ({at: Y(i), label: g.y.labels[m]})) : [],
        turned: g.turned}, th);
    });
  }
  const first = boxes[0], last = g.rowsOf[g.rowsOf.length - 1];
  const whole = {x: x0, y: region.y + g.rowsOf[0].top + g.rowsOf[0].titleH,
    w: Math.min(g.columns, g.n) * (g.pw + GAP) - GAP,
    h: last.top + last.titleH + g.ph - g.rowsOf[0].top - g.rowsOf[0].titleH};
  const ylabelAt = region.x + PAD + g.ylabel.length * LINE - LINE / 2;  // once, for the whole grid
  g.ylabel.forEach((line, k) =>
    rotatedText(ctx, line, ylabelAt - (g.ylabel.length - 1 - k) * LINE, whole.y + whole.h / 2, th.text));
  g.xlabel.forEach((line, k) => {
    const at = region.y + last.top + last.titleH + g.ph + (last.lowest ? g.tickH : 0) + 2 + k * LINE;
    text(ctx, line, whole.x + whole.w / 2, at, "center", "top", TEXT_PX, th.text);
  });
  if (g.bar && first) {
    const right = {x: x0, y: first.y, w: Math.min(g.columns, g.n) * (g.pw + GAP) - GAP, h: g.ph};
    drawBar(ctx, {...panel, clipped: g.bar.clipped}, g.bar, right, th);
  }
  return {boxes};
}
