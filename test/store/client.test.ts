// StoreClient transport: retries transient failures (5xx, connection refused) only for calls safe to repeat,
// never 4xx; dequeue is not repeated once it may have reached the server; every call has a deadline.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../../common/ports';
import { StoreClient, StoreHttpError } from '../../store/client';

describe('StoreClient transport', () => {
  let server: Server;
  let url: string;
  const hits = new Map<string, number>();
  let script: (path: string, n: number) => { status: number; body: string } | 'hang';
  before(async () => {
    server = createServer((req, res) => {
      const path = req.url ?? '';
      const n = (hits.get(path) ?? 0) + 1;
      hits.set(path, n);
      req.resume();
      const answer = script(path, n);
      if (answer === 'hang') return; // never answers
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => { server.closeAllConnections(); server.close(); });

  const client = () => new StoreClient(url, { retryDelaysMs: [10, 10, 10], token: '' });

  test('5xx on a read is retried until it succeeds', async () => {
    hits.clear();
    script = (_p, n) => (n < 3 ? { status: 503, body: '{"detail":"busy"}' } : { status: 200, body: 'null' });
    assert.equal(await client().getLatestResources(), null);
    assert.equal(hits.get('/v1/agl/resources/latest'), 3);
  });

  test('4xx is not retried', async () => {
    hits.clear();
    script = () => ({ status: 422, body: '{"detail":[]}' });
    await assert.rejects(client().updateAttempt('ro-1', 'latest', { status: 'succeeded' }), (e) => e instanceof StoreHttpError && e.status === 422);
    assert.equal(hits.get('/v1/agl/rollouts/ro-1/attempts/latest'), 1);
  });

  test('dequeue is not repeated after a 5xx (it may have dequeued)', async () => {
    hits.clear();
    script = () => ({ status: 500, body: '{"detail":"x"}' });
    await assert.rejects(client().dequeueRollout('w'), /HTTP 500/);
    assert.equal(hits.get('/v1/agl/queues/rollouts/dequeue'), 1);
  });

  test('enqueue sends an idempotency key and retries with the same key', async () => {
    hits.clear();
    const keys: string[] = [];
    const spy = (req: { headers: Record<string, string> }) => { keys.push(req.headers['idempotency-key'] ?? ''); };
    server.prependListener('request', spy as never);
    script = (_p, n) => (n < 2 ? { status: 502, body: '' } : { status: 201, body: '[{"rollout_id":"ro-1"}]' });
    const r = await client().enqueueRollout('x');
    server.removeListener('request', spy as never);
    assert.equal(r.rollout_id, 'ro-1');
    assert.equal(keys.length, 2);
    assert.ok(keys[0]);
    assert.equal(keys[0], keys[1]);
  });

  test('a call past its deadline fails instead of hanging', async () => {
    script = () => 'hang';
    await assert.rejects(client().getWorkerById('w', { timeoutMs: 200 }), /timeout|aborted/i);
  });

  test('connection refused is retried, then reported', async () => {
    const dead = new StoreClient(`http://127.0.0.1:${await freePort()}`, { retryDelaysMs: [10, 10], token: '' });
    await assert.rejects(dead.getLatestResources(), /ECONNREFUSED/);
    assert.equal(await dead.health(), false);
  });
});
