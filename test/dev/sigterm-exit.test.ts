// Every service exits within 2 s of SIGTERM: a service manager (systemd, Kubernetes, npm start's
// supervisor) waits about that long, then kills. Each service is started as `npm start` starts it (dev/stack.ts: the
// same main file and flags), given work that is in flight when the signal comes, and timed from the signal to the
// process's exit. The work in flight:
//   store    a long-poll (waits/rollouts on a rollout that never finishes) and a request whose body never ends;
//   trainer  a retrieve_future long-poll on a future that cannot settle yet (an optim_step past a seq_id gap);
//   proxy    a chat completion held open: its trainer accepts connections and never answers (the proxy once waited
//            on its Tinker session for minutes);
//   worker   an activity of a training run blocked on a store that accepts connections and never answers, on a
//            Temporal dev server;
//   runners  an agent's LLM call held open by a proxy that never answers, against a real store.
// test/dev/shutdown.test.ts checks the idle store, trainer and proxy exit 0 and stop listening.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { startProcess, type ManagedProcess } from '../../common/processes';
import { freePort } from '../../common/ports';
import { startDevServer, type TemporalServer } from '../../dev/temporal-server';
import { StoreClient } from '../../store/client';
import { startStoreServer, type StoreServer } from '../../store/server';
import { ServiceClient } from '../../tinker';
import { workflowBundle } from '../helpers/temporal';

const ROOT = path.resolve(__dirname, '..', '..');
const LIMIT_MS = 2_000;
const scratch = mkdtempSync(path.join(process.env.AGL_TEST_SCRATCH ?? tmpdir(), 'agl-sigterm-'));
const timings: string[] = [];
const procs: ManagedProcess[] = [];
const closers: (() => Promise<unknown> | void)[] = [];

after(async () => {
  for (const p of procs) p.kill9();
  for (const close of closers.reverse()) await close();
  process.stderr.write(`SIGTERM to exit: ${timings.join(', ')}\n`);
});

/** A server that accepts connections and reads what comes, and never answers: a peer that hangs. */
async function blackHole(): Promise<{ url: string; port: number; received: () => string }> {
  const sockets = new Set<net.Socket>();
  let got = '';
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('data', (d) => (got += d.toString('latin1')));
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    for (const s of sockets) s.destroy();
    return new Promise((resolve) => server.close(resolve));
  });
  const port = (server.address() as net.AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, port, received: () => got };
}

async function start(name: string, file: string, args: string[], readyLine: RegExp, env: NodeJS.ProcessEnv = process.env): Promise<ManagedProcess> {
  const p = await startProcess({ name, command: process.execPath, args: ['--import', 'tsx', path.join(ROOT, file), ...args], cwd: ROOT, env, readyLine, readyTimeoutMs: 180_000 });
  procs.push(p);
  return p;
}

/** Sends SIGTERM and measures the time to the process's exit; fails past LIMIT_MS, or when it does not exit 0. */
async function sigtermExit(name: string, p: ManagedProcess): Promise<number> {
  const exited = p.exited.then((code) => ({ code, at: performance.now() }));
  const sent = performance.now();
  process.kill(p.pid, 'SIGTERM');
  const outcome = await Promise.race([exited, new Promise<'still running'>((r) => setTimeout(() => r('still running'), 30_000).unref())]);
  p.kill9(); // a no-op once it has exited
  assert.notEqual(outcome, 'still running', `${name} still ran 30 s after SIGTERM; output:\n${p.output().slice(-3000)}`);
  const { code, at } = outcome as { code: number | null; at: number };
  const ms = Math.round(at - sent);
  timings.push(`${name} ${ms} ms`);
  assert.equal(code, 0, `${name} exit code; output:\n${p.output().slice(-3000)}`);
  assert.ok(ms < LIMIT_MS, `${name} exited ${ms} ms after SIGTERM (limit ${LIMIT_MS} ms); output:\n${p.output().slice(-3000)}`);
  return ms;
}

/** Resolves once `check` holds, polling; fails after `ms`. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An HTTP request whose headers promise a body that never fully comes: the server holds it as in flight. */
function unfinishedRequest(port: number, requestPath: string): net.Socket {
  const s = net.connect(port, '127.0.0.1');
  s.on('error', () => undefined);
  s.write(`POST ${requestPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"rollout`);
  closers.push(() => void s.destroy());
  return s;
}

test('store: exits within 2 s of SIGTERM with a long-poll and an unfinished request in flight', { timeout: 120_000 }, async () => {
  const p = await start('store', 'gateway/main.ts', ['--port', '0', '--data', path.join(scratch, 'store')], /store listening on (http:\/\/\S+)/);
  const url = p.match![1]!;
  const client = new StoreClient(url, { retryDelaysMs: [] });
  const rollout = await client.enqueueRollout({ task: 'never finishes' });
  const waiting = client.waitForRollouts([rollout.rollout_id], 30, { timeoutMs: 60_000 }).catch((e: unknown) => e);
  unfinishedRequest(Number(new URL(url).port), '/v1/agl/queues/rollouts/enqueue');
  await new Promise((r) => setTimeout(r, 300)); // both reached the store
  await sigtermExit('store', p);
  await waiting;
});

