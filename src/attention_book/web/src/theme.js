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

/** Relative luminance (0..1) of a CSS colour "#rrggbb" or "rgb(r, g, b)" (white otherwise). */
function luminance(colour) {
  const hex = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})/i.exec(colour);
  let c;
  if (hex) {
    c = hex.slice(1, 4).map((h) => parseInt(h, 16));
  } else {
    const fn = /rgba?\(([^)]+)\)/.exec(colour);
    c = fn ? fn[1].split(/[ ,/]+/).filter(Boolean).map(Number) : [255, 255, 255];
  }
  return (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]) / 255;
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
