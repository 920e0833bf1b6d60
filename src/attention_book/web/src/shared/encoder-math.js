// encoder-math.js: the operations of chapter 9's encoder on float32 rows, summed in double
// precision: linear, LayerNorm, erf and GELU. Part of minilm.js (the model).

/**
 * y = x @ W + b for T rows at once, W given as W^T:(out, in) (nn.Linear's layout).
 * (T, in) @ (in, out) -> (T, out). A tile of 4 rows of x by 2 outputs is summed at once
 * (8 sums, 6 loads a step: 1.3-1.7x faster in V8 than 4 rows by 1 output).
 */
function linear(x, T, nIn, Wt, b, nOut, y) {
  for (let i0 = 0; i0 < T; i0 += 4) {
    const n = Math.min(4, T - i0);  // rows in this tile; missing rows repeat the last
    const r0 = i0 * nIn;
    const r1 = (i0 + Math.min(1, n - 1)) * nIn;
    const r2 = (i0 + Math.min(2, n - 1)) * nIn;
    const r3 = (i0 + Math.min(3, n - 1)) * nIn;
    for (let j = 0; j < nOut; j += 2) {
      const j1 = Math.min(j + 1, nOut - 1);  // an odd last output is summed twice
      const wa = j * nIn, wb = j1 * nIn;
      let a0 = 0, a1 = 0, a2 = 0, a3 = 0, c0 = 0, c1 = 0, c2 = 0, c3 = 0;
      for (let k = 0; k < nIn; k++) {  // x[rows, k] * W^T[j, k] and W^T[j1, k]
        const u = Wt[wa + k], v = Wt[wb + k];
        const x0 = x[r0 + k], x1 = x[r1 + k], x2 = x[r2 + k], x3 = x[r3 + k];
        a0 += x0 * u; a1 += x1 * u; a2 += x2 * u; a3 += x3 * u;
        c0 += x0 * v; c1 += x1 * v; c2 += x2 * v; c3 += x3 * v;
      }
      const o = i0 * nOut;
      const bj = b[j], bj1 = b[j1];
      y[o + j] = a0 + bj; y[o + j1] = c0 + bj1;
      if (n > 1) { y[o + nOut + j] = a1 + bj; y[o + nOut + j1] = c1 + bj1; }
      if (n > 2) { y[o + 2 * nOut + j] = a2 + bj; y[o + 2 * nOut + j1] = c2 + bj1; }
      if (n > 3) { y[o + 3 * nOut + j] = a3 + bj; y[o + 3 * nOut + j1] = c3 + bj1; }
    }
  }
  return y;
}

/** LayerNorm over each row of x:(T, d), in place: (x - mean) / sqrt(var + eps) g + b. */
function layerNorm(x, T, d, gamma, beta, eps) {
  for (let i = 0; i < T; i++) {
    const o = i * d;
    let mean = 0;
    for (let j = 0; j < d; j++) mean += x[o + j];
    mean /= d;
    let variance = 0;
    for (let j = 0; j < d; j++) { const c = x[o + j] - mean; variance += c * c; }
    const inv = 1 / Math.sqrt(variance / d + eps);  // biased variance, as torch
    for (let j = 0; j < d; j++) x[o + j] = (x[o + j] - mean) * inv * gamma[j] + beta[j];
  }
}

// W. J. Cody's rational approximations of erf, the coefficients block.py uses.
/* eslint-disable no-loss-of-precision -- Cody's 18-digit coefficients as published and as
   block.py writes them: both read the same nearest doubles. */
const ERF_A = [3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
  3.20937758913846947e03];
const ERF_A_LEAD = 1.85777706184603153e-1;
const ERF_B = [2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
  2.84423683343917062e03];
const ERF_C = [5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
  2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
  2.05107837782607147e03, 1.23033935479799725e03];
const ERF_C_LEAD = 2.15311535474403846e-8;
const ERF_D = [1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
  1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
  3.43936767414372164e03, 1.23033935480374942e03];
/* eslint-enable no-loss-of-precision */

function rational(t, lead, num, den) {  // P(t) / Q(t) by Horner's rule
  let p = lead * t;
  let q = t;
  for (let i = 0; i < num.length; i++) {
    p += num[i];
    q += den[i];
    if (i < num.length - 1) { p *= t; q *= t; }
  }
  return p / q;
}

/** The error function in double precision (within a few ulp of Python's math.erf). */
function erf(x) {
  const y = Math.min(Math.abs(x), 6);
  if (y <= 0.46875) return x * rational(y * y, ERF_A_LEAD, ERF_A, ERF_B);
  const erfc = rational(y, ERF_C_LEAD, ERF_C, ERF_D) * Math.exp(-y * y);
  return x < 0 ? erfc - 1 : 1 - erfc;
}

/** GELU, exact (erf) form: x Phi(x) = x (1 + erf(x / sqrt 2)) / 2, in place. */
function gelu(x) {
  for (let i = 0; i < x.length; i++) {
    const v = x[i];
    x[i] = 0.5 * v * (1 + erf(v * Math.SQRT1_2));
  }
}

export {linear, layerNorm, erf, gelu};
