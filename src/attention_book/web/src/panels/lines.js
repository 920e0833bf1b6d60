// A lines panel: n points a line over x = 0..n-1 (linear or log y), a zero line, a dashed
// marker (the checkpoint shown) with a dot on each line, and a legend outside the plot:
// right of it, or below it when that would take over two fifths of the panel.

import {general} from "../format.js";
import {contrasted} from "../theme.js";
import {logTicks, niceTicks, wholeTicks} from "../ticks.js";
import {ACCENT, LINE, PAD, TEXT_PX, axes, drawTitle, font, labelLines, remembered, text,
  titleBlock, widest, widthOf} from "./style.js";

const LEGEND_ROW = 16;  // px a legend entry
const SWATCH = 28;      // px of line and gap before a legend entry's text

/** A line's colour in the mode shown, with 3:1 contrast against the background unless the
 *  line is a broad band (2 px or more: drawn light under a thinner one on purpose). */
const lineColour = (line, th) => {
  const colour = th.dark && line.dark ? line.dark : line.color;
  return (line.width || 1) >= 2 ? colour : contrasted(colour, th.background);
};

/** Set the stroke of `line`: its colour, width and dashes. */
function strokeOf(ctx, line, th) {
  ctx.strokeStyle = lineColour(line, th);
  ctx.lineWidth = line.width * 1.2;
  ctx.setLineDash(line.dashed ? [5, 4] : []);
}

/** The legend's entries placed from (0, 0): right of the plot, one a row; or below it, as
 *  many a row as fit in `most` px. */
function legendPlaces(ctx, panel, below, most) {
  font(ctx);
  const places = [];
  let x = 0, y = 0;
  if (panel.legendTitle) {
    places.push({title: panel.legendTitle, x: 0, y: 0});
    y += LEGEND_ROW;
  }
  for (const line of panel.lines) {
    const w = SWATCH + widthOf(ctx, line.label);
    if (below && x > 0 && x + w > most) {
      x = 0;
      y += LEGEND_ROW;
    }
    places.push({line, x, y});
    x = below ? x + w + 16 : 0;
    if (!below) { y += LEGEND_ROW; }
  }
  const rows = places.length ? (below ? y / LEGEND_ROW + 1 : y / LEGEND_ROW) : 0;
  return {places, height: rows * LEGEND_ROW};
}

/** Where everything of a lines panel goes in `w` px: the title's lines, the ticks and the
 *  margins measured from them, the legend outside the plot, the scales. */
