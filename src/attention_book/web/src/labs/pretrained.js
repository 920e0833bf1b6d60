// Chapter 9's lab computed in the reader's browser: the twin of
// attention_book/scenes/pretrained.py (pretrained_state, pretrained_readout_html,
// pretrained_alt_text, pretrained_query_options): one head of all-MiniLM-L6-v2 on a sentence.
//
// Two sources of maps:
//   - pretrained-gallery.js (web_export.export_pretrained_gallery, ~0.5 MB): the tokenizer,
//     the gallery's head scores and the preset sentences' 72 maps as the package computes
//     them (float32). A preset answers at once, equal to Python (tests/test_web_pretrained.py).
//   - minilm-weights.js (web_export.export_browser_weights, int8, 32.5 MB), loaded only when
//     the reader presses "Load the model" (mountExtra): then any sentence runs through
//     minilm.js's forward pass in a Web Worker built from a Blob URL (a file:// page cannot
//     start a worker from a URL), once per sentence; its 72 maps are kept (LRU, 64 MB), so a
//     change of layer, head or query is a lookup. int8 maps are within 0.032 of Python's.
// Before the model is loaded, any other sentence shows its tokens and says how to load it.
//
// An ES module (its default export); build.mjs bundles it into web/pretrained.js, a classic
// script that sets globalThis.AttentionBook.pretrained. It needs pretrained-gallery.js
// (AttentionBook.pretrainedGallery) before state() is first called.
//
// Row-major: a head's weights (T, T) as a Float64Array (Python: float32 maps .astype(float64)).
import core from "../shared/core.js";
import minilm from "../shared/minilm.js";

