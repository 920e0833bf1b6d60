// Chapter 2's lab computed in the reader's browser: the twin of
// attention_book/scenes/positional.py's positional_state (readout, alt text: here only) and of
// the formulas of attention_book/positional.py, at the live lab's full range (s 1..512, d even
// 2..512, every base, k -64..64). tests/test_web_lab.py checks it against Python within 1e-5
// on held-out values. An ES module (its default export); build.mjs bundles it into
// web/positional.js, a classic script that sets globalThis.AttentionBook.positional.
//
// Row-vector notation as in the package: PE:(s, d) row-major in a Float64Array, entry
// (p, j) at p * d + j; omega_i = base ** (-2 i / d); PE[p, 2i] = sin(p omega_i),
// PE[p, 2i+1] = cos(p omega_i).
import {linesHtml} from "../shared/html.js";
import {nested} from "../shared/matrices.js";
import {positiveInt} from "../shared/messages.js";
import {format} from "../format.js";

const BASE_CHOICES = [10, 100, 1000, 10000, 100000];  // scenes.positional.BASE_CHOICES
const K_RANGE = [-64, 64];                            // scenes.positional.K_RANGE
const MAX_IMAGE_SIDE = 256;                           // scenes.positional.MAX_IMAGE_SIDE
const TWO_PI = 2 * Math.PI;
// The waves and the rotation check past these many points show a window of them: 512
// positions of a wave of period 6.3 were a solid block (QA Q13), 512 dimensions of the
// rotation check one too (chapters 1-5 review, F7). The title says which window.
const WAVE_WINDOW = 64, DIM_WINDOW = 32;

/** The step that brings n cells down to at most MAX_IMAGE_SIDE (image_stride). */
function imageStride(n) { return Math.max(1, Math.ceil(n / MAX_IMAGE_SIDE)); }

/** The math layer's messages, as Python raises them (ValueError -> Error). */
function check(s, d, base, k) {
  positiveInt(s, "s");
  positiveInt(d, "d");
  if (d < 2 || d % 2) {
    throw new Error("d must be even for sinusoidal encoding (sin and cos come in pairs), got d=" + d);
  }
  if (typeof base !== "number" || !isFinite(base) || base <= 1) {
    throw new Error("base must be greater than 1 so that the frequencies decrease, got base=" + base);
  }
  if (!Number.isInteger(k)) { throw new Error("k must be a whole number (an offset in positions), got " + k); }
}

/** omega:(d/2,) = base ** (-2 i / d), i = 0..d/2-1 (positional.frequencies). */
function frequencies(d, base) {
  const omega = new Float64Array(d / 2);
  for (let i = 0; i < d / 2; i++) { omega[i] = Math.pow(base, -2.0 * i / d); }
  return omega;
}

// Rows between two exact ones: the rows in between step by the angle-addition formula.
const EXACT_EVERY = 16;

/** PE:(n, d) of the positions p0, p0 + 1, ..., p0 + n - 1 (positional.encoding_at).
 *  Every EXACT_EVERY-th row is sin and cos of p * omega_i; the rows after it are rotated
 *  from the row before, sin(a + w) = sin a cos w + cos a sin w (and cos likewise): a
 *  multiply-add instead of two transcendental calls, 3.5 ms less at s = d = 512. Measured
 *  at s = d = 512: within 1.0e-13 of numpy's sinusoidal_encoding (computing every row
 *  with sin and cos: 5.7e-14), far inside the labs' 1e-5. */
function encodingAt(p0, n, omega) {
  return encodingInto(new Float64Array(n * 2 * omega.length), 0, p0, n, omega);
}