function layoutOnce(ctx, panel, w, h = 0) {
  const title = titleBlock(ctx, panel.title || "", w - 2 * PAD);
  const {n} = panel, [lo, hi] = panel.ylim;
  const log = !!panel.ylog || panel.yscale === "log";  // then lo > 0
  font(ctx);
  const yvalues = panel.yticks || (log ? logTicks(lo, hi) : niceTicks(lo, hi, 5));
  const ylabels = yvalues.map((v) => general(v, 3));
  const labels = panel.lines.map((l) => l.label).concat(panel.legendTitle ? [panel.legendTitle] : []);
  const legendW = widest(ctx, labels) + SWATCH + 6;
  const ylabelText = log && panel.ylabel && !/log/.test(panel.ylabel) ? panel.ylabel + " (log scale)" : panel.ylabel;
  let below = !!panel.legendBelow || legendW > w * 0.4, ylabel = [], g;
  for (let pass = 0; pass < 3; pass++) {  // the y label's lines, the legend's place
    const left = PAD + ylabel.length * LINE + widest(ctx, ylabels) + 10;
    const right = below ? PAD + 14 : legendW + 14;
    const pw = Math.max(40, w - left - right);
    const legend = legendPlaces(ctx, panel, below, w - 2 * PAD);
    // its own height, or the row's (a taller panel beside it), up to a square plot
    let ph = Math.round(Math.min(210, Math.max(120, pw * 0.55)));
    const room = h - title.height - (6 + LINE + 4 + LINE + (below ? 6 + legend.height : 0) + 2);
    ph = Math.round(Math.max(ph, Math.min(room, pw)));
    if (!below && legend.height > ph) { below = true; continue; }
    ylabel = labelLines(ctx, ylabelText, ph + 20);
    g = {title, log, left, right, pw, ph, legend, below, ylabel, yvalues, ylabels};
  }
  const sx = g.pw / Math.max(n, 1), sy = g.ph / (log ? Math.log(hi / lo) : hi - lo);
  g.X = (x0, i) => x0 + (i + 0.5) * sx;  // x from -0.5 to n - 0.5
  g.Y = (y0, v) => y0 + (log ? Math.log(hi / v) : hi - v) * sy;
  const xlabel = (i) => (panel.xs ? general(panel.xs[i], 4) : String(i));
  const apart = (at) => widest(ctx, at.map(xlabel)) + 10 <= (at.length > 1 ? (at[1] - at[0]) * sx : Infinity);
  g.xat = xTicks(n, panel, apart);
  g.xtickLabels = g.xat.map(xlabel);
  g.xlabel = labelLines(ctx, panel.xlabel, g.pw + g.left);
  g.bottom = 6 + LINE + 4 + g.xlabel.length * LINE + (g.below ? 6 + g.legend.height : 0) + 2;
  g.height = title.height + g.ph + g.bottom;
  g.minW = g.left + g.right + 90;
  return g;
}

/**
 * The x ticks: as many as keep their labels apart (`fits`), whole numbers 1, 2 or 5 x 10^k
 * apart; over named points (`xs`: chapter 3's d_k = 1, 2, 4, ... 512) a step that lands on
 * the last point, if one leaves three ticks or more (d_k = 512 was never named at 390 px);
 * with `xstep`, multiples of it only (chapter 7's whole blocks, never 2.5).
 */
function xTicks(n, panel, fits) {
  const every = panel.xstep || 1, last = n - 1;
  const span = (k) => Array.from({length: Math.floor(last / k) + 1}, (_, i) => i * k);
  if (panel.xs) {
    for (let k = every; k <= last; k += every) {
      if (last % k === 0 && fits(span(k))) {
        if (last / k >= 2) { return span(k); }
        break;
      }
    }
  }
  const units = Math.floor(Math.max(last, 0) / every) + 1;
  const ticks = (m) => wholeTicks(units, m).map((t) => t * every);
  let most = Math.max(2, Math.min(8, units));
  while (most > 2 && !fits(ticks(most))) { most -= 1; }  // as many as keep their labels apart
  return ticks(most);
}

const layout = remembered(layoutOnce);

/** The least width (CSS px) a lines panel needs, and its height at width `w`. */
export function measureLines(ctx, panel, w) {
  const g = layout(ctx, panel, w);
  return {minW: g.minW, height: g.height};
}

/** One line's points, stroked. */
function strokeLine(ctx, ys, X, Y) {
  ctx.beginPath();
  for (let i = 0; i < ys.length; i++) {
    if (i === 0) { ctx.moveTo(X(i), Y(ys[i])); } else { ctx.lineTo(X(i), Y(ys[i])); }
  }
  ctx.stroke();
  if (ys.length === 1 && Number.isFinite(ys[0])) {  // one point: a dot, not an invisible line
    ctx.fillStyle = ctx.strokeStyle;
    ctx.beginPath();
    ctx.arc(X(0), Y(ys[0]), Math.max(3, ctx.lineWidth * 1.5), 0, 2 * Math.PI);
    ctx.fill();
  }
}

