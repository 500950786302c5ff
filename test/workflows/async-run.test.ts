// The async loop's control flow on a real dev server with recording stand-ins for the activities (groups take
// scripted times): no step waits for the slowest group, staleness stays within the bound, every group is trained
// once, continue-as-new with groups in flight loses none, and pause and stop work as in a synchronous run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startTestTemporal, workflowBundle } from '../helpers/temporal';
import { chainHistories, recordHistory, runWith } from '../helpers/histories';
import { fakeTrainingActivities, type Recorder } from './fake-training-activities';
import { validateRunConfig } from '../../config/load';
import { trainingRun } from '../../workflows';
import type { StartedGroup } from '../../workflows/async-scheduler';
import type { RunSettings } from '../../shared/run-types';
import { checkpointUpdate, configureUpdate, pauseSignal, progressQuery, resumeSignal, stopUpdate } from '../../workflows/messages';

let env: TestWorkflowEnvironment | undefined;
before(async () => {
  // A low threshold so continue-as-new happens while groups are in flight.
  env = await startTestTemporal(['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=60']);
});
after(async () => {
  await env?.teardown();
});

const TASKS = Array.from({ length: 16 }, (_, i) => `t${i}`);
const config = (over: Record<string, unknown> = {}) =>
  validateRunConfig({
    learningRate: 1e-3,
    datasetBuilder: { batchSize: 2, trainDataset: TASKS, shuffle: false },
    modelName: 'local/tiny-hello',
    rendererName: 'role_colon',
    logPath: '/tmp/agl-wf-async-test',
    evalEvery: 3,
    saveEvery: 2,
    async: { maxStepsOffPolicy: 1, groupsPerBatch: 2 },
    ...over,
  });

const recordedBy = 'test/workflows/async-run.test.ts';

const newRecorder = (delay: (g: number, r: number) => number): Recorder => ({
  calls: [], checkpoints: [], loggedSteps: [], loggedMetrics: [], steps: [], learningRates: [], groupDelayMs: delay, cancelledGroups: [],
});