test('trainer: exits within 2 s of SIGTERM with a retrieve_future long-poll in flight', { timeout: 180_000 }, async () => {
  const p = await start('trainer', 'trainer/main.ts', ['--port', '0', '--data', path.join(scratch, 'trainer')], /trainer listening on (http:\/\/\S+)/);
  const url = p.match![1]!;
  const tinker = new ServiceClient({ baseUrl: url, apiKey: 'tml-local', futureTimeoutMs: 120_000 });
  const tc = await tinker.createLoraTrainingClient('local/tiny-test', { seed: 1 });
  // seq_id 5 while the model waits for 1: queued behind the gap, its future stays pending.
  const post = (route: string, body: unknown, signal?: AbortSignal) =>
    fetch(`${url}/api/v1/${route}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'tml-local' }, body: JSON.stringify(body), signal });
  const queued = await post('optim_step', { model_id: tc.modelId, seq_id: 5, adam_params: { learning_rate: 0.01 }, type: 'optim_step' });
  assert.equal(queued.status, 200, await queued.clone().text());
  const { request_id } = (await queued.json()) as { request_id: string };
  const poll = post('retrieve_future', { request_id }).then((r) => r.status, (e: unknown) => e);
  unfinishedRequest(Number(new URL(url).port), '/api/v1/forward_backward');
  const early = await Promise.race([poll, new Promise((r) => setTimeout(() => r('pending'), 500))]);
  assert.equal(early, 'pending', 'the long-poll is held by the trainer');
  await sigtermExit('trainer', p);
  await poll;
});

test('proxy: exits within 2 s of SIGTERM with a chat completion held open (its trainer never answers)', { timeout: 120_000 }, async () => {
  const trainer = await blackHole();
  const p = await start('proxy', 'proxy/main.ts', [
    '--port', '0', '--trainer', trainer.url, '--model', 'local/tiny-test', '--renderer', 'role_colon', '--data', path.join(scratch, 'proxy'),
  ], /proxy listening on (http:\/\/\S+)/, { ...process.env, TINKER_API_KEY: 'tml-local' });
  const url = p.match![1]!;
  const call = fetch(`${url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'local/tiny-test', messages: [{ role: 'user', content: 'Say you are 3' }] }),
  }).then((r) => r.status, (e: unknown) => e);
  await until('the proxy to ask its trainer', () => trainer.received().includes('POST '));
  const early = await Promise.race([call, new Promise((r) => setTimeout(() => r('pending'), 500))]);
  assert.equal(early, 'pending', 'the call is held open');
  await sigtermExit('proxy', p);
  await call;
});

let temporal: TemporalServer | undefined;
before(async () => {
  temporal = await startDevServer({ port: await freePort(), uiPort: 0 });
  closers.push(() => temporal?.stop());
});

test('worker: exits within 2 s of SIGTERM with an activity in flight (its store never answers)', { timeout: 240_000 }, async () => {
  const store = await blackHole();
  const taskQueue = `sigterm-${randomUUID()}`;
  // A prebuilt workflow bundle (the worker bundles at every start otherwise: about 15 s on 2 cores).
  const bundle = path.join(scratch, 'workflow-bundle.js');
  writeFileSync(bundle, (await workflowBundle()).code);
  const p = await start('worker', 'worker.ts', [], /worker polling task queue/, {
    ...process.env, TEMPORAL_ADDRESS: temporal!.address, TEMPORAL_NAMESPACE: temporal!.namespace, TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: '', TEMPORAL_PROFILE: '',
    AGL_TASK_QUEUE: taskQueue, AGL_WORKFLOW_BUNDLE: bundle,
  });
  const connection = await Connection.connect({ address: temporal!.address });
  closers.push(() => connection.close());
  const client = new Client({ connection, namespace: temporal!.namespace });
  const runName = `sigterm-${randomUUID().slice(0, 8)}`;
  await client.workflow.start('trainingRun', {
    taskQueue, workflowId: runName,
    args: [{
      runName, learningRate: 3e-3, modelName: 'local/tiny-test', rendererName: 'role_colon', baseUrl: store.url, storeAddress: store.url,
      llmProxyPort: await freePort(), logPath: path.join(scratch, 'runs', runName), maxTokens: 8,
      datasetBuilder: { batchSize: 2, groupSize: 2, trainDataset: ['1', '2'], valDataset: ['3'] },
    }],
  });
  // prepareRun keeps the run's files in the store: its request is now held by a store that never answers.
  await until('the worker to run an activity that asks the store', () => store.received().includes('POST '), 60_000);
  await sigtermExit('worker', p);
});

/** A store of the test's own with one rollout whose LLM is a proxy that never answers, and runners polling it. */
async function runnersWithCallInFlight(name: string): Promise<{ p: ManagedProcess; store: StoreServer }> {
  const store = await startStoreServer({ dbPath: path.join(scratch, `${name}-store.sqlite`), port: 0, log: () => {} });
  closers.push(() => store.close());
  const proxy = await blackHole();
  const client = new StoreClient(store.url);
  const resources = await client.addResources({ main_llm: { resource_type: 'proxy_llm', endpoint: `${proxy.url}/v1`, model: 'local/tiny-test', api_key: null, sampling_parameters: {} } });
  await client.enqueueRollout('3', { resourcesId: resources.resources_id });
  const p = await start(name, 'agents/examples/main.ts', ['--agent', 'hello', '--runners', '2', '--store', store.url], /runners polling/);
  await until('an agent to call its LLM', () => proxy.received().includes('POST '), 60_000);
  return { p, store };
}

test('runners: exit within 2 s of SIGTERM with an agent LLM call in flight (its proxy never answers)', { timeout: 120_000 }, async () => {
  const { p } = await runnersWithCallInFlight('runners');
  await sigtermExit('runners', p);
});

test('runners: exit within 2 s of SIGTERM when the store is gone too (the attempt cannot be reported)', { timeout: 120_000 }, async () => {
  const { p, store } = await runnersWithCallInFlight('runners-store-gone');
  await store.close(); // a store restarting: the report of the aborted attempt is retried for a minute
  await sigtermExit('runners (store gone)', p);
});
