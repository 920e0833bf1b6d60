// An arcs panel: one query's weights as arcs from the query (above) to every key (below),
// as wide as the weight and coloured by it (cividis, its range kept where it contrasts with
// the background), the heaviest drawn last (on top). Every key is named under its node up
// to NAME_ALL keys (turned 45 degrees, or a quarter, when they do not fit across); beyond,
// every k-th and the query's own, and the title says so.

import {rgb} from "../colormaps.js";
import {contrast} from "../theme.js";
import {ACCENT, LINE, NAME_ALL, PAD, TEXT_PX, drawTitle, emptyMessage, font, remembered, text,
  thin, thinNote, titleBlock, turnedText, widest, widthOf} from "./style.js";

const ARC_SPACE = 110;  // px from the query's node to the keys'
const SIDE = 24;        // px at least left and right of the outer nodes
// An arc's drawn pixels are its colour blended with the page where it covers a pixel only in
// part (a thin slanted line): so its colour keeps CONTRAST:1 against the page, and an arc of
// a weight the numbers show (SHOWN and up: 0.01 to two decimals) is at least SEEN px wide.
// Then its most covered pixel keeps WCAG's 3:1 for graphics at 1 and 2 device px a CSS px,
// in both modes (tests/test_lab_legibility.py reads them). Lighter weights stay thin and
// faint: an arc of weight 0 is no claim that the key counts.
const CONTRAST = 3.5, SHOWN = 0.005, SEEN = 1.25;

const levelsMemo = new Map();

/** The cividis levels [lowest, highest] (0..255) the arcs use on `background`: on a dark
 *  page from the first level with CONTRAST:1 up, on a light one up to the last. */
function levels(background) {
  if (!levelsMemo.has(background)) {
    const ok = (k) => contrast(rgb("cividis", k), background) >= CONTRAST;
    let lo = 0, hi = 255;
    while (lo < 255 && !ok(lo)) { lo += 1; }
    while (hi > lo && !ok(hi)) { hi -= 1; }
    levelsMemo.set(background, [lo, hi]);
  }
  return levelsMemo.get(background);
}

/** How the key labels go: which are named, turned how, and the room they need. */
function layoutOnce(ctx, panel, w) {
  const tokens = (panel.tokens || []).map(String), n = panel.weights ? panel.weights.length : tokens.length;
  font(ctx);
  const name = (j) => (tokens[j] === undefined ? String(j) : tokens[j]);
  let left = SIDE, right = SIDE;
  const spacing = () => (n > 1 ? (w - left - right) / (n - 1) : w);
  let named = thin(n, n <= NAME_ALL ? n : NAME_ALL, panel.query);
  let turn = 0;  // radians: 0 across, -pi/4, -pi/2
  const wide = widest(ctx, named.shown.map(name));
  if (wide + 6 > spacing() * named.step && n > 1) {
    turn = spacing() * named.step >= 18 ? -Math.PI / 4 : -Math.PI / 2;
  }
  if (turn === 0 && n > 1) {  // the outer labels centred on their nodes
    left = Math.max(SIDE, widthOf(ctx, name(0)) / 2 + PAD);
    right = Math.max(SIDE, widthOf(ctx, name(n - 1)) / 2 + PAD);
  }
  if (turn === -Math.PI / 4) {  // a label reaches left of its node by its width / sqrt 2
    const before = spacing();
    left = Math.max(SIDE, ...named.shown.map((j) => widthOf(ctx, name(j)) * Math.SQRT1_2 + PAD + 2 - j * before));
    if (spacing() * named.step < 18) {
      turn = -Math.PI / 2;
      left = SIDE;
    }
  }
  if (turn === -Math.PI / 2 && spacing() * named.step < 12) {  // too narrow even turned
    named = thin(n, Math.max(1, Math.floor((w - left - right) / 12)), panel.query);
  }
  const labels = named.shown.map(name);
  const extent = turn === 0 ? LINE : turn === -Math.PI / 2 ? widest(ctx, labels) + 2
    : (widest(ctx, labels) + TEXT_PX) * Math.SQRT1_2 + 2;
  let title = panel.title || "";
  if (named.step > 1) { title += " (keys: " + thinNote(named.step) + ")"; }
  const block = titleBlock(ctx, title, w - 2 * PAD);
  return {n, named, labels, turn, left, right, extent, block,
    height: block.height + 14 + ARC_SPACE + 10 + extent + PAD,
    minW: 2 * SIDE + Math.max(60, Math.min(n, NAME_ALL) * 12)};  // every key named, turned
}