async function withWorker<T>(rec: Recorder, fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = `tq-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env!.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    // 8 dataset batches of 2 tasks: 16 groups.
    activities: fakeTrainingActivities(rec, TASKS.length / 2),
  });
  return worker.runUntil(fn(taskQueue));
}

async function until(pred: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every dataset group trained exactly once, each within the staleness bound. */
function checkTrainedOnce(rec: Recorder, bound: number): void {
  const trained = rec.steps!.flatMap((s) => s.groups.map((g) => Number(/^g(\d+)r/.exec(g.key)![1])));
  assert.deepEqual([...trained].sort((a, b) => a - b), TASKS.map((_, i) => i), 'each of the 16 groups trained exactly once');
  for (const s of rec.steps!) for (const g of s.groups) assert.ok(s.policyStep - g.policyStep <= bound, `${g.key} staleness ${s.policyStep - g.policyStep} <= ${bound}`);
}

test('no step waits for the slowest group; staleness bounded; every group once; continue-as-new with groups in flight', async () => {
  // Group 1 is ten times slower than the rest: it must not hold up step 0.
  const rec = newRecorder((g, r) => (g === 1 && r === 0 ? 2_500 : 150));
  const workflowId = `async-${randomUUID()}`;
  const result = await withWorker(rec, async (taskQueue) => {
    const handle = await env!.client.workflow.start(trainingRun, { taskQueue, workflowId, args: [{ config: config() }] });
    const res = await handle.result();
    const chain = await chainHistories(env!.client, workflowId, handle.firstExecutionRunId);
    assert.ok(chain.length > 1, 'the first run continued as new');
    await recordHistory('async-paced-continue-as-new', chain[0]!, { covers: "the paced async loop (staleRule 'pace', publish first): the first run of a chain, a slow group not waited for, evals, checkpoints, continue-as-new with groups in flight", recordedBy });
    await recordHistory('async-paced-continued-to-end', chain.at(-1)!, { covers: 'the paced async loop: the last run of a chain, its scheduler state carried, groups in flight picked up again, the data used up, the final evaluation logged, the final checkpoint', recordedBy });
    return res;
  });
  assert.equal(result.finalCheckpoint, 'final');
  assert.equal(result.stoppedEarly, false);
  checkTrainedOnce(rec, 1);
  assert.equal(result.batchesCompleted, rec.steps!.length);
  assert.ok(!rec.steps![0]!.groups.some((g) => g.key.startsWith('g1r')), 'step 0 did not wait for the slow group 1');
  // Steps logged once each, in order, across continue-as-new; evals every 3 steps and of the final policy, logged
  // as the row after the last step; checkpoints every 2.
  const n = rec.steps!.length;
  assert.deepEqual(rec.loggedSteps, [...rec.steps!.map((_, i) => i), n]);
  assert.deepEqual(rec.calls.filter((c) => c.startsWith('eval:')), [...rec.steps!.map((_, i) => i).filter((i) => i % 3 === 0), n].map((i) => `eval:${i}`));
  assert.equal(rec.loggedMetrics!.at(-1)!['test/env/all/reward/total'], n / 10, 'the final evaluation is logged');
  assert.ok(rec.loggedMetrics!.slice(0, -1).every((m) => m['async/groups_mislabelled'] === 0), 'no group mislabelled');
  assert.ok(rec.checkpoints.some((c) => c.name === '000002'));
});

test("staleRule 'late' (cookbook 0.6.1): steps go on past a straggler's deadline, which is trained late, every group once", async () => {
  // Group 1 takes 3 s, the rest 150 ms: pace would hold step 1 for it (due there at K = 1); 'late' does not.
  const rec = newRecorder((g, r) => (g === 1 && r === 0 ? 3_000 : 150));
  await withWorker(rec, async (taskQueue) => {
    const handle = await env!.client.workflow.start(trainingRun, { taskQueue, workflowId: `async-${randomUUID()}`, args: [{ config: config({ evalEvery: 0, async: { maxStepsOffPolicy: 1, groupsPerBatch: 2, staleRule: 'late' } }) }] });
    await handle.result();
    await recordHistory('async-late-straggler', (await chainHistories(env!.client, handle.workflowId, handle.firstExecutionRunId))[0]!, {
      covers: "the async loop with staleRule 'late': steps go on past a straggler, which is trained late (first run of a chain)",
      recordedBy,
    });
  });
  checkTrainedOnce(rec, Infinity);
  const at = rec.steps!.find((s) => s.groups.some((g) => g.key.startsWith('g1r')))!;
  const g1 = at.groups.find((g) => g.key.startsWith('g1r'))!;
  assert.ok(at.policyStep - g1.policyStep > 1, `group 1 trained at staleness ${at.policyStep - g1.policyStep}, past K = 1: the steps before did not wait`);
  assert.equal(g1.key, 'g1r0', 'trained as first sampled, not resampled');
});

test('pace: a step that would leave a straggler past its deadline waits for it, and the straggler is trained within K as first sampled', async () => {
  // One group per step, K = 2, sampling 2 steps ahead: group 1 takes 3 s, the rest 100 ms. Step 2 has a newer group
  // ready, but taking it would leave group 1 (due by step 2) untrainable in time: the step waits for group 1.
  const rec = newRecorder((g, r) => (g === 1 && r === 0 ? 3_000 : 100));
  await withWorker(rec, async (taskQueue) => {
    const handle = await env!.client.workflow.start(trainingRun, { taskQueue, workflowId: `async-${randomUUID()}`, args: [{ config: config({ evalEvery: 0, saveEvery: 0, async: { maxStepsOffPolicy: 2, groupsPerBatch: 1, pipelineDepth: 2 } }) }] });
    await handle.result();
    // The run that waited for group 1: the one its collectGroup completed in.
    const chain = await chainHistories(env!.client, handle.workflowId, handle.firstExecutionRunId);
    const straggler = chain.find((h) => {
      const scheduled = new Set(
        h.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'collectGroup' && /"g":1,"r":0,/.test(Buffer.from(e.activityTaskScheduledEventAttributes.input!.payloads![1]!.data!).toString())).map((e) => String(e.eventId)),
      );
      return h.events!.some((e) => scheduled.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId)));
    });
    assert.ok(straggler, 'a run of the chain got group 1 back');
    await recordHistory('async-paced-straggler', straggler, {
      covers: "the paced async loop: a step held for a straggler whose deadline a newer group would make it miss (the pace rule's deadline check), the straggler trained within K",
      recordedBy,
    });
  });
  checkTrainedOnce(rec, 2);
  const at = rec.steps!.findIndex((s) => s.groups.some((g) => g.key === 'g1r0'));
  assert.ok(at >= 0, 'group 1 trained as first sampled, not resampled');
  assert.ok(rec.steps![at]!.policyStep <= 2, `group 1 trained by step 2 (its deadline), at step ${rec.steps![at]!.policyStep}`);
});

test('a group finishing while the new policy is published starts no group under a policy it will not sample from', async () => {
  // Each train publish takes 1 s while groups take 100 ms: groups finish during every publish. Their freed
  // slots must not start groups labelled with the new step that sample from the old policy (served staleness K+1).
  const rec = newRecorder(() => 100);
  rec.publishDelayMs = (step, purpose) => (purpose === 'train' && step > 0 ? 1_000 : 0);
  await withWorker(rec, async (taskQueue) => {
    const handle = await env!.client.workflow.start(trainingRun, { taskQueue, workflowId: `async-${randomUUID()}`, args: [{ config: config({ evalEvery: 0 }) }] });
    await handle.result();
    // A run in which a group finished while a train publish was in flight.
    const chain = await chainHistories(env!.client, handle.workflowId, handle.firstExecutionRunId);
    const duringPublish = chain.find((h) => {
      const name = new Map(h.events!.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes!.activityType!.name]));
      let publishing = false;
      for (const e of h.events!) {
        const done = e.activityTaskCompletedEventAttributes && name.get(String(e.activityTaskCompletedEventAttributes.scheduledEventId));
        if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'publishPolicy' && Number(e.eventId) > 30) publishing = true;
        else if (done === 'publishPolicy') publishing = false;
        else if (done === 'collectGroup' && publishing) return true;
      }
      return false;
    });
    assert.ok(duringPublish, 'a group finished during a publish');
    await recordHistory('async-paced-slow-publish', duringPublish, {
      covers: "the paced async loop: groups finishing during a 1 s publish start their successors under the policy still served, the step's slots freed only once the new one serves",
      recordedBy,
    });
  });
  const groups = rec.steps!.flatMap((s) => s.groups);
  const mislabelled = groups.filter((g) => g.labelStep !== g.policyStep).map((g) => `${g.key} labelled ${g.labelStep}, served by ${g.policyStep}`);
  assert.deepEqual(mislabelled, [], 'every group sampled from the policy it was labelled with');
  checkTrainedOnce(rec, 1);
});

test('the in-flight cap: never more than groupsPerBatch x (pipelineDepth + 1) groups started and untrained, nor more rollouts than concurrency', async () => {
  let inFlight = 0;
  let maxInFlight = 0;
  const rec = newRecorder(() => 100);
  const base = fakeTrainingActivities(rec, TASKS.length / 2);
  const taskQueue = `tq-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env!.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: {
      ...base,
      async collectGroup(s: RunSettings, g: StartedGroup, sha: string) {
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        try {
          return await base.collectGroup(s, g, sha);
        } finally {
          inFlight--;
        }
      },
    },
  });
  const res = await worker.runUntil(
    env!.client.workflow.execute(trainingRun, { taskQueue, workflowId: `async-${randomUUID()}`, args: [{ config: config({ async: { maxStepsOffPolicy: 2, groupsPerBatch: 2, pipelineDepth: 2 }, concurrency: 20 }) }] }),
  );
  assert.equal(res.finalCheckpoint, 'final');
  // 6 slots, but concurrency 20 with groups of 4 rollouts: 5 groups sampling at once at most.
  assert.ok(maxInFlight <= 5, `at most 5 groups sampling at once (saw ${maxInFlight})`);
  assert.ok(maxInFlight > 2, `sampling ran ahead of training (saw ${maxInFlight} at once)`);
  checkTrainedOnce(rec, 2);
});

