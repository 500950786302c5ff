// Every client command answers a mistake with one line naming it and a non-zero exit code, never a stack trace:
// the commands run as `npm run client` runs them, against a real Temporal dev server and the real workflow
// (the training activities are the recording stand-ins, prepareRun the real one, so a bad config fails the run).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { freePort } from '../../common/ports';
import { prepareRun } from '../../activities/prepare-run';
import { healthActivities } from '../../activities/health';
import { PING_PREFIX } from '../../cli/ping';
import { startTestTemporal, workflowBundle } from '../helpers/temporal';
import { startTestStore, type TestStore } from '../store/helpers';
import { assertOneLine, client } from '../helpers/commands';
import { fakeTrainingActivities, type Recorder } from '../workflows/fake-training-activities';

let env: TestWorkflowEnvironment | undefined;
// prepareRun keeps the run's config.json and dataset.json in the store (a run's records live there).
let store: TestStore | undefined;
let worker: Worker | undefined;
let running: Promise<void> | undefined;
const taskQueue = `mistakes-${randomUUID()}`;
const finished = `done-${randomUUID().slice(0, 8)}`;
const failed = `bad-${randomUUID().slice(0, 8)}`;

/** A run config the recording activities accept (prepareRun validates it for real). */
const runConfig = (runName: string, over: Record<string, unknown> = {}) => ({
  runName, modelName: 'local/tiny-test', rendererName: 'role_colon', learningRate: 0.001, logPath: `/tmp/agl-mistakes/${runName}`,
  storeAddress: store!.server.url,
  evalEvery: 0, saveEvery: 0, datasetBuilder: { batchSize: 1, trainDataset: ['1', '2'] }, ...over,
});

const at = () => ['--address', env!.address, '--task-queue', taskQueue];

before(async () => {
  store = await startTestStore();
  env = await startTestTemporal();
  const rec: Recorder = { calls: [], checkpoints: [], loggedSteps: [] };
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: { ...fakeTrainingActivities(rec, 2), prepareRun, ...healthActivities },
  });
  running = worker.run();
  const c = env.client.workflow;
  await c.execute('trainingRun', { taskQueue, workflowId: `agl-run-${finished}`, args: [{ config: runConfig(finished) }] });
  const bad = await c.start('trainingRun', { taskQueue, workflowId: `agl-run-${failed}`, args: [{ config: runConfig(failed, { loraRnak: 8 }) }] });
  await assert.rejects(bad.result());
});

after(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
  await store?.close();
});

test('any command with no Temporal server there', async () => {
  const address = `127.0.0.1:${await freePort()}`;
  for (const args of [['list'], ['status', 'hello'], ['stop', 'hello']]) {
    assertOneLine(await client([...args, '--address', address]), new RegExp(`^client ${args[0]}: cannot reach Temporal at ${address}.*npm start`));
  }
});

test('status of a run that does not exist', async () => {
  assertOneLine(await client(['status', 'no-such-run', ...at()]), /^client status: no run agl-run-no-such-run .*client -- list/);
});

test('stop, checkpoint, pause and configure of a finished run', async () => {
  for (const command of ['stop', 'checkpoint', 'pause']) {
    assertOneLine(await client([command, finished, ...at()]), new RegExp(`^client ${command}: run agl-run-${finished} is not running \\(completed\\); nothing to ${command}$`));
  }
  assertOneLine(await client(['configure', finished, 'learningRate=0.01', ...at()]), /is not running \(completed\); nothing to configure$/);
});

test('status of a finished run says how it finished; of a failed run, why it failed', async () => {
  const ok = await client(['status', finished, ...at()]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, new RegExp(`^${finished}: finished after (\\d+)/\\1 batches; last train reward`));
  const bad = await client(['status', failed, ...at()]);
  assert.equal(bad.code, 1);
  assert.match(bad.stdout.split('\n')[0]!, /^FAILED: activity prepareRun failed: run config: 1 problem: loraRnak: unknown key \(did you mean "loraRank"\?\)$/);
  assertOneLine(await client(['watch', failed, ...at()]), /^client watch: run agl-run-bad-\w+ failed: activity prepareRun failed: run config: 1 problem: loraRnak/);
});

test('wrong command lines: an unknown command or option, a missing run name, nothing to configure', async () => {
  assertOneLine(await client(['frobnicate']), /^client: unknown command "frobnicate" \(npm run client -- --help lists the commands\)$/, 2);
  assertOneLine(await client(['status', '--adress', 'x']), /^client: Unknown option '--adress'/, 2);
  assertOneLine(await client(['stop']), /^client stop: needs a run name/, 2);
  assertOneLine(await client(['configure', 'hello']), /^client configure: nothing to change/, 2);
  assertOneLine(await client(['start']), /^client start: needs a run config file/, 2);
});

test('ping answers from the worker and leaves no workflow behind', async () => {
  const r = await client(['ping', ...at()]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).workflowSawActivity, true);
  // Deletion is asynchronous on the server: wait until the ping's workflow is gone from the list.
  const query = `WorkflowId STARTS_WITH "${PING_PREFIX}"`;
  for (let i = 0; ; i++) {
    const { count } = await env!.client.workflow.count(query);
    if (count === 0) break;
    assert.ok(i < 400, `the ping's workflow is still listed after 2 minutes`);
    await new Promise((res) => setTimeout(res, 300));
  }
  assertOneLine(await client(['ping', '--address', env!.address, '--task-queue', `nobody-${randomUUID()}`]), /^client ping: no worker polls the task queue nobody-/);
});
