// `stop` ends a run whatever it waits on, and a run without rewards says so and pauses itself, on a real dev server
// with stand-in activities: a stop while the run is starting on a trainer that never answers ends it at once; a
// stop while a batch waits for rollouts that never come ends it after its grace, with the last trained policy as
// its final checkpoint; batches whose rollouts carry no reward show a warning with the likely causes in the
// progress query and the UI's current details, and pause the run after pauseAfterBatchesWithoutReward of them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { startTestTemporal, workflowBundle } from '../helpers/temporal';
import { chainHistories, recordHistory } from '../helpers/histories';
import { fakeRunConfig, fakeTrainingActivities, holdBatches, type Recorder } from './fake-training-activities';
import { trainingRun } from '../../workflows';
import { progressQuery, resumeSignal, stopUpdate } from '../../workflows/messages';

let env: TestWorkflowEnvironment | undefined;
before(async () => {
  env = await startTestTemporal();
});
after(async () => {
  await env?.teardown();
});

const config = (over: Record<string, unknown> = {}) => fakeRunConfig({ logPath: '/tmp/agl-wf-stop-test', evalEvery: 0, saveEvery: 0, ...over });

const newRecorder = (): Recorder => ({ calls: [], checkpoints: [], loggedSteps: [] });

type RunHandle = WorkflowHandleWithFirstExecutionRunId<typeof trainingRun>;

async function withRun<T>(rec: Recorder, numBatches: number, over: Record<string, unknown>, fn: (h: RunHandle) => Promise<T>): Promise<T> {
  const taskQueue = `tq-${randomUUID()}`;
  const worker = await Worker.create({ connection: env!.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: fakeTrainingActivities(rec, numBatches) });
  const start = () => env!.client.workflow.start(trainingRun, { taskQueue, workflowId: `run-${randomUUID()}`, args: [{ config: config(over) }] });
  return worker.runUntil(start().then(fn));
}

async function until(pred: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a stop while the run is starting on a trainer that never answers ends it at once', async () => {
  const rec: Recorder = { ...newRecorder(), initFails: true };
  await withRun(rec, 4, {}, async (handle) => {
    await until(async () => rec.calls.filter((c) => c.startsWith('initPolicy')).length >= 2, 'initPolicy retried');
    const reply = await handle.executeUpdate(stopUpdate, { args: [{ reason: 'test' }] });
    assert.deepEqual(reply, { stoppedAfterBatch: 0, finalCheckpoint: null });
    const res = await handle.result();
    assert.equal(res.stoppedEarly, true);
    assert.deepEqual(rec.checkpoints, [], 'no policy yet, so no checkpoint');
    await recordHistory('sync-stop-while-starting', await handle.fetchHistory(), {
      covers: 'a stop update while the run is starting (initPolicy failing and retried): cut at once, no checkpoint',
      recordedBy: 'test/workflows/stop-and-warnings.test.ts',
    });
  });
});

test('a stop while a batch waits for rollouts that never come ends the run after its grace, with the last policy saved', async () => {
  const rec = newRecorder();
  const hold = holdBatches(rec, [1]);
  await withRun(rec, 4, {}, async (handle) => {
    try {
      await hold.reached(1); // batch 0 trained; batch 1's rollouts never finish
      const reply = await handle.executeUpdate(stopUpdate, { args: [{ reason: 'test', graceSeconds: 2 }] });
      assert.deepEqual(reply, { stoppedAfterBatch: 1, finalCheckpoint: '000001' });
      const res = await handle.result();
      assert.equal(res.stoppedEarly, true);
      assert.deepEqual(rec.loggedSteps, [0], 'batch 1 never finished');
      assert.deepEqual(rec.checkpoints, [{ name: '000001', batch: 1, final: true }], 'the policy after batch 0 is the final checkpoint');
      // A history with the stop-ends-any-wait patch in it, for the replay test.
      await recordHistory('sync-stop-cut', await handle.fetchHistory(), {
        covers: 'sync loop: a stop while a batch waits for rollouts that never come, cut after its grace (stop-ends-any-wait), the last trained policy saved as the final checkpoint',
        recordedBy: 'test/workflows/stop-and-warnings.test.ts',
      });
    } finally {
      hold.releaseAll(); // the stand-in activity ignores cancellation; the worker waits for it before it shuts down
    }
  });
});

test('batches without rewards warn with the likely causes and pause the run after 3; resume lets it go on', async () => {
  const rec: Recorder = { ...newRecorder(), noRewards: () => true };
  await withRun(rec, 5, {}, async (handle) => {
    await until(async () => (await handle.query(progressQuery)).pauseReason !== undefined, 'the run to pause itself');
    const p = await handle.query(progressQuery);
    assert.equal(p.paused, true);
    assert.equal(p.batch, 3, 'paused after batches 0, 1 and 2');
    assert.match(p.pauseReason!, /^paused after 3 batches whose rollouts carried no reward\. 2 of 2 succeeded rollouts carry no reward/);
    assert.match(p.pauseReason!, /constraints-agl-0\.3\.txt/, 'names the likely cause: no agent spans arrived');
    assert.match(p.warning!, /^batch 2: 2 of 2 succeeded rollouts carry no reward.*\(3 batches in a row without any reward\)/);
    // What the UI shows under "Current details" is the workflow's metadata query.
    const meta = await handle.query<{ currentDetails: string }>('__temporal_workflow_metadata');
    assert.match(meta.currentDetails, /\*\*paused by the run itself\*\*: paused after 3 batches.*\*\*warning\*\*: batch 2: 2 of 2 succeeded rollouts carry no reward/s, meta.currentDetails);
    assert.deepEqual(rec.loggedSteps, [0, 1, 2]);
    await handle.signal(resumeSignal);
    const res = await handle.result();
    assert.equal(res.batchesCompleted, 5, 'resumed; it would pause again only after 3 more such batches');
    await recordHistory('sync-no-reward-pause-resume', (await chainHistories(env!.client, handle.workflowId, handle.firstExecutionRunId))[0]!, {
      covers: 'sync loop: batches whose rollouts carry no reward warn, the run pauses itself after 3 (pauseAfterBatchesWithoutReward), resume lets it go on',
      recordedBy: 'test/workflows/stop-and-warnings.test.ts',
    });
  });
});

test('pauseAfterBatchesWithoutReward: 0 warns but never pauses; a batch with rewards clears the warning', async () => {
  const rec: Recorder = { ...newRecorder(), noRewards: (b) => b < 4 };
  await withRun(rec, 5, { pauseAfterBatchesWithoutReward: 0 }, async (handle) => {
    const res = await handle.result();
    assert.equal(res.batchesCompleted, 5);
    assert.equal((await handle.query(progressQuery)).warning, undefined, 'the last batch had rewards');
  });
});
