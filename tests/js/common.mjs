// What the driver's commands (tests/js/driver.mjs) share: where the front end's ES sources
// are, how a command loads them and the classic scripts (data files such as
// pretrained-gallery.js), and how arrays travel back to Python (base64 of their bytes, so
// that doubles arrive bit for bit).
import {createRequire} from "node:module";
import path from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
/** src/attention_book/web: the bundles (make js) and build.mjs. */
export const WEB = path.join(ROOT, "src", "attention_book", "web");
/** src/attention_book/web/src: the ES sources the bundles are built from. */
export const SRC = path.join(WEB, "src");

/** The namespace of an ES module: a path under web/src/, or an absolute one. */
export const source = (file) => import(pathToFileURL(path.resolve(SRC, file)).href);

/** web/build.mjs's exports (classicScript, bundleWorker...). */
export const build = () => import(pathToFileURL(path.join(WEB, "build.mjs")).href);

/** A lab's module (web/src/labs/<name>.js): its default export. */
export const lab = async (name) => (await source(path.join("labs", `${name}.js`))).default;

const requireFrom = createRequire(import.meta.url);

/** A classic script (a data file, a bundle; a path from the working directory) run as Node
 * runs one: what it exports. */
export const classic = (file) => requireFrom(path.resolve(file));

/** The raw bytes of a typed array, as base64. */
export const bytes64 = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString("base64");

/** Numbers as the base64 of their float64 bytes. */
export const b64 = (a) => bytes64(Float64Array.from(a));

const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x);

/** ``x`` with every typed array (also inside arrays and objects) replaced by ``f(array)``. */
export const mapTyped = (x, f) => (ArrayBuffer.isView(x) ? f(x)
  : Array.isArray(x) ? x.map((v) => mapTyped(v, f))
    : isObject(x) ? Object.fromEntries(Object.keys(x).map((k) => [k, mapTyped(x[k], f)]))
      : x);

/** A state as the tests read it: typed arrays as {typed, f8} (their float64 bytes). */
export const typed = (x) => mapTyped(x, (a) => ({typed: a.constructor.name, f8: b64(a)}));

/** ``x`` with its typed arrays as plain arrays (JSON). */
export const plain = (x) => mapTyped(x, (a) => Array.from(a));

/** to_js's output as Python sends it (node_driver.wire: buffers as base64), with the buffers
 * as the kernel hands them to decode.js. */
export const wired = (x) => (Array.isArray(x) ? x.map(wired) : !isObject(x) ? x
  : x.$array ? {...x, buffer: Buffer.from(x.b64, "base64")}
    : Object.fromEntries(Object.entries(x).map(([k, v]) => [k, wired(v)])));

/** What f() throws, as "Name: message" (null if nothing). */
export const errorOf = (f) => {
  try {
    f();
    return null;
  } catch (error) {
    return `${error.constructor.name}: ${error.message}`;
  }
};
