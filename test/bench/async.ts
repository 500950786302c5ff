// `npm run bench -- async`: synchronous against async off-policy training of the hello task with a long-tail agent
// (hello-longtail: a seeded log-normal delay per rollout, p99 = 10 x median), on one stack (Temporal dev server,
// store, local trainer, proxy, worker, runners), one run after the other in the same process. For each it measures
// the wall time until the train reward reaches the target (a running mean over the last --window steps, so one
// lucky batch does not count), the steps taken, the trainer's idle fraction and, for async, staleness; prints both
// reward curves side by side; and ends with `async speedup to reward 0.8: <ratio>x` (sync wall / async wall).
//
//   npm run bench -- async [--median-ms 2000] [--steps 40] [--runners 64] [--target 0.8] [--window 3] [--full]
//                          [--max-off-policy 1] [--async-loss NAME] [--eval-every 0] [--only sync|async] [--timeout-min 15]
//                          [--keep] [--verbose]
//
// The configs are the hello example's (dev/examples.ts, = agents/examples/hello.run.json) with the stack's URLs, a
// log path under a temporary folder, distinct run names and, by default, no evaluation (it is the same work in both
// modes and is not what is compared). Its 320 tasks make 20 steps per epoch: --steps above 20 adds epochs (rounded
// up to whole epochs; the first 20 steps are the hello run's), below 20 keeps the first steps x 16 tasks. Each run is
// stopped (the `stop` update: the step in flight finishes) once it reaches the target, unless --full. The async run adds
// `"async": {"maxStepsOffPolicy": 1, "groupsPerBatch": <batchSize>}`. The base model is built once and cached under
// .data/bench/ (or copied from .data/trainer/ when `npm start` built it), so no run pays for it.
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { startStack, type Stack } from '../../dev/stack';
import { EXAMPLES } from '../../dev/examples';
import { validateRunConfig } from '../../config/load';
import type { RunConfigInput } from '../../config/run-config';
import { startOrAttach, stop } from '../../cli/run-commands';
import { readJsonl, runPaths } from '../../records/run-files';
import { baseDir, loadOrBuildBase, recipeFor, recipeHash } from '../../trainer/model/base-models';
import { readMeta } from '../../trainer/model/checkpoint';
import type { trainingRun } from '../../workflows/training-run';

const ROOT = path.resolve(__dirname, '..', '..');
const MODEL = 'local/tiny-hello';

