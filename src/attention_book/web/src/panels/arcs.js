// An arcs panel: one query's weights as arcs from the query (above) to every key (below),
// as wide as the weight and coloured by it (cividis), the heaviest drawn last (on top).

import {rgb} from "../colormaps.js";
import {ACCENT, MARGIN, TEXT_PX, clip, emptyMessage, fittedTitle, text} from "./style.js";

/** The key tokens under their nodes, turned 45 degrees: every one while they fit, else
 *  every k-th. */
function keyLabels(ctx, tokens, n, X, bottom, width, th) {
  const every = Math.max(1, Math.ceil(n * 16 / width));
  for (let j = 0; j < n; j += every) {
    ctx.save();
    ctx.translate(X(j), bottom + 7);
    ctx.rotate(-Math.PI / 4);
    text(ctx, clip(String(tokens[j] === undefined ? j : tokens[j]), 10), 0, 0, "right", "middle",
         TEXT_PX, th.text);
    ctx.restore();
  }
}

/** A filled dot of radius r at (x, y). */
function dot(ctx, x, y, r) {
  ctx.beginPath();
  ctx.arc(x, y, r, 0, 2 * Math.PI);
  ctx.fill();
}

/**
 * Draw an arcs panel in `region`.
 * @param {CanvasRenderingContext2D} ctx
 * @param {object} panel {kind: "arcs", weights, query, queryAt?, tokens?, title?, empty?}
 * @param {{x: number, y: number, w: number, h: number}} region CSS px
 * @param {object} th the theme
 */
export function drawArcs(ctx, panel, region, th) {
  const {weights} = panel, n = weights.length;
  const top = region.y + MARGIN.top + 14, bottom = region.y + region.h - 46;
  const left = region.x + 24, width = region.w - 48;
  fittedTitle(ctx, panel.title || "", region.x + region.w / 2, region.y + MARGIN.top - 8, region.w - 8, th);
  if (!n) {
    emptyMessage(ctx, panel.empty, region.x + region.w / 2, (top + bottom) / 2, th);
    return;
  }
  const X = (i) => left + (n === 1 ? width / 2 : i / (n - 1) * width);
  const xq = panel.queryAt === undefined ? X(panel.query) : left + panel.queryAt * width;
  const most = Math.max(0, ...weights);
  const order = Array.from(weights, (_, j) => j).sort((a, b) => weights[a] - weights[b]);
  ctx.lineCap = "round";
  for (const j of order) {
    const w = weights[j];
    ctx.strokeStyle = rgb("cividis", Math.round(255 * (0.15 + 0.85 * w / Math.max(most, 1e-12))));
    ctx.lineWidth = 0.5 + 8 * w;
    ctx.beginPath();
    ctx.moveTo(xq, top);
    ctx.bezierCurveTo(xq, (top + bottom) / 2, X(j), (top + bottom) / 2, X(j), bottom);
    ctx.stroke();
  }
  ctx.fillStyle = th.muted;
  for (let j = 0; j < n; j++) { dot(ctx, X(j), bottom, 3); }
  ctx.fillStyle = ACCENT;
  dot(ctx, xq, top, 5);
  keyLabels(ctx, panel.tokens || [], n, X, bottom, width, th);
}