/** encodingAt(p0, n, omega) written into `pe` from its row `at` on (no copy); `pe`. */
function encodingInto(pe, at, p0, n, omega) {
  const half = omega.length, d = 2 * half;
  const cw = new Float64Array(half), sw = new Float64Array(half);
  for (let j = 0; j < half; j++) { cw[j] = Math.cos(omega[j]); sw[j] = Math.sin(omega[j]); }
  for (let r = 0; r < n; r++) {
    const p = p0 + r, row = (at + r) * d;
    if (r % EXACT_EVERY === 0) {
      for (let i = 0; i < half; i++) {
        const a = p * omega[i];  // (n,) outer (d/2,) -> (n, d/2), one entry
        pe[row + 2 * i] = Math.sin(a);
        pe[row + 2 * i + 1] = Math.cos(a);
      }
    } else {
      for (let k = 0; k < half; k++) {  // the row above, rotated by omega_k
        const sa = pe[row - d + 2 * k], ca = pe[row - d + 2 * k + 1];
        pe[row + 2 * k] = sa * cw[k] + ca * sw[k];
        pe[row + 2 * k + 1] = ca * cw[k] - sa * sw[k];
      }
    }
  }
  return pe;
}

// The rows of PE computed last, for one (d, base): PE for s positions is the first s rows
// of PE for more, so a change of s or k computes no sine (the same numbers, computed once).
let cache = {d: 0, base: 0, omega: null, rows: 0, pe: null};

/** PE:(s, d) for (d, base): rows 0..s-1 of the cached table, grown when needed. */
function encoding(s, d, base) {
  if (cache.d !== d || cache.base !== base) {
    cache = {d, base, omega: frequencies(d, base), rows: 0, pe: new Float64Array(0)};
  }
  if (cache.rows < s) {
    const grown = new Float64Array(s * d);
    grown.set(cache.pe);
    cache.pe = encodingInto(grown, cache.rows, cache.rows, s - cache.rows, cache.omega);
    cache.rows = s;
  }
  return cache.pe.subarray(0, s * d);  // (s, d), a view: never written to
}

/** The rotation check of rows q0..q1-1: the largest of `most` and |PE[q + k] - PE[q] T(k)|,
 *  PE[q + k] being row q - q0 + first of `src` and T(k)'s blocks [[c, -sn], [sn, c]];
 *  row p's PE[p] T(k) is written into `rotated` (d,). */
function rotationError(pe, src, first, q0, q1, c, sn, p, rotated, most) {
  const half = c.length, d = 2 * half;
  for (let q = q0; q < q1; q++) {
    const from = (q - q0 + first) * d;
    for (let u = 0; u < half; u++) {
      const at = q * d + 2 * u, sin = pe[at], cos = pe[at + 1];
      // [sin', cos'] = [sin, cos] @ block: (1, 2) @ (2, 2)
      const rs = sin * c[u] + cos * sn[u], rc = sin * -sn[u] + cos * c[u];
      const e1 = Math.abs(src[from + 2 * u] - rs), e2 = Math.abs(src[from + 2 * u + 1] - rc);
      if (e1 > most) { most = e1; }
      if (e2 > most) { most = e2; }
      if (q === p) { rotated[2 * u] = rs; rotated[2 * u + 1] = rc; }
    }
  }
  return most;
}

