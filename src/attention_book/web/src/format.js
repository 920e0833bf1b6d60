// Numbers as Python writes them (f"{x:.2f}", f"{x:.1e}", f"{x:.3g}", f"{n:,}"): the book
// compares the browser's readouts and alt text with Python's as strings, so every lab
// formats through this one module. JavaScript's toFixed/toExponential round exact ties up;
// Python rounds them to even, which is what the helpers below correct.

// The global isFinite/isNaN, not Number's: they coerce as the ES5 front end did, so a
// number given as a string or null prints as before.
const nonFinite = (x) => (isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf");
const THOUSANDS = /\B(?=(\d{3})+(?!\d))/g;

/** Whether x lies exactly half way between two numbers of n decimals (x 2^(n+1) odd). */
function isTie(x, n) {
  const z = Math.abs(x) * 2 ** (n + 1);  // exact: a power of two
  return Number.isInteger(z) && z % 2 === 1;
}

/** The text with its last digit lowered by one (an odd digit: it never borrows). */
const lowerLastDigit = (text) =>
  text.slice(0, -1) + String.fromCharCode(text.charCodeAt(text.length - 1) - 1);

/** Whether the text's last character is an odd digit. */
const endsOdd = (text) => (text.charCodeAt(text.length - 1) - 48) % 2 === 1;

const isNegative = (x) => x < 0 || (x === 0 && 1 / x < 0);

/**
 * Python's f"{x:.{n}f}", or f"{x:,.{n}f}" when `grouped`.
 * @param {number} x
 * @param {number} n decimals
 * @param {boolean} [grouped] thousands separated by ","
 * @returns {string}
 */
export function fixed(x, n, grouped = false) {
  if (!isFinite(x)) { return nonFinite(x); }
  let text = Math.abs(x).toFixed(n);
  if (isTie(x, n) && endsOdd(text)) { text = lowerLastDigit(text); }
  if (grouped) {
    const [whole, decimals] = text.split(".");
    text = whole.replace(THOUSANDS, ",") + (decimals === undefined ? "" : "." + decimals);
  }
  return (isNegative(x) ? "-" : "") + text;
}

const expSuffix = (e) => `e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;

/** Whether x, kept to `kept` significant digits, is an exact decimal tie: its exact
 *  expansion (toPrecision(100) is exact for the doubles the labs print) goes on with a 5
 *  and then only zeros. */
function isDecimalTie(x, kept) {
  const digits = Math.abs(x).toPrecision(100).split("e")[0].replace(".", "").replace(/^0+/, "");
  return digits.charAt(kept) === "5" && /^0*$/.test(digits.slice(kept + 1));
}

/** [mantissa, exponent] of toExponential(n) with Python's rounding of exact ties (to even). */
function toExponential(x, n) {
  let [mantissa, e] = x.toExponential(n).split("e");
  if (x !== 0 && endsOdd(mantissa) && isDecimalTie(x, n + 1)) {
    mantissa = lowerLastDigit(mantissa);
  }
  return [mantissa, parseInt(e, 10)];
}

/**
 * Python's f"{x:.{n}e}".
 * @param {number} x
 * @param {number} n digits after the point
 * @returns {string}
 */
export function exponent(x, n) {
  if (!isFinite(x)) { return nonFinite(x); }
  const [mantissa, e] = toExponential(x, n);
  return (x === 0 && 1 / x < 0 ? "-" : "") + mantissa + expSuffix(e);
}

const trimZeros = (text) => (text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text);

/**
 * Python's f"{x:.{p}g}": p significant digits, trailing zeros dropped ("g" is p = 6).
 * @param {number} x
 * @param {number} [p] significant digits
 * @returns {string}
 */
export function general(x, p = 6) {
  if (!isFinite(x)) { return nonFinite(x); }
  if (x === 0) { return 1 / x < 0 ? "-0" : "0"; }
  p = p || 6;
  const [mantissa, e] = toExponential(x, p - 1);
  if (e >= -4 && e < p) { return trimZeros(fixed(x, p - 1 - e)); }
  return trimZeros(mantissa) + expSuffix(e);
}

/**
 * Python's f"{n:,}" of a whole number.
 * @param {number} n
 * @returns {string}
 */
export const grouped = (n) => String(n).replace(THOUSANDS, ",");

/** The four formats as one object: what the state modules read as `AttentionBook.format`. */
export const format = {fixed, exponent, general, grouped};
