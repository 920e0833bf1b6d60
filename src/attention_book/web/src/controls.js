// The lab's controls, one controller object each, made from the control's declaration
// (controls/web.py: name, label, kind, values or range, labels, default, hint, dependent,
// active_when). A controller owns its elements and says what the reader chose:
//   element   the control's whole <span> (label, input, output, hint)
//   input     the element that fires "input" when the reader changes it
//   value     get: the value chosen; set: the input shows it (no event fired)
//   disabled  get/set; a disabled control shows its hint (why it has no effect)
//   show(v)   what a slider shows beside it and says to a screen reader
//   options, offer(options), reoffer(options)   a listed control's choices now
// Element ids: `${id}` the input, `${id}-out`, `${id}-hint`, `${id}-label`, `${id}-list`.

import {make} from "./dom.js";

/** The conditions an `active_when` may hold (scenes/core.py's Condition). */
const OPS = {
  "==": (a, b) => a === b, "!=": (a, b) => a !== b,
  ">": (a, b) => a > b, ">=": (a, b) => a >= b,
  "<": (a, b) => a < b, "<=": (a, b) => a <= b,
};

/**
 * Whether a control has an effect at `values` (its declaration's active_when holds).
 * @param {{active_when?: {name: string, op: string, value: *}}} c the declaration
 * @param {Object<string, *>} values every control's value
 * @returns {boolean}
 */
export function active(c, values) {
  const w = c.active_when;
  return !w || OPS[w.op](values[w.name], w.value);
}

/** What every control has: its declaration, its <span> with the label, and its hint. */
class Control {
  constructor(c, id) {
    this.declaration = c;
    this.id = id;
    this.element = make("span", {class: "ab-lab-control ab-lab-control-" + c.kind});
    this.element.append(c.kind === "multi" ? make("span", {id: id + "-label"}, c.label)
                                           : make("label", {for: id}, c.label));
    this.input = null;
    this.hint = null;
  }

  get name() { return this.declaration.name; }

  get disabled() { return this.input.disabled; }

  set disabled(off) {
    this.input.disabled = off;
    this.inactive(off);
  }

  /** Mark the control as having no effect now: its hint shows, and lab.css folds it away on
   *  a phone (where the four unused sliders of the mask editor took 300 px). */
  inactive(off) {
    if (this.hint) { this.hint.hidden = !off; }
    this.element.classList.toggle("ab-lab-control-inactive", off);
  }

  /** Nothing to show beside most controls. */
  show() {}

  /** Put the input (and what follows it) into the control's <span>, then the hint. */
  finish(...after) {
    this.element.append(this.input, ...after);
    if (this.declaration.hint) {
      this.hint = make("span", {id: this.id + "-hint", class: "ab-lab-hint"}, `(${this.declaration.hint})`);
      this.hint.hidden = true;
      this.element.append(this.hint);
    }
  }
}

/** A slider: <input type=range> and an <output> showing the value's label. Evenly spaced
 *  whole numbers (a declared `range`) are held by the input itself, other values by index. */
export class SliderControl extends Control {
  constructor(c, id) {
    super(c, id);
    this.stepped = !!c.range;
    const [min, max, step] = this.stepped ? c.range : [0, c.values.length - 1, 1];
    const start = this.stepped ? c.default : c.values.indexOf(c.default);
    this.input = make("input", {type: "range", id, name: c.name, min, max, step, value: start});
    // the value beside the slider, for the eye: a screen reader hears it once, as the
    // slider's aria-valuetext (an <output> is a live status, and spoke it a second time)
    this.output = make("output", {id: id + "-out", for: id, "aria-hidden": "true"});
    this.options = null;      // a dependent slider's values now (reoffer); else the declared
    this.wanted = undefined;  // the value the reader chose last
    this.input.addEventListener("input", () => { this.wanted = this.value; });
    this.finish(" ", this.output);
  }

