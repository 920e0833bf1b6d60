// The book's own script: every chapter figure opens at full
// resolution in a dialog (its button, or a click on it), so its smallest text can be read on a
// phone, where the column shrinks it; and keyboard and screen-reader fixes to the theme's
// markup (accessible, below). No network, no library.
(function () {
  "use strict";

  function open(figure, opener) {
    var dialog = document.createElement("dialog");
    dialog.className = "ab-zoom";
    dialog.setAttribute("aria-label", "Enlarged figure");
    var close = document.createElement("button");
    close.type = "button";
    close.className = "ab-zoom-close";
    close.textContent = "Close \u00d7";
    close.addEventListener("click", function () { dialog.close(); });
    dialog.appendChild(close);
    var copy = figure.cloneNode(true);
    copy.removeAttribute("id");
    copy.classList.remove("ab-zoomable");
    copy.querySelectorAll("[id]").forEach(function (el) { el.removeAttribute("id"); });
    var img = figure.tagName === "IMG" ? figure : figure.querySelector("img");
    // full resolution: one picture pixel to one CSS pixel (the page shows it at half)
    copy.style.width = img.naturalWidth + "px";
    copy.style.maxWidth = "none";
    dialog.appendChild(copy);
    dialog.addEventListener("close", function () { dialog.remove(); opener.focus(); });
    dialog.addEventListener("click", function (event) {
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
    var holder = figure.closest("a.image-reference") || figure;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "ab-zoom-button";
    button.textContent = "Enlarge figure";
    button.addEventListener("click", function () { open(figure, button); });
    figure.classList.add("ab-zoomable");
    holder.addEventListener("click", function (event) {
      event.preventDefault();
      open(figure, button);
    });
    holder.insertAdjacentElement("afterend", button);
  }

  // Keyboard and screen-reader fixes to markup that the theme and its extensions write
  // (tests/test_accessibility.py runs axe-core on every page):
  // - a region that scrolls sideways gets a tab stop, so a keyboard can reach and scroll it
  //   (WCAG 2.1.1). The theme does this for code, outputs and tables; display maths, which
  //   MathJax typesets after the page loads, is ours;
  // - a control's accessible name contains its visible text (WCAG 2.5.3): sphinx-togglebutton
  //   names "Show code cell source" "Toggle hidden content", and the theme's buttons show
  //   icon titles and a shortcut hint that their names leave out;
  // - the bibliography's entries are list items of its list (doc-biblioentry is deprecated).
  var SCROLLERS = 'mjx-container[display="true"]';

  function accessible() {
    document.querySelectorAll(SCROLLERS).forEach(function (el) {
      if (el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight) {
        el.tabIndex = 0;
      } else {
        el.removeAttribute("tabindex");
      }
    });
    document.querySelectorAll('summary[aria-label="Toggle hidden content"]').forEach(
      function (el) { el.removeAttribute("aria-label"); });
    // the mode switch is named "Color mode"; its icons' titles (Light, Dark...) were text
    document.querySelectorAll(".theme-switch-button svg").forEach(function (svg) {
      svg.querySelectorAll("title").forEach(function (t) { t.remove(); });
      svg.removeAttribute("aria-labelledby");
      svg.setAttribute("aria-hidden", "true");
    });
    // the search field is named by its text, "Search"; the shortcut hint becomes a property
    document.querySelectorAll(".search-button-field").forEach(function (el) {
      el.removeAttribute("aria-label");
      el.setAttribute("aria-keyshortcuts", "Control+K");
      el.querySelectorAll(".search-button__kbd-shortcut").forEach(function (hint) {
        hint.setAttribute("aria-hidden", "true");
      });
    });
    document.querySelectorAll('[role="doc-biblioentry"]').forEach(function (el) {
      el.setAttribute("role", "listitem");
    });
    document.documentElement.dataset.abAccessible = "done";
  }

  function debounced(f, ms) {
    var timer = null;
    return function () { clearTimeout(timer); timer = setTimeout(f, ms); };
  }

  function init() {
    document.querySelectorAll(".cell_output img").forEach(function (img) {
      if (!img.closest(".ab-lab")) { zoomable(img); }
    });
    // again whenever the page's elements change (MathJax, the theme's icons) or its width
    var again = debounced(accessible, 100);
    new MutationObserver(again).observe(document.body, {childList: true, subtree: true});
    window.addEventListener("resize", again);
    window.addEventListener("load", accessible);
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(accessible);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
