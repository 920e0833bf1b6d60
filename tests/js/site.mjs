// Functions tests/test_pages.py evaluates in the built book's pages (playwright's
// page.evaluate), kept here so that eslint reads them, as tests/js/pages.mjs keeps the other
// browser tests': tests/node_driver.py's page_function(name) reads either file. Each runs alone
// in the page: it may use the page's globals (axe, AttentionBook, MathJax), never this
// module's names.
/* global axe, AttentionBook, MathJax */

/** Colour contrast is most of axe's time, and most of what it checks is highlighted code: 4,840
 * elements on chapter 6, 4,407 of them spans of pygments tokens in 25 styles. An element of
 * ``div.highlight pre`` that looks like one before it (the same colour, font and every
 * background, filter and opacity up to the root) is marked ``data-ab-axe-same`` with the
 * number of that first one (marked ``data-ab-axe-style``), and axe's colour-contrast rule
 * skips the marked ones: it still checks every style each page shows, in every setting, and
 * every other rule still checks every element. Axe's own verdict depends on nothing else
 * for these spans (test_one_span_a_code_style_finds_what_every_span_finds checks that on
 * today's site, and that an odd span is caught). The renderer's CPU for axe, chapter 6:
 * 4.3 -> 2.9 s a visit; the 15 pages at 1280 px, light: 30.3 -> 23.9 s (-21%). */
export const markSameStyles = () => {
  const look = (e, stop) => {
    const out = [];
    for (; e && e !== stop; e = e.parentElement) {
      const s = getComputedStyle(e);
      out.push(s.backgroundColor, s.backgroundImage, s.opacity, s.filter, s.mixBlendMode);
    }
    return out.join();
  };
  for (const el of document.querySelectorAll("[data-ab-axe-same], [data-ab-axe-style]")) {
    el.removeAttribute("data-ab-axe-same");  // marked in the other mode: marked again
    el.removeAttribute("data-ab-axe-style");
  }
  const first = new Map();
  let same = 0;
  for (const pre of document.querySelectorAll("div.highlight pre")) {
    const behind = look(pre.parentElement, null);
    for (const el of pre.querySelectorAll("*")) {
      // left to axe: an element without a letter or digit of its own, which axe skips
      // (punctuation only), so that the first of each style is one axe reads
      const own = Array.from(el.childNodes).filter((n) => n.nodeType === 3)
        .map((n) => n.textContent).join("").trim();
      if (!/[\p{L}\p{N}]/u.test(own)) { continue; }
      const s = getComputedStyle(el);
      // one character: axe calls its failing contrast incomplete (shortTextContent), not
      // a violation, so such a span is never the one checked for longer ones
      const key = [behind, look(el, pre.parentElement), s.color, s.fontSize, s.fontWeight,
        s.fontStyle, s.textShadow, s.visibility, s.textDecoration,
        own.length === 1, el.checkVisibility()].join("|");
      if (first.has(key)) {
        el.setAttribute("data-ab-axe-same", first.get(key));
        same += 1;
      } else {
        first.set(key, first.size);
        el.setAttribute("data-ab-axe-style", first.size - 1);
      }
    }
  }
  return {styles: first.size, same};
};

/** The elements shown: a hash of the positions (in document order) of the body's visible
 * elements, the mode switch's icons left out (it shows the mode's own icon). */
export const visibleElements = () => {
  let hash = 0, n = 0;
  for (const el of document.body.getElementsByTagName("*")) {
    if (el.closest(".theme-switch-button")) { continue; }
    n += 1;
    if (el.checkVisibility({visibilityProperty: true})) { hash = (hash * 31 + n) | 0; }
  }
  return n + ":" + hash;
};

/** axe on the page: every rule of ``tags`` or ``only`` these, less ``off``. Its violations
 * (five nodes each); with ``every``, also each rule's nodes by kind of result (passes,
 * violations, incomplete: their targets) and the rules it ran. */
export const runAxe = async ([tags, only, off, every]) => {
  axe.configure({rules: [{id: "color-contrast", selector: "*:not([data-ab-axe-same])"}]});
  const options = {runOnly: only ? {type: "rule", values: only} : {type: "tag", values: tags},
    rules: Object.fromEntries(off.map((id) => [id, {enabled: false}]))};
  if (!every) { options.resultTypes = ["violations"]; }
  const result = await axe.run(document, options);
  const out = {violations: result.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ") + ": " +
      n.failureSummary.split("\n").slice(1, 2).join(""))}))};
  if (every) {
    out.ran = [];
    out.nodes = [];
    for (const kind of ["passes", "violations", "incomplete", "inapplicable"]) {
      for (const rule of result[kind]) {
        out.ran.push(rule.id);
        for (const node of rule.nodes) { out.nodes.push([rule.id, kind, JSON.stringify(node.target)]); }
      }
    }
  }
  return out;
};

