// Errors the activities must not drop: each is a named case or a line with the run and the
// reason. Whether a worker polls an agent's task queue (any error read as "one polls"), the heartbeats of an agent
// workflow's attempt (dropped), which runners poll (any store failure read as "some runner serves"), and the disk use
// beside each step (any failure left out without a word).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { attemptHeartbeats, noAgentWorker } from '../../activities/agent-workflows';
import { unservedNow } from '../../activities/runner-presence';
import { readDiskUse } from '../../activities/disk-report';
import { StoreHttpError, type StoreClient } from '../../store/client';
import type { AgentWorkflowConfig } from '../../config/agent-workflow';
import type { RunSettings } from '../../shared/run-types';

const agent = { type: 'helloAgent', taskQueue: 'agents', namespace: null } as unknown as AgentWorkflowConfig;

/** An error as @temporalio/client gives a gRPC status (isGrpcServiceError: details and metadata). */
function grpcError(code: number, details: string): Error {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });
}

const clientAnswering = (answer: () => Promise<{ pollers?: unknown[] }>) =>
  ({ options: { namespace: 'default' }, workflowService: { describeTaskQueue: answer } }) as unknown as Parameters<typeof noAgentWorker>[0];

test('whether a worker polls the agent task queue: only an answer says so; a missing namespace is named; other failures are unknown, with the reason', async () => {
  assert.deepEqual(await noAgentWorker(clientAnswering(async () => ({ pollers: [{}] })), agent), { waiting: null });
  const none = await noAgentWorker(clientAnswering(async () => ({ pollers: [] })), agent);
  assert.match('waiting' in none ? String(none.waiting) : '', /^no worker polls the agent's task queue "agents" \(namespace default\)/);
  const missing = await noAgentWorker(clientAnswering(async () => { throw grpcError(5, 'Namespace default is not found.'); }), agent);
  assert.match('waiting' in missing ? String(missing.waiting) : '', /namespace "default" is not on this Temporal server \(.*not found\.\): its helloAgent workflows cannot start/);
  // Before: each of these read as "a worker polls".
  const denied = await noAgentWorker(clientAnswering(async () => { throw grpcError(7, 'Request unauthorized.'); }), agent);
  assert.match('unknown' in denied ? denied.unknown : '', /^cannot ask Temporal whether a worker polls .*not allowed or not served here: .*Request unauthorized/);
  const down = await noAgentWorker(clientAnswering(async () => { throw grpcError(14, 'connection refused'); }), agent);
  assert.match('unknown' in down ? down.unknown : '', /^could not ask Temporal whether a worker polls the agent's task queue "agents" \(namespace default\): .*connection refused/);
  const aborted = new AbortController();
  aborted.abort();
  assert.deepEqual(await noAgentWorker(clientAnswering(async () => { throw new Error('aborted'); }), agent, aborted.signal), { unknown: '' }, 'cut short: nothing to say');
});

test("an agent attempt's heartbeats: a failure is said once, and its recovery; an attempt the store no longer has stops them", async () => {
  const said: string[] = [];
  const answers: (Error | null)[] = [new StoreHttpError(503, 'http://s/v1/agl/rollouts/ro-1/attempts/at-1', 'busy'), new Error('fetch failed'), null, new StoreHttpError(404, 'http://s/x', 'no such attempt')];
  let calls = 0;
  const store = {
    async updateAttempt() {
      const a = answers[calls++];
      if (a) throw a;
      return {} as never;
    },
  } as unknown as Pick<StoreClient, 'updateAttempt'>;
  const beats = attemptHeartbeats(store, { rolloutId: 'ro-1', attemptId: 'at-1' }, (m) => said.push(m));
  for (let i = 0; i < 6; i++) await beats.beat();
  assert.equal(calls, 4, 'no beat after the 404');
  assert.equal(said.length, 3, said.join('\n'));
  assert.match(said[0]!, /^a heartbeat to the store failed .*HTTP 503/);
  assert.equal(said[1], 'heartbeats reach the store again');
  assert.match(said[2]!, /^the store no longer has this attempt; heartbeats stop: store answered HTTP 404/);
});

test('which runners poll: a store that fails is said with the reason (was read as "some runner serves"); a call cut short is not', async () => {
  const failing = { async queryWorkers() { throw new Error('connect ECONNREFUSED 127.0.0.1:4747'); } } as unknown as StoreClient;
  const said: string[] = [];
  assert.equal(await unservedNow(failing, 'hello', undefined, (m) => said.push(m)), null);
  assert.deepEqual(said, ['could not ask the store which runners are polling: connect ECONNREFUSED 127.0.0.1:4747']);
  const ac = new AbortController();
  ac.abort();
  assert.equal(await unservedNow(failing, 'hello', ac.signal, (m) => said.push(m)), null);
  assert.equal(said.length, 1);
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

test("the disk use beside a step: a service that answers nonsense is left out and said once per run and reason; one past the deadline silently", async () => {
  const nonsense = await serve((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('not json'));
  const silent = await serve(() => {});
  try {
    const settings = { runName: 'disk-run', storeAddress: nonsense.url, baseUrl: nonsense.url } as unknown as RunSettings;
    const said: string[] = [];
    assert.deepEqual(await readDiskUse(settings, 3, (m) => said.push(m)), { atStep: 3 });
    assert.equal(said.length, 2, said.join('\n'));
    assert.ok(said.some((m) => m.startsWith("run disk-run: the store's disk use is left out of the step's report: ")), said.join('\n'));
    assert.ok(said.some((m) => m.startsWith("run disk-run: the trainer's disk use is left out of the step's report: ")), said.join('\n'));
    await readDiskUse(settings, 4, (m) => said.push(m));
    assert.equal(said.length, 2, 'the same reasons are not said at every step');
    const slow = { runName: 'disk-run', storeAddress: silent.url, baseUrl: silent.url } as unknown as RunSettings;
    assert.deepEqual(await readDiskUse(slow, 5, (m) => said.push(m)), { atStep: 5 });
    assert.equal(said.length, 2, 'past the deadline: left out without a word');
  } finally {
    nonsense.server.close();
    silent.server.closeAllConnections();
    silent.server.close();
  }
});