  /** A dependent slider's values ([[label, value], ...]) follow other controls (chapter 8's
   *  n and t, as far as the prompt leaves room): the slider ends at the last, and keeps the
   *  value the reader chose last if offered, else the largest below it, else the first. */
  reoffer(options) {
    if (this.options && sameOptions(this.options, options)) { return; }
    const want = this.wanted === undefined ? this.value : this.wanted;
    this.options = options;
    const values = options.map((o) => o[1]);
    if (this.stepped) {
      this.input.max = String(values[values.length - 1]);
    } else {
      this.declaration = {...this.declaration, values, labels: options.map((o) => o[0])};
      this.input.max = String(values.length - 1);
    }
    const below = values.filter((v) => v <= want);
    const v = values.includes(want) ? want : below.length ? Math.max(...below) : values[0];
    this.input.value = String(this.stepped ? v : values.indexOf(v));
  }

  get value() {
    const k = parseInt(this.input.value, 10);
    return this.stepped ? k : this.declaration.values[k];
  }

  set value(v) {
    this.wanted = v;
    this.input.value = String(this.stepped ? v : this.declaration.values.indexOf(v));
  }

  show(v) {
    const c = this.declaration, shown = c.labels && c.values ? c.labels[c.values.indexOf(v)] : String(v);
    this.output.textContent = shown;
    this.input.setAttribute("aria-valuetext", shown);
  }
}

/** The (label, value) pairs a listed control offers at first: every value it declares. */
const declaredOptions = (c) => c.values.map((v, k) => [c.labels ? c.labels[k] : String(v), v]);

const sameOptions = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** A drop-down (<select>); an option's value is its index in `options`. */
export class ChoiceControl extends Control {
  constructor(c, id) {
    super(c, id);
    this.input = make("select", {id, name: c.name});
    this.options = null;
    this.wanted = undefined;  // the value the reader (or the lab's set) chose last
    this.input.addEventListener("input", () => { this.wanted = this.value; });
    this.offer(declaredOptions(c));
    this.finish();
  }

  get value() {
    const o = this.options[parseInt(this.input.value, 10)];
    return o === undefined ? undefined : o[1];
  }

  set value(v) {
    this.wanted = v;
    this.select(v);
  }

  /** Show value `v` (the first option if it is not offered) without taking it as chosen. */
  select(v) {
    const k = this.options.findIndex((o) => o[1] === v);
    this.input.value = String(k < 0 ? 0 : k);
  }

  /** Offer `options` ([[label, value], ...]), keeping the value if it is among them. */
  offer(options) {
    const keep = this.options ? this.value : this.declaration.default;
    this.options = options;
    this.input.replaceChildren(...options.map((o, k) => make("option", {value: String(k)}, o[0])));
    this.select(keep);
  }

  /** Offer `options` as the live lab re-offers them: the value chosen last is kept if
   *  offered, else the largest value below it, else the first. What the choices pass
   *  through meanwhile is not a choice of the reader's: chapter 9's query, chosen in one
   *  sentence, comes back when the box is cleared and a sentence as long is typed. */
  reoffer(options) {
    if (sameOptions(this.options, options)) { return; }
    const want = this.wanted === undefined ? this.value : this.wanted;
    const values = options.map((o) => o[1]);
    this.offer(options);
    const below = values.filter((v) => typeof v === "number" && v <= want);
    this.select(values.includes(want) ? want : below.length ? Math.max(...below) : values[0]);
  }
}

/** A group of check boxes (role=group): the value is the list of values checked. */
export class MultiControl extends Control {
  constructor(c, id) {
    super(c, id);
    this.input = make("span", {id, role: "group", "aria-labelledby": id + "-label", class: "ab-multi"});
    this.chosen = c.default.slice();
    this.options = null;
    this.offer(declaredOptions(c));
    this.finish();
  }

  get boxes() { return Array.from(this.input.querySelectorAll("input[type=checkbox]")); }

  get value() { return this.boxes.flatMap((b, k) => (b.checked ? [this.options[k][1]] : [])); }

  set value(values) {
    this.chosen = values.slice();
    this.boxes.forEach((b, k) => { b.checked = this.chosen.includes(this.options[k][1]); });
  }

  // a <span> has no `disabled`: aria-disabled on the group, and every box disabled
  get disabled() { return this.input.hasAttribute("aria-disabled"); }

  set disabled(off) {
    if (off) { this.input.setAttribute("aria-disabled", "true"); } else { this.input.removeAttribute("aria-disabled"); }
    for (const b of this.boxes) { b.disabled = off; }
    this.inactive(off);
  }

