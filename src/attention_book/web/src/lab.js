// A lab on a page: the element `.ab-lab[data-ab-lab]` holding its declaration as JSON
// (`script.ab-lab-data`, written by attention_book/controls/web.py from the scene's
// controls). mount() renders the controls it declares, presents the lab's states with its
// module (AttentionBook[<module>], e.g. positional.js: readoutHtml(state), alt(state),
// figure(state), and optionally numbers, choices, mountExtra) and draws the figure's panels
// on one <canvas>, role="img" with the scene's alt text for the state shown.
//
// The states come from a model with anywidget's interface (get, set, on): the Lab sets
// "values" and draws each "state" the model answers, {values, state} or {values, error}.
// In the book it is a LocalModel, which computes with the module's own state(values); in a
// notebook, anywidget's model, whose kernel runs the scene's Python state function
// (controls/widget.py, entries/widget.js). Either way the very same code presents it.
//
// A change of a control computes and draws at once, in its input event, so the next frame
// painted shows it; each draw dispatches "ab-lab-drawn" on the lab element with its times.
//
// The one public handle to a mounted lab is `element.abLab`, the Lab object (the tests and
// benchmarks drive labs through it: lab.set(name, value), lab.values, lab.state,
// lab.controls[i].options, lab.controls[i].disabled).

import {active, makeControl} from "./controls.js";
import {make} from "./dom.js";
import {addDownloads} from "./download.js";
import {drawFigure} from "./figure.js";
import {wrapReadout} from "./shared/html.js";
import {theme} from "./theme.js";

const DEFAULT_WIDTH = 600;  // CSS px, for a lab whose column has no width yet
const SPEAK_MS = 700;       // ms of quiet after a change before its summary is spoken
const MIN_WIDTH = 200;
const MAX_WIDTH = 760;

/** The model of a lab in the book: "values" set -> the module's state(values) as "state".
 *  A state may come as a Promise (chapter 9's model runs in a Worker): an answer that a
 *  newer set made stale is dropped. */
export class LocalModel {
  /** @param {object} module the lab's state module */
  constructor(module) {
    this.module = module;
    this.data = {};
    this.listeners = [];
    this.ticket = 0;  // the latest values: an answer to older ones is dropped
  }

  get(name) { return this.data[name]; }

  /** Only "change:state" is ever announced. */
  on(event, callback) { if (event === "change:state") { this.listeners.push(callback); } }

  set(name, value) {
    this.data[name] = value;
    if (name === "values") { this.compute(value); }
  }

  save_changes() {}  // nothing to send: the page is the model

  compute(values) {
    const ticket = ++this.ticket;
    const answer = (a) => { if (ticket === this.ticket) { this.data.state = a; this.listeners.forEach((f) => f()); } };
    const failed = (err) => answer({values, error: String((err && err.message) || err)});
    let st;
    try {
      st = this.module.state(values, {steps: true});  // a module may answer in steps (a Promise)
    } catch (err) {
      failed(err);
      return;
    }
    if (st && typeof st.then === "function") {
      st.then((done) => answer({values, state: done}), failed);
    } else {
      answer({values, state: st});
    }
  }
}

