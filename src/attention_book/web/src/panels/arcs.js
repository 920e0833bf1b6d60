// An arcs panel: one query's weights as arcs from the query (above) to every key (below),
// in the weights' colour map (viridis: the colour of the key's cell in the heatmap beside it)
// and as wide as the weight, each with a halo in the page's text colour so that a light and
// a bright arc alike stand out from the page; the heaviest drawn last (on top), and past
// NAME_ALL keys only the NAME_ALL heaviest. A key under the arcs says so. Every key is named
// under its node up to NAME_ALL keys (turned 45 degrees, or a quarter, when they do not fit
// across); beyond, every k-th and the query's own, and the title says so.

import {lut, rgb} from "../colormaps.js";
import {ACCENT, LINE, NAME_ALL, PAD, TEXT_PX, drawTitle, emptyMessage, font, remembered, text,
  thin, thinNote, titleBlock, turnedText, widest, widthOf} from "./style.js";

const ARC_SPACE = 110;  // px from the query's node to the keys'
const SIDE = 24;        // px at least left and right of the outer nodes
const MAP = "viridis";  // the weights' map (colormaps.js)
// An arc of a weight the numbers show (SHOWN and up: 0.01 to two decimals) is at least SEEN
// px wide, and its halo HALO px wider, in the page's text colour: then its most covered
// pixel keeps WCAG's 3:1 for graphics at 1 and 2 device px a CSS px, in both modes
// (tests/test_lab_legibility.py reads them). Lighter weights stay thin, haloless and faint:
// an arc of weight 0 is no claim that the key counts.
const SHOWN = 0.005, SEEN = 1.25, HALO = 3;
const KEY_WEIGHTS = [0.1, 0.5, 1];  // the key's samples

/** An arc's width (CSS px, to a quarter) at weight `w`. */
const arcWidth = (w) => Math.max(w >= SHOWN ? SEEN : 0, Math.round(4 * (0.5 + 8 * w)) / 4);

/** The keys whose arcs are drawn: every one up to NAME_ALL, else the NAME_ALL heaviest. */
function drawnKeys(weights) {
  const order = Array.from(weights, (_, j) => j).sort((i, j) => weights[i] - weights[j] || j - i);
  return order.length > NAME_ALL ? order.slice(order.length - NAME_ALL) : order;
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
  const key = n && panel.weights ? keyLayout(ctx, n, w) : null;
  return {n, named, labels, turn, left, right, extent, block, key,
    height: block.height + 14 + ARC_SPACE + 10 + extent + (key ? key.height : 0) + PAD,
    minW: 2 * SIDE + Math.max(60, Math.min(n, NAME_ALL) * 12)};  // every key named, turned
}

/** The key's entries (a sample arc and its weight) and its note, in lines `w` px wide. */
function keyLayout(ctx, n, w) {
  font(ctx);
  const items = [{text: "weight:"}, ...KEY_WEIGHTS.map((v) => ({weight: v, text: String(v)}))];
  if (n > NAME_ALL) { items.push({text: "(the " + NAME_ALL + " heaviest of " + n + " keys drawn)"}); }
  let x = PAD, y = 6;
  for (const item of items) {
    const iw = (item.weight === undefined ? 0 : 26) + widthOf(ctx, item.text);
    if (x > PAD && x + iw > w - PAD) {
      x = PAD;
      y += LINE + 2;
    }
    Object.assign(item, {x, y});
    x += iw + 10;
  }
  return {items, height: y + LINE + 2};
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

/** One arc from (xq, top) to (x, bottom). */
function arcPath(ctx, xq, x, top, bottom) {
  ctx.moveTo(xq, top);
  ctx.bezierCurveTo(xq, (top + bottom) / 2, x, (top + bottom) / 2, x, bottom);
}

/** The arcs of `weights` (the keys `keys`, lightest first) from xq (top) to each X(j)
 *  (bottom), each over its own halo, the heaviest last: a heavier arc's halo then stays
 *  whole over the lighter ones beside it. At most NAME_ALL arcs (drawnKeys). */
function drawArcLines(ctx, weights, keys, xq, X, top, bottom, th) {
  const table = lut(MAP), level = (w) => Math.max(0, Math.min(255, Math.round(255 * w)));
  ctx.lineCap = "round";
  for (const j of keys) {
    const w = weights[j], width = arcWidth(w);
    if (!width) { continue; }
    ctx.beginPath();
    arcPath(ctx, xq, X(j), top, bottom);
    if (w >= SHOWN) {
      ctx.strokeStyle = th.text;
      ctx.lineWidth = width + HALO;
      ctx.stroke();
    }
    const l = level(w);
    ctx.strokeStyle = `rgb(${table[3 * l]},${table[3 * l + 1]},${table[3 * l + 2]})`;
    ctx.lineWidth = width;
    ctx.stroke();
  }
}

/** The key under the labels: a short arc of each sample weight, as drawn, and its value. */
function drawKey(ctx, key, x0, y0, th) {
  for (const item of key.items) {
    let x = x0 + item.x;
    if (item.weight !== undefined) {
      const y = y0 + item.y + LINE / 2, w = item.weight;
      ctx.lineCap = "round";
      ctx.strokeStyle = th.text;
      ctx.lineWidth = arcWidth(w) + HALO;
      ctx.beginPath();
      ctx.moveTo(x + 2, y);
      ctx.lineTo(x + 20, y);
      ctx.stroke();
      ctx.strokeStyle = rgb(MAP, Math.round(255 * w));
      ctx.lineWidth = arcWidth(w);
      ctx.stroke();
      x += 26;
    }
    text(ctx, item.text, x, y0 + item.y + LINE / 2, "left", "middle", TEXT_PX, th.text);
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
    drawArcLines(ctx, panel.weights, drawnKeys(panel.weights), xq, X, top, bottom, th);
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
  if (g.key) { drawKey(ctx, g.key, region.x, bottom + 10 + g.extent, th); }
  return {xq, xs: Array.from({length: n}, (_, j) => X(j)), top, bottom};
}
