// The book's one front end for labs that compute in the reader's browser.
//
// A lab on a page is an element `.ab-lab[data-ab-lab]` holding its declaration as JSON
// (`script.ab-lab-data`, written by attention_book/controls/web.py from the scene's
// controls). This script renders the controls it declares (slider -> <input type=range> with
// an <output> and aria-valuetext, choice -> <select>, text -> <input>), calls the lab's state
// module (AttentionBook[<module>], e.g. positional.js: state(values), readout(state),
// alt(state), figure(state)) and draws the figure's panels on one <canvas> (heatmaps with a
// colour bar, line plots with a legend) at the screen's device pixel ratio. The canvas is
// role="img" with the scene's alt text for the state shown; the readout is built with
// textContent (reader text is never parsed as HTML). Colours of text and axes come from the
// theme's CSS variables (--pst-color-*), so the figure follows light and dark mode; it takes
// the width of its column (one column of panels on a phone) and redraws on resize.
// A change of a control computes and draws at once, in its input event, so the next frame
// painted shows it; each draw dispatches "ab-lab-drawn" on the lab element with its times.
//
// Classic script, no library, no network: sets globalThis.AttentionBook.lab in a browser and
// module.exports in Node (where only the pure parts, format and colormaps, are of use).
(function (root, factory) {
  var api = factory(root);
  if (typeof module === "object" && module.exports) {
    module.exports = api;
  } else {
    root.AttentionBook = root.AttentionBook || {};
    root.AttentionBook.lab = api;
    root.AttentionBook.format = api.format;
    api.start();
  }
})(typeof globalThis !== "undefined" ? globalThis : this, function (root) {
  "use strict";

  // ------------------------------------------------------------ numbers as Python writes them
  /** Whether x lies exactly half way between two numbers of n decimals (x 2^(n+1) odd). */
  function isTie(x, n) {
    var z = Math.abs(x) * Math.pow(2, n + 1);  // exact: a power of two
    return Number.isInteger(z) && z % 2 === 1;
  }

  /** Python's f"{x:.{n}f}" (toFixed rounds exact ties up, Python to even), "," grouped. */
  function fixed(x, n, grouped) {
    if (!isFinite(x)) { return isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf"; }
    var text = Math.abs(x).toFixed(n);
    if (isTie(x, n) && (text.charCodeAt(text.length - 1) - 48) % 2 === 1) {
      // the lower neighbour: an odd last digit minus one never borrows
      text = text.slice(0, -1) + String.fromCharCode(text.charCodeAt(text.length - 1) - 1);
    }
    if (grouped) {
      var parts = text.split(".");
      text = parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, ",") + (parts.length > 1 ? "." + parts[1] : "");
    }
    return (x < 0 || (x === 0 && 1 / x < 0) ? "-" : "") + text;
  }

  function expSuffix(e) { return "e" + (e < 0 ? "-" : "+") + (Math.abs(e) < 10 ? "0" : "") + Math.abs(e); }

  /** Whether x, kept to ``kept`` significant digits, is an exact decimal tie: its exact
   *  expansion (toPrecision(100) is exact for the doubles the labs print) goes on with a 5
   *  and then only zeros. */
  function isDecimalTie(x, kept) {
    var digits = Math.abs(x).toPrecision(100).split("e")[0].replace(".", "").replace(/^0+/, "");
    return digits.charAt(kept) === "5" && /^0*$/.test(digits.slice(kept + 1));
  }

  /** toExponential(n) with Python's rounding of exact ties (to even, not up). */
  function toExponential(x, n) {
    var text = x.toExponential(n), parts = text.split("e"), m = parts[0];
    var last = m.charCodeAt(m.length - 1) - 48;
    if (x !== 0 && last % 2 === 1 && isDecimalTie(x, n + 1)) {
      m = m.slice(0, -1) + String.fromCharCode(48 + last - 1);  // odd - 1: no borrow
    }
    return m + "e" + parts[1];
  }

  /** Python's f"{x:.{n}e}". */
  function exponent(x, n) {
    if (!isFinite(x)) { return isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf"; }
    var parts = toExponential(x, n).split("e");
    return (x === 0 && 1 / x < 0 ? "-" : "") + parts[0] + expSuffix(parseInt(parts[1], 10));
  }

  /** Python's f"{x:.{p}g}" (p significant digits, trailing zeros dropped; "g" is p = 6). */
  function general(x, p) {
    if (!isFinite(x)) { return isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf"; }
    if (x === 0) { return 1 / x < 0 ? "-0" : "0"; }
    p = p || 6;
    var e = parseInt(toExponential(x, p - 1).split("e")[1], 10);
    if (e >= -4 && e < p) {
      var text = fixed(x, p - 1 - e);
      return text.indexOf(".") >= 0 ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
    }
    var m = toExponential(x, p - 1).split("e")[0];
    return (m.indexOf(".") >= 0 ? m.replace(/0+$/, "").replace(/\.$/, "") : m) + expSuffix(e);
  }

  /** Python's f"{n:,}" of a whole number. */
  function grouped(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }

  var format = {fixed: fixed, exponent: exponent, general: general, grouped: grouped};

  // ------------------------------------------------------------------- colour maps
  // matplotlib's viridis and cividis at 256 levels (tests/test_web_lab.py checks them):
  // perceptually uniform and readable with colour-blindness.
  var LUT_HEX = {
    viridis: "44015444025645045745055946075a46085c460a5d460b5e470d60470e6147106347116447136548146748166848176948186a481a6c481b6d481c6e481d6f481f70482071482173482374482475482576482677482878482979472a7a472c7a472d7b472e7c472f7d46307e46327e46337f463480453581453781453882443983443a83443b84433d84433e85423f854240864241864142874144874045884046883f47883f48893e49893e4a893e4c8a3d4d8a3d4e8a3c4f8a3c508b3b518b3b528b3a538b3a548c39558c39568c38588c38598c375a8c375b8d365c8d365d8d355e8d355f8d34608d34618d33628d33638d32648e32658e31668e31678e31688e30698e306a8e2f6b8e2f6c8e2e6d8e2e6e8e2e6f8e2d708e2d718e2c718e2c728e2c738e2b748e2b758e2a768e2a778e2a788e29798e297a8e297b8e287c8e287d8e277e8e277f8e27808e26818e26828e26828e25838e25848e25858e24868e24878e23888e23898e238a8d228b8d228c8d228d8d218e8d218f8d21908d21918c20928c20928c20938c1f948c1f958b1f968b1f978b1f988b1f998a1f9a8a1e9b8a1e9c891e9d891f9e891f9f881fa0881fa1881fa1871fa28720a38620a48621a58521a68522a78522a88423a98324aa8325ab8225ac8226ad8127ad8128ae8029af7f2ab07f2cb17e2db27d2eb37c2fb47c31b57b32b67a34b67935b77937b87838b9773aba763bbb753dbc743fbc7340bd7242be7144bf7046c06f48c16e4ac16d4cc26c4ec36b50c46a52c56954c56856c66758c7655ac8645cc8635ec96260ca6063cb5f65cb5e67cc5c69cd5b6ccd5a6ece5870cf5773d05675d05477d1537ad1517cd2507fd34e81d34d84d44b86d54989d5488bd6468ed64590d74393d74195d84098d83e9bd93c9dd93ba0da39a2da37a5db36a8db34aadc32addc30b0dd2fb2dd2db5de2bb8de29bade28bddf26c0df25c2df23c5e021c8e020cae11fcde11dd0e11cd2e21bd5e21ad8e219dae319dde318dfe318e2e418e5e419e7e419eae51aece51befe51cf1e51df4e61ef6e620f8e621fbe723fde725",
    cividis: "00224e00234f00245100255300255400265600275800285900285b00295d002a5f002a61002b62002c64002c66002d68002e6a002e6c002f6d00306f0030700031700031710132710533710833700c34700f357012357014367016377018376f1a386f1c396f1e3a6f203a6f213b6e233c6e243c6e263d6e273e6e293f6e2a3f6d2b406d2d416d2e416d2f426d31436d32436d33446d34456c35456c36466c38476c39486c3a486c3b496c3c4a6c3d4a6c3e4b6c3f4c6c404c6c414d6c424e6c434e6c444f6c45506c46516c47516c48526c49536c4a536c4b546c4c556c4d556c4e566c4f576c50576c51586d52596d535a6d545a6d555b6d555c6d565c6d575d6d585e6d595e6e5a5f6e5b606e5c616e5d616e5e626e5e636f5f636f60646f61656f62656f636670646770656870656870666970676a71686a71696b716a6c716b6d726c6d726c6e726d6f726e6f736f70737071737172747272747273747374757474757575757676767777767777777878777979777a7a787b7a787c7b787d7c787e7c787e7d787f7e78807f78817f788280798381798482798582798683798784788885788985788a86788b87788c88788d88788e89788f8a78908b78918b78928c78928d78938e78948e77958f779690779791779892779992779a93769b94769c95769d95769e96769f9775a09875a19975a29975a39a74a49b74a59c74a69c74a79d73a89e73a99f73aaa073aba072aca172ada272aea371afa471b0a571b1a570b3a670b4a76fb5a86fb6a96fb7a96eb8aa6eb9ab6dbaac6dbbad6dbcae6cbdae6cbeaf6bbfb06bc0b16ac1b26ac2b369c3b369c4b468c5b568c6b667c7b767c8b866c9b965cbb965ccba64cdbb63cebc63cfbd62d0be62d1bf61d2c060d3c05fd4c15fd5c25ed6c35dd7c45cd9c55cdac65bdbc75adcc859ddc858dec958dfca57e0cb56e1cc55e2cd54e4ce53e5cf52e6d051e7d150e8d24fe9d34eead34cebd44bedd54aeed649efd748f0d846f1d945f2da44f3db42f5dc41f6dd3ff7de3ef8df3cf9e03afbe138fce236fde334fee434fee535fee636fee838",
  };
  var LUTS = {};
  function lut(name) {
    if (!LUTS[name]) {
      var hex = LUT_HEX[name], table = new Uint8Array(768);
      if (!hex) { throw new Error("no colour map " + name); }
      for (var i = 0; i < 768; i++) { table[i] = parseInt(hex.substr(2 * i, 2), 16); }
      LUTS[name] = table;
    }
    return LUTS[name];
  }

  /** values:(rows*cols) -> RGBA pixels through colour map `name` on [vmin, vmax]. */
  function colorize(values, name, vmin, vmax, out) {
    var table = lut(name), scale = 255 / (vmax - vmin);
    for (var i = 0, n = values.length; i < n; i++) {
      var v = values[i], level = v !== v ? 0 : Math.round((v - vmin) * scale);
      level = level < 0 ? 0 : level > 255 ? 255 : level;
      out[4 * i] = table[3 * level];
      out[4 * i + 1] = table[3 * level + 1];
      out[4 * i + 2] = table[3 * level + 2];
      out[4 * i + 3] = 255;
    }
    return out;
  }

  // -------------------------------------------------------------------------- ticks
  /** Up to about `most` whole ticks in 0..n-1, 1, 2 or 5 x 10^k apart (MaxNLocator-like). */
  function wholeTicks(n, most) {
    var top = Math.max(n - 1, 1), step = 1;
    var steps = [1, 2, 5, 10];
    for (var mag = 1; ; mag *= 10) {
      var found = steps.some(function (s) {
        step = s * mag;
        return Math.floor(top / step) + 1 <= most;
      });
      if (found) { break; }
    }
    var ticks = [];
    for (var t = 0; t <= n - 1; t += step) { ticks.push(t); }
    return ticks;
  }

  // ------------------------------------------------------------------------- theme
  function cssVar(el, name, fallback) {
    var value = getComputedStyle(el).getPropertyValue(name).trim();
    return value || fallback;
  }

  function luminance(colour) {
    var m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})/i.exec(colour), c;
    if (m) {
      c = [m[1], m[2], m[3]].map(function (h) { return parseInt(h, 16); });
    } else {
      var p = /rgba?\(([^)]+)\)/.exec(colour);
      c = p ? p[1].split(/[ ,\/]+/).filter(Boolean).map(Number) : [255, 255, 255];
    }
    return (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]) / 255;
  }

  /** The theme's colours where the lab sits (defaults outside the book's theme). */
  function theme(el) {
    var background = cssVar(el, "--pst-color-background", "#ffffff");
    return {
      background: background,
      text: cssVar(el, "--pst-color-text-base", "#222832"),
      muted: cssVar(el, "--pst-color-text-muted", "#48566b"),
      border: cssVar(el, "--pst-color-border", "#d1d5da"),
      dark: luminance(background) < 0.5,
    };
  }

  // ------------------------------------------------------------------------ drawing
  var FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";
  var TEXT_PX = 11, TITLE_PX = 12;  // CSS px: the smallest text is 11 px at any width
  var MARGIN = {top: 24, left: 50, bottom: 36};

  function text(ctx, str, x, y, align, baseline, px, colour, bold) {
    ctx.font = (bold ? "600 " : "") + px + "px " + FONT;
    ctx.fillStyle = colour;
    ctx.textAlign = align;
    ctx.textBaseline = baseline;
    ctx.fillText(str, x, y);
  }

  function rotatedText(ctx, str, x, y, colour) {
    ctx.save();
    ctx.translate(x, y);
    ctx.rotate(-Math.PI / 2);
    text(ctx, str, 0, 0, "center", "middle", TEXT_PX, colour);
    ctx.restore();
  }

  /** Frame, ticks and axis labels of a plot area `box` (x, y, w, h in CSS px). */
  function axes(ctx, box, panel, xticks, yticks, th) {
    ctx.strokeStyle = th.muted;
    ctx.lineWidth = 1;
    ctx.strokeRect(box.x - 0.5, box.y - 0.5, box.w + 1, box.h + 1);
    ctx.beginPath();
    xticks.forEach(function (t) {
      ctx.moveTo(Math.round(t.at) + 0.5, box.y + box.h);
      ctx.lineTo(Math.round(t.at) + 0.5, box.y + box.h + 4);
    });
    yticks.forEach(function (t) {
      ctx.moveTo(box.x - 4, Math.round(t.at) + 0.5);
      ctx.lineTo(box.x, Math.round(t.at) + 0.5);
    });
    ctx.stroke();
    xticks.forEach(function (t) {
      text(ctx, t.label, t.at, box.y + box.h + 6, "center", "top", TEXT_PX, th.text);
    });
    yticks.forEach(function (t) {
      text(ctx, t.label, box.x - 6, t.at, "right", "middle", TEXT_PX, th.text);
    });
    text(ctx, panel.xlabel || "", box.x + box.w / 2, box.y + box.h + 21, "center", "top", TEXT_PX, th.text);
    if (panel.ylabel) { rotatedText(ctx, panel.ylabel, box.x - 42, box.y + box.h / 2, th.text); }
    fittedTitle(ctx, panel.title || "", box.x + box.w / 2, box.y - 8, box.w + 70, th);
  }

  /** A panel's title, at most `most` px wide: smaller (down to the 11 px floor), then cut. */
  function fittedTitle(ctx, str, x, y, most, th) {
    var px = TITLE_PX;
    ctx.font = "600 " + px + "px " + FONT;
    while (px > TEXT_PX && ctx.measureText(str).width > most) { ctx.font = "600 " + (--px) + "px " + FONT; }
    while (str.length > 4 && ctx.measureText(str).width > most) { str = str.slice(0, -2) + "\u2026"; }
    text(ctx, str, x, y, "center", "bottom", px, th.text, true);
  }

  /** Ticks of a heatmap axis of `n` cells drawn over `length` px from `start`. */
  function cellTicks(n, start, length, labels, most) {
    var ticks = labels && labels.length <= most ? labels.map(function (_, i) { return i; }) :
      wholeTicks(n, Math.max(2, Math.min(most, 6)));
    return ticks.map(function (i) {
      return {at: start + (i + 0.5) / n * length, label: labels ? String(labels[i]) : String(i)};
    });
  }

  var ACCENT = "#ff3b30";  // the chosen query's outline, as the matplotlib views draw it
  var MASKED = {light: [230, 230, 230], dark: [90, 90, 90]};  // masked cells: grey, and crossed

  function drawHeatmap(ctx, panel, region, th, scratch) {
    var box = {x: region.x + MARGIN.left, y: region.y + MARGIN.top,
               w: region.w - MARGIN.left - 84, h: region.h - MARGIN.top - MARGIN.bottom};
    var rows = panel.rows, cols = panel.cols, extent = panel.extent || [rows, cols];
    if (rows && cols) {
      scratch.width = cols;
      scratch.height = rows;
      var sctx = scratch.getContext("2d"), image = sctx.createImageData(cols, rows);
      colorize(panel.data, panel.cmap, panel.vmin, panel.vmax, image.data);
      if (panel.masked) {  // grey, not a colour of the map
        var grey = MASKED[th.dark ? "dark" : "light"];
        for (var m = 0; m < rows * cols; m++) {
          if (panel.masked[m]) { image.data.set(grey, 4 * m); }
        }
      }
      sctx.putImageData(image, 0, 0);
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(scratch, box.x, box.y, box.w, box.h);
      var cw = box.w / cols, ch = box.h / rows;
      if (panel.masked && Math.min(cw, ch) >= 7) {  // crosses too: not colour alone
        ctx.strokeStyle = th.dark ? "#cfcfcf" : "#7a7a7a";
        ctx.lineWidth = 1;
        ctx.beginPath();
        var r = Math.min(cw, ch) * 0.22;
        for (var k = 0; k < rows * cols; k++) {
          if (!panel.masked[k]) { continue; }
          var cx = box.x + (k % cols + 0.5) * cw, cy = box.y + (Math.floor(k / cols) + 0.5) * ch;
          ctx.moveTo(cx - r, cy - r); ctx.lineTo(cx + r, cy + r);
          ctx.moveTo(cx + r, cy - r); ctx.lineTo(cx - r, cy + r);
        }
        ctx.stroke();
      }
      if (panel.faded) {  // a head switched off: faded towards the background
        ctx.globalAlpha = 0.8;
        ctx.fillStyle = th.background;
        ctx.fillRect(box.x, box.y, box.w, box.h);
        ctx.globalAlpha = 1;
      }
      if (panel.outlineRow !== undefined && panel.outlineRow !== null && panel.outlineRow < rows) {
        ctx.strokeStyle = ACCENT;
        ctx.lineWidth = 2;
        ctx.strokeRect(box.x + 1, box.y + panel.outlineRow * ch + 1, box.w - 2, ch - 2);
      }
    } else {  // no tokens: the frame, its title and why it is empty
      text(ctx, panel.empty || "(no tokens)", box.x + box.w / 2, box.y + box.h / 2, "center", "middle",
           TEXT_PX, th.muted);
    }
    axes(ctx, box, panel,
         cellTicks(extent[1], box.x, box.w, panel.colLabels, Math.floor(box.w / 40)),
         cellTicks(extent[0], box.y, box.h, panel.rowLabels, Math.floor(box.h / 16)), th);
    if (panel.colorbar === "" || panel.colorbar === false) { return; }  // shares another's
    // the colour bar: a strip of the map, its ticks and label
    var bar = {x: box.x + box.w + 8, y: box.y, w: 10, h: box.h};
    ctx.imageSmoothingEnabled = true;  // the map's 256 levels stretched over the bar's height
    ctx.drawImage(barImage(panel.cmap), 0, 0, 1, 256, bar.x, bar.y, bar.w, bar.h);
    ctx.strokeStyle = th.muted;
    ctx.strokeRect(bar.x - 0.5, bar.y - 0.5, bar.w + 1, bar.h + 1);
    var marks = panel.colorbarTicks || [panel.vmin, (panel.vmin + panel.vmax) / 2, panel.vmax];
    marks.forEach(function (v) {
      var at = bar.y + (panel.vmax - v) / (panel.vmax - panel.vmin) * bar.h;
      text(ctx, general(v, 3), bar.x + bar.w + 3, at, "left", "middle", TEXT_PX, th.text);
    });
    if (panel.colorbar) { rotatedText(ctx, panel.colorbar, bar.x + bar.w + 30, bar.y + bar.h / 2, th.text); }
  }

  var BARS = {};
  /** A colour map as a 1 x 256 image, the largest value on top (drawn once a map: a bar
   *  drawn a row at a time took 3 ms of fillRect a change, profiled in chromium). */
  function barImage(name) {
    if (!BARS[name]) {
      var c = document.createElement("canvas"), table = lut(name);
      c.width = 1;
      c.height = 256;
      var cctx = c.getContext("2d"), image = cctx.createImageData(1, 256);
      for (var y = 0; y < 256; y++) {
        image.data.set([table[3 * (255 - y)], table[3 * (255 - y) + 1], table[3 * (255 - y) + 2], 255], 4 * y);
      }
      cctx.putImageData(image, 0, 0);
      BARS[name] = c;
    }
    return BARS[name];
  }

  /** One query's weights as arcs: from the query (above) to every key (below), as wide as
   *  the weight and coloured by it (cividis), the heaviest drawn last (on top). */
  function drawArcs(ctx, panel, region, th) {
    var n = panel.weights.length, top = region.y + MARGIN.top + 14, bottom = region.y + region.h - 46;
    var left = region.x + 24, width = region.w - 48;
    fittedTitle(ctx, panel.title || "", region.x + region.w / 2, region.y + MARGIN.top - 8, region.w - 8, th);
    if (!n) {
      text(ctx, panel.empty || "(no tokens)", region.x + region.w / 2, (top + bottom) / 2, "center",
           "middle", TEXT_PX, th.muted);
      return;
    }
    function X(i) { return left + (n === 1 ? width / 2 : i / (n - 1) * width); }
    var xq = panel.queryAt === undefined ? X(panel.query) : left + panel.queryAt * width, most = 0, order = [], table = lut("cividis");
    for (var j = 0; j < n; j++) { most = Math.max(most, panel.weights[j]); order.push(j); }
    order.sort(function (a, b) { return panel.weights[a] - panel.weights[b]; });
    ctx.lineCap = "round";
    order.forEach(function (j) {
      var w = panel.weights[j], level = Math.round(255 * (0.15 + 0.85 * w / Math.max(most, 1e-12)));
      ctx.strokeStyle = "rgb(" + table[3 * level] + "," + table[3 * level + 1] + "," + table[3 * level + 2] + ")";
      ctx.lineWidth = 0.5 + 8 * w;
      ctx.beginPath();
      ctx.moveTo(xq, top);
      ctx.bezierCurveTo(xq, (top + bottom) / 2, X(j), (top + bottom) / 2, X(j), bottom);
      ctx.stroke();
    });
    ctx.fillStyle = th.muted;
    for (j = 0; j < n; j++) {
      ctx.beginPath();
      ctx.arc(X(j), bottom, 3, 0, 2 * Math.PI);
      ctx.fill();
    }
    ctx.fillStyle = ACCENT;
    ctx.beginPath();
    ctx.arc(xq, top, 5, 0, 2 * Math.PI);
    ctx.fill();
    // key tokens under their nodes: every one while they fit, else every k-th
    var tokens = panel.tokens || [], every = Math.max(1, Math.ceil(n * 16 / width));
    for (j = 0; j < n; j += every) {
      ctx.save();
      ctx.translate(X(j), bottom + 7);
      ctx.rotate(-Math.PI / 4);
      text(ctx, clip(String(tokens[j] === undefined ? j : tokens[j]), 10), 0, 0, "right", "middle",
           TEXT_PX, th.text);
      ctx.restore();
    }
  }

  /** Horizontal bars: one group a label (down), one bar a series, over xlim (a legend of
   *  the series on top). */
  function drawBars(ctx, panel, region, th) {
    ctx.font = TEXT_PX + "px " + FONT;
    var labelW = 0;
    panel.labels.forEach(function (l) { labelW = Math.max(labelW, ctx.measureText(l).width); });
    var box = {x: region.x + Math.min(labelW + 14, region.w * 0.45), y: region.y + MARGIN.top + 18,
               h: region.h - MARGIN.top - 18 - MARGIN.bottom};
    box.w = region.x + region.w - 16 - box.x;
    var lo = panel.xlim[0], hi = panel.xlim[1], n = panel.labels.length, k = panel.series.length;
    var group = box.h / Math.max(n, 1), bar = group * 0.8 / Math.max(k, 1);
    function X(v) { return box.x + (Math.min(Math.max(v, lo), hi) - lo) / (hi - lo) * box.w; }
    panel.series.forEach(function (series, j) {
      ctx.fillStyle = th.dark && series.dark ? series.dark : series.color;
      series.values.forEach(function (v, i) {
        if (v === null || v !== v) { return; }
        ctx.fillRect(X(lo), box.y + i * group + group * 0.1 + j * bar, X(v) - X(lo), bar - 1);
      });
      // legend, above the plot, left to right
      var lx = box.x + j * (box.w / k);
      ctx.fillRect(lx, region.y + MARGIN.top, 12, 10);
      text(ctx, series.label, lx + 16, region.y + MARGIN.top + 5, "left", "middle", TEXT_PX, th.text);
    });
    var xticks = [lo, (lo + hi) / 2, hi].map(function (v) { return {at: X(v), label: general(v, 3)}; });
    var yticks = panel.labels.map(function (l, i) { return {at: box.y + (i + 0.5) * group, label: l}; });
    axes(ctx, box, Object.assign({}, panel, {title: ""}), xticks, yticks, th);
    fittedTitle(ctx, panel.title || "", region.x + region.w / 2, region.y + MARGIN.top - 8, region.w - 8, th);
  }

  function clip(str, most) { return str.length > most ? str.slice(0, most - 1) + "\u2026" : str; }

  function drawLines(ctx, panel, region, th) {
    ctx.font = TEXT_PX + "px " + FONT;
    var legendW = 0;
    panel.lines.concat(panel.legendTitle ? [{label: panel.legendTitle}] : []).forEach(function (l) {
      legendW = Math.max(legendW, ctx.measureText(l.label).width);
    });
    legendW += 34;
    // a legend wider than a third of the panel goes inside the plot, top right, on a veil
    var inside = legendW > region.w / 3;
    var box = {x: region.x + MARGIN.left, y: region.y + MARGIN.top,
               w: region.w - MARGIN.left - (inside ? 16 : legendW + 14),
               h: region.h - MARGIN.top - MARGIN.bottom};
    var n = panel.n, lo = panel.ylim[0], hi = panel.ylim[1];
    var sx = box.w / Math.max(n, 1), log = !!panel.ylog || panel.yscale === "log";  // lo > 0
    var sy = box.h / (log ? Math.log(hi / lo) : hi - lo);
    function X(i) { return box.x + (i + 0.5) * sx; }   // x from -0.5 to n - 0.5
    function Y(v) { return box.y + (log ? Math.log(hi / v) : hi - v) * sy; }
    ctx.save();
    ctx.beginPath();
    ctx.rect(box.x, box.y, box.w, box.h);
    ctx.clip();
    if (panel.zero && !log) {
      ctx.strokeStyle = th.border;
      ctx.lineWidth = 0.8;
      ctx.beginPath();
      ctx.moveTo(box.x, Math.round(Y(0)) + 0.5);
      ctx.lineTo(box.x + box.w, Math.round(Y(0)) + 0.5);
      ctx.stroke();
    }
    // A dense line (more points than half its pixels) is stroked in runs of 32 points with
    // bevel joins: one stroke of a thick zigzag of 512 points took 11 ms to rasterise
    // (chapter 2's rotation check at d = 512), the runs about a tenth of that.
    var dense = n > box.w / 2, run = dense ? 32 : Infinity;
    ctx.lineJoin = dense ? "bevel" : "round";
    panel.lines.forEach(function (line) {
      ctx.strokeStyle = th.dark && line.dark ? line.dark : line.color;
      ctx.lineWidth = line.width * 1.2;
      ctx.setLineDash(line.dashed ? [5, 4] : []);
      ctx.beginPath();
      for (var i = 0; i < line.y.length; i++) {
        if (i === 0) { ctx.moveTo(X(i), Y(line.y[i])); } else { ctx.lineTo(X(i), Y(line.y[i])); }
        if (i % run === run - 1 && i < line.y.length - 1) {  // end this run; the next starts here
          ctx.stroke();
          ctx.beginPath();
          ctx.moveTo(X(i), Y(line.y[i]));
        }
      }
      if (line.y.length === 1) { ctx.lineTo(X(0) + 0.01, Y(line.y[0])); }
      ctx.stroke();
    });
    ctx.setLineDash([]);
    if (panel.marker !== undefined && panel.marker !== null) {  // e.g. the checkpoint shown
      ctx.strokeStyle = ACCENT;
      ctx.lineWidth = 1.5;
      ctx.setLineDash([4, 3]);
      ctx.beginPath();
      ctx.moveTo(Math.round(X(panel.marker)) + 0.5, box.y);
      ctx.lineTo(Math.round(X(panel.marker)) + 0.5, box.y + box.h);
      ctx.stroke();
      ctx.setLineDash([]);
      panel.lines.forEach(function (line) {  // a dot where each line crosses it
        var v = line.y[panel.marker];
        if (line.dashed || v === undefined || v !== v) { return; }
        ctx.fillStyle = th.dark && line.dark ? line.dark : line.color;
        ctx.beginPath();
        ctx.arc(X(panel.marker), Y(v), 3.5, 0, 2 * Math.PI);
        ctx.fill();
      });
    }
    ctx.restore();
    var xticks = wholeTicks(n, Math.max(2, Math.min(6, Math.floor(box.w / 45)))).map(function (t) {
      return {at: X(t), label: panel.xs ? general(panel.xs[t], 4) : String(t)};
    });
    var yticks = (panel.yticks || [lo, hi]).map(function (v) { return {at: Y(v), label: general(v, 3)}; });
    axes(ctx, box, panel, xticks, yticks, th);
    // legend, right of the plot (or inside it)
    var lx = inside ? box.x + box.w - legendW + 4 : box.x + box.w + 12, ly = box.y + 2;
    if (inside) {
      var rows = panel.lines.length + (panel.legendTitle ? 1 : 0);
      ctx.globalAlpha = 0.85;
      ctx.fillStyle = th.background;
      ctx.fillRect(lx - 6, ly - 2, legendW + 2, rows * 16 + 4);
      ctx.globalAlpha = 1;
    }
    if (panel.legendTitle) {
      text(ctx, panel.legendTitle, lx, ly, "left", "top", TEXT_PX, th.text);
      ly += 16;
    }
    panel.lines.forEach(function (line) {
      ctx.strokeStyle = th.dark && line.dark ? line.dark : line.color;
      ctx.lineWidth = line.width * 1.2;
      ctx.setLineDash(line.dashed ? [5, 4] : []);
      ctx.beginPath();
      ctx.moveTo(lx, ly + 7);
      ctx.lineTo(lx + 22, ly + 7);
      ctx.stroke();
      ctx.setLineDash([]);
      text(ctx, line.label, lx + 28, ly + 7, "left", "middle", TEXT_PX, th.text);
      ly += 16;
    });
  }

  /** Draw figure `spec` ({columns, panels}) on `canvas`, `width` CSS px wide. */
  function drawFigure(canvas, spec, width, th, scratch) {
    var columns = width >= 560 ? spec.columns || 1 : 1;
    var panelW = width / columns, panelH = Math.round(Math.max(210, Math.min(300, panelW * 0.62)));
    var rowsOfPanels = Math.ceil(spec.panels.length / columns), height = rowsOfPanels * panelH;
    var dpr = root.devicePixelRatio || 1;
    var pw = Math.round(width * dpr), ph = Math.round(height * dpr);
    // The backing store only grows in height: a figure with fewer panels draws in its top,
    // and the lab's frame (the canvas's parent, its overflow hidden) shows just that part.
    // A new height at each change of h reallocated 13 MB: 7 ms a change (chapter 4, h = 16).
    var frame = canvas.parentNode && canvas.parentNode.classList &&
      canvas.parentNode.classList.contains("ab-lab-figure") ? canvas.parentNode : null;
    if (canvas.width !== pw || canvas.height < ph || (!frame && canvas.height !== ph)) {
      canvas.width = pw;
      canvas.height = ph;
    }
    canvas.style.width = width + "px";
    canvas.style.height = canvas.height / dpr + "px";
    if (frame) {
      frame.style.height = height + "px";
      frame.style.overflow = "hidden";
    }
    var ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = th.background;
    ctx.fillRect(0, 0, width, height);
    spec.panels.forEach(function (panel, i) {
      var region = {x: (i % columns) * panelW, y: Math.floor(i / columns) * panelH, w: panelW, h: panelH};
      if (panel.kind === "heatmap") { drawHeatmap(ctx, panel, region, th, scratch); }
      else if (panel.kind === "lines") { drawLines(ctx, panel, region, th); }
      else if (panel.kind === "arcs") { drawArcs(ctx, panel, region, th); }
      else if (panel.kind === "bars") { drawBars(ctx, panel, region, th); }
      else { throw new Error("unknown panel kind " + panel.kind); }
    });
    canvas.setAttribute("data-text-px", String(TEXT_PX * dpr));  // the smallest text, in its pixels
  }

  // ------------------------------------------------------------------------ controls
  function make(tag, attrs, textContent) {
    var el = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { el.setAttribute(k, attrs[k]); });
    if (textContent !== undefined) { el.textContent = textContent; }
    return el;
  }

  /** The (label, value) pairs a listed control offers at first: every value it declares. */
  function declaredOptions(c) {
    return c.values.map(function (v, k) { return [c.labels ? c.labels[k] : String(v), v]; });
  }

  function sameOptions(a, b) { return JSON.stringify(a) === JSON.stringify(b); }

  /** One control's element from its declaration. Its input has abGet() (the value),
   *  abSet(value) (the input shows it; no event), abShow(value) (the slider's output) and, for
   *  listed controls, abOffer(options) (the choices now, [[label, value], ...]). */
  function control(c, id) {
    var wrap = make("span", {"class": "ab-lab-control"}), input, out = null;
    wrap.appendChild(c.kind === "multi" ? make("span", {id: id + "-label"}, c.label)
                                        : make("label", {"for": id}, c.label));
    var labelOf = function (v) {
      if (c.labels) { return c.labels[c.values.indexOf(v)]; }
      return String(v);
    };
    if (c.kind === "slider") {
      var stepped = !!c.range;  // an evenly spaced range: the input holds the value itself
      var min = stepped ? c.range[0] : 0, max = stepped ? c.range[1] : c.values.length - 1;
      var step = stepped ? c.range[2] : 1;
      var start = stepped ? c.default : c.values.indexOf(c.default);
      input = make("input", {type: "range", id: id, name: c.name, min: min, max: max, step: step,
                             value: start});
      out = make("output", {id: id + "-out", "for": id});
      input.abGet = function () {
        var k = parseInt(input.value, 10);
        return stepped ? k : c.values[k];
      };
      input.abSet = function (v) { input.value = String(stepped ? v : c.values.indexOf(v)); };
    } else if (c.kind === "choice") {
      input = make("select", {id: id, name: c.name});
      input.abOffer = function (options) {  // the option's value is its index in `options`
        var keep = input.abOptions ? input.abGet() : c.default;
        input.abOptions = options;
        input.textContent = "";
        options.forEach(function (o, k) { input.appendChild(make("option", {value: String(k)}, o[0])); });
        input.abSet(keep);
      };
      input.abGet = function () {
        var o = input.abOptions[parseInt(input.value, 10)];
        return o === undefined ? undefined : o[1];
      };
      input.abSet = function (v) {
        var k = input.abOptions.findIndex(function (o) { return o[1] === v; });
        input.value = String(k < 0 ? 0 : k);
      };
      input.abOffer(declaredOptions(c));
    } else if (c.kind === "multi") {  // a group of check boxes
      input = make("span", {id: id, role: "group", "aria-labelledby": id + "-label", "class": "ab-multi"});
      var chosen = c.default.slice();
      input.abOffer = function (options) {
        input.abOptions = options;
        input.textContent = "";
        options.forEach(function (o, k) {
          var box = make("input", {type: "checkbox", id: id + "-" + k, name: c.name, value: String(k)});
          box.checked = chosen.indexOf(o[1]) >= 0;
          var label = make("label", {"for": box.id, "class": "ab-multi-option"});
          label.appendChild(box);
          label.appendChild(document.createTextNode(" " + o[0]));
          input.appendChild(label);
        });
      };
      var boxes = function () { return input.querySelectorAll("input[type=checkbox]"); };
      input.abGet = function () {
        var on = [];
        boxes().forEach(function (b, k) { if (b.checked) { on.push(input.abOptions[k][1]); } });
        return on;
      };
      input.abSet = function (values) {
        chosen = values.slice();
        boxes().forEach(function (b, k) { b.checked = chosen.indexOf(input.abOptions[k][1]) >= 0; });
      };
      input.abOffer(declaredOptions(c));
      Object.defineProperty(input, "disabled", {
        get: function () { return input.hasAttribute("aria-disabled"); },
        set: function (off) {
          if (off) { input.setAttribute("aria-disabled", "true"); } else { input.removeAttribute("aria-disabled"); }
          input.querySelectorAll("input").forEach(function (b) { b.disabled = off; });
        },
      });
    } else if (c.kind === "toggle") {
      input = make("input", {type: "checkbox", id: id, name: c.name});
      input.checked = !!c.default;
      input.abGet = function () { return input.checked; };
      input.abSet = function (v) { input.checked = !!v; };
    } else if (c.kind === "text") {
      // no maxlength: a text over the lab's limit gets the state module's message, not a
      // silent cut
      input = make("input", {type: "text", id: id, name: c.name, placeholder: c.placeholder || "",
                             autocomplete: "off", spellcheck: "false"});
      if (c.suggestions && c.suggestions.length) {  // the book's sentences, one click away
        input.setAttribute("list", id + "-list");
        var list = make("datalist", {id: id + "-list"});
        [c.default].concat(c.suggestions).forEach(function (t) { list.appendChild(make("option", {value: t})); });
        wrap.appendChild(list);
      }
      input.value = c.default;
      input.abGet = function () { return input.value; };
      input.abSet = function (v) { input.value = v; };
    } else {
      throw new Error("the browser lab has no " + c.kind + " control (" + c.name + ")");
    }
    input.abShow = function (v) {
      if (out) {
        var shown = labelOf(v);
        out.textContent = shown;
        input.setAttribute("aria-valuetext", shown);
      }
    };
    wrap.appendChild(input);
    if (out) {
      wrap.appendChild(document.createTextNode(" "));
      wrap.appendChild(out);
    }
    if (c.hint) {
      var hint = make("span", {id: id + "-hint", "class": "ab-lab-hint"}, "(" + c.hint + ")");
      hint.hidden = true;
      wrap.appendChild(hint);
    }
    return {element: wrap, input: input};
  }

  /** Offer `options` on a listed control, as the live lab re-offers them: a selection takes
   *  every choice; a drop-down keeps its value if offered, else the largest value below it,
   *  else the first. */
  function reoffer(c, input, options) {
    if (sameOptions(input.abOptions, options)) { return; }
    var old = input.abGet(), values = options.map(function (o) { return o[1]; });
    input.abOffer(options);
    if (c.kind === "multi") {
      input.abSet(values);
    } else if (values.indexOf(old) < 0) {
      var below = values.filter(function (v) { return typeof v === "number" && v <= old; });
      input.abSet(below.length ? Math.max.apply(null, below) : values[0]);
    }
  }

  var OPS = {
    "==": function (a, b) { return a === b; }, "!=": function (a, b) { return a !== b; },
    ">": function (a, b) { return a > b; }, ">=": function (a, b) { return a >= b; },
    "<": function (a, b) { return a < b; }, "<=": function (a, b) { return a <= b; },
  };

  function active(c, values) {
    var w = c.active_when;
    return !w || OPS[w.op](values[w.name], w.value);
  }

  // -------------------------------------------------------------------------- readout
  /** The readout ({lines, notes}) as elements: every text through textContent. */
  function readoutElement(readout, styles) {
    var box = make("div", {"class": "ab-readout"});
    readout.lines.forEach(function (line) {
      var div = make("div", {}, line);
      if (readout.mono !== false) { div.style.fontFamily = "monospace"; }
      box.appendChild(div);
    });
    if (readout.notes && readout.notes.length) {
      var list = make("ul", {"class": "ab-notes", style: "list-style:none;padding:0;margin:4px 0"});
      readout.notes.forEach(function (note) {
        var style = styles[note.level] || styles.info;
        var item = make("li", {"class": "ab-note ab-note-" + note.level,
                               style: "color:" + style[1] + ";background:" + style[2] +
                                      ";padding:2px 6px;margin:2px 0;border-radius:3px"});
        item.appendChild(document.createTextNode(style[0] + " "));
        item.appendChild(make("b", {}, note.level + ":"));
        item.appendChild(document.createTextNode(" " + note.text));
        list.appendChild(item);
      });
      box.appendChild(list);
    }
    return box;
  }

  // ---------------------------------------------------------------------------- a lab
  function mount(el) {
    if (el.abLab) { return el.abLab; }  // mounted already
    var decl = JSON.parse(el.querySelector("script.ab-lab-data").textContent);
    var module = root.AttentionBook && root.AttentionBook[decl.module];
    var caption = el.querySelector(".ab-lab-readout");
    var figure = el.querySelector(".ab-lab-figure");
    if (!module) {
      caption.textContent = "This lab's script (" + decl.module + ".js) did not load.";
      return null;
    }
    var inputs = el.querySelector(".ab-lab-inputs");
    var controls = decl.controls.map(function (c, i) {
      var made = control(c, el.id + "-c" + i);
      inputs.appendChild(made.element);
      return made.input;
    });
    var canvas = make("canvas", {role: "img", "class": "ab-lab-canvas"});
    canvas.style.display = "block";
    canvas.style.maxWidth = "100%";
    figure.textContent = "";  // the no-script picture goes; the canvas draws the same state
    figure.appendChild(canvas);
    var scratch = document.createElement("canvas");
    var lab = {element: el, declaration: decl, module: module, canvas: canvas, controls: controls,
               state: null, spec: null, draws: 0, ticket: 0};

    function values() {
      var v = {};
      decl.controls.forEach(function (c, i) {
        if (c.dependent && module.choices) {  // its choices follow the controls before it
          reoffer(c, controls[i], module.choices(c.name, v));
        }
        v[c.name] = controls[i].abGet();
      });
      return v;
    }

    // The column's width and the theme's colours, read when they change (a resize, the
    // mode switch) and kept: reading them at every draw forced the page's layout and style
    // to be recomputed after each readout change, 5-9 ms on a chapter page.
    var looks = {width: null, theme: null};

    function width() {
      if (looks.width === null) { looks.width = figure.clientWidth || el.clientWidth || 600; }
      return Math.max(200, Math.min(decl.max_width || 760, Math.floor(looks.width)));
    }

    function redraw() {
      if (looks.theme === null) { looks.theme = theme(el); }
      if (lab.spec) { drawFigure(canvas, lab.spec, width(), looks.theme, scratch); }
    }

    function showError(err) {  // a clear message, and the last good picture stays
      caption.textContent = "";
      caption.appendChild(readoutElement(
        {lines: [], notes: [{level: "error", text: String(err && err.message || err)}]}, decl.note_styles));
    }

    function show(st, v) {
      lab.state = st;
      lab.values = v;
      lab.spec = module.figure(st);
      redraw();
      canvas.setAttribute("aria-label", module.alt(st));
      if (module.readoutHtml) {
        // the scene's readout as Python writes it: every reader-typed text escaped
        // (tests/test_web_states.py checks it equal to Python's, markup included)
        caption.innerHTML = module.readoutHtml(st);
      } else {
        caption.textContent = "";
        caption.appendChild(readoutElement(module.readout(st), decl.note_styles));
      }
      if (download) { download.disabled = false; }
    }

    /** Compute and draw the state of the controls' values. A module may answer with a
     *  Promise (a model run elsewhere): then this returns it, and an answer that a newer
     *  update made stale is dropped. */
    function update() {
      var v = values();
      decl.controls.forEach(function (c, i) {
        var on = active(c, v), hint = document.getElementById(controls[i].id + "-hint");
        controls[i].disabled = !on;
        if (hint) { hint.hidden = on; }
        controls[i].abShow(v[c.name]);
      });
      var ticket = ++lab.ticket, st;
      try {
        st = module.state(v);
      } catch (err) {
        showError(err);
        return null;
      }
      if (st && typeof st.then === "function") {
        return st.then(function (done) { if (ticket === lab.ticket) { show(done, v); } },
                       function (err) { if (ticket === lab.ticket) { showError(err); } });
      }
      show(st, v);
      return null;
    }

    /** Set control `name` to `value` as a reader would (the input shows it, then "input"). */
    function set(name, value) {
      var i = decl.controls.findIndex(function (c) { return c.name === name; });
      if (i < 0) { throw new Error("no control " + name); }
      values();  // dependent choices offered for the values now
      controls[i].abSet(value);
      controls[i].dispatchEvent(new Event("input", {bubbles: true}));
    }

    /** A control changed: compute and draw now, inside the input event, so that the frame
     *  the browser paints next shows it (waiting for an animation frame added half a frame
     *  on average: benchmarks/browser_lab.py). */
    function changed() {
      var t0 = performance.now();
      function drawn() {
        lab.draws += 1;
        // times (performance.now()): the input event and the draw's end
        el.dispatchEvent(new CustomEvent("ab-lab-drawn", {detail: {input: t0, drawn: performance.now()}}));
      }
      var later = update();
      if (later) { later.then(drawn); } else { drawn(); }
    }

    // the numbers shown, as JSON: a file the reader keeps (no request: a Blob made here)
    var download = null;
    if (module.numbers) {
      download = make("button", {type: "button", "class": "ab-download"}, "Download the numbers (JSON)");
      download.disabled = true;
      download.addEventListener("click", function () {
        var blob = new Blob([JSON.stringify(module.numbers(lab.state), null, 1)], {type: "application/json"});
        var a = make("a", {href: URL.createObjectURL(blob), download: decl.name + ".json"});
        document.body.appendChild(a);
        a.click();
        a.remove();
        setTimeout(function () { URL.revokeObjectURL(a.href); }, 0);
      });
      el.querySelector(".ab-lab-controls").appendChild(download);
    }
    if (module.mountExtra) {  // what only this lab needs (chapter 9: loading the model)
      var extra = make("div", {"class": "ab-lab-extra"});
      el.querySelector(".ab-lab-controls").appendChild(extra);
      module.mountExtra(lab, extra);
    }

    controls.forEach(function (input) {
      // every control fires "input" (a drop-down and a check box too): one draw a change
      input.addEventListener("input", changed);
    });
    lab.update = update;
    lab.redraw = redraw;
    lab.set = set;
    lab.values = values();
    // the column's width and the theme's mode change the drawing, not the state; the frame's
    // height, which each drawing sets, changes neither (redrawing on it drew twice)
    var resized = null;
    if (root.ResizeObserver) {
      new ResizeObserver(function (entries) {
        var w = Math.round(entries[entries.length - 1].contentRect.width);
        if (resized === null && w !== Math.round(looks.width)) {
          resized = root.requestAnimationFrame(function () {
            resized = null;
            looks.width = null;
            redraw();
          });
        }
      }).observe(figure);
    }
    new MutationObserver(function () { looks.theme = null; redraw(); }).observe(
      document.documentElement, {attributes: true, attributeFilter: ["data-theme", "data-mode"]});
    el.querySelector(".ab-lab-controls").hidden = false;
    el.abLab = lab;
    update();
    return lab;
  }

  /** Mount every lab once the page's scripts have run: the state modules load after this
   *  script (deferred scripts run in order, then DOMContentLoaded fires). */
  function start() {
    function all() { document.querySelectorAll(".ab-lab[data-ab-lab]").forEach(mount); }
    if (document.readyState === "complete") {
      all();
    } else {
      document.addEventListener("DOMContentLoaded", all);
      root.addEventListener("load", all);  // mount is idempotent: a late module still mounts
    }
  }

  return {format: format, lut: lut, colorize: colorize, wholeTicks: wholeTicks,
          drawFigure: drawFigure, mount: mount, start: start, LUT_HEX: LUT_HEX};
});
