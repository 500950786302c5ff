// An operator's first hour against a Temporal server this project did not start: a fresh dev server without the
// runs' search attributes. The worker refuses it naming the exact attributes and the CLI command, `client status`
// of a run started there says the same (not "Failed to query Workflow"); after `client setup` a worker started
// against it runs the run to the end. Then a run whose config names a store nobody listens on shows the store's
// URL and the error in `client status` within a minute (and `client watch` says it too), while Temporal keeps
// retrying. `client start` of a run
// that has finished says so and how to start it again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startDevServer, type TemporalServer } from '../../dev/temporal-server';
import { startStack, type Stack } from '../../dev/stack';
import { freePort } from '../../common/ports';
import { assertOneLine, client, runCommand } from '../helpers/commands';
import type { RunConfigInput } from '../../config/run-config';
import { readJsonl, runPaths } from '../../records/run-files';

const ATTRIBUTES = ['AglRunName', 'AglModel', 'AglPhase', 'AglBatch', 'AglTrainReward', 'AglEvalReward', 'AglParentRun', 'AglForkStep', 'AglSweep'];
let dir = '';
let temporal: TemporalServer | undefined;
let stack: Stack | undefined;
let env: NodeJS.ProcessEnv = {};
const taskQueue = `first-hour-${randomUUID()}`;
let ports = { store: 0, trainer: 0, proxy: 0 };

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'agl-first-hour-'));
  temporal = await startDevServer({ port: await freePort(), uiPort: 0, searchAttributes: false });
  env = { ...process.env, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: 'default', AGL_TASK_QUEUE: taskQueue, TEMPORAL_CONFIG_FILE: path.join(dir, 'none.toml') };
  for (const k of ['TEMPORAL_PROFILE', 'TEMPORAL_API_KEY', 'TEMPORAL_TLS']) delete env[k];
  const [store, trainer, proxy] = await Promise.all([freePort(), freePort(), freePort()]);
  ports = { store, trainer, proxy };
});

after(async () => {
  await stack?.stop();
  await temporal?.stop();
});

function runConfig(runName: string, over: Partial<RunConfigInput> = {}): string {
  const cfg: RunConfigInput = {
    runName,
    learningRate: 3e-3,
    modelName: 'local/tiny-test',
    rendererName: 'role_colon',
    baseUrl: `http://127.0.0.1:${ports.trainer}`,
    storeAddress: `http://127.0.0.1:${ports.store}`,
    proxyUrl: `http://127.0.0.1:${ports.proxy}`,
    logPath: path.join(dir, 'runs', runName),
    maxTokens: 16,
    rolloutTimeoutSeconds: 120,
    evalEvery: 0,
    saveEvery: 0,
    datasetBuilder: { batchSize: 2, groupSize: 2, trainDataset: ['1', '2', '3', '4'], valDataset: ['500'] },
    ...over,
  };
  const file = path.join(dir, `${runName}.run.json`);
  writeFileSync(file, JSON.stringify(cfg));
  return file;
}