/** A mounted lab: its controls, its canvas, the state shown and how to change it. */
export class Lab {
  /**
   * @param {HTMLElement} el the lab's element
   * @param {object} declaration its declaration (controls/web.py)
   * @param {object} module its state module (what presents a state)
   * @param {{get, set, on, save_changes}} [model] where states come from (a LocalModel of
   *   the module unless given)
   * @param {boolean} [extra] whether to mount the module's own UI (mountExtra)
   */
  constructor(el, declaration, module, model = new LocalModel(module), extra = true) {
    this.element = el;
    this.declaration = declaration;
    this.module = module;
    this.model = model;
    // a dependent control's choices as the model last sent them (a kernel does)
    this.choices = Object.assign({}, (model.get("state") || {}).choices);
    this.waiting = [];  // what update() promised: resolved by the next answer
    this.input = 0;     // performance.now() of the last change
    this.caption = el.querySelector(".ab-lab-readout");
    this.figure = el.querySelector(".ab-lab-figure");
    this.controls = declaration.controls.map((c, i) => makeControl(c, `${el.id}-c${i}`));
    el.querySelector(".ab-lab-inputs").append(...this.controls.map((c) => c.element));
    this.canvas = make("canvas", {role: "img", class: "ab-lab-canvas"});  // lab.css: a block
    this.figure.replaceChildren(this.canvas);  // the no-script text goes; the canvas draws the state
    this.scratch = document.createElement("canvas");
    this.state = null;
    this.spec = null;
    this.draws = 0;
    this.answers = 0;
    this.requested = null;  // the values of the last update(), as JSON
    // The column's width and the theme's colours, read when they change (a resize, the mode
    // switch) and kept: reading them at every draw forced the page's layout and style to be
    // recomputed after each readout change (benchmarks/browser_lab.py).
    this.looks = {width: null, theme: null};
    const downloads = addDownloads(this, el.querySelector(".ab-lab-downloads"));
    this.download = downloads.numbers;
    this.pictureDownload = downloads.picture;
    this.status = el.querySelector(".ab-lab-status");
    this.announce = null;  // the timer of the next summary spoken
    if (extra && module.mountExtra) {  // what only this lab needs (chapter 9: loading the model)
      // under the figure, which says when it waits for it: above, its button and paragraph
      // put 190 px more between a phone's controls and the figure
      const box = make("div", {class: "ab-lab-extra"});
      this.figure.after(box);
      module.mountExtra(this, box);
    }
    for (const control of this.controls) {
      // every control fires "input" (a drop-down and a check box too): one draw a change
      control.input.addEventListener("input", () => this.changed(control));
    }
    this.lastChanged = null;  // the control the reader moved last (the summary names it)
    this.values = this.read();
    model.on("change:state", () => this.answered(model.get("state")));
  }

  /** The controls' values now; a dependent control is first offered the choices that
   *  follow the controls before it (the state module's choices(name, values)). */
  read() {
    const values = {};
    this.controls.forEach((control) => {
      if (control.declaration.dependent) {
        const options = this.offered(control.name, values);
        if (options) { control.reoffer(options); }
      }
      values[control.name] = control.value;
    });
    return values;
  }

  /** The choices of dependent control `name` at `values`: the module's, or where it cannot
   *  tell (its data is not loaded: a notebook) those the model sent last. */
  offered(name, values) {
    if (!this.module.choices) { return this.choices[name] || null; }
    try {
      return this.module.choices(name, values);
    } catch (err) {
      if (this.choices[name]) { return this.choices[name]; }
      throw err;
    }
  }

  /** Show `values` on the controls (no event): the model's values, set elsewhere. */
  apply(values) {
    this.controls.forEach((control) => {
      if (control.declaration.dependent && this.choices[control.name]) { control.reoffer(this.choices[control.name]); }
      // a value the control already shows is no new choice (the kernel's echo of a clamped
      // query must not replace the query the reader chose)
      if (control.name in values && values[control.name] !== control.value) {
        control.value = values[control.name];
      }
    });
    this.values = this.read();
    this.controls.forEach((control) => {
      control.disabled = !active(control.declaration, this.values);
      control.show(this.values[control.name]);
    });
  }

  /** The figure's width in CSS px: its column's, within bounds. */
  width() {
    if (this.looks.width === null) {
      this.looks.width = this.figure.clientWidth || this.element.clientWidth || DEFAULT_WIDTH;
    }
    return Math.max(MIN_WIDTH, Math.min(MAX_WIDTH, Math.floor(this.looks.width)));
  }

  /** Draw the figure of the state shown again (a new width or theme). */
  redraw() {
    if (this.looks.theme === null) { this.looks.theme = theme(this.element); }
    if (this.spec) { drawFigure(this.canvas, this.spec, this.width(), this.looks.theme, this.scratch); }
  }

  /** A clear message in the readout; the last good picture stays. */
  showError(err) {
    this.caption.innerHTML = wrapReadout("", [{level: "error", text: String((err && err.message) || err)}]);
  }

