// Draw every chart whose figure JSON the server embedded next to it (see _charts.html).
document.querySelectorAll("figure.chart").forEach(function (el) {
  var data = document.getElementById(el.dataset.chart);
  if (!data) { return; }
  var fig = JSON.parse(data.textContent);
  Plotly.newPlot(el, fig.data, fig.layout, {responsive: true, displaylogo: false}).then(function () {
    el.dataset.rendered = "true";
  });
});
