// The entry of web/lab.js, the classic script every page with a lab loads first (bundled by
// web/build.mjs; a page opened as file:// refuses module scripts, so the pages get no
// modules). It installs the front end where the tests look for it:
//   globalThis.AttentionBook.lab     this API (mount, drawFigure, the colour maps, ...)
//   globalThis.AttentionBook.format  Python's number formats
// and, in a page, mounts every lab once the page's scripts have run. build.mjs adds to the
// bundle the code the labs share (AttentionBook.common). Node, loading the bundle as
// CommonJS, gets the same API as its exports (the bundle's footer).

import {LUT_HEX, colorize, lut} from "../colormaps.js";
import {decode} from "../decode.js";
import {drawFigure} from "../figure.js";
import {format} from "../format.js";
import {Lab, mount, start} from "../lab.js";
import {fillColumns} from "../panels/lines.js";
import {wholeTicks} from "../ticks.js";

/** The front end's API: AttentionBook.lab in a page, the bundle's exports in Node. */
const api = {format, lut, colorize, wholeTicks, drawFigure, mount, start, LUT_HEX, Lab, fillColumns,
  decode};

const book = globalThis.AttentionBook || {};
globalThis.AttentionBook = book;
book.lab = api;
book.format = format;
if (typeof document !== "undefined") { start(); }
