// The notebook's widget protocol, fast (node --test; tests/test_js.py runs this folder): the
// page's KernelModel over a fake anywidget model, and decode's {$same} arrays. The
// JupyterLab tests exercise the same code end to end, in minutes; these fail in the edit
// loop when a mutant drops {$same} arrays or never marks an answer stale.
import assert from "node:assert/strict";
import {test} from "node:test";

import {Unsent, decode} from "../../src/attention_book/web/src/decode.js";
import {KernelModel} from "../../src/attention_book/web/src/entries/widget.js";

/** anywidget's model as the kernel side drives it: traits, change events, messages. */
class FakeModel {
  constructor(traits) {
    this.traits = {...traits};
    this.handlers = {};
    this.sentValues = [];  // every "values" the page saved, in order
    this.messages = [];    // custom messages the page sent (send({whole: true}))
  }

  get(name) { return this.traits[name]; }

  set(name, value) { this.traits[name] = value; }

  on(event, callback) { (this.handlers[event] = this.handlers[event] || []).push(callback); }

  save_changes() { this.sentValues.push(this.traits.values); }

  send(message) { this.messages.push(message); }

  /** The kernel answers: a new "state" trait, and its change event. */
  answer(state) {
    this.traits.state = state;
    (this.handlers["change:state"] || []).forEach((f) => f());
  }
}

const array = (values) => {
  const data = new Float64Array(values);
  return {$array: "float64", shape: [values.length], buffer: new DataView(data.buffer)};
};

test("decode keeps the array a {$same} refers to, from the state decoded before", () => {
  const first = decode({weights: array([0.25, 0.75]), n: 1});
  assert.deepEqual(Array.from(first.weights), [0.25, 0.75]);
  const second = decode({weights: {$same: true}, n: 2}, first);
  assert.equal(second.weights, first.weights);  // the very array: a panel paints nothing new
  assert.deepEqual(Array.from(second.weights), [0.25, 0.75]);
  const nested = decode({maps: [{$same: true}, array([1])]}, {maps: [first.weights, null]});
  assert.equal(nested.maps[0], first.weights);
  assert.throws(() => decode({weights: {$same: true}}, undefined), Unsent);
});

test("decode reads a typed array from a view that is not aligned", () => {
  const bytes = new Uint8Array(17);
  bytes.set(new Uint8Array(new Float64Array([3.5, -1]).buffer), 1);
  const got = decode({$array: "float64", shape: [2], buffer: new DataView(bytes.buffer, 1, 16)});
  assert.ok(got instanceof Float64Array);
  assert.deepEqual(Array.from(got), [3.5, -1]);
});

test("one request in flight: the latest values wait, the answer they wait behind is stale", () => {
  const model = new FakeModel({values: {d: 8}, state: {values: {d: 8}, state: {d: 8}, n: 1}});
  const kernel = new KernelModel(model);
  const drawn = [];
  kernel.on("change:state", () => drawn.push(kernel.get("state")));
  kernel.set("values", {d: 16});
  kernel.set("values", {d: 32});  // waits
  kernel.set("values", {d: 64});  // replaces it
  assert.deepEqual(model.sentValues, [{d: 16}]);
  model.answer({values: {d: 16}, state: {d: 16}, n: 2});
  assert.equal(drawn.length, 1);
  assert.equal(drawn[0].stale, true);  // drawn, but its values do not move the controls back
  assert.deepEqual(drawn[0].state, {d: 16});
  assert.deepEqual(model.sentValues, [{d: 16}, {d: 64}]);  // {d: 32} never went
  model.answer({values: {d: 64}, state: {d: 64}, n: 3});
  assert.equal(drawn.length, 2);
  assert.equal(drawn[1].stale, undefined);
  assert.deepEqual(model.sentValues, [{d: 16}, {d: 64}]);
});

test("values the kernel answered already are not sent again", async () => {
  const model = new FakeModel({values: {d: 8}, state: {values: {d: 8}, state: {d: 8}, n: 1}});
  const kernel = new KernelModel(model);
  let drawn = 0;
  kernel.on("change:state", () => { drawn += 1; });
  kernel.set("values", {d: 8});
  await new Promise((resolve) => queueMicrotask(resolve));
  assert.deepEqual(model.sentValues, []);
  assert.equal(drawn, 1);  // the lab still draws (its update() waits for an answer)
});

test("an answer's {$same} arrays are the last state's; a view without them asks for all", () => {
  const model = new FakeModel({values: {k: 0}, state: {values: {k: 0}, state: {pe: array([1, 2])}, n: 1}});
  const kernel = new KernelModel(model);
  const before = kernel.get("state").state.pe;
  kernel.set("values", {k: 1});
  model.answer({values: {k: 1}, state: {pe: {$same: true}, k: 1}, n: 2});
  assert.equal(kernel.get("state").state.pe, before);
  // a second view of the same model shares the decoded answer
  assert.equal(new KernelModel(model).get("state").state.pe, before);
  // a model whose first answer refers to arrays this page never had asks for the whole state
  const fresh = new FakeModel({values: {k: 2}, state: {values: {k: 2}, state: {pe: {$same: true}}, n: 5}});
  const view = new KernelModel(fresh);
  assert.deepEqual(fresh.messages, [{whole: true}]);
  assert.deepEqual(view.get("state"), {values: {k: 2}});  // nothing to draw until it comes
});
