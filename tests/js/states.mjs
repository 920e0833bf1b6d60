// The labs' state modules (web/src/labs/<lab>.js, the ES sources) on control values, for the
// parity tests (tests/test_web_states.py, test_web_block.py, test_web_lab.py,
// test_web_training.py) and benchmarks/browser_states.py and browser_training.py.
//
//   states.run <lab> [--data FILE] [--figure] [--no-numbers] [--time N]  < [values, ...]
//     -> for each values what the page would show: every typed array of the state as {typed, f8}
//        (base64 of its float64 bytes), the other fields as JSON, the readout's HTML, the alt
//        text and the numbers a reader downloads (numbers(state), plain JSON); or {error}
//        when the state function throws.
//     --data: a data script the module reads (chapter 8's training-checkpoints.js), given to
//       its useData() (in a page it is a <script> before the module); its load time is reported.
//     --figure: also figure(state), its typed arrays as plain lists.
//     --no-numbers: leave out numbers(state) (60% of the output's bytes, for tests that do not
//       read it: JSON.stringify and Python's json.loads of its decimals cost most of a run).
//     --time: N runs of each after a warm-up: the median wall ms and the mean CPU ms with the
//       caches warm, and with every cache emptied first (a change that must draw its random
//       numbers, or decode its checkpoints, afresh).
//   states.numbers     < [[lab, [values, ...]], ...]  -> numbers(state(values)), per lab
//   states.figures <lab> [k] < [values, ...]  -> figure(state(values)) (or its panel k alone),
//                                               typed arrays as lists
//   states.panels [--figure] < [[lab, [values, ...]], ...]  -> {panels, bad}: what web/lab.js
//                        could not draw of each figure (and the figure, as states.figures's)
//   states.errors <lab> < [values, ...]  -> the message state(values) throws, or null
//   states.tokenize    < [text, ...]      -> shared/tokens.js's tokens, or "error: message"
//   states.format      < [[x, spec], ...] -> format.js's text of x (x "-0": -0; spec as
//                                            Python's: ".2f", ",.1f", ".1e", ".3g", "g")
//   states.projectionWeights < [[d_k, seed], ...] -> attention's W_q, W_k, W_v bytes
//   states.queryOptions < [values, ...]   -> attention's query choices
//   states.missingHeads < [d, ...]        -> multihead's [missingHeadsText(d), headChoices(d)]
import {bytes64, classic, lab, plain, source, typed} from "./common.mjs";

const option = (args, name) => { const i = args.indexOf(name); return i < 0 ? null : args[i + 1]; };

/** Median wall ms and mean CPU ms (steadier on a shared machine; µs resolution) of `runs`
 * changes to `values` (the state, readout and alt text, as the page computes them). */
const timed = (M, values, runs, clear) => {
  const ms = [];
  let cpu = 0;
  for (let i = 0; i < runs; i++) {
    if (clear) clear();
    const c0 = process.cpuUsage(), t0 = process.hrtime.bigint();
    const st = M.state(values);
    M.readoutHtml(st);
    M.alt(st);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const c = process.cpuUsage(c0);
    cpu += (c.user + c.system) / 1000;
  }
  ms.sort((a, b) => a - b);
  return [ms[ms.length >> 1], cpu / runs];
};

export const run = async (list, name, ...args) => {
  const M = await lab(name);
  const {clearCaches} = await source("shared/matrices.js");
  const timeRuns = option(args, "--time") ? parseInt(option(args, "--time"), 10) : 0;
  let loadMs = null;
  if (option(args, "--data")) {
    const t0 = process.hrtime.bigint();
    M.useData(classic(option(args, "--data")));
    loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  }
  return list.map((values) => {
    let st;
    try {
      st = M.state(values);
    } catch (e) {
      return {error: e.message};
    }
    const row = {state: typed(st), readout: M.readoutHtml(st), alt: M.alt(st),
      numbers: M.numbers && !args.includes("--no-numbers") ? M.numbers(st) : null};
    if (args.includes("--figure")) row.figure = plain(M.figure(st));
    if (timeRuns) {
      timed(M, values, timeRuns, null);  // warm-up: the JIT compiles
      [row.warm_ms, row.warm_cpu_ms] = timed(M, values, timeRuns, null);
      [row.cold_ms, row.cold_cpu_ms] = timed(M, values, timeRuns, clearCaches);
      row.load_ms = loadMs;
      row.state = row.numbers = row.figure = null;
    }
    return row;
  });
};

/** f(M, values) of each lab's values: [[lab, [values, ...]], ...] -> [[answer, ...], ...]. */
const perLab = async (sent, f) => {
  const out = [];
  for (const [name, list] of sent) {
    const M = await lab(name);
    out.push(list.map((v) => f(M, v)));
  }
  return out;
};

export const numbers = (sent) => perLab(sent, (M, v) => M.numbers(M.state(v)));

export const figures = async (list, name, panel) => {
  const M = await lab(name);
  return list.map((v) => {
    const f = M.figure(M.state(v));
    return plain(panel === undefined ? f : f.panels[Number(panel)]);
  });
};

export const errors = async (list, name) => {
  const M = await lab(name);
  return list.map((v) => {
    try {
      M.state(v);
      return null;
    } catch (e) {
      return e.message;
    }
  });
};

/** What web/lab.js could not draw of a figure's panel k ("k: what"): each kind's data filling
 * its size with finite numbers, labels to match, named axes and colour scales. */
