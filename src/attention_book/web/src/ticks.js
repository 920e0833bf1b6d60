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
  let step = 1;
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
 * Ticks of a heatmap axis of `n` cells drawn over `length` px from `start`: every cell's
 * label while at most `most` fit, else whole ticks.
 * @param {number} n cells
 * @param {number} start px
 * @param {number} length px
 * @param {Array<string|number>|undefined} labels a label a cell, if any
 * @param {number} most the most ticks that fit
 * @returns {{at: number, label: string}[]}
 */
export function cellTicks(n, start, length, labels, most) {
  const ticks = labels && labels.length <= most ? labels.map((_, i) => i)
    : wholeTicks(n, Math.max(2, Math.min(most, 6)));
  return ticks.map((i) => ({at: start + (i + 0.5) / n * length,
                            label: labels ? String(labels[i]) : String(i)}));
}
