// `client report` over two runs, checked in headless Chromium from what uPlot drew: a colour per run and a dash
// per series, every logged metric drawn, the smoothing slider's EMA, the time axis, and configure labels that do
// not overlap. The runs' files are written here (no training: the report reads files only), with configure
// changes crowded onto neighbouring steps as a user who tunes a run by hand makes them. The screenshot is kept at
// .data/screenshots/compare-report.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { reportCommand } from '../../cli/report-command';
import type { TemporalSettings } from '../../common/temporal-settings';
import { dumpDom, ensureChromium, screenshot } from '../helpers/chromium';
import { DASHES } from '../../report/charts';
import { COMPARE_PROBE, compareProbeResult, type ProbedPlot } from './compare-probe';

const ROOT = path.resolve(__dirname, '..', '..');
const STEPS = 30;

type Row = Record<string, number>;

/** A run's metrics as the trainer logs them: noisy reward rising at a rate set by its learning rate. */
function rows(lr: number, stepSeconds: number, seed: number): Row[] {
  let x = seed;
  const noise = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648 - 0.5) * 0.2;
  return Array.from({ length: STEPS }, (_, step) => {
    const reward = Math.min(1, (1 - Math.exp(-step * lr * 300)) * 0.9 + noise());
    const r: Row = {
      step,
      'progress/batch': step,
      'progress/done_frac': (step + 1) / STEPS,
      'optim/lr': step >= 12 ? lr / 2 : lr,
      'env/all/reward/total': reward,
      'env/all/ac_tokens_per_turn': 40 + step,
      'env/all/ob_tokens_per_turn': 120,
      'env/all/reward/not_null': 1,
      'env/all/by_group/frac_status_succeeded': 0.95,
      'env/all/by_group/frac_status_failed': 0.05,
      'env/all/by_group/frac_mixed': 0.5 + noise(),
      'env/all/by_group/frac_all_good': 0.3,
      'env/all/by_group/frac_all_bad': 0.2,
      'optim/loss:sum': -reward + noise(),
      'optim/entropy': 2 - step * 0.02,
      'optim/kl_sample_train_v1': 0.001 * step,
      'grad_norm:mean': 1 + noise() * 5,
      'rollouts/succeeded': 16,
      'train/dropped_datums_unsendable': 0,
      'time/sample': stepSeconds * 0.6,
      'time/train': stepSeconds * 0.3,
      'time/assemble_training_data': 0.05,
      'time/total': stepSeconds,
    };
    if (step % 5 === 4) r['test/env/all/reward/total'] = reward + 0.05;
    return r;
  });
}

function runDir(root: string, name: string, lr: number, stepSeconds: number, seed: number): { dir: string; rows: Row[] } {
  const dir = path.join(root, name);
  mkdirSync(dir);
  const rs = rows(lr, stepSeconds, seed);
  writeFileSync(path.join(dir, 'metrics.jsonl'), rs.map((r) => JSON.stringify(r)).join('\n') + '\n');
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ runName: name, learningRate: lr, modelName: 'Qwen/Qwen3-0.6B', lossFn: 'importance_sampling', async: null }));
  // Three changes on neighbouring steps: their labels would sit on top of each other at one height.
  const configured = [
    { step: 12, learningRate: lr / 2 },
    { step: 13, learningRate: lr / 2, evalEvery: 2 },
    { step: 14, learningRate: lr / 2, evalEvery: 2, temperature: 0.7 },
  ];
  writeFileSync(path.join(dir, 'configured.jsonl'), configured.map((c) => JSON.stringify(c)).join('\n') + '\n');
  return { dir, rows: rs };
}

/** The debiased EMA TensorBoard and W&B draw, over the values present. */
function ema(values: (number | null)[], w: number): (number | null)[] {
  let s = 0;
  let n = 0;
  return values.map((v) => {
    if (v === null) return null;
    n += 1;
    s = w * s + (1 - w) * v;
    return s / (1 - w ** n);
  });
}

const plot = (plots: ProbedPlot[], id: string) => plots.find((p) => p.id === id) ?? assert.fail(`no plot ${id} drawn: ${plots.map((p) => p.id).join(', ')}`);
const series = (p: ProbedPlot, label: string) => p.series.find((s) => s.label === label) ?? assert.fail(`${p.id}: no series ${label}: ${p.series.map((s) => s.label).join(', ')}`);
const close = (a: (number | null)[], b: (number | null)[], what: string) => {
  assert.equal(a.length, b.length, `${what}: length`);
  a.forEach((v, i) => assert.ok(v === b[i] || (v !== null && b[i] !== null && Math.abs(v - b[i]!) < 1e-9), `${what}[${i}]: ${v} vs ${b[i]}`));
};