/** The page as a reader meets it: MathJax has typeset, and the book's script has run its fixes
 * (attention-book.js: tab stops on wide maths, names of the theme's buttons) after that,
 * which it does 100 ms after the last change to the page's elements: so once 120 ms have
 * passed without a change (a fixed 300 ms before: most pages are quiet by then). */
export const settle = async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  await new Promise((resolve) => {
    const quiet = () => { changes.disconnect(); resolve(); };
    let timer = setTimeout(quiet, 120);
    const changes = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(quiet, 120); });
    changes.observe(document.body, {childList: true, subtree: true});
  });
  return document.documentElement.dataset.abAccessible;
};

/** The start of each image's address that did not load (none shown, or none there). */
export const brokenImages = () => {
  return [...document.images]
    .filter((i) => i.getAttribute("src") !== null && !(i.complete && i.naturalWidth > 0))
    .map((i) => i.src.slice(0, 80));
};

/** Every element with its own text inside a lab or an output, with its colour composited
 * over the colours behind it: those under ``min`` (test_pages.py's MIN_CONTRAST), and how many
 * were checked. Disabled controls are exempt (WCAG 1.4.3: inactive components). With
 * ``every``, also each element checked with its colours and ratio. */
export const textContrasts = ([every, min]) => {
  function rgba(text) {
    const m = text.match(/rgba?\(([^)]+)\)/);
    if (!m) { return [0, 0, 0, 0]; }
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  }
  function over(top, bottom) {  // top composited over an opaque bottom
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat([1]);
  }
  function background(el) {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) { layers.push(c); }
      if (c[3] >= 1) { break; }
    }
    let colour = [255, 255, 255, 1];  // the canvas behind everything
    for (let i = layers.length - 1; i >= 0; i--) { colour = over(layers[i], colour); }
    return colour;
  }
  function luminance(c) {
    const [r, g, b] = c.slice(0, 3).map((v) => {
      v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }
  const bad = [], all = [];
  let checked = 0;
  document.querySelectorAll(".ab-lab *, .cell_output *").forEach((el) => {
    const own = Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length || el.closest(":disabled, [aria-hidden=true]")) { return; }
    const style = getComputedStyle(el);
    if (style.visibility !== "visible" || Number(style.opacity) === 0) { return; }
    const bg = background(el), fg = over(rgba(style.color), bg);
    const [hi, lo] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    checked += 1;
    const said = () => `${el.tagName.toLowerCase()}.${el.className} "${el.textContent.trim().slice(0, 40)}"` +
                       ` ${style.color} on rgb(${bg.slice(0, 3).map(Math.round)}): ${ratio.toFixed(2)}`;
    if (ratio < min) { bad.push(said()); }
    if (every) { all.push(said()); }
  });
  return {checked, bad, all};
};

/** The figures a page shows: the canvases of labs computed in the browser (data-text-px in
 * the canvas's pixels) and the outputs' images.
 * Each one's "Enlarge figure" button, if it has one, is marked data-readable-zoom=i. */
export const figures = () => {
  return Array.from(document.querySelectorAll(
    ".ab-lab-figure > canvas, .cell_output img:not(.ab-lab img)")).map((img, i) => {
    const figure = img.closest(".ab-lab-figure, a.image-reference") || img;
    const next = figure.nextElementSibling;
    const zoom = !!next && next.classList.contains("ab-zoom-button");
    if (zoom) { next.setAttribute("data-readable-zoom", i); }
    const canvas = img.tagName === "CANVAS";
    return {i, zoom, src: canvas ? "canvas" : img.currentSrc || img.src,
      textPx: img.getAttribute("data-text-px"),
      shown: img.getBoundingClientRect().width, natural: canvas ? img.width : img.naturalWidth};
  });
};

/** Each lab canvas's pixels per CSS pixel, as shown (2 on the 2x phone: sharp). */
export const canvasRatios = () => {
  return Array.from(document.querySelectorAll(".ab-lab-figure > canvas"))
    .map((c) => c.width / c.getBoundingClientRect().width);
};

