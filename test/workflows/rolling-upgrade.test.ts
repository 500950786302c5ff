// A rolling upgrade under a running run, with Temporal's Worker Versioning on a real dev server: build A runs the
// run, build B is deployed beside it and made current with the Temporal CLI (the commands docs/several-hosts.md
// gives); the run is PINNED, so it finishes its step on A, continues as new at the step boundary and trains every
// later step on B. Checked from Temporal's history (which version completed each workflow task, which worker ran
// each activity, no failed workflow task) and from the workers' own records (each batch trained once).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { temporal } from '@temporalio/proto';
import { startTestTemporal, workflowBundle } from '../helpers/temporal';
import { fakeRunConfig, fakeTrainingActivities, holdBatches, type Recorder } from './fake-training-activities';
import { trainingRun } from '../../workflows';
import { provisionTemporalCli } from '../../dev/temporal-cli';
import { workerDeploymentOptions } from '../../common/worker-deployment';
import { assertOneLine, runCommand } from '../helpers/commands';

const run = promisify(execFile);
let env: TestWorkflowEnvironment | undefined;
let cli = '';
before(async () => {
  // The server re-checks a version's drainage every 5 min, after a grace period of 3 min, by default: seconds here.
  env = await startTestTemporal([
    '--dynamic-config-value', 'matching.wv.VersionDrainageStatusRefreshInterval="1s"',
    '--dynamic-config-value', 'matching.wv.VersionDrainageStatusVisibilityGracePeriod="1s"',
    // One partition per task queue: the new routing is then known where tasks are matched as soon as it is written
    // (with the default 4, the other partitions learn it by long poll, and a busy CI machine saw a step go by first).
    '--dynamic-config-value', 'matching.numTaskqueueReadPartitions=1',
    '--dynamic-config-value', 'matching.numTaskqueueWritePartitions=1',
  ]);
  cli = (await provisionTemporalCli(() => {})).path;
});
after(async () => {
  await env?.teardown();
});

/** `temporal <args>` against the test server, as an operator types it. */
async function temporalCli(args: string[]): Promise<string> {
  const { stdout } = await run(cli, [...args, '--address', env!.address, '--namespace', 'default'], { timeout: 30_000 });
  return stdout;
}

