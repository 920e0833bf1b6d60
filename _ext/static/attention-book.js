// The book's own script: every figure (explorer pictures and chapter figures) opens at full
// resolution in a dialog (its button, or a click on it), so its smallest text can be read on a
// phone, where the column shrinks it. No network, no library.
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

  function init() {
    document.querySelectorAll(".ab-explorer-figure").forEach(zoomable);
    document.querySelectorAll(".cell_output img").forEach(function (img) {
      if (!img.closest(".ab-explorer")) { zoomable(img); }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