/** The theme's mode button, pressed as a reader does until the page is in the mode asked
 * for (light, auto, dark, light: headless chromium prefers light), then two frames for the
 * labs to redraw. */
export const toMode = async (mode) => {
  const button = document.querySelector(".theme-switch-button");
  for (let i = 0; i < 3 && localStorage.getItem("mode") !== mode; i++) { button.click(); }
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  return [document.documentElement.dataset.theme, localStorage.getItem("mode")];
};

/** Every section laid out (``true``) or back to the page's own (``false``): a style element
 * of its own, added once. */
export const layOut = (on) => {
  let style = document.getElementById("ab-test-lay-out");
  if (on && !style) {
    style = document.head.appendChild(document.createElement("style"));
    style.id = "ab-test-lay-out";
    style.textContent = ".bd-article section section { content-visibility: visible; }";
  }
  if (!on && style) { style.remove(); }
};

/** Each chapter image shown and its file's shape, and, enlarged, the dialog's. The scroll
 * and the focus are put back as they were (a dialog's closing focuses its button, which
 * scrolls the page to it): the visit's dark mode then shows what its light mode showed. */
export const aspects = async () => {
  const out = [], y = scrollY, focused = document.activeElement;
  for (const img of document.querySelectorAll(".cell_output img:not(.ab-lab img)")) {
    if (!img.getClientRects().length || !img.naturalWidth) { continue; }
    const r = img.getBoundingClientRect(), natural = img.naturalWidth / img.naturalHeight;
    const row = {src: img.src.slice(-24), shown: r.width / r.height, natural};
    const button = img.closest("a.image-reference, img").nextElementSibling;
    if (button && button.classList.contains("ab-zoom-button")) {
      button.click();
      const big = document.querySelector("dialog.ab-zoom[open] img");
      const b = big.getBoundingClientRect();
      row.enlarged = b.width / b.height;
      document.querySelector("dialog.ab-zoom[open]").close();
    }
    out.push(row);
  }
  if (focused && focused !== document.body) {
    focused.focus({preventScroll: true});
  } else {
    document.activeElement.blur();
  }
  scrollTo({top: y, behavior: "instant"});
  return out;
};

/** test_mathjax_typesets_a_page_in_batches: chapter 3's pageReady run again with MathJax's
 * typesetPromise counted: [how many outermost elements MathJax processes, the size of each
 * batch it typeset]. */
export const mathjaxBatches = async () => {
  const marked = MathJax.config.options.processHtmlClass.split("|").map((c) => "." + c).join(", ");
  const roots = [...document.querySelectorAll(marked)].filter((el) => !el.parentElement.closest(marked));
  const sizes = [], typeset = MathJax.typesetPromise;
  MathJax.typesetPromise = (els) => { sizes.push(els ? els.length : "all"); return typeset(els); };
  try { await MathJax.config.startup.pageReady(); } finally { MathJax.typesetPromise = typeset; }
  return [roots.length, sizes];
};

/** test_the_axe_check_finds_a_violation: a box that scrolls sideways without a tab stop (axe's
 * scrollable-region-focusable). */
export const addWideBox = () => {
  const box = document.createElement("div");
  box.style.cssText = "overflow-x: auto; width: 100px";
  box.innerHTML = "<p style='width: 900px'>" + "wide text ".repeat(90) + "</p>";
  document.querySelector("main").append(box);
};

/** test_the_axe_plan_catches_what_one_width_or_mode_shows: a nameless button shown on phones
 * only, one shown in dark mode only, a button whose name is hidden on phones, and grey-on-grey
 * text in dark mode. */
export const addSettingOnlyButtons = () => {
  const style = document.createElement("style");
  style.textContent = `.ab-t-phone, .ab-t-dark { display: none; width: 48px; height: 48px; }
    @media (max-width: 600px) { .ab-t-phone { display: inline-block; } .ab-t-wide { display: none; } }
    html[data-theme=dark] .ab-t-dark { display: inline-block; }
    html[data-theme=dark] .ab-t-grey { color: #555555; background: #444444; }`;
  document.head.append(style);
  document.querySelector("main").insertAdjacentHTML("beforeend",
    '<button class="ab-t-phone"></button><button class="ab-t-dark"></button>' +
    '<button class="ab-t-icon"><span class="ab-t-wide">Search the book</span></button>' +
    '<p class="ab-t-grey">grey on grey in dark mode</p>');
};

