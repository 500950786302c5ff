// `npm run bench -- async`: synchronous against async off-policy training of the hello task with a long-tail agent
// (hello-longtail: a seeded log-normal delay per rollout, p99 = 10 x median), with equal arms: each comparison runs
// the same loss in both modes (ppo/ppo and importance_sampling/importance_sampling), for three tail shapes (median
// 0.3 s, 1 s, 2 s), and the async side under each staleness rule ('pace', the default; 'resample'; 'late', the
// cookbook 0.6.1 rule that trains stragglers past the bound rather than wait or resample). One stack
// per tail shape (Temporal dev server, store, local trainer, proxy, worker, runners), the runs one after the other.
// Every figure is aggregated the same way for every arm: the wall time until the train reward reaches the target (a
// running mean over the last --window steps), the steps taken, the trainer idle fraction as
// sum(time/total - time/train) / sum(time/total), and the ideal: the wall time had the trainer never waited (steps to
// the target x mean time/train). For async arms also staleness (from the spans, as the run logs it), rollouts wasted
// (groups sent back or dropped as stale over groups started) and slow groups trained as first sampled (the 10 % of
// dataset groups whose slowest first-sample rollout is slowest; 'resample' sends such groups back when they come in
// too stale). It writes docs/async-bench.md and ends with `async speedup to reward 0.8: <ratio>x` (2 s median,
// ppo/ppo, pace).
//
//   npm run bench -- async [--medians 300,1000,2000] [--losses ppo,importance_sampling] [--rules pace,resample,late]
//                          [--steps 40] [--runners 64] [--target 0.8] [--window 3] [--full] [--max-off-policy 6]
//                          [--pipeline-depth N] (pace only; default: the run's, min(1, K))
//                          [--concurrency 128] (rollouts in flight, both arms; the example's is 64)
//                          [--learning-rate X] (both arms; default: the example's, 3e-3)
//                          [--seeds 1,2,3] (each arm once per seed; default: the example's; the headline then
//                          compares mean walls over the seeds)
//                          [--eval-every 0] [--timeout-min 15] [--out docs/async-bench.md] [--json FILE] [--keep]
//                          [--verbose]
//
// The configs are the hello example's (dev/examples.ts) with the stack's URLs, a log path under a temporary folder,
// distinct run names, the arm's loss and, by default, no evaluation. Its 320 tasks make 20 steps per epoch: --steps
// above 20 adds epochs. Each run is stopped (the step in flight finishes) once it reaches the target, unless --full.
// The async runs add `"async": {"maxStepsOffPolicy": 6, "groupsPerBatch": 16, "staleRule": <rule>}`. The base model is
// built once and cached under .data/bench/, so no run pays for it. The whole matrix is 24 runs: about two hours
// on a quiet 2-core machine; `--medians 300 --losses ppo --steps 4 --target 0` is a smoke run of a few minutes.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { loadAverage } from './bench-kit';
import { stepRecordsOf } from '../helpers/run-records';
import { rolloutSeed } from '../../activities/rollout-batch';
import { longTailDelayMs } from '../../agents/examples/hello-longtail';
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
import { ASYNC_DEFAULTS } from '../../config/run-config';
import { StoreClient } from '../../store/client';

const ROOT = path.resolve(__dirname, '..', '..');
const MODEL = 'local/tiny-hello';

