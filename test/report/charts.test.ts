// What each plot of a report draws, from run files written here: sync, async, overlaid runs, configured changes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildCharts, orchestrationSeconds, runClocks } from '../../report/charts';
import { loadRun, REPORT_POINTS } from '../../report/run-data';
import { rankRuns } from '../../report/rank-runs';
import { renderReport } from '../../report/render-html';

function runDir(name: string, rows: Record<string, unknown>[], extra: { config?: object; checkpoints?: object[]; configured?: object[] } = {}): string {
  const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'agl-charts-')), name);
  mkdirSync(dir);
  const jsonl = (xs: object[]) => xs.map((x) => JSON.stringify(x)).join('\n') + '\n';
  writeFileSync(path.join(dir, 'metrics.jsonl'), jsonl(rows));
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ runName: name, learningRate: 0.01, modelName: 'm', async: null, ...extra.config }));
  if (extra.checkpoints) writeFileSync(path.join(dir, 'checkpoints.jsonl'), jsonl(extra.checkpoints));
  if (extra.configured) writeFileSync(path.join(dir, 'configured.jsonl'), jsonl(extra.configured));
  return dir;
}

const row = (step: number, over: Record<string, number> = {}) => ({
  step,
  'env/all/reward/total': step / 10,
  'optim/lr': 0.01,
  'optim/entropy': 2,
  'time/sample': 1,
  'time/train': 0.5,
  'time/total': 2,
  'progress/done_frac': (step + 1) / 4,
  ...over,
});

test('a sync run: reward with sparse eval, time stacked with the rest as orchestration, no staleness plot', () => {
  const dir = runDir('a', [row(0, { 'test/env/all/reward/total': 0.2, 'time/run_evals': 0.25 }), row(1), row(2, { 'test/env/all/reward/total': 0.5 })]);
  const run = loadRun(dir);
  assert.equal(run.status, 'running: 3 of 4 steps done');
  const charts = buildCharts([run]);
  const ids = charts.map((c) => c.id);
  assert.deepEqual(ids, ['reward', 'entropy', 'lr', 'time', 'more-progress'], 'plots without data are left out; what no plot names gets one by prefix');
  const reward = charts[0]!;
  assert.deepEqual(reward.x, [0, 1, 2]);
  assert.deepEqual(reward.series.map((s) => [s.label, s.values, s.points]), [
    ['train', [0, 0.1, 0.2], false],
    ['eval', [0.2, null, 0.5], true],
  ]);
  const time = charts.find((c) => c.id === 'time')!;
  assert.equal(time.stacked, true);
  assert.deepEqual(time.series.map((s) => s.label), ['evaluation', 'sampling', 'training', 'orchestration (the rest)']);
  assert.deepEqual(time.series.at(-1)!.values, [0.25, 0.5, 0.5]);
});

test('orchestration is never negative, and absent without a total', () => {
  assert.equal(orchestrationSeconds({ 'time/total': 1, 'time/train': 2 }), 0);
  assert.equal(orchestrationSeconds({ 'time/train': 2 }), undefined);
  assert.equal(orchestrationSeconds({ 'time/total': 3, 'async/time_waiting_for_groups': 1, 'time/train': 1 }), 1, 'async: waiting for groups is the sampling');
});

test('an async run adds staleness with its bound; configured changes become markers', () => {
  const stale = (s: number) => ({ 'async/staleness_mean': s / 2, 'async/staleness_max': s, 'async/staleness_min': 0 });
  const dir = runDir('b', [row(0, stale(0)), row(1, { ...stale(1), 'optim/lr': 0.001 }), row(2, { ...stale(2), 'optim/lr': 0.001 })], {
    config: { async: { maxStepsOffPolicy: 2, groupsPerBatch: 4 } },
    configured: [{ step: 1, learningRate: 0.001 }, { step: 2, learningRate: 0.001 }],
    checkpoints: [{ name: 'final', batch: 3, state_path: 'tinker://x/weights/000003', final: true }],
  });
  const run = loadRun(dir);
  assert.equal(run.status, 'finished after 3 steps');
  const charts = buildCharts([run]);
  const st = charts.find((c) => c.id === 'staleness')!;
  assert.deepEqual(st.series.map((s) => s.label), ['mean', 'max', 'min', 'bound (maxStepsOffPolicy)']);
  assert.deepEqual(st.series[3]!.values, [2, 2, 2]);
  assert.deepEqual(charts.find((c) => c.id === 'lr')!.markers, [{ x: 1, label: 'learningRate=0.001', color: '#333', run: 'b' }], 'one marker where the settings changed');
});

test('several runs overlay: one curve per run on the union of their steps, colour by run, and a time plot each', () => {
  const a = loadRun(runDir('a', [row(0), row(1), row(2)]));
  const b = loadRun(runDir('b', [row(0), row(1)]));
  const charts = buildCharts([a, b]);
  const reward = charts.find((c) => c.id === 'reward')!;
  assert.deepEqual(reward.series.map((s) => s.label), ['a train', 'b train']);
  assert.deepEqual(reward.series[1]!.values, [0, 0.1, null]);
  assert.notEqual(reward.series[0]!.color, reward.series[1]!.color);
  assert.deepEqual(charts.filter((c) => c.stacked).map((c) => c.id), ['time-a', 'time-b']);
});

