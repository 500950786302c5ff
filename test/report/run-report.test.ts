// A real run with every sink on (report, TensorBoard, W&B offline) whose worker is killed mid-run, read back by
// the official readers: TensorBoard's event loader and accumulator, `wandb leet inspect` of the wandb package,
// and headless Chromium for the report (every plot holds one point per step that has the metric, and painted
// it). The screenshot is kept at .data/screenshots/run-report.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import type { Stack } from '../../dev/stack';
import { localRunConfig, startTestStack } from '../helpers/local-run';
import { ensureVenv, type Venv } from '../helpers/python';
import { dumpDom, ensureChromium, screenshot } from '../helpers/chromium';
import { readJsonl, runPaths } from '../../records/run-files';
import { startOrAttach } from '../../cli/run-commands';
import { reportPath } from '../../report/write-report';
import { tensorboardRunDir } from '../../sinks/tensorboard';
import { PROBE, probeResult } from './browser-probe';
import { READERS_VENV } from './readers';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');

let stack: Stack | undefined;
let client: Client;
let dataDir = '';
let taskQueue = '';
let venv: Venv;
let chromium: string;
let faultDir = '';

before(async () => {
  faultDir = mkdtempSync(path.join(os.tmpdir(), 'agl-report-faults-'));
  const started = startTestStack('report', { workerEnv: { WANDB_MODE: 'offline', AGL_FAULT_POINTS: 'checkpoint.before_record', AGL_FAULT_DIR: faultDir } });
  [venv, chromium, { stack, dataDir, taskQueue }] = await Promise.all([READERS_VENV(), ensureChromium(), started]);
  client = new Client({ connection: await Connection.connect({ address: stack!.temporal.address, connectTimeout: '60 seconds' }) });
});

after(async () => {
  await stack?.stop();
});

const same = (a: unknown, b: unknown) => (typeof b === 'number' && Number.isNaN(b) ? a === 'NaN' || a === null : a === b);

