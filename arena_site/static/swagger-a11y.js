// What the API docs page (templates/drf_spectacular/swagger_ui.html) adds to Swagger UI's own
// markup, which it redraws as operations open: a name for each form control it leaves unnamed
// (an enumerated parameter's drop-down, the request body's text area), a keyboard stop on each
// example code block (they scroll sideways), one main landmark (its operations list is a
// second <main> inside the page's), headings one level apart (tags under the title, sections
// under the tags), and a distinct name for each operation's responses region.
(function () {
  "use strict";
  var root = document.getElementById("swagger-ui");
  if (!root) { return; }

  function name(control) {
    var row = control.closest("tr[data-param-name]");
    if (row) {
      var where = row.getAttribute("data-param-in");
      return row.getAttribute("data-param-name") + (where ? " (" + where + ")" : "");
    }
    return control.classList.contains("body-param__text") ? "Request body" : null;
  }

  function fix() {
    root.querySelectorAll("select, textarea, input").forEach(function (control) {
      if (control.hasAttribute("aria-label") || control.labels && control.labels.length) { return; }
      var label = name(control);
      if (label) { control.setAttribute("aria-label", label); }
    });
    root.querySelectorAll("pre.microlight:not([tabindex])").forEach(function (el) {
      el.tabIndex = 0;
    });
    root.querySelectorAll("main:not([role])").forEach(function (el) {
      el.setAttribute("role", "region");
      el.setAttribute("aria-label", "Operations");
    });
    root.querySelectorAll("h3.opblock-tag:not([aria-level])").forEach(function (el) {
      el.setAttribute("aria-level", "2");
    });
    root.querySelectorAll("h4:not([aria-level])").forEach(function (el) {
      el.setAttribute("aria-level", "3");
    });
    root.querySelectorAll("table.responses-table[role=region]:not([aria-label])").forEach(function (el) {
      el.setAttribute("aria-label", "Responses (" + el.id.replace(/_responses$/, "") + ")");
    });
  }

  // Once per frame however many nodes Swagger UI adds in it.
  var queued = false;
  new MutationObserver(function () {
    if (queued) { return; }
    queued = true;
    requestAnimationFrame(function () { queued = false; fix(); });
  }).observe(root, {childList: true, subtree: true});
  fix();
})();
