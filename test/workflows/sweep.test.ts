// The sweep workflow (workflows/sweep.ts) on a real dev server, its children real training runs on stand-in
// training activities, its own activities stand-ins that read the children from Temporal (the real ones read the
// store: test/e2e/sweep.test.ts). Successive halving with every way a child leaves early (fails at start, its
// watch fails and it is stopped by hand, it ends before it is resumed), and a resume signal Temporal reports failed:
// tried again, and a child never resumed is marked failed with the reason, its slot freed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowUpdateStage } from '@temporalio/client';
import { bundleWorkflowCode, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startTestTemporal, workflowBundle } from '../helpers/temporal';
import { chainHistories, recordHistory } from '../helpers/histories';
import { fakeRunConfig, fakeTrainingActivities, type Recorder } from './fake-training-activities';
import { progressQuery, stopUpdate } from '../../workflows/messages';
import { RESUME_TRIES, sweep } from '../../workflows/sweep';
import type { SweepActivities } from '../../activities/sweep-watch';
import type { SweepInput, SweepResult } from '../../shared/sweep-plan';
import type { TrainingActivities } from '../../activities/types';

let env: TestWorkflowEnvironment | undefined;
before(async () => {
  env = await startTestTemporal();
});
after(async () => {
  await env?.teardown();
});

const NUM_BATCHES = 3;
const MILESTONE = 1;
const recordedBy = 'test/workflows/sweep.test.ts';

const input = (name: string, taskQueue: string, lrs: number[], maxParallel: number): SweepInput => ({
  name,
  base: fakeRunConfig({ logPath: `/tmp/agl-wf-sweep-test/${name}/base`, evalEvery: 1, saveEvery: 0 }),
  grid: [['learningRate', lrs]],
  seeds: 2,
  maxParallel,
  milestones: [MILESTONE],
  taskQueue,
});

interface Hooks {
  /** The eval score each child reports at the milestone, by its workflow id. */
  score: (workflowId: string) => number;
  /** A child whose watch fails for good (the store refuses the read, say). */
  watchFails?: string;
  watchFailed?: () => void;
  /** Called in the first sweepStopRun, before the stop is sent. */
  beforeFirstStop?: () => Promise<void>;
}

/** The sweep's activities, reading the children from Temporal instead of from the store. */
function sweepActivities(hooks: Hooks): SweepActivities {
  let stops = 0;
  return {
    async sweepWaitForEval(a) {
      if (hooks.watchFails && a.workflowId.endsWith(hooks.watchFails)) {
        hooks.watchFailed?.();
        throw ApplicationFailure.nonRetryable('the store refused the read (test)', 'StoreRefused');
      }
      const handle = env!.client.workflow.getHandle(a.workflowId);
      for (;;) {
        Context.current().heartbeat();
        if ((await handle.describe()).status.name !== 'RUNNING') return null;
        const p = await handle.query(progressQuery);
        if (p.paused && p.phase === 'paused' && p.batch > a.step) return hooks.score(a.workflowId);
        await Context.current().sleep(100);
      }
    },
    async sweepStopRun(a) {
      if (stops++ === 0) await hooks.beforeFirstStop?.();
      const handle = env!.client.workflow.getHandle(a.workflowId);
      if ((await handle.describe()).status.name !== 'RUNNING') return;
      await handle.startUpdate(stopUpdate, { args: [{ reason: a.reason }], updateId: `sweep-stop-${a.workflowId}`, waitForStage: WorkflowUpdateStage.ACCEPTED });
    },
    async sweepFinalScores(a) {
      return a.runKeys.map(() => ({ lastEvalReward: 0.5, lastEvalStep: NUM_BATCHES - 1 }));
    },
  };
}

async function withWorker<T>(bundle: WorkflowBundleWithSourceMap, activities: TrainingActivities & SweepActivities, fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = `sweep-${randomUUID()}`;
  const worker = await Worker.create({ connection: env!.nativeConnection, taskQueue, workflowBundle: bundle, activities });
  return worker.runUntil(fn(taskQueue));
}

const newRecorder = (): Recorder => ({ calls: [], checkpoints: [], loggedSteps: [] });