/** axe's colour contrast on every element: what it decided for each (its kind of result and
 * the check's data: colours, ratio, font) and, for a highlighted span, its style's number. */
export const fullContrast = async () => {
  axe.reset();  // RUN_AXE left color-contrast on the first span of each style only
  const result = await axe.run(document, {runOnly: ["color-contrast"], elementRef: true});
  const verdict = new Map();
  for (const kind of ["passes", "violations", "incomplete"]) {
    for (const rule of result[kind]) for (const node of rule.nodes) {
      verdict.set(node.element, kind + " " + JSON.stringify(
        [...node.any, ...node.all, ...node.none].map((c) => [c.id, c.data])));
    }
  }
  return Array.from(document.querySelectorAll("[data-ab-axe-style], [data-ab-axe-same]"))
    .map((el) => [el.getAttribute("data-ab-axe-style") ?? el.getAttribute("data-ab-axe-same"),
      el.hasAttribute("data-ab-axe-style"), verdict.get(el) || "not checked",
      el.textContent.slice(0, 30)]);
};

/** test_one_span_a_code_style_finds_what_every_span_finds: in the last code block that has
 * both, a one-letter name and a later long name made grey (under 4.5:1). */
export const greySpans = () => {
  for (const pre of [...document.querySelectorAll("div.highlight pre")].reverse()) {
    const spans = [...pre.querySelectorAll("span.n")].filter((e) => e.checkVisibility());
    const one = spans.findIndex((e) => e.textContent.length === 1);
    const long = spans.findLastIndex((e) => e.textContent.length > 3);
    if (one >= 0 && long > one) {
      spans[one].style.color = spans[long].style.color = "#777777";
      return;
    }
  }
};

/** test_print_shows_each_lab_figure_only_and_wraps_code: in print media, the display of the
 * labs' controls, notes and zoom buttons, the labs' break-inside, the figures' heights, the
 * code's white-space and how many shown cells or code blocks are empty. */
export const printStyles = () => {
  return ({
    hidden: Array.from(document.querySelectorAll(
      ".ab-lab-controls, .ab-lab-note, .ab-zoom-button")).map(
      (e) => getComputedStyle(e).display),
    whole: Array.from(document.querySelectorAll(".ab-lab")).map(
      (e) => getComputedStyle(e).breakInside),
    pictures: Array.from(document.querySelectorAll(".ab-lab-figure")).map(
      (e) => e.getBoundingClientRect().height),
    wraps: Array.from(document.querySelectorAll("pre")).map(
      (e) => getComputedStyle(e).whiteSpace),
    empty: Array.from(document.querySelectorAll(".cell_input, .cell_output, pre")).filter(
      (e) => getComputedStyle(e).display !== "none" && e.getClientRects().length &&
           !e.textContent.trim() && !e.querySelector("img")).length,
  });
};

/** test_the_reading_checks_find_overflow_low_contrast_and_small_text: grey text 2000 px wide in
 * an output, and a lab canvas whose text is stated at 4 px. */
export const spoilReading = () => {
  const out = document.querySelector(".cell_output");
  const p = document.createElement("p");
  p.style.cssText = "color: #bbbbbb; width: 2000px";
  p.textContent = "hard to read";
  out.append(p);
  document.querySelector(".ab-lab-figure > canvas").setAttribute("data-text-px", "4");
};

/** Each element that may scroll, in the sections laid out only near the screen: whether its
 * tab stop says what it does once every section is laid out (attention-book.js measures them
 * a section a task; pydata-sphinx-theme.js, patched by _ext/ab_theme_fixes.py, leaves them).
 * ``spoil``: first take a scrolling formula's tab stop away and give one to a code block that
 * does not scroll (the check must find both). */
