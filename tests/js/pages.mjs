// Functions the browser tests evaluate in a chromium page (playwright's page.evaluate), kept
// here so that eslint reads them: tests/node_driver.py's page_function(name) is the source
// of `export const name = ...;` (up to its `};` at the start of a line), which test_js.py
// checks is V8's own text of each export. Each runs alone in the page: it may use the
// page's globals (AttentionBook, the llama harness's globals), never this module's names.
// (tests/test_pages.py's, on the built book's pages, are in site.mjs.)
/* global AttentionBook, llama, __abTexts, __abWork */

/** Chapter 1-6 labs' states in a file:// page (tests/test_web_states.py): each values'
 * state (arrays as the base64 of their float64 bytes), readout and alt text, or {error}. */
export const labStates = ([name, list]) => {
  const b64 = (a) => {
    const f = Float64Array.from(a), u8 = new Uint8Array(f.buffer);
    let s = "";
    for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode.apply(null, u8.subarray(i, i + 0x8000));
    return btoa(s);
  };
  const plain = (x) => (ArrayBuffer.isView(x) ? {f8: b64(x)} : Array.isArray(x) ? x.map(plain)
    : x !== null && typeof x === "object" ? Object.fromEntries(Object.entries(x).map(([k, v]) => [k, plain(v)]))
      : x);
  const M = AttentionBook[name];
  return list.map((values) => {
    let st;
    try { st = M.state(values); } catch (e) { return {error: e.message}; }
    return {state: plain(st), readout: M.readoutHtml(st), alt: M.alt(st)};
  });
};

/** Chapter 2's lab in a page (tests/test_web_lab.py): every value of every control, without
 * waiting for frames: set it, draw at once (the lab's update), and check that the lab took
 * it and the alt text names the state's size; {n: values set, problems}. */
export const positionalSweep = ([labId]) => {
  const lab = document.getElementById(labId).abLab, decl = lab.declaration;
  const problems = [];
  let n = 0;
  decl.controls.forEach((c, i) => {
    const control = lab.controls[i];  // its controller: the value itself, no event
    const values = c.range ? Array.from({length: (c.range[1] - c.range[0]) / c.range[2] + 1},
      (_, k) => c.range[0] + k * c.range[2]) : c.values;
    for (const value of values) {
      control.value = value;
      lab.update();
      const alt = lab.canvas.getAttribute("aria-label");
      if (lab.values[c.name] !== value || !alt.includes(lab.values.s + " positions (rows) and " +
          lab.values.d + " dimensions")) { problems.push([c.name, value, lab.values[c.name]]); }
      n += 1;
    }
    control.value = c.default;
    lab.update();
  });
  return {n, problems};
};

/** MiniLM in a file:// page (tests/test_web_minilm.py): each text's tokens and attention
 * (float32 bytes, base64), what an empty text raises, and how many scripts the page has. */
export const minilmRuns = (texts) => {
  const model = AttentionBook.minilm.load();
  const b64 = (a) => {
    const u8 = new Uint8Array(a.buffer);
    let s = "";
    for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode.apply(null, u8.subarray(i, i + 0x8000));
    return btoa(s);
  };
  const runs = texts.map((t) => {
    const r = model.run(t, {maxTokens: 128});
    return {tokens: r.tokens, attention: b64(r.attention)};
  });
  let empty = null;
  try { model.run("  "); } catch (e) { empty = e.code; }
  return {runs, empty, scripts: document.scripts.length};
};

/** Chapter 9's lab with the model in a page (tests/test_web_pretrained.py): per text, its
 * first state (a Promise or not), the 72 heads' maps (float32, base64) and how many were
 * looked up without a Promise, the model view's shares; and the model's status. */