const root = globalThis;
// The Worker's program (entries/minilm-worker.js, bundled by build.mjs and written into this
// bundle as text): a Blob URL, since a page opened as file:// cannot start a worker from a
// script's URL. Run from the sources (Node), there is none: the model runs on the thread.
/* global __MINILM_WORKER__ */
const WORKER_SOURCE = typeof __MINILM_WORKER__ === "string" ? __MINILM_WORKER__ : null;
// the script's own URL, read while it runs: minilm-weights.js lies beside it
const scriptSrc = typeof document !== "undefined" && document.currentScript ? document.currentScript.src : null;

  var fmt = core.format, esc = core.escapeHtml;

  /** scenes.pretrained.SCORE_LABELS: what each head score measures, in display order. */
  var SCORE_NAMES = ["previous", "next", "cls", "sep", "self", "spread"];
  var SCORE_LABELS = {previous: "previous token", next: "next token", cls: "[CLS]",
                      sep: "[SEP]", self: "itself", spread: "entropy / log T"};
  var WEIGHTS_FILE = "minilm-weights.js";
  var CACHE_BYTES = 64 * 1048576;  // the computed sentences' maps kept
  var GALLERY_FORMAT = 1;  // web_export.GALLERY_FORMAT

  // ------------------------------------------------------------------ the gallery file

  var G = null;  // the decoded gallery: {data, tokenizer, presets: Map text -> preset}

  /** pretrained-gallery.js's data, decoded once (the tokenizer, the presets' maps). */
  function gallery() {
    var data = root.AttentionBook && root.AttentionBook.pretrainedGallery;
    if (G && G.data === data) { return G; }
    if (!data) {
      throw new Error("the lab's data file pretrained-gallery.js is not loaded: `make book` writes it " +
                      "(attention_book.web_export.export_pretrained_gallery)");
    }
    if (data.format !== GALLERY_FORMAT) {
      throw new Error("pretrained-gallery.js has format " + data.format + ", this pretrained.js reads " +
                      GALLERY_FORMAT + ": rebuild the book");
    }
    var spec = Object.assign({}, data.tokenizer, {vocab: data.tokenizer.vocab.split("\n")});
    var presets = new Map();
    data.presets.forEach(function (p) {
      var bytes = minilm.decodeBase64(p.maps);
      presets.set(p.text, {label: p.label, text: p.text, query: p.query, tokens: p.tokens,
                           maps: new Float32Array(bytes.buffer, 0, bytes.length / 4)});  // (L, h, T, T)
    });
    var cfg = data.config;
    G = {data: data, tokenizer: new minilm.Tokenizer(spec), presets: presets,
         L: cfg.num_hidden_layers, h: cfg.num_attention_heads, maxPositions: cfg.max_position_embeddings};
    return G;
  }

  // ------------------------------------------------------------------ Python's text rules

  /** Python's str.isspace, one code point. */
  function isPySpace(c) {
    return (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x20) || c === 0x85 || c === 0xa0 || c === 0x1680 ||
      (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f ||
      c === 0x3000;
  }

  /** Python's `not text.strip()`. */
  function isBlank(text) {
    for (var i = 0; i < text.length; i++) {
      if (!isPySpace(text.charCodeAt(i))) { return false; }
    }
    return true;
  }

  /** len(text) in Python: code points (a lone surrogate counts as one). */
  function codePointLength(text) {
    var n = 0;
    for (var i = 0; i < text.length; i++) {
      var c = text.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
        var d = text.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) { i++; }
      }
      n++;
    }
    return n;
  }

  /** Python's type(value).__name__. */
  function pyType(v) {
    if (v === null || v === undefined) { return "NoneType"; }
    if (typeof v === "boolean") { return "bool"; }
    if (typeof v === "number") { return Number.isInteger(v) ? "int" : "float"; }
    if (Array.isArray(v)) { return "list"; }
    return typeof v === "object" ? "dict" : typeof v;
  }

  /** MiniLM._encoding's refusals before tokenizing (the message, or null). */
  function textError(text, g) {
    if (typeof text !== "string") { return "text must be a string, got " + pyType(text); }
    if (isBlank(text)) {
      return "text is empty (or only spaces): type at least one word, e.g. " + core.pyRepr(g.data.running_sentence);
    }
    var n = codePointLength(text);
    if (n > g.data.max_text_chars) {
      return "text is " + fmt.grouped(n) + " characters long; the limit is " + fmt.grouped(g.data.max_text_chars) +
        " (and the model reads at most " + g.maxPositions + " tokens)";
    }
    return null;
  }

  /**
   * scenes.pretrained.read_pieces: the tokens of reader-typed text, cut to maxTokens
   * (MiniLM.cut: a word is never split); never throws.
   * @returns {{used: string, tokens: string[], ids: Int32Array, notes: object[], total: number}}
   */
  function readPieces(text, maxTokens) {
    var g = gallery();
    maxTokens = maxTokens === undefined ? g.data.max_tokens : maxTokens;
    var message = textError(text, g), enc = null, used = text, total = 0;
    if (message === null) {
      enc = g.tokenizer.encode(text);  // every piece, no limit
      total = enc.ids.length;
      if (total > maxTokens) {
        var keep = maxTokens - 2;  // the last piece kept; [SEP] is added back
        while (keep > 1 && enc.tokens[keep + 1].indexOf(g.tokenizer.prefix) === 0) { keep -= 1; }
        used = text.slice(0, enc.offsets[keep][1]);  // UTF-16 offsets: JavaScript's slice
        enc = g.tokenizer.encode(used);  // as Python: tokenize(used)
      }
      if (enc.ids.length <= 2) {
        message = "text " + core.pyRepr(used) + " holds no token the model can read (only control or formatting " +
          "characters): type at least one word";
      }
    }
    if (message !== null) {
      return {used: "", tokens: [], ids: new Int32Array(0), total: 0,
              notes: [{level: "error", text: message.charAt(0).toUpperCase() + message.slice(1) + "."}]};
    }
    var kept = enc.ids.length;
    var notes = kept < total ? [{level: "warning", text: "showing the first " + kept + " of " + total +
                                 " tokens (the lab reads at most " + maxTokens + ")"}] : [];
    return {used: used, tokens: enc.tokens, ids: enc.ids, notes: notes, total: total};
  }

  // ------------------------------------------------------------------ heads.head_scores

  /** numpy's pairwise summation of a[from .. from + n) (np.add.reduce on contiguous float64:
   *  bit for bit the same sum, so that scores round as Python rounds them). */
  function pairwiseSum(a, from, n) {
    var i, res;
    if (n < 8) {
      res = 0;
      for (i = 0; i < n; i++) { res += a[from + i]; }
      return res;
    }
    if (n <= 128) {
      var r0 = a[from], r1 = a[from + 1], r2 = a[from + 2], r3 = a[from + 3];
      var r4 = a[from + 4], r5 = a[from + 5], r6 = a[from + 6], r7 = a[from + 7];
      for (i = 8; i < n - (n % 8); i += 8) {
        r0 += a[from + i]; r1 += a[from + i + 1]; r2 += a[from + i + 2]; r3 += a[from + i + 3];
        r4 += a[from + i + 4]; r5 += a[from + i + 5]; r6 += a[from + i + 6]; r7 += a[from + i + 7];
      }
      res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
      for (; i < n; i++) { res += a[from + i]; }
      return res;
    }
    var n2 = Math.floor(n / 2);
    n2 -= n2 % 8;
    return pairwiseSum(a, from, n2) + pairwiseSum(a, from + n2, n - n2);
  }

  /**
   * heads.head_scores of one head's map.
   * @param {Float64Array} weights  (T, T), rows = queries, T >= 2
   * @returns {object} name -> float: previous, next, cls, sep, self, entropy, spread
   */
  function headScores(weights, T) {
    var w = new Float64Array(T * T), i, j;
    for (i = 0; i < T; i++) {  // rows divided by their sums: rows sum to 1 in float64
      var sum = pairwiseSum(weights, i * T, T);
      for (j = 0; j < T; j++) { w[i * T + j] = weights[i * T + j] / sum; }
    }
    var column = new Float64Array(T);
    function mean(pick, counts, n) {  // _mean: the values where counts, over n queries
      for (var q = 0; q < T; q++) { column[q] = counts(q) ? pick(q) : 0; }
      return pairwiseSum(column, 0, T) / n;
    }
    function all() { return true; }
    var terms = new Float64Array(T), entropy = new Float64Array(T);
    for (i = 0; i < T; i++) {  // attention_entropy: -sum_j w log w (w = 0 adds 0)
      for (j = 0; j < T; j++) { var x = w[i * T + j]; terms[j] = x * Math.log(x > 0 ? x : 1); }
      entropy[i] = -pairwiseSum(terms, 0, T);
    }
    var meanEntropy = pairwiseSum(entropy, 0, T) / T;
    return {
      previous: mean(function (q) { return w[q * T + q - 1]; }, function (q) { return q >= 1; }, T - 1),
      next: mean(function (q) { return w[q * T + q + 1]; }, function (q) { return q + 1 <= T - 1; }, T - 1),
      cls: mean(function (q) { return w[q * T]; }, all, T),
      sep: mean(function (q) { return w[q * T + T - 1]; }, all, T),
      self: mean(function (q) { return w[q * T + q]; }, all, T),
      entropy: meanEntropy,
      spread: meanEntropy / Math.log(T),
    };
  }

  // ------------------------------------------------------------------ the model, on request

  var engine = {
    status: "none",  // none, loading, preparing, ready, missing, failed
    message: "",
    url: null,  // the weights file's URL (default: beside this script)
    worker: null, model: null,  // a Web Worker, or the model on the main thread
    dtype: null,
    cache: new Map(),  // used text -> {T, maps: Float32Array (L, h, T, T)}, oldest first
    cacheBytes: 0,
    inFlight: null, queued: null, seq: 0,
    timing: {},  // ms: load (the script), prepare (decode), last forward
    listeners: [],
    busy: [],  // f(tokens or 0): a sentence is being computed (its token count), or done
  };

  function setStatus(status, message) {
    engine.status = status;
    engine.message = message || "";
    engine.listeners.forEach(function (f) { f(engine.status, engine.message); });
  }

  function weightsBytes() {
    var w = gallery().data.weights;
    return w && w.bytes ? w.bytes : null;
  }

  /** "32.5 MB", or "" when the gallery file does not know the size. */
  function sizeText() {
    var bytes = weightsBytes();
    return bytes ? fmt.fixed(bytes / 1e6, 1) + " MB" : "";
  }

  function weightsUrl() {
    if (engine.url) { return engine.url; }
    var name = (gallery().data.weights && gallery().data.weights.file) || WEIGHTS_FILE;
    return scriptSrc ? scriptSrc.replace(/[^/]*$/, name) : "_static/ab-web/" + name;
  }

  /** What the reader reads when the model file is missing; what a developer needs goes to
   *  the console. */
  function missingMessage(url) {
    if (typeof console !== "undefined") {
      console.warn("The model file " + WEIGHTS_FILE + " is missing (looked for " + url + "). The book's build " +
        "writes it beside this page's scripts: run `make book`, or write it alone with " +
        "`.venv/bin/python -m attention_book.web_export _build/html/_static/ab-web/" + WEIGHTS_FILE + " int8` " +
        "(attention_book.web_export.export_browser_weights).");
    }
    return "The model is not part of this copy of the book, so only the preset sentences can be shown.";
  }

  function remember(used, entry) {
    if (engine.cache.has(used)) { return; }
    engine.cache.set(used, entry);
    engine.cacheBytes += entry.maps.byteLength;
    while (engine.cacheBytes > CACHE_BYTES && engine.cache.size > 1) {
      var oldest = engine.cache.keys().next().value;
      engine.cacheBytes -= engine.cache.get(oldest).maps.byteLength;
      engine.cache.delete(oldest);
    }
  }

  function lookup(used) {
    var entry = engine.cache.get(used);
    if (entry) { engine.cache.delete(used); engine.cache.set(used, entry); }  // most recent last
    return entry || null;
  }

  function pump() {
    if (engine.inFlight || !engine.queued) { return; }
    var job = engine.inFlight = engine.queued;
    engine.queued = null;
    job.id = ++engine.seq;
    if (engine.worker) {
      engine.worker.postMessage({kind: "run", id: job.id, ids: job.ids});
      return;
    }
    setTimeout(function () {  // main thread: after the page painted what it has
      var t = performance.now(), run;
      try { run = engine.model.forward(job.ids); } catch (err) { finish({kind: "error", message: err.message}); return; }
      finish({kind: "result", T: run.T, maps: run.attention, ms: performance.now() - t});
    }, 0);
  }

  function finish(m) {
    var job = engine.inFlight;
    engine.inFlight = null;
    if (job) {
      if (m.kind === "result") {
        engine.timing.forward = m.ms;
        var entry = {T: m.T, maps: m.maps};
        remember(job.used, entry);
        job.waiters.forEach(function (w) { w.resolve(entry); });
      } else {
        job.waiters.forEach(function (w) { w.reject(new Error("the model failed on this sentence: " + m.message)); });
      }
    }
    pump();
  }

  /** The maps of `used` (its ids), computed by the model: a Promise of {T, maps}, or of
   *  null when a newer sentence took its turn before it started. */
  function compute(used, ids) {
    return new Promise(function (resolve, reject) {
      var waiter = {resolve: resolve, reject: reject};
      var job = engine.inFlight && engine.inFlight.used === used ? engine.inFlight :
        engine.queued && engine.queued.used === used ? engine.queued : null;
      if (job) { job.waiters.push(waiter); return; }
      if (engine.queued) { engine.queued.waiters.forEach(function (w) { w.resolve(null); }); }  // superseded
      engine.queued = {used: used, ids: ids, waiters: [waiter]};
      pump();
    });
  }

  /** Start the model from a weights object (AttentionBook.minilmWeights): in a Web Worker
   *  where the page can make one, else on the main thread. A Promise of the engine. */
  function startModel(weights, options) {
    var useWorker = !(options && options.worker === false) && typeof Worker !== "undefined" &&
      typeof Blob !== "undefined" && typeof URL !== "undefined" && WORKER_SOURCE !== null;
    setStatus("preparing");
    engine.dtype = weights && weights.dtype;
    if (!useWorker) {
      return new Promise(function (resolve, reject) {
        setTimeout(function () {
          var t = performance.now();
          try {
            engine.model = new minilm.Model(weights).prepare();
          } catch (err) {
            setStatus("failed", "The model could not be read: " + err.message);
            reject(err);
            return;
          }
          engine.timing.prepare = performance.now() - t;
          setStatus("ready");
          resolve(engine);
        }, 0);
      });
    }
    var url = URL.createObjectURL(new Blob([WORKER_SOURCE], {type: "text/javascript"}));
    var worker = new Worker(url);
    URL.revokeObjectURL(url);
    return new Promise(function (resolve, reject) {
      worker.onmessage = function (event) {
        var m = event.data;
        if (m.kind === "ready") {
          engine.worker = worker;
          engine.timing.prepare = m.ms;
          worker.onmessage = function (e) { finish(e.data); };
          setStatus("ready");
          resolve(engine);
        } else {
          setStatus("failed", "The model could not be read: " + m.message);
          reject(new Error(m.message));
        }
      };
      worker.onerror = function (event) {
        event.preventDefault();
        worker.terminate();
        // a page that refuses workers: the main thread instead
        startModel(weights, {worker: false}).then(resolve, reject);
      };
      worker.postMessage({kind: "weights", weights: weights});
    });
  }

  /** Load minilm-weights.js with a <script> element (works over http and file://), then
   *  start the model. A Promise of the engine; the status says what happens. */
  function loadModel() {
    if (engine.status === "ready") { return Promise.resolve(engine); }
    if (engine.loading) { return engine.loading; }
    var url = weightsUrl();
    engine.loading = new Promise(function (resolve, reject) {
      var AB = root.AttentionBook;
      if (AB.minilmWeights && AB.minilmWeights.tensors) { resolve(AB.minilmWeights); return; }
      setStatus("loading");
      var t = performance.now();
      var script = document.createElement("script");
      script.src = url;
      script.async = true;
      script.onload = function () {
        engine.timing.load = performance.now() - t;
        if (AB.minilmWeights && AB.minilmWeights.tensors) { resolve(AB.minilmWeights); }
        else { reject(new Error("failed")); setStatus("failed", "The file " + url + " ran but holds no model weights."); }
      };
      script.onerror = function () {
        setStatus("missing", missingMessage(url));
        reject(new Error("missing"));
      };
      document.head.appendChild(script);
    }).then(function (weights) {
      return startModel(weights).then(function (e) {
        // the worker holds its own copy: the page's 32 MB of base64 can go
        if (engine.worker && root.AttentionBook.minilmWeights === weights) { root.AttentionBook.minilmWeights = undefined; }
        return e;
      });
    });
    engine.loading.catch(function () { engine.loading = null; });  // a retry may follow
    return engine.loading;
  }

  // ------------------------------------------------------------------ state

  /** The status note of a sentence the model has not run yet. */
  function pendingNote() {
    var size = sizeText();
    switch (engine.status) {
      case "loading": return {level: "info", text: "loading the model (" + (size || "all-MiniLM-L6-v2") + ")\u2026"};
      case "preparing": return {level: "info", text: "preparing the model's weights\u2026"};
      case "ready": return {level: "info", text: "computing this sentence in your browser\u2026"};
      case "missing": return {level: "error", text: engine.message};
      case "failed": return {level: "error", text: engine.message};
      default: return {level: "info", text: "this sentence is not one of the book's presets: press \u201cLoad the model" +
                                            (size ? " (" + size + ")" : "") + "\u201d to run all-MiniLM-L6-v2 on it in " +
                                            "your browser (the presets need no download)"};
    }
  }

  /** scenes.pretrained.pretrained_state. Returns the state, or a Promise of it when the
   *  model must run on a new sentence. Throws Error(message) for a bad layer, head or query. */
  function state(values) {
    var g = gallery();
    var text = values.text === undefined ? g.data.running_sentence : values.text;
    var layer = core.wholeNumber(values.layer === undefined ? 0 : values.layer, "layer", 0, g.L - 1);
    var head = core.wholeNumber(values.head === undefined ? 2 : values.head, "head", 0, g.h - 1);
    var query = core.wholeNumber(values.query === undefined ? 2 : values.query, "query", 0);
    var read = readPieces(text, values.maxTokens);
    var galleryScores = {}, k = layer * g.h + head;
    Object.keys(g.data.gallery.mean).forEach(function (name) { galleryScores[name] = g.data.gallery.mean[name][k]; });
    var base = {text: typeof text === "string" ? text : "", layer: layer, head: head, tokens: read.tokens,
                totalTokens: read.total, gallery: galleryScores,
                gallerySentences: g.data.gallery.sentences, notes: read.notes.slice()};
    var T = read.tokens.length;
    if (!T) { return build(base, null, 0, "none"); }
    var preset = g.presets.get(read.used);
    if (preset) { return build(base, preset.maps, query, "package"); }
    var entry = lookup(read.used);
    if (entry) { return build(base, entry.maps, query, "browser"); }
    if (engine.status !== "ready") { return build(base, null, query, "pending"); }
    engine.busy.forEach(function (f) { f(T); });
    return compute(read.used, read.ids).then(function (done) {
      engine.busy.forEach(function (f) { f(0); });
      return done ? build(base, done.maps, query, "browser") : build(base, null, query, "pending");
    }, function (err) {
      engine.busy.forEach(function (f) { f(0); });
      throw err;
    });
  }

  /** The state from the sentence's maps (L, h, T, T), or without them ("none": no tokens;
   *  "pending": the model has not run on it). */
  function build(st, maps, query, source) {
    var T = st.tokens.length, g = gallery();
    st.T = T;
    st.source = source;
    st.query = T ? Math.min(query, T - 1) : 0;
    st.weights = new Float64Array(0);
    st.scores = {};
    if (maps) {
      var start = (st.layer * g.h + st.head) * T * T;
      st.weights = Float64Array.from(maps.subarray(start, start + T * T));  // (T, T)
      st.scores = headScores(st.weights, T);
      if (source === "browser" && engine.dtype && engine.dtype !== "float32") {
        st.notes.push({level: "info", text: "computed in your browser from the model's " + engine.dtype + " weights: " +
                                            "each weight within about 0.03 of the book's float32 model"});
      }
    } else if (source === "pending") {
      st.notes.push(pendingNote());
    }
    st.row = T && maps ? st.weights.subarray(st.query * T, (st.query + 1) * T) : new Float64Array(0);
    return st;
  }

  function has(st) { return st.T > 0 && st.source !== "pending"; }

  /** Indices of the k largest of row, largest first, as np.argsort(row)[::-1][:k]. */
  function topKeys(row, k) {
    var idx = Array.from(row, function (_, i) { return i; });
    idx.sort(function (a, b) { return row[a] - row[b] || a - b; });
    return idx.reverse().slice(0, k);
  }

  /** scenes.pretrained.pretrained_readout_html: the same HTML as Python. */
  function readoutHtml(st) {
    var T = st.T;
    var parts = ["<b>layer " + st.layer + ", head " + st.head + "</b> of all-MiniLM-L6-v2: weights : (T, T) = (" +
                 T + ", " + T + ")"];
    var columns = ["gallery (" + st.gallerySentences + " sentences)"];
    if (has(st)) {
      var row = st.row, who = esc(st.tokens[st.query]);
      var keys = topKeys(row, 3).map(function (j) { return j + " '" + esc(st.tokens[j]) + "' " + fmt.fixed(row[j], 2); });
      parts.push("query " + st.query + " '" + who + "' attends most to: " + keys.join(", "));
      columns = ["this sentence"].concat(columns, ["uniform head"]);
    } else if (T) {  // tokens, no maps yet
      parts.push("tokens: " + st.tokens.map(function (t, i) { return i + ":" + esc(t); }).join(" "));
    }
    var rows = SCORE_NAMES.map(function (name) {
      var values = [st.gallery[name]];
      if (has(st)) { values = [st.scores[name], values[0], name === "spread" ? 1.0 : 1 / T]; }
      return "<tr><td>" + esc(SCORE_LABELS[name]) + "</td>" +
        values.map(function (v) { return "<td>" + fmt.fixed(v, 3) + "</td>"; }).join("") + "</tr>";
    });
    var table = '<table style="font-size:90%;border-collapse:collapse" cellpadding="2"><tr>' +
      ["score"].concat(columns).map(function (c) { return "<th>" + c + "</th>"; }).join("") + "</tr>" +
      rows.join("") + "</table>";
    return core.readoutHtml(parts.join("<br>") + table, st.notes, "font-size:90%");
  }

  /** scenes.pretrained.pretrained_alt_text (plain text). */
  function alt(st) {
    var galleryText = "bars of the head's scores averaged over the gallery: " + SCORE_NAMES.map(function (n) {
      return SCORE_LABELS[n] + " " + fmt.fixed(st.gallery[n], 2); }).join(", ") + ".";
    if (!st.T) { return core.noTokensAlt("Empty heatmap and arcs", st.notes) + " Bottom right: " + galleryText; }
    if (!has(st)) {
      return core.noTokensAlt("Empty heatmap and arcs", st.notes, "the model has not run on this sentence yet") +
        " Bottom right: " + galleryText;
    }
    var row = st.row, top = core.argmax(row), T = st.T;
    var mine = SCORE_NAMES.map(function (n) { return SCORE_LABELS[n] + " " + fmt.fixed(st.scores[n], 2); }).join(", ");
    return "Left: heatmap of the " + T + " by " + T + " attention weights of layer " + st.layer + ", head " + st.head +
      ", tokens (" + st.tokens.slice(0, 20).join(", ") + (T > 20 ? ", ..." : "") + ") on both axes, colour 0 to 1, row " +
      st.query + " outlined. Top right: arcs from query " + st.query + " '" + st.tokens[st.query] +
      "' to every token; the heaviest goes to " + top + " '" + st.tokens[top] + "' with weight " + fmt.fixed(row[top], 2) +
      ". Bottom right: bars of the head's scores on this sentence (" + mine + ") beside its " + galleryText;
  }

  /** The numbers a reader downloads: the head's weights (one row per query) and scores. */
  function numbers(st) {
    return {lab: "pretrained", model: "all-MiniLM-L6-v2", layer: st.layer, head: st.head, query: st.query,
            tokens: st.tokens, weights: has(st) ? core.nested(st.weights, st.T, st.T) : [],
            computed: st.source === "package" ? "the book's float32 model" :
              st.source === "browser" ? "in the browser (" + engine.dtype + " weights)" : "not yet",
            scores: st.scores, gallery: st.gallery};
  }

  /** The picture (plots.pretrained.PretrainedView) as panels: the head's weights with the
   *  query's row outlined; arcs from the query; the scores here and on the gallery (as a
   *  2 x 6 heatmap: lab.js draws no bars). */
  function figure(st) {
    var T = has(st) ? st.T : 0;
    var title = "layer " + st.layer + ", head " + st.head + ": query rows, key columns";
    // a sentence the model has not run on: no map and no arcs, only what it waits for
    var waiting = engine.status === "ready" ? "computing this sentence\u2026"
      : "not computed yet: press \u201cLoad the model\u201d";
    var series = [];
    if (has(st)) {
      series.push({label: "this sentence", color: "#1f5fa8", dark: "#6fa8e8",
                   values: SCORE_NAMES.map(function (n) { return st.scores[n]; })});
    }
    series.push({label: "gallery mean", color: "#9dbfe3", dark: "#3d5f85",
                 values: SCORE_NAMES.map(function (n) { return st.gallery[n]; })});
    var q = st.query, token = st.tokens.length ? st.tokens[q] : "";
    return {
      columns: 2,
      panels: [
        {kind: "heatmap", title: title, data: st.weights, rows: T, cols: T, extent: [T, T], cmap: "viridis",
         vmin: 0, vmax: 1, xlabel: "", ylabel: "", colorbar: "weight (each row sums to 1)",
         rowLabels: st.tokens.slice(0, T), colLabels: st.tokens.slice(0, T), outlineRow: T ? q : undefined,
         empty: st.T ? waiting : "(no tokens)"},
        {kind: "arcs", title: st.tokens.length ? "query " + q + " '" + token.slice(0, 16) + "' \u2192 every token" : "",
         tokens: st.tokens, query: q, weights: has(st) ? st.row : null, empty: st.T ? waiting : "(no tokens)"},
        {kind: "bars", title: "head scores (0 to 1)", labels: SCORE_NAMES.map(function (n) {
          return SCORE_LABELS[n]; }), series: series, xlim: [0, 1], xlabel: "score"},
      ],
    };
  }

  /** scenes.pretrained.pretrained_query_options: ("position: token", i) for the text's tokens. */
  function choices(name, values) {
    if (name !== "query") { return null; }
    var tokens = readPieces(values.text === undefined ? gallery().data.running_sentence : values.text).tokens;
    return tokens.length ? tokens.map(function (t, i) { return [i + ": " + t, i]; }) : [["(no tokens)", 0]];
  }

  /** The "Load the model" button and its status line, under the lab's controls. */
  function mountExtra(lab, container) {
    var doc = container.ownerDocument;
    var box = doc.createElement("div");
    box.className = "ab-pretrained-model";
    var button = doc.createElement("button");
    button.type = "button";
    button.className = "ab-load-model";
    var size = sizeText();
    button.textContent = "Load the model" + (size ? " (" + size + ")" : "");
    var status = doc.createElement("p");
    status.className = "ab-model-status";
    status.setAttribute("role", "status");
    status.setAttribute("aria-live", "polite");
    status.textContent = "The preset sentences are shown from the book's own numbers. For your own sentence, load " +
      "all-MiniLM-L6-v2" + (size ? " (" + size + ", once)" : "") + ": it then runs in your browser.";
    var timer = null, started = 0;
    function show(st, message) {
      if (timer !== null && st !== "loading") { clearInterval(timer); timer = null; }
      if (st === "loading") {
        started = performance.now();
        var tick = function () {
          status.textContent = "Loading the model" + (size ? " (" + size + ")" : "") + "\u2026 " +
            Math.round((performance.now() - started) / 1000) + " s";
        };
        tick();
        if (timer === null) { timer = setInterval(tick, 500); }
        button.disabled = true;
      } else if (st === "preparing") {
        status.textContent = "Preparing the weights\u2026";
      } else if (st === "ready") {
        status.textContent = "Model loaded" + (engine.timing.load ? " in " + fmt.fixed((engine.timing.load +
          (engine.timing.prepare || 0)) / 1000, 1) + " s" : "") + ": type any sentence (up to " + gallery().data.max_tokens +
          " tokens), it runs in your browser" + (engine.worker ? "" : " (on the page's thread)") + ".";
        button.hidden = true;
      } else if (st === "missing" || st === "failed") {
        status.textContent = "The model could not be loaded (the note below says why).";
        button.disabled = false;
        button.textContent = "Try again";
      }
      if (lab && typeof lab.update === "function" && st !== "loading") { lab.update(); }
    }
    engine.listeners.push(show);
    // while a sentence is computed: a sign beside the button, the old picture dimmed
    var ready = "";
    engine.busy.push(function (tokens) {
      if (tokens) {
        ready = ready || status.textContent;
        status.textContent = "Computing this sentence (" + tokens + " tokens) in your browser\u2026";
      } else if (ready) {
        status.textContent = ready;
        ready = "";
      }
      if (lab && lab.canvas) { lab.canvas.style.opacity = tokens ? "0.45" : ""; }
    });
    button.addEventListener("click", function () { loadModel().catch(function () {}); });
    box.appendChild(button);
    box.appendChild(status);
    container.appendChild(box);
    if (engine.status !== "none") { show(engine.status, engine.message); }
  }

  /** What the tests and the benchmark read: the model's status and timings. */
  function modelStatus() {
    return {status: engine.status, message: engine.message, dtype: engine.dtype, worker: !!engine.worker,
            cached: engine.cache.size, timing: Object.assign({}, engine.timing), url: weightsUrl()};
  }

  const api = {SCORE_NAMES: SCORE_NAMES, SCORE_LABELS: SCORE_LABELS, state: state, readoutHtml: readoutHtml,
          alt: alt, numbers: numbers, figure: figure, choices: choices, mountExtra: mountExtra,
          readPieces: readPieces, headScores: headScores, pairwiseSum: pairwiseSum, pyRepr: core.pyRepr,
          loadModel: loadModel, startModel: startModel, modelStatus: modelStatus,
          setWeightsUrl: function (url) { engine.url = url; }};

export default api;