export const lazyTabStops = async (spoil) => {
  const until = async (ok) => {
    for (let i = 0; i < 600 && !ok(); i++) { await new Promise((r) => setTimeout(r, 50)); }
  };
  await until(() => document.documentElement.dataset.abTabStops === "measured");
  const lazy = [...document.querySelectorAll(".bd-article section section")];
  const style = document.createElement("style");
  style.textContent = ".bd-article section section { content-visibility: visible; }";
  const skipped = lazy.filter((s) => getComputedStyle(s).contentVisibility === "auto" &&
    !s.firstElementChild.checkVisibility({contentVisibilityAuto: true})).length;
  document.head.append(style);
  const scrolls = (el) => el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight;
  if (spoil) {
    const inside = ".bd-article section section ";
    [...document.querySelectorAll(inside + "mjx-container[display='true']")]
      .find(scrolls).removeAttribute("tabindex");
    [...document.querySelectorAll(inside + "pre")].find((el) => !scrolls(el)).tabIndex = 0;
  }
  const wrong = [];
  let scrolling = 0;
  for (const el of document.querySelectorAll(
    ".bd-article section section :is(pre, .cell_output > .output, " +
      ".pst-scrollable-table-container, mjx-container[display='true'])")) {
    const scrolled = scrolls(el);
    scrolling += scrolled;
    const math = el.tagName === "MJX-CONTAINER";
    const stop = el.getAttribute("tabindex");
    if (scrolled ? stop !== "0" : (math ? stop !== null : stop !== "-1")) {
      wrong.push(`${el.tagName.toLowerCase()} in #${el.closest("section").id}: ` +
                 `scrolls ${scrolled}, tabindex ${stop}`);
    }
  }
  style.remove();
  return {sections: lazy.length, skipped, scrolling, wrong};
};

/** test_sections_off_screen_wait_to_be_laid_out_and_keep_their_tab_stops: each nested section's
 * content-visibility (in print media). */
export const printedSections = () => {
  return [...document.querySelectorAll(
    ".bd-article section section")].map((s) => getComputedStyle(s).contentVisibility);
};

/** The labs and the page each is on (a lab's id is its element's). */
export const labPages = () => {
  return [...document.querySelectorAll(".ab-lab[data-ab-lab]")].map(
    (el) => ({id: el.id, lab: el.dataset.abLab}));
};

/** Set a lab's controls (name -> value), in the order given; ``null``: each control to the
 * value the page started it at (its declaration's default), twice over, as a control's
 * choices can follow the one before. */
export const setValues = ([id, values]) => {
  const lab = document.getElementById(id).abLab;
  if (values) { for (const [name, value] of Object.entries(values)) { lab.set(name, value); } return; }
  for (let pass = 0; pass < 2; pass++) {
    for (const c of lab.declaration.controls) { lab.set(c.name, c.default); }
  }
};

/** Every lab of the page has computed its first state. */
export const labsReady = () => {
  return [...document.querySelectorAll(".ab-lab[data-ab-lab]")]
    .every((el) => el.abLab && el.abLab.state);
};

/** test_the_site_opens_in_the_readers_colour_scheme: the page's theme and the background of a
 * lab's note. */
export const themeAndNote = () => {
  return ({theme: document.documentElement.dataset.theme,
    note: getComputedStyle(document.querySelector(".ab-lab .ab-note")).backgroundColor});
};

/** Where lab `id`'s figure starts: its height, and the figure's top below the lab's top and
 * below its first control's top (CSS px). */
export const geometry = (id) => {
  const el = document.getElementById(id), lab = el.getBoundingClientRect();
  const first = el.querySelector(".ab-lab-control").getBoundingClientRect();
  const figure = el.querySelector(".ab-lab-figure").getBoundingClientRect();
  return {height: lab.height, figureTop: figure.top - lab.top, fromControl: figure.top - first.top};
};

/** Every array each panel of the lab's figure draws, read off the figure's spec in the page
 * (what the canvas was drawn from), by the name drawn on the panel (its title): the test's
 * own reading, not the download's code. */
export const drawnArrays = (id) => {
  const lab = document.getElementById(id).abLab, out = {};
  const flat = (a) => Array.from(a || [], (v) => (Number.isFinite(v) ? v : null));
  for (const p of lab.spec.panels) {
    const arrays = [];
    if (p.kind === "heatmap") { arrays.push(flat(p.data)); }
    if (p.kind === "grid") { p.maps.forEach((m) => arrays.push(flat(m.data))); }
    if (p.kind === "lines") { p.lines.forEach((l) => arrays.push(flat(l.y))); }
    if (p.kind === "bars") { p.series.forEach((s) => arrays.push(flat(s.values))); }
    if (p.kind === "arcs" && p.weights) { arrays.push(flat(p.weights)); }
    if (p.kind === "thumbs" && p.data && p.data.length) { arrays.push(flat(p.data)); }
    out[p.title || ""] = arrays;
  }
  return {drawn: out, values: lab.values};
};

