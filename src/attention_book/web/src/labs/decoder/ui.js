// Chapter 10's lab (labs/decoder.js): what only this lab has on the page (mountExtra). The
// button that loads SmolLM2's GGUF file from beside the site, with a progress bar; a file
// picker for a GGUF on the reader's disk (a page opened as file:// cannot fetch, and a
// reader may bring their own llama model); a stop button while the model writes; a status
// line; and a click on the model view's strip of a head opens that head.

import {format} from "../../format.js";
import {gallery} from "./gallery.js";
import {loadModel, model, stopRun} from "./runs.js";

const MB = 1e6;
const sizeText = (bytes) => format.fixed(bytes / MB, 1) + " MB";

/** The GGUF's URL: beside this script (the site's _static/ab-web/), read while it runs. */
const scriptSrc = typeof document !== "undefined" && document.currentScript ? document.currentScript.src : null;
export const modelUrl = () => {
  const file = gallery().data.model.file;
  return model.url || (scriptSrc ? scriptSrc.replace(/[^/]*$/, file) : "_static/ab-web/" + file);
};

/** Whether the page came from the reader's disk, where the engine cannot fetch the file. */
const fromDisk = () => typeof location !== "undefined" && location.protocol === "file:";

const modelName = () => gallery().data.model.file.replace(/\.gguf$/i, "");

/** The status line's text now. */
function statusText() {
  const g = gallery().data.model, size = sizeText(g.bytes), c = model.config;
  switch (model.status) {
    case "loading": {
      const [got, total] = model.progress || [0, 0];
      return `Loading ${model.file.name}\u2026 ` + (total ? `${sizeText(got)} of ${sizeText(total)} ` +
        `(${Math.round(100 * got / total)}%)` : sizeText(got));
    }
    case "failed": return model.message;
    case "ready": {
      if (model.current && !model.current.done) {
        const run = model.current, ms = (model.timing.tokens || []).slice(-8);
        const rate = ms.length ? format.fixed(1000 * ms.length / ms.reduce((a, b) => a + b, 0), 1) : null;
        return run.n ? `Writing token ${run.n + 1} of ${run.limit}\u2026` + (rate ? ` (${rate} tokens/s)` : "")
          : `Reading the prompt${run.nPrompt ? ` (${run.nPrompt} tokens)` : ""}\u2026`;
      }
      const types = Object.entries(model.info.types).map(([k, n]) => `${n} ${k}`).join(", ");
      return `${model.file.name} is loaded (${c.nLayers} layers \u00d7 ${c.nHeads} heads over ${c.nKvHeads} ` +
        `key/value heads, d = ${c.d}; ${types} matrices; ready in ` +
        `${format.fixed(((model.timing.read || 0) + (model.timing.ready || 0)) / 1000, 1)} s). Type any prompt: ` +
        "it runs in your browser." + (model.isGallery ? "" : " The induction heads are measured for " +
        `${modelName()} only.`);
    }
    default:
      return fromDisk()
        ? "The suggested prompts are shown from the book's own numbers. This page was opened from your disk, " +
          `where the browser cannot fetch the model: open ${g.file} (${size}, in the book's _static/ab-web ` +
          "folder) with the file picker, or a llama GGUF of your own (Q4_0, Q4_1, Q8_0, F16 or F32)."
        : `The suggested prompts are shown from the book's own numbers. To run any prompt, load ${modelName()} ` +
          `(${size}, once): it then runs in your browser. Or open a llama GGUF of your own (Q4_0, Q4_1, Q8_0, ` +
          "F16 or F32).";
  }
}

/** The model view's strip under a click on the canvas: [layer, head], or null. */
function stripAt(lab, event) {
  const panel = lab.spec && lab.spec.panels[0], hit = panel && panel.kind === "thumbs" && panel.hit;
  if (!hit) { return null; }
  const box = lab.canvas.getBoundingClientRect(), scale = box.width ? lab.width() / box.width : 1;
  const x = (event.clientX - box.left) * scale, y = (event.clientY - box.top) * scale;
  const j = Math.floor((x - hit.x) / hit.step), i = Math.floor((y - hit.y) / hit.stepY);
  if (i < 0 || j < 0 || i >= hit.rows || j >= hit.cols) { return null; }
  return x - hit.x - j * hit.step <= hit.size && y - hit.y - i * hit.stepY <= hit.height ? [i, j] : null;
}

/** The load button, the file picker, the stop button, the progress bar and the status line. */
export function mountExtra(lab, container) {
  const doc = container.ownerDocument, make = (tag, props) => Object.assign(doc.createElement(tag), props);
  const box = make("div", {className: "ab-decoder-model"});
  const load = make("button", {type: "button", className: "ab-load-model",
    textContent: `Load ${modelName()} (${sizeText(gallery().data.model.bytes)})`, hidden: fromDisk()});
  const id = (lab && lab.element && lab.element.id ? lab.element.id : "decoder") + "-gguf";
  const picker = make("input", {type: "file", id, accept: ".gguf", className: "ab-gguf-file"});
  const label = make("label", {htmlFor: id, textContent: fromDisk() ? "Open the model file (.gguf): " :
    "or open a GGUF file: "});
  const stop = make("button", {type: "button", className: "ab-stop", textContent: "Stop writing", hidden: true});
  const bar = make("progress", {className: "ab-model-progress", max: 1, value: 0, hidden: true});
  bar.setAttribute("aria-label", "the model file loaded so far");
  const status = make("p", {className: "ab-model-status"});
  status.setAttribute("role", "status");
  status.setAttribute("aria-live", "polite");
  const show = (what) => {
    status.textContent = statusText();
    const loading = model.status === "loading", writing = !!(model.current && !model.current.done);
    bar.hidden = !loading;
    if (loading && model.progress && model.progress[1]) { bar.value = model.progress[0] / model.progress[1]; }
    load.disabled = loading;
    load.hidden = fromDisk() || (model.status === "ready" && model.isGallery);
    picker.disabled = loading;
    stop.hidden = !writing;
    if (what !== "progress" && lab && typeof lab.update === "function") { lab.update(); }
  };
  model.listeners.push(show);
  load.addEventListener("click", () => { loadModel(modelUrl(), {name: gallery().data.model.file, bytes: gallery().data.model.bytes}); });
  picker.addEventListener("change", () => { if (picker.files && picker.files[0]) { loadModel(picker.files[0]); } });
  stop.addEventListener("click", () => { stopRun(); });
  if (lab && lab.canvas && typeof lab.set === "function") {
    lab.canvas.addEventListener("click", (event) => {
      const at = stripAt(lab, event);
      if (!at) { return; }
      lab.controls.find((c) => c.name === "layer").value = at[0];  // read with the head's: one draw
      lab.set("head", at[1]);
    });
    lab.canvas.addEventListener("mousemove", (event) => { lab.canvas.style.cursor = stripAt(lab, event) ? "pointer" : ""; });
  }
  const files = make("span", {className: "ab-gguf"});
  files.append(label, picker);
  box.append(load, " ", files, " ", stop, bar, status);
  container.appendChild(box);
  status.textContent = statusText();
}