const layout = remembered(layoutOnce);

/** The least width (CSS px) an arcs panel needs, and its height at width `w`. */
export function measureArcs(ctx, panel, w) {
  const g = layout(ctx, panel, w);
  return {minW: g.minW, height: g.height};
}

/** Filled dots of radius r at (xs[k], y), in one path. */
function dots(ctx, xs, y, r) {
  ctx.beginPath();
  for (const x of xs) {
    ctx.moveTo(x + r, y);
    ctx.arc(x, y, r, 0, 2 * Math.PI);
  }
  ctx.fill();
}

/** The arcs of `weights` from xq (top) to each X(j) (bottom), the heaviest last. Arcs whose
 *  colour level and width (to a quarter pixel) agree are stroked as one path: at 128 keys a
 *  stroke an arc was the larger part of the figure's draw. */
function drawArcLines(ctx, weights, xq, X, top, bottom, th) {
  const most = Math.max(0, ...weights), [a, b] = levels(th.background);
  const order = Array.from(weights, (_, j) => j).sort((i, j) => weights[i] - weights[j]);
  const style = (w) => [Math.round(a + (b - a) * w / Math.max(most, 1e-12)),
    Math.max(w >= SHOWN ? SEEN : 0, Math.round(4 * (0.5 + 8 * w)) / 4)];
  ctx.lineCap = "round";
  let k = 0;
  while (k < order.length) {
    const [level, width] = style(weights[order[k]]);
    ctx.strokeStyle = rgb("cividis", level);
    ctx.lineWidth = width;
    ctx.beginPath();
    for (; k < order.length; k++) {
      const s = style(weights[order[k]]);
      if (s[0] !== level || s[1] !== width) { break; }
      const x = X(order[k]);
      ctx.moveTo(xq, top);
      ctx.bezierCurveTo(xq, (top + bottom) / 2, x, (top + bottom) / 2, x, bottom);
    }
    ctx.stroke();
  }
}

/**
 * Draw an arcs panel in `region`.
 * @param {CanvasRenderingContext2D} ctx
 * @param {object} panel {kind: "arcs", weights (null: not computed, `empty` says why), query,
 *   queryAt?, tokens?, title?, empty?}
 * @param {{x: number, y: number, w: number, h: number}} region CSS px
 * @param {object} th the theme
 * @returns {{xq: number, xs: number[], top: number, bottom: number}|undefined} where the
 *   arcs start (the query, at `top`) and end (each key, at `bottom`), CSS px; none drawn:
 *   undefined
 */
export function drawArcs(ctx, panel, region, th) {
  const g = layout(ctx, panel, region.w), {n} = g;
  drawTitle(ctx, g.block, region.x + region.w / 2, region.y, th);
  const top = region.y + g.block.height + 14, bottom = top + ARC_SPACE;
  if (!n) {
    emptyMessage(ctx, panel.empty, region.x + region.w / 2, (top + bottom) / 2, region.w - 16, th);
    return;
  }
  const left = region.x + g.left, width = region.w - g.left - g.right;
  const X = (i) => left + (n === 1 ? width / 2 : i / (n - 1) * width);
  const xq = panel.queryAt === undefined ? X(panel.query) : left + panel.queryAt * width;
  if (panel.weights) {
    drawArcLines(ctx, panel.weights, xq, X, top, bottom, th);
  } else {  // not computed: the nodes and their names, no arcs
    emptyMessage(ctx, panel.empty, region.x + region.w / 2, (top + bottom) / 2, region.w - 16, th);
  }
  ctx.fillStyle = th.muted;
  dots(ctx, Array.from({length: n}, (_, j) => X(j)), bottom, 3);
  ctx.fillStyle = ACCENT;
  dots(ctx, [xq], top, 5);
  g.named.shown.forEach((j, k) => {
    if (g.turn === 0) {
      text(ctx, g.labels[k], X(j), bottom + 7, "center", "top", TEXT_PX, th.text);
    } else {
      turnedText(ctx, g.labels[k], X(j), bottom + 7, g.turn, "right", "middle", th.text);
    }
  });
  return {xq, xs: Array.from({length: n}, (_, j) => X(j)), top, bottom};
}
