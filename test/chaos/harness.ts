// The chaos suite's pieces: a seeded fault plan, the injectors (fault points armed on disk for kills inside
// activities and runners and for a runner reporting a reward of 1e308; kill -9 of supervised services, a Temporal
// restart, freezes and a full disk at seeded moments of the run, stalls.ts), and what a run leaves that must be
// bit-identical (final weights, metrics rows, checkpoint rows, Adam steps).
import { stepRecordsOf } from '../helpers/run-records';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { FaultPointName } from '../../common/fault-points';
import { readJsonl, runPaths } from '../../records/run-files';
import type { Stack } from '../../dev/stack';
import { BATCH, PHASE } from '../../shared/search-attributes';
import type { Phase } from '../../shared/run-types';
import type { trainingRun } from '../../workflows/training-run';
import type { SmallVolume } from '../helpers/small-volume';
import { fillDisk, freeze, FROZEN, type FreezeOutcome, type Frozen } from './stalls';

export const FAULT_KINDS = [
  'worker during rollouts',
  'worker between forward_backward and optim_step',
  'worker while saving a checkpoint',
  'runner mid-rollout',
  'proxy',
  'store',
  'trainer',
  'temporal restart',
  'freeze',
  'full disk',
  'bad reward',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export type Fault =
  | { kind: FaultKind; via: 'point'; point: FaultPointName; batch: number }
  | { kind: FaultKind; via: 'external'; batch: number; phase: Phase; delayMs: number; target?: Frozen; holdMs?: number };

/** A freeze at least this long outlasts the chaos stack's liveness limit: the supervisor restarts the process. */
export const LONG_FREEZE_MS = 14_000;
/** How much longer a long freeze holds a process the supervisor has not killed yet (a slow liveness probe). */
export const FREEZE_KILL_GRACE_MS = 5_000;
/** What each injected freeze did, by its fault. */
export const freezeOutcomes = new WeakMap<Fault, FreezeOutcome>();
export const isLongFreeze = (f: Fault): boolean => f.via === 'external' && f.kind === 'freeze' && f.holdMs! >= LONG_FREEZE_MS;

/** What the injectors act on: the stack, and the store's own volume when one could be mounted (full disk). */
export interface ChaosEnv {
  stack: Stack;
  storeVolume?: SmallVolume;
}

/** mulberry32: a small seeded generator, so a failing plan can be replayed with AGL_CHAOS_SEED. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `runs` fault plans covering every kind `perKind` times, shuffled and dealt round-robin; each fault gets a
 * seeded batch, phase and delay. A run never holds the same fault point twice (each fires once per run).
 */
export function planFaults(seed: number, runs: number, perKind: number, numBatches: number, saveEvery: number, only: readonly FaultKind[] = FAULT_KINDS): Fault[][] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const kinds: FaultKind[] = [];
  for (let i = 0; i < perKind; i++) kinds.push(...only);
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
  }
  const plans: Fault[][] = Array.from({ length: runs }, () => []);
  const batch = () => Math.floor(r() * numBatches);
  const delay = (max: number) => Math.floor(r() * max);
  kinds.forEach((kind, i) => {
    const plan = plans[i % runs]!;
    const used = new Set(plan.flatMap((f) => (f.via === 'point' ? [f.point] : [])));
    const point = (p: FaultPointName, b: number): Fault => ({ kind, via: 'point', point: p, batch: b });
    let f: Fault;
    switch (kind) {
      case 'worker during rollouts':
        f = point('rollouts.waiting', batch());
        break;
      case 'worker between forward_backward and optim_step':
        f = point('train.after_forward_backward', batch());
        break;
      case 'worker while saving a checkpoint': {
        // Either inside trainStep (state saved, no commit record yet) or in saveCheckpoint (row not written yet);
        // saveCheckpoint's batch is the checkpoint's (batch + 1): a saveEvery one or the final one.
        const both: FaultPointName[] = ['train.after_save_state', 'checkpoint.before_record'];
        const names = both.filter((p) => !used.has(p));
        const p = pick(names.length ? names : both);
        const ckptBatches = Array.from({ length: numBatches }, (_, b) => b + 1).filter((b) => b === numBatches || b % saveEvery === 0);
        f = point(p, p === 'checkpoint.before_record' ? pick(ckptBatches) : batch());
        break;
      }
      case 'runner mid-rollout':
        f = point('runner.mid_rollout', batch());
        break;
      case 'proxy':
        f = { kind, via: 'external', batch: batch(), phase: pick(['collecting rollouts', 'evaluating', 'publishing policy'] as Phase[]), delayMs: delay(1500) };
        break;
      case 'store':
        f = { kind, via: 'external', batch: batch(), phase: pick(['collecting rollouts', 'training', 'evaluating'] as Phase[]), delayMs: delay(1500) };
        break;
      case 'trainer':
        f = { kind, via: 'external', batch: batch(), phase: pick(['training', 'collecting rollouts', 'publishing policy'] as Phase[]), delayMs: delay(1000) };
        break;
      case 'temporal restart':
        f = { kind, via: 'external', batch: batch(), phase: pick(['collecting rollouts', 'training', 'logging', 'evaluating'] as Phase[]), delayMs: delay(1500) };
        break;
      case 'freeze': {
        // Every other one long (14-17 s), and the only one when there is one per kind: past the chaos stack's
        // liveness limit (8 s) the supervisor restarts the process; the short ones (2-6 s) go on where they stopped.
        const long = kinds.slice(0, i).filter((k) => k === 'freeze').length % 2 === 1 || perKind === 1;
        f = { kind, via: 'external', batch: batch(), phase: pick(['collecting rollouts', 'training', 'evaluating'] as Phase[]), delayMs: delay(1500), target: pick(FROZEN), holdMs: long ? LONG_FREEZE_MS + delay(3000) : 2000 + delay(4000) };
        break;
      }
      case 'full disk':
        f = { kind, via: 'external', batch: batch(), phase: pick(['collecting rollouts', 'training', 'evaluating'] as Phase[]), delayMs: delay(1500), holdMs: 4000 + delay(11_000) };
        break;
      case 'bad reward':
        f = point('runner.bad_reward', batch());
        break;
    }
    // The same point twice in one run: move the second to another run's plan slot by retrying the batch.
    if (f.via === 'point' && used.has(f.point)) plans[(i + 1) % runs]!.push(f);
    else plan.push(f);
  });
  return plans;
}

