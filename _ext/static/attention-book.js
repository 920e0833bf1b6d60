// The book's own script: every chapter figure opens at full
// resolution in a dialog (its button, or a click on it), so its smallest text can be read on a
// phone, where the column shrinks it; and keyboard and screen-reader fixes to the theme's
// markup (accessible, below). No network, no library.
(function () {
  "use strict";

  function open(figure, opener) {
    const dialog = document.createElement("dialog");
    dialog.className = "ab-zoom";
    dialog.setAttribute("aria-label", "Enlarged figure");
    const close = document.createElement("button");
    close.type = "button";
    close.className = "ab-zoom-close";
    close.textContent = "Close \u00d7";
    close.addEventListener("click", () => { dialog.close(); });
    dialog.appendChild(close);
    const copy = figure.cloneNode(true);
    copy.removeAttribute("id");
    copy.classList.remove("ab-zoomable");
    copy.querySelectorAll("[id]").forEach((el) => { el.removeAttribute("id"); });
    const img = figure.tagName === "IMG" ? figure : figure.querySelector("img");
    // full resolution: one picture pixel to one CSS pixel (the page shows it at half)
    copy.style.width = img.naturalWidth + "px";
    copy.style.maxWidth = "none";
    dialog.appendChild(copy);
    dialog.addEventListener("close", () => { dialog.remove(); opener.focus(); });
    dialog.addEventListener("click", (event) => {
      if (event.target === dialog) { dialog.close(); }  // a click on the backdrop
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    close.focus();
  }

  // A real button after the figure (the figure keeps its alt text for screen readers); a
  // click on the figure itself does the same.
  // A chapter figure that Sphinx scaled sits in a link to its file: the button goes after
  // the link, and a click opens the dialog rather than leaving the page.
  function zoomable(figure) {
    const holder = figure.closest("a.image-reference") || figure;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "ab-zoom-button";
    button.textContent = "Enlarge figure";
    button.addEventListener("click", () => { open(figure, button); });
    figure.classList.add("ab-zoomable");
    holder.addEventListener("click", (event) => {
      event.preventDefault();
      open(figure, button);
    });
    holder.insertAdjacentElement("afterend", button);
  }

  // Keyboard and screen-reader fixes to markup that the theme and its extensions write
  // (tests/test_pages.py runs axe-core on every page):
  // - a control's accessible name contains its visible text (WCAG 2.5.3): sphinx-togglebutton
  //   names "Show code cell source" "Toggle hidden content", and the theme's buttons show
  //   icon titles and a shortcut hint that their names leave out;
  // - the bibliography's entries are list items of its list (doc-biblioentry is deprecated);
  // - tab stops (tabStops, below).
  function accessible() {
    document.querySelectorAll('summary[aria-label="Toggle hidden content"]').forEach(
      (el) => { el.removeAttribute("aria-label"); });
    // the theme's icons (drawn from its icon font: the page loads no fontawesome.js, see
    // _ext/ab_theme_fixes.py) are pictures of what their button or link says: hidden from
    // screen readers, as fontawesome.js hid the SVGs it drew; the mode switch is named
    // "Color mode", and its icons' titles (Light, Dark...) were read as its text
    document.querySelectorAll('i[class*="fa-"]').forEach((icon) => {
      icon.setAttribute("aria-hidden", "true");
      if (icon.closest(".theme-switch-button")) { icon.removeAttribute("title"); }
    });
    // the search field is named by its text, "Search"; the shortcut hint becomes a property
    document.querySelectorAll(".search-button-field").forEach((el) => {
      el.removeAttribute("aria-label");
      el.setAttribute("aria-keyshortcuts", "Control+K");
      el.querySelectorAll(".search-button__kbd-shortcut").forEach((hint) => {
        hint.setAttribute("aria-hidden", "true");
      });
    });
    document.querySelectorAll('[role="doc-biblioentry"]').forEach((el) => {
      el.setAttribute("role", "listitem");
    });
  }

  // A region that scrolls gets a tab stop, so a keyboard can reach and scroll it (WCAG
  // 2.1.1): the theme's rule for code and outputs (tabIndex 0 if it scrolls, else -1), and
  // ours for display maths, which MathJax typesets after the page loads (0, or none). To know
  // whether an element scrolls is to lay it out, and a section the reader has not reached is
  // not laid out yet (content-visibility: auto, attention-book.css): measured all at once, as
  // the theme did, the sections took 85-121 ms of CPU in one task (chapter 3). So each LAZY
  // section's own elements are measured in a task of their own, after the page loads and
  // after any change inside them (the theme's script leaves them to this one:
  // _ext/ab_theme_fixes.py's THEME_TAB_STOPS); until then each has a tab stop, so that none
  // that scrolls is ever without one.
  const SCROLLERS = "pre, .nboutput > .output_area, .cell_output > .output, " +
    ".jp-RenderedHTMLCommon, .pst-scrollable-table-container";
  const MATH = 'mjx-container[display="true"]';
  const LAZY = ".bd-article section section";

  function scrolls(el) {
    return el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight;
  }

  // the elements whose nearest LAZY section is `section` (null: those in none)
  function own(section, selector) {
    return Array.from((section || document).querySelectorAll(selector)).filter(
      (el) => { return el.closest(LAZY) === section; });
  }

  function tabStops(section) {
    if (section) {  // the theme's rule (outside the sections, the theme applies it)
      own(section, SCROLLERS).forEach((el) => { el.tabIndex = scrolls(el) ? 0 : -1; });
    }
    own(section, MATH).forEach((el) => {
      if (scrolls(el)) { el.tabIndex = 0; } else { el.removeAttribute("tabindex"); }
    });
  }

  const waiting = new Set(); let next = null;
  function measureOne() {
    const section = waiting.values().next().value;
    waiting.delete(section);
    tabStops(section);
    next = waiting.size ? setTimeout(measureOne, 0) : null;
    if (next === null) { document.documentElement.dataset.abTabStops = "measured"; }
  }
  // the elements outside the sections at once (laid out already), each section in a task
  function measure(sections) {
    sections.forEach((section) => {
      if (section === null) { tabStops(null); return; }
      own(section, SCROLLERS + ", " + MATH).forEach((el) => {
        if (!el.hasAttribute("tabindex") || el.tabIndex < 0) { el.tabIndex = 0; }
      });
      waiting.add(section);
    });
    if (next === null && waiting.size) {
      document.documentElement.dataset.abTabStops = "waiting";
      next = setTimeout(measureOne, 0);
    }
  }

  function debounced(f, ms) {
    let timer = null;
    return function () { clearTimeout(timer); timer = setTimeout(f, ms); };
  }

  function init() {
    document.querySelectorAll(".cell_output img").forEach((img) => {
      if (!img.closest(".ab-lab")) { zoomable(img); }
    });
    // again whenever the page's elements change (MathJax, the labs), its width or its
    // fonts: the fixes, and the tab stops of the sections that changed
    const fix = function (sections) {
      accessible();
      measure(sections);
      document.documentElement.dataset.abAccessible = "done";
    };
    const all = function () {
      fix([null].concat(Array.from(document.querySelectorAll(LAZY))));
    };
    let changed = new Set();
    const again = debounced(() => { fix(changed); changed = new Set(); }, 100);
    new MutationObserver((records) => {
      records.forEach((r) => {
        const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
        changed.add(el ? el.closest(LAZY) : null);
      });
      again();
    }).observe(document.body, {childList: true, subtree: true});
    window.addEventListener("resize", debounced(all, 100));
    // a web font that arrives (MathJax's) widens what it draws, with no change to the page
    document.fonts.addEventListener("loadingdone", debounced(all, 100));
    window.addEventListener("load", all);
    const mathjax = window.MathJax;
    if (mathjax && mathjax.startup && mathjax.startup.promise) {
      mathjax.startup.promise.then(all);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
