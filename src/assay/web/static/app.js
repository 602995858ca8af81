// assay's control plane: the little the pages need beyond HTML and htmx. Charts are drawn with
// uPlot from the JSON the server put in the page (<script type="application/json">); the same
// numbers are in a table next to each chart, so nothing here is needed to read them.
(function () {
  "use strict";

  function drawCharts(root) {
    if (typeof uPlot === "undefined") return;
    root.querySelectorAll("[data-chart]").forEach(function (box) {
      if (box.dataset.drawn) return;
      var source = document.getElementById(box.dataset.chart);
      if (!source) return;
      var points = JSON.parse(source.textContent);
      box.dataset.drawn = "1";
      if (!points.length) return;
      var xs = [], observed = [], low = [], high = [], failed = [];
      points.forEach(function (p) {
        xs.push(Date.parse(p.at) / 1000);
        observed.push(p.observed);
        low.push(p.low);
        high.push(p.high);
        failed.push(p.outcome === "failed" ? p.observed : null);
      });
      var styles = getComputedStyle(document.documentElement);
      var failedColour = styles.getPropertyValue("--failed").trim() || "#b42318";
      var link = styles.getPropertyValue("--link").trim() || "#0550ae";
      var band = styles.getPropertyValue("--band").trim() || "rgba(5,80,174,.12)";
      var width = Math.max(320, box.clientWidth - 16);
      var options = {
        width: width,
        height: 300,
        title: box.dataset.title || "",
        scales: { x: { time: true } },
        series: [
          {},
          { label: "high", stroke: "rgba(5,80,174,.35)", dash: [4, 4], points: { show: false } },
          { label: "low", stroke: "rgba(5,80,174,.35)", dash: [4, 4], points: { show: false } },
          { label: box.dataset.metric || "observed", stroke: link, width: 2, points: { size: 5 } },
          {
            label: "failed",
            stroke: failedColour,
            width: 0,
            paths: function () { return null; },
            points: { show: true, size: 11, stroke: failedColour, fill: failedColour },
          },
        ],
        bands: [{ series: [1, 2], fill: band }],
        legend: { live: true },
      };
      new uPlot(options, [xs, high, low, observed, failed], box);
    });
  }

  // A group picker changes the page as soon as a group is chosen (the Show button does it
  // without scripts).
  function autoSubmit(root) {
    root.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
      select.addEventListener("change", function () { select.form.requestSubmit(); });
    });
  }

  function ready(root) {
    drawCharts(root);
    autoSubmit(root);
  }

  document.addEventListener("DOMContentLoaded", function () { ready(document); });
  document.addEventListener("htmx:afterSettle", function (event) { ready(event.target); });
})();