/** positional_state(s, d, base, k): everything the lab shows. Throws for bad values. */
function state(values) {
  const s = values.s, d = values.d, base = values.base, k = values.k;
  check(s, d, base, k);
  const half = d / 2, pe = encoding(s, d, base), omega = cache.omega, p = Math.floor(s / 2);
  // similarity by offset q - p = -(s-1)..s-1: sum_i cos(offset omega_i) / (d/2). The cosine
  // of offset m >= 0 is PE[m, 2i+1] (the same product m * omega_i), and cos is even
  const byOffset = new Float64Array(2 * s - 1);  // (2s - 1,)
  for (let m0 = 0; m0 < s; m0++) {
    let sum = 0;
    for (let i = 0; i < half; i++) { sum += pe[m0 * d + 2 * i + 1]; }
    byOffset[s - 1 + m0] = byOffset[s - 1 - m0] = sum / half;
  }
  // (s, s), Toeplitz: entry (p, q) = byOffset[q - p]; filled only when asked for (the
  // picture reads byOffset), 2 MB at s = 512
  function similarity() {
    const out = new Float64Array(s * s);
    for (let r = 0; r < s; r++) { out.set(byOffset.subarray(s - 1 - r, 2 * s - 1 - r), r * s); }
    return out;
  }
  // mean over p != q: offset +-m occurs 2 (s - m) times among the s (s - 1) ordered pairs
  let mean = null;
  if (s > 1) {
    let total = 0;
    for (let m = 1; m < s; m++) { total += 2 * (s - m) * byOffset[s - 1 + m]; }
    mean = total / (s * (s - 1));
  }
  const lam = new Float64Array(half);  // (d/2,) wavelengths 2 pi / omega_i
  for (let j = 0; j < half; j++) { lam[j] = TWO_PI / omega[j]; }
  // the rotation check: PE[q + k] from the formula against PE[q] T(k), every q = 0..s-1;
  // T(k) has 2x2 blocks [[cos b, -sin b], [sin b, cos b]] with b = k omega_i
  const c = new Float64Array(half), sn = new Float64Array(half);
  for (let t = 0; t < half; t++) { c[t] = Math.cos(k * omega[t]); sn[t] = Math.sin(k * omega[t]); }
  // PE[q + k] read where q + k is inside 0..s-1 (rows of PE: the same products
  // (q + k) omega_i); only the |k| or fewer others need the formula
  const lo = Math.min(s, Math.max(0, -k)), hi = Math.max(lo, Math.min(s, s - k));
  const rotated = new Float64Array(d);  // (d,) PE[p] T(k), filled by rotationError
  const rows = (src, first, q0, q1, most) =>
    rotationError(pe, src, first, q0, q1, c, sn, p, rotated, most);
  let maxError = lo > 0 ? rows(encodingAt(k, lo, omega), 0, 0, lo, 0) : 0;
  maxError = rows(pe, lo + k, lo, hi, maxError);
  if (hi < s) { maxError = rows(encodingAt(hi + k, s - hi, omega), 0, hi, s, maxError); }
  const shifted = encodingAt(p + k, 1, omega);  // (d,) PE[p + k] from the formula
  const notes = [d === 2
    ? {level: "info", text: "one frequency pair, \u03c9\u2080 = 1: wavelength 2\u03c0 \u2248 6.28 " +
                            "positions, whatever the base"}
    : {level: "info", text: "wavelengths grow geometrically from 2\u03c0 \u2248 6.28 to " +
                            format.fixed(lam[half - 1], 0, true) + " positions (x" +
                            format.general(Math.pow(base, 2 / d), 3) + " per frequency pair)"}];
  if (!(p + k >= 0 && p + k < s)) {
    notes.push({level: "info", text: "p + k = " + (p + k) + " lies outside 0.." + (s - 1) +
                                     ": the formula still encodes it, and the rotation still holds"});
  }
  const thinned = [["rows", s], ["columns", d]].filter((x) => { return imageStride(x[1]) > 1; })
    .map((x) => { return "1 in " + imageStride(x[1]) + " " + x[0]; });
  if (thinned.length) {
    notes.push({level: "info", text: "the heatmaps show " + thinned.join(" and ") +
                                     " (the picture has fewer pixels than cells); the numbers are exact"});
  }
  const pairs = [0, Math.floor(d / 8), Math.floor(d / 4), half - 1];  // may repeat for small d
  const st = {
    s, d, base, k, pe,
    waveColumns: pairs.map((i) => { return 2 * i; }),
    wavelengths: lam, byOffset, meanSimilarity: mean, p,
    shifted, rotated, maxError, notes,
  };
  let filled = null;
  Object.defineProperty(st, "similarity", {enumerable: true, get () {
    return filled || (filled = similarity());
  }});
  return st;
}

/** The readout's lines (plain text) and notes. */
function readout(st) {
  const lam = st.wavelengths, half = st.d / 2;
  return {
    lines: [
      "PE : (s, d) = (" + st.s + ", " + st.d + ");  T(k) : (d, d) = (" + st.d + ", " + st.d + ")",
      "base = " + format.general(st.base, 6) + (half === 1
        ? ": wavelength " + format.fixed(lam[0], 2) + " positions, one frequency pair i = 0"
        : ": wavelengths " + format.fixed(lam[0], 2) + " .. " + format.fixed(lam[half - 1], 1, true) +
          " positions over " + half + " frequency pairs i = 0.." + (half - 1)),
      "mean similarity of two distinct positions: " +
        (st.meanSimilarity === null ? "n/a (one position)" : format.fixed(st.meanSimilarity, 2)),
      "rotation check, k = " + st.k + ": max over p = 0.." + (st.s - 1) +
        " of |PE[p+k] \u2212 PE[p] T(k)| = " + format.exponent(st.maxError, 1),
    ],
    notes: st.notes,
  };
}