/**
 * Where a dense solid line (more points than its pixels) covers each device pixel column:
 * down the middle of each column, where it crosses the band of each segment and the round
 * join at each point (the stroke with a round pen, `width` across), from the highest to the
 * lowest. A stroke of a long zigzag is slow to rasterise (chapter 2's waves and rotation
 * check at s = d = 512: 13-16 ms a frame, benchmarks/README.md); columns are not.
 * @param {ArrayLike<number>} ys (n,) the values (NaN: a gap)
 * @param {function} X index -> CSS px
 * @param {function} Y value -> CSS px
 * @param {number} width the line's width, CSS px
 * @param {number} px device pixels a CSS px
 * @returns {{first: number, span: Float64Array}} the columns (device px from `first`):
 *   each one's [top, bottom] in CSS px, NaN where the line does not reach
 */
function columnSpans(ys, X, Y, width, px) {
  const r = width / 2, first = Math.floor((X(0) - r) * px);
  const n = Math.ceil((X(ys.length - 1) + r) * px) - first + 1;
  const span = new Float64Array(2 * n).fill(NaN);  // (columns, 2): top, bottom
  const widen = (c, y) => {
    if (!(span[2 * c] <= y)) { span[2 * c] = y; }
    if (!(span[2 * c + 1] >= y)) { span[2 * c + 1] = y; }
  };
  const middle = (c) => (c + first + 0.5) / px;  // CSS px
  const band = new Float64Array(8);  // a segment's band: four corners (x, y)
  for (let i = 0; i < ys.length; i++) {
    const xa = X(i), ya = Y(ys[i]);
    if (!Number.isFinite(ya)) { continue; }  // a gap, as a stroke leaves it
    for (let c = Math.floor((xa - r) * px) - first; c <= Math.floor((xa + r) * px) - first; c++) {
      const dx = middle(c) - xa;  // the round join at this point
      if (Math.abs(dx) <= r) {
        const h = Math.sqrt(r * r - dx * dx);
        widen(c, ya - h);
        widen(c, ya + h);
      }
    }
    if (i + 1 >= ys.length || !Number.isFinite(ys[i + 1])) { continue; }
    const xb = X(i + 1), yb = Y(ys[i + 1]), len = Math.hypot(xb - xa, yb - ya) || 1;
    const nx = -(yb - ya) / len * r, ny = (xb - xa) / len * r;  // the normal, r long
    band[0] = xa + nx; band[1] = ya + ny; band[2] = xb + nx; band[3] = yb + ny;  // its corners
    band[4] = xb - nx; band[5] = yb - ny; band[6] = xa - nx; band[7] = ya - ny;
    const lo = Math.min(band[0], band[2], band[4], band[6]), hi = Math.max(band[0], band[2], band[4], band[6]);
    for (let c = Math.floor(lo * px) - first; c <= Math.floor(hi * px) - first; c++) {
      const x = middle(c);
      for (let k = 0; k < 8; k += 2) {  // where the column's middle crosses the band's edges
        const x0 = band[k], y0 = band[k + 1], x1 = band[(k + 2) % 8], y1 = band[(k + 3) % 8];
        if (x0 !== x1 && (x0 - x) * (x1 - x) <= 0) { widen(c, y0 + (y1 - y0) * (x - x0) / (x1 - x0)); }
      }
    }
  }
  return {first, span};
}

/** A CSS colour as the canvas gives it back ("#rrggbb", "rgba(r, g, b, a)") -> [r, g, b, a]
 *  (0..255, alpha 0..1). */
function rgba(css) {
  if (css[0] === "#") { return [1, 3, 5].map((i) => parseInt(css.slice(i, i + 2), 16)).concat(1); }
  const v = css.slice(css.indexOf("(") + 1, -1).split(",").map(Number);
  return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1];
}

/**
 * Dense lines painted as pixels, one image for all: each line's columns (columnSpans), a
 * device pixel covered in the proportion of its height the span covers, blended over the
 * lines before it; then the image drawn onto the canvas once, on the device pixel grid (a
 * rectangle a column was 0.6 us to draw and 1 us to rasterise: 2.5 k of them at s = d = 512).
 */
