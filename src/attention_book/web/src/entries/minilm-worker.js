// The entry of the Web Worker that runs chapter 9's model (labs/pretrained.js starts it):
// minilm.js's forward pass and a message loop. build.mjs bundles it first and writes its
// text into the pretrained bundle (__MINILM_WORKER__), which starts it from a Blob URL.

import {Model} from "../shared/minilm.js";

/** The message loop: "weights" -> "ready", "run" -> "result" (or "error"). */
function workerMain() {
  let model = null;
  self.onmessage = (event) => {
    const m = event.data, t = performance.now();
    try {
      if (m.kind === "weights") {
        model = new Model(m.weights).prepare();
        self.postMessage({kind: "ready", ms: performance.now() - t, dtype: model.dtype});
      } else if (m.kind === "run") {
        const run = model.forward(m.ids);  // attention: (L, h, T, T), valueNorms: (L, h, T)
        self.postMessage({kind: "result", id: m.id, T: run.T, maps: run.attention, valueNorms: run.valueNorms,
          ms: performance.now() - t}, [run.attention.buffer, run.valueNorms.buffer]);
      }
    } catch (err) {
      self.postMessage({kind: "error", id: m.id, message: String(err && err.message || err)});
    }
  };
}

workerMain();