/** The readout as HTML: its lines escaped, then the notes. */
function readoutHtml(st) { const r = readout(st); return linesHtml(r.lines, r.notes); }

/** The alt text: the figure described in plain text. */
function alt(st) {
  const mean = st.meanSimilarity === null ? "" :
    ", mean " + format.fixed(st.meanSimilarity, 2) + " off the diagonal";
  return "First: a heatmap of the sinusoidal encoding PE with " + st.s + " positions (rows) " +
    "and " + st.d + " dimensions (columns), base " + format.general(st.base, 6) +
    ", values from -1 to 1; the left columns change quickly down the positions, the right " +
    "ones slowly. Second: columns " + distinct(st.waveColumns).join(", ") + " as waves over the " +
    (st.s > WAVE_WINDOW ? "first " + WAVE_WINDOW + " positions" : "positions") + ", slower for larger j. Third: the " + st.s + " by " + st.s + " similarity " +
    "of positions, 1 on the diagonal and constant along every diagonal (it depends only on " +
    "the offset)" + mean + ". Fourth: PE[p+k] and PE[p]T(k) for p = " + st.p + ", k = " +
    st.k + " over the " + (st.d > DIM_WINDOW ? "first " + DIM_WINDOW + " dimensions" : "dimensions") + " lie on top of each other; largest difference " +
    format.exponent(st.maxError, 1) + ".";
}

/** Every n-th row and column of a (rows, cols) matrix: (ceil(rows/rs), ceil(cols/cs)). */
/** scenes.positional.shown_columns: every cs-th (sin, cos) pair of d columns, whole. */
function shownColumns(d, cs) {
  const out = [];
  for (let i = 0; i < d / 2; i += cs) { out.push(2 * i, 2 * i + 1); }
  return out;
}

/** Every rs-th row of `data` (rows, cols), and of its columns the pairs shownColumns keeps. */
function strided(data, rows, cols, rs, cs) {
  const keep = cs === 1 ? null : shownColumns(cols, cs);
  const r2 = Math.ceil(rows / rs), c2 = keep ? keep.length : cols, out = new Float64Array(r2 * c2);
  for (let r = 0; r < r2; r++) {
    for (let c = 0; c < c2; c++) { out[r * c2 + c] = data[r * rs * cols + (keep ? keep[c] : c)]; }
  }
  return {data: out, rows: r2, cols: c2};
}

/** Every rs-th row and column of the (s, s) similarity, read off its offsets. */
function toeplitz(byOffset, s, rs) {
  const n = Math.ceil(s / rs), out = new Float64Array(n * n);
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) { out[r * n + c] = byOffset[s - 1 + (c - r) * rs]; }
  }
  return {data: out, rows: n, cols: n};
}

function column(st, j) {
  const y = new Float64Array(st.s);
  for (let p = 0; p < st.s; p++) { y[p] = st.pe[p * st.d + j]; }
  return y;
}

/** The columns once each, in their first order (Python's dict.fromkeys). */
function distinct(columns) {
  return columns.filter((j, n) => { return columns.indexOf(j) === n; });
}

/** A line and a legend entry per distinct column: small d
 *  repeats columns (d = 2 has the one pair i = 0 four times), labelled with its number i;
 *  otherwise the names i = 0, d/8, d/4, d/2 - 1. [{n: index of its first line, label}] */
function waveLabels(columns) {
  const firsts = distinct(columns);
  return firsts.map((j) => {
    const n = columns.indexOf(j);
    return {n, label: firsts.length === WAVES.length ? WAVES[n].label : "i = " + j / 2};
  });
}

const WAVES = [  // plots.positional's WAVE_COLORS, _WAVE_WIDTHS; "dark": on a dark page
  {label: "i = 0", color: "#00204c", dark: "#dce9fa", width: 2.0},
  {label: "i = d/8", color: "#31688e", dark: "#5b9bd5", width: 1.5},
  {label: "i = d/4", color: "#35b779", dark: "#35b779", width: 1.2},
  {label: "i = d/2 \u2212 1", color: "#c9a227", dark: "#e0c050", width: 0.9},
];