/** The version is only known to the server once its worker has polled: retry until set-current-version takes it. */
async function setCurrent(deployment: string, buildId: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await temporalCli(['worker', 'deployment', 'set-current-version', '--deployment-name', deployment, '--build-id', buildId, '--yes']);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/**
 * set-current-version returns before the new routing reaches the task queue's partitions; until it has, a workflow
 * task may still be told nothing changed (CI saw the run train one more step on A). The server reports when it is done.
 */
async function routingPropagated(deployment: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { workerDeploymentInfo } = await env!.client.workflowService.describeWorkerDeployment({ namespace: 'default', deploymentName: deployment });
    const state = workerDeploymentInfo?.routingConfigUpdateState;
    if (state === 2) return; // RoutingConfigUpdateState: 2 = COMPLETED
    if (Date.now() > deadline) throw new Error(`the routing of ${deployment} did not propagate in 30 s (state ${state})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const newRecorder = (): Recorder => ({ calls: [], checkpoints: [], loggedSteps: [] });

async function startWorker(taskQueue: string, deploymentName: string, buildId: string, rec: Recorder, numBatches: number) {
  const worker = await Worker.create({
    connection: env!.nativeConnection,
    taskQueue,
    identity: `build-${buildId}`,
    workflowBundle: await workflowBundle(),
    activities: fakeTrainingActivities(rec, numBatches),
    // The options worker.ts builds from --deployment-name / --build-id.
    workerDeploymentOptions: workerDeploymentOptions({ deploymentName, buildId }),
  });
  return { worker, running: worker.run() };
}

type Event = temporal.api.history.v1.IHistoryEvent;
const buildsOfTasks = (events: Event[]) => [...new Set(events.flatMap((e) => (e.workflowTaskCompletedEventAttributes ? [e.workflowTaskCompletedEventAttributes.deploymentVersion?.buildId ?? '(unversioned)'] : [])))];
const behavioursOfTasks = (events: Event[]) => [...new Set(events.flatMap((e) => (e.workflowTaskCompletedEventAttributes ? [String(e.workflowTaskCompletedEventAttributes.versioningBehavior)] : [])))];
const activityWorkers = (events: Event[]) => [...new Set(events.flatMap((e) => (e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.identity ?? ''] : [])))];
const failedTasks = (events: Event[]) => events.filter((e) => e.workflowTaskFailedEventAttributes).map((e) => e.workflowTaskFailedEventAttributes!.failure?.message ?? '?');

test('a run started on build A moves to build B at its next step boundary once B is current, and no step runs twice', async () => {
  const taskQueue = `upgrade-${randomUUID()}`;
  const deployment = `agl-test-${randomUUID().slice(0, 8)}`;
  const numBatches = 4;
  const recA = newRecorder();
  const recB = newRecorder();
  const held = holdBatches(recA, [1]);
  const a = await startWorker(taskQueue, deployment, 'A', recA, numBatches);
  let b: Awaited<ReturnType<typeof startWorker>> | undefined;
  try {
    await setCurrent(deployment, 'A');
    const workflowId = `run-${randomUUID()}`;
    const handle = await env!.client.workflow.start(trainingRun, {
      taskQueue,
      workflowId,
      args: [{ config: fakeRunConfig({ datasetBuilder: { batchSize: 1, trainDataset: ['a', 'b', 'c', 'd'] }, evalEvery: 0, saveEvery: 0 }) }],
    });
    // Batch 1's rollouts are being collected on A when B is deployed and made current.
    await held.reached(1);
    b = await startWorker(taskQueue, deployment, 'B', recB, numBatches);
    await setCurrent(deployment, 'B');
    await routingPropagated(deployment);
    const described = JSON.parse(await temporalCli(['worker', 'deployment', 'describe', '--name', deployment, '-o', 'json']));
    assert.equal(described.routingConfig?.currentVersionBuildID, 'B', `B is current: ${JSON.stringify(described)}`);
    held.release(1);
    const result = await handle.result();
    assert.equal(result.batchesCompleted, numBatches);

    const first = (await env!.client.workflow.getHandle(workflowId, handle.firstExecutionRunId).fetchHistory()).events!;
    const last = (await env!.client.workflow.getHandle(workflowId).fetchHistory()).events!;
    assert.ok(first.some((e) => e.workflowExecutionContinuedAsNewEventAttributes), 'the first run continued as new (to move to B)');
    assert.deepEqual(buildsOfTasks(first), ['A'], 'every workflow task of the first run was completed by build A (pinned)');
    assert.deepEqual(activityWorkers(first), ['build-A'], 'every activity of the first run ran on build A, also after B became current');
    assert.deepEqual(buildsOfTasks(last), ['B'], 'every workflow task of the run after continue-as-new was completed by build B');
    assert.deepEqual(activityWorkers(last), ['build-B'], 'the activities after continue-as-new ran on build B');
    // VersioningBehavior enum: 1 = PINNED.
    assert.deepEqual([...behavioursOfTasks(first), ...behavioursOfTasks(last)], ['1', '1'], 'the training workflow declared PINNED');
    assert.deepEqual([...failedTasks(first), ...failedTasks(last)], [], 'no workflow task failed (no nondeterminism)');

    // The workers' own records: A trained batches 0 and 1 (the one in flight when B became current), B the rest.
    const trained = (rec: Recorder) => rec.calls.filter((c) => c.startsWith('train:')).map((c) => Number(c.split(':')[1]));
    assert.deepEqual(trained(recA), [0, 1]);
    assert.deepEqual(trained(recB), [2, 3]);
    assert.deepEqual([...recA.loggedSteps, ...recB.loggedSteps], [0, 1, 2, 3], 'one metrics row per batch');

    // What the operator waits for before stopping build A's workers: no open run is pinned to A any more.
    const deadline = Date.now() + 30_000;
    let drainage = '';
    while (drainage !== 'drained' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      const versionA = JSON.parse(await temporalCli(['worker', 'deployment', 'describe-version', '--deployment-name', deployment, '--build-id', 'A', '-o', 'json']));
      drainage = versionA.drainageInfo?.drainageStatus ?? '';
    }
    assert.equal(drainage, 'drained', 'build A is reported drained once the run moved to B');
  } finally {
    held.releaseAll();
    a.worker.shutdown();
    b?.worker.shutdown();
    await Promise.all([a.running, b?.running]);
  }
});

test('worker.ts: a build id without a deployment name is a one-line error before connecting', async () => {
  const r = await runCommand('worker.ts', ['--build-id', 'B', '--address', '127.0.0.1:1']);
  assertOneLine(r, /^worker: build id B given without a deployment name/, 2);
});
