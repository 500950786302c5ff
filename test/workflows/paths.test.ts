// Workflow paths no other workflow test takes, on a real dev server with stand-in activities, each checked and (with
// AGL_RECORD_HISTORIES) recorded for the replay test: a fork with a fleet weight and a rollout cap, its disk use
// shown; an async stop whose store refuses to cancel the groups still sampling; the health check; the grading
// workflow of an agent workflow's episode.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { Worker } from '@temporalio/worker';
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
