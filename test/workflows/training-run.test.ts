// The training workflow's control flow on a real dev server: cadence, pause/resume, stop, continue-as-new.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startTestTemporal, workflowBundle } from '../helpers/temporal';
import { chainHistories, recordHistory, runWith } from '../helpers/histories';
import { fakeRunConfig, fakeTrainingActivities, holdBatches, type Recorder } from './fake-training-activities';
import { trainingRun } from '../../workflows';
import { configureUpdate, pauseSignal, progressQuery, resumeSignal, stopUpdate } from '../../workflows/messages';
import { checkpoint } from '../../cli/run-commands';

let env: TestWorkflowEnvironment | undefined;
before(async () => {
  // A low threshold so continue-as-new happens within a few batches.
  env = await startTestTemporal(['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=40']);
});
after(async () => {
  await env?.teardown();
});

const config = fakeRunConfig;

async function withWorker<T>(rec: Recorder, numBatches: number, fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = `tq-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env!.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: fakeTrainingActivities(rec, numBatches),
  });
  return worker.runUntil(fn(taskQueue));
}

/** Starts a run of `config(over)` under a fresh workflow id. */
const startRun = (taskQueue: string, over: Record<string, unknown>) =>
  env!.client.workflow.start(trainingRun, { taskQueue, workflowId: `run-${randomUUID()}`, args: [{ config: config(over) }] });

const newRecorder = (): Recorder => ({ calls: [], checkpoints: [], loggedSteps: [] });

async function until(pred: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("every batch runs once, with evals and checkpoints at the seed's cadence, across continue-as-new", async () => {
  const rec: Recorder = { ...newRecorder(), loggedMetrics: [] };
  const workflowId = `run-${randomUUID()}`;
  const result = await withWorker(rec, 7, async (taskQueue) => {
    const handle = await env!.client.workflow.start(trainingRun, { taskQueue, workflowId, args: [{ config: config() }] });
    const res = await handle.result();
    // The first run's history ends in continue-as-new, the last one starts from the state carried: both for the
    // replay test.
    const chain = await chainHistories(env!.client, workflowId, handle.firstExecutionRunId);
    const history = chain[0]!;
    const recordedBy = 'test/workflows/training-run.test.ts';
    await recordHistory('sync-continue-as-new', history, { covers: 'sync loop: the first run of a chain, evals and checkpoints at the seed cadence, continue-as-new', recordedBy });
    await recordHistory('sync-continued-to-end', chain.at(-1)!, { covers: 'sync loop: the last run of a chain, started from the state carried by continue-as-new (no initPolicy), to the final checkpoint', recordedBy });
    const kinds = history.events!.map((e) => e.eventType);
    assert.ok(
      history.events!.some((e) => e.workflowExecutionContinuedAsNewEventAttributes),
      `the first run continued as new (events: ${kinds.length})`,
    );
    return res;
  });
  assert.equal(result.batchesCompleted, 7);
  assert.equal(result.numBatches, 7);
  assert.equal(result.stoppedEarly, false);
  assert.equal(result.finalCheckpoint, 'final');
  assert.deepEqual(rec.loggedSteps, [0, 1, 2, 3, 4, 5, 6], 'one metrics row per batch');
  assert.deepEqual(
    rec.calls.filter((c) => c.startsWith('eval:')),
    ['eval:0', 'eval:2', 'eval:4', 'eval:6'],
    'eval when batch % evalEvery == 0',
  );
  assert.deepEqual(
    rec.checkpoints.map((c) => c.name),
    ['000002', '000004', '000006', 'final'],
    'checkpoint when (batch+1) % saveEvery == 0, then final',
  );
  assert.deepEqual(
    rec.calls.filter((c) => c.startsWith('train:')),
    ['train:0:0', 'train:1:1', 'train:2:2', 'train:3:3', 'train:4:4', 'train:5:5', 'train:6:6'],
    'each batch trains on the policy the previous batch produced, also after continue-as-new',
  );
  assert.equal(rec.calls.filter((c) => c.startsWith('initPolicy')).length, 1, 'the policy is created once, then carried');
  // A checkpoint batch keeps the train step's saving time and adds the time to record the row, under its own name.
  const atCheckpoint = rec.loggedMetrics![1]!;
  assert.equal(atCheckpoint['time/save_checkpoint'], 0.25, 'the train step\'s time/save_checkpoint is not overwritten');
  assert.equal(typeof atCheckpoint['time/record_checkpoint'], 'number');
  assert.equal(rec.loggedMetrics![0]!['time/record_checkpoint'], undefined, 'no checkpoint row at batch 0');
});

test('pause holds the run between batches; resume lets it finish', async () => {
  const rec = newRecorder();
  const hold = holdBatches(rec, [1]);
  await withWorker(rec, 4, async (taskQueue) => {
    const handle = await startRun(taskQueue, { evalEvery: 0, saveEvery: 0 });
    await hold.reached(1);
    await handle.signal(pauseSignal);
    hold.release(1);
    await until(async () => (await handle.query(progressQuery)).phase === 'paused', 'the paused phase');
    const p = await handle.query(progressQuery);
    assert.equal(p.batch, 2, 'batch 1 finished; batch 2 waits');
    await new Promise((r) => setTimeout(r, 1500));
    assert.ok(!rec.calls.includes('collect:2'), 'no rollouts of batch 2 while paused');
    await handle.signal(resumeSignal);
    const res = await handle.result();
    assert.equal(res.stoppedEarly, false);
    assert.deepEqual(rec.loggedSteps, [0, 1, 2, 3]);
    const chain = await chainHistories(env!.client, handle.workflowId, handle.firstExecutionRunId);
    await recordHistory('sync-pause-continue-as-new', runWith(chain, (e) => !!e.workflowExecutionSignaledEventAttributes, 'the pause signal'), {
      covers: 'sync loop: the pause signal during a batch, then continue-as-new carrying the pause (the resume signal came in the next run of the chain)',
      recordedBy: 'test/workflows/training-run.test.ts',
    });
  });
});

test('stop finishes the batch in flight, saves a final checkpoint and ends cleanly', async () => {
  const rec = newRecorder();
  const hold = holdBatches(rec, [1]);
  await withWorker(rec, 6, async (taskQueue) => {
    const handle = await startRun(taskQueue, { evalEvery: 0, saveEvery: 0 });
    await hold.reached(1);
    const stopping = handle.executeUpdate(stopUpdate, { args: [{ reason: 'test' }] });
    await until(async () => (await handle.query(progressQuery)).stopRequested, 'stopRequested');
    hold.release(1);
    const reply = await stopping;
    assert.deepEqual(reply, { stoppedAfterBatch: 2, finalCheckpoint: '000002' });
    const res = await handle.result();
    assert.equal(res.stoppedEarly, true);
    assert.equal(res.batchesCompleted, 2);
    assert.deepEqual(rec.loggedSteps, [0, 1], 'the batch in flight was finished and logged');
    assert.deepEqual(rec.checkpoints, [{ name: '000002', batch: 2, final: true }]);
    assert.ok(!rec.calls.includes('collect:2'), 'no batch started after the stop');
  });
});

test('the checkpoint update records the latest policy at once; refused once a stop is pending', async () => {
  const rec = newRecorder();
  const hold = holdBatches(rec, [1]);
  await withWorker(rec, 6, async (taskQueue) => {
    const handle = await startRun(taskQueue, { evalEvery: 0, saveEvery: 4 });
    await hold.reached(1);
    // Batch 0 is trained, batch 1 is collecting: the latest policy is step 1, saved while the batch waits.
    const saved = await checkpoint(handle);
    assert.deepEqual(saved, { name: '000001', batch: 1, statePath: 'tinker://m1/weights/1', samplerPath: 'tinker://m1/sampler_weights/1' });
    assert.deepEqual(rec.checkpoints, [{ name: '000001', batch: 1, final: false }]);
    assert.ok(!rec.calls.includes('train:1:1'), 'saved without waiting for the batch in flight');
    const stopping = handle.executeUpdate(stopUpdate, { args: [{ reason: 'test' }] });
    await until(async () => (await handle.query(progressQuery)).stopRequested, 'stopRequested');
    try {
      const refused = await checkpoint(handle);
      assert.ok('refused' in refused && /stopping/.test(refused.refused), JSON.stringify(refused));
    } finally {
      hold.releaseAll(); // else the worker would wait on the held batch forever
    }
    assert.deepEqual(await stopping, { stoppedAfterBatch: 2, finalCheckpoint: '000002' });
    assert.deepEqual(rec.checkpoints.map((c) => c.name), ['000001', '000002'], 'the refused update wrote nothing');
    // A history with both updates in it, for the replay test.
    await handle.result();
    const chain = await chainHistories(env!.client, handle.workflowId, handle.firstExecutionRunId);
    await recordHistory('sync-checkpoint-and-stop-updates', runWith(chain, (e) => !!e.workflowExecutionUpdateAcceptedEventAttributes, 'the updates'), {
      covers: 'sync loop: the checkpoint update while a batch is held, the stop update (its grace not needed), the final checkpoint of the stop',
      recordedBy: 'test/workflows/training-run.test.ts',
    });
  });
});

test('configure changes the learning rate and eval cadence from the next batch, across continue-as-new; bad values are refused', async () => {
  const rec = newRecorder();
  rec.learningRates = [];
  const hold = holdBatches(rec, [1]);
  await withWorker(rec, 6, async (taskQueue) => {
    const handle = await startRun(taskQueue, { evalEvery: 0, saveEvery: 0 });
    try {
      await hold.reached(1);
      await assert.rejects(
        handle.executeUpdate(configureUpdate, { args: [{ learningRate: -1, lr: 0.1 } as never] }),
        (e: Error) => /learningRate/.test(String(e.cause)) && /lr: unknown key/.test(String(e.cause)),
      );
      const reply = await handle.executeUpdate(configureUpdate, { args: [{ learningRate: 0.5, evalEvery: 1 }] });
      assert.deepEqual(reply, { appliesFromBatch: 2, changes: { learningRate: 0.5, evalEvery: 1 } });
      assert.deepEqual((await handle.query(progressQuery)).changes, { learningRate: 0.5, evalEvery: 1 });
    } finally {
      hold.release(1);
    }
    await handle.result();
    const first = await env!.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).fetchHistory();
    assert.ok(first.events!.some((e) => e.workflowExecutionContinuedAsNewEventAttributes), 'the run continued as new on the way');
    const chain = await chainHistories(env!.client, handle.workflowId, handle.firstExecutionRunId);
    await recordHistory('sync-configure-update', runWith(chain, (e) => !!e.workflowExecutionUpdateAcceptedEventAttributes, 'the configure update'), {
      covers: 'sync loop: a configure update (learningRate, evalEvery) accepted while a batch is held and applied from the next batch',
      recordedBy: 'test/workflows/training-run.test.ts',
    });
  });
  assert.deepEqual(rec.learningRates, [1e-3, 1e-3, 0.5, 0.5, 0.5, 0.5], 'the batch in flight kept its rate; later ones, also after continue-as-new, got the new one');
  assert.deepEqual(rec.calls.filter((c) => c.startsWith('eval:')), ['eval:2', 'eval:3', 'eval:4', 'eval:5']);
});
