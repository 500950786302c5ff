// A rollout-scoped call costs the same however many calls its attempt made before it, and one store request:
// the span write. The attempt's first call reads its call keys once (none yet) and the
// rollout; after that the seed and the policy come from memory and the store numbers the span as it stores it.
// Counted here in requests and answer bytes between the proxy and a real store, over 60 calls of one attempt.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { StoreClient } from '../../store/client';
import { StoreSpanSink } from '../../proxy/span-sink';
import { startHarness, post, policy, type Harness } from './helpers';
import { startTestStore, type TestStore } from '../store/helpers';

interface Tally { requests: Map<string, number>; answerBytes: number }
const tally: Tally = { requests: new Map(), answerBytes: 0 };

/** Forwards to the store, counting requests by path and the bytes of the store's answers. */
function countingForwarder(target: string): Promise<http.Server> {
  const { hostname, port } = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').replace(/\/(ro|at)-[0-9a-f]+/g, '/$1-*');
    tally.requests.set(path, (tally.requests.get(path) ?? 0) + 1);
    const upstream = http.request({ hostname, port, path: req.url, method: req.method, headers: req.headers, agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.on('data', (c: Buffer) => { tally.answerBytes += c.length; });
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let store: TestStore;
let forwarder: http.Server;
let h: Harness;
before(async () => {
  store = await startTestStore();
  forwarder = await countingForwarder(store.server.url);
  const url = `http://127.0.0.1:${(forwarder.address() as AddressInfo).port}`;
  h = await startHarness({ sink: new StoreSpanSink(url), initial: policy(), script: (_p, params) => `answer with seed ${params.seed}` });
});
after(async () => {
  await h.close();
  forwarder.closeAllConnections();
  forwarder.close();
  await store.close();
});

const turn = (i: number) => ({ messages: [{ role: 'user', content: `turn ${String(i).padStart(4, '0')}: say hello` }] });

async function measure(calls: () => Promise<void>): Promise<{ requests: Record<string, number>; bytes: number }> {
  tally.requests.clear();
  tally.answerBytes = 0;
  await calls();
  return { requests: Object.fromEntries(tally.requests), bytes: tally.answerBytes };
}

test('calls 51-60 of an attempt ask the store what calls 1-10 did, and read no earlier span', async () => {
  const client = new StoreClient(store.server.url, { token: '' });
  const r = await client.startRollout({ task: 'long' }, { metadata: { sampling_seed: 5 } });
  const url = `${h.proxy.url}/rollout/${r.rollout_id}/attempt/${r.attempt.attempt_id}/v1/chat/completions`;
  const ten = (from: number) => measure(async () => {
    for (let i = from; i < from + 10; i++) assert.equal((await post(url, turn(i))).status, 200);
  });
  const first = await ten(0);
  for (let i = 10; i < 50; i++) assert.equal((await post(url, turn(i))).status, 200);
  const last = await ten(50);

  assert.deepEqual(first.requests, { '/v1/agl/rollouts/ro-*': 1, '/v1/agl/spans/search': 1, '/v1/agl/spans': 10 }, `calls 1-10: the rollout and the attempt's call keys once, then one span each: ${JSON.stringify(first.requests)}`);
  assert.deepEqual(last.requests, { '/v1/agl/spans': 10 }, `per call: the span alone: ${JSON.stringify(last.requests)}`);
  // Answer bytes differ only by the digits of ids and counters, never by the attempt's length.
  assert.ok(last.bytes <= first.bytes * 1.05 + 200, `store answered ${first.bytes} bytes for calls 1-10, ${last.bytes} for calls 51-60`);

  // A client's retry of the last call reads one span, the recorded one, and gets its answer back.
  const again = await post(url, turn(59));
  const retried = await measure(async () => {
    const res = await post(url, turn(59), { 'x-stainless-retry-count': '1' });
    assert.equal(res.status, 200);
    assert.equal(res.json.choices[0].message.content, again.json.choices[0].message.content);
  });
  assert.deepEqual(retried.requests, { '/v1/agl/spans/calls': 1 }, 'a replayed answer takes no sequence id and writes no span');
});