/** The numbers the lab shows, for download: its main matrix PE (s, d) as `weights` (no
 *  tokens here: positions), the similarity (s, s), the wavelengths and the rotation check. */
function numbers(st) {
  return {lab: "positional", s: st.s, d: st.d, base: st.base, k: st.k, tokens: [],
    weights: nested(st.pe, st.s, st.d), similarity: nested(st.similarity, st.s, st.s),
    wavelengths: Array.from(st.wavelengths), p: st.p, shifted: Array.from(st.shifted),
    rotated: Array.from(st.rotated), max_error: st.maxError};
}

/** The picture as panels for lab.js: PE and its similarity as heatmaps (signed: the
 *  diverging map), the waves and the rotation check as lines, each over a window when long. */
function figure(st) {
  const s = st.s, d = st.d, rs = imageStride(s), cs = imageStride(d);
  const every = rs === 1 && cs === 1 ? "" : Math.max(rs, cs) === 2 ? ", every 2nd cell" :
    ", 1 in " + Math.max(rs, cs) + " cells";
  const pe = strided(st.pe, s, d, rs, cs), sim = toeplitz(st.byOffset, s, rs);
  const peRow = st.p < s ? st.pe.subarray(st.p * d, (st.p + 1) * d) : st.shifted;
  const ns = Math.min(s, WAVE_WINDOW), nd = Math.min(d, DIM_WINDOW);
  const of = (n, all, what) => (n < all ? ", " + what + " 0\u2013" + (n - 1) + " of " + all : "");
  return {
    columns: 2,
    panels: [
      {kind: "heatmap", title: "PE : (s, d) = (" + s + ", " + d + ")" + every,
        data: pe.data, rows: pe.rows, cols: pe.cols, extent: [s, d], cmap: "RdBu_r",
        vmin: -1, vmax: 1, xlabel: "dimension j", ylabel: "position p", colorbar: "PE[p, j]"},
      {kind: "lines", title: "waves PE[:, 2i], d = " + d + of(ns, s, "positions"), xlabel: "position p",
        ylabel: "PE[p, 2i]", n: ns, ylim: [-1.15, 1.15], yticks: [-1, 0, 1], zero: true,
        legendTitle: "column j = 2i", legendBelow: true,
        lines: waveLabels(st.waveColumns).map((entry) => {
          const w = WAVES[entry.n];
          return {label: entry.label, color: w.color, dark: w.dark, width: w.width,
            y: column(st, st.waveColumns[entry.n]).subarray(0, ns)};
        })},
      {kind: "heatmap", title: "PE PE\u1d40/(d/2) : (" + s + ", " + s + ")",
        data: sim.data, rows: sim.rows, cols: sim.cols, extent: [s, s], cmap: "RdBu_r",
        vmin: -1, vmax: 1, xlabel: "position q", ylabel: "position p",
        colorbar: "PE(p)\u00b7PE(q) / (d/2)"},
      {kind: "lines", title: "p = " + st.p + ", k = " + st.k + ": max error " +
                             format.exponent(st.maxError, 0) + of(nd, d, "dimensions"),
      xlabel: "dimension j", ylabel: "value", n: nd, ylim: [-1.15, 1.15], yticks: [-1, 0, 1],
      zero: true, legendBelow: true,
      lines: [
        {label: "PE[p]", color: "#b0b0b0", dark: "#8a8a8a", width: 1.0, y: peRow.subarray(0, nd)},
        {label: "PE[p+k]", color: "#8fd9a8", dark: "#3f8f5a", width: 3.2, y: st.shifted.subarray(0, nd)},
        {label: "PE[p] T(k)", color: "#00204c", dark: "#e8eef8", width: 1.0, y: st.rotated.subarray(0, nd)},
      ]},
    ],
  };
}

const api = {
  BASE_CHOICES, K_RANGE, MAX_IMAGE_SIDE, frequencies, state, readout, readoutHtml, alt, figure,
  numbers,
};

export default api;
