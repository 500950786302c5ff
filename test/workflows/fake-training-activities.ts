// Recording stand-ins for the training activities, for testing the workflow's control flow (pause, resume,
// stop, continue-as-new, cadence of evals and checkpoints) on a real dev server without the services.
// The end-to-end tests run the real activities.
import { Context } from '@temporalio/activity';
import type { PreparedRun, TraceEvent, TrainingActivities } from '../../activities/types';
import { runNameOf, type RunConfigInput } from '../../config/run-config';
import { validateRunConfig } from '../../config/load';
import type { CollectedBatch, Metrics, PolicyState, RunSettings, TrainStepResult } from '../../shared/run-types';

export interface Recorder {
  calls: string[];
  checkpoints: { name: string; batch: number; final: boolean }[];
  loggedSteps: number[];
  /** The metrics row each step logged, when set. */
  loggedMetrics?: Metrics[];
  /** The learning rate each batch's trainStep was given, when set. */
  learningRates?: number[];
  /** Awaited inside collectRollouts of every batch, when given. */
  hold?: (batch: number) => Promise<void>;
  /** How long publishPolicy takes for a policy step and purpose (default 0), when set. */
  publishDelayMs?: (policyStep: number, purpose: string) => number;
  /** Async runs: how long collectGroup takes for dataset group g, sample r (default 0). */
  groupDelayMs?: (g: number, r: number) => number;
  /**
   * Async runs: per trainStep, its policy step and the groups it trained: key, the policy step the workflow labelled
   * the group with, and the one that served it (the policy its resources name, as the proxy serves a rollout).
   */
  steps?: { policyStep: number; groups: { key: string; policyStep: number; labelStep: number }[] }[];
  /** Async runs: the group keys each cancelGroups call named. */
  cancelledGroups?: string[][];
  /** initPolicy fails every attempt (a trainer that never comes back), when set. */
  initFails?: boolean;
  /** trainStep reports its rollouts succeeded without a reward (as the real one counts them), when set. */
  noRewards?: (batch: number) => boolean;
}

/** The run config the workflow tests start with: 2 batches of 2 tasks unless `over` says otherwise. */
export const fakeRunConfig = (over: Record<string, unknown> = {}) =>
  validateRunConfig({
    learningRate: 1e-3,
    datasetBuilder: { batchSize: 2, trainDataset: ['a', 'b', 'c', 'd'] },
    modelName: 'local/tiny-hello',
    rendererName: 'role_colon',
    logPath: '/tmp/agl-wf-test',
    evalEvery: 2,
    saveEvery: 2,
    ...over,
  });

