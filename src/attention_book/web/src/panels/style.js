// What every panel draws with: the font, its sizes, the accent colour, and the helpers that
// measure text before it is placed: titles wrapped (never cut), tick labels turned when they
// do not fit across, the axes' frame and labels.

export const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";
export const TEXT_PX = 11;  // CSS px: the smallest text is 11 px at any width
export const LINE = 14;     // px a line of 11 px text takes, with its gap
const TITLE_PX = 12;
export const ACCENT = "#ff3b30";  // the chosen query's outline, as the matplotlib views draw it
/** A masked cell, in every lab that masks (a key a query may not see): a neutral grey that
 *  no colour map of the labs holds (colormaps.js), hatched where a cell is big enough to show
 *  the lines, the same in light and dark mode; the legend beside the colour bar names it. */
export const MASKED = {fill: "#9a9a9a", rgb: [154, 154, 154], hatch: "#454545", least: 5};
const HATCH = 6;  // CSS px between the hatch's lines
export const PAD = 4;       // px kept clear at the panel's edges
/** Every token is named up to this many; beyond, every k-th (and the outlined one). */
export const NAME_ALL = 16;

/** Set the font: `px` pixels, bold or not (only when it changes: setting a canvas's font
 *  parses it, which the many measurements of a layout made the larger part of a draw). */
export function font(ctx, px = TEXT_PX, bold = false) {
  const f = (bold ? "600 " : "") + px + "px " + FONT;
  if (ctx.abFont !== f) {
    ctx.font = f;
    ctx.abFont = f;
  }
}

/** Forget the font set (after ctx.restore(), or a canvas resized: its state reset). */
export function fontReset(ctx) { ctx.abFont = undefined; }

const widths = new Map();  // font + text -> width: a figure measures its labels several times

/** The width of `str` in the font set now (measured once a font and text). */
export function widthOf(ctx, str) {
  const key = (ctx.abFont || ctx.font) + "\u0000" + str;
  let w = widths.get(key);
  if (w === undefined) {
    if (widths.size > 4096) { widths.clear(); }
    w = ctx.measureText(String(str)).width;
    widths.set(key, w);
  }
  return w;
}

/**
 * A panel kind's layout(ctx, panel, w, ...) remembered per panel object and arguments: the
 * figure measures each panel at a few widths and then draws it at one of them, and a redraw
 * (a new width, the theme) keeps the panels. The layout reads only the panel and the fonts
 * (never the theme), and nothing changes a panel once its figure is made.
 * @param {function} layout
 * @returns {function} the same function, remembered
 */
export function remembered(layout) {
  const memo = new WeakMap();
  return (ctx, panel, ...args) => {
    let byArgs = memo.get(panel);
    if (!byArgs) {
      byArgs = new Map();
      memo.set(panel, byArgs);
    }
    const key = args.join(",");
    let g = byArgs.get(key);
    if (g === undefined) {
      g = layout(ctx, panel, ...args);
      byArgs.set(key, g);
    }
    return g;
  };
}

/** The widest of `strs` in the font set now (0 for none). */
export const widest = (ctx, strs) => strs.reduce((w, s) => Math.max(w, widthOf(ctx, s)), 0);

/**
 * One line of text at (x, y) in CSS px.
 * @param {CanvasRenderingContext2D} ctx
 * @param {string} str
 * @param {number} x
 * @param {number} y
 * @param {CanvasTextAlign} align
 * @param {CanvasTextBaseline} baseline
 * @param {number} px the font size
 * @param {string} colour
 * @param {boolean} [bold]
 */
export function text(ctx, str, x, y, align, baseline, px, colour, bold = false) {
  font(ctx, px, bold);
  ctx.fillStyle = colour;
  ctx.textAlign = align;
  ctx.textBaseline = baseline;
  ctx.fillText(str, x, y);
}

/**
 * Text turned by `angle` radians (negative: anticlockwise) about its anchor (x, y).
 * @param {CanvasRenderingContext2D} ctx
 * @param {string} str
 * @param {number} x
 * @param {number} y
 * @param {number} angle
 * @param {CanvasTextAlign} align
 * @param {CanvasTextBaseline} baseline
 * @param {string} colour
 */
export function turnedText(ctx, str, x, y, angle, align, baseline, colour) {
  ctx.save();
  ctx.translate(x, y);
  ctx.rotate(angle);
  text(ctx, str, 0, 0, align, baseline, TEXT_PX, colour);
  ctx.restore();
  fontReset(ctx);
}

/** Vertical text centred on (x, y), read bottom to top: an axis label. */
export const rotatedText = (ctx, str, x, y, colour) =>
  turnedText(ctx, str, x, y, -Math.PI / 2, "center", "middle", colour);