export const pretrainedMaps = async (texts) => {
  const P = AttentionBook.pretrained;
  const b64 = (a) => {
    const u8 = new Uint8Array(a.buffer);
    let s = "";
    for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode.apply(null, u8.subarray(i, i + 0x8000));
    return btoa(s);
  };
  const out = [];
  for (const text of texts) {
    const first = P.state({text, layer: 0, head: 0, query: 0});
    const promised = typeof first.then === "function";
    const st0 = await first;
    const T = st0.T, maps = new Float32Array(72 * T * T);
    let lookups = 0;
    for (let l = 0; l < 6; l++) {
      for (let h = 0; h < 12; h++) {
        const st = P.state({text, layer: l, head: h, query: 1});  // cached: no Promise
        if (typeof st.then !== "function") { lookups++; }
        maps.set(st.weights, (l * 12 + h) * T * T);
      }
    }
    const model = P.state({text, layer: 3, head: 1, query: 1, measure: "norm", view: "model"});  // cached
    out.push({tokens: st0.tokens, source: st0.source, promised, lookups, maps: b64(maps),
      shares: b64(new Float32Array(model.thumbs)), readout: P.readoutHtml(st0), alt: P.alt(st0)});
  }
  return {out, status: P.modelStatus()};
};

/** In the llama harness's page (tests/llama_js.py): load a GGUF (from `url`, or from the
 * file picker when url is null), encode `prompt` ({text} or {messages}) unless ids are
 * given, generate, and ask for the logit lens of step `lensAt` (options.generate.hidden must
 * be true). Returns the worker's answers, each step (attention rows as arrays of numbers
 * when keep is true), the times seen by the page, its phases' end times and the main
 * thread's long tasks ([start, duration] ms). */
export const llamaRun = async ({url, ids, prompt, options, keep, stopAt, lensAt}) => {
  const t0 = performance.now();
  const engine = llama.startEngine(llama.WORKER_SOURCE);
  const out = {steps: [], progress: [], phases: {start: t0}};
  try {
    // the worker reads the file: it fetches the URL, or reads the picked File
    const source = url ?? document.getElementById("file").files[0];
    const loaded = await engine.load(source, options.load || {}, (bytes, total) => {
      out.progress.push([bytes, total]);
      if (bytes === total) out.phases.fetched = performance.now();
    });
    out.fetchMs = loaded.readMs;
    out.loadMs = performance.now() - t0 - loaded.readMs;  // the page's wait once the bytes are in
    out.phases.loaded = performance.now();
    out.info = loaded.info;
    out.config = loaded.config;
    if (prompt !== null) ids = (await engine.encode(prompt)).ids;
    out.ids = ids;
    const t2 = performance.now();
    let firstToken = null, hidden = null;
    const done = await engine.generate(ids, options.generate || {}, (step) => {
      if (step.kind === "token" && firstToken === null) firstToken = performance.now();
      out.steps.push({kind: step.kind, id: step.id, ms: step.ms, text: step.text, top: step.top,
        attention: keep ? Array.from(step.attention) : null});
      if (stopAt !== null && step.kind === "token" && step.step === stopAt) {
        out.phases.stopped = performance.now();
        engine.stop();
      }
      if (lensAt !== null && step.kind === "token" && step.step === lensAt) hidden = step.hidden;
    });
    if (hidden) out.lens = await engine.lens(hidden, 3);
    out.generateMs = performance.now() - t2;
    out.phases.generated = performance.now();
    out.firstTokenMs = firstToken === null ? null : firstToken - t2;
    out.reason = done.reason;
  } catch (err) {
    out.error = {code: err.code, message: err.message};
  } finally {
    engine.terminate();
  }
  out.longTasks = globalThis.longTasks.slice();
  return out;
};

/** A fetch, an <img> and a <script> to hosts off the machine, and fetches of the site by
 * the name localhost and by 127.0.0.1 (`port`), of a data: and of a blob: URL
 * (tests/test_browser.py): "failed", "loaded" or the HTTP status of each. */
