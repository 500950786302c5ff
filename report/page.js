// Draws a report's plots in the browser with uPlot (inlined before this script). Reads the charts that
// report/charts.ts built from the JSON in #report-data; decides nothing itself. Kept as plain ES2019 so any
// browser opening the file from disk runs it.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var plots = [];

  function fmt(v) {
    if (v === null || v === undefined || !isFinite(v)) return '-';
    var a = Math.abs(v);
    return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(2) : String(Math.round(v * 1e4) / 1e4);
  }

  // Stacked bars: each part drawn as a bar from 0 to the sum of it and the parts below it, tallest first.
  function stack(chart) {
    var n = chart.series.length;
    var sums = chart.series.map(function () { return []; });
    for (var i = 0; i < chart.x.length; i++) {
      var acc = 0, any = false;
      for (var s = 0; s < n; s++) {
        var v = chart.series[s].values[i];
        if (v !== null) { acc += v; any = true; }
        sums[s][i] = any ? acc : null;
      }
    }
    var order = chart.series.map(function (_, s) { return s; }).reverse();
    return { order: order, ys: order.map(function (s) { return sums[s]; }) };
  }

  var STEP_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000];

  // A flat series (all rewards 0, say) gets a band around its value instead of uPlot's default 0..100.
  function yRange(u, min, max) {
    if (min === null || max === null) return [0, 1];
    if (min === max) return [min - (Math.abs(min) || 1) * 0.5, max + (Math.abs(max) || 1) * 0.5];
    var pad = (max - min) * 0.05;
    return [min - pad, max + pad];
  }

  function drawMarkers(u, markers) {
    var ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = '#555';
    ctx.fillStyle = '#333';
    ctx.setLineDash([4, 4]);
    ctx.font = Math.round(11 * devicePixelRatio) + 'px sans-serif';
    markers.forEach(function (m) {
      var x = Math.round(u.valToPos(m.x, 'x', true));
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      ctx.fillText(m.label, x + 4, u.bbox.top + 12 * devicePixelRatio);
    });
    ctx.restore();
  }

  data.charts.forEach(function (chart) {
    var el = document.getElementById('chart-' + chart.id);
    var order = chart.series.map(function (_, s) { return s; });
    var ys = chart.series.map(function (s) { return s.values; });
    if (chart.stacked) {
      var st = stack(chart);
      order = st.order;
      ys = st.ys;
    }
    var many = chart.x.length > 60;
    var series = [{ label: 'step' }].concat(order.map(function (s) {
      var spec = chart.series[s];
      var opt = {
        label: spec.label,
        stroke: spec.color,
        width: 2,
        dash: spec.dash,
        spanGaps: true,
        points: { show: spec.points || !many, size: spec.points ? 7 : 4 },
        value: function (u, v, si, i) { return fmt(i === null || i === undefined ? v : spec.values[i]); },
      };
      if (chart.stacked) {
        opt.fill = spec.color;
        opt.points = { show: false };
        opt.paths = uPlot.paths.bars({ size: [0.7, 40] });
      }
      return opt;
    }));
    var opts = {
      width: Math.max(320, el.clientWidth),
      height: 260,
      scales: {
        // Bars need half a step of room at each end.
        x: { time: false, range: function (u, min, max) { return chart.stacked ? [min - 0.5, max + 0.5] : min === max ? [min - 1, max + 1] : [min, max]; } },
        y: { range: chart.stacked ? function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; } : yRange },
      },
      axes: [{ label: 'step', incrs: STEP_INCRS }, { size: 60, values: function (u, vals) { return vals.map(fmt); } }],
      cursor: { sync: { key: 'steps' } },
      series: series,
      hooks: { draw: [function (u) { drawMarkers(u, chart.markers); }] },
    };
    plots.push({ id: chart.id, chart: chart, plot: new uPlot(opts, [chart.x].concat(ys), el) });
  });

  window.addEventListener('resize', function () {
    plots.forEach(function (p) {
      var el = document.getElementById('chart-' + p.id);
      p.plot.setSize({ width: Math.max(320, el.clientWidth), height: 260 });
    });
  });
  // For whoever wants to look inside (the browser test does): the charts and their uPlot instances.
  window.aglReport = { data: data, plots: plots };
})();
