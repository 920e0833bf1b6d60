// A lab's two downloads, under its figure, each a file that stands alone (a Blob made here:
// no request):
// - the numbers (JSON): the lab's own numbers (its module's numbers(state)), the settings
//   of every control (by label and value), and every array the figure draws, panel by panel
//   under the name drawn on it (figureNumbers);
// - the picture (PNG): a title line and the settings over the figure, always in the light
//   theme (for print and slides, whatever the page's mode), at a fixed width (WIDTH CSS px,
//   2 pixels a CSS px, whatever the screen).
// Both are named after the lab and its settings: embedding_the-weather-is_d8_seed0.json.

import {make} from "./dom.js";
import {drawFigure} from "./figure.js";
import {FONT, wrap} from "./panels/style.js";

const SCALE = 2;
export const WIDTH = 760;  // CSS px: the picture's width (the lab's widest figure)
/** The light theme every picture is drawn in (the book's light mode). */
export const PRINT_THEME = {background: "#ffffff", text: "#222832", muted: "#48566b", border: "#d1d5da",
  dark: false};

/** An array (typed or not, of numbers) as a JSON list, NaN and infinities as null. */
const list = (a) => Array.from(a || [], (v) => (Number.isFinite(v) ? v : null));
/** Labels as a JSON list of strings. */
const list2 = (a) => Array.from(a || [], String);

/** `data` (rows*cols) as rows of lists. */
function nestedRows(data, rows, cols) {
  return Array.from({length: rows}, (_, i) => list(data.subarray ? data.subarray(i * cols, (i + 1) * cols)
    : data.slice(i * cols, (i + 1) * cols)));
}

/** A map's cells as its panel draws them: values, and which are masked. */
function mapNumbers(p, data, masked, rows, cols) {
  const out = {values: nestedRows(data, rows, cols)};
  if (masked) { out.masked = nestedRows(Uint8Array.from(masked, Boolean), rows, cols).map((r) => r.map(Boolean)); }
  return out;
}

/**
 * Every array a figure draws, panel by panel, under the name drawn on it (its title), with
 * its axes' names and labels and its colour scale: the file holds what the picture shows.
 * @param {{panels: object[]}} spec a module's figure(state)
 * @returns {object[]}
 */
export function figureNumbers(spec) {
  return spec.panels.map((p) => {
    const base = {panel: p.title || "", kind: p.kind};
    const axes = {xlabel: p.xlabel || "", ylabel: p.ylabel || "", row_labels: p.rowLabels ? list2(p.rowLabels) : undefined,
      column_labels: p.colLabels ? list2(p.colLabels) : undefined};
    if (p.kind === "heatmap") {
      const scale = p.categories ? {categories: p.categories.map((c) => c.label)}
        : {colour_map: p.cmap, scale: [p.vmin, p.vmax]};
      return {...base, ...axes, ...scale, ...mapNumbers(p, p.data, p.masked, p.rows, p.cols)};
    }
    if (p.kind === "grid") {
      return {...base, ...axes, colour_map: p.cmap, scale: [p.vmin, p.vmax],
        maps: p.maps.map((m) => ({panel: m.title || "", ...mapNumbers(p, m.data, m.masked || p.masked, p.rows, p.cols)}))};
    }
    if (p.kind === "lines") {
      return {...base, xlabel: p.xlabel || "", ylabel: p.ylabel || "",
        x: p.xs ? list(p.xs).slice(0, p.n) : Array.from({length: p.n}, (_, i) => i),
        lines: p.lines.map((l) => ({label: l.label, y: list(l.y)}))};
    }
    if (p.kind === "bars") {
      return {...base, xlabel: p.xlabel || "", labels: list2(p.labels),
        series: p.series.map((s) => ({label: s.label, values: list(s.values)}))};
    }
    if (p.kind === "arcs") {
      return {...base, query: p.query, keys: list2(p.tokens), weights: p.weights ? list(p.weights) : null};
    }
    if (p.kind === "thumbs") {
      const T = p.size, n = p.rows * p.cols, maps = [];
      for (let k = 0; k < n && p.data && p.data.length === n * T * T; k++) {
        maps.push({panel: (p.rowPrefix || "") + Math.floor(k / p.cols) + " " + (p.colPrefix || "") + (k % p.cols),
          values: nestedRows(p.data.subarray(k * T * T, (k + 1) * T * T), T, T)});
      }
      return {...base, colour_map: p.cmap, scale: [p.vmin, p.vmax], maps};
    }
    return base;
  });
}

/** The settings of a lab: each control's label and the value it shows. */
export function settings(lab) {
  return lab.controls.map((c) => {
    const v = lab.values[c.name], o = c.options && c.options.find((x) => x[1] === v);
    return {name: c.name, label: c.declaration.label, value: v, shown: o ? o[0] : String(v), text: c.declaration.kind === "text"};
  });
}