test('a run killed mid-run leaves each step once in TensorBoard and W&B, and a report Chromium draws', { timeout: 600_000 }, async () => {
  const runName = `report-${process.pid}`;
  const cfg = localRunConfig(stack!, dataDir, runName, {
    evalEvery: 2,
    saveEvery: 1,
    activityHeartbeatTimeoutSeconds: 5,
    tensorboardDir: path.join(dataDir, 'tb'),
    wandbProject: 'agl-test',
    wandbName: 'report e2e',
    datasetBuilder: { batchSize: 4, groupSize: 2, trainDataset: ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12', '13', '14', '15', '16'], valDataset: ['500', '501'] },
  });
  // Kill the worker (SIGKILL) while it saves the checkpoint after the second step, before that step is logged.
  mkdirSync(path.join(faultDir, runName), { recursive: true });
  writeFileSync(path.join(faultDir, runName, 'checkpoint.before_record.armed'), '2');
  const result = await (await startOrAttach(client, taskQueue, cfg)).handle.result();
  assert.equal(result.batchesCompleted, 4);
  assert.ok(existsSync(path.join(faultDir, runName, 'checkpoint.before_record.fired')), 'the worker was killed mid-run');

  const rows = readJsonl(runPaths(cfg.logPath).metrics);
  assert.deepEqual(rows.map((r) => r.step), [0, 1, 2, 3]);

  // TensorBoard: one scalar per metric and step, read by TensorBoard's own loader (duplicates would show).
  const tbDir = tensorboardRunDir(cfg.tensorboardDir!, runName);
  const tb = JSON.parse((await run(venv.python, [path.join(__dirname, 'read_tensorboard.py'), tbDir], { maxBuffer: 64 << 20 })).stdout) as {
    files: string[];
    events: [string, number, number | null][];
    accumulated: Record<string, [number, number | null][]>;
  };
  assert.equal(tb.files.length, 1, 'one event file across the crash');
  const expected = rows.flatMap((r) => Object.entries(r).filter(([k, v]) => k !== 'step' && typeof v === 'number').map(([k, v]) => [k, r.step, v] as const));
  assert.equal(tb.events.length, expected.length, 'every metric of every step once');
  for (const [tag, step, value] of expected) {
    const got = tb.events.filter((e) => e[0] === tag && e[1] === step);
    assert.equal(got.length, 1, `${tag} at step ${step} once`);
    if (Number.isFinite(value)) assert.ok(Math.abs(got[0]![2]! - Math.fround(value as number)) <= 1e-6 * Math.max(1, Math.abs(value as number)), `${tag}@${step}`);
  }
  assert.deepEqual(tb.accumulated['env/all/reward/total']!.map((e) => e[0]), [0, 1, 2, 3], 'TensorBoard shows the reward at every step');

  // W&B: one offline run, its transaction log printed by the wandb package's own reader, row for row.
  const wandbDir = path.join(cfg.logPath, 'wandb');
  const runDirs = readdirSync(wandbDir).filter((d) => d.startsWith('offline-run-'));
  assert.equal(runDirs.length, 1, 'resumed, not a second W&B run');
  const logFile = path.join(wandbDir, runDirs[0]!, readdirSync(path.join(wandbDir, runDirs[0]!)).find((f) => f.endsWith('.wandb'))!);
  const records = (await run(path.join(venv.binDir, 'wandb'), ['leet', 'inspect', '--json', logFile], { maxBuffer: 64 << 20 })).stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; [k: string]: any });
  const history = records.filter((r) => r.type === 'history').map((r) => r.history);
  assert.deepEqual(history.map((h) => h.step.num), [0, 1, 2, 3], 'one W&B step per training step, each once');
  rows.forEach((row, i) => {
    for (const [k, v] of Object.entries(row)) if (k !== 'step') assert.ok(same(history[i].item[k], v), `W&B ${k} at step ${row.step}: ${history[i].item[k]} vs ${v}`);
    assert.equal(history[i].item._step, row.step);
  });
  const runRecord = records.find((r) => r.type === 'run')!.run;
  assert.equal(runRecord.project, 'agl-test');
  assert.equal(runRecord.display_name, 'report e2e');
  assert.deepEqual(runRecord.config.update, JSON.parse(readFileSync(runPaths(cfg.logPath).config, 'utf8')), 'the run config is the W&B config');
  assert.equal(records.filter((r) => r.type === 'run').length, 1);
  assert.equal(records.filter((r) => r.type === 'exit').length, 1, 'finished once');

  // The report, in headless Chromium: each plot holds one point per step that has its metric, and drew it.
  const html = reportPath(cfg.logPath);
  assert.match(readFileSync(html, 'utf8'), /finished after 4 steps/);
  const probed = path.join(dataDir, 'probed-report.html');
  writeFileSync(probed, readFileSync(html, 'utf8').replace('</body>', `${PROBE}</body>`));
  const charts = probeResult(await dumpDom(chromium, probed));
  const count = (key: string) => rows.filter((r) => typeof r[key] === 'number').length;
  const byId = new Map(charts.map((c) => [c.id, c]));
  const named = ['entropy', 'grad-norm', 'group-mix', 'kl', 'loss', 'lr', 'reward', 'rollouts', 'time', 'tokens'];
  assert.deepEqual(named.filter((id) => !byId.has(id)), [], 'every named plot drawn');
  assert.ok([...byId.keys()].filter((id) => !named.includes(id)).every((id) => id.startsWith('more-')), 'the rest are the plots of metrics no named plot draws');
  const points = (id: string, label: string) => byId.get(id)!.series.find((s) => s.label === label)?.points;
  assert.equal(points('reward', 'train'), 4);
  assert.equal(points('grad-norm', 'grad_norm:mean'), count('grad_norm:mean'));
  assert.equal(points('group-mix', 'mixed (rewards differ: a learning signal)'), 4);

  assert.equal(points('reward', 'eval'), count('test/env/all/reward/total'));
  assert.equal(points('reward', 'eval'), 2);
  assert.equal(points('entropy', 'entropy'), count('optim/entropy'));
  assert.equal(points('lr', 'learning rate'), 4);
  assert.equal(points('tokens', 'sampled (action)'), 4);
  assert.equal(points('rollouts', 'succeeded'), 4);
  assert.equal(points('loss', 'optim/loss:sum'), count('optim/loss:sum'));
  assert.equal(points('time', 'orchestration (the rest)'), 4, 'the top of each stacked bar');
  for (const c of charts) {
    assert.equal(c.x, 4, `${c.id}: one x per step`);
    assert.ok(c.series.every((s) => s.points > 0), `${c.id}: every series has points`);
    assert.ok(c.painted > 50, `${c.id}: the canvas shows its series' colours (${c.painted} pixels)`);
  }
  const png = path.join(ROOT, '.data', 'screenshots', 'run-report.png');
  mkdirSync(path.dirname(png), { recursive: true });
  await screenshot(chromium, html, path.join(dataDir, 'report.png'));
  copyFileSync(path.join(dataDir, 'report.png'), png);
  process.stderr.write(`report screenshot: ${png}\n`);
});