test('halving at a milestone with children failing at start, stopped by hand after their watch failed, and ended before their resume', async () => {
  const name = `sw-${randomUUID().slice(0, 8)}`;
  const id = (c: number, s: number) => `agl-run-${name}-c${c}-s${s}`;
  const training = fakeTrainingActivities(newRecorder(), NUM_BATCHES);
  let watchFailed!: () => void;
  const failedWatch = new Promise<void>((r) => (watchFailed = r));
  const activities = {
    ...training,
    // c2-s1's config is refused: it fails at its first activity.
    async prepareRun(raw: Parameters<TrainingActivities['prepareRun']>[0]) {
      if ((raw as { runName?: string }).runName?.endsWith('-c2-s1')) throw ApplicationFailure.nonRetryable('learningRate: refused (test)', 'InvalidRunConfig');
      return training.prepareRun(raw);
    },
    ...sweepActivities({
      // c2 best, then c1 (seed 1 above seed 0), c0 last.
      score: (wid) => ({ c0: 0.1, c1: 0.5, c2: 0.9 })[/-(c\d)-s\d$/.exec(wid)![1] as 'c0'] + (wid.endsWith('-s1') ? 0.01 : 0),
      watchFails: '-c0-s1',
      watchFailed: () => watchFailed(),
      // c1-s1, kept, is terminated while the worse half is being stopped: its resume then fails.
      beforeFirstStop: async () => {
        await env!.client.workflow.getHandle(id(1, 1)).terminate('test: ended before its resume');
      },
    }),
  };
  await withWorker(await workflowBundle(), activities, async (taskQueue) => {
    const handle = await env!.client.workflow.start(sweep, { taskQueue, workflowId: `agl-sweep-${name}`, args: [input(name, taskQueue, [1e-3, 2e-3, 3e-3], 3)] });
    // c0-s1's watch failed: it holds at the milestone, and the sweep waits for it, until it is stopped by hand.
    await failedWatch;
    const stray = env!.client.workflow.getHandle(id(0, 1));
    for (let p = await stray.query(progressQuery); !(p.paused && p.phase === 'paused'); p = await stray.query(progressQuery)) await new Promise((r) => setTimeout(r, 100));
    await stray.executeUpdate(stopUpdate, { args: [{ reason: 'test: by hand' }] });
    const result = (await handle.result()) as SweepResult;
    const by = new Map(result.children.map((c) => [c.workflowId, c]));
    assert.deepEqual(result.milestones, [{ step: MILESTONE, kept: [`${name}-c2-s0`, `${name}-c1-s1`], stopped: [`${name}-c1-s0`, `${name}-c0-s0`] }]);
    assert.equal(by.get(id(2, 0))!.status, 'completed');
    assert.equal(by.get(id(2, 0))!.batchesCompleted, NUM_BATCHES, 'the kept child was resumed and ran to its end');
    assert.equal(by.get(id(1, 1))!.status, 'failed', 'the kept child terminated before its resume counts as failed');
    assert.match(by.get(id(1, 1))!.error ?? '', /terminated/i);
    for (const [c, s] of [[1, 0], [0, 0]] as const) {
      assert.equal(by.get(id(c, s))!.status, 'stopped');
      assert.equal(by.get(id(c, s))!.stoppedAtMilestone, MILESTONE);
    }
    assert.equal(by.get(id(0, 1))!.status, 'stopped', 'stopped by hand');
    assert.equal(by.get(id(2, 1))!.status, 'failed');
    assert.match(by.get(id(2, 1))!.error ?? '', /refused \(test\)/);

    const history = await handle.fetchHistory();
    assert.ok(history.events!.some((e) => e.signalExternalWorkflowExecutionFailedEventAttributes), 'the resume of the terminated child failed in Temporal');
    await recordHistory('sweep-halving', history, {
      covers: 'sweep: 3 configs x 2 seeds, at most 3 at once, halving at step 1; a child failing at start, a child whose milestone watch failed stopped by hand, a kept child ended before its resume (the failed signal: sweep-resume-retried, ended meanwhile), the worse half stopped, the better resumed to its end',
      recordedBy,
    });
    const kept = await chainHistories(env!.client, id(2, 0), (await env!.client.workflow.getHandle(id(2, 0)).describe()).runId);
    await recordHistory('sync-held-at-milestone', kept[0]!, { covers: "sync loop: a sweep's child held before its next batch (pauseBeforeBatches), resumed by the sweep's signal, run to its end", recordedBy });
  });
});

test('a resume signal that fails is tried again; a child it never reaches is marked failed with the reason and frees its slot', async () => {
  // The interceptor fails the resume of ...-c0-s0 twice and of ...-c1-s0 every time (failing-resume-interceptor.ts).
  const bundle = await bundleWorkflowCode({
    workflowsPath: path.resolve(__dirname, '../../workflows/index.ts'),
    workflowInterceptorModules: [path.join(__dirname, 'failing-resume-interceptor.ts')],
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
  });
  const name = `sw-${randomUUID().slice(0, 8)}`;
  const id = (c: number, s: number) => `agl-run-${name}-c${c}-s${s}`;
  const activities = {
    ...fakeTrainingActivities(newRecorder(), NUM_BATCHES),
    // The seed-0 children are the better half, so both are to be resumed.
    ...sweepActivities({ score: (wid) => (wid.endsWith('-s0') ? 0.9 : 0.1) }),
  };
  await withWorker(bundle, activities, async (taskQueue) => {
    const handle = await env!.client.workflow.start(sweep, { taskQueue, workflowId: `agl-sweep-${name}`, args: [input(name, taskQueue, [1e-3, 2e-3], 4)] });
    const result = (await handle.result()) as SweepResult;
    const by = new Map(result.children.map((c) => [c.workflowId, c]));
    assert.equal(by.get(id(0, 0))!.status, 'completed', 'resumed at its third try');
    assert.equal(by.get(id(0, 0))!.batchesCompleted, NUM_BATCHES);
    const lost = by.get(id(1, 0))!;
    assert.equal(lost.status, 'failed', 'not counted running');
    assert.match(lost.error ?? '', new RegExp(`^held at its milestone and not resumed after ${RESUME_TRIES} tries \\(Unable to signal external workflow because it was not found \\(test ${RESUME_TRIES}\\)\\): resume it`));
    // It is still held: the sweep said so instead of waiting on it; an operator resumes or stops it.
    const held = env!.client.workflow.getHandle(id(1, 0));
    const p = await held.query(progressQuery);
    assert.equal(p.paused, true);
    await held.executeUpdate(stopUpdate, { args: [{ reason: 'test cleanup' }] });
    // Between the tries the sweep waited (1, 2, 4, 8 s for the lost one; 1, 2 s for the other).
    const timers = (await handle.fetchHistory()).events!.filter((e) => e.timerStartedEventAttributes).length;
    assert.equal(timers, RESUME_TRIES - 1 + 2);
  });
});