/** A control's change in the page, three tries at most: the long tasks (the Long Tasks API's:
 * over 50 ms) from the input event until two frames after the lab drew. The margin for a
 * shared machine, where a task's wall time grows with the load (on this 2-core machine, at
 * load 18, a new sentence's 10 ms of multi-head work ran 57-78 ms): a change fails when every
 * one of three tries has a long task longer than 50 ms x (1 + load / cores), the load read
 * before the change. A change that blocks the page (chapter 3's first d_k = 512: 177-809 ms
 * at load 3.5, QA Q4) still fails at any load under about 30 on 2 cores. */
export const longTasks = async ([id, name, value]) => {
  const el = document.getElementById(id), lab = el.abLab;
  const tries = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    const long = [];
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) { long.push(Math.round(e.duration)); }
    });
    observer.observe({type: "longtask"});
    const drawn = new Promise((resolve) => el.addEventListener("ab-lab-drawn", resolve, {once: true}));
    const before = JSON.stringify(lab.values);
    lab.set(name, value);
    if (JSON.stringify(lab.values) !== before || lab.answers === undefined) {
      await Promise.race([drawn, new Promise((r) => setTimeout(r, 3000))]);
    }
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    await new Promise((r) => setTimeout(r, 60));
    observer.disconnect();
    tries.push(long);
    if (!long.length) { break; }
    lab.set(name, JSON.parse(before)[name]);  // back, to change it again
    await new Promise((r) => setTimeout(r, 100));
  }
  return tries;
};

/** In each lab that masks, the masked cells' pixels: drawn again on a canvas at 2 px a CSS px
 * with each panel's masked cells found from its layout; every pixel inside a masked cell (1
 * px in from its edges) counted by colour. */
export const maskedPixels = (id) => {
  const lab = document.getElementById(id).abLab, L = AttentionBook.lab;
  const c = document.createElement("canvas");
  const layout = L.drawFigure(c, lab.spec, 700, lab.looks.theme, document.createElement("canvas"), 2);
  const ctx = c.getContext("2d"), colours = {}, panels = [];
  lab.spec.panels.forEach((p, k) => {
    const drawn = layout.drawn[k];
    const maps = p.kind === "grid" ? p.maps.map((m, i) => [m.masked || p.masked, drawn.boxes[i]])
      : p.kind === "heatmap"
        ? [[p.masked || (p.categories ? Uint8Array.from(p.data, (v) => v === 0) : null), drawn.box]] : [];
    for (const [masked, box] of maps) {
      if (!masked || !box) { continue; }
      panels.push(p.title);
      const cw = box.w / p.cols, ch = box.h / p.rows;
      for (let m = 0; m < masked.length; m++) {
        // the outlined row (a query, a generation step) has the accent's outline over it
        if (!masked[m] || Math.floor(m / p.cols) === p.outlineRow) { continue; }
        const x0 = Math.ceil((box.x + (m % p.cols) * cw) * 2) + 1;
        const y0 = Math.ceil((box.y + Math.floor(m / p.cols) * ch) * 2) + 1;
        const w = Math.floor(cw * 2) - 3, h = Math.floor(ch * 2) - 3;
        if (w < 1 || h < 1) { continue; }
        const d = ctx.getImageData(x0, y0, w, h).data;
        for (let i = 0; i < d.length; i += 4) {
          const key = d[i] + "," + d[i + 1] + "," + d[i + 2];
          colours[key] = (colours[key] || 0) + 1;
        }
      }
    }
  });
  return {panels, colours};
};

/** The colours a link takes (the theme's link and hover colours, read off the page) and
 * every background the theme paints boxes of text with, in the mode shown. */
export const linkColours = () => {
  const s = getComputedStyle(document.documentElement), v = (n) => s.getPropertyValue(n).trim();
  const a = document.querySelector(".bd-article a.reference.internal");
  return {link: getComputedStyle(a).color, vars: [v("--pst-color-link"), v("--pst-color-link-hover")],
    boxes: ["--pst-color-background", "--pst-color-on-background", "--pst-color-surface"]
      .map((n) => [n, v(n)])};
};

/** test_the_long_task_check_catches_a_change_that_blocks: the first lab's state function made
 * to spin `block` ms for d = 64; the lab's id. */
export const blockingState = (block) => {
  const el = document.querySelector(".ab-lab");
  const m = el.abLab.module, state = m.state;
  el.abLab.model.module = Object.assign({}, m, {state: (v, o) => {
    const end = performance.now() + block; let x = 0;
    while (performance.now() < end) { x += 1; }
    return Object.assign(state(v, o), {work: x});
  }});
  return el.id;
};
