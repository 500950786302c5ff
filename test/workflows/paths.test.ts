// Workflow paths no other workflow test takes, on a real dev server with stand-in activities, each checked and (with
// AGL_RECORD_HISTORIES) recorded for the replay test: a fork with a fleet weight and a rollout cap, its disk use
// shown; an async stop whose store refuses to cancel the groups still sampling; an async run a failed group ends,
// while it waits for groups and while it trains; the health check; the grading workflow of an agent workflow's episode.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { Worker } from '@temporalio/worker';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startTestTemporal, workflowBundle } from '../helpers/temporal';
import { recordHistory } from '../helpers/histories';
import { fakeRunConfig, fakeTrainingActivities, type Recorder } from './fake-training-activities';
import { aglGradeEpisode, healthCheck, trainingRun } from '../../workflows';
import { progressQuery, stopUpdate } from '../../workflows/messages';
import { healthActivities } from '../../activities/health';
import type { TrainingActivities } from '../../activities/types';

let env: TestWorkflowEnvironment | undefined;
before(async () => {
  env = await startTestTemporal();
});
after(async () => {
  await env?.teardown();
});

const recordedBy = 'test/workflows/paths.test.ts';
const newRecorder = (): Recorder => ({ calls: [], checkpoints: [], loggedSteps: [] });

async function withWorker<T>(activities: object, fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = `paths-${randomUUID()}`;
  const worker = await Worker.create({ connection: env!.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities });
  return worker.runUntil(fn(taskQueue));
}

async function until(pred: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a fork starts at its fork step, carries its parent in search attributes and its fleet share in the memo, and shows its disk use', async () => {
  const rec = newRecorder();
  const base = fakeTrainingActivities(rec, 4);
  const activities: TrainingActivities = {
    ...base,
    async logMetrics(s, step, m, t) {
      await base.logMetrics(s, step, m, t);
      return { atStep: step, store: { bytes: 5 * 2 ** 20 }, trainer: { bytes: 3 * 2 ** 30, volumeFreeBytes: 700 * 1024 } };
    },
  };
  await withWorker(activities, async (taskQueue) => {
    const config = fakeRunConfig({ forkOf: { run: 'parent-run', step: 2 }, fleetWeight: 3, maxRolloutsInFlight: 4 });
    const handle = await env!.client.workflow.start(trainingRun, { taskQueue, workflowId: `fork-${randomUUID()}`, args: [{ config }] });
    const res = await handle.result();
    assert.equal(res.batchesCompleted, 4);
    assert.deepEqual(rec.loggedSteps, [2, 3], 'the fork trains from its fork step');
    assert.deepEqual(rec.calls.filter((c) => c.startsWith('initPolicy')), ['initPolicy:2']);
    const d = await handle.describe();
    assert.deepEqual(d.searchAttributes.AglParentRun, ['parent-run']);
    assert.deepEqual(d.searchAttributes.AglForkStep, [2]);
    assert.equal(d.memo?.fleetWeight, 3);
    assert.equal(d.memo?.maxRolloutsInFlight, 4);
    const p = await handle.query(progressQuery);
    assert.deepEqual(p.disk, { atStep: 3, store: { bytes: 5 * 2 ** 20 }, trainer: { bytes: 3 * 2 ** 30, volumeFreeBytes: 700 * 1024 } });
    const meta = await handle.query<{ currentDetails: string }>('__temporal_workflow_metadata');
    assert.match(meta.currentDetails, /disk after batch 3: store 5\.0 MiB, trainer 3\.0 GiB \(700 KiB free\)/);
    await recordHistory('sync-fork-fleet-weight', await handle.fetchHistory(), {
      covers: 'sync loop: a fork (forkOf) from its fork step, its parent in search attributes, fleetWeight and maxRolloutsInFlight in the memo, disk use from logMetrics in progress and current details',
      recordedBy,
    });
  });
});

test('an async stop ends the run with its final checkpoint even when the store refuses to cancel the groups still sampling', async () => {
  const rec: Recorder = { ...newRecorder(), steps: [], groupDelayMs: (g) => (g >= 4 ? 60_000 : 100) };
  const base = fakeTrainingActivities(rec, 4);
  const activities: TrainingActivities = {
    ...base,
    async cancelGroups() {
      throw ApplicationFailure.nonRetryable('the store refused: database is locked (test)', 'StoreRefused');
    },
  };
  await withWorker(activities, async (taskQueue) => {
    const config = fakeRunConfig({ datasetBuilder: { batchSize: 2, trainDataset: Array.from({ length: 8 }, (_, i) => `t${i}`), shuffle: false }, evalEvery: 0, saveEvery: 0, async: { maxStepsOffPolicy: 1, groupsPerBatch: 2 } });
    const handle = await env!.client.workflow.start(trainingRun, { taskQueue, workflowId: `async-${randomUUID()}`, args: [{ config }] });
    // Groups 4.. never finish: step 2 waits for them.
    await until(async () => (await handle.query(progressQuery)).phase === 'waiting for groups' && rec.steps!.length >= 2, 'waiting on the slow groups');
    const reply = await handle.executeUpdate(stopUpdate, { args: [{ reason: 'test' }] });
    const res = await handle.result();
    assert.equal(res.stoppedEarly, true);
    assert.equal(reply.finalCheckpoint, '000002');
    assert.ok(rec.checkpoints.some((c) => c.final && c.name === '000002'), 'the final checkpoint is recorded');
    await recordHistory('async-paced-stop-cancel-refused', await handle.fetchHistory(), {
      covers: 'the paced async loop: a stop while groups sample, cancelGroups refused by the store (logged, the stop goes on), the final checkpoint',
      recordedBy,
    });
  });
});

