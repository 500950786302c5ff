// What the report test runs inside Chromium, appended to a copy of the report after the page's own scripts:
// for each plot, how many points each uPlot series holds and how many canvas pixels have a series' colour.
// It writes its findings into <pre id="probe">, which `chromium --dump-dom` hands back.
export const PROBE = `<script>
(function () {
  function rgb(hex) { return [1, 3, 5].map(function (i) { return parseInt(hex.slice(i, i + 2), 16); }); }
  var out = window.aglReport.plots.map(function (p) {
    var u = p.plot, ctx = u.ctx, c = ctx.canvas;
    var px = ctx.getImageData(0, 0, c.width, c.height).data;
    var colors = p.chart.series.map(function (s) { return rgb(s.color); });
    var painted = 0;
    for (var i = 0; i < px.length; i += 4) {
      for (var k = 0; k < colors.length; k++) {
        var d = Math.abs(px[i] - colors[k][0]) + Math.abs(px[i + 1] - colors[k][1]) + Math.abs(px[i + 2] - colors[k][2]);
        if (d < 24 && px[i + 3] > 200) { painted++; break; }
      }
    }
    var series = u.series.slice(1).map(function (s, j) {
      return { label: s.label, points: u.data[j + 1].filter(function (v) { return v !== null && v !== undefined; }).length };
    });
    return { id: p.id, x: u.data[0].length, series: series, painted: painted, width: c.width };
  });
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>`;

export interface ProbedChart {
  id: string;
  x: number;
  series: { label: string; points: number }[];
  painted: number;
  width: number;
}

/** The probe's findings in a dumped DOM. */
export function probeResult(dom: string): ProbedChart[] {
  const m = /<pre id="probe">([\s\S]*?)<\/pre>/.exec(dom);
  if (!m) throw new Error('the probe left no result in the page: its scripts did not run');
  const text = m[1]!.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return JSON.parse(text) as ProbedChart[];
}