  /** One labelled check box an option, checked if its value was chosen last. */
  offer(options) {
    this.options = options;
    this.input.replaceChildren(...options.map((o, k) => {
      const box = make("input", {type: "checkbox", id: `${this.id}-${k}`, name: this.name, value: String(k)});
      box.checked = this.chosen.includes(o[1]);
      const label = make("label", {for: box.id, class: "ab-multi-option"});
      label.append(box, " " + o[0]);
      return label;
    }));
  }

  /** New options: every one of them chosen, as the live lab's selection does. */
  reoffer(options) {
    if (sameOptions(this.options, options)) { return; }
    this.offer(options);
    this.value = options.map((o) => o[1]);
  }
}

/** A check box: the value is whether it is checked. */
export class ToggleControl extends Control {
  constructor(c, id) {
    super(c, id);
    this.input = make("input", {type: "checkbox", id, name: c.name});
    this.input.checked = !!c.default;
    this.finish();
  }

  get value() { return this.input.checked; }

  set value(v) { this.input.checked = !!v; }
}

/** A text box that wraps: every word of a long text stays in view, on as many lines as it
 *  needs (chapter 8's 24 symbols on a phone; an <input> showed about 19). One paragraph:
 *  Enter adds no line. The book's sentences are offered in a drop-down beside it (a
 *  <textarea> takes no <datalist>); choosing one puts it in the box. No maxlength: a text
 *  over the lab's limit gets the state module's message, not a silent cut. */
export class TextControl extends Control {
  constructor(c, id) {
    super(c, id);
    this.input = make("textarea", {id, name: c.name, placeholder: c.placeholder || "", rows: "1",
      autocomplete: "off", spellcheck: "false", class: "ab-text"});  // lab.css: as tall as its text
    this.input.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); } });
    const after = [];
    if (c.suggestions && c.suggestions.length) {
      this.suggest = make("select", {id: id + "-list", class: "ab-suggest", "aria-label": "texts the book suggests for " + c.label});
      this.suggest.append(make("option", {value: ""}, "suggested\u2026"),
        ...[c.default, ...c.suggestions].map((t) => make("option", {value: t}, t)));
      // the list shows the text chosen (or "suggested…" for one of the reader's own), so
      // that arrow keys on the closed list step to the next suggestion: reset to
      // "suggested…" after each choice, every ArrowDown chose the first one again
      this.suggest.addEventListener("change", () => {
        if (this.suggest.value) {
          this.input.value = this.suggest.value;
          this.input.dispatchEvent(new Event("input", {bubbles: true}));
        }
      });
      this.input.addEventListener("input", () => this.showSuggested());
      after.push(this.suggest);
    }
    this.input.value = c.default;
    this.finish(...after);
    this.showSuggested();
  }

  /** The suggestion list shows the text in the box if it is one of its own, else "suggested…". */
  showSuggested() {
    if (!this.suggest) { return; }
    const text = this.input.value;
    const at = Array.from(this.suggest.options).findIndex((o, k) => k > 0 && o.value === text);
    this.suggest.selectedIndex = Math.max(0, at);
  }

  get value() { return this.input.value; }

  set value(v) {
    this.input.value = v;
    this.showSuggested();
  }

  get disabled() { return this.input.disabled; }

  set disabled(off) {
    this.input.disabled = off;
    if (this.suggest) { this.suggest.disabled = off; }
    this.inactive(off);
  }
}

const KINDS = {slider: SliderControl, choice: ChoiceControl, multi: MultiControl,
  toggle: ToggleControl, text: TextControl};

/**
 * The controller of a declared control.
 * @param {object} c the control's declaration (controls/web.py)
 * @param {string} id its input's element id
 * @returns {SliderControl|ChoiceControl|MultiControl|ToggleControl|TextControl}
 */
export function makeControl(c, id) {
  const Kind = Object.prototype.hasOwnProperty.call(KINDS, c.kind) ? KINDS[c.kind] : null;
  if (!Kind) { throw new Error(`the browser lab has no ${c.kind} control (${c.name})`); }
  return new Kind(c, id);
}
