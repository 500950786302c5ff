// `client fork` refuses, before it starts anything, a fork whose workflow would fail at once on its input: a step
// past the parent's last committed step (here a 20-step parent whose step records are in a real store) is answered
// with one line naming the parent's last step and exit 1, and no fork workflow exists afterwards. A fork from a step
// the parent has starts as before.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { startProcess, type ManagedProcess } from '../../common/processes';
import { startDevServer, type TemporalServer } from '../../dev/temporal-server';
import { startOrAttach } from '../../cli/run-commands';
import { validateRunConfig } from '../../config/load';
import { StoreClient } from '../../store/client';
import type { StepRecord } from '../../activities/step-records';
import { freePort } from '../../common/ports';
import { assertOneLine, client as runClient, ROOT } from '../helpers/commands';

let temporal: TemporalServer | undefined;
let store: ManagedProcess | undefined;
let storeUrl = '';
let connection: Connection | undefined;
let env: NodeJS.ProcessEnv = {};
const taskQueue = `fork-refused-${process.pid}`; // no worker polls it: the runs stay as started

before(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-fork-refused-'));
  temporal = await startDevServer({ port: await freePort(), uiPort: 0 });
  store = await startProcess({
    name: 'store', command: process.execPath, args: ['--import', 'tsx', 'gateway/main.ts', '--port', '0', '--data', path.join(dir, 'store')],
    cwd: ROOT, readyLine: /listening on (http:\/\/127\.0\.0\.1:\d+)/, readyTimeoutMs: 60_000,
  });
  storeUrl = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(store.output())![1]!;
  connection = await Connection.connect({ address: temporal.address });
  const { AGL_STORE_URL: _s, TINKER_BASE_URL: _t, TEMPORAL_PROFILE: _p, ...rest } = process.env;
  env = { ...rest, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: 'default', AGL_TASK_QUEUE: taskQueue, TEMPORAL_CONFIG_FILE: path.join(dir, 'none.toml') };

  // The parent: a 20-batch run as started, and its 20 committed steps (plus the initial state) in the store.
  const cfg = validateRunConfig({
    learningRate: 1e-4,
    datasetBuilder: { batchSize: 1, groupSize: 1, shuffle: false, trainDataset: Array.from({ length: 20 }, (_, i) => String(i)), valDataset: ['v'] },
    modelName: 'local/tiny-hello',
    rendererName: 'role_colon',
    logPath: path.join(dir, 'runs', 'forkparent'),
    storeAddress: storeUrl,
    baseUrl: `http://127.0.0.1:${await freePort()}`, // no trainer there: what needs one is a note, not a refusal
  });
  const parent = await startOrAttach(new Client({ connection }), taskQueue, cfg);
  const runKey = `forkparent@${(await parent.handle.describe()).runId}`;
  const records = Array.from({ length: 21 }, (_, step) => {
    const state = { modelId: 'm', statePath: `tinker://m/weights/step-${step}`, samplerPath: `tinker://m/sampler_weights/step-${step}`, step };
    const body: StepRecord = { parentStatePath: step === 0 ? 'initial' : `tinker://m/weights/step-${step - 1}`, result: { state, metrics: {}, skipped: false } };
    return { kind: 'step' as const, step, key: body.parentStatePath, body: JSON.stringify(body) };
  });
  await new StoreClient(storeUrl).putRunRecords(runKey, records);
});

after(async () => {
  await connection?.close();
  store?.kill9();
  await temporal?.stop();
});

async function exists(workflowId: string): Promise<boolean> {
  try {
    await new Client({ connection: connection! }).workflow.getHandle(workflowId).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

test('a fork past the parent\'s last step is refused with the reason and exit 1; nothing is started', { timeout: 180_000 }, async () => {
  const r = await runClient(['fork', 'forkparent', '--from-step', '99'], env);
  assertOneLine(r, /^client fork: --from-step 99: run forkparent@\S+ has no state after step 99 \(its last committed step is 20\); nothing started$/, 1);
  assert.doesNotMatch(r.stdout, /started/);
  assert.equal(await exists('agl-run-forkparent-fork99'), false, 'no fork workflow was started');
});

test('a fork from a step the parent has starts', { timeout: 180_000 }, async () => {
  const r = await runClient(['fork', 'forkparent', '--from-step', '20'], env);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^started agl-run-forkparent-fork20: a fork of forkparent@\S+ after step 20$/m);
  assert.equal(await exists('agl-run-forkparent-fork20'), true);
});

test('client start of a config whose training set gives no batch is refused before it starts (exit 2, the field named)', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-no-batch-'));
  const file = path.join(dir, 'run.json');
  writeFileSync(file, JSON.stringify({
    learningRate: 1e-4,
    datasetBuilder: { batchSize: 8, trainDataset: ['a', 'b', 'c'], valDataset: ['v'] },
    modelName: 'local/tiny-hello',
    rendererName: 'role_colon',
    logPath: path.join(dir, 'nobatch'),
    storeAddress: storeUrl,
    baseUrl: `http://127.0.0.1:${await freePort()}`,
  }));
  // Before: "started", and the run failed a moment later with EmptyDataset.
  const r = await runClient(['start', file], env);
  assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stderr, /datasetBuilder\.batchSize: 8 is more than the 3 training tasks: the run would have no batch to train/);
  assert.equal(await exists('agl-run-nobatch'), false, 'nothing was started');
});
