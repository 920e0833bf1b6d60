// What every panel draws with: the font, its sizes, the margins around a plot area, the
// accent colour, and the text, title and axes helpers.

export const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";
export const TEXT_PX = 11;  // CSS px: the smallest text is 11 px at any width
const TITLE_PX = 12;
export const MARGIN = {top: 24, left: 50, bottom: 36};
export const ACCENT = "#ff3b30";  // the chosen query's outline, as the matplotlib views draw it

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
  ctx.font = (bold ? "600 " : "") + px + "px " + FONT;
  ctx.fillStyle = colour;
  ctx.textAlign = align;
  ctx.textBaseline = baseline;
  ctx.fillText(str, x, y);
}

/**
 * Text turned a quarter anticlockwise, centred on (x, y): a vertical axis label.
 * @param {CanvasRenderingContext2D} ctx
 * @param {string} str
 * @param {number} x
 * @param {number} y
 * @param {string} colour
 */
export function rotatedText(ctx, str, x, y, colour) {
  ctx.save();
  ctx.translate(x, y);
  ctx.rotate(-Math.PI / 2);
  text(ctx, str, 0, 0, "center", "middle", TEXT_PX, colour);
  ctx.restore();
}

/**
 * `str` cut to at most `most` characters, an ellipsis marking the cut.
 * @param {string} str
 * @param {number} most
 * @returns {string}
 */
export const clip = (str, most) => (str.length > most ? str.slice(0, most - 1) + "\u2026" : str);

/**
 * A panel's title centred over x, at most `most` px wide: smaller (down to the 11 px
 * floor), then cut.
 * @param {CanvasRenderingContext2D} ctx
 * @param {string} str
 * @param {number} x
 * @param {number} y its bottom
 * @param {number} most px
 * @param {{text: string}} th the theme
 */
export function fittedTitle(ctx, str, x, y, most, th) {
  let px = TITLE_PX;
  ctx.font = "600 " + px + "px " + FONT;
  while (px > TEXT_PX && ctx.measureText(str).width > most) { ctx.font = "600 " + (--px) + "px " + FONT; }
  while (str.length > 4 && ctx.measureText(str).width > most) { str = str.slice(0, -2) + "\u2026"; }
  text(ctx, str, x, y, "center", "bottom", px, th.text, true);
}

/**
 * Frame, ticks and axis labels of a plot area `box` (x, y, w, h in CSS px), and the
 * panel's title above it.
 * @param {CanvasRenderingContext2D} ctx
 * @param {{x: number, y: number, w: number, h: number}} box
 * @param {{xlabel?: string, ylabel?: string, title?: string}} panel
 * @param {{at: number, label: string}[]} xticks
 * @param {{at: number, label: string}[]} yticks
 * @param {{text: string, muted: string}} th the theme
 */
export function axes(ctx, box, panel, xticks, yticks, th) {
  ctx.strokeStyle = th.muted;
  ctx.lineWidth = 1;
  ctx.strokeRect(box.x - 0.5, box.y - 0.5, box.w + 1, box.h + 1);
  ctx.beginPath();
  for (const t of xticks) {
    ctx.moveTo(Math.round(t.at) + 0.5, box.y + box.h);
    ctx.lineTo(Math.round(t.at) + 0.5, box.y + box.h + 4);
  }
  for (const t of yticks) {
    ctx.moveTo(box.x - 4, Math.round(t.at) + 0.5);
    ctx.lineTo(box.x, Math.round(t.at) + 0.5);
  }
  ctx.stroke();
  for (const t of xticks) { text(ctx, t.label, t.at, box.y + box.h + 6, "center", "top", TEXT_PX, th.text); }
  for (const t of yticks) { text(ctx, t.label, box.x - 6, t.at, "right", "middle", TEXT_PX, th.text); }
  text(ctx, panel.xlabel || "", box.x + box.w / 2, box.y + box.h + 21, "center", "top", TEXT_PX, th.text);
  if (panel.ylabel) { rotatedText(ctx, panel.ylabel, box.x - 42, box.y + box.h / 2, th.text); }
  fittedTitle(ctx, panel.title || "", box.x + box.w / 2, box.y - 8, box.w + 70, th);
}

/**
 * A message centred in an empty plot (no tokens), in the muted colour.
 * @param {CanvasRenderingContext2D} ctx
 * @param {string|undefined} message the panel's `empty`, or "(no tokens)"
 * @param {number} x
 * @param {number} y
 * @param {{muted: string}} th the theme
 */
export function emptyMessage(ctx, message, x, y, th) {
  text(ctx, message || "(no tokens)", x, y, "center", "middle", TEXT_PX, th.muted);
}
