// The built bundles (web/*.js, web/widget.mjs: make js) as pages and the notebook load them,
// for tests/test_web_bundle.py, and what the browser tests load into pages: the classic
// scripts of their file:// pages, the functions they evaluate there (pages.mjs).
//
//   bundle.classic <file> <name>  -> build.mjs's classic script of web/src/<file>, installed
//                                    as AttentionBook.<name> (its text)
//   bundle.load <bundle> ...      -> each of web/<bundle> run in turn as a classic script (a
//                                    page's <script>s in order); null, or the error it throws
//   bundle.api                    -> lab.js's API: [its keys, format.fixed(2.5, 0), the viridis
//                                    table's length, typeof AttentionBook.format]
//   bundle.installs               -> whether scaling.js (after lab.js) installs its module
//                                    where the front end looks, and has a state()
//   bundle.common                 -> lab.js's shared code (AttentionBook.common) as two labs'
//                                    bundles read it: [its files, typeof state of each,
//                                    its tokenizer's tokens of "The weather"]
//   bundle.widget                 -> widget.mjs: [typeof render, its labs, decode's keys]
//   bundle.pages                  -> pages.mjs's and site.mjs's functions as V8 prints them
//                                    (their source)
import path from "node:path";
import {pathToFileURL} from "node:url";

import {build, classic, WEB} from "./common.mjs";

const bundle = (name) => classic(path.join(WEB, name));

export const classicScript = async (_input, file, name) => (await build()).classicScript(file, name);

export const load = (_input, ...names) => {
  names.forEach(bundle);
  return null;
};

export const api = () => {
  const L = bundle("lab.js");
  return [Object.keys(L).sort(), L.format.fixed(2.5, 0), L.lut("viridis").length, typeof globalThis.AttentionBook.format];
};

export const installs = () => {
  bundle("lab.js");
  const M = bundle("scaling.js");
  return M === globalThis.AttentionBook.scaling && typeof M.state;
};

export const common = () => {
  bundle("lab.js");
  const A = bundle("attention.js"), S = bundle("scaling.js"), C = globalThis.AttentionBook.common;
  return [Object.keys(C), typeof A.state, typeof S.state, C["shared/tokens.js"].tokenize("The weather")];
};

export const widget = async () => {
  const m = await import(pathToFileURL(path.join(WEB, "widget.mjs")).href);
  const decoded = m.decode({a: {$array: "float64", shape: [2], buffer: new DataView(new Float64Array([1, 2]).buffer)}});
  return [typeof m.default.render, m.labs, Object.keys(decoded)];
};

export const pages = async () => Object.fromEntries(
  [...Object.entries(await import("./pages.mjs")), ...Object.entries(await import("./site.mjs"))]
    .map(([name, f]) => [name, f.toString()]));
