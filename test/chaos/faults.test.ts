// Fault injection: a short hello run on the local trainer, first fault-free, then again with faults injected at
// seeded moments — kill -9 of the worker (during rollouts, between forward_backward and optim_step, while saving a
// checkpoint), of a runner mid-rollout, of the proxy, the store and the trainer, a restart of the Temporal dev
// server, a freeze (SIGSTOP, then SIGCONT) of any of the processes, the store's disk full for a while, and a
// runner reporting a reward of 1e308. The supervisor restarts what was killed or stopped answering. Every faulty
// run must finish by itself with the fault-free run's final weights (sha256), Adam step count, metrics rows
// (minus time/*) and checkpoint rows.
// AGL_CHAOS_SEED replays another plan; AGL_CHAOS_RUNS / AGL_CHAOS_PER_KIND size it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { startStack, type Stack } from '../../dev/stack';
import { StoreClient } from '../../store/client';
import { validateRunConfig } from '../../config/load';
import { startOrAttach } from '../../cli/run-commands';
import { FAULT_POINTS } from '../../common/fault-points';
import type { trainingRun } from '../../workflows/training-run';
import type { TrainingRunResult } from '../../shared/run-types';
import { asyncOutcomeOf } from './async-invariants';
import { armPoints, describeFault, FAULT_KINDS, freezeOutcomes, injectAt, isLongFreeze, outcomeOf, planFaults, pointFired, type ChaosEnv, type Fault, type FaultKind, type RunOutcome } from './harness';
import { mountSmallVolume, smallVolumeUnavailable, type SmallVolume } from '../helpers/small-volume';
import { startRunners } from '../../agents/runner';

const SEED = Number(process.env.AGL_CHAOS_SEED ?? 20261202);
const RUNS = Number(process.env.AGL_CHAOS_RUNS ?? 4);
const PER_KIND = Number(process.env.AGL_CHAOS_PER_KIND ?? 3);
const ASYNC_RUNS = Number(process.env.AGL_CHAOS_ASYNC_RUNS ?? 3);
const NUM_BATCHES = 3;
const SAVE_EVERY = 2;

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agl-chaos-'));
const faultDir = path.join(dataDir, 'faults');
const taskQueue = `chaos-${randomUUID()}`;
const t0 = Date.now();
let stack: Stack | undefined;
/** The store's data folder, a volume of its own that the full-disk fault fills (when this process may mount one). */
let storeVolume: SmallVolume | undefined;
/** The kinds this machine can inject: all of them where a volume can be mounted (CI, the dev container). */
const KINDS = FAULT_KINDS.filter((k) => k !== 'full disk' || !smallVolumeUnavailable());
const env = (): ChaosEnv => ({ stack: stack!, storeVolume });
let connection: Connection;
let client: Client;
const log = (line: string) => process.stdout.write(`[chaos ${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`);

before(async () => {
  const faultEnv = { AGL_FAULT_POINTS: FAULT_POINTS.join(','), AGL_FAULT_DIR: faultDir };
  // Bundle the workflows once: a restarted worker then starts in a few seconds instead of ~15.
  const bundle = await bundleWorkflowCode({ workflowsPath: path.join(__dirname, '..', '..', 'workflows', 'index.ts'), logger: undefined });
  const bundlePath = path.join(dataDir, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);
  // 16 MiB: the whole suite's store (about 3 MiB) with room to spare, so only the fault fills it.
  if (KINDS.includes('full disk')) storeVolume = mountSmallVolume(16 * 1024 * 1024, { at: path.join(dataDir, 'store') });
  else log(`no full-disk faults: ${smallVolumeUnavailable()}`);
  // A process frozen for longer than 8 s is restarted by the supervisor (npm start: 30 s).
  process.env.AGL_LIVENESS_DEAD_S = '8';
  stack = await startStack({
    dataDir,
    ports: { temporal: 0, ui: 0, store: 0, trainer: 0, proxy: 0 },
    persistTemporal: true,
    taskQueue,
    initialModel: 'local/tiny-test',
    renderer: 'role_colon',
    // hello with partial credit: rewards differ within groups even on the untrained tiny model, so steps move weights.
    agent: 'hello-dense',
    runners: 4,
    workerEnv: { ...faultEnv, AGL_WORKFLOW_BUNDLE: bundlePath },
    runnerEnv: faultEnv,
    log: (l) => log(`stack: ${l}`),
  });
  connection = await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' });
  client = new Client({ connection });
});

after(async () => {
  await connection?.close().catch(() => undefined);
  await stack?.stop();
  storeVolume?.unmount();
});