export const describeFault = (f: Fault) =>
  f.via === 'point'
    ? `${f.kind} [${f.point} @ batch ${f.batch}]`
    : `${f.kind}${f.target ? ` of ${f.target}` : ''} [${f.holdMs ? `${f.holdMs} ms` : 'kill'} at batch ${f.batch} "${f.phase}" +${f.delayMs} ms]`;

/** Arms the run's fault points (test side of common/fault-points.ts). */
export function armPoints(faultDir: string, runName: string, faults: Fault[]): void {
  const dir = path.join(faultDir, runName);
  mkdirSync(dir, { recursive: true });
  for (const f of faults) if (f.via === 'point') writeFileSync(path.join(dir, `${f.point}.armed`), String(f.batch));
}

export const pointFired = (faultDir: string, runName: string, point: FaultPointName) => existsSync(path.join(faultDir, runName, `${point}.fired`));

/** The order of phases within one batch (publishing comes before evaluation and again before rollouts). */
// Async runs wait for groups where synchronous ones collect rollouts.
const PHASE_ORDER: Phase[] = ['evaluating', 'publishing policy', 'waiting for groups', 'collecting rollouts', 'training', 'checkpointing', 'logging'];
const phaseRank = (p: Phase) => PHASE_ORDER.indexOf(p);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Kills, restarts, freezes or fills what `f` names. */
export async function inject({ stack, storeVolume }: ChaosEnv, f: Fault & { via: 'external' }): Promise<void> {
  switch (f.kind) {
    case 'freeze': {
      const long = f.holdMs! >= LONG_FREEZE_MS;
      const outcome = await freeze(stack, f.target!, f.holdMs!, long ? FREEZE_KILL_GRACE_MS : 0);
      if (outcome) freezeOutcomes.set(f, outcome);
      return;
    }
    case 'full disk':
      if (!storeVolume) throw new Error('a full disk needs the store on a volume of its own');
      return fillDisk(storeVolume, f.holdMs!);
    case 'proxy':
      return stack.services.proxy.crash();
    case 'store':
      return stack.services.store.crash();
    case 'trainer':
      return stack.services.trainer.crash();
    case 'temporal restart':
      return stack.restartTemporal();
    default:
      throw new Error(`${f.kind} is injected through a fault point`);
  }
}

/**
 * Waits until the run reaches the fault's batch and phase (or has gone past it), then its delay, then injects it.
 * Progress comes from the workflow's query; polls that fail (Temporal restarting) are retried.
 * Returns false when the run ended before the moment came.
 */