export const offTheMachine = async (port) => {
  const fetched = (url) => fetch(url).then((r) => r.status, () => "failed");
  const loaded = (tag, url) => new Promise((resolve) => {
    const el = document.createElement(tag);
    el.onload = () => resolve("loaded");
    el.onerror = () => resolve("failed");
    el.src = url;
    document.body.append(el);
  });
  const blob = URL.createObjectURL(new Blob(["x"]));
  return {
    fetch: await fetched("https://example.com/data.json"),
    img: await loaded("img", "http://example.org/picture.png"),
    script: await loaded("script", "https://cdn.example.net/library.js"),
    localhost: await fetched(`http://localhost:${port}/search.html`),
    site: await fetched(`http://127.0.0.1:${port}/search.html`),
    data: await fetched("data:text/plain,x"),
    blob: await fetched(blob),
  };
};

/** Two views of a notebook's lab (web/widget.mjs's render, on window.__widget, over a model
 * that has not answered yet); the first view's cleanup is called, as anywidget does when
 * the view goes, then the theme changes (tests/test_browser.py): [elements left in the
 * view's node, its Lab's theme] of each. */
export const removedView = async (declaration) => {
  const data = {declaration, values: {}, state: {}};
  const model = {get: (name) => data[name], set() {}, save_changes() {}, send() {}, on() {}, off() {}};
  const views = [0, 1].map(() => {
    const el = document.createElement("div");
    document.body.append(el);
    const cleanup = window.__widget.render({model, el});
    return {el, cleanup, lab: el.querySelector(".ab-lab").abLab};
  });
  views[0].cleanup();
  views.forEach((v) => { v.lab.looks.theme = "before"; });
  document.documentElement.setAttribute("data-theme", "dark");
  await new Promise((resolve) => setTimeout(resolve, 0));  // the observers' turn
  return views.map((v) => [v.el.childElementCount, v.lab.looks.theme]);
};

// ---------------------------------------------- tests/test_lab_legibility.py's page programs

/** Records each text drawn, per canvas; a fill of the whole canvas (a new drawing) starts its
 * list again. */
export const recordTexts = () => {
  const P = CanvasRenderingContext2D.prototype, fill = P.fillText, rect = P.fillRect;
  const texts = new WeakMap();
  const apply = (m, x, y) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f];
  globalThis.__abTexts = (canvas) => texts.get(canvas) || [];
  P.fillRect = function (x, y, w, h) {
    const m = this.getTransform(), [x0, y0] = apply(m, x, y), [x1] = apply(m, x + w, y + h);
    if (m.b === 0 && m.c === 0 && x0 <= 0 && y0 <= 0 && x1 >= this.canvas.width - 1) {
      texts.set(this.canvas, []);
    }
    return rect.apply(this, arguments);
  };
  P.fillText = function (str, x, y) {
    const m = this.getTransform(), t = this.measureText(str);
    const l = x - t.actualBoundingBoxLeft, r = x + t.actualBoundingBoxRight;
    const top = y - t.actualBoundingBoxAscent, bottom = y + t.actualBoundingBoxDescent;
    if (!texts.has(this.canvas)) { texts.set(this.canvas, []); }
    texts.get(this.canvas).push({
      text: String(str), font: this.font, align: this.textAlign, baseline: this.textBaseline,
      matrix: [m.a, m.b, m.c, m.d], anchor: apply(m, x, y),
      corners: [[l, top], [r, top], [r, bottom], [l, bottom]].map(([px, py]) => apply(m, px, py)),
    });
    return fill.apply(this, arguments);
  };
};

/** In the page: what lab element `id` shows now (the texts of its canvas, its visible size, the
 * tokens of its state, what runs past its right edge). */
