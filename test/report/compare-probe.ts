// What the comparison test runs inside Chromium, appended to a copy of a report after the page's own scripts: it
// reads what uPlot drew (series labels, strokes, dashes, data; the legend's DOM; the configure labels' boxes),
// then moves the smoothing slider and switches the x axis the way a user would (DOM events on the controls) and
// reads again. Its findings go into <pre id="probe">, which `chromium --dump-dom` hands back.
export const COMPARE_PROBE = `<script>
(function () {
  function snap() {
    return window.aglReport.plots.map(function (p) {
      var u = p.plot;
      var legend = Array.prototype.map.call(u.root.querySelectorAll('.u-legend .u-series'), function (el) {
        return el.getAttribute('data-keys') || '';
      });
      return {
        id: p.id,
        x: Array.from(u.data[0]),
        series: u.series.slice(1).map(function (s, j) {
          return {
            label: s.label,
            stroke: typeof s.stroke === 'function' ? s.stroke(u, j + 1) : s.stroke,
            dash: s.dash || [],
            data: Array.from(u.data[j + 1]),
          };
        }),
        legendKeys: legend.slice(1),
        markers: p.markerBoxes,
        markerList: Array.prototype.map.call(u.root.parentNode.parentNode.querySelectorAll('ol.marker-list li'), function (li) { return li.textContent; }),
        canvasWidth: u.ctx.canvas.width / devicePixelRatio,
      };
    });
  }
  // uPlot paints in a microtask after (re)building: let it run before reading what was painted.
  var later = function (f) { setTimeout(f, 0); };
  var out = {
    initial: snap(),
    ranking: Array.prototype.map.call(document.querySelectorAll('tr.run-row'), function (tr) { return tr.cells[0].textContent + ' ' + tr.cells[1].textContent; }),
  };
  var slider = document.getElementById('smoothing');
  slider.value = '0.6';
  slider.dispatchEvent(new Event('input'));
  later(function () {
    out.smoothed = snap();
    slider.value = '0';
    slider.dispatchEvent(new Event('input'));
    var time = document.querySelector('input[name="x-axis"][value="time"]');
    time.checked = true;
    time.dispatchEvent(new Event('change'));
    later(function () {
      out.time = snap();
      var pre = document.createElement('pre');
      pre.id = 'probe';
      pre.textContent = JSON.stringify(out);
      document.body.appendChild(pre);
    });
  });
})();
</script>`;

export interface ProbedSeries {
  label: string;
  stroke: string;
  dash: number[];
  data: (number | null)[];
}

export interface ProbedPlot {
  id: string;
  x: number[];
  series: ProbedSeries[];
  legendKeys: string[];
  markers: { label: string; left: number; top: number; width: number; height: number }[];
  markerList: string[];
  canvasWidth: number;
}

export interface CompareProbe {
  initial: ProbedPlot[];
  /** The summary table's rows: rank and run name. */
  ranking: string[];
  smoothed: ProbedPlot[];
  time: ProbedPlot[];
}

export function compareProbeResult(dom: string): CompareProbe {
  const m = /<pre id="probe">([\s\S]*?)<\/pre>/.exec(dom);
  if (!m) throw new Error('the probe left no result in the page: its scripts did not run');
  const text = m[1]!.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return JSON.parse(text) as CompareProbe;
}