function configFor(runName: string, over: Record<string, unknown> = {}) {
  return validateRunConfig({
    runName,
    learningRate: 3e-3,
    modelName: 'local/tiny-test',
    rendererName: 'role_colon',
    baseUrl: stack!.trainerUrl,
    storeAddress: stack!.storeUrl,
    llmProxyPort: stack!.proxyPort,
    logPath: path.join(dataDir, 'runs', runName),
    maxTokens: 24,
    evalEvery: 2,
    saveEvery: SAVE_EVERY,
    // A killed runner's attempt goes silent: noticed after a few seconds, retried with the same seed.
    rolloutTimeoutSeconds: 120,
    rolloutUnresponsiveSeconds: 8,
    rolloutMaxAttempts: 6,
    // A killed worker's activity is retried after 10 s instead of 1-2 min.
    activityHeartbeatTimeoutSeconds: 10,
    datasetBuilder: { batchSize: 4, groupSize: 2, trainDataset: ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12'], valDataset: ['500', '501'] },
    ...over,
  });
}

/** The run's result, waiting through Temporal restarts (a poll cut by a restart is asked again). */
async function resultOf(handle: () => WorkflowHandle<typeof trainingRun>, deadlineMs: number): Promise<TrainingRunResult> {
  for (;;) {
    try {
      return await handle().result();
    } catch (err) {
      if (err instanceof WorkflowFailedError || Date.now() > deadlineMs) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

async function runOnce(runName: string, faults: Fault[]): Promise<{ outcome: RunOutcome; injected: Fault[]; seconds: number }> {
  const { result, injected, seconds, cfg } = await runWithFaults(runName, faults, {});
  assert.equal(result.batchesCompleted, NUM_BATCHES, `${runName} completed every batch`);
  assert.equal(result.finalCheckpoint, 'final');
  const outcome = await outcomeOf(path.join(dataDir, 'trainer'), stack!.storeUrl, runName, cfg.logPath, NUM_BATCHES);
  return { outcome, injected, seconds };
}

/** Runs `runName` with `faults` injected; returns its result and the faults that fired. */
async function runWithFaults(runName: string, faults: Fault[], over: Record<string, unknown>) {
  const started = Date.now();
  armPoints(faultDir, runName, faults);
  const cfg = configFor(runName, over);
  const run = await startOrAttach(client, taskQueue, cfg);
  const handle = () => client.workflow.getHandle<typeof trainingRun>(run.workflowId);
  let finished = false;
  const external = faults.filter((f): f is Fault & { via: 'external' } => f.via === 'external');
  const fired = external.map((f) =>
    injectAt(env(), handle, f, () => finished).then((ok) => {
      if (ok) log(`${runName}: injected ${describeFault(f)}`);
      return ok;
    }),
  );
  let result: TrainingRunResult;
  try {
    result = await resultOf(handle, Date.now() + 8 * 60_000);
  } finally {
    finished = true;
  }
  const externalFired = await Promise.all(fired);
  // A kill that landed as the run was ending may still be restarting: the next run (and the report's store
  // query) start with every service back, as they would find them after a service manager's restart.
  await Promise.all(Object.values(stack!.services).map((s) => s.whenUp()));
  const injected = [
    ...faults.filter((f) => f.via === 'point' && pointFired(faultDir, runName, f.point)),
    ...external.filter((_, i) => externalFired[i]),
  ];
  for (const f of faults) if (f.via === 'point' && injected.includes(f)) log(`${runName}: fired ${describeFault(f)}`);
  return { result, injected, seconds: (Date.now() - started) / 1000, cfg };
}

/** The fault-free run's outcome, which the shared-stack test compares against too. */
let cleanOutcome: RunOutcome | undefined;

test('faulty runs finish by themselves, bit-identical to the fault-free run', { timeout: 14 * 60_000 }, async () => {
  const clean = await runOnce('clean', []);
  cleanOutcome = clean.outcome;
  log(`clean run: ${clean.seconds.toFixed(1)} s, final weights ${clean.outcome.finalWeightsSha256.slice(0, 16)}…, adam step ${clean.outcome.finalAdamStep}`);
  assert.equal(clean.outcome.finalAdamStep, NUM_BATCHES, 'one optimizer step per batch');
  assert.equal(clean.outcome.metrics.length, NUM_BATCHES);
  assert.equal(new Set(clean.outcome.stepWeights).size, NUM_BATCHES, 'every step changed the weights');
  for (const m of clean.outcome.metrics) assert.equal(m['train/skipped_empty_batch'], 0, 'every batch trained');

  const plans = planFaults(SEED, RUNS, PER_KIND, NUM_BATCHES, SAVE_EVERY, KINDS);
  const byKind = new Map<FaultKind, number>(KINDS.map((k) => [k, 0]));
  const mismatches: string[] = [];
  let identical = 0;
  let longFreezes = 0;
  // Each long freeze, checked in the process table: the process it stopped was gone by the end of the hold.
  const unrestarted: string[] = [];
  for (const [i, plan] of plans.entries()) {
    const name = `faulty-${i + 1}`;
    log(`${name}: plan ${plan.map(describeFault).join('; ')}`);
    const r = await runOnce(name, plan);
    for (const f of r.injected) byKind.set(f.kind, byKind.get(f.kind)! + 1);
    for (const f of r.injected.filter(isLongFreeze)) {
      longFreezes++;
      const o = freezeOutcomes.get(f);
      if (!o) unrestarted.push(`${name}: ${describeFault(f)} found no process to stop`);
      else if (!o.killed) unrestarted.push(`${name}: ${describeFault(f)}: pid ${o.pid} was still there after ${o.heldMs} ms stopped, past the ${process.env.AGL_LIVENESS_DEAD_S} s liveness limit (the supervisor counts ${stack!.services[o.target].hangs} hang(s) of ${o.target})`);
      else log(`${name}: the supervisor killed the frozen ${o.target} (pid ${o.pid}) within ${o.heldMs} ms`);
    }
    const diffs: string[] = [];
    const same = (what: string, a: unknown, b: unknown) => {
      try {
        assert.deepStrictEqual(a, b);
      } catch {
        diffs.push(`${what}: ${JSON.stringify(a).slice(0, 400)} != ${JSON.stringify(b).slice(0, 400)}`);
      }
    };
    same('final weights sha256', r.outcome.finalWeightsSha256, clean.outcome.finalWeightsSha256);
    same('final adam step (no step applied twice)', r.outcome.finalAdamStep, clean.outcome.finalAdamStep);
    same('weights after each step', r.outcome.stepWeights, clean.outcome.stepWeights);
    same('metrics.jsonl rows (minus time/*)', r.outcome.metrics, clean.outcome.metrics);
    same('checkpoints.jsonl rows', r.outcome.checkpoints, clean.outcome.checkpoints);
    log(`${name}: ${r.seconds.toFixed(1)} s, ${r.injected.length}/${plan.length} faults injected, ${diffs.length === 0 ? 'IDENTICAL' : `DIFFERENT:\n  ${diffs.join('\n  ')}`}`);
    if (diffs.length === 0) identical++;
    else mismatches.push(`${name}: ${diffs.join('; ')}`);
  }

  const total = [...byKind.values()].reduce((a, b) => a + b, 0);
  const stats = await new StoreClient(stack!.storeUrl).statistics({ timeoutMs: 10_000 });
  const report = [
    `chaos report (seed ${SEED}): ${total} faults injected`,
    ...[...byKind.entries()].map(([k, n]) => `  ${k}: ${n}`),
    `  runs: 1 fault-free + ${plans.length} faulty; identical/total: ${identical}/${plans.length}`,
    `  rollouts: ${stats.total_rollouts}, attempts: ${stats.total_attempts} (dead or failed attempts retried with the same seed)`,
    `  restarts seen by the supervisor: ${Object.entries(stack!.services).map(([k, s]) => `${k} ${s.restarts}`).join(', ')}` +
      ` (of them after a freeze: ${Object.entries(stack!.services).map(([k, s]) => `${k} ${s.hangs}`).join(', ')})`,
    `  suite time: ${((Date.now() - t0) / 1000).toFixed(0)} s`,
  ];
  for (const line of report) log(line);
  assert.deepEqual(mismatches, [], 'every faulty run is bit-identical to the fault-free one');
  const longPlanned = plans.flat().filter(isLongFreeze).length;
  assert.ok(longPlanned >= 1, 'the plans hold a freeze past the liveness limit');
  assert.ok(longFreezes >= 1, `a freeze past the liveness limit was injected (${longPlanned} planned)`);
  assert.deepEqual(unrestarted, [], 'every freeze past the liveness limit ended with the frozen process killed and restarted');
  assert.ok(total >= 20, `at least 20 faults injected (got ${total})`);
  for (const [k, n] of byKind) assert.ok(n >= 1, `at least one "${k}" fault injected`);
  assert.ok(stats.total_attempts > stats.total_rollouts, 'killed runners left attempts that the store retried');
});

test('async runs under faults: every step once, no group trained twice or lost, staleness bounded, each finishes', { timeout: 14 * 60_000 }, async () => {
  const ASYNC = { maxStepsOffPolicy: 1, groupsPerBatch: 2 };
  const totalGroups = NUM_BATCHES * 4; // batchSize 4
  const numSteps = totalGroups / ASYNC.groupsPerBatch;
  // Faults are planned over the first steps only: rollouts carry the policy step they sample from as their batch, and
  // the last steps start no new groups (the data is in flight by then) and pass too quickly for a kill to land.
  const plans = planFaults(SEED + 1, ASYNC_RUNS, PER_KIND, numSteps - 2, SAVE_EVERY, KINDS);
  const byKind = new Map<FaultKind, number>(KINDS.map((k) => [k, 0]));
  const violations: string[] = [];
  for (const [i, plan] of plans.entries()) {
    const name = `async-${i + 1}`;
    log(`${name}: plan ${plan.map(describeFault).join('; ')}`);
    const r = await runWithFaults(name, plan, { async: ASYNC });
    for (const f of r.injected) byKind.set(f.kind, byKind.get(f.kind)! + 1);
    assert.equal(r.result.finalCheckpoint, 'final', `${name} finished by itself`);
    const o = await asyncOutcomeOf(path.join(dataDir, 'trainer'), stack!.storeUrl, name, r.cfg.logPath, totalGroups, ASYNC.maxStepsOffPolicy, r.result);
    log(`${name}: ${r.seconds.toFixed(1)} s, ${r.injected.length}/${plan.length} faults injected, ${o.steps} steps, staleness max ${o.stalenessMax}, ` +
      `groups resampled ${o.resampled}, counts ${JSON.stringify(r.result.asyncCounts)}: ${o.violations.length === 0 ? 'ALL INVARIANTS HOLD' : o.violations.join('; ')}`);
    violations.push(...o.violations.map((v) => `${name}: ${v}`));
  }
  const total = [...byKind.values()].reduce((a, b) => a + b, 0);
  log(`async chaos report (seed ${SEED + 1}): ${total} faults injected; ${[...byKind.entries()].map(([k, n]) => `${k}: ${n}`).join(', ')}`);
  assert.deepEqual(violations, [], 'every invariant holds in every faulty async run');
  assert.ok(total >= 20, `at least 20 faults injected into async runs (got ${total})`);
});

test('two runs at once on one stack each end with the weights they get alone', { timeout: 10 * 60_000 }, async () => {
  assert.ok(cleanOutcome, 'the fault-free run of the first test');
  // A second config whose policy differs from the first one's after a step, so sampling from the other run's
  // policy would change its tokens; run alone first for its reference.
  const other = { learningRate: 1e-2 };
  const alone = await runWithFaults('alone-b', [], other);
  const aloneB = await outcomeOf(path.join(dataDir, 'trainer'), stack!.storeUrl, 'alone-b', alone.cfg.logPath, NUM_BATCHES);
  assert.notEqual(aloneB.finalWeightsSha256, cleanOutcome!.finalWeightsSha256, 'the two configs train different weights');
  // Both at once: they share the store, proxy, trainer, runners and worker.
  const [a, b] = await Promise.all([runOnce('shared-a', []), runWithFaults('shared-b', [], other)]);
  const sharedB = await outcomeOf(path.join(dataDir, 'trainer'), stack!.storeUrl, 'shared-b', b.cfg.logPath, NUM_BATCHES);
  log(`shared-a: ${a.seconds.toFixed(1)} s, shared-b: ${b.seconds.toFixed(1)} s`);
  assert.deepEqual(a.outcome.stepWeights, cleanOutcome!.stepWeights, 'shared-a: weights after each step as alone');
  assert.deepEqual(a.outcome.metrics, cleanOutcome!.metrics, 'shared-a: metrics rows (minus time/*) as alone');
  assert.deepEqual(sharedB.stepWeights, aloneB.stepWeights, 'shared-b: weights after each step as alone');
  assert.deepEqual(sharedB.metrics, aloneB.metrics, 'shared-b: metrics rows (minus time/*) as alone');
});

test('a run with one agent reporting 1e308 finishes by itself, with the weights it gets without that agent', { timeout: 10 * 60_000 }, async () => {
  assert.ok(cleanOutcome, 'the fault-free run of the first test');
  // A fifth runner beside the stack's four, polling fast: every reward it reports is refused by the store, its
  // attempts fail, their retries go to the good runners (with the same sampling seeds) and it is set aside.
  const bad = startRunners<string>(1, async () => 1e308, { storeUrl: stack!.storeUrl, pollIntervalMs: 20, workerId: 'agent-reporting-1e308', log: () => {} });
  let r;
  try {
    r = await runOnce('huge-reward', []);
  } finally {
    await bad.stop();
  }
  log(`huge-reward: ${r.seconds.toFixed(1)} s, the 1e308 agent failed ${bad.stats().failed} attempts`);
  assert.ok(bad.stats().failed > 0, 'the 1e308 agent took rollouts');
  assert.equal(bad.stats().succeeded, 0);
  assert.deepEqual(r.outcome.stepWeights, cleanOutcome!.stepWeights, 'weights after each step as without the agent');
  assert.deepEqual(r.outcome.metrics, cleanOutcome!.metrics, 'metrics rows (minus time/*) as without the agent');
});