export function fakeTrainingActivities(rec: Recorder, numBatches: number): TrainingActivities {
  const state = (step: number): PolicyState => ({
    modelId: 'm1',
    statePath: `tinker://m1/weights/${step}`,
    samplerPath: `tinker://m1/sampler_weights/${step}`,
    step,
  });
  return {
    async prepareRun(raw: RunConfigInput): Promise<PreparedRun> {
      rec.calls.push('prepareRun');
      const cfg = validateRunConfig(raw);
      const { trainDataset: _t, valDataset: _v, ...datasetBuilder } = cfg.datasetBuilder;
      return { settings: { ...cfg, runName: runNameOf(cfg), datasetBuilder }, numBatches, numValTasks: 3, datasetSha256: 'sha' };
    },
    async initPolicy(_s: RunSettings, startStep: number) {
      rec.calls.push(`initPolicy:${startStep}`);
      if (rec.initFails) throw new Error('the trainer does not answer');
      return state(startStep);
    },
    async publishPolicy(_s, batch, purpose, policy) {
      rec.calls.push(`publish:${batch}:${purpose}:${policy.step}`);
      const delay = rec.publishDelayMs?.(policy.step, purpose) ?? 0;
      if (delay > 0) await Context.current().sleep(delay);
      // The resources name the policy they serve (as the real ones carry it in main_llm.agl_policy).
      return `res-${batch}-${purpose}-p${policy.step}`;
    },
    async runEvaluation(_s, batch): Promise<Metrics> {
      rec.calls.push(`eval:${batch}`);
      return { 'test/env/all/reward/total': batch / 10 };
    },
    async collectRollouts(_s, batch): Promise<CollectedBatch> {
      rec.calls.push(`collect:${batch}`);
      await rec.hold?.(batch);
      return { ref: { keyPrefix: `run/train/${batch}/`, numGroups: 1, groupSize: 1 }, counts: { succeeded: 1, failed: 0, cancelled: 0, other: 0 } };
    },
    async collectGroup(_s, group) {
      rec.calls.push(`group:g${group.g}r${group.r}@${group.policyStep}`);
      // Cancellation-aware, so a stop (or a worker shutting down) ends the wait.
      await Context.current().sleep(rec.groupDelayMs?.(group.g, group.r) ?? 0);
      // Served by the policy its resources name, whatever the label says: the rollout id carries both, so
      // trainStep can tell how stale each group really was.
      const served = Number(/-p(\d+)$/.exec(group.resourcesId)?.[1] ?? NaN);
      return { taskIndex: group.g, rolloutIds: [`g${group.g}r${group.r}@${served}@${group.policyStep}`], statuses: ['succeeded'] };
    },
    async cancelGroups(_s, keys) {
      rec.calls.push(`cancel:${keys.join(',')}`);
      rec.cancelledGroups?.push(keys);
      return keys.length;
    },
    async trainStep(s, batch, collected, policy): Promise<TrainStepResult> {
      rec.calls.push(`train:${batch}:${policy.step}`);
      const groups = (collected.groups ?? []).map((g) => {
        const [, served, label] = g.rolloutIds[0]!.split('@');
        return { key: g.key ?? '', policyStep: Number(served), labelStep: Number(label) };
      });
      rec.steps?.push({ policyStep: policy.step, groups });
      // As the real one: staleness from the policy that served each group (here its resources), labels checked.
      const served = groups.map((g) => policy.step - g.policyStep);
      const staleness: Metrics = groups.length
        ? {
            'async/staleness_mean': served.reduce((a, b) => a + b, 0) / served.length,
            'async/staleness_max': Math.max(...served),
            'async/staleness_min': Math.min(...served),
            'async/groups_mislabelled': groups.filter((g) => g.labelStep !== g.policyStep).length,
          }
        : {};
      rec.learningRates?.push(s.learningRate);
      // As the real one, the step times saving its state and sampler (time/save_checkpoint).
      const rewards: Metrics = rec.noRewards?.(batch) ? { 'rollouts/succeeded': 2, 'rollouts/succeeded_without_reward': 2, 'rollouts/succeeded_without_agent_spans': 2 } : {};
      return { state: state(policy.step + 1), metrics: { 'env/all/reward/total': batch / 10, 'time/save_checkpoint': 0.25, ...rewards, ...staleness }, skipped: false };
    },
    async saveCheckpoint(_s, name, batch, _p, final) {
      rec.calls.push(`checkpoint:${name}`);
      rec.checkpoints.push({ name, batch, final });
      return name;
    },
    async logMetrics(_s, step, m: Metrics, _t: TraceEvent[]) {
      rec.calls.push(`log:${step}`);
      rec.loggedSteps.push(step);
      rec.loggedMetrics?.push(m);
      return undefined;
    },
  };
}

function latch(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Holds the given batches in collectRollouts until released, so a test can steer a run mid-batch. */
export function holdBatches(rec: Recorder, batches: number[]) {
  const held = new Map(batches.map((b) => [b, latch()]));
  const reached = new Map(batches.map((b) => [b, latch()]));
  rec.hold = async (batch) => {
    reached.get(batch)?.resolve();
    await held.get(batch)?.promise;
  };
  return {
    /** Resolves once `batch` is being held. */
    reached: (batch: number) => reached.get(batch)!.promise,
    release: (batch: number) => held.get(batch)!.resolve(),
    /** For `finally`: a worker never shuts down while an activity is held. */
    releaseAll: () => held.forEach((h) => h.resolve()),
  };
}