test('pause stops new groups and training; stop ends with a final checkpoint and cancels groups still sampling', async () => {
  const rec = newRecorder((g) => (g >= 6 ? 60_000 : 100));
  await withWorker(rec, async (taskQueue) => {
    const handle = await env!.client.workflow.start(trainingRun, { taskQueue, workflowId: `async-${randomUUID()}`, args: [{ config: config() }] });
    await until(async () => (await handle.query(progressQuery)).batch >= 1, 'step 1');
    await handle.signal(pauseSignal);
    await until(async () => (await handle.query(progressQuery)).phase === 'paused', 'paused');
    const startedWhenPaused = rec.calls.filter((c) => c.startsWith('group:')).length;
    const stepsWhenPaused = rec.steps!.length;
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(rec.steps!.length, stepsWhenPaused, 'no step while paused');
    assert.equal(rec.calls.filter((c) => c.startsWith('group:')).length, startedWhenPaused, 'no group started while paused');
    const p = await handle.query(progressQuery);
    assert.ok(p.async && p.async.maxStepsOffPolicy === 1, 'progress shows the async state');
    // checkpoint and configure work as in a synchronous run, per step.
    const saved = await handle.executeUpdate(checkpointUpdate);
    assert.equal(saved.batch, p.policyStep);
    assert.ok(rec.checkpoints.some((c) => c.name === saved.name && !c.final));
    const configured = await handle.executeUpdate(configureUpdate, { args: [{ learningRate: 0.01 }] });
    assert.equal(configured.appliesFromBatch, p.batch, 'paused: from the step it waits to start');
    await handle.signal(resumeSignal);
    // Groups 6.. never finish: the run waits for them until stopped.
    await until(async () => (await handle.query(progressQuery)).phase === 'waiting for groups' && rec.steps!.length >= 3, 'waiting on the slow groups');
    const inFlight = (await handle.query(progressQuery)).async!.inFlight;
    const stopped = await handle.executeUpdate(stopUpdate, { args: [{ reason: 'test' }] });
    const res = await handle.result();
    const chain = await chainHistories(env!.client, handle.workflowId, handle.firstExecutionRunId);
    await recordHistory('async-paced-pause-and-updates', runWith(chain, (e) => !!e.workflowExecutionSignaledEventAttributes, 'the pause signal'), {
      covers: 'the paced async loop: a pause while waiting for groups (the step and its evaluation kept), checkpoint and configure updates while paused, resume',
      recordedBy,
    });
    await recordHistory('async-paced-stop', chain.at(-1)!, {
      covers: 'the paced async loop: a stop update while groups sample, the groups cancelled in Temporal and in the store (cancelGroups), the final checkpoint',
      recordedBy,
    });
    // The groups still sampling are cancelled in the store too (the real activity: test/e2e).
    assert.equal(rec.cancelledGroups!.flat().length, inFlight, `the ${inFlight} groups sampling are cancelled in the store`);
    assert.equal(res.stoppedEarly, true);
    assert.equal(stopped.finalCheckpoint, String(res.batchesCompleted).padStart(6, '0'));
    assert.ok(rec.checkpoints.some((c) => c.final && c.name === stopped.finalCheckpoint));
  });
  assert.equal(rec.learningRates!.at(-1), 0.01, 'steps after the configure update train with the new rate');
  // The pause is in no step's time: the step it fell in logs it apart, and keeps its evaluation (every 3 steps).
  const rows = rec.loggedMetrics!;
  assert.ok(rows.some((m) => (m['time/paused'] ?? 0) >= 1), `the paused second is logged as time/paused (${JSON.stringify(rows.map((m) => m['time/paused']))})`);
  for (const m of rows) if (m['progress/step']! % 3 === 0) assert.ok(m['test/env/all/reward/total'] !== undefined, `step ${m['progress/step']} kept its evaluation`);
});