export const look = ([id]) => {
  const el = document.getElementById(id), lab = el.abLab, c = lab.canvas;
  const visible = Math.min(c.height, Math.round(lab.figure.getBoundingClientRect().height * devicePixelRatio));
  const st = lab.state || {};
  const tokens = st.tokens || st.queryTokens || [];
  const edge = el.getBoundingClientRect().right;
  const past = [];
  for (const node of el.querySelectorAll("*")) {
    const r = node.getBoundingClientRect();
    if (r.width && r.height && r.right > edge + 0.5) {
      past.push(node.tagName + "." + node.className + " " + (node.textContent || "").slice(0, 40) +
                " right " + Math.round(r.right) + " > " + Math.round(edge));
    }
  }
  if (document.documentElement.scrollWidth > innerWidth) {
    past.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " > " + innerWidth);
  }
  return {texts: __abTexts(c), width: c.width, height: visible, tokens: Array.from(tokens, String), past};
};

export const setControl = async ([id, name, value]) => {
  const el = document.getElementById(id);
  const drawn = new Promise((resolve) => el.addEventListener("ab-lab-drawn", resolve, {once: true}));
  el.abLab.set(name, value);
  await drawn;
};

export const setMode = async ([mode]) => {
  document.documentElement.setAttribute("data-theme", mode);
  await new Promise((resolve) => setTimeout(resolve, 0));  // the lab's observer redraws
};

export const badFigure = () => {
  document.body.innerHTML = '<div class="ab-lab" id="bad" style="width:200px">' +
    '<div class="ab-lab-figure"></div><code style="white-space:nowrap">' + "x".repeat(80) + "</code></div>";
  const c = document.createElement("canvas");
  c.width = 200; c.height = 100;
  const lab = {canvas: c, figure: document.querySelector(".ab-lab-figure"),
    state: {tokens: ["the", "cat", "sat", "the"]}};
  lab.figure.append(c);
  lab.figure.style.height = "100px";
  document.getElementById("bad").abLab = lab;
  const ctx = c.getContext("2d");
  ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, 200, 100);
  ctx.font = "11px sans-serif"; ctx.fillStyle = "#000";
  ctx.textAlign = "center"; ctx.textBaseline = "top";
  ctx.fillText("the", 40, 80); ctx.fillText("cat", 60, 80); ctx.fillText("sat", 80, 80);
  ctx.fillText("weights (\u2212\u221e bef\u2026", 100, 10);
  ctx.fillText("overlapping", 100, 40); ctx.fillText("overlapped", 110, 44);
  ctx.textAlign = "left"; ctx.fillText("weather", 185, 60);
  ctx.fillText("1 in 4 named", 4, 60);
};

/** In the page: an arcs panel of `weights` drawn by the front end at `dpr` on `background`; for
 * each arc, the contrast against the background of its most contrasting pixel where it crosses
 * the panel's middle row (within 3 CSS px of the curve across, and 3 up or down: an arc runs
 * flat there, and its halo is above and below its colour). */