test('a report over two runs: a colour per run, a dash per series, every metric, smoothing, a time axis, readable markers', { timeout: 300_000 }, async () => {
  const chromium = await ensureChromium();
  const root = mkdtempSync(path.join(os.tmpdir(), 'agl-compare-'));
  const a = runDir(root, 'lr-3e-4', 3e-4, 2, 7);
  const b = runDir(root, 'lr-1e-4', 1e-4, 5, 11);
  // Given worst first: the page ranks them.
  const file = await reportCommand([b.dir, a.dir], path.join(root, 'compare.html'), { address: 'unused' } as TemporalSettings, () => assert.fail('directories need no Temporal'));
  const probed = path.join(root, 'probed.html');
  writeFileSync(probed, readFileSync(file, 'utf8').replace('</body>', `${COMPARE_PROBE}</body>`));
  const got = compareProbeResult(await dumpDom(chromium, probed));

  assert.deepEqual(got.ranking, ['1 lr-3e-4', '2 lr-1e-4'], 'best last eval reward first');

  // A colour per run, the same in every plot; within a run, each series of a plot has its own dash.
  const colourOf = new Map<string, string>();
  for (const p of got.initial) {
    for (const run of ['lr-3e-4', 'lr-1e-4']) {
      const mine = p.series.filter((s) => s.label.startsWith(`${run} `));
      for (const s of mine) {
        colourOf.set(run, colourOf.get(run) ?? s.stroke);
        assert.equal(s.stroke, colourOf.get(run), `${p.id}: ${s.label} in ${run}'s colour`);
      }
      const dashes = mine.map((s) => JSON.stringify(s.dash));
      if (!p.id.startsWith('time-')) assert.equal(new Set(dashes).size, Math.min(dashes.length, DASHES.length), `${p.id}: ${run}'s series have their own dashes ${dashes}`);
    }
  }
  assert.notEqual(colourOf.get('lr-3e-4'), colourOf.get('lr-1e-4'), 'two runs, two colours');
  const reward = plot(got.initial, 'reward');
  assert.deepEqual(series(reward, 'lr-3e-4 train').dash, [], 'train is solid');
  assert.ok(series(reward, 'lr-3e-4 eval').dash.length > 0, 'eval is dashed');

  // Every numeric metric a run logs is drawn by some series (the legend says which keys each one draws).
  const drawnKeys = new Set(got.initial.flatMap((p) => p.legendKeys.flatMap((k) => k.split(' '))));
  const logged = Object.keys(a.rows[0]!).concat('test/env/all/reward/total').filter((k) => k !== 'step' && k !== 'progress/batch');
  assert.deepEqual(logged.filter((k) => !drawnKeys.has(k)), [], 'metrics no plot draws');
  close(series(plot(got.initial, 'grad-norm'), 'lr-3e-4 grad_norm:mean').data, a.rows.map((r) => r['grad_norm:mean']!), 'grad norm as logged');
  close(series(plot(got.initial, 'group-mix'), 'lr-1e-4 mixed (rewards differ: a learning signal)').data, b.rows.map((r) => r['env/all/by_group/frac_mixed']!), 'group mix as logged');

  // Smoothing 0.6: the drawn train reward is the debiased EMA of the logged one; eval (sparse) is smoothed over its points.
  const rawTrain = a.rows.map((r) => r['env/all/reward/total']!);
  close(series(reward, 'lr-3e-4 train').data, rawTrain, 'unsmoothed at first');
  const smoothed = plot(got.smoothed, 'reward');
  close(series(smoothed, 'lr-3e-4 train').data, ema(rawTrain, 0.6), 'EMA 0.6');
  close(series(smoothed, 'lr-3e-4 eval').data, ema(a.rows.map((r) => r['test/env/all/reward/total'] ?? null), 0.6), 'eval EMA 0.6');

  // Time axis: each run's points at the sum of its step times; the slower run's last step ends at 30 × 5 s.
  const onTime = plot(got.time, 'reward');
  const timesOf = (rs: Row[]) => rs.map((_, i) => (i + 1) * rs[0]!['time/total']!);
  assert.deepEqual(onTime.x, [...new Set([...timesOf(a.rows), ...timesOf(b.rows)])].sort((p, q) => p - q));
  const slowTrain = series(onTime, 'lr-1e-4 train').data;
  assert.equal(slowTrain[onTime.x.indexOf(STEPS * 5)], b.rows.at(-1)!['env/all/reward/total'], 'the slow run ends at 150 s');
  assert.equal(slowTrain.filter((v) => v !== null).length, STEPS);
  close(series(onTime, 'lr-3e-4 train').data.filter((v) => v !== null), rawTrain, 'smoothing back at 0');

  // Configure markers: six numbered badges, none overlapping another, none off the plot; the list under the plot
  // says what each changed, in order.
  for (const view of [got.initial, got.time]) {
    const lr = plot(view, 'lr');
    const boxes = lr.markers;
    assert.deepEqual(boxes.map((p) => p.label), ['1', '2', '3', '4', '5', '6'], 'three changes per run');
    for (const [i, p] of boxes.entries()) {
      assert.ok(p.left >= 0 && p.left + p.width <= lr.canvasWidth, `badge ${p.label} inside the plot: ${JSON.stringify(p)} of ${lr.canvasWidth}`);
      for (const q of boxes.slice(i + 1)) {
        const apart = p.left + p.width <= q.left || q.left + q.width <= p.left || p.top + p.height <= q.top || q.top + q.height <= p.top;
        assert.ok(apart, `badge ${p.label} overlaps badge ${q.label}`);
      }
    }
    assert.equal(lr.markerList.length, 6);
    assert.ok(lr.markerList.some((t) => /step 14\)?: lr-1e-4: learningRate=0.00005 evalEvery=2 temperature=0.7$/.test(t)), lr.markerList.join(' | '));
  }
  assert.match(plot(got.time, 'lr').markerList[0]!, /^24s \(step 12\): lr-3e-4/, 'on the time axis a change sits where the step before it ended');

  const png = path.join(ROOT, '.data', 'screenshots', 'compare-report.png');
  mkdirSync(path.dirname(png), { recursive: true });
  await screenshot(chromium, file, path.join(root, 'report.png'), 1400, 3000);
  copyFileSync(path.join(root, 'report.png'), png);
  process.stderr.write(`report screenshot: ${png}\n`);
});
