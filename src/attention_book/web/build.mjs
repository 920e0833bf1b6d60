// Bundles the browser front end's ES modules (web/src/) with esbuild (pinned in
// package.json) into
//   web/lab.js      the classic script the book's pages load first: the front end and the
//                   code the labs share (COMMON: the tokenizer, vocabulary, messages,
//                   readout HTML, matrix helpers, rng.js, format.js), installed as
//                   globalThis.AttentionBook.common. Classic, not a module: a page opened as file:// gets an opaque origin, and chromium
//                   refuses module scripts there (so no ES-module chunks either);
//   web/<lab>.js    one classic script per lab: its state module (src/labs/<lab>.js) with
//                   what it imports, except COMMON, which it reads from AttentionBook.common
//                   (the plugin `fromLabJs`), installed as globalThis.AttentionBook.<lab>; a
//                   page loads lab.js, then one of these per lab (controls/web.py), so a page
//                   with two labs loads the shared code once;
//   web/widget.mjs  the notebook's live lab, an ES module for anywidget
//                   (controls/widget.py), with every lab's state module.
// Chapter 9's Worker (src/entries/minilm-worker.js) is bundled first and its text written
// into the bundles that hold labs/pretrained.js (__MINILM_WORKER__), which start it from a
// Blob URL: a page opened as file:// cannot start a worker from a script's URL.
// Chapter 10's model (src/llama/) the same way: its kernels compiled by AssemblyScript into
// src/llama/wasm-bytes.js (generated, not committed; compiled again only when kernels.ts
// or the compiler changes: src/llama/build.mjs), its worker bundled and written into the
// page's bundles that start it (__LLAMA_WORKER__; the notebook's widget.mjs never starts
// it, so there it is null and left out).
// The bundles are package data built by `make js`, not committed (.gitignore);
// tests/test_web_bundle.py rebuilds them and fails when one is stale.
//
//   node src/attention_book/web/build.mjs [OUTDIR]    (make js; OUTDIR defaults to web/)
//
// A file is rewritten only when its text changes, so an unchanged bundle keeps its mtime.

import {mkdirSync, readFileSync, readdirSync, writeFileSync} from "node:fs";
import path from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

import * as esbuild from "esbuild";

import {bundleWorker as bundleLlamaWorker, writeKernels} from "./src/llama/build.mjs";

const WEB = path.dirname(fileURLToPath(import.meta.url));

// Node's require() of the classic script gets the API the entry installed.
const FOOTER = 'if (typeof module === "object" && module.exports) { module.exports = globalThis.AttentionBook.lab; }';

/** The labs: every module src/labs/<lab>.js (a lab's helpers live in src/labs/<lab>/), each
 *  bundled into web/<lab>.js and into the widget. Nothing else lists them: labs.json (below)
 *  tells Python and the tests which there are, what each page loads and what data they read. */
export const LABS = readdirSync(path.join(WEB, "src", "labs"))
  .filter((name) => name.endsWith(".js")).map((name) => name.slice(0, -3)).sort();

/** An entry that installs a module's default export (a lab's: where the front end, src/lab.js,
 *  looks for it), or with `namespace` its named exports, as globalThis.AttentionBook[name]. */
const installEntry = (file, name, namespace = false) => [
  namespace ? `import * as api from "./${file}";` : `import api from "./${file}";`,
  "const book = globalThis.AttentionBook || (globalThis.AttentionBook = {});",
  `book[${JSON.stringify(name)}] = api;`,
].join("\n");

/**
 * A classic script of one source module (a path under web/src/), installed as
 * AttentionBook[name]: what the tests load into a page or a bare global (e.g. shared/rng.js).
 * @param {string} file @param {string} name @returns {Promise<string>}
 */
export const classicScript = (file, name) => bundle(
  {entry: `src/${file}`, stdin: installEntry(file, name, true), format: "iife", footer: "", what: ""});

/** The modules (under web/src/) the labs share: web/lab.js carries them, once a page, as
 *  AttentionBook.common[<module>] (the module's namespace); the labs' bundles read them there. */
export const COMMON = ["format.js", "shared/vocab.js", "shared/tokens.js", "shared/messages.js", "shared/html.js",
  "shared/matrices.js", "shared/rng.js"];

/** lab.js's entry: the front end (entries/lab.js), then COMMON installed for the labs. */
const labEntry = [
  'import "./entries/lab.js";',
  ...COMMON.map((file, i) => `import * as m${i} from "./${file}";`),
  `globalThis.AttentionBook.common = {${COMMON.map((file, i) => `${JSON.stringify(file)}: m${i}`).join(", ")}};`,
].join("\n");

