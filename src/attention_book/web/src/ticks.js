// Where the axes put their ticks: whole numbers 1, 2 or 5 x 10^k apart, as matplotlib's
// MaxNLocator would choose them for the Python figures.

const STEPS = [1, 2, 5, 10];

/**
 * Up to about `most` whole ticks in 0..n-1, 1, 2 or 5 x 10^k apart (MaxNLocator-like).
 * @param {number} n the number of positions
 * @param {number} most the most ticks wanted
 * @returns {number[]}
 */
export function wholeTicks(n, most) {
  const top = Math.max(n - 1, 1);
  let step;
  for (let mag = 1; ; mag *= 10) {
    const s = STEPS.find((k) => Math.floor(top / (k * mag)) + 1 <= most);
    if (s !== undefined) {
      step = s * mag;
      break;
    }
  }
  const ticks = [];
  for (let t = 0; t <= n - 1; t += step) { ticks.push(t); }
  return ticks;
}

/**
 * About `most` round values in [lo, hi], 1, 2 or 5 x 10^k apart (a linear axis's ticks).
 * @param {number} lo
 * @param {number} hi
 * @param {number} most
 * @returns {number[]}
 */
export function niceTicks(lo, hi, most) {
  const span = hi - lo;
  if (!(span > 0)) { return [lo]; }
  const mag = 10 ** Math.floor(Math.log10(span / Math.max(most, 1)));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((k) => Math.floor(span / k) + 1 <= most) || 10 * mag;
  const ticks = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * step; v += step) {
    ticks.push(Math.abs(v) < step * 1e-9 ? 0 : Number(v.toPrecision(12)));
  }
  return ticks;
}

/**
 * The ticks of a log axis on [lo, hi] (lo > 0): the powers of ten inside it, and 2 and 5
 * times them when fewer than three powers lie inside.
 * @param {number} lo
 * @param {number} hi
 * @returns {number[]}
 */
export function logTicks(lo, hi) {
  const out = [], extra = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const k of [1, 2, 5]) {
      const v = Number((k * 10 ** e).toPrecision(12));
      if (v >= lo && v <= hi) { (k === 1 ? out : extra).push(v); }
    }
  }
  return out.length >= 3 ? out : out.concat(extra).sort((a, b) => a - b);
}