  /** Show state `st` of `values`: figure, alt text, readout. */
  show(st, values) {
    const {module} = this;
    this.state = st;
    this.values = values;
    this.spec = module.figure(st);
    this.redraw();
    this.canvas.setAttribute("aria-label", module.alt(st));
    // every reader-typed text escaped (tests/test_web_states.py types markup)
    this.caption.innerHTML = module.readoutHtml(st);
    if (this.download) { this.download.disabled = false; }
    this.speak();
  }

  /** A screen reader hears one line once the reader pauses (SPEAK_MS): the control moved,
   *  its value and the figure's first title ("d (dimension) 16: X : (s, d) = (5, 16)"), not
   *  the whole readout at every step of a slider (up to 1,436 characters, QA Q19). */
  speak() {
    if (!this.status || !this.lastChanged) { return; }
    clearTimeout(this.announce);
    this.announce = setTimeout(() => {
      const c = this.lastChanged, v = this.values[c.name], o = c.options && c.options.find((x) => x[1] === v);
      const shown = typeof v === "string" ? "" : " " + (o ? o[0] : String(v));
      const first = this.spec && this.spec.panels.length ? this.spec.panels[0].title || "" : "";
      this.status.textContent = c.declaration.label + shown + (first ? ": " + first : "");
    }, SPEAK_MS);
  }