test('every logged number is drawn: unnamed metrics grouped by prefix; a clock per run from its step times', () => {
  const extra = { 'grad_norm:mean': 1.5, 'env/all/by_group/frac_mixed': 0.25, 'custom/a': 1, 'custom/b': 2, 'loose': 3 };
  const dir = runDir('c', [row(0, extra), row(1, { ...extra, 'time/total': 3 }), row(2, { 'time/total': Number.NaN })]);
  const charts = buildCharts([loadRun(dir)]);
  const byId = new Map(charts.map((c) => [c.id, c.series.flatMap((s) => s.keys)]));
  assert.deepEqual(byId.get('grad-norm'), ['grad_norm:mean']);
  assert.deepEqual(byId.get('group-mix'), ['env/all/by_group/frac_mixed']);
  assert.deepEqual(byId.get('more-custom'), ['custom/a', 'custom/b']);
  assert.deepEqual(byId.get('more-other'), ['loose']);
  assert.deepEqual(runClocks([loadRun(dir)]), { c: { steps: [0, 1], seconds: [2, 5] } }, 'a step without a finite time has no place on the clock');
});

test('ranking: by last eval reward, runs with only train reward after those with eval, runs with neither last', () => {
  const mk = (name: string, rows: Record<string, number>[]) => loadRun(runDir(name, rows.map((r, step) => ({ step, ...r }))));
  const runs = [
    mk('none', [{ 'optim/lr': 1 }]),
    mk('train-only', [{ 'env/all/reward/total': 0.99 }]),
    mk('eval-low', [{ 'test/env/all/reward/total': 0.9 }, { 'test/env/all/reward/total': 0.2 }]),
    mk('eval-high', [{ 'test/env/all/reward/total': 0.5 }, { 'env/all/reward/total': 0.1 }]),
  ];
  assert.deepEqual(rankRuns(runs).map((r) => [r.run.name, r.by, r.score]), [
    ['eval-high', 'eval', 0.5],
    ['eval-low', 'eval', 0.2],
    ['train-only', 'train', 0.99],
    ['none', null, null],
  ]);
});

test('the page is self-contained: uPlot inlined, nothing fetched, data that cannot close its script tag', () => {
  const dir = runDir('x', [row(0)], { config: { modelName: '</script><script>alert(1)</script>' } });
  const html = renderReport([loadRun(dir, { uiLink: 'http://127.0.0.1:8233/namespaces/default/workflows/agl-run-x' })]);
  assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href=|<img|\bfetch\(|XMLHttpRequest|url\(\s*['"]?https?:/i, 'nothing loaded from elsewhere');
  assert.match(html, /uPlot/);
  assert.equal((html.match(/<\/script>/g) ?? []).length, 3, 'the data cannot end its script early');
  assert.match(html, /href="http:\/\/127\.0\.0\.1:8233\/namespaces\/default\/workflows\/agl-run-x"/);
});

test('bad input: a missing directory and a folder that is no run say so', () => {
  assert.throws(() => loadRun('/nonexistent/run'), /no such run directory/);
  assert.throws(() => loadRun(mkdtempSync(path.join(os.tmpdir(), 'agl-empty-'))), /not a run directory/);
  assert.throws(() => renderReport([]), /at least one run/);
});

test('a long run folds into at most REPORT_POINTS points: means per point, exact last values, steps and clock', () => {
  const steps = REPORT_POINTS * 5 + 3; // 10,003 steps: points of 8 steps
  const rows = Array.from({ length: steps }, (_, s) => row(s, {
    'env/all/reward/total': s % 2, // alternates 0, 1: each point's mean is 0.5
    'progress/done_frac': (s + 1) / steps,
    ...(s % 1000 === 999 ? { 'test/env/all/reward/total': s / steps } : {}), // a sparse eval
  }));
  const run = loadRun(runDir('long', rows));
  assert.ok(run.rows.length <= REPORT_POINTS && run.rows.length > REPORT_POINTS / 2, `${run.rows.length} points`);
  assert.equal(run.rows[run.rows.length - 1]!.step, steps - 1, 'the last point sits at the last step');
  const width = run.rows[1]!.step! - run.rows[0]!.step!;
  assert.ok(run.rows.slice(0, -1).every((r) => r['env/all/reward/total'] === 0.5), 'each whole point holds the mean of its steps');
  assert.equal(width, 8);
  // What must stay exact: the steps logged, the last values (summary, rank, status), the clock.
  assert.equal(run.folded!.stepsLogged, steps);
  assert.equal(run.status, `running: ${steps} of ${steps} steps done`);
  assert.equal(rankRuns([run])[0]!.score, 9999 / steps, 'ranked by the last eval, not a mean');
  const clock = runClocks([run])['long']!;
  assert.equal(clock.seconds[clock.seconds.length - 1], steps * 2, 'the clock sums every step');
  assert.ok(renderReport([run]).includes(`<td>${steps}</td>`), 'the summary counts every step');
  // The sparse eval is drawn at each point that holds one.
  const reward = buildCharts([run]).find((c) => c.id === 'reward')!;
  const ev = reward.series.find((s) => s.keys?.includes('test/env/all/reward/total'))!;
  assert.equal(ev.values.filter((v) => v !== null).length, 10);
});

test('a run of at most REPORT_POINTS steps is drawn step by step', () => {
  const run = loadRun(runDir('short', Array.from({ length: REPORT_POINTS }, (_, s) => row(s))));
  assert.equal(run.rows.length, REPORT_POINTS);
  assert.deepEqual(run.rows.map((r) => r.step), Array.from({ length: REPORT_POINTS }, (_, s) => s));
  assert.equal(run.rows[7]!['env/all/reward/total'], 0.7);
});