/**
 * `str` in lines at most `most` px wide, broken between words (a word wider than `most`
 * has a line of its own; the caller gives it room).
 * @param {CanvasRenderingContext2D} ctx its font set
 * @param {string} str
 * @param {number} most px
 * @returns {string[]}
 */
export function wrap(ctx, str, most) {
  const lines = [];
  for (const word of String(str).split(/\s+/).filter(Boolean)) {
    const last = lines.length - 1;
    if (last >= 0 && widthOf(ctx, lines[last] + " " + word) <= most) {
      lines[last] += " " + word;
    } else {
      lines.push(word);
    }
  }
  return lines;
}

/**
 * A title laid out in `most` px: its lines (wrapped, never cut) and the height they take.
 * @param {CanvasRenderingContext2D} ctx
 * @param {string} title
 * @param {number} most px
 * @returns {{lines: string[], height: number}}
 */
export function titleBlock(ctx, title, most) {
  font(ctx, TITLE_PX, true);
  const lines = title ? wrap(ctx, title, most) : [];
  return {lines, height: lines.length ? lines.length * (TITLE_PX + 3) + 10 : 8};
}

/** Draw a title block's lines centred on x, from `top` down. */
export function drawTitle(ctx, block, x, top, th) {
  block.lines.forEach((line, k) =>
    text(ctx, line, x, top + 2 + k * (TITLE_PX + 3), "center", "top", TITLE_PX, th.text, true));
}

/**
 * Which of n labels to name: every one up to NAME_ALL (or while `fits` says they fit), else
 * every k-th, evenly, and `keep` (the outlined one) always.
 * @param {number} n
 * @param {number} most the most that fit (>= 1)
 * @param {number} [keep] an index always named
 * @returns {{shown: number[], step: number}}
 */
export function thin(n, most, keep) {
  const step = Math.max(1, Math.ceil(n / Math.max(1, most)));
  const shown = [];
  for (let i = 0; i < n; i += step) { shown.push(i); }
  if (keep !== undefined && keep !== null && keep < n && !shown.includes(keep)) {
    // the outlined one replaces its nearest neighbour, so that no two collide
    let near = 0;
    shown.forEach((i, k) => { if (Math.abs(i - keep) < Math.abs(shown[near] - keep)) { near = k; } });
    shown[near] = keep;
  }
  return {shown, step};
}

/** "every 2nd", "1 in 3": how labels were thinned, for the axis's label. */
export const thinNote = (step) => (step === 2 ? "every 2nd named" : `1 in ${step} named`);

/** An axis label with its thinning said, if any: "query i (every 2nd named)". An axis without
 *  a label (the panel beside it names it) says nothing, never the thinning alone. */
export const axisLabel = (label, step) => (label && step > 1 ? label + " (" + thinNote(step) + ")" : label || "");

/**
 * How tick labels along an axis of `length` px fit: across (horizontal) if the widest fits
 * its spacing, else turned a quarter (vertical), in which case a line of text must fit the
 * spacing. Returns the turn and the extent the labels take out from the axis.
 * @param {CanvasRenderingContext2D} ctx
 * @param {string[]} labels the labels shown
 * @param {number} spacing px between neighbouring labels' anchors
 * @returns {{turned: boolean, extent: number}}
 */
export function tickFit(ctx, labels, spacing) {
  font(ctx);
  const w = widest(ctx, labels);
  if (w + 6 <= spacing || labels.length <= 1) { return {turned: false, extent: LINE}; }
  return {turned: true, extent: w + 2};
}

/**
 * Frame, ticks and tick labels of a plot area `box`, its axis labels and title.
 * @param {CanvasRenderingContext2D} ctx
 * @param {{x: number, y: number, w: number, h: number}} box
 * @param {{xticks: {at: number, label: string}[], yticks: {at: number, label: string}[],
 *   turned?: boolean, xlabel?: string[], xlabelAt?: number, ylabel?: string[], ylabelAt?: number}} a
 *   the axes: ticks, whether x labels are turned, the labels' lines and where they go (px:
 *   the top of the x label, the centre of the y label's last line)
 * @param {object} th the theme
 */
