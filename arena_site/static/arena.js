// Progressive enhancement of the server-rendered pages, no framework. Without JavaScript every
// page works as plain HTML (selectors submit with their button; sorting and filters as query
// parameters where the server supports them). With it:
//  - a selector in form.categories applies on change;
//  - a table with data-sortable sorts by any column header (buttons, aria-sort), numbers by
//    each cell's data-v, text by its content, empty cells last;
//  - form.board-tools filters its table's rows live by name (data-name), organisation
//    (data-org) and open weights (data-open), and keeps sort and filters in the URL
//    (?sort=&dir=&q=&org=&open=) so a link shows the same view.
(function () {
  "use strict";

  document.querySelectorAll("form.categories").forEach(function (form) {
    var select = form.querySelector("select");
    var button = form.querySelector("button[type=submit], button:not([type])");
    if (!select) { return; }
    select.addEventListener("change", function () {
      if (form.requestSubmit) { form.requestSubmit(); } else { form.submit(); }
    });
    if (button) { button.hidden = true; }
  });

  // A table wider than its box says so above it, and keeps its header and first column in
  // view (CSS on .scrolls); re-checked when the window changes size.
  var boxes = [].slice.call(document.querySelectorAll(".table-scroll"));
  function markScrolling() {
    boxes.forEach(function (box) {
      var scrolls = box.scrollWidth > box.clientWidth + 1;
      box.classList.toggle("scrolls", scrolls);
      var cue = box.previousElementSibling;
      if (!cue || !cue.classList.contains("scroll-cue")) {
        if (!scrolls) { return; }
        cue = document.createElement("p");
        cue.className = "scroll-cue";
        cue.setAttribute("aria-hidden", "true");
        cue.textContent = "More columns: scroll the table sideways \u2192";
        box.parentNode.insertBefore(cue, box);
      }
      cue.hidden = !scrolls;
    });
  }
  markScrolling();
  // A table inside a <details> has no width until it is opened.
  document.addEventListener("toggle", markScrolling, true);
  var resizeTimer = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(markScrolling, 150);
  });

  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) { return null; }
    if (cell.hasAttribute("data-v")) {
      var v = cell.getAttribute("data-v");
      return v === "" || v === "None" ? null : Number(v);
    }
    var text = cell.textContent.trim();
    return text === "" || text === "–" || text === "—" ? null : text.toLowerCase();
  }

  function Sorter(table, onChange) {
    this.table = table;
    this.body = table.tBodies[0];
    this.headers = [].slice.call(table.tHead.rows[0].cells);
    this.onChange = onChange || function () {};
    this.key = null;
    this.dir = null;
    var self = this;
    [].forEach.call(this.body.rows, function (r, i) { r.dataset.order = i; });
    this.headers.forEach(function (th, index) {
      if (!th.dataset.sort) { return; }
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      // The server's sort link (for readers without JavaScript) becomes this button: a link
      // inside a button would be two controls in one.
      var link = th.querySelector("a.sort-link");
      var from = link || th;
      while (from.firstChild) { button.appendChild(from.firstChild); }
      if (link) { link.remove(); }
      th.appendChild(button);
      button.addEventListener("click", function () {
        var first = th.dataset.dir || "desc";
        var dir = self.key === th.dataset.sort ? (self.dir === "asc" ? "desc" : "asc") : first;
        self.sort(th.dataset.sort, dir);
        self.onChange();
      });
      th.dataset.index = index;
    });
  }

  Sorter.prototype.header = function (key) {
    return this.headers.filter(function (th) { return th.dataset.sort === key; })[0];
  };

  Sorter.prototype.sort = function (key, dir) {
    var th = this.header(key);
    if (!th) { return false; }
    var index = Number(th.dataset.index);
    var sign = dir === "asc" ? 1 : -1;
    var rows = [].filter.call(this.body.rows, function (r) { return !r.classList.contains("empty"); });
    rows.sort(function (a, b) {
      var x = cellValue(a, index), y = cellValue(b, index);
      if (x === null || y === null) {
        if (x === y) { return a.dataset.order - b.dataset.order; }
        return x === null ? 1 : -1; // empty cells last, either direction
      }
      var c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      return c !== 0 ? sign * c : a.dataset.order - b.dataset.order;
    });
    var body = this.body;
    rows.forEach(function (r) { body.appendChild(r); });
    this.headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir === "asc" ? "ascending" : "descending");
    this.key = key;
    this.dir = dir;
    // Tiers (rows sharing a rank) are shaded only while the rows are in rank order.
    var natural = th.dataset.natural === dir;
    this.table.classList.toggle("unranked-order", !natural);
    return true;
  };

  document.querySelectorAll("table[data-sortable]").forEach(function (table) {
    if (table.dataset.enhanced) { return; }
    table.dataset.enhanced = "true";
    var form = document.querySelector('form.board-tools[data-for="' + table.id + '"]');
    if (!form) { new Sorter(table); return; }
    enhanceBoard(table, form);
  });

  function enhanceBoard(table, form) {
    var q = form.querySelector("[name=q]");
    var org = form.querySelector("[name=org]");
    var open = form.querySelector("[name=open]");
    var count = form.querySelector("output");
    var rows = [].filter.call(table.tBodies[0].rows, function (r) { return !r.classList.contains("empty"); });
    var noMatch = document.createElement("p");
    noMatch.className = "meta no-match";
    noMatch.hidden = true;
    noMatch.textContent = "No model matches these filters.";
    var box = table.closest(".table-scroll") || table;
    box.parentNode.insertBefore(noMatch, box.nextSibling);

    var sorter = new Sorter(table, sync);
    var params = new URLSearchParams(window.location.search);
    if (q && params.has("q")) { q.value = params.get("q"); }
    if (org && params.has("org")) { org.value = params.get("org"); }
    if (open && params.has("open")) { open.value = params.get("open"); }
    if (params.get("sort")) { sorter.sort(params.get("sort"), params.get("dir") === "asc" ? "asc" : "desc"); }

    function filter() {
      var needle = q ? q.value.trim().toLowerCase() : "";
      var shown = 0;
      rows.forEach(function (r) {
        var ok = (!needle || (r.dataset.name || "").indexOf(needle) !== -1) &&
          (!org || !org.value || r.dataset.org === org.value) &&
          (!open || !open.value || r.dataset.open === open.value);
        r.hidden = !ok;
        if (ok) { shown += 1; }
      });
      noMatch.hidden = shown > 0;
      table.classList.toggle("filtered", shown !== rows.length);
      if (count) {
        count.textContent = shown === rows.length ? "" : shown + " of " + rows.length + " models shown";
      }
    }

    function sync() {
      filter();
      var p = new URLSearchParams(window.location.search);
      [["q", q], ["org", org], ["open", open]].forEach(function (pair) {
        if (pair[1] && pair[1].value) { p.set(pair[0], pair[1].value.trim()); } else { p.delete(pair[0]); }
      });
      if (sorter.key) { p.set("sort", sorter.key); p.set("dir", sorter.dir); }
      var query = p.toString();
      window.history.replaceState(null, "", window.location.pathname + (query ? "?" + query : ""));
    }

    [q, org, open].forEach(function (el) {
      if (!el) { return; }
      el.addEventListener(el.tagName === "SELECT" ? "change" : "input", sync);
    });
    form.addEventListener("submit", function (e) { e.preventDefault(); sync(); });
    form.querySelectorAll("button[type=submit]").forEach(function (b) { b.hidden = true; });
    filter();
  }
})();
