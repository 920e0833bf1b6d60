// The page's theme where a lab sits: its colours of text, axes and background, read from the
// theme's CSS variables (the book's --pst-color-*, JupyterLab's --jp-*), so the figure
// follows light and dark mode.

/** The first of the CSS variables `names` set where `el` sits, else `fallback`. */
function cssVar(el, names, fallback) {
  const style = getComputedStyle(el);
  for (const name of names) {
    const value = style.getPropertyValue(name).trim();
    if (value) { return value; }
  }
  return fallback;
}

/** [r, g, b] (0..255) of a CSS colour "#rrggbb", "#rgb" or "rgb(r, g, b)" (white otherwise). */
export function channels(colour) {
  const hex = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})/i.exec(colour);
  if (hex) { return hex.slice(1, 4).map((h) => parseInt(h, 16)); }
  const short = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/i.exec(colour.trim());
  if (short) { return short.slice(1, 4).map((h) => parseInt(h + h, 16)); }
  const fn = /rgba?\(([^)]+)\)/.exec(colour);
  return fn ? fn[1].split(/[ ,/]+/).filter(Boolean).slice(0, 3).map(Number) : [255, 255, 255];
}

/** Relative luminance (0..1) of a CSS colour, roughly (no sRGB curve): light or dark. */
function luminance(colour) {
  const c = channels(colour);
  return (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]) / 255;
}

/** WCAG's relative luminance of [r, g, b]. */
function wcag(c) {
  const [r, g, b] = c.map((v) => (v /= 255) <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/**
 * WCAG's contrast ratio of two CSS colours (1..21).
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export function contrast(a, b) {
  const la = wcag(channels(a)), lb = wcag(channels(b));
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

const contrastedMemo = new Map();

/**
 * `colour`, or the nearest mix of it toward black (on a light background) or white (on a
 * dark one) with at least `least`:1 contrast against `background` (WCAG: 3 for graphics).
 * A thin light line on white (a yellow, a pale grey) is then still seen.
 * @param {string} colour
 * @param {string} background
 * @param {number} [least]
 * @returns {string}
 */
export function contrasted(colour, background, least = 3) {
  const key = colour + "|" + background;
  if (!contrastedMemo.has(key)) {
    const toward = wcag(channels(background)) > 0.18 ? 0 : 255, c = channels(colour);
    let out = colour;
    for (let t = 0.1; t <= 1.0001 && contrast(out, background) < least; t += 0.1) {
      out = "rgb(" + c.map((v) => Math.round(v + (toward - v) * t)).join(",") + ")";
    }
    contrastedMemo.set(key, out);
  }
  return contrastedMemo.get(key);
}

/**
 * The theme's colours where `el` sits (defaults outside the book's theme).
 * @param {Element} el
 * @returns {{background: string, text: string, muted: string, border: string, dark: boolean}}
 */
export function theme(el) {
  const background = cssVar(el, ["--pst-color-background", "--jp-layout-color0"], "#ffffff");
  return {
    background,
    text: cssVar(el, ["--pst-color-text-base", "--jp-ui-font-color0"], "#222832"),
    muted: cssVar(el, ["--pst-color-text-muted", "--jp-ui-font-color2"], "#48566b"),
    border: cssVar(el, ["--pst-color-border", "--jp-border-color1"], "#d1d5da"),
    dark: luminance(background) < 0.5,
  };
}
