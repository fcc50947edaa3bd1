// Draws each chart whose plotly figure JSON the server embedded in its <figure> (see
// templates/leaderboard/_charts.html), once the figure comes near the viewport: a visitor who
// never scrolls to the charts never downloads or runs plotly.js. The figure is adapted to
// the width it gets: on phones, category charts turn horizontal (every name readable),
// heatmaps keep readable cells and scroll sideways (their row names stay in view), the toolbar
// goes, values show on touch.
(function () {
  "use strict";
  var NARROW = 640; // px of plot width below which the phone layout applies
  var plotlyUrl = document.currentScript && document.currentScript.dataset.plotly;
  var loading = null;

  function loadPlotly() {
    if (window.Plotly) { return Promise.resolve(window.Plotly); }
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = plotlyUrl;
        s.onload = function () { resolve(window.Plotly); };
        s.onerror = function () { reject(new Error("plotly.js did not load from " + plotlyUrl)); };
        document.head.appendChild(s);
      });
    }
    return loading;
  }

  function isCategorical(values) {
    // Names, not numbers or ISO dates: the axis that drops labels when space runs out.
    return Array.isArray(values) && values.length > 0 && values.every(function (v) {
      return typeof v === "string" && !/^\d{4}-\d\d-\d\d/.test(v) && isNaN(Number(v));
    });
  }

  function isDates(values) {
    return Array.isArray(values) && values.length > 0 && values.every(function (v) {
      return typeof v === "string" && /^\d{4}-\d\d-\d\dT?/.test(v);
    });
  }

  function swapXY(template) {
    return template && template.replace(/%\{x/g, "%{_X").replace(/%\{y/g, "%{x").replace(/%\{_X/g, "%{y");
  }

  function horizontal(data, layout) {
    // Categories on the y axis, first one on top; error bars and hover text follow.
    var n = 0;
    data.forEach(function (t) {
      var x = t.x;
      t.x = t.y; t.y = x;
      if (t.error_y) { t.error_x = t.error_y; delete t.error_y; }
      if (t.type === "bar") { t.orientation = "h"; }
      if (t.hovertemplate) { t.hovertemplate = swapXY(t.hovertemplate); }
      n = Math.max(n, t.y.length);
    });
    var xa = layout.xaxis || {}, ya = layout.yaxis || {};
    layout.xaxis = ya; layout.yaxis = xa;
    layout.yaxis.autorange = "reversed";
    layout.yaxis.automargin = true;
    layout.xaxis.nticks = 5;
    if (data.length > 1) { layout.legend = {orientation: "h", x: 0, y: 1, yanchor: "bottom"}; }
    var perRow = layout.barmode === "group" ? 18 * data.length + 8 : 26;
    layout.height = Math.max(200, 90 + perRow * n);
  }

  function adapt(fig, width) {
    var data = JSON.parse(JSON.stringify(fig.data));
    var layout = JSON.parse(JSON.stringify(fig.layout));
    var narrow = width < NARROW;
    var menus = layout.updatemenus && layout.updatemenus.length;
    var result = {data: data, layout: layout, minWidth: 0};
    delete layout.width;
    layout.autosize = true;
    // The <figcaption> carries the title as wrapping HTML text (no clash with the toolbar),
    // except where a menu rewrites the title in place.
    if (!menus) {
      layout.title = {text: ""};
      layout.margin = Object.assign({}, layout.margin, {t: 20});
    }
    data.forEach(function (t) {
      if (t.type !== "heatmap") { return; }
      t.colorbar = Object.assign({thickness: 12}, t.colorbar);
      t.hoverongaps = false;
    });
    var dates = data.length && data.every(function (t) { return isDates(t.x); });
    if (dates) {
      // One or two snapshots: whole minutes, and a range of a day around a single point.
      var xs = [].concat.apply([], data.map(function (t) { return t.x; })).map(Date.parse);
      var lo = Math.min.apply(null, xs), hi = Math.max.apply(null, xs);
      layout.xaxis = Object.assign({}, layout.xaxis, {tickformat: "%b %-d<br>%H:%M", hoverformat: "%Y-%m-%d %H:%M UTC", nticks: narrow ? 4 : 8});
      if (hi - lo < 3600e3) {
        layout.xaxis.range = [new Date(lo - 43200e3).toISOString(), new Date(hi + 43200e3).toISOString()];
      }
    }
    if (!narrow) { return result; }
    layout.font = Object.assign({}, layout.font, {size: 11});
    layout.margin = Object.assign({}, layout.margin, {l: 10, r: 10, b: 40});
    layout.yaxis = Object.assign({automargin: true}, layout.yaxis);
    layout.xaxis = Object.assign({automargin: true}, layout.xaxis);
    var heat = data.some(function (t) { return t.type === "heatmap"; });
    if (heat) {
      // Cells wide enough for their numbers; the figure scrolls sideways instead of shrinking.
      var cols = Math.max.apply(null, data.map(function (t) { return (t.x || []).length; }));
      result.minWidth = 150 + 40 * cols + 70;
      data.forEach(function (t) { t.textfont = Object.assign({size: 10}, t.textfont); });
    } else if (data.every(function (t) { return (t.type === "scatter" || t.type === "bar") && isCategorical(t.x); })) {
      horizontal(data, layout);
    } else {
      layout.xaxis.nticks = 5;
      layout.yaxis.nticks = 6;
      data.forEach(function (t) {
        // Point names overlap on a phone: they stay in the hover (tap) text.
        if (t.mode && t.mode.indexOf("text") !== -1) { t.mode = "markers"; }
      });
    }
    if (menus) {
      // The title stays in the plot (the menu rewrites it): wrap it, and every menu entry's.
      var chars = Math.max(20, Math.floor((width - 30) / 6.5));
      var lines = 1;
      var wrapped = function (title) {
        var t = Object.assign({}, title, {font: Object.assign({}, title && title.font, {size: 11})});
        t.text = wrap(t.text || "", chars);
        lines = Math.max(lines, t.text.split("<br>").length);
        return t;
      };
      layout.title = wrapped(layout.title);
      layout.updatemenus.forEach(function (menu) {
        (menu.buttons || []).forEach(function (b) {
          if (b.args && b.args[1] && b.args[1].title) { b.args[1].title = wrapped(b.args[1].title); }
        });
      });
      layout.margin.t = 75 + 15 * lines;
      Object.assign(layout.title, {y: 1, yanchor: "top", yref: "container", automargin: true, pad: {t: 8}});
    }
    return result;
  }

  function wrap(text, chars) {
    // Break at ", " or ": " so that no line is longer than chars (where possible).
    var parts = text.split(/(?<=[,:]) (?![^\[]*\])/);
    var lines = [""];
    parts.forEach(function (p) {
      var last = lines[lines.length - 1];
      if (last && (last + " " + p).length > chars) { lines.push(p); } else { lines[lines.length - 1] = last ? last + " " + p : p; }
    });
    return lines.join("<br>");
  }

  function config(width) {
    var c = {responsive: true, displaylogo: false};
    if (width < NARROW) { c.displayModeBar = false; } else { c.modeBarButtons = [["toImage"]]; }
    return c;
  }

  function Chart(el) {
    this.el = el;
    this.wrap = el.querySelector(".plot-wrap");
    this.plot = el.querySelector(".plot");
    var json = el.querySelector('script[type="application/json"]');
    this.fig = json ? JSON.parse(json.textContent) : null;
    this.narrow = null;
    if (this.fig && this.fig.layout && this.fig.layout.updatemenus && this.fig.layout.updatemenus.length) {
      el.querySelector("figcaption").classList.add("visually-hidden");
    }
    this.reserve();
  }

  Chart.prototype.width = function () { return this.wrap.clientWidth; };

  Chart.prototype.reserve = function () {
    // Hold the final height before drawing, so the page does not jump when it appears.
    if (!this.fig) { return; }
    var a = adapt(this.fig, this.width());
    this.plot.style.minHeight = (a.layout.height || 420) + "px";
  };

  Chart.prototype.draw = function (Plotly) {
    if (!this.fig) { return Promise.resolve(); }
    var width = this.width();
    var a = adapt(this.fig, width);
    var narrow = width < NARROW;
    this.narrow = narrow;
    this.plot.style.minWidth = a.minWidth ? a.minWidth + "px" : "";
    var scrolls = a.minWidth > width;
    // A region that scrolls must be reachable by keyboard, and named.
    if (scrolls) {
      this.wrap.tabIndex = 0;
      this.wrap.setAttribute("role", "region");
      this.wrap.setAttribute("aria-label", this.el.querySelector("figcaption").textContent + " (scrolls sideways)");
    } else {
      this.wrap.removeAttribute("tabindex");
      this.wrap.removeAttribute("role");
      this.wrap.removeAttribute("aria-label");
    }
    this.el.classList.toggle("scrolls", scrolls);
    var el = this.el;
    var placeholder = this.plot.querySelector(".plot-placeholder");
    if (placeholder) { placeholder.remove(); }
    var chart = this;
    var heat = a.data.some(function (t) { return t.type === "heatmap"; });
    return Plotly.react(this.plot, a.data, a.layout, config(width)).then(function () {
      chart.rowLabels(scrolls && heat);
      el.dataset.rendered = "true";
    });
  };

  Chart.prototype.rowLabels = function (show) {
    // A heatmap that scrolls sideways would take its row names with it: a copy of them is
    // laid over the box's left edge, outside the scrolled plot, where they stay like a table's
    // sticky first column. Decorative for screen readers: the table below carries the names.
    var old = this.el.querySelector(".row-labels");
    if (old) { old.remove(); }
    var ticks = [].slice.call(this.plot.querySelectorAll(".yaxislayer-above .ytick text"));
    var area = this.plot.querySelector(".nsewdrag");
    if (!show || !ticks.length || !area) { return; }
    var box = this.wrap.getBoundingClientRect();
    var plot = area.getBoundingClientRect();
    var rects = ticks.map(function (t) { return t.getBoundingClientRect(); });
    var left = Math.min.apply(null, rects.map(function (r) { return r.left; })) - 4;
    var column = document.createElement("div");
    column.className = "row-labels";
    column.setAttribute("aria-hidden", "true");
    column.style.left = this.wrap.offsetLeft + (left - box.left) + "px";
    column.style.top = this.wrap.offsetTop + (plot.top - box.top) + "px";
    column.style.width = plot.left - left + "px";
    column.style.height = plot.height + "px";
    ticks.forEach(function (t, i) {
      var label = document.createElement("span");
      label.textContent = t.textContent;
      label.style.top = rects[i].top + rects[i].height / 2 - plot.top + "px";
      label.style.right = plot.left - rects[i].right + "px";
      label.style.fontFamily = t.style.fontFamily;
      label.style.fontSize = t.style.fontSize;
      label.style.color = t.style.fill;
      column.appendChild(label);
    });
    this.el.appendChild(column);
  };

  var charts = [].map.call(document.querySelectorAll("figure.chart"), function (el) { return new Chart(el); });
  var pending = charts.slice();

  function drawQueued(list) {
    // One chart per task: the main thread stays responsive between charts.
    loadPlotly().then(function (Plotly) {
      var i = 0;
      (function next() {
        if (i >= list.length) { return; }
        list[i++].draw(Plotly).then(function () { setTimeout(next, 0); });
      })();
    }).catch(function (err) {
      list.forEach(function (c) {
        c.el.querySelector(".plot").textContent = "The chart could not be drawn: " + err.message;
      });
    });
  }

  function take(chart) {
    var i = pending.indexOf(chart);
    if (i !== -1) { pending.splice(i, 1); }
    return i !== -1;
  }

  if ("IntersectionObserver" in window) {
    var observer = new IntersectionObserver(function (entries) {
      var now = [];
      entries.forEach(function (e) {
        if (!e.isIntersecting) { return; }
        var chart = charts.filter(function (c) { return c.el === e.target; })[0];
        observer.unobserve(e.target);
        if (chart && take(chart)) { now.push(chart); }
      });
      if (now.length) { drawQueued(now); }
    }, {rootMargin: "300px 0px"});
    charts.forEach(function (c) { observer.observe(c.el); });
  } else {
    drawQueued(pending.splice(0));
  }

  // Crossing the phone breakpoint (rotation, window resize) redraws with the other layout.
  var timer = null;
  window.addEventListener("resize", function () {
    clearTimeout(timer);
    timer = setTimeout(function () {
      if (!window.Plotly) { return; }
      charts.forEach(function (c) {
        if (c.narrow !== null && (c.width() < NARROW) !== c.narrow) { c.draw(window.Plotly); }
      });
    }, 200);
  });
})();
