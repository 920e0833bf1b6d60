// A lab's state as Python sends it (scenes.core.to_js: arrays as {$array: dtype, shape,
// buffer}) -> as the labs' modules hold it (typed arrays). The notebook's widget
// (entries/widget.js) decodes the kernel's answers with it, present.cjs the build's states.

const TYPED = {float64: Float64Array, float32: Float32Array, int32: Int32Array, uint8: Uint8Array};

/** Thrown for an array the kernel did not send again that this page does not have. */
export class Unsent extends Error {}

/** to_js's value as the modules hold it: {$array, shape, buffer} -> a typed array;
 *  {$same: true} -> the array at the same place of `before` (the state decoded last). */
export function decode(x, before) {
  const at = (k) => (before !== null && typeof before === "object" ? before[k] : undefined);
  if (Array.isArray(x)) { return x.map((v, i) => decode(v, at(i))); }
  if (x === null || typeof x !== "object") { return x; }
  if (x.$same) {
    if (before === undefined) { throw new Unsent(); }
    return before;  // the same array: a panel that kept its painting of it paints nothing
  }
  if (x.$array) {
    const view = x.buffer;  // a DataView (anywidget) or an ArrayBuffer view
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength).slice();  // aligned
    return new TYPED[x.$array](bytes.buffer);
  }
  return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, decode(v, at(k))]));
}
