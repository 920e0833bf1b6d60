// The page's theme (web/src/theme.js) for tests/test_lab_legibility.py.
//
//   theme.contrasted < [[colour, background], ...]
//     -> [contrasted(colour, background), WCAG's contrast ratio of the colour on the
//        background before, and after], each
import {source} from "./common.mjs";

const channels = (c) => (c.startsWith("#") ? [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16))
  : c.slice(4, -1).split(",").map(Number));

/** WCAG's relative luminance of a colour (#rrggbb or rgb(r, g, b)). */
const luminance = (c) => {
  const linear = (v) => (v / 255 <= 0.04045 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
  const [r, g, b] = channels(c).map(linear);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};

const ratio = (a, b) => (Math.max(luminance(a), luminance(b)) + 0.05) / (Math.min(luminance(a), luminance(b)) + 0.05);

export const contrasted = async (cases) => {
  const theme = await source("theme.js");
  return cases.map(([c, bg]) => {
    const out = theme.contrasted(c, bg);
    return [out, ratio(c, bg), ratio(out, bg)];
  });
};
