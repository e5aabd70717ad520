// Draws the report's figures with Chart.js (embedded before this script) from the page's JSON
// data (the JSON <script> element "migscope-figures", from report/chart_data.cpp), then checks that every
// canvas shows its data and marks <body data-report-check="ok"> (the browser test reads it).
(function () {
  "use strict";
  var colors = ["#1f6fb4", "#d0342c", "#2c9c3c", "#8d5fbf", "#e07b10", "#7f5a4a", "#d45fb0"];

  // Min–max bars over points and bars that carry a range.
  var whiskers = {
    id: "migscopeWhiskers",
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx;
      chart.data.datasets.forEach(function (ds, i) {
        var meta = chart.getDatasetMeta(i);
        if (!ds.ranges || meta.hidden) return;
        var y = chart.scales[meta.yAxisID];
        ctx.save();
        ctx.strokeStyle = "#333";
        ctx.lineWidth = 1.2;
        meta.data.forEach(function (el, j) {
          var r = ds.ranges[j];
          if (!r) return;
          var top = y.getPixelForValue(r[1]), bottom = y.getPixelForValue(r[0]);
          ctx.beginPath();
          ctx.moveTo(el.x, top); ctx.lineTo(el.x, bottom);
          ctx.moveTo(el.x - 4, top); ctx.lineTo(el.x + 4, top);
          ctx.moveTo(el.x - 4, bottom); ctx.lineTo(el.x + 4, bottom);
          ctx.stroke();
        });
        ctx.restore();
      });
    }
  };

  // Labelled points: the label beside its point, turned to the left near the right edge.
  var pointLabels = {
    id: "migscopePointLabels",
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx;
      chart.data.datasets.forEach(function (ds, i) {
        if (!ds.pointLabels) return;
        ctx.save();
        ctx.font = "11px system-ui, sans-serif";
        ctx.fillStyle = "#222";
        chart.getDatasetMeta(i).data.forEach(function (el, j) {
          var text = ds.pointLabels[j] || "";
          var width = ctx.measureText(text).width;
          var x = el.x + 7 + width > chart.chartArea.right ? el.x - 7 - width : el.x + 7;
          ctx.fillText(text, Math.max(chart.chartArea.left, x), el.y - 7);
        });
        ctx.restore();
      });
    }
  };

  // Marked moments (style "markers"): a thin dashed vertical line through the plot at each,
  // behind the data, in the colour of the line they mark.
  var markerLines = {
    id: "migscopeMarkerLines",
    beforeDatasetsDraw: function (chart) {
      var ctx = chart.ctx, area = chart.chartArea;
      chart.data.datasets.forEach(function (ds, i) {
        var meta = chart.getDatasetMeta(i);
        if (!ds.markers || meta.hidden) return;
        ctx.save();
        ctx.strokeStyle = ds.borderColor + "80";
        ctx.lineWidth = 1;
        ctx.setLineDash([4, 4]);
        meta.data.forEach(function (el) {
          if (isNaN(el.x) || el.x < area.left || el.x > area.right) return;
          ctx.beginPath();
          ctx.moveTo(el.x, area.top); ctx.lineTo(el.x, area.bottom);
          ctx.stroke();
        });
        ctx.restore();
      });
    }
  };

  function dataset(series, index, bar) {
    var color = colors[index % colors.length];
    var ds = {
      label: series.title,
      borderColor: color,
      backgroundColor: bar ? color + "b0" : color,
      ranges: series.points.map(function (p) { return p.range || null; })
    };
    if (bar) {
      ds.data = series.points.map(function (p) { return p.y; });
      return ds;
    }
    ds.data = series.points.map(function (p) { return { x: p.x, y: p.y }; });
    ds.showLine = series.style === "lines" || series.style === "linespoints";
    ds.pointRadius = series.style === "lines" ? 0 : 3;
    ds.borderWidth = series.style === "lines" ? 1.2 : 2;
    if (series.style === "markers") {
      ds.markers = true;
      ds.showLine = false;
      ds.pointStyle = "triangle";
      ds.pointRadius = 5;
      ds.tips = series.points.map(function (p) { return p.label || null; });
    }
    if (series.style === "labelled") {
      ds.pointLabels = series.points.map(function (p) { return p.label || ""; });
      // Drawn first: a line through some of the same points (the Pareto front) stays visible.
      ds.order = 1;
    }
    return ds;
  }

  function draw(fig) {
    var bar = fig.kind === "bar";
    var datasets = [];
    var categories = [];
    if (bar) {
      // Bars stand at their category; a series' points carry the category's index as x.
      categories = fig.categories;
      fig.series.forEach(function (s, i) {
        var full = { title: s.title, style: s.style, points: categories.map(function () { return { y: null }; }) };
        s.points.forEach(function (p) { full.points[p.x] = p; });
        datasets.push(dataset(full, i, true));
      });
    } else {
      // Markers take the colour of the series they mark (the one before them).
      var color = -1;
      fig.series.forEach(function (s) {
        if (s.style !== "markers" || color < 0) color++;
        datasets.push(dataset(s, color, false));
      });
    }
    if (fig.reference !== null) {
      var line = { label: bar ? "sequential baseline" : "reference", type: "line",
                   borderColor: "#555", borderDash: [6, 4], borderWidth: 1.5, pointRadius: 0,
                   backgroundColor: "#555" };
      line.data = bar ? categories.map(function () { return fig.reference; }) : [];
      datasets.push(line);
    }
    var x = bar ? { title: { display: fig.x.label !== "", text: fig.x.label } }
                : { type: "linear", beginAtZero: fig.x.fromZero,
                    title: { display: fig.x.label !== "", text: fig.x.label } };
    var y = { beginAtZero: fig.y.fromZero, title: { display: fig.y.label !== "", text: fig.y.label } };
    // The axis holds the min–max bars too, not only the medians.
    fig.series.forEach(function (s) {
      s.points.forEach(function (p) {
        if (!p.range) return;
        y.suggestedMin = Math.min(y.suggestedMin === undefined ? p.range[0] : y.suggestedMin, p.range[0]);
        y.suggestedMax = Math.max(y.suggestedMax === undefined ? p.range[1] : y.suggestedMax, p.range[1]);
      });
    });
    var plugins = {
      title: { display: true, text: fig.title, font: { size: 14 } },
      legend: { labels: { filter: function (item) { return item.text !== ""; } } }
    };
    if (fig.series.some(function (s) { return s.style === "markers"; })) {
      // A marker's tooltip is its own text (what changed, when); other points keep (x, y).
      plugins.tooltip = { callbacks: { label: function (item) {
        var tips = item.dataset.tips;
        if (tips && tips[item.dataIndex]) return tips[item.dataIndex];
        return (item.dataset.label ? item.dataset.label + ": " : "") +
               "(" + item.label + ", " + item.formattedValue + ")";
      } } };
    }
    var canvas = document.getElementById(fig.canvas);
    return new Chart(canvas, {
      type: bar ? "bar" : "scatter",
      data: { labels: categories, datasets: datasets },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: true,
        aspectRatio: 1.7,
        scales: { x: x, y: y },
        plugins: plugins
      },
      plugins: [whiskers, pointLabels, markerLines]
    });
  }

  // A chart shows its data when the pixel under its first data element is not blank.
  function shows_data(chart) {
    var ratio = chart.currentDevicePixelRatio || 1;
    var ctx = chart.canvas.getContext("2d");
    for (var i = 0; i < chart.data.datasets.length; i++) {
      var elements = chart.getDatasetMeta(i).data;
      for (var j = 0; j < elements.length; j++) {
        var el = elements[j];
        var value = chart.data.datasets[i].data[j];
        if (value === null || value === undefined || isNaN(el.x) || isNaN(el.y)) continue;
        var y = el.base !== undefined ? (el.y + el.base) / 2 : el.y;
        var pixel = ctx.getImageData(Math.round(el.x * ratio), Math.round(y * ratio), 1, 1).data;
        return pixel[3] !== 0;
      }
    }
    return false;
  }

  var figures = JSON.parse(document.getElementById("migscope-figures").textContent);
  var drawn = 0;
  figures.forEach(function (fig) {
    if (shows_data(draw(fig))) drawn++;
  });
  var expected = Number(document.body.getAttribute("data-figures"));
  document.body.setAttribute("data-plots-drawn", String(drawn));
  document.body.setAttribute("data-page-width", String(document.documentElement.scrollWidth));
  document.body.setAttribute("data-report-check",
      drawn === expected && figures.length === expected ? "ok" : "missing plots");
})();
