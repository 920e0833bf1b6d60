// The entry of web/widget.mjs, the live lab of a notebook: an anywidget module,
// `render({model, el})`, over the same front end as the book's pages (lab.js, controls,
// figure, panels) and the same presentation code (each state module's figure, readoutHtml,
// alt, numbers, choices). The kernel (attention_book/controls/widget.py) runs
// the scene's Python state function and answers each "values" with a "state":
// {values, state, choices, n} or {values, error, choices, n}, the state as
// scenes.core.to_js writes it (arrays as binary buffers {$array: dtype, shape, buffer}).
// tests/test_web_twins.py checks that state equal to the module's own, key by key, so the
// notebook draws what the book draws. Bundled by web/build.mjs as an ES module.

import {Lab, skeleton} from "../lab.js";
import {Unsent, decode} from "../decode.js";
import {make} from "../dom.js";

// Per kernel model (shared by its views): the answer decoded last and the state decoded
// last, which a new answer's {$same} arrays refer to.
const decoded = new WeakMap();

/** The kernel model's answer, decoded once for all its views; null while the whole state,
 *  asked for when an array it did not send again is missing here, is on its way. */
function answerOf(model) {
  const raw = model.get("state"), seen = decoded.get(model) || {};
  if (seen.raw === raw) { return seen.answer; }
  let answer;
  try {
    answer = decode(raw, {state: seen.state});
  } catch (err) {
    if (!(err instanceof Unsent)) { throw err; }
    model.send({whole: true});  // controls/widget.py sends the whole state
    return null;
  }
  decoded.set(model, {raw, answer, state: answer.state === undefined ? seen.state : answer.state});
  return answer;
}

/** anywidget's model as the Lab's: one request in flight; while it is, the latest values
 *  wait (older ones are dropped), and an answer that newer values wait behind is "stale"
 *  (drawn, but its values are not put back on the controls). */
export class KernelModel {
  constructor(model) {
    this.model = model;
    this.inFlight = false;
    this.next = null;
    this.listeners = [];
    this.answer = answerOf(model) || {values: model.get("values")};
    model.on("change:state", () => {
      const answer = answerOf(model);
      if (answer === null) { return; }  // the whole state follows
      this.answer = {...answer};  // this view's: it may be marked stale
      this.inFlight = false;
      if (this.next !== null) {
        this.answer.stale = true;
        const values = this.next;
        this.next = null;
        this.send(values);
      }
      this.listeners.forEach((f) => f());
    });
  }

  get(name) { return name === "state" ? this.answer : this.model.get(name); }

  on(event, callback) {
    if (event === "change:state") { this.listeners.push(callback); } else { this.model.on(event, callback); }
  }

  set(name, value) {
    if (name !== "values") { this.model.set(name, value); } else if (this.inFlight) { this.next = value; } else { this.send(value); }
  }

  save_changes() {}  // send() saves

  send(values) {
    if (JSON.stringify(values) === JSON.stringify(this.answer.values)) {  // no change for the kernel
      queueMicrotask(() => this.listeners.forEach((f) => f()));
      return;
    }
    this.inFlight = true;
    this.model.set("values", values);
    this.model.save_changes();
  }
}

let count = 0;

/** anywidget's module over the labs' modules ({name: module}, build.mjs's generated entry):
 *  its render draws the lab's element (as controls/web.py writes it for the book), then the
 *  Lab over the kernel's model. */
export const widget = (modules) => ({render: ({model, el}) => render(modules, model, el)});

function render(modules, model, el) {
  const declaration = model.get("declaration");
  const module = modules[declaration.module];
  const id = `ab-widget-${++count}-${declaration.name}`;
  const lab = skeleton(make("div", {class: "ab-lab ab-lab-live", id, "data-ab-widget": declaration.name}),
    declaration);
  // JupyterLab's document handler takes the arrow keys from a range input: keep them here.
  lab.addEventListener("keydown", (event) => event.stopPropagation());
  // Notebook 7's handles them before the lab does (in the capture phase) and runs its
  // command-mode shortcuts on a focused slider, check box or drop-down (ArrowRight: the next
  // heading); its shortcut registry (Lumino's) skips a target with this attribute.
  // The focus moving in the lab stays the lab's: the notebook marks its root (jp-mod-readWrite)
  // while a text box inside it has the focus, to keep its shortcuts off the box (the two
  // lines here do that for the lab), and that class restyled the whole notebook each time the
  // focus entered or left a text box: 230-600 ms of style recalculation at load 6-10 (chapter
  // 6; 2 ms with this), in the frame of the change that followed (benchmarks/README.md).
  lab.addEventListener("focusin", (event) => {
    event.target.setAttribute("data-lm-suppress-shortcuts", "");
    event.stopPropagation();
  });
  lab.addEventListener("focusout", (event) => event.stopPropagation());
  el.append(lab);
  const kernel = new KernelModel(model);
  const shown = new Lab(lab, declaration, module, kernel, false);  // no data scripts, no mountExtra
  const unobserve = shown.observeLooks();
  lab.abLab = shown;
  const first = kernel.get("state");
  if ("state" in first || "error" in first) { shown.answered(first); }  // else it follows
  // anywidget's cleanup, when the view goes: the model's listeners it removes itself
  return () => { unobserve(); lab.remove(); };
}