/**
 * The esbuild plugin of lab `lab`'s bundle: an import of a COMMON module becomes a module that
 * reads it from AttentionBook.common, which web/lab.js installed (a clear error if lab.js
 * did not load first); its named exports are the source module's own, read here in Node.
 * An import of another lab's module (generation.js imports training.js) reads the default
 * export its bundle installed, so a page with both labs loads that module once
 * (controls/web.py loads that bundle first).
 * @param {string} lab
 */
const fromLabJs = (lab) => ({
  name: "from-lab-js",
  setup(esb) {
    const SRC = path.join(WEB, "src");
    esb.onResolve({filter: /^\.\.?\//}, (args) => {
      const file = path.relative(SRC, path.resolve(args.resolveDir, args.path)).split(path.sep).join("/");
      const other = /^labs\/(\w+)\.js$/.exec(file);
      if (other && other[1] !== lab && LABS.includes(other[1])) { return {path: other[1], namespace: "other-lab"}; }
      return COMMON.includes(file) ? {path: file, namespace: "lab-js"} : undefined;
    });
    esb.onLoad({filter: /.*/, namespace: "other-lab"}, (args) => ({loader: "js", contents: [
      `const m = (globalThis.AttentionBook || {})[${JSON.stringify(args.path)}];`,
      `if (!m) { throw new Error("web/${args.path}.js must load before web/${lab}.js"); }`,
      "export default m;",
    ].join("\n")}));
    esb.onLoad({filter: /.*/, namespace: "lab-js"}, async (args) => {
      const names = Object.keys(await import(pathToFileURL(path.join(SRC, args.path)).href));
      const named = names.filter((name) => name !== "default"), key = JSON.stringify(args.path);
      return {loader: "js", contents: [
        `const m = (globalThis.AttentionBook && globalThis.AttentionBook.common || {})[${key}];`,
        `if (!m) { throw new Error("web/lab.js must load before a lab's script: it holds " + ${key}); }`,
        ...(names.includes("default") ? ["export default m.default;"] : []),
        ...(named.length ? [`export const {${named.join(", ")}} = m;`] : []),
      ].join("\n")};
    });
  },
});

/** widget.mjs's entry: the front end's anywidget (entries/widget.js) over every lab's module. */
const widgetEntry = [
  'import {widget} from "./entries/widget.js";',
  ...LABS.map((lab, i) => `import m${i} from "./labs/${lab}.js";`),
  'export {decode} from "./decode.js";',
  'export {KernelModel} from "./entries/widget.js";',
  `export const labs = ${JSON.stringify(LABS)};`,
  `export default widget({${LABS.map((lab, i) => `${JSON.stringify(lab)}: m${i}`).join(", ")}});`,
].join("\n");

/** The bundles: an entry under web/src/ -> a file in web/, an IIFE or an ES module. */
const BUNDLES = [
  {entry: "src/entries/lab.js", stdin: labEntry, out: "lab.js", format: "iife", footer: FOOTER,
    what: "A classic script (an IIFE), not a module: pages opened as file:// refuse module scripts."},
  {entry: "src/entries/widget.js", stdin: widgetEntry, out: "widget.mjs", format: "esm", footer: "",
    what: "An ES module: anywidget's render({model, el}) for the notebook's live lab."},
  ...LABS.map((lab) => ({
    entry: `src/labs/${lab}.js`, stdin: installEntry(`labs/${lab}.js`, lab), out: `${lab}.js`, format: "iife",
    plugins: [fromLabJs(lab)],
    footer: "if (typeof module === \"object\" && module.exports) { module.exports = " +
      `globalThis.AttentionBook[${JSON.stringify(lab)}]; }`,
    what: "A classic script (an IIFE): one lab's state module, as AttentionBook." + lab +
          ", after web/lab.js (" + COMMON.join(", ") + ")."})),
];

/** The Worker's program, bundled on its own: its text goes into the pretrained lab's bundles. */
const WORKER = {entry: "src/entries/minilm-worker.js", format: "iife", footer: "",
  what: "The Web Worker of chapter 9's model."};

const banner = (entry, what) => [
  `// GENERATED by src/attention_book/web/build.mjs (esbuild ${esbuild.version}) from`,
  `// src/attention_book/web/${entry} and the modules it imports: do not edit; edit`,
  `// web/src/ and run \`make js\`. ${what}`,
  '"use strict";',
].join("\n");

/**
 * The text of one bundle.
 * @param {{entry: string, stdin?: string, format: string, footer: string, what: string,
 *          plugins?: object[]}} spec
 *   its entry (relative to web/; or the entry's text `stdin`, resolved in web/src/), format,
 *   footer, what it is and esbuild plugins
 * @param {{minilm: string, llama: string}|null} workers the Workers' bundled texts, for
 *   __MINILM_WORKER__ and (in a classic script) __LLAMA_WORKER__
 * @returns {Promise<{text: string, inputs: string[]}>} the bundle and the source files in it
 */