  /**
   * Ask the model for the state of the controls' values and draw it when it answers. A
   * LocalModel of a plain module answers at once: then it is drawn before this returns
   * null; otherwise (a Worker, a kernel) this returns a Promise of the next answer.
   * @returns {Promise|null}
   */
  update() {
    const values = this.read();
    this.controls.forEach((control) => {
      control.disabled = !active(control.declaration, values);
      control.show(values[control.name]);
    });
    const answers = this.answers;
    this.requested = JSON.stringify(values);
    this.model.set("values", values);
    this.model.save_changes();
    return this.answers !== answers ? null : new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The model answered: draw its state (or say why there is none). */
  answered(answer) {
    this.answers += 1;
    if (answer.choices && !answer.stale) {  // a kernel's: the values it computed, its choices
      Object.assign(this.choices, answer.choices);
      const values = JSON.stringify(answer.values);
      if (values !== this.requested) {  // set elsewhere (in Python): the controls show them
        this.requested = values;
        this.apply(answer.values);
      } else if (JSON.stringify(this.read()) !== values) {  // new choices moved a control
        this.update();
      }
    }
    if (answer.error !== undefined) {
      this.showError(answer.error);
    } else {
      this.show(answer.state, answer.values);
    }
    const waiting = this.waiting;
    this.waiting = [];
    waiting.forEach((resolve) => resolve());
    this.draws += 1;
    // times (performance.now()): the last input event and the draw's end
    this.element.dispatchEvent(new CustomEvent("ab-lab-drawn", {detail: {input: this.input, drawn: performance.now()}}));
  }

  /**
   * Set control `name` to `value` as a reader would: the input shows it, then "input" fires.
   * @param {string} name
   * @param {*} value
   */
  set(name, value) {
    const control = this.controls.find((c) => c.name === name);
    if (!control) { throw new Error("no control " + name); }
    this.read();  // dependent choices offered for the values now
    control.value = value;
    control.input.dispatchEvent(new Event("input", {bubbles: true}));
  }

  /** A control changed: compute and draw now, inside the input event, so that the frame the
   *  browser paints next shows it (waiting for an animation frame added half a frame on
   *  average: benchmarks/browser_lab.py). */
  changed(control) {
    this.input = performance.now();
    this.lastChanged = control || null;
    this.update();
  }

  /** Redraw when the column's width or the theme's mode changes: they change the drawing,
   *  not the state. The frame's height, which each drawing sets, changes neither
   *  (redrawing on it drew twice). Returns what stops it: a notebook's lab removed from
   *  the page (its cell run again) would otherwise still redraw at each change of theme. */
  observeLooks() {
    let pending = null, sizes = null;
    if (globalThis.ResizeObserver) {
      sizes = new ResizeObserver((entries) => {
        const w = Math.round(entries[entries.length - 1].contentRect.width);
        if (pending === null && w !== Math.round(this.looks.width)) {
          pending = requestAnimationFrame(() => {
            pending = null;
            this.looks.width = null;
            this.redraw();
          });
        }
      });
      sizes.observe(this.figure);
    }
    const modes = new MutationObserver(() => {
      this.looks.theme = null;
      this.redraw();
    });
    modes.observe(document.documentElement, {attributes: true, attributeFilter: ["data-theme", "data-mode"]});
    // JupyterLab's theme: on its <body>
    modes.observe(document.body, {attributes: true, attributeFilter: ["data-jp-theme-light", "data-jp-theme-name"]});
    return () => {
      if (sizes) { sizes.disconnect(); }
      modes.disconnect();
      if (pending !== null) { cancelAnimationFrame(pending); }
    };
  }
}

/**
 * A lab's skeleton, built once here for both places (the page's element holds only its
 * declaration and, for readers without JavaScript, a <noscript>): title, note, the controls'
 * box, the figure and the readout, appended to `el`, whose id names its parts.
 * @param {HTMLElement} el the lab's element (`.ab-lab`, with an id)
 * @param {object} declaration its declaration (controls/web.py): title, and a note in the book
 * @returns {HTMLElement} el
 */
export function skeleton(el, declaration) {
  const controls = make("div", {class: "ab-lab-controls", id: `${el.id}-controls`});
  controls.append(make("div", {class: "ab-lab-inputs"}));
  // the downloads under the figure (above it, they took 92 px between a phone's controls and
  // its figure); the readout is not live (every slider step re-read it whole): a one-line
  // summary is, in a status line only screen readers hear (Lab.speak)
  el.append(make("div", {class: "ab-lab-title"}, declaration.title),
    ...(declaration.note ? [make("div", {class: "ab-lab-note"}, declaration.note)] : []),
    controls, make("div", {class: "ab-lab-figure"}), make("div", {class: "ab-lab-downloads"}),
    make("div", {class: "ab-lab-readout", id: `${el.id}-caption`}),
    make("div", {class: "ab-lab-status", role: "status", "aria-live": "polite"}));
  return el;
}

/**
 * Mount the lab of element `el` once: its skeleton, controls, canvas and first drawing. Its
 * state module must have loaded (else the readout says so and this returns null; a later
 * call mounts it).
 * @param {HTMLElement} el `.ab-lab[data-ab-lab]`
 * @returns {Lab|null} also `el.abLab`
 */
export function mount(el) {
  if (el.abLab) { return el.abLab; }  // mounted already
  const declaration = JSON.parse(el.querySelector("script.ab-lab-data").textContent);
  if (!el.querySelector(".ab-lab-controls")) {
    skeleton(el, declaration).querySelector(".ab-lab-controls").hidden = true;
  }
  const book = globalThis.AttentionBook;
  const module = book && book[declaration.module];
  if (!module) {
    el.querySelector(".ab-lab-readout").textContent = `This lab's script (${declaration.module}.js) did not load.`;
    return null;
  }
  const lab = new Lab(el, declaration, module);
  lab.observeLooks();
  el.querySelector(".ab-lab-controls").hidden = false;
  el.abLab = lab;
  lab.update();
  return lab;
}

/** Mount every lab once the page's scripts have run: the state modules load after the
 *  front end (deferred scripts run in order, then DOMContentLoaded fires). Each lab in a
 *  task of its own: mounted in DOMContentLoaded's, chapter 3's two labs were computed and
 *  drawn in the task that also ran the theme's deferred scripts (a chromium trace: 163 ms of
 *  CPU, 50 of them the labs'), and the page could not answer the reader meanwhile. */
export function start() {
  const all = () => document.querySelectorAll(".ab-lab[data-ab-lab]").forEach((el) => {
    setTimeout(() => mount(el), 0);
  });
  if (document.readyState === "complete") {
    all();
  } else {
    document.addEventListener("DOMContentLoaded", all);
    globalThis.addEventListener("load", all);  // mount is idempotent: a late module still mounts
  }
}