const gridProblems = (p, k, bad) => {
  if (!p.colorbar) bad.push(`${k}: colour bar label`);
  if (!(p.vmin < p.vmax) || !p.cmap) bad.push(`${k}: colour scale`);
  if (!p.maps.length) bad.push(`${k}: no maps`);
  p.maps.forEach((m, i) => {
    if (!m.title) bad.push(`${k}.${i}: no title`);
    if (m.data.length !== p.rows * p.cols) bad.push(`${k}.${i}: data ${m.data.length}`);
    if (!Array.from(m.data).every(Number.isFinite)) bad.push(`${k}.${i}: not finite`);
    const masked = m.masked || p.masked;
    if (masked && masked.length !== p.rows * p.cols) bad.push(`${k}.${i}: mask`);
  });
  if (p.rowLabels && p.rowLabels.length !== p.rows) bad.push(`${k}: row labels`);
  if (p.colLabels && p.colLabels.length !== p.cols) bad.push(`${k}: column labels`);
};

const heatmapProblems = (p, k, bad) => {
  if (p.colorbar !== false && p.colorbar !== "" && !p.colorbar && !p.categories) bad.push(`${k}: colour bar label`);
  if (p.data.length !== p.rows * p.cols) bad.push(`${k}: data ${p.data.length}`);
  if (!Array.from(p.data).every(Number.isFinite)) bad.push(`${k}: not finite`);
  if (p.categories ? !Array.from(p.data).every((v) => v >= 0 && v < p.categories.length)
    : !(p.vmin < p.vmax) || !p.cmap) bad.push(`${k}: colour scale`);
  if (p.rowLabels && p.rowLabels.length !== p.rows) bad.push(`${k}: row labels`);
  if (p.colLabels && p.colLabels.length !== p.cols) bad.push(`${k}: column labels`);
  if (p.masked && p.masked.length !== p.rows * p.cols) bad.push(`${k}: mask`);
  if (p.outlineRow !== undefined && p.rows && !(p.outlineRow >= 0 && p.outlineRow < p.rows)) {
    bad.push(`${k}: outlined row`);
  }
};

const PROBLEMS = {
  grid: gridProblems,
  heatmap: heatmapProblems,
  lines: (p, k, bad) => {
    p.lines.forEach((l) => { if (l.y.length !== p.n) bad.push(`${k}: line length`); });
    if (p.xs && p.xs.length !== p.n) bad.push(`${k}: xs`);
    if (!(p.ylim[0] < p.ylim[1]) || (p.ylog && !(p.ylim[0] > 0))) bad.push(`${k}: ylim`);
  },
  bars: (p, k, bad) => {
    p.series.forEach((r) => {
      if (r.values.length !== p.labels.length) bad.push(`${k}: bars ${r.values.length}`);
      if (!r.values.every(Number.isFinite)) bad.push(`${k}: bars not finite`);
    });
    if (!(p.xlim[0] < p.xlim[1])) bad.push(`${k}: xlim`);
  },
  arcs: (p, k, bad) => {
    if (p.weights.length !== p.tokens.length) bad.push(`${k}: arcs ${p.weights.length}`);
    if (!Array.from(p.weights).every(Number.isFinite)) bad.push(`${k}: arcs not finite`);
    if (p.weights.length && !(p.query >= 0)) bad.push(`${k}: query`);
  },
};

export const panels = (sent, flag) => perLab(sent, (M, v) => {
  const f = M.figure(M.state(v)), bad = [];
  f.panels.forEach((p, k) => {
    if (!p.title) bad.push(`${k}: no title`);
    if (p.kind === "heatmap" || p.kind === "lines" || p.kind === "grid") {
      // named axes: an x label, and a y label or a label a row (a grid's maps share them)
      const named = !!p.xlabel && (!!p.ylabel || (p.rowLabels || []).length === p.rows);
      if (!named) bad.push(`${k}: axis labels`);
    }
    if (PROBLEMS[p.kind]) PROBLEMS[p.kind](p, k, bad);
    else bad.push(`${k}: kind ${p.kind}`);
  });
  return {panels: f.panels.length, bad, ...(flag === "--figure" ? {figure: plain(f)} : {})};
});

export const tokenize = async (texts) => {
  const {tokenize: tokens} = await source("shared/tokens.js");
  return texts.map((x) => {
    try {
      return tokens(x);
    } catch (e) {
      return `error: ${e.message}`;
    }
  });
};

export const format = async (cases) => {
  const {format: f} = await source("format.js");
  return cases.map(([x, spec]) => {
    if (x === "-0") x = -0;
    const grouped = spec.startsWith(","), s = grouped ? spec.slice(1) : spec;
    if (s === "g") return f.general(x, 6);
    const n = parseInt(s.slice(1), 10), kind = s[s.length - 1];
    return kind === "f" ? f.fixed(x, n, grouped) : kind === "e" ? f.exponent(x, n) : f.general(x, n);
  });
};

export const projectionWeights = async (cases) => {
  const A = await lab("attention");
  return cases.map(([dk, s]) => A.projectionWeights(8, dk, s).map(bytes64));
};

export const queryOptions = async (list) => {
  const A = await lab("attention");
  return list.map((v) => A.queryOptions(v));
};

export const missingHeads = async (widths) => {
  const M = await lab("multihead");
  return widths.map((d) => [M.missingHeadsText(d), M.headChoices(d)]);
};