async function build({entry, stdin, format, footer, what, plugins = []}, workers = null) {
  const result = await esbuild.build({
    absWorkingDir: WEB,  // the bundle's path comments are relative to web/, wherever make runs
    ...(stdin ? {stdin: {contents: stdin, resolveDir: path.join(WEB, "src"), sourcefile: entry}}
              : {entryPoints: [entry]}),
    define: workers === null ? {} : {__MINILM_WORKER__: JSON.stringify(workers.minilm),
      __LLAMA_WORKER__: format === "iife" ? JSON.stringify(workers.llama) : "null"},
    bundle: true,
    format,
    target: "es2020",
    // every bundle without layout, dead code or long local names (their readable source is
    // web/src/): chapter 8 loads two labs beside 4.2 MB of checkpoints, against
    // tests/test_site_weight.py's 5 MB a page (local names: lab.js 117 -> 99 kB); the
    // widget's whole (every LabWidget view syncs it): 328 -> 172 kB
    minifyWhitespace: true,
    minifySyntax: true,
    minifyIdentifiers: true,
    legalComments: "none",
    banner: {js: banner(entry, what)},
    footer: {js: footer},
    plugins,
    metafile: true,
    write: false,
    logLevel: "warning",
  });
  return {text: result.outputFiles[0].text, inputs: Object.keys(result.metafile.inputs)};
}

/** The text of one bundle (build's arguments). @returns {Promise<string>} */
export const bundle = async (spec, workers = null) => (await build(spec, workers)).text;

/** Write `text` to `file` unless it holds it already (an unchanged bundle keeps its mtime). */
function update(file, text, written) {
  let old = null;
  try { old = readFileSync(file, "utf8"); } catch { /* a new file */ }
  if (old !== text) {
    writeFileSync(file, text);
    written.push(file);
  }
}

/**
 * The registry, labs.json: per lab, its bundle, the other labs' modules it imports (from
 * esbuild's metafile: the plugin's "other-lab:" inputs), the data scripts its page loads
 * first (its module's and those labs' `pageData`) and those it loads on request
 * (`requestData`), and `scripts`, everything its page loads, in order. Read by
 * controls/web.py (a lab's element), attention_book.web_export (which data to write) and
 * the tests (which labs there are).
 * @param {Object<string, string[]>} inputs each lab's bundle's metafile inputs
 */
async function registry(inputs) {
  const modules = {};
  for (const lab of LABS) {
    modules[lab] = (await import(pathToFileURL(path.join(WEB, "src", "labs", `${lab}.js`)).href)).default;
  }
  const imports = (lab) => inputs[lab].filter((i) => i.startsWith("other-lab:")).map((i) => i.slice(10));
  const labs = {};
  for (const lab of LABS) {
    const uses = [...imports(lab), lab];
    const pageData = [...new Set(uses.flatMap((m) => modules[m].pageData || []))];
    labs[lab] = {
      bundle: `${lab}.js`,
      imports: imports(lab),
      pageData,
      requestData: modules[lab].requestData || [],
      scripts: ["lab.js", ...pageData, ...uses.map((m) => `${m}.js`)],
    };
  }
  return labs;
}

/**
 * Build every bundle and labs.json into `outdir`, rewriting only those whose text changed.
 * @param {string} outdir
 * @returns {Promise<string[]>} the files written
 */
export async function buildAll(outdir) {
  mkdirSync(outdir, {recursive: true});
  await writeKernels();  // src/llama/wasm-bytes.js, which the llama worker imports
  const workers = {minilm: await bundle(WORKER), llama: await bundleLlamaWorker()};
  const written = [], inLabJs = new Set(), inputs = {};
  for (const spec of BUNDLES) {
    const file = path.join(outdir, spec.out), built = await build(spec, workers);
    const sources = built.inputs.filter((input) => input.startsWith("src/"));
    if (spec.out === "lab.js") {
      sources.forEach((input) => inLabJs.add(input));
    } else if (spec.format === "iife") {  // a page loads each module once: lab.js or its lab's
      const twice = sources.filter((input) => inLabJs.has(input));
      if (twice.length) { throw new Error(`web/${spec.out} repeats ${twice.join(", ")} of web/lab.js: add it to COMMON`); }
      inputs[spec.out.slice(0, -3)] = built.inputs;
    }
    update(file, built.text, written);
  }
  update(path.join(outdir, "labs.json"), JSON.stringify(await registry(inputs), null, 1) + "\n", written);
  return written;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const outdir = path.resolve(process.argv[2] || WEB);
  for (const file of await buildAll(outdir)) { console.log("built " + path.relative(process.cwd(), file)); }
}