/** An async run of 4 batches of 2 tasks whose group 4 fails (not retried) after `failAfterMs`; groups 5.. take a minute. */
async function runWithFailedGroup(failAfterMs: number, trainStepMs: (step: number) => number) {
  const rec: Recorder = { ...newRecorder(), steps: [], cancelledGroups: [], groupDelayMs: (g) => (g >= 5 ? 60_000 : 100) };
  const base = fakeTrainingActivities(rec, 4);
  const activities: TrainingActivities = {
    ...base,
    async collectGroup(s, group, sha) {
      if (group.g !== 4) return base.collectGroup(s, group, sha);
      rec.calls.push(`group:g4r${group.r}@${group.policyStep}`);
      await Context.current().sleep(failAfterMs);
      throw ApplicationFailure.nonRetryable('every rollout of the group failed to start (test)', 'GroupFailed');
    },
    async trainStep(s, step, collected, policy) {
      if (trainStepMs(step) > 0) await Context.current().sleep(trainStepMs(step));
      return base.trainStep(s, step, collected, policy);
    },
  };
  return withWorker(activities, async (taskQueue) => {
    const config = fakeRunConfig({ datasetBuilder: { batchSize: 2, trainDataset: Array.from({ length: 8 }, (_, i) => `t${i}`), shuffle: false }, evalEvery: 2, saveEvery: 0, async: { maxStepsOffPolicy: 1, groupsPerBatch: 2 } });
    const handle = await env!.client.workflow.start(trainingRun, { taskQueue, workflowId: `async-${randomUUID()}`, args: [{ config }] });
    const err = await handle.result().then(() => null, (e: unknown) => e);
    assert.ok(err instanceof WorkflowFailedError, `the run fails (${String(err)})`);
    const messages: string[] = [];
    for (let e: { message?: string; cause?: unknown } | undefined = err; e; e = e.cause as typeof e) messages.push(e.message ?? '');
    assert.match(messages.join(' | '), /every rollout of the group failed to start/, 'with the group\'s failure');
    return { rec, history: await handle.fetchHistory() };
  });
}

test('a group that fails while the async loop waits for groups ends the run: the wait rejects, the groups still sampling are cancelled', async () => {
  const { rec, history } = await runWithFailedGroup(300, () => 0);
  assert.deepEqual(rec.loggedSteps, [0, 1], 'steps 0 and 1 trained; step 2 waited for group 4');
  assert.ok(rec.calls.includes('eval:2'), 'step 2 was evaluated before its wait');
  // The failed group is still counted in flight, so its key is in the cancel too (its rollouts have ended anyway).
  assert.deepEqual(rec.cancelledGroups, [['g4r0', 'g5r0', 'g6r0', 'g7r0']], 'the groups still sampling cancelled in the store');
  assert.ok(!rec.calls.some((c) => c.startsWith('train:2')), 'no step trained after the failure');
  await recordHistory('async-paced-group-failed-waiting', history, {
    covers: 'the paced async loop: a group failing (not retried) while the loop waits for the step\'s groups: the wait rejects, the groups still sampling cancelled in Temporal and in the store, the run failed with the group\'s error',
    recordedBy,
  });
});

test('a group that fails while the async loop trains ends the run before its next step starts', async () => {
  // Step 1 trains for 2 s; group 4 (started before it) fails 100 ms in.
  const { rec, history } = await runWithFailedGroup(100, (step) => (step === 1 ? 2_000 : 0));
  assert.deepEqual(rec.loggedSteps, [0, 1], 'step 1 finished and logged');
  assert.ok(!rec.calls.includes('eval:2'), `step 2 never started: no evaluation (${rec.calls.join(' ')})`);
  assert.equal(rec.cancelledGroups!.length, 1, 'the groups still sampling cancelled in the store');
  await recordHistory('async-paced-group-failed-training', history, {
    covers: 'the paced async loop: a group failing (not retried) while a step trains: the step publishes, logs and ends, the run fails before the next step (no evaluation), the groups still sampling cancelled',
    recordedBy,
  });
});

test('the health check and the grading workflow of an agent workflow episode', async () => {
  const graded: unknown[] = [];
  const activities = {
    ...healthActivities,
    async gradeByLength(task: unknown, result: unknown) {
      graded.push([task, result]);
      return String(result).length / 10;
    },
  };
  await withWorker(activities, async (taskQueue) => {
    const health = await env!.client.workflow.start(healthCheck, { taskQueue, workflowId: `health-${randomUUID()}`, args: ['ping'] });
    assert.equal((await health.result()).echo, 'ping');
    await recordHistory('health-check', await health.fetchHistory(), { covers: 'the health check workflow: one activity on the worker, its report returned', recordedBy });
    const grade = await env!.client.workflow.start(aglGradeEpisode, { taskQueue, workflowId: `grade-${randomUUID()}`, args: [{ taskQueue, grader: 'gradeByLength', task: { q: 'hi' }, result: 'hello' }] });
    assert.equal(await grade.result(), 0.5);
    assert.deepEqual(graded, [[{ q: 'hi' }, 'hello']]);
    await recordHistory('agent-grade-episode', await grade.fetchHistory(), {
      covers: "aglGradeEpisode: an agent workflow's episode graded by the grader activity on the agent's task queue (agentWorkflow.grader)",
      recordedBy,
    });
  });
});