class DensePixels {
  /** @param {{x0: number, y0: number, x1: number, y1: number}} area device px it may cover */
  constructor(area) {
    this.x0 = Math.floor(area.x0);
    this.y0 = Math.floor(area.y0);
    this.w = Math.max(1, Math.ceil(area.x1) - this.x0);
    this.h = Math.max(1, Math.ceil(area.y1) - this.y0);
    this.rgba = new Uint8ClampedArray(4 * this.w * this.h);  // (h, w): straight colours
    this.empty = true;
  }

  /** Blend colour `css` over the pixels the columns cover. */
  paint({first, span}, css, px) {
    const [r, g, b, alpha] = rgba(css), {w, h, rgba: out} = this;
    const word = new Uint32Array(1);
    new Uint8Array(word.buffer).set([r, g, b, Math.round(255 * alpha)]);
    const pixels = new Uint32Array(out.buffer), solid = word[0];
    const blend = (at, cover) => {  // source over, straight colours
      const k = 4 * at, under = out[k + 3] / 255, a = cover + under * (1 - cover);
      out[k] = (r * cover + out[k] * under * (1 - cover)) / a;
      out[k + 1] = (g * cover + out[k + 1] * under * (1 - cover)) / a;
      out[k + 2] = (b * cover + out[k + 2] * under * (1 - cover)) / a;
      out[k + 3] = 255 * a;
    };
    for (let c = 0; c < span.length / 2; c++) {
      const x = c + first - this.x0;
      if (!(span[2 * c] < span[2 * c + 1]) || x < 0 || x >= w) { continue; }  // NaN: not reached
      const top = Math.max(0, span[2 * c] * px - this.y0), bottom = Math.min(h, span[2 * c + 1] * px - this.y0);
      if (!(top < bottom)) { continue; }  // outside the image
      const y1 = Math.floor(top), y2 = Math.ceil(bottom) - 1;  // the pixels it reaches
      if (y1 === y2) {
        blend(y1 * w + x, (bottom - top) * alpha);
        continue;
      }
      blend(y1 * w + x, (y1 + 1 - top) * alpha);  // the first and last in part, those between whole
      for (let y = y1 + 1; y < y2; y++) {
        if (alpha === 1) { pixels[y * w + x] = solid; } else { blend(y * w + x, alpha); }
      }
      blend(y2 * w + x, (bottom - y2) * alpha);
    }
    this.empty = false;
  }

