// What README's "the same with the Temporal CLI alone" section promises, run with the real `temporal` binary: start
// a run from the example config file as it is, query its progress, pause and resume it, change its settings, ask
// for a checkpoint and stop it, all from the command line (and `configure` also through client.ts). The activities are the recording stand-ins; the workflow is the real one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { provisionTemporalCli } from '../../dev/temporal-cli';
import { startTestTemporal, workflowBundle } from '../helpers/temporal';
import { fakeTrainingActivities, holdBatches, type Recorder } from './fake-training-activities';
import { runCommand } from '../helpers/commands';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
let env: TestWorkflowEnvironment | undefined;
let cli = '';

before(async () => {
  env = await startTestTemporal();
  cli = (await provisionTemporalCli(() => {})).path;
});
after(async () => {
  await env?.teardown();
});

/** Runs `temporal <args> --address <test server>` and returns its stdout. */
async function temporal(...args: string[]): Promise<string> {
  const { stdout } = await run(cli, [...args, '--address', env!.address], { cwd: ROOT, timeout: 60_000 });
  return stdout;
}

/** Runs `npm run client -- <args>` (client.ts) against the test server; resolves with its exit code and output. */
const client = (...args: string[]) => runCommand('client.ts', [...args, '--address', env!.address]);

async function progress(workflowId: string): Promise<Record<string, unknown>> {
  const out = JSON.parse(await temporal('workflow', 'query', '-w', workflowId, '--name', 'progress', '--output', 'json'));
  return (out.queryResult as Record<string, unknown>[])[0]!;
}

async function until(pred: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('start, query, pause, resume, checkpoint and stop a run with the temporal CLI', async () => {
  const rec: Recorder = { calls: [], checkpoints: [], loggedSteps: [], learningRates: [] };
  const hold = holdBatches(rec, [1, 3]);
  const taskQueue = `tq-${randomUUID()}`;
  const workflowId = `agl-run-cli-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env!.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: fakeTrainingActivities(rec, 6),
  });
  await worker.runUntil(async () => {
    try {
      await temporal('workflow', 'start', '--type', 'trainingRun', '--task-queue', taskQueue, '--workflow-id', workflowId,
        '--input-file', 'agents/examples/hello.run.json');
      await hold.reached(1);
      const p = await progress(workflowId);
      assert.equal(p.runName, 'hello-cli', 'the config file went in as it is and was read by the workflow');
      assert.equal(p.phase, 'collecting rollouts');
      assert.equal(p.numBatches, 6);

      await temporal('workflow', 'signal', '-w', workflowId, '--name', 'pause');
      const bad = await client('configure', workflowId, 'learningRate=-1', 'evalEvery=two');
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /configure refused: .*learningRate.*evalEvery/);
      const good = await client('configure', workflowId, 'learningRate=0.01');
      assert.equal(good.code, 0, good.stderr);
      assert.match(good.stdout, /^from batch 2: \{"learningRate":0.01\}/);
      const viaCli = JSON.parse(await temporal('workflow', 'update', 'execute', '-w', workflowId, '--name', 'configure', '--input', '{"saveEvery":1}', '--output', 'json'));
      assert.deepEqual(viaCli.result, { appliesFromBatch: 2, changes: { learningRate: 0.01, saveEvery: 1 } });
      const saved = JSON.parse(await temporal('workflow', 'update', 'execute', '-w', workflowId, '--name', 'checkpoint', '--output', 'json'));
      assert.deepEqual(saved.result, { name: '000001', batch: 1, statePath: 'tinker://m1/weights/1', samplerPath: 'tinker://m1/sampler_weights/1' });
      hold.release(1);
      await until(async () => (await progress(workflowId)).phase === 'paused', 'the paused phase');
      assert.equal((await progress(workflowId)).batch, 2, 'paused after batch 1');
      await temporal('workflow', 'signal', '-w', workflowId, '--name', 'resume');
      await hold.reached(3); // batch 2 ran after the resume

      const stopping = temporal('workflow', 'update', 'execute', '-w', workflowId, '--name', 'stop', '--input', '{"reason":"manual"}', '--output', 'json');
      await until(async () => (await progress(workflowId)).stopRequested === true, 'the stop to arrive');
      hold.release(3);
      const stopped = JSON.parse(await stopping);
      assert.deepEqual(stopped.result, { stoppedAfterBatch: 4, finalCheckpoint: '000004' });
      const described = JSON.parse(await temporal('workflow', 'describe', '-w', workflowId, '--output', 'json'));
      assert.equal(described.workflowExecutionInfo.status, 'WORKFLOW_EXECUTION_STATUS_COMPLETED');
      const listed = await temporal('workflow', 'list', '--query', `WorkflowType="trainingRun" AND AglRunName="hello-cli"`, '--output', 'json');
      assert.ok(listed.includes(workflowId), 'found by its search attribute');
    } finally {
      hold.releaseAll();
    }
  });
  assert.deepEqual(rec.learningRates, [0.003, 0.003, 0.01, 0.01], 'the example config\'s rate, then the configured one');
  assert.deepEqual(
    rec.checkpoints,
    [
      { name: '000001', batch: 1, final: false }, // the checkpoint update
      { name: '000003', batch: 3, final: false }, // saveEvery 1 from batch 2
      { name: '000004', batch: 4, final: false },
      { name: '000004', batch: 4, final: true }, // stop (the real activity keeps the first row of a name)
    ],
  );
  assert.deepEqual(rec.loggedSteps, [0, 1, 2, 3]);
});

test('an async run starts from its config file with the temporal CLI, and its staleness shows in the UI current details', async () => {
  // 2 dataset batches of the example's 16 tasks: 32 groups, 16 a step; group 3 is slow, so steps go on without it.
  const rec: Recorder = { calls: [], checkpoints: [], loggedSteps: [], steps: [], groupDelayMs: (g) => (g === 3 ? 1_500 : 20) };
  const taskQueue = `tq-${randomUUID()}`;
  const workflowId = `agl-run-cli-async-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env!.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: fakeTrainingActivities(rec, 2),
  });
  await worker.runUntil(async () => {
    await temporal('workflow', 'start', '--type', 'trainingRun', '--task-queue', taskQueue, '--workflow-id', workflowId,
      '--input-file', 'agents/examples/hello-async.run.json');
    await temporal('workflow', 'result', '-w', workflowId);
    const p = await progress(workflowId);
    assert.equal(p.runName, 'hello-async');
    // "async": {} in the file: the run config's defaults, filled in when the run validated it.
    assert.deepEqual((p.async as Record<string, number>).maxStepsOffPolicy, 6);
    // What the UI shows under "Current details" is the workflow's metadata query.
    const meta = JSON.parse(await temporal('workflow', 'query', '-w', workflowId, '--name', '__temporal_workflow_metadata', '--output', 'json'));
    const details = String((meta.queryResult as { currentDetails: string }[])[0]!.currentDetails);
    assert.match(details, /staleness of the last step mean \d\.\d{3}, max \d\.\d{3} \(bound 6\)/, details);
    assert.match(details, /2 steps done \(counted from 0, as metrics.jsonl's step\)/);
  });
  assert.equal(rec.steps!.length, 2);
  assert.ok(rec.steps!.every((s) => s.groups.length === 16));
  assert.ok(rec.steps!.flatMap((s) => s.groups).every((g) => g.policyStep >= 0));
});