export const arcContrasts = ([dpr, background, dark, weights]) => {
  const L = AttentionBook.lab, c = document.createElement("canvas");
  const th = {background, dark, text: dark ? "#ced6dd" : "#222832", muted: "#9ca4af", border: "#48566b"};
  const tokens = weights.map((_, j) => "t" + j);
  const {drawn} = L.drawFigure(c, {panels: [{kind: "arcs", title: "", tokens, query: 0, weights}]}, 420, th,
    document.createElement("canvas"), dpr);
  const {xq, xs, top, bottom} = drawn[0], mid = (top + bottom) / 2;
  const ctx = c.getContext("2d"), row = ctx.getImageData(0, Math.round(mid * dpr), c.width, 1).data;
  const lum = (rgb) => {
    const [r, g, b] = rgb.map((v) => (v /= 255) <= 0.04045 ? v / 12.92
    : ((v + 0.055) / 1.055) ** 2.4); return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const bg = lum([1, 3, 5].map((i) => parseInt(background.slice(i, i + 2), 16)));
  return xs.map((x) => {  // the cubic from (xq, top) to (x, bottom) crosses the middle at t = 1/2
    let best = 1;
    for (let k = Math.floor(((xq + x) / 2 - 3) * dpr); k <= Math.ceil(((xq + x) / 2 + 3) * dpr); k++) {
      const l = lum([row[4 * k], row[4 * k + 1], row[4 * k + 2]]);
      best = Math.max(best, (Math.max(l, bg) + 0.05) / (Math.min(l, bg) + 0.05));
    }
    const column = ctx.getImageData(Math.round((xq + x) / 2 * dpr), Math.round((mid - 3) * dpr), 1,
      Math.round(6 * dpr) + 1).data;
    for (let k = 0; k < column.length; k += 4) {
      const l = lum([column[k], column[k + 1], column[k + 2]]);
      best = Math.max(best, (Math.max(l, bg) + 0.05) / (Math.min(l, bg) + 0.05));
    }
    return best;
  });
};

/** Before any script: each lab's mount (its element's abLab set) and each drawing, with the
 * other lab that did either in the same task (a microtask clears the mark at the end of the
 * callback). */
export const sameTask = () => {
  globalThis.__abWork = [];
  let open = null;
  const did = (what, lab) => {
    __abWork.push({what, lab, with: open && open !== lab ? open : null});
    open = lab;
    queueMicrotask(() => { open = null; });
  };
  Object.defineProperty(HTMLElement.prototype, "abLab", {configurable: true, set(lab) {
    Object.defineProperty(this, "abLab", {value: lab, writable: true, configurable: true});
    did("mount", this.getAttribute("data-ab-lab"));
  }});
  document.addEventListener("ab-lab-drawn", (e) => did("draw", e.target.getAttribute("data-ab-lab")), true);
};

/** In the page: a dense line (`n` points of `f` over `w` CSS px) stroked with a round pen and
 * filled by the lines panel's columns, at `dpr`; the pixels each covers (alpha over half). */
export const denseLineCover = ([n, w, width, dpr, f]) => {
  const ys = Array.from({length: n}, (_, i) => Math.sin(i * f) + 0.3 * Math.sin(i * f * 7.3));
  const X = (i) => 10 + (i + 0.5) * w / n, Y = (v) => 60 - 40 * v;
  const cover = (draw) => {
    const c = document.createElement("canvas");
    c.width = (w + 20) * dpr; c.height = 120 * dpr;
    const ctx = c.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = ctx.strokeStyle = "#000";
    ctx.lineWidth = width; ctx.lineJoin = "round"; ctx.lineCap = "round";
    draw(ctx);
    const px = ctx.getImageData(0, 0, c.width, c.height).data, on = [];
    for (let k = 3; k < px.length; k += 4) { on.push(px[k] > 127 ? 1 : 0); }
    return on;
  };
  const stroked = cover((ctx) => {
    ctx.beginPath();
    ys.forEach((v, i) => (i ? ctx.lineTo(X(i), Y(v)) : ctx.moveTo(X(i), Y(v))));
    ctx.stroke();
  });
  const filled = cover((ctx) => AttentionBook.lab.fillColumns(ctx, ys, X, Y, width, dpr));
  let both = 0, either = 0;
  stroked.forEach((a, k) => { both += a & filled[k]; either += a | filled[k]; });
  return both / either;
};

/** The multi-head lab's h and its choices, the heads switched on and the state's h. */
export const heads = (id) => {
  const lab = document.getElementById(id).abLab;
  const h = lab.controls.find((c) => c.name === "h");
  return {h: lab.values.h, options: h.options.map((o) => o[1]), on: lab.values.heads_on,
    state: lab.state.h};
};

/** In the page: the keys an arcs panel of `weights` draws an arc to (each arc's end, matched to
 * the key it lands on). */
export const arcKeys = ([weights]) => {
  const L = AttentionBook.lab, c = document.createElement("canvas"), ends = [];
  const proto = CanvasRenderingContext2D.prototype, curve = proto.bezierCurveTo;
  proto.bezierCurveTo = function (a, b, d, e, x, y) { ends.push([x, y]); return curve.apply(this, arguments); };
  const th = {background: "#ffffff", dark: false, text: "#222832", muted: "#9ca4af", border: "#48566b"};
  const tokens = weights.map((_, j) => "t" + j);
  try {
    const {drawn} = L.drawFigure(c, {panels: [{kind: "arcs", title: "", tokens, query: 0, weights}]}, 700, th,
      document.createElement("canvas"), 1);
    const {xs, bottom} = drawn[0];
    return ends.filter(([, y]) => Math.abs(y - bottom) < 1e-6)
      .map(([x]) => xs.findIndex((k) => Math.abs(k - x) < 1e-6)).sort((a, b) => a - b);
  } finally { proto.bezierCurveTo = curve; }
};

/** In the page: the lab's figure laid out as drawn at its width: each panel's region, CSS px. */
export const figureRegions = ([id]) => {
  const lab = document.getElementById(id).abLab, c = document.createElement("canvas");
  const {regions} = AttentionBook.lab.drawFigure(c, lab.spec, lab.width(), lab.looks.theme,
    document.createElement("canvas"), 1);
  return regions.map((r) => [Math.round(r.x), Math.round(r.w)]);
};

/** The lab's downloaded picture (tests/test_lab_legibility.py's PNG download): the PNG given as
 * base64, decoded in the page; its pixel (2, 2) as [r, g, b]. */
export const pngCorner = async (b64) => {
  const img = new Image();
  img.src = "data:image/png;base64," + b64;
  await img.decode();
  const c = document.createElement("canvas");
  c.width = img.width;
  c.height = img.height;
  const ctx = c.getContext("2d");
  ctx.drawImage(img, 0, 0);
  return Array.from(ctx.getImageData(2, 2, 1, 1).data.slice(0, 3));
};

/** Chapter 10's lab (tests/test_web_decoder_browser.py's show): set every control to `values`
 * (one drawing), wait until the model has nothing under way (a generation, a logit lens), and
 * return the state shown, its arrays as {typed, f8} (float64 bytes, base64), the readout's text
 * and elements, the status line and the page's title. */
export const decoderShow = async ([values]) => {
  const el = document.querySelector(".ab-lab"), lab = el.abLab, M = AttentionBook.decoder;
  const names = Object.keys(values);
  names.slice(0, -1).forEach((name) => { lab.controls.find((c) => c.name === name).value = values[name]; });
  lab.set(names[names.length - 1], values[names[names.length - 1]]);
  const busy = () => lab.state.notes.some((n) =>
    /^(writing:|computing the logit lens|the model is reading)/.test(n.text));
  for (let k = 0; k < 50 && (busy() || M.model.pending); k++) {
    await M.settled();
    await new Promise((r) => setTimeout(r, 10));
  }
  const b64 = (a) => {
    const u = new Uint8Array(Float64Array.from(a).buffer);
    let s = "";
    for (let i = 0; i < u.length; i++) { s += String.fromCharCode(u[i]); }
    return btoa(s);
  };
  const typed = (x) => (ArrayBuffer.isView(x) ? {typed: x.constructor.name, f8: b64(x)}
    : Array.isArray(x) ? x.map(typed) : x !== null && typeof x === "object"
      ? Object.fromEntries(Object.keys(x).map((k) => [k, typed(x[k])])) : x);
  const caption = el.querySelector(".ab-lab-readout");
  return {state: typed(lab.state), caption: caption.textContent,
    elements: caption.querySelectorAll("script, img, b > b").length,
    status: el.querySelector(".ab-model-status").textContent, title: document.title};
};

/** Chapter 10's lab over http (tests/test_web_decoder_browser.py): from now on, each progress
 * of the model's load is pushed to window.seen (a copy of [done, total]); returns nothing. */
export const decoderRecordProgress = () => {
  const M = AttentionBook.decoder;
  window.seen = [];
  M.model.listeners.push((what) => {
    if (what === "progress") { window.seen.push(M.model.progress.slice()); }
  });
};

/** Chapter 10's lab over http (tests/test_web_decoder_browser.py): from now on, the stop button
 * is clicked once a generation has written its second step; returns nothing. */
export const decoderStopEarly = () => {
  const M = AttentionBook.decoder;
  M.model.listeners.push((what) => {
    const stop = document.querySelector("button.ab-stop");
    if (what === "step" && M.model.current?.n === 1 && !stop.hidden) { stop.click(); }
  });
};

/** Not evaluated alone: tests/test_web_lab.py's browser_parity passes it to positional.mjs's
 * computeAll in the page; a typed array's bytes as base64. */
export const positionalBase64 = (a) => {
  let s = "";
  const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  for (let i = 0; i < bytes.length; i += 8192) {
    s += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
  }
  return btoa(s);
};

/** Chapter 2's lab (tests/test_web_lab.py's check_disabled_base): move control `index` through
 * `values` as its input does (set it, fire "input", wait for the drawing); what the lab shows
 * at each: the value taken, the readout's text and whether the control is disabled. */
export const positionalMove = async ([labId, index, values]) => {
  const el = document.getElementById(labId), lab = el.abLab, control = lab.declaration.controls[index];
  const input = document.getElementById(labId + "-c" + index);
  const seen = [];
  for (const value of values) {
    const drawn = new Promise((resolve) => el.addEventListener("ab-lab-drawn", resolve, {once: true}));
    input.value = String(control.range ? value : control.values.indexOf(value));  // a select: the index
    input.dispatchEvent(new Event("input", {bubbles: true}));
    await drawn;
    seen.push({value, got: lab.values[control.name], disabled: input.disabled,
      caption: el.querySelector(".ab-lab-readout").textContent});
  }
  return seen;
};

/** A lab driven as a reader drives it (tests/test_web_labs.py's drive, in one round trip a
 * lab): for each [name, values] of `moves` in turn, set control `name` to each of `values`
 * (null: every choice it offers then) and wait for each drawing; for each move, what the lab
 * shows at each value: its values, alt text, readout's text, a fingerprint of the pixels shown
 * and the canvas's size, the control's state, output and aria-valuetext, and how many elements
 * the readout holds that text must not make. */
export const driveControls = async ([labId, moves]) => {
  const el = document.getElementById(labId), lab = el.abLab;
  // the canvas's rows inside its frame, as tall as the figure drawn (the canvas keeps the
  // tallest height it was given, figure.js's fit, so rows below the frame are an earlier drawing's)
  const shownRows = () => {
    const c = lab.canvas, frame = parseFloat(lab.figure.style.height);
    const dpr = c.width / parseFloat(c.style.width);
    return Number.isFinite(frame) ? Math.min(c.height, Math.round(frame * dpr)) : c.height;
  };
  const pixels = () => {
    const c = lab.canvas, d = c.getContext("2d").getImageData(0, 0, c.width, shownRows()).data;
    let h1 = 0, h2 = 0;
    for (let i = 0; i < d.length; i += 4) {
      h1 = (h1 * 31 + d[i] + 7 * d[i + 1] + 13 * d[i + 2]) | 0;
      h2 = (h2 + d[i] * (i % 65521)) | 0;
    }
    return h1 + ":" + h2;
  };
  const drive = async (name, values) => {
    const index = lab.declaration.controls.findIndex((c) => c.name === name);
    if (values === null) { values = lab.controls[index].options.map((o) => o[1]); }
    const seen = [];
    for (const value of values) {
      // a change the lab never draws fails here, not by hanging the run (a notebook widget
      // whose figure threw drew nothing, and the JupyterLab run waited for ever)
      let timer;
      const drawn = new Promise((resolve, reject) => {
        el.addEventListener("ab-lab-drawn", resolve, {once: true});
        timer = setTimeout(() => reject(new Error(`${name} = ${JSON.stringify(value)}: not drawn in 120 s`)),
          120000);
      });
      lab.set(name, value);
      await drawn;
      clearTimeout(timer);
      const caption = el.querySelector(".ab-lab-readout");
      const control = lab.controls[index];
      seen.push({value, values: Object.assign({}, lab.values), alt: lab.canvas.getAttribute("aria-label"),
        caption: caption.textContent, pixels: pixels(), size: [lab.canvas.width, shownRows()],
        disabled: !!control.disabled,
        output: control.output ? control.output.textContent : null,
        valuetext: control.input.getAttribute("aria-valuetext"),
        elements: caption.querySelectorAll("script, img, b > b, iframe").length});
    }
    return seen;
  };
  const out = [];
  for (const [name, values] of moves) { out.push(await drive(name, values)); }
  return out;
};

/** The text of each HTML fragment, as the page parses it (tests/test_web_labs.py: Python's
 * readouts, to compare with the page's captions). */
export const fragmentTexts = (fragments) => {
  return fragments.map((h) => {
    const t = document.createElement("template");
    t.innerHTML = h;
    return t.content.textContent;
  });
};

/** A lab's labels (tests/test_web_labs.py's check_labels), in one round trip: its alt text, and
 * for each select and slider its id, class, aria-label, whether it is disabled, how many labels
 * and hints it has and whether its hint is shown (non-empty box, not visibility: hidden). */
export const labLabels = (labId) => {
  const lab = document.getElementById(labId);
  lab.scrollIntoViewIfNeeded();
  const shown = (el) => {
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== "hidden";
  };
  return {alt: lab.querySelector("canvas.ab-lab-canvas").getAttribute("aria-label"),
    controls: [...lab.querySelectorAll("select, input[type=range]")].map((c) => {
      const hints = lab.querySelectorAll(`[id="${c.id}-hint"]`);
      return {id: c.id, cls: c.getAttribute("class") || "", aria: c.getAttribute("aria-label") || "",
        disabled: c.matches(":disabled") || c.getAttribute("aria-disabled") === "true",
        labels: lab.querySelectorAll(`label[for="${c.id}"]`).length,
        hints: hints.length, hintShown: hints.length > 0 && shown(hints[0])};
    })};
};

/** A lab's own page (tests/test_web_labs.py's check_standalone): draw its figure as wide as a
 * canvas `width` device pixels wide (the book's column); returns nothing. */
export const sameWidth = ([labId, width]) => {
  const lab = document.getElementById(labId).abLab;
  const dpr = lab.canvas.width / parseFloat(lab.canvas.style.width);
  lab.figure.style.width = width / dpr + "px";
  lab.looks.width = null;
  lab.redraw();
};

/** rng.js in a file:// page (tests/test_web_rng.py): the generator of `seed` (a decimal string
 * when `big`: a BigInt); its 200 000 normals, a permutation of 600 and 1 000 doubles, each as the
 * base64 of its typed array's bytes. */
export const rngDraws = ([seed, big]) => {
  const g = AttentionBook.rng.defaultRng(big ? BigInt(seed) : seed);
  const b64 = (a) => {
    const u8 = new Uint8Array(a.buffer);
    let s = "";
    for (let i = 0; i < u8.length; i += 0x8000) {
      s += String.fromCharCode.apply(null, u8.subarray(i, i + 0x8000));
    }
    return btoa(s);
  };
  return [b64(g.standardNormal(200000)), b64(g.permutation(600)), b64(g.random(1000))];
};

/** The labs' modules in a file:// page (tests/test_web_states.py): the embedding and attention
 * labs' readouts of a reader's `text` put into #out; [elements that are script or img, its
 * text, the page's title]. */
export const markupReadouts = (text) => {
  const out = document.getElementById("out"), M = AttentionBook;
  out.innerHTML = M.embedding.readoutHtml(M.embedding.state({text, d: 8, seed: 0}))
    + M.attention.readoutHtml(M.attention.state({text, kv_text: text, mode: "cross",
      query: 0, d_k: 4, temperature: 1, seed: 0}));
  return [out.querySelectorAll("script, img").length, out.textContent, document.title];
};