  /** Draw the image onto `ctx` (its transform `px` device px a CSS px, no translation). */
  draw(ctx, px) {
    if (this.empty) { return; }
    const scratch = canvasOf(this.w, this.h);
    scratch.getContext("2d").putImageData(new ImageData(this.rgba, this.w, this.h), 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(scratch, this.x0 / px, this.y0 / px, this.w / px, this.h / px);
  }
}

let scratch = null;  // the canvas dense lines are painted on: sized once a panel size

/** The scratch canvas, `w` x `h` (resized only when that changes: a resize reallocates it). */
function canvasOf(w, h) {
  scratch = scratch || document.createElement("canvas");
  if (scratch.width !== w) { scratch.width = w; }
  if (scratch.height !== h) { scratch.height = h; }
  return scratch;
}

/**
 * A dense solid line (more points than its pixels) as the pixels its stroke covers, one
 * device pixel column at a time (columnSpans, DensePixels), in the fill style set: what the
 * lines panel draws for such a line, alone (tests/test_lab_legibility.py).
 * @param {CanvasRenderingContext2D} ctx its fill style set, its transform `px` px a CSS px
 * @param {ArrayLike<number>} ys (n,) the values (NaN: a gap)
 * @param {function} X index -> CSS px
 * @param {function} Y value -> CSS px
 * @param {number} width the line's width, CSS px
 * @param {number} px device pixels a CSS px
 * @returns {{first: number, span: Float64Array}} columnSpans's
 */
export function fillColumns(ctx, ys, X, Y, width, px) {
  const spans = columnSpans(ys, X, Y, width, px), {first, span} = spans;
  let top = Infinity, bottom = -Infinity;
  for (let c = 0; c < span.length; c += 2) {
    if (span[c] < top) { top = span[c]; }
    if (span[c + 1] > bottom) { bottom = span[c + 1]; }
  }
  if (!(top <= bottom)) { return spans; }
  const image = new DensePixels({x0: first, x1: first + span.length / 2, y0: top * px, y1: bottom * px});
  image.paint(spans, ctx.fillStyle, px);
  image.draw(ctx, px);
  return spans;
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
  // more points than half the plot's CSS px: each drawn as the columns its stroke covers,
  // together in one image (drawn before the next line that is stroked, to keep the order)
  const dense = panel.n > box.w / 2, px = ctx.getTransform().a || 1;
  const area = {x0: box.x * px, y0: box.y * px, x1: (box.x + box.w) * px, y1: (box.y + box.h) * px};
  let pixels = null;
  ctx.lineJoin = "round";
  // a dashed guide after the solid lines: on top of a curve it follows (chapter 3's line
  // d_k lay under the bold unscaled variance, unseen)
  const order = panel.lines.filter((l) => !l.dashed).concat(panel.lines.filter((l) => l.dashed));
  for (const line of order) {
    strokeOf(ctx, line, th);
    if (dense && !line.dashed) {
      pixels = pixels || new DensePixels(area);
      pixels.paint(columnSpans(line.y, scales.X, Y, ctx.lineWidth, px), ctx.strokeStyle, px);
    } else {
      if (pixels) { pixels.draw(ctx, px); pixels = null; }
      strokeLine(ctx, line.y, scales.X, Y);
    }
  }
  if (pixels) { pixels.draw(ctx, px); }
  ctx.setLineDash([]);
  if (panel.marker !== undefined && panel.marker !== null) { drawMarker(ctx, panel, scales, th); }
  ctx.restore();
}

/** The legend at (lx, ly): its title, then a line and a label an entry. */
function drawLegend(ctx, legend, lx, ly, th) {
  for (const p of legend.places) {
    if (p.title) {
      text(ctx, p.title, lx + p.x, ly + p.y, "left", "top", TEXT_PX, th.text);
      continue;
    }
    strokeOf(ctx, p.line, th);
    ctx.beginPath();
    ctx.moveTo(lx + p.x, ly + p.y + 7);
    ctx.lineTo(lx + p.x + 22, ly + p.y + 7);
    ctx.stroke();
    ctx.setLineDash([]);
    text(ctx, p.line.label, lx + p.x + SWATCH, ly + p.y + 7, "left", "middle", TEXT_PX, th.text);
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
  const g = layout(ctx, panel, region.w, region.h);
  const box = {x: region.x + g.left, y: region.y + g.title.height, w: g.pw, h: g.ph};
  const X = (i) => g.X(box.x, i), Y = (v) => g.Y(box.y, v);
  drawTitle(ctx, g.title, region.x + region.w / 2, region.y, th);
  drawPlot(ctx, panel, {box, X, Y, log: g.log}, th);
  const xlabelAt = box.y + box.h + 6 + LINE + 4;
  axes(ctx, box, {
    xticks: g.xat.map((t, k) => ({at: X(t), label: g.xtickLabels[k]})),
    yticks: g.yvalues.map((v, k) => ({at: Y(v), label: g.ylabels[k]})),
    xlabel: g.xlabel, xlabelAt, ylabel: g.ylabel,
    ylabelAt: region.x + PAD + g.ylabel.length * LINE - LINE / 2}, th);
  if (g.below) {
    drawLegend(ctx, g.legend, region.x + PAD + 4, xlabelAt + g.xlabel.length * LINE + 6, th);
  } else {
    drawLegend(ctx, g.legend, box.x + box.w + 12, box.y + 2, th);
  }
}