export function axes(ctx, box, a, th) {
  ctx.strokeStyle = th.muted;
  ctx.lineWidth = 1;
  ctx.strokeRect(box.x - 0.5, box.y - 0.5, box.w + 1, box.h + 1);
  ctx.beginPath();
  for (const t of a.xticks) {
    ctx.moveTo(Math.round(t.at) + 0.5, box.y + box.h);
    ctx.lineTo(Math.round(t.at) + 0.5, box.y + box.h + 4);
  }
  for (const t of a.yticks) {
    ctx.moveTo(box.x - 4, Math.round(t.at) + 0.5);
    ctx.lineTo(box.x, Math.round(t.at) + 0.5);
  }
  ctx.stroke();
  const below = box.y + box.h + 6;
  if (a.turned && a.xticks.length) {  // one turn for all of them: a turn a label cost 2-3 ms at 64
    font(ctx);
    ctx.save();
    ctx.rotate(-Math.PI / 2);  // a canvas point (x, y) is (-y, x) here
    ctx.fillStyle = th.text;
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    for (const t of a.xticks) { ctx.fillText(t.label, -below, t.at); }
    ctx.restore();
  } else {
    for (const t of a.xticks) { text(ctx, t.label, t.at, below, "center", "top", TEXT_PX, th.text); }
  }
  for (const t of a.yticks) { text(ctx, t.label, box.x - 6, t.at, "right", "middle", TEXT_PX, th.text); }
  (a.xlabel || []).forEach((line, k) =>
    text(ctx, line, box.x + box.w / 2, a.xlabelAt + k * LINE, "center", "top", TEXT_PX, th.text));
  const ys = a.ylabel || [];
  ys.forEach((line, k) => rotatedText(ctx, line, a.ylabelAt - (ys.length - 1 - k) * LINE, box.y + box.h / 2, th.text));
}

/** An axis label's lines, wrapped to `most` px (none for no label). */
export function labelLines(ctx, label, most) {
  font(ctx);
  return label ? wrap(ctx, label, Math.max(most, 40)) : [];
}

/**
 * A message centred in an empty plot (no tokens), in the muted colour, wrapped to `most` px.
 * @param {CanvasRenderingContext2D} ctx
 * @param {string|undefined} message the panel's `empty`, or "(no tokens)"
 * @param {number} x
 * @param {number} y
 * @param {number} most px
 * @param {{muted: string}} th the theme
 */
export function emptyMessage(ctx, message, x, y, most, th) {
  font(ctx);
  const lines = wrap(ctx, message || "(no tokens)", most);
  lines.forEach((line, k) =>
    text(ctx, line, x, y + (k - (lines.length - 1) / 2) * LINE, "center", "middle", TEXT_PX, th.muted));
}

let hatchTile = null;

/** The hatch of masked cells as a canvas pattern: diagonal lines on MASKED's grey. */
export function hatchPattern(ctx) {
  if (!hatchTile) {
    hatchTile = document.createElement("canvas");
    const k = 4;  // the tile drawn at 4 px a CSS px: sharp at any screen's pixel ratio
    hatchTile.width = hatchTile.height = HATCH * k;
    const t = hatchTile.getContext("2d");
    t.fillStyle = MASKED.fill;
    t.fillRect(0, 0, HATCH * k, HATCH * k);
    t.strokeStyle = MASKED.hatch;
    t.lineWidth = 1.1 * k;
    t.beginPath();
    for (const o of [-HATCH * k, 0, HATCH * k]) {  // the line and its neighbours' ends: seamless
      t.moveTo(o, HATCH * k);
      t.lineTo(o + HATCH * k, 0);
    }
    t.stroke();
  }
  const pattern = ctx.createPattern(hatchTile, "repeat");
  pattern.setTransform(new DOMMatrix().scaleSelf(1 / 4, 1 / 4));
  return pattern;
}

/**
 * The masked cells of a (rows, cols) map drawn in `box` (CSS px): hatched when a cell is at
 * least MASKED.least px, else the plain grey (painted with the map's pixels already).
 * @param {CanvasRenderingContext2D} ctx
 * @param {ArrayLike<number>} masked (rows*cols) 1 where masked
 * @param {number} rows
 * @param {number} cols
 * @param {{x: number, y: number, w: number, h: number}} box
 */
export function hatchMasked(ctx, masked, rows, cols, box) {
  const cw = box.w / cols, ch = box.h / rows;
  if (Math.min(cw, ch) < MASKED.least) { return; }
  ctx.beginPath();
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {  // a run of masked cells in a row: one rectangle
      if (!masked[i * cols + j]) { continue; }
      let k = j;
      while (k + 1 < cols && masked[i * cols + k + 1]) { k++; }
      ctx.rect(box.x + j * cw, box.y + i * ch, (k - j + 1) * cw, ch);
      j = k;
    }
  }
  ctx.fillStyle = hatchPattern(ctx);
  ctx.fill();
}

/** A legend's swatch of the masked style, `size` px square at (x, y). */
export function maskedSwatch(ctx, x, y, size, th) {
  ctx.fillStyle = hatchPattern(ctx);
  ctx.fillRect(x, y, size, size);
  ctx.strokeStyle = th.muted;
  ctx.lineWidth = 1;
  ctx.strokeRect(x - 0.5, y - 0.5, size + 1, size + 1);
}
