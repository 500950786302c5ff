// Draws a report's plots in the browser with uPlot (inlined before this script). Reads the charts that
// report/charts.ts built from the JSON in #report-data; what it adds is view state only: the smoothing slider
// (an EMA over the drawn values, debiased as TensorBoard's and W&B's are) and the x axis (step, or time since the
// run's start). Kept as plain ES2019 so any browser opening the file from disk runs it.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var plots = [];
  var view = { smoothing: 0, axis: 'step' };

  function fmt(v) {
    if (v === null || v === undefined || !isFinite(v)) return '-';
    var a = Math.abs(v);
    return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(2) : String(Math.round(v * 1e4) / 1e4);
  }

  // Exponential moving average over the values present (gaps stay gaps), divided by 1 - w^n so the first points
  // are not pulled toward 0.
  function ema(values, w) {
    if (!(w > 0)) return values;
    var s = 0, n = 0;
    return values.map(function (v) {
      if (v === null) return null;
      n++;
      s = w * s + (1 - w) * v;
      return s / (1 - Math.pow(w, n));
    });
  }

  // Stacked bars: each part drawn as a bar from 0 to the sum of it and the parts below it, tallest first.
  function stack(series, len) {
    var n = series.length;
    var sums = series.map(function () { return []; });
    for (var i = 0; i < len; i++) {
      var acc = 0, any = false;
      for (var s = 0; s < n; s++) {
        var v = series[s].values[i];
        if (v !== null) { acc += v; any = true; }
        sums[s][i] = any ? acc : null;
      }
    }
    var order = series.map(function (_, s) { return s; }).reverse();
    return { order: order, ys: order.map(function (s) { return sums[s]; }) };
  }

  // Seconds since the run's start at the end of a step, or null when the run logged no step time for it.
  function secondsAt(run, step) {
    var c = data.clocks[run];
    var i = c ? c.steps.indexOf(step) : -1;
    return i < 0 ? null : c.seconds[i];
  }
  // Where a configure marker goes on the time axis: the end of the step before it (0 for step 0).
  function markerSeconds(m) {
    if (m.x === 0) return 0;
    var c = data.clocks[m.run];
    var t = null;
    if (c) for (var i = 0; i < c.steps.length; i++) if (c.steps[i] < m.x) t = c.seconds[i];
    return t;
  }

  // The chart's series on the chosen x axis: on time, every run has its own steps' times, so the x values are
  // the union of them and each series is null where it has no point.
  function aligned(chart) {
    if (view.axis === 'step') return { x: chart.x, series: chart.series };
    var xs = {};
    var at = chart.series.map(function (s) {
      var m = {};
      chart.x.forEach(function (step, i) {
        var t = secondsAt(s.run, step);
        if (t !== null && s.values[i] !== null) { m[t] = s.values[i]; xs[t] = true; }
      });
      return m;
    });
    var x = Object.keys(xs).map(Number).sort(function (a, b) { return a - b; });
    return {
      x: x,
      series: chart.series.map(function (s, k) {
        var copy = Object.assign({}, s);
        copy.values = x.map(function (t) { return at[k][t] === undefined ? null : at[k][t]; });
        return copy;
      }),
    };
  }

  var STEP_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000];

  // A flat series (all rewards 0, say) gets a band around its value instead of uPlot's default 0..100.
  function yRange(u, min, max) {
    if (min === null || max === null) return [0, 1];
    if (min === max) return [min - (Math.abs(min) || 1) * 0.5, max + (Math.abs(max) || 1) * 0.5];
    var pad = (max - min) * 0.05;
    return [min - pad, max + pad];
  }

  function clockText(s) {
    if (s >= 3600) return (s / 3600).toFixed(s % 3600 ? 1 : 0) + 'h';
    if (s >= 120) return Math.round(s / 60) + 'm';
    return fmt(s) + 's';
  }

  // Configure markers: a dashed line at the step with a numbered badge at the top, placed in the first row where
  // it overlaps no badge already placed; the labels themselves go in a numbered list under the plot, where long
  // ones cannot cover the curves or each other. The badges' boxes (CSS pixels) are kept for whoever checks them.
  function placedMarkers(markers) {
    return markers
      .map(function (m) { return { m: m, v: view.axis === 'step' ? m.x : markerSeconds(m) }; })
      .filter(function (e) { return e.v !== null; })
      .sort(function (a, b) { return a.v - b.v; });
  }

  function drawMarkers(p, u, markers) {
    var ctx = u.ctx;
    var dpr = devicePixelRatio;
    var rowH = 15 * dpr, gap = 3 * dpr;
    var rows = [];
    var boxes = [];
    ctx.save();
    ctx.font = 'bold ' + Math.round(11 * dpr) + 'px sans-serif';
    ctx.textBaseline = 'middle';
    placedMarkers(markers).forEach(function (e, i) {
      var x = Math.round(u.valToPos(e.v, 'x', true));
      ctx.strokeStyle = e.m.color;
      ctx.setLineDash([4, 4]);
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      var text = String(i + 1);
      var w = ctx.measureText(text).width + 8 * dpr;
      var left = Math.max(u.bbox.left, Math.min(x - w / 2, u.bbox.left + u.bbox.width - w));
      var r = 0;
      while (r < rows.length && rows[r] > left - gap) r++;
      rows[r] = left + w;
      var top = u.bbox.top + 1 * dpr + r * rowH;
      ctx.setLineDash([]);
      ctx.fillStyle = e.m.color;
      ctx.fillRect(left, top, w, rowH - 2 * dpr);
      ctx.fillStyle = '#fff';
      ctx.fillText(text, left + 4 * dpr, top + (rowH - 2 * dpr) / 2);
      boxes.push({ label: text, left: left / dpr, top: top / dpr, width: w / dpr, height: (rowH - 2 * dpr) / dpr });
    });
    ctx.restore();
    p.markerBoxes = boxes;
  }

  function markerList(chart, el) {
    var old = el.parentNode.querySelector('ol.marker-list');
    if (old) old.remove();
    var placed = placedMarkers(chart.markers);
    if (placed.length === 0) return;
    var ol = document.createElement('ol');
    ol.className = 'marker-list';
    placed.forEach(function (e) {
      var li = document.createElement('li');
      li.style.color = e.m.color;
      li.textContent = (view.axis === 'step' ? 'step ' + e.m.x : clockText(e.v) + ' (step ' + e.m.x + ')') + ': ' + e.m.label;
      ol.appendChild(li);
    });
    el.parentNode.insertBefore(ol, el.nextSibling);
  }

  function build(chart, el) {
    var al = aligned(chart);
    var smoothed = al.series.map(function (s) {
      var copy = Object.assign({}, s);
      if (!chart.stacked) copy.values = ema(s.values, view.smoothing);
      return copy;
    });
    var order = smoothed.map(function (_, s) { return s; });
    var ys = smoothed.map(function (s) { return s.values; });
    if (chart.stacked) {
      var st = stack(smoothed, al.x.length);
      order = st.order;
      ys = st.ys;
    }
    var many = al.x.length > 60;
    var onTime = view.axis === 'time';
    var series = [{ label: onTime ? 'time' : 'step', value: function (u, v) { return onTime ? clockText(v) : fmt(v); } }].concat(order.map(function (s) {
      var spec = smoothed[s];
      var opt = {
        label: spec.label,
        stroke: spec.color,
        width: 2,
        dash: spec.dash,
        spanGaps: true,
        points: { show: spec.points || !many, size: spec.points ? 7 : 4 },
        value: function (u, v) { return fmt(v); },
      };
      if (chart.stacked) {
        opt.fill = spec.color;
        opt.points = { show: false };
        opt.paths = uPlot.paths.bars({ size: [0.7, 40] });
        // The part's own value, not the stacked sum it is drawn up to.
        opt.value = function (u, v, si, i) { return fmt(i === null || i === undefined ? v : spec.values[i]); };
      }
      return opt;
    }));
    var p = { id: chart.id, chart: chart, markerBoxes: [] };
    var xAxis = onTime
      ? { label: 'time since the run started', values: function (u, vals) { return vals.map(clockText); } }
      : { label: 'step', incrs: STEP_INCRS };
    var opts = {
      width: Math.max(320, el.clientWidth),
      height: 260,
      scales: {
        // Bars need half a step of room at each end.
        x: {
          time: false,
          range: function (u, min, max) {
            if (min === null || max === null) return [0, 1];
            if (min === max) return [min - 1, max + 1];
            if (!chart.stacked) return [min, max];
            var half = onTime ? (max - min) / (2 * Math.max(1, al.x.length - 1)) : 0.5;
            return [min - half, max + half];
          },
        },
        y: { range: chart.stacked ? function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; } : yRange },
      },
      axes: [xAxis, { size: 60, values: function (u, vals) { return vals.map(fmt); } }],
      cursor: { sync: { key: 'x-' + view.axis } },
      series: series,
      hooks: { draw: [function (u) { drawMarkers(p, u, chart.markers); }] },
    };
    el.innerHTML = '';
    p.plot = new uPlot(opts, [al.x].concat(ys), el);
    markerList(chart, el);
    // Hover a legend entry to see which logged metrics it draws.
    var items = el.querySelectorAll('.u-legend .u-series');
    order.forEach(function (s, k) {
      var item = items[k + 1];
      if (item) item.setAttribute('data-keys', smoothed[s].keys.join(' ')), item.title = smoothed[s].keys.join(', ');
    });
    return p;
  }

  function drawAll() {
    plots.forEach(function (p) { p.plot.destroy(); });
    plots.length = 0;
    data.charts.forEach(function (chart) {
      plots.push(build(chart, document.getElementById('chart-' + chart.id)));
    });
  }

  var slider = document.getElementById('smoothing');
  var shown = document.getElementById('smoothing-value');
  if (slider) slider.addEventListener('input', function () {
    view.smoothing = Number(slider.value);
    shown.textContent = slider.value;
    drawAll();
  });
  Array.prototype.forEach.call(document.querySelectorAll('input[name="x-axis"]'), function (r) {
    r.addEventListener('change', function () {
      if (!r.checked) return;
      view.axis = r.value;
      drawAll();
    });
  });
  drawAll();

  window.addEventListener('resize', function () {
    plots.forEach(function (p) {
      var el = document.getElementById('chart-' + p.id);
      p.plot.setSize({ width: Math.max(320, el.clientWidth), height: 260 });
    });
  });
  // For whoever wants to look inside (the browser test does): the charts, their uPlot instances, the view.
  window.aglReport = { data: data, plots: plots, view: view };
})();