/** The settings in one line of text: "d (dimension) 8 · seed (table) 0 · sentence: …". */
export function settingsText(lab) {
  return settings(lab).map((s) => s.label + (s.text ? ": " : " ") + s.shown).join("  \u00b7  ");
}

/** A file name for the lab in its settings, safe in every file system: the lab, a text's
 *  first words (up to 24 characters), then each other control's name and value: attention_
 *  the-weather-is-lovely_mode-self_query0_dk4_temperature1_seed0.json. */
export function fileName(lab, ext) {
  const slug = (t) => String(t).toLowerCase().replace(/[^a-z0-9.]+/g, "-").replace(/^-+|-+$/g, "");
  const words = (t) => slug(t).split("-").reduce((out, w) => (out.length + w.length < 24 ? (out ? out + "-" : "") + w : out), "");
  const parts = settings(lab).map((s) => {
    if (s.text) { return words(s.value); }
    const name = s.name.toLowerCase().replace(/[^a-z0-9]+/g, ""), v = Array.isArray(s.value) ? s.value.join("-") : s.value;
    return typeof v === "number" ? name + slug(v) : name + "-" + slug(v);
  });
  return [lab.declaration.name, ...parts.filter(Boolean)].join("_").slice(0, 140) + "." + ext;
}

/** The numbers file of a lab: its numbers, its settings and what its figure draws. */
export function numbersFile(lab) {
  return {...lab.module.numbers(lab.state), title: lab.declaration.title, settings: settings(lab),
    figure: figureNumbers(lab.spec)};
}

/**
 * The picture of the figure a lab shows: its title and settings over the figure, in the
 * light theme, WIDTH CSS px wide, at `scale` device pixels a CSS px.
 * @param {object} lab a mounted Lab (its spec, scratch canvas, title, controls)
 * @param {number} [scale]
 * @returns {HTMLCanvasElement}
 */
export function pictureCanvas(lab, scale = SCALE) {
  const figure = document.createElement("canvas");
  drawFigure(figure, lab.spec, WIDTH, PRINT_THEME, lab.scratch, scale);
  const canvas = document.createElement("canvas"), ctx = canvas.getContext("2d");
  ctx.font = "11px " + FONT;
  const lines = wrap(ctx, settingsText(lab), WIDTH - 16);
  const head = 8 + 18 + lines.length * 15 + 8;
  canvas.width = figure.width;
  canvas.height = Math.round(head * scale) + figure.height;
  ctx.setTransform(scale, 0, 0, scale, 0, 0);
  ctx.fillStyle = PRINT_THEME.background;
  ctx.fillRect(0, 0, WIDTH, canvas.height / scale);
  ctx.fillStyle = PRINT_THEME.text;
  ctx.textBaseline = "top";
  ctx.font = "600 13px " + FONT;
  ctx.fillText(lab.declaration.title, 8, 8);
  ctx.font = "11px " + FONT;
  ctx.fillStyle = PRINT_THEME.muted;
  lines.forEach((line, k) => ctx.fillText(line, 8, 8 + 18 + k * 15));
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.drawImage(figure, 0, Math.round(head * scale));
  canvas.setAttribute("data-header-px", String(Math.round(head * scale)));
  return canvas;
}

/** Save `blob` as `name` through a link clicked once (both downloads of a lab). */
export function save(blob, name) {
  const a = make("a", {href: URL.createObjectURL(blob), download: name});
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 0);
}

/** The lab's short name, for its buttons' accessible names: its title before a colon. */
const shortName = (lab) => lab.declaration.title.split(":")[0].trim();

/**
 * The two buttons under the figure (in `box`): the numbers as JSON (when the module has
 * numbers) and the picture as PNG, each named for its lab to a screen reader.
 * @param {object} lab a Lab
 * @param {HTMLElement} box
 * @returns {{numbers: HTMLButtonElement|null, picture: HTMLButtonElement}}
 */
export function addDownloads(lab, box) {
  const button = (cls, text, click) => {
    const b = make("button", {type: "button", class: cls, "aria-label": text + ": " + shortName(lab)}, text);
    b.addEventListener("click", click);
    box.append(b);
    return b;
  };
  const numbers = lab.module.numbers ? button("ab-download", "Download the numbers (JSON)", () => {
    const json = JSON.stringify(numbersFile(lab), null, 1);
    save(new Blob([json], {type: "application/json"}), fileName(lab, "json"));
  }) : null;
  if (numbers) { numbers.disabled = true; }  // until a state is shown
  const picture = button("ab-download-picture", "Download the picture (PNG)", () => {
    if (!lab.spec) { return; }
    pictureCanvas(lab).toBlob((blob) => save(blob, fileName(lab, "png")), "image/png");
  });
  return {numbers, picture};
}