const { values: v } = parseArgs({
  options: {
    'median-ms': { type: 'string', default: '2000' },
    steps: { type: 'string', default: '40' },
    full: { type: 'boolean', default: false },
    runners: { type: 'string', default: '64' },
    target: { type: 'string', default: '0.8' },
    window: { type: 'string', default: '3' },
    'max-off-policy': { type: 'string', default: '1' },
    'eval-every': { type: 'string', default: '0' },
    'async-loss': { type: 'string' },
    only: { type: 'string' },
    'timeout-min': { type: 'string', default: '15' },
    keep: { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
  },
  strict: true,
});

function num(name: keyof typeof v, check: (x: number) => boolean, what: string): number {
  const x = Number(v[name]);
  if (!check(x)) {
    process.stderr.write(`bench async: --${name} must be ${what}, got ${JSON.stringify(v[name])}\n`);
    process.exit(2);
  }
  return x;
}
const MEDIAN_MS = num('median-ms', (x) => Number.isFinite(x) && x >= 0, 'a non-negative number of ms');
const STEPS = num('steps', (x) => Number.isInteger(x) && x >= 1, 'a positive integer');
const RUNNERS = num('runners', (x) => Number.isInteger(x) && x >= 1, 'a positive integer');
const TARGET = num('target', Number.isFinite, 'a number');
const WINDOW = num('window', (x) => Number.isInteger(x) && x >= 1, 'a positive integer');
const MAX_OFF_POLICY = num('max-off-policy', (x) => Number.isInteger(x) && x >= 0, 'a non-negative integer');
const EVAL_EVERY = num('eval-every', (x) => Number.isInteger(x) && x >= 0, 'a non-negative integer');
const TIMEOUT_MS = num('timeout-min', (x) => x > 0, 'a positive number') * 60_000;
if (v.only !== undefined && v.only !== 'sync' && v.only !== 'async') {
  process.stderr.write(`bench async: --only must be sync or async, got ${JSON.stringify(v.only)}\n`);
  process.exit(2);
}
const MODES = (v.only ? [v.only] : ['sync', 'async']) as Mode[];

type Mode = 'sync' | 'async';
type Row = Record<string, unknown>;

interface StepPoint {
  step: number;
  /** Seconds from the run's start until its metrics row appeared. */
  wall: number;
  reward: number | null;
  /** Mean reward of the last WINDOW steps (null until there are WINDOW of them). */
  windowMean: number | null;
  row: Row;
}

interface ModeResult {
  mode: Mode;
  /** Why there is no measurement (config refused, run failed, timed out). */
  error?: string;
  points: StepPoint[];
  totalSeconds: number;
  /** The first step whose window mean reached the target, and when. */
  reached?: { step: number; wall: number };
  /** The first single step whose reward reached the target, and when. */
  reachedSingle?: { step: number; wall: number };
  logPath: string;
  /** The loss as configured (the schema's default for the mode when not set). */
  loss?: string;
}

const t0 = Date.now();
const say = (line: string) => process.stdout.write(`${line}\n`);
const log = (line: string) => process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`);
const numberOf = (row: Row, key: string): number | null => (typeof row[key] === 'number' && Number.isFinite(row[key]) ? (row[key] as number) : null);
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The base model in <dataDir>/trainer, copied from a cache (built there first when no cache has it). */
async function provideBaseModel(dataDir: string): Promise<void> {
  const recipe = recipeFor(MODEL);
  const want = recipeHash(recipe);
  const fresh = async (root: string) => readMeta(baseDir(root, MODEL)).then((m) => m.recipe === want, () => false);
  const caches = [path.join(ROOT, '.data', 'trainer'), path.join(ROOT, '.data', 'bench')];
  let source: string | undefined;
  for (const c of caches) if (await fresh(c)) source = c;
  if (!source) {
    source = caches[1]!;
    log(`building the base model ${MODEL} once (a few minutes), cached under ${source}`);
    await loadOrBuildBase(source, recipe, log);
  }
  cpSync(baseDir(source, MODEL), baseDir(path.join(dataDir, 'trainer'), MODEL), { recursive: true });
}

function configFor(stack: Stack, mode: Mode, runName: string, logPath: string): RunConfigInput & { async?: unknown } {
  const base = EXAMPLES['hello-longtail']!.config({ storeUrl: stack.storeUrl, trainerUrl: stack.trainerUrl, proxyPort: stack.proxyPort, logPath });
  const batchSize = base.datasetBuilder.batchSize;
  const cfg: RunConfigInput & { async?: unknown } = {
    ...base,
    runName,
    logPath,
    evalEvery: EVAL_EVERY,
    datasetBuilder: { ...base.datasetBuilder, ...datasetFor(base.datasetBuilder.trainDataset ?? [], batchSize) },
  };
  // The cookbook's AsyncConfig: train on the first `groupsPerBatch` groups to finish, at most --max-off-policy steps stale.
  if (mode === 'async') cfg.async = { maxStepsOffPolicy: MAX_OFF_POLICY, groupsPerBatch: batchSize };
  // The async run's loss, when not the config's default for async runs (the schema checks the name).
  if (mode === 'async' && v['async-loss'] !== undefined) (cfg as Record<string, unknown>).lossFn = v['async-loss'];
  return cfg;
}

/** The hello tasks for STEPS steps: the first STEPS x batchSize of them, or whole epochs of all of them. */
function datasetFor(tasks: unknown[], batchSize: number): { trainDataset: unknown[]; nEpochs: number } {
  const perEpoch = Math.floor(tasks.length / batchSize);
  if (STEPS <= perEpoch) return { trainDataset: tasks.slice(0, STEPS * batchSize), nEpochs: 1 };
  return { trainDataset: tasks, nEpochs: Math.ceil(STEPS / perEpoch) };
}

/** Step points from the metrics rows, each stamped with the wall time its row was first seen. */
function pointsOf(rows: Row[], seenAt: Map<number, number>): StepPoint[] {
  const byStep = new Map<number, Row>();
  for (const r of rows) if (typeof r.step === 'number') byStep.set(r.step, r);
  const steps = [...byStep.keys()].sort((a, b) => a - b);
  const rewards: number[] = [];
  return steps.map((step) => {
    const row = byStep.get(step)!;
    const reward = numberOf(row, 'env/all/reward/total');
    rewards.push(reward ?? NaN);
    const last = rewards.slice(-WINDOW);
    const windowMean = last.length === WINDOW && last.every(Number.isFinite) ? mean(last) : null;
    return { step, wall: seenAt.get(step) ?? NaN, reward, windowMean, row };
  });
}

async function runMode(stack: Stack, client: Client, taskQueue: string, dataDir: string, mode: Mode): Promise<ModeResult> {
  const runName = `bench-${mode}-${taskQueue.slice(-8)}`;
  const logPath = path.join(dataDir, 'runs', runName);
  const metricsFile = runPaths(logPath).metrics;
  const empty = (error: string): ModeResult => ({ mode, error, points: [], totalSeconds: NaN, logPath });
  let cfg;
  try {
    cfg = validateRunConfig(configFor(stack, mode, runName, logPath), `${mode} config`);
  } catch (err) {
    return empty(`config refused (${mode === 'async' ? 'has the `async` config field landed? ' : ''}${(err as Error).message.replace(/\n\s*/g, ' ')})`);
  }
  const started = Date.now();
  const run = await startOrAttach(client, taskQueue, cfg, { fresh: true });
  const d = cfg.datasetBuilder;
  const numBatches = Math.floor((d.trainDataset?.length ?? 0) / d.batchSize) * d.nEpochs;
  const loss = String((cfg as { lossFn?: unknown }).lossFn ?? 'default');
  log(`${mode}: started ${run.workflowId} (${numBatches} steps at most, loss ${loss}, logs under ${logPath})`);
  const handle = run.handle as WorkflowHandle<typeof trainingRun>;

  const seenAt = new Map<number, number>();
  let reported = 0;
  const poll = () => {
    const now = (Date.now() - started) / 1000;
    const rows = readJsonl(metricsFile);
    for (const r of rows) if (typeof r.step === 'number' && !seenAt.has(r.step)) seenAt.set(r.step, now);
    const points = pointsOf(rows, seenAt);
    for (const p of points.slice(reported)) {
      const f = (x: number | null) => (x === null ? '   -' : x.toFixed(2));
      const stale = numberOf(p.row, 'async/staleness_max');
      log(`${mode}: step ${p.step} reward ${f(p.reward)} mean${WINDOW} ${f(p.windowMean)} at ${p.wall.toFixed(1)} s${stale === null ? '' : `, staleness max ${stale}`}`);
    }
    reported = Math.max(reported, points.length);
    return points;
  };

  let error: string | undefined;
  let ended = false;
  let stopSent = false;
  const result = handle.result().then(
    () => undefined,
    (err: Error) => {
      error = `the run failed: ${err.message}${err.cause ? `: ${(err.cause as Error).message}` : ''}`;
    },
  ).finally(() => {
    ended = true;
  });
  while (!ended && Date.now() - started < TIMEOUT_MS) {
    const points = poll();
    if (!v.full && !stopSent && points.some((p) => p.windowMean !== null && p.windowMean >= TARGET)) {
      // The rest of the run tells nothing about the time to the target: end it (the step in flight finishes).
      stopSent = true;
      log(`${mode}: target reached, stopping the run`);
      void stop(handle, 'bench: target reached').catch((err: Error) => log(`${mode}: stop refused: ${err.message}`));
    }
    await Promise.race([result, sleep(250)]);
  }
  if (!ended) {
    error = `timed out after ${TIMEOUT_MS / 60_000} min; terminated`;
    await handle.terminate('bench timeout').catch(() => undefined);
  }
  const totalSeconds = (Date.now() - started) / 1000;
  const points = poll();
  const firstAt = (ok: (p: StepPoint) => boolean) => {
    const p = points.find(ok);
    return p ? { step: p.step, wall: p.wall } : undefined;
  };
  return {
    mode,
    error,
    points,
    totalSeconds,
    reached: firstAt((p) => p.windowMean !== null && p.windowMean >= TARGET),
    reachedSingle: firstAt((p) => p.reward !== null && p.reward >= TARGET),
    logPath,
    loss,
  };
}

/** Trainer idle fraction: the async loop's own metric when logged, else (time/total - time/train) / time/total. */
function idleFraction(points: StepPoint[]): { value: number; how: string } {
  const own = points.map((p) => numberOf(p.row, 'async/trainer_idle_frac')).filter((x): x is number => x !== null);
  if (own.length === points.length && own.length > 0) return { value: mean(own), how: 'mean of async/trainer_idle_frac' };
  let total = 0;
  let train = 0;
  for (const p of points) {
    const t = numberOf(p.row, 'time/total');
    const tr = numberOf(p.row, 'time/train');
    if (t === null || tr === null) continue;
    total += t;
    train += tr;
  }
  return { value: total > 0 ? (total - train) / total : NaN, how: 'sum(time/total - time/train) / sum(time/total)' };
}

function summarize(r: ModeResult): string[] {
  const lines = [`${r.mode}:${r.loss ? ` (loss ${r.loss})` : ''}`];
  if (r.error) lines.push(`  ERROR: ${r.error}`);
  if (r.points.length === 0) return lines;
  const reach = r.reached
    ? `${r.reached.wall.toFixed(1)} s, at step ${r.reached.step} (${r.reached.step + 1} steps)`
    : `not reached in ${r.points.length} steps (best mean${WINDOW} ${Math.max(...r.points.map((p) => p.windowMean ?? -Infinity)).toFixed(2)})`;
  lines.push(`  wall time to train reward ${TARGET} (mean of the last ${WINDOW} steps): ${reach}`);
  lines.push(
    `  first single step at ${TARGET}: ${r.reachedSingle ? `step ${r.reachedSingle.step}, ${r.reachedSingle.wall.toFixed(1)} s` : 'none'}`,
  );
  lines.push(`  run: ${r.points.length} steps in ${r.totalSeconds.toFixed(1)} s (start to end, final checkpoint included${r.reached && !v.full ? '; stopped at the target' : ''})`);
  const perStep = ['time/total', 'time/sample', 'time/train']
    .map((k) => [k, r.points.map((p) => numberOf(p.row, k)).filter((x): x is number => x !== null)] as const)
    .filter(([, xs]) => xs.length > 0)
    .map(([k, xs]) => `${k} ${mean(xs).toFixed(2)} s`);
  if (perStep.length) lines.push(`  mean per step: ${perStep.join(', ')}`);
  const idle = idleFraction(r.points);
  lines.push(`  trainer idle fraction: ${idle.value.toFixed(3)} (${idle.how})`);
  const asyncKeys = [...new Set(r.points.flatMap((p) => Object.keys(p.row)).filter((k) => k.startsWith('async/')))].sort();
  if (r.mode === 'async' && asyncKeys.length === 0) {
    lines.push('  WARNING: no async/* metrics were logged: this run trained synchronously (has the async loop landed?)');
  }
  const sm = r.points.map((p) => numberOf(p.row, 'async/staleness_mean')).filter((x): x is number => x !== null);
  const sx = r.points.map((p) => numberOf(p.row, 'async/staleness_max')).filter((x): x is number => x !== null);
  if (sm.length || sx.length) {
    const max = Math.max(...sx);
    lines.push(
      `  staleness: mean ${mean(sm).toFixed(2)}, max ${max} (bound ${MAX_OFF_POLICY}${max > MAX_OFF_POLICY ? ': EXCEEDED' : ''})`,
    );
  }
  for (const k of asyncKeys) {
    if (k === 'async/staleness_mean' || k === 'async/staleness_max') continue;
    const xs = r.points.map((p) => numberOf(p.row, k)).filter((x): x is number => x !== null);
    if (xs.length) lines.push(`  ${k}: mean ${mean(xs).toFixed(3)}, max ${Math.max(...xs)}, sum ${xs.reduce((a, b) => a + b, 0).toFixed(2)}`);
  }
  return lines;
}

/** Both reward curves side by side: per step the wall time its metrics row appeared, its reward and the window mean. */
function curves(results: ModeResult[]): string[] {
  const n = Math.max(0, ...results.map((r) => r.points.length));
  const f = (x: number | null | undefined, d = 2, w = 6) => (x === null || x === undefined || !Number.isFinite(x) ? '-'.padStart(w) : x.toFixed(d).padStart(w));
  const head = results.map((r) => `${`${r.mode}: wall s  reward  mean${WINDOW}`.padStart(30)}${r.mode === 'async' ? '  stale' : ''}`).join('   ');
  const lines = [`step ${head}`];
  for (let i = 0; i < n; i++) {
    const cells = results.map((r) => {
      const p = r.points[i];
      const stale = r.mode === 'async' ? `  ${f(p ? numberOf(p.row, 'async/staleness_max') : null, 0, 5)}` : '';
      return `${''.padStart(6)}${f(p?.wall, 1, 8)}  ${f(p?.reward)}  ${f(p?.windowMean)}${stale}`.padStart(30 + stale.length);
    });
    lines.push(`${String(results[0]?.points[i]?.step ?? i).padStart(4)} ${cells.join('   ')}`);
  }
  return lines;
}

async function main(): Promise<number> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agl-bench-async-'));
  const taskQueue = `bench-async-${randomUUID()}`;
  say(`async bench: hello-longtail (median delay ${MEDIAN_MS} ms, p99 ${MEDIAN_MS * 10} ms), ${RUNNERS} runners, up to ${STEPS} steps${v.full ? '' : ' (each run stopped at the target)'}, target train reward ${TARGET} (mean of the last ${WINDOW} steps), model ${MODEL}`);
  await provideBaseModel(dataDir);
  let stack: Stack | undefined;
  let connection: Connection | undefined;
  let ratio: string | undefined;
  let reachedAll = false;
  const cleanup = async () => {
    await connection?.close().catch(() => undefined);
    await stack?.stop().catch(() => undefined);
    if (!v.keep) rmSync(dataDir, { recursive: true, force: true });
    else say(`kept ${dataDir}`);
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  try {
    stack = await startStack({
      dataDir,
      ports: { temporal: 0, ui: 0, store: 0, trainer: 0, proxy: 0 },
      taskQueue,
      initialModel: MODEL,
      renderer: 'role_colon',
      agent: 'hello-longtail',
      runners: RUNNERS,
      runnerEnv: { AGL_LONGTAIL_MEDIAN_MS: String(MEDIAN_MS) },
      echo: v.verbose,
      log: (l) => log(`stack: ${l}`),
    });
    log(`stack up (Temporal UI ${stack.temporal.uiUrl ?? '-'})`);
    connection = await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' });
    const client = new Client({ connection });
    const results: ModeResult[] = [];
    for (const mode of MODES) results.push(await runMode(stack, client, taskQueue, dataDir, mode));

    say('');
    say(`reward curves (wall s = seconds from the run's start until the step's metrics row appeared; mean${WINDOW} = mean of the last ${WINDOW} steps)`);
    for (const line of curves(results.filter((r) => r.points.length > 0))) say(line);
    say('');
    for (const r of results) for (const line of summarize(r)) say(line);
    const sync = results.find((r) => r.mode === 'sync')?.reached;
    const async = results.find((r) => r.mode === 'async')?.reached;
    reachedAll = results.every((r) => r.reached !== undefined && !r.error);
    if (sync !== undefined && async !== undefined && async.wall > 0) ratio = `${(sync.wall / async.wall).toFixed(2)}x`;
  } finally {
    await cleanup();
  }
  // The last line, after the stack is down (n/a when either run did not reach the target, or did not run).
  say(`async speedup to reward ${TARGET}: ${ratio ?? 'n/a'}`);
  return ratio || (MODES.length === 1 && reachedAll) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    process.stderr.write(`bench async: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
