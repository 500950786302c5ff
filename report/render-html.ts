// One self-contained HTML file for one or several runs: header (status, workflow id and UI link, config,
// checkpoints, configured changes), then the plots. uPlot and the page script are inlined, the data is JSON in
// the page: nothing is fetched when it is opened, from disk or anywhere else.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildCharts, runClocks, type Chart } from './charts';
import { rankRuns } from './rank-runs';
import type { RunData } from './run-data';

const esc = (s: unknown) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** JSON or JS inside <script>: no `</script` or `<!--` can end it early. */
const scriptSafe = (s: string) => s.replace(/<(?=\/script|!--)/gi, '\\u003c');

let assets: { uplotJs: string; uplotCss: string; pageJs: string } | undefined;
function loadAssets() {
  const dist = path.dirname(require.resolve('uplot/dist/uPlot.iife.min.js'));
  assets ??= {
    uplotJs: readFileSync(path.join(dist, 'uPlot.iife.min.js'), 'utf8'),
    uplotCss: readFileSync(path.join(dist, 'uPlot.min.css'), 'utf8'),
    pageJs: readFileSync(path.join(__dirname, 'page.js'), 'utf8'),
  };
  return assets;
}

const num = (v: number | undefined, d = 3) => (v === undefined || !Number.isFinite(v) ? '-' : v.toFixed(d));
const lastOf = (run: RunData, key: string): number | undefined => run.folded.last[key];

function runSummary(run: RunData, rank: number | null): string {
  const c = run.config;
  const link = run.uiLink ? `<a href="${esc(run.uiLink)}">${esc(run.workflowId)}</a>` : esc(run.workflowId);
  return `<tr class="run-row">${rank === null ? '' : `<td>${rank}</td>`}<td><b>${esc(run.name)}</b></td><td>${esc(run.status)}</td><td>${link}</td><td>${esc(c.modelName ?? '-')}</td>` +
    `<td>${esc(c.lossFn ?? '-')}${c.async ? ' (async)' : ''}</td><td>${esc(c.learningRate ?? '-')}</td><td>${run.folded.stepsLogged}</td>` +
    `<td>${num(lastOf(run, 'env/all/reward/total'))}</td><td>${num(lastOf(run, 'test/env/all/reward/total'))}</td>` +
    `<td><code>${esc(run.logPath)}</code></td></tr>`;
}

function runDetails(run: RunData): string {
  const cps = run.checkpoints.length
    ? `<table><tr><th>checkpoint</th><th>after step</th><th>state path</th></tr>${run.checkpoints
        .map((cp) => `<tr><td>${esc(cp.name)}${cp.final ? ' (final)' : ''}</td><td>${cp.batch}</td><td><code>${esc(cp.statePath)}</code></td></tr>`)
        .join('')}</table>`
    : '<p>no checkpoint yet</p>';
  const changes = run.configured.length
    ? `<p>settings changed by <code>configure</code>: ${run.configured
        .filter((c, i, all) => i === 0 || JSON.stringify(c.changes) !== JSON.stringify(all[i - 1]!.changes))
        .map((c) => `from step ${c.step}: ${Object.entries(c.changes).map(([k, v]) => `${esc(k)}=${esc(v)}`).join(' ')}`)
        .join('; ')}</p>`
    : '';
  const config = Object.entries(run.config)
    .map(([k, v]) => `<tr><td>${esc(k)}</td><td><code>${esc(JSON.stringify(v))}</code></td></tr>`)
    .join('');
  return `<details><summary>${esc(run.name)}: config, checkpoints</summary>${changes}${cps}<table>${config}</table></details>`;
}

const chartBox = (c: Chart) =>
  `<section class="chart"><h3>${esc(c.title)}</h3><div id="chart-${esc(c.id)}" data-chart="${esc(c.id)}"></div>${c.note ? `<p class="note">${esc(c.note)}</p>` : ''}</section>`;

/** The whole report page; `generatedAt` is printed in it (a parameter, so tests get stable output). */
export function renderReport(runs: RunData[], generatedAt: Date = new Date()): string {
  if (runs.length === 0) throw new Error('a report needs at least one run');
  const a = loadAssets();
  const charts = buildCharts(runs);
  const title = runs.map((r) => r.name).join(' vs ');
  const ranked = rankRuns(runs);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}: training report</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${a.uplotCss}
body{font:14px/1.4 system-ui,sans-serif;margin:16px 24px;color:#222}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
code{font-size:12px;word-break:break-all}h1{font-size:20px;margin:0 0 8px}h3{font-size:15px;margin:4px 0}
#charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:16px;margin-top:12px}
.chart{border:1px solid #eee;padding:8px;min-width:0}.note{color:#666;font-size:12px;margin:2px 0}
details{margin:4px 0}
#controls{position:sticky;top:0;z-index:5;background:#fff;border-bottom:1px solid #eee;padding:6px 0;display:flex;gap:24px;align-items:center;flex-wrap:wrap}
ol.marker-list{font-size:12px;margin:4px 0;padding-left:24px}
#controls label{display:inline-flex;gap:6px;align-items:center}#smoothing{width:200px}</style></head>
<body>
<h1>Training report: ${esc(title)}</h1>
${ranked.length > 1 ? '<p class="note">Best first: by the last eval reward, or the last train reward where a run logged no eval.</p>' : ''}
<table><tr>${ranked.length > 1 ? '<th>rank</th>' : ''}<th>run</th><th>status</th><th>Temporal workflow</th><th>model</th><th>loss</th><th>learning rate</th><th>steps logged</th><th>last train reward</th><th>last eval reward</th><th>log path</th></tr>
${ranked.map((r, i) => runSummary(r.run, ranked.length > 1 ? i + 1 : null)).join('\n')}</table>
${runs.map(runDetails).join('\n')}
<p class="note">Written ${esc(generatedAt.toISOString())} from metrics.jsonl; rewritten after every step. Hover a plot to read every plot at that step.</p>
<div id="controls">
<label>Smoothing (EMA) <input id="smoothing" type="range" min="0" max="0.99" step="0.01" value="0"> <output id="smoothing-value">0</output></label>
<span>x axis: <label><input type="radio" name="x-axis" value="step" checked> step</label>
<label><input type="radio" name="x-axis" value="time"> time since the run's start (sum of step times; pauses left out)</label></span>
</div>
<div id="charts">${charts.map(chartBox).join('\n')}</div>
<script id="report-data" type="application/json">${scriptSafe(JSON.stringify({ charts, clocks: runClocks(runs) }))}</script>
<script>${scriptSafe(a.uplotJs)}</script>
<script>${scriptSafe(a.pageJs)}</script>
</body></html>
`;
}
