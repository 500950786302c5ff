// A span write whose answer is lost (the store was killed after committing it, or the connection dropped) is
// sent again, the same span, until the call's deadline. The store keeps one copy, and the agent gets its answer
// instead of a 503 that would make it repeat a turn the store already holds (a second, different sample in the
// attempt: the chaos suite caught a run that differed this way).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { StoreClient } from '../../store/client';
import { StoreSpanSink } from '../../proxy/span-sink';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startStoreServer, type StoreServer } from '../../store/server';
import { startHarness, post } from './helpers';
import type { Harness } from './helpers';

let h: Harness;
let storeServer: StoreServer;
let lossy: http.Server;
let dropped = 0;
let refusedWhileDown = 0;

before(async () => {
  storeServer = await startStoreServer({ dbPath: path.join(mkdtempSync(path.join(tmpdir(), 'agl-span-write-')), 'store.sqlite'), port: 0, log: () => {} });
  const storeUrl = storeServer.url;
  // In front of the real store: the first span write is forwarded and committed, then its connection is cut
  // before the answer; the next two writes find the store "down" (502); after that everything passes.
  let spanWrites = 0;
  lossy = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const isSpanWrite = req.method === 'POST' && req.url === '/v1/agl/spans';
    const n = isSpanWrite ? ++spanWrites : 0;
    if (n === 2 || n === 3) {
      refusedWhileDown++;
      res.writeHead(502).end();
      return;
    }
    const upstream = await fetch(storeUrl + req.url, {
      method: req.method,
      headers: { 'content-type': 'application/json' },
      body: req.method === 'GET' ? undefined : Buffer.concat(chunks),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await upstream.text();
    if (n === 1) {
      dropped++;
      req.socket.destroy();
      return;
    }
    res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((r) => lossy.listen(0, '127.0.0.1', r));
  h = await startHarness({ sink: new StoreSpanSink(`http://127.0.0.1:${(lossy.address() as AddressInfo).port}`) });
});

after(async () => {
  lossy.closeAllConnections();
  await new Promise((r) => lossy.close(r));
  await h.close();
  await storeServer.close();
});

test('a committed span whose answer was lost is not written twice, and the call is answered', async () => {
  const store = new StoreClient(storeServer.url, { retryDelaysMs: [50], token: '' });
  const rollout = await store.startRollout({ task: 'x' });
  const url = `${h.proxy.url}/rollout/${rollout.rollout_id}/attempt/${rollout.attempt.attempt_id}/v1/chat/completions`;
  const r = await post(url, { messages: [{ role: 'user', content: 'Hi' }] });
  assert.equal(r.status, 200, r.text);
  assert.equal(dropped, 1, 'the first answer was lost');
  assert.equal(refusedWhileDown, 2, 'two writes found the store down');
  const spans = (await store.querySpans(rollout.rollout_id)).items.filter((s) => s.name === 'litellm_request');
  assert.equal(spans.length, 1, 'one span for one answered call');
  assert.equal(spans[0]!.attributes['gen_ai.response.id'], r.json.id);
});