test('without its search attributes, the worker and status name them; after client setup a worker runs the run', { timeout: 600_000 }, async () => {
  // The worker refuses the namespace, naming every attribute with its type and the command that adds them.
  const w = await runCommand('worker.ts', [], env);
  assertOneLine(w, /^worker: namespace default lacks the search attributes training runs write: AglRunName \(Keyword\), AglModel \(Keyword\), AglPhase \(Keyword\), AglBatch \(Int\), AglTrainReward \(Double\), AglEvalReward \(Double\), AglParentRun \(Keyword\), AglForkStep \(Int\), AglSweep \(Keyword\); add them with `npm run client -- setup`/);
  assert.match(w.stderr, new RegExp(`temporal operator search-attribute create --address ${temporal!.address} --namespace default --name AglRunName --type Keyword --name AglModel --type Keyword`));

  // A run started meanwhile: start warns, status says the same and exits 1 (no "Failed to query Workflow").
  const file = runConfig('fh-good');
  const started = await client(['start', file], env);
  assert.equal(started.code, 0, started.stderr);
  assert.match(started.stderr, /WARNING: the run cannot go on until this is fixed: namespace default lacks the search attributes/);
  const st = await client(['status', 'fh-good'], env);
  assert.equal(st.code, 1, st.stdout + st.stderr);
  assert.match(st.stdout, /the run cannot go on: namespace default lacks the search attributes training runs write: AglRunName \(Keyword\)/);
  assert.doesNotMatch(st.stdout + st.stderr, /Failed to query/);

  const setup = await client(['setup'], env);
  assert.equal(setup.code, 0, setup.stderr);
  assert.match(setup.stdout, new RegExp(`registered on namespace default: ${ATTRIBUTES.map((a) => `${a} \\(\\w+\\)`).join(', ')}`));
  assert.match(setup.stdout, /namespace default is ready for training runs/);
  // Once more: nothing to add, still fine (idempotent).
  const again = await client(['setup'], env);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /already registered on namespace default: AglRunName/);

  // The stack's worker connects to the server the test started (reuseTemporal, TEMPORAL_ADDRESS) and runs the run.
  const saved = { ...process.env };
  Object.assign(process.env, { TEMPORAL_ADDRESS: temporal!.address, TEMPORAL_CONFIG_FILE: env.TEMPORAL_CONFIG_FILE });
  try {
    stack = await startStack({
      dataDir: dir,
      ports: { temporal: await freePort(), ui: 0, ...ports },
      reuseTemporal: true,
      taskQueue,
      initialModel: 'local/tiny-test',
      renderer: 'role_colon',
      agent: 'hello',
      runners: 2,
      log: () => {},
    });
  } finally {
    process.env = saved;
  }
  assert.equal(stack.temporal.address, temporal!.address, 'the stack used the server it did not start');
  assert.equal(stack.temporal.process, undefined);
  const watched = await client(['watch', 'fh-good'], env);
  assert.equal(watched.code, 0, watched.stdout + watched.stderr);
  assert.deepEqual(readJsonl(runPaths(path.join(dir, 'runs', 'fh-good')).metrics).map((m) => m.step), [0, 1], 'both batches trained');
  // Its search attributes are on the server: the run is found by them.
  const { stdout } = await client(['list'], env);
  assert.match(stdout, /agl-run-fh-good\tCOMPLETED\t2 batches done/);

  // Starting it again says it has finished and how to start it again (not "already running", exit 0).
  // (Notes about the config, such as loraRank on the local trainer, may come before it.)
  const restart = await client(['start', file], env);
  assertOneLine(
    { ...restart, stderr: restart.stderr.split('\n').filter((l) => !l.startsWith('note: ')).join('\n') },
    /run agl-run-fh-good has already finished \(completed\); nothing started\. To train it again from scratch: npm run client -- start .* --fresh/,
  );
});

test('a run whose store nobody listens on says so in status within a minute, with the URL and the error', { timeout: 300_000 }, async () => {
  assert.ok(stack, 'needs the stack of the test before');
  const dead = await freePort();
  const file = runConfig('fh-dead-store', { storeAddress: `http://127.0.0.1:${dead}` });
  const started = await client(['start', file], env);
  assert.equal(started.code, 0, started.stderr);
  const t0 = Date.now();
  let last = '';
  let code = -1;
  for (;;) {
    const st = await client(['status', 'fh-dead-store'], env);
    last = st.stdout + st.stderr;
    code = st.code;
    if (new RegExp(`store http://127\\.0\\.0\\.1:${dead} unreachable \\(connection refused\\)`).test(last)) break;
    assert.ok(Date.now() - t0 < 60_000, `status did not name the dead store within a minute; last status:\n${last}`);
    await new Promise((r) => setTimeout(r, 2000));
  }
  // The first activity that needs the store (prepareRun, which keeps the run's records there) says it is retrying.
  assert.match(last, /(prepareRun|publishPolicy) attempt \d+ failed .*; retrying/);
  // Still running, answering its progress query: Temporal keeps retrying what a retry can fix.
  assert.equal(code, 0, last);
  // `watch` says the same while it follows the run (stopped after 20 s: the run never ends by itself).
  const watched = await runCommand('client.ts', ['watch', 'fh-dead-store'], env, 20_000);
  assert.match(watched.stdout, new RegExp(`WARNING: (prepareRun|publishPolicy) attempt \\d+ failed .*store http://127\\.0\\.0\\.1:${dead} unreachable \\(connection refused\\)`));
});
