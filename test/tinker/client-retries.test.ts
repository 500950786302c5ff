// The client's retry table and deadlines against a scripted stub server: submits retry 429/5xx and give up
// on other 4xx; retrieve_future re-polls try_again and 5xx, fails on {"error"} with its category; every
// call stops at its deadline; the session heartbeats.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RequestFailedError, ServiceClient, TinkerApiError, TinkerTimeoutError } from '../../tinker';

type Reply = { status: number; body: unknown; delayMs?: number };
const scripts = new Map<string, Reply[]>();
const calls: { path: string; body: Record<string, unknown>; headers: IncomingMessage['headers'] }[] = [];
let server: Server;
let baseUrl: string;

function script(path: string, ...replies: Reply[]): void {
  scripts.set(path, replies);
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  let text = '';
  req.on('data', (c) => (text += c));
  req.on('end', () => {
    const path = (req.url ?? '').replace('/api/v1', '');
    calls.push({ path, body: text ? JSON.parse(text) : {}, headers: req.headers });
    const queue = scripts.get(path) ?? [];
    const reply: Reply =
      queue.length > 1 ? queue.shift()! : (queue[0] ?? (path === '/create_session' ? { status: 200, body: { session_id: 's-1' } } : { status: 200, body: {} }));
    // unref: a reply the client gave up on must not keep the test process alive.
    setTimeout(() => {
      if (res.destroyed) return;
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
    }, reply.delayMs ?? 0).unref();
  });
}

before(async () => {
  server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function client(extra: Record<string, unknown> = {}): ServiceClient {
  return new ServiceClient({ baseUrl, apiKey: 'tml-test-key', heartbeatMs: 50, retryBudgetMs: 10_000, ...extra });
}

test('create_model: submit retried on 503 and 429, poll re-polls try_again and 500, result returned', async () => {
  calls.length = 0;
  script('/create_model', { status: 503, body: {} }, { status: 429, body: {} }, { status: 200, body: { request_id: 'r1' } });
  script(
    '/retrieve_future',
    { status: 200, body: { type: 'try_again', request_id: 'r1', queue_state: 'active' } },
    { status: 500, body: {} },
    { status: 200, body: { model_id: 's-1:train:0' } },
  );
  const sc = client();
  const tc = await sc.createLoraTrainingClient('m', { rank: 4 });
  assert.equal(tc.modelId, 's-1:train:0');
  const submits = calls.filter((c) => c.path === '/create_model');
  assert.equal(submits.length, 3);
  assert.equal(new Set(submits.map((c) => c.headers['x-idempotency-key'])).size, 1, 'one idempotency key across retries');
  assert.ok(calls.every((c) => c.headers['x-api-key'] === 'tml-test-key'));
  assert.equal(calls[0].path, '/client/config', 'client/config comes first');
  assert.equal(calls.filter((c) => c.path === '/retrieve_future').length, 3);
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(calls.filter((c) => c.path === '/session_heartbeat').length >= 2, 'heartbeats');
  await sc.close();
});

test('a 4xx submit fails at once with TinkerApiError', async () => {
  calls.length = 0;
  script('/create_model', { status: 400, body: { error: 'bad base model', category: 'user' } });
  const sc = client();
  await assert.rejects(sc.createLoraTrainingClient('m'), (err: unknown) => err instanceof TinkerApiError && err.status === 400 && err.isUserError);
  assert.equal(calls.filter((c) => c.path === '/create_model').length, 1);
  await sc.close();
});

test('an error result raises RequestFailedError with its category', async () => {
  script('/create_model', { status: 200, body: { request_id: 'r2' } });
  script('/retrieve_future', { status: 200, body: { error: 'no capacity', category: 'server' } });
  const sc = client();
  await assert.rejects(sc.createLoraTrainingClient('m'), (err: unknown) => err instanceof RequestFailedError && err.category === 'server' && !err.isUserError);
  await sc.close();
});

test('a future that never completes stops at the call deadline', async () => {
  script('/create_model', { status: 200, body: { request_id: 'r3' } });
  script('/retrieve_future', { status: 200, body: { type: 'try_again', request_id: 'r3', queue_state: 'active' }, delayMs: 100 });
  const sc = client();
  const started = Date.now();
  await assert.rejects(sc.createLoraTrainingClient('m', {}, { timeoutMs: 600 }), TinkerTimeoutError);
  assert.ok(Date.now() - started < 3000);
  await sc.close();
});

test('a hanging direct call stops at its HTTP deadline and is retried within the budget', async () => {
  calls.length = 0;
  script('/get_server_capabilities', { status: 200, body: {}, delayMs: 5000 });
  const sc = client({ httpTimeoutMs: 200 });
  const started = Date.now();
  await assert.rejects(sc.getServerCapabilities({ timeoutMs: 1500 }), TinkerTimeoutError);
  assert.ok(Date.now() - started < 4000);
  assert.ok(calls.filter((c) => c.path === '/get_server_capabilities').length >= 2, 'retried after the timeout');
  await sc.close();
});