export async function injectAt(env: ChaosEnv, handle: () => WorkflowHandle<typeof trainingRun>, f: Fault & { via: 'external' }, done: () => boolean): Promise<boolean> {
  while (!done()) {
    try {
      // describe(), not the progress query: the server answers it from the search attributes the workflow
      // upserts, even while the worker is down (a query would wait for a worker).
      const d = await handle().describe();
      if (d.status.name !== 'RUNNING') return false;
      const phase = (d.typedSearchAttributes.get(PHASE) ?? 'starting') as Phase;
      const batch = d.typedSearchAttributes.get(BATCH) ?? 0; // batches completed = the batch in progress
      if (phase === 'saving final checkpoint' || phase === 'done') break; // past every batch: inject now
      // At the fault's batch and phase, or past it (a short phase can fall between two polls).
      if (batch > f.batch || (batch === f.batch && phaseRank(phase) >= phaseRank(f.phase))) break;
    } catch {
      /* Temporal restarting: ask again */
    }
    await sleep(100);
  }
  if (done()) return false;
  await sleep(f.delayMs);
  if (done()) return false;
  await inject(env, f);
  return true;
}

// ------------------------------------------------------------------ what must be identical

export interface RunOutcome {
  /** sha256 of the final state's weights.bin, and Adam's step count in it. */
  finalWeightsSha256: string;
  finalAdamStep: number;
  /** Per step: sha256 of the weights each committed step saved. */
  stepWeights: string[];
  metrics: Record<string, unknown>[];
  checkpoints: Record<string, unknown>[];
}

const normalizePath = (v: unknown) => (typeof v === 'string' ? v.replace(/^tinker:\/\/[^/]+\//, 'tinker://<model>/') : v);

/** Where the local trainer keeps `tinker://<model>/weights/<name>` (trainer/server/checkpoints.ts). */
export function stateDir(trainerDataDir: string, tinkerPath: string): string {
  const m = /^tinker:\/\/([^/]+)\/(weights|sampler_weights)\/([^/]+)$/.exec(tinkerPath);
  if (!m) throw new Error(`not a tinker path: ${tinkerPath}`);
  return path.join(trainerDataDir, 'runs', m[1]!, m[2]!, m[3]!);
}

export function weightsOf(trainerDataDir: string, tinkerPath: string): { sha256: string; adamStep: number } {
  const dir = stateDir(trainerDataDir, tinkerPath);
  const sha256 = createHash('sha256').update(readFileSync(path.join(dir, 'weights.bin'))).digest('hex');
  const meta = JSON.parse(readFileSync(path.join(dir, 'meta.json'), 'utf8')) as { adamStep: number; weightsSha256: string };
  if (meta.weightsSha256 && meta.weightsSha256 !== sha256) {
    // meta.json's hash is of the Float64 params; weights.bin is those bytes, so both must agree.
    throw new Error(`${dir}: weights.bin sha256 ${sha256} != meta.json ${meta.weightsSha256}`);
  }
  return { sha256, adamStep: meta.adamStep };
}

export async function outcomeOf(trainerDataDir: string, storeUrl: string, runName: string, logPath: string, numBatches: number): Promise<RunOutcome> {
  const paths = runPaths(logPath);
  const metrics = readJsonl(paths.metrics).map((row) => Object.fromEntries(Object.entries(row).filter(([k]) => !k.startsWith('time/'))));
  const checkpoints = readJsonl(paths.checkpoints).map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, normalizePath(v)])));
  const rawFinal = readJsonl(paths.checkpoints).find((c) => c.name === 'final');
  if (!rawFinal) throw new Error(`${paths.checkpoints} has no final row`);
  const final = weightsOf(trainerDataDir, String(rawFinal.state_path));
  const stepWeights: string[] = [];
  // The step records, from the store where they live; the last one committed for each step.
  const byStep = new Map((await stepRecordsOf(storeUrl, runName)).map((r) => [r.result.state.step, r]));
  for (let step = 1; step <= numBatches; step++) {
    const rec = byStep.get(step);
    if (!rec) throw new Error(`run ${runName}: no step record for step ${step} in the store`);
    stepWeights.push(weightsOf(trainerDataDir, rec.result.state.statePath).sha256);
  }
  return { finalWeightsSha256: final.sha256, finalAdamStep: final.adamStep, stepWeights, metrics, checkpoints };
}