const { values: v } = parseArgs({
  options: {
    medians: { type: 'string', default: '300,1000,2000' },
    losses: { type: 'string', default: 'ppo,importance_sampling' },
    rules: { type: 'string', default: 'pace,resample,late' },
    steps: { type: 'string', default: '40' },
    full: { type: 'boolean', default: false },
    runners: { type: 'string', default: '64' },
    target: { type: 'string', default: '0.8' },
    window: { type: 'string', default: '3' },
    // Unset: the run config's defaults (`"async": {}`, config/run-config.ts ASYNC_DEFAULTS); concurrency twice the runners.
    'max-off-policy': { type: 'string' },
    'pipeline-depth': { type: 'string' },
    concurrency: { type: 'string', default: '128' },
    'learning-rate': { type: 'string' },
    seeds: { type: 'string' },
    'eval-every': { type: 'string', default: '0' },
    'timeout-min': { type: 'string', default: '15' },
    out: { type: 'string', default: 'docs/async-bench.md' },
    json: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'skip-sync': { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
  },
  strict: true,
});

function fail(line: string): never {
  process.stderr.write(`bench async: ${line}\n`);
  process.exit(2);
}
function num(name: keyof typeof v, check: (x: number) => boolean, what: string): number {
  const x = Number(v[name]);
  if (!check(x)) fail(`--${name} must be ${what}, got ${JSON.stringify(v[name])}`);
  return x;
}
function list<T extends string>(name: keyof typeof v, allowed: readonly T[] | null): T[] {
  const xs = String(v[name]).split(',').map((x) => x.trim()).filter(Boolean);
  if (xs.length === 0) fail(`--${name} names nothing`);
  for (const x of xs) if (allowed && !allowed.includes(x as T)) fail(`--${name}: ${JSON.stringify(x)} is not one of ${allowed.join(', ')}`);
  return xs as T[];
}
const MEDIANS = list('medians', null).map((x) => {
  const ms = Number(x);
  if (!Number.isFinite(ms) || ms < 0) fail(`--medians: ${JSON.stringify(x)} is not a non-negative number of ms`);
  return ms;
});
const LOSSES = list('losses', ['ppo', 'importance_sampling', 'cispo', 'dro'] as const);
const RULES = list('rules', ['pace', 'resample', 'late'] as const);
const STEPS = num('steps', (x) => Number.isInteger(x) && x >= 1, 'a positive integer');
const RUNNERS = num('runners', (x) => Number.isInteger(x) && x >= 1, 'a positive integer');
const TARGET = num('target', Number.isFinite, 'a number');
const WINDOW = num('window', (x) => Number.isInteger(x) && x >= 1, 'a positive integer');
/** K as told (--max-off-policy), else null: the async arms send no maxStepsOffPolicy and get the run config's. */
const MAX_OFF_POLICY_TOLD = v['max-off-policy'] === undefined ? null : num('max-off-policy', (x) => Number.isInteger(x) && x >= 0, 'a non-negative integer');
const MAX_OFF_POLICY = MAX_OFF_POLICY_TOLD ?? ASYNC_DEFAULTS.maxStepsOffPolicy;
/** Rollouts in flight, both arms. A sync batch of 64 rollouts is not changed by more than 64. */
const CONCURRENCY = num('concurrency', (x) => Number.isInteger(x) && x >= 1, 'a positive integer');
/** Both arms' learning rate; unset = the example's (3e-3). */
const LEARNING_RATE = v['learning-rate'] === undefined ? null : num('learning-rate', (x) => x > 0 && x < 1, 'a learning rate between 0 and 1');
/** The example's own config (plain data; the URLs do not matter here): its learning rate and seed are the defaults. */
const exampleConfig = () => EXAMPLES['hello-longtail']!.config({ storeUrl: '', trainerUrl: '', proxyPort: 0, logPath: '' });
/** pace's pipelineDepth; unset = the run config's default, min(ASYNC_DEFAULTS.pipelineDepth, K). */
const PIPELINE_DEPTH = v['pipeline-depth'] === undefined ? null : num('pipeline-depth', (x) => Number.isInteger(x) && x >= 0 && x <= MAX_OFF_POLICY, `an integer from 0 to --max-off-policy (${MAX_OFF_POLICY})`);
/** Run seeds (the dataset order, each rollout's delay, the model's init): every arm runs once per seed. */
const SEEDS = v.seeds === undefined ? [exampleConfig().datasetBuilder.seed ?? 42] : list('seeds', null).map((x) => {
  const n = Number(x);
  if (!Number.isInteger(n) || n < 0) fail(`--seeds: ${JSON.stringify(x)} is not a non-negative integer`);
  return n;
});
const EVAL_EVERY = num('eval-every', (x) => Number.isInteger(x) && x >= 0, 'a non-negative integer');
const TIMEOUT_MS = num('timeout-min', (x) => x > 0, 'a positive number') * 60_000;
/** The arm the last line reports: the 2 s median, ppo in both modes, the default rule. */
const HEADLINE = { medianMs: 2000, loss: 'ppo', rule: 'pace' };

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

/** One run of the matrix: a tail shape, a loss (the same in both modes), sync or async under a rule. */
interface Arm {
  medianMs: number;
  loss: string;
  seed: number;
  mode: Mode;
  rule?: (typeof RULES)[number];
}
const armName = (a: Arm) => (a.mode === 'sync' ? 'sync' : `async ${a.rule}`);

interface ModeResult {
  mode: Mode;
  arm: Arm;
  runName: string;
  /** Async runs: the run's group counts (started, trained, sent back, dropped, failed). */
  counts?: Record<string, number>;
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
  /** The async config the run got, its defaults filled in. */
  asyncResolved?: unknown;
  /** /proc/loadavg (1, 5, 15 min) as the run started and as it ended. */
  loadStart: string;
  loadEnd?: string;
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

function configFor(stack: Stack, arm: Arm, runName: string, logPath: string): RunConfigInput {
  const base = EXAMPLES['hello-longtail']!.config({ storeUrl: stack.storeUrl, trainerUrl: stack.trainerUrl, proxyPort: stack.proxyPort, logPath });
  const batchSize = base.datasetBuilder.batchSize;
  return {
    ...base,
    runName,
    logPath,
    evalEvery: EVAL_EVERY,
    // The same loss in both modes: the comparison is of the loops, not of the losses.
    lossFn: arm.loss as RunConfigInput['lossFn'],
    concurrency: CONCURRENCY,
    ...(LEARNING_RATE === null ? {} : { learningRate: LEARNING_RATE }),
    datasetBuilder: { ...base.datasetBuilder, ...datasetFor(base.datasetBuilder.trainDataset ?? [], batchSize), seed: arm.seed },
    // Async: only what the command line told; the rest is the run config's defaults (groupsPerBatch = batchSize).
    ...(arm.mode === 'async'
      ? { async: { ...(MAX_OFF_POLICY_TOLD === null ? {} : { maxStepsOffPolicy: MAX_OFF_POLICY_TOLD }), staleRule: arm.rule, ...(arm.rule === 'pace' && PIPELINE_DEPTH !== null ? { pipelineDepth: PIPELINE_DEPTH } : {}) } }
      : {}),
  };
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
  // A row without a train reward after the last step is the final evaluation's: not a step.
  for (const r of rows) if (typeof r.step === 'number' && (r['env/all/reward/total'] !== undefined || r['time/train'] !== undefined)) byStep.set(r.step, r);
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

async function runMode(stack: Stack, client: Client, taskQueue: string, dataDir: string, arm: Arm): Promise<ModeResult> {
  const mode = arm.mode;
  const runName = `bench-${arm.medianMs}-${arm.loss}-s${arm.seed}-${mode}${arm.rule ? `-${arm.rule}` : ''}-${taskQueue.slice(-8)}`.replace(/_/g, '-');
  const logPath = path.join(dataDir, 'runs', runName);
  const metricsFile = runPaths(logPath).metrics;
  const loadStart = loadAverage();
  const empty = (error: string): ModeResult => ({ mode, arm, runName, error, points: [], totalSeconds: NaN, logPath, loadStart, loadEnd: loadAverage() });
  let cfg;
  try {
    cfg = validateRunConfig(configFor(stack, arm, runName, logPath), `${mode} config`);
  } catch (err) {
    return empty(`config refused (${(err as Error).message.replace(/\n\s*/g, ' ')})`);
  }
  const started = Date.now();
  const run = await startOrAttach(client, taskQueue, cfg, { fresh: true });
  const d = cfg.datasetBuilder;
  const numBatches = Math.floor((d.trainDataset?.length ?? 0) / d.batchSize) * d.nEpochs;
  const loss = String((cfg as { lossFn?: unknown }).lossFn ?? 'default');
  log(`${mode}: started ${run.workflowId} (${numBatches} steps at most, loss ${loss}${cfg.async ? `, async ${JSON.stringify(cfg.async)}` : ''}, logs under ${logPath}; load ${loadStart})`);
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
  let counts: Record<string, number> | undefined;
  const result = handle.result().then(
    (res) => {
      counts = res.asyncCounts as unknown as Record<string, number> | undefined;
    },
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
    arm,
    runName,
    counts,
    error,
    points,
    totalSeconds,
    reached: firstAt((p) => p.windowMean !== null && p.windowMean >= TARGET),
    reachedSingle: firstAt((p) => p.reward !== null && p.reward >= TARGET),
    logPath,
    loss,
    asyncResolved: cfg.async ?? undefined,
    loadStart,
    loadEnd: loadAverage(),
  };
}

/** Trainer idle fraction, one way for every arm: sum(time/total - time/train) / sum(time/total). */
function idleFraction(points: StepPoint[]): number {
  let total = 0;
  let train = 0;
  for (const p of points) {
    const t = numberOf(p.row, 'time/total');
    const tr = numberOf(p.row, 'time/train');
    if (t === null || tr === null) continue;
    total += t;
    train += tr;
  }
  return total > 0 ? (total - train) / total : NaN;
}

/** Dataset groups of an async run, by the delay of the slowest rollout of their first sample (what hello-longtail waits). */
function firstSampleDelays(numGroups: number, groupSize: number, seed: number, medianMs: number): number[] {
  return Array.from({ length: numGroups }, (_, g) =>
    Math.max(...Array.from({ length: groupSize }, (_, m) => longTailDelayMs(`seed:${rolloutSeed(`${seed}/async/g${g}r0/${m}`)}`, medianMs))),
  );
}

/**
 * The runners' time per rollout of a run, measured: the mean of end - start of each succeeded rollout's latest attempt
 * (dequeued to finished, as the store stamps them), with how many there were.
 */
async function rolloutSecondsOf(storeUrl: string, runName: string): Promise<{ mean: number; n: number }> {
  const store = new StoreClient(storeUrl);
  const xs: number[] = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await store.queryRollouts({ idempotency_key_prefix: `${runName}@`, limit: 1000, offset }, { timeoutMs: 30_000 });
    for (const r of page.items) {
      const a = (r as { attempt?: { start_time: number; end_time: number | null; status: string } }).attempt;
      if (a && a.status === 'succeeded' && a.end_time !== null) xs.push(a.end_time - a.start_time);
    }
    if (page.items.length < 1000) break;
  }
  return { mean: mean(xs), n: xs.length };
}

const median = (xs: number[]) => {
  const ys = [...xs].sort((a, b) => a - b);
  return ys.length === 0 ? NaN : ys.length % 2 ? ys[(ys.length - 1) / 2]! : (ys[ys.length / 2 - 1]! + ys[ys.length / 2]!) / 2;
};

/** Group keys each step trained (its step record, in the store's run records). */
async function trainedKeys(storeUrl: string, runName: string): Promise<string[]> {
  return (await stepRecordsOf(storeUrl, runName)).flatMap((r) => r.groups ?? []);
}

/** The figures of one arm, each aggregated the same way whatever the arm. */
export interface ArmFigures {
  medianMs: number;
  loss: string;
  seed: number;
  arm: string;
  error: string | null;
  steps: number;
  /** Seconds until the windowed train reward reached the target, and the step (null: not reached). */
  toTarget: number | null;
  stepAtTarget: number | null;
  /** Steps to the target x mean time/train: the wall time had the trainer never waited. */
  ideal: number | null;
  /** Median time/train over the run's steps. */
  trainMedian: number;
  /** Runner seconds per rollout (mean over the run's succeeded attempts) and the fleet's rollouts/s: runners / that. */
  rolloutSeconds: number;
  fleetRate: number;
  /** Steps to the target x max(median time/train, one step's rollouts / fleetRate): no loop can beat it. */
  floor: number | null;
  /** Wall to the target / floor. */
  floorRatio: number | null;
  /** /proc/loadavg at the arm's start and end. */
  loadStart: string;
  loadEnd: string;
  secondsPerStep: number;
  trainSecondsPerStep: number;
  idleFrac: number;
  finalReward: number | null;
  stalenessMean: number | null;
  stalenessMax: number | null;
  /** Async: groups sent back or dropped as stale / groups started. */
  wastedFrac: number | null;
  /** Async: trained groups served from further behind than maxStepsOffPolicy (the spans) / groups trained. */
  pastBoundFrac: number | null;
  /**
   * Async: of the slow groups (top 10 % slowest first sample among the groups the run got to) whose task was
   * trained, the share trained as first sampled rather than resampled.
   */
  slowTrainedFrac: number | null;
}

async function figuresOf(r: ModeResult, storeUrl: string): Promise<ArmFigures> {
  const pts = r.points;
  const colMean = (k: string) => {
    const xs = pts.map((p) => numberOf(p.row, k)).filter((x): x is number => x !== null);
    return xs.length ? mean(xs) : null;
  };
  const train = colMean('time/train') ?? NaN;
  const stepsTo = r.reached ? r.reached.step + 1 : null;
  let slowTrainedFrac: number | null = null;
  let wastedFrac: number | null = null;
  if (r.mode === 'async' && pts.length > 0) {
    const keys = await trainedKeys(storeUrl, r.runName);
    const lastG = Math.max(-1, ...keys.map((k) => Number(/^g(\d+)r/.exec(k)?.[1] ?? -1)));
    const delays = firstSampleDelays(lastG + 1, 4, r.arm.seed, r.arm.medianMs);
    const cut = [...delays].sort((a, b) => b - a)[Math.max(0, Math.ceil(delays.length / 10) - 1)] ?? Infinity;
    const trained = new Set(keys);
    const taskTrained = new Set(keys.map((k) => Number(/^g(\d+)r/.exec(k)?.[1] ?? -1)));
    // Of the slow groups whose task was trained (as sampled first, or resampled), the share trained as first sampled.
    const slow = delays.flatMap((d, g) => (d >= cut && taskTrained.has(g) ? [g] : []));
    slowTrainedFrac = slow.length ? slow.filter((g) => trained.has(`g${g}r0`)).length / slow.length : null;
    const c = r.counts;
    if (c && c.started > 0) wastedFrac = ((c.resampled ?? 0) + (c.droppedStale ?? 0)) / c.started;
  }
  const stale = pts.map((p) => numberOf(p.row, 'async/staleness_max')).filter((x): x is number => x !== null);
  const colSum = (k: string) => pts.reduce((a, p) => a + (numberOf(p.row, k) ?? 0), 0);
  const trainedGroups = colSum('async/groups_trained');
  const trainMedian = median(pts.map((p) => numberOf(p.row, 'time/train')).filter((x): x is number => x !== null));
  const rollouts = pts.length > 0 ? await rolloutSecondsOf(storeUrl, r.runName).catch(() => ({ mean: NaN, n: 0 })) : { mean: NaN, n: 0 };
  const fleetRate = RUNNERS / rollouts.mean;
  const perStep = exampleConfig().datasetBuilder.batchSize * (exampleConfig().datasetBuilder.groupSize ?? 1);
  const floorStep = Math.max(trainMedian, perStep / fleetRate);
  const floor = stepsTo !== null && Number.isFinite(floorStep) ? stepsTo * floorStep : null;
  return {
    medianMs: r.arm.medianMs,
    loss: r.arm.loss,
    seed: r.arm.seed,
    arm: armName(r.arm),
    error: r.error ?? null,
    steps: pts.length,
    toTarget: r.reached?.wall ?? null,
    stepAtTarget: r.reached?.step ?? null,
    ideal: stepsTo !== null && Number.isFinite(train) ? stepsTo * train : null,
    trainMedian,
    rolloutSeconds: rollouts.mean,
    fleetRate,
    floor,
    floorRatio: floor !== null && r.reached ? r.reached.wall / floor : null,
    loadStart: r.loadStart,
    loadEnd: r.loadEnd ?? '-',
    secondsPerStep: colMean('time/total') ?? NaN,
    trainSecondsPerStep: train,
    idleFrac: idleFraction(pts),
    finalReward: pts.at(-1)?.windowMean ?? null,
    stalenessMean: colMean('async/staleness_mean'),
    stalenessMax: stale.length ? Math.max(...stale) : null,
    wastedFrac,
    pastBoundFrac: r.mode === 'async' && trainedGroups > 0 ? colSum('async/groups_past_bound') / trainedGroups : null,
    slowTrainedFrac,
  };
}

/** Both reward curves side by side: per step the wall time its metrics row appeared, its reward and the window mean. */
function curves(results: ModeResult[]): string[] {
  const n = Math.max(0, ...results.map((r) => r.points.length));
  const f = (x: number | null | undefined, d = 2, w = 6) => (x === null || x === undefined || !Number.isFinite(x) ? '-'.padStart(w) : x.toFixed(d).padStart(w));
  const head = results.map((r) => `${`${armName(r.arm)}: wall s  reward  mean${WINDOW}`.padStart(34)}${r.mode === 'async' ? '  stale' : ''}`).join('   ');
  const lines = [`step ${head}`];
  for (let i = 0; i < n; i++) {
    const cells = results.map((r) => {
      const p = r.points[i];
      const stale = r.mode === 'async' ? `  ${f(p ? numberOf(p.row, 'async/staleness_max') : null, 0, 5)}` : '';
      return `${''.padStart(10)}${f(p?.wall, 1, 8)}  ${f(p?.reward)}  ${f(p?.windowMean)}${stale}`.padStart(34 + stale.length);
    });
    lines.push(`${String(i).padStart(4)} ${cells.join('   ')}`);
  }
  return lines;
}

const fx = (x: number | null, d = 1, unit = '') => (x === null || !Number.isFinite(x) ? '-' : `${x.toFixed(d)}${unit}`);
const pct = (x: number | null) => (x === null || !Number.isFinite(x) ? '-' : `${(100 * x).toFixed(0)} %`);

/** The speedup of each async arm over the sync arm of the same tail and loss (sync wall / async wall to the target). */
function speedup(all: ArmFigures[], a: ArmFigures): number | null {
  const sync = all.find((x) => x.arm === 'sync' && x.medianMs === a.medianMs && x.loss === a.loss && x.seed === a.seed);
  return sync?.toTarget && a.toTarget ? sync.toTarget / a.toTarget : null;
}

/**
 * Over every seed: mean sync wall to the target / mean wall of the async arm (tail, loss, rule of `a`); null when any
 * seed's pair did not reach it. With one seed, that seed's speedup.
 */
function speedupOverSeeds(all: ArmFigures[], a: Pick<ArmFigures, 'medianMs' | 'loss' | 'arm'>): number | null {
  const walls = (arm: string) => SEEDS.map((seed) => all.find((x) => x.arm === arm && x.medianMs === a.medianMs && x.loss === a.loss && x.seed === seed)?.toTarget ?? null);
  const sync = walls('sync');
  const other = walls(a.arm);
  if ([...sync, ...other].some((w) => w === null)) return null;
  return mean(sync as number[]) / mean(other as number[]);
}

/** Mean wall to the target / mean floor over the arms given (null when one did not reach it). */
function floorRatioOfMeans(xs: ArmFigures[]): number | null {
  if (xs.length === 0 || xs.some((x) => x.toTarget === null || x.floor === null)) return null;
  return mean(xs.map((x) => x.toTarget!)) / mean(xs.map((x) => x.floor!));
}

/** With several seeds: per tail, loss and async rule, the mean walls and their ratio. */
function seedSummary(all: ArmFigures[]): string[] {
  if (SEEDS.length < 2) return [];
  const lines = [`Over seeds ${SEEDS.join(', ')} (mean wall s to ${TARGET}; a seed that did not reach it leaves the ratio out):`, '', '| median | loss | arm | mean wall s, sync | mean wall s, async | speedup of the means | mean wall / mean floor, async (sync) | per seed |', '| --- | --- | --- | --- | --- | --- | --- | --- |'];
  const keys = [...new Set(all.filter((a) => a.arm !== 'sync').map((a) => `${a.medianMs}|${a.loss}|${a.arm}`))];
  for (const k of keys) {
    const [ms, loss, arm] = k.split('|') as [string, string, string];
    const of = (name: string) => all.filter((x) => x.arm === name && x.medianMs === Number(ms) && x.loss === loss);
    const m = (xs: ArmFigures[]) => (xs.every((x) => x.toTarget !== null) ? fx(mean(xs.map((x) => x.toTarget!))) : '-');
    const ratio = speedupOverSeeds(all, { medianMs: Number(ms), loss, arm });
    const per = of(arm).map((x) => `${x.seed}: ${speedup(all, x)?.toFixed(2).concat('x') ?? '-'}`).join(', ');
    const fr = (xs: ArmFigures[]) => fx(floorRatioOfMeans(xs), 2);
    lines.push(`| ${Number(ms) / 1000} s | ${loss} | ${arm} | ${m(of('sync'))} | ${m(of(arm))} | ${ratio === null ? '-' : `${ratio.toFixed(2)}x`} | ${fr(of(arm))} (${fr(of('sync'))}) | ${per} |`);
  }
  return [...lines, ''];
}

function table(all: ArmFigures[]): string[] {
  const lines = [
    `| median | loss | ${SEEDS.length > 1 ? 'seed | ' : ''}arm | wall s to ${TARGET} (step) | floor s | wall / floor | ideal s | speedup | s/step (train; median) | s/rollout (fleet/s) | idle | final mean${WINDOW} | staleness mean / max | groups past K | rollouts wasted | slow groups trained as sampled | load at start / end |`,
    `| --- | --- | ${SEEDS.length > 1 ? '--- | ' : ''}--- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |`,
  ];
  for (const a of all) {
    const sp = a.arm === 'sync' ? null : speedup(all, a);
    lines.push(
      `| ${a.medianMs / 1000} s | ${a.loss} | ${SEEDS.length > 1 ? `${a.seed} | ` : ''}${a.arm}${a.error ? ` (${a.error})` : ''} | ${a.toTarget === null ? 'not reached' : `${fx(a.toTarget)} (${a.stepAtTarget})`} | ${fx(a.floor)} | ${fx(a.floorRatio, 2)} | ${fx(a.ideal)} | ` +
        `${sp === null ? '-' : `${sp.toFixed(2)}x`} | ${fx(a.secondsPerStep, 2)} (${fx(a.trainSecondsPerStep, 2)}; ${fx(a.trainMedian, 2)}) | ${fx(a.rolloutSeconds, 2)} (${fx(a.fleetRate, 1)}) | ${fx(a.idleFrac, 2)} | ${fx(a.finalReward, 2)} | ` +
        `${a.arm === 'sync' ? '0 / 0' : `${fx(a.stalenessMean, 2)} / ${fx(a.stalenessMax, 0)}`} | ${pct(a.pastBoundFrac)} | ${pct(a.wastedFrac)} | ${pct(a.slowTrainedFrac)} | ${a.loadStart} / ${a.loadEnd} |`,
    );
  }
  return lines;
}

/** What the async arms ran with: told on the command line, or the run config's defaults, said as such. */
function asyncHeader(): string {
  const told = MAX_OFF_POLICY_TOLD !== null || PIPELINE_DEPTH !== null;
  const k = MAX_OFF_POLICY_TOLD === null ? `\`maxStepsOffPolicy\` ${MAX_OFF_POLICY} (the run config's default)` : `\`maxStepsOffPolicy\` ${MAX_OFF_POLICY} (--max-off-policy)`;
  const d = PIPELINE_DEPTH === null ? `\`pipelineDepth\` ${Math.min(ASYNC_DEFAULTS.pipelineDepth, MAX_OFF_POLICY)} (the run config's default; pace)` : `\`pipelineDepth\` ${PIPELINE_DEPTH} (--pipeline-depth; pace)`;
  const b = `\`groupsPerBatch\` ${exampleConfig().datasetBuilder.batchSize} (the default: the batch size)`;
  return `${told ? 'the run config\'s defaults except as told' : '`"async": {}` plus the rule: the run config\'s defaults'}: ${k}, ${d}, ${b}`;
}

function report(all: ArmFigures[], curvesByTail: Map<number, string[]>, headline: string, meta: { commit: string; machine: string; command: string; started: Date; seconds: number }): string {
  return [
    '# Async bench: synchronous against async off-policy training, equal arms',
    '',
    `Written by \`${meta.command}\` (test/bench/async.ts) at commit ${meta.commit}, ${meta.started.toISOString()}, in ${(meta.seconds / 60).toFixed(1)} min, on ${meta.machine}.`,
    'Timings on a loaded machine are not comparable with a quiet one: the trainer then competes for the cores sampling leaves idle.',
    '',
    `The hello task with \`hello-longtail\` (a seeded log-normal delay per rollout, p99 = 10 x median), ${RUNNERS} runners, \`concurrency\` ${CONCURRENCY} and learning rate ${LEARNING_RATE ?? exampleConfig().learningRate} in both modes, up to ${STEPS} steps` +
      `${v.full ? '' : ' (each run stopped once at the target)'}; target: train reward ${TARGET}, mean of the last ${WINDOW} steps. Async: ${asyncHeader()}. Each loss runs in both modes.` +
      ' Every figure is computed the same way for every arm: idle = sum(time/total - time/train) / sum(time/total);' +
      ' floor = steps to the target x max(median time/train, one step\'s 64 rollouts / the fleet\'s rollouts per second), the fleet\'s rate being runners / mean runner seconds per rollout (each succeeded attempt\'s end - start, from the store): no loop, sync or async, can reach the target faster at those step counts;' +
      ' ideal = steps to the target x mean time/train (the wall time had the trainer never waited); staleness as the proxy served each group (the spans);' +
      ' groups past K = trained groups served from more than maxStepsOffPolicy steps behind / groups trained (only `late` allows any);' +
      ' rollouts wasted = groups sent back or dropped as stale / groups started; slow groups = the 10 % of the dataset groups the run reached whose slowest' +
      ' first-sample rollout waits longest: of those whose task was trained, the share trained as first sampled (not sent back and sampled again).',
    '',
    ...table(all),
    '',
    ...seedSummary(all),
    ...[...curvesByTail.entries()].flatMap(([ms, lines]) => [`Reward curves, median ${ms / 1000} s (wall s = seconds from the run's start until the step's metrics row appeared):`, '', '```', ...lines, '```', '']),
    headline,
    '',
  ].join('\n');
}

/** The commit checked out, and whether the tree has uncommitted changes. */
function treeState(): string {
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  const dirty = spawnSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim() ? ' with uncommitted changes' : '';
  return commit + dirty;
}

async function main(): Promise<number> {
  const started = new Date();
  const loadBefore = loadAverage();
  const treeAtStart = treeState();
  const all: ArmFigures[] = [];
  const curvesByTail = new Map<number, string[]>();
  say(`async bench: async arms with ${asyncHeader().replace(/`/g, '')}; concurrency ${CONCURRENCY}; load ${loadBefore}`);
  say(`async bench: medians ${MEDIANS.join(', ')} ms, losses ${LOSSES.join(', ')}, async rules ${RULES.join(', ')}; ${RUNNERS} runners, up to ${STEPS} steps, target ${TARGET} (mean of ${WINDOW})`);
  for (const medianMs of MEDIANS) {
    const arms: Arm[] = LOSSES.flatMap((loss) => SEEDS.flatMap((seed) => [...(v['skip-sync'] ? [] : [{ medianMs, loss, seed, mode: 'sync' as const }]), ...RULES.map((rule) => ({ medianMs, loss, seed, mode: 'async' as const, rule }))]));
    const results = await runTail(medianMs, arms);
    for (const r of results) {
      all.push(r.figures);
      say(`${medianMs} ms ${r.arm.loss} seed ${r.arm.seed} ${armName(r.arm)}: wall ${fx(r.figures.toTarget)} s, floor ${fx(r.figures.floor)} s (x${fx(r.figures.floorRatio, 2)}), idle ${fx(r.figures.idleFrac, 2)}, load ${r.figures.loadStart} -> ${r.figures.loadEnd}: ${JSON.stringify(r.figures)}`);
    }
    curvesByTail.set(medianMs, LOSSES.flatMap((loss) => SEEDS.flatMap((seed) => [`${loss}${SEEDS.length > 1 ? `, seed ${seed}` : ''}:`, ...curves(results.filter((r) => r.arm.loss === loss && r.arm.seed === seed && r.points.length > 0)), ''])));
  }
  const head = all.find((a) => a.medianMs === HEADLINE.medianMs && a.loss === HEADLINE.loss && a.arm === `async ${HEADLINE.rule}`);
  const ratio = head ? speedupOverSeeds(all, head) : null;
  const headFloor = head ? floorRatioOfMeans(all.filter((a) => a.medianMs === head.medianMs && a.loss === head.loss && a.arm === head.arm)) : null;
  const headline = `async speedup to reward ${TARGET}: ${ratio === null ? 'n/a' : `${ratio.toFixed(2)}x`} (wall / floor ${headFloor === null ? 'n/a' : headFloor.toFixed(2)}; ${MAX_OFF_POLICY_TOLD === null && PIPELINE_DEPTH === null ? 'the run config\'s async defaults' : 'async settings as told'})`;
  // The code measured is the tree's when the stacks started: said from the start, and if the tree moved meanwhile.
  const treeAtEnd = treeState();
  const commit = treeAtEnd === treeAtStart ? treeAtStart : `${treeAtStart} (the tree was at ${treeAtEnd} by the end)`;
  const machine = `${cpus().length} cores, node ${process.version}; load average ${loadBefore} at the start, ${loadAverage()} at the end`;
  const command = `npm run bench -- async ${process.argv.slice(2).filter((a, i, xs) => a !== '--json' && xs[i - 1] !== '--json').join(' ')}`.trim();
  const text = report(all, curvesByTail, headline, { commit, machine, command, started, seconds: (Date.now() - started.getTime()) / 1000 });
  const out = path.resolve(ROOT, v.out!);
  writeFileSync(out, text);
  say(`wrote ${path.relative(ROOT, out)}`);
  if (v.json) writeFileSync(v.json, JSON.stringify({ arms: all, speedup: ratio, headline }));
  // The last line (n/a when the headline arm did not run, or a run did not reach the target).
  say(headline);
  return all.some((a) => a.error) ? 1 : 0;
}

/** One stack with runners waiting `medianMs` (median), the arms one after the other on it. */
async function runTail(medianMs: number, arms: Arm[]): Promise<(ModeResult & { figures: ArmFigures })[]> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agl-bench-async-'));
  const taskQueue = `bench-async-${randomUUID()}`;
  await provideBaseModel(dataDir);
  let stack: Stack | undefined;
  let connection: Connection | undefined;
  const results: (ModeResult & { figures: ArmFigures })[] = [];
  try {
    stack = await startStack({
      dataDir,
      ports: { temporal: 0, ui: 0, store: 0, trainer: 0, proxy: 0 },
      taskQueue,
      initialModel: MODEL,
      renderer: 'role_colon',
      agent: 'hello-longtail',
      runners: RUNNERS,
      runnerEnv: { AGL_LONGTAIL_MEDIAN_MS: String(medianMs) },
      echo: v.verbose,
      log: (l) => log(`stack: ${l}`),
    });
    log(`stack up for median ${medianMs} ms (Temporal UI ${stack.temporal.uiUrl ?? '-'})`);
    connection = await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' });
    const client = new Client({ connection });
    // Figures are read while the runs' folders exist (step records name the groups each step trained).
    for (const arm of arms) {
      const r = await runMode(stack, client, taskQueue, dataDir, arm);
      results.push({ ...r, figures: await figuresOf(r, stack.storeUrl) });
    }
  } finally {
    await connection?.close().catch(() => undefined);
    await stack?.stop().catch(() => undefined);
    if (!v.keep) rmSync(dataDir, { recursive: true, force: true });
    else say(`kept ${dataDir}`);
  }
  return results;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    process.stderr.write(`bench async: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
