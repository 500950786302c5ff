// Runners given several proxies: calls spread round robin, a proxy an attempt failed on is skipped while it cools
// off, one that does not answer its health check is passed over, and the rollout's resources get the chosen
// proxy's origin with their own path kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProxyChoice, parseProxyUrls, proxyAnswers, watchProxy } from '../../agents/proxy-choice';
import { pickLlm } from '../../store/llm-resource';

test('round robin over the proxies; a failed one is skipped until it has cooled off', () => {
  let now = 0;
  const c = new ProxyChoice(['http://a', 'http://b', 'http://c'], 30_000, () => now);
  assert.deepEqual([c.pick(), c.pick(), c.pick(), c.pick()], ['http://a', 'http://b', 'http://c', 'http://a']);
  c.failed('http://b');
  assert.deepEqual([c.pick(), c.pick(), c.pick()], ['http://c', 'http://a', 'http://c']);
  now = 30_000;
  assert.deepEqual([c.pick(), c.pick()], ['http://a', 'http://b']);
  // All failed: the one that failed longest ago.
  c.failed('http://c');
  now = 31_000;
  c.failed('http://a');
  c.failed('http://b');
  assert.equal(c.pick(), 'http://c');
});

test('pickAnswering passes over a proxy that does not answer', async () => {
  const c = new ProxyChoice(['http://dead', 'http://live']);
  const asked: string[] = [];
  const url = await c.pickAnswering(async (u) => (asked.push(u), u === 'http://live'));
  assert.equal(url, 'http://live');
  assert.deepEqual(asked, ['http://dead', 'http://live']);
  // The dead one cools off: the next picks go to the live one without asking the dead one again.
  assert.equal(await c.pickAnswering(async (u) => (asked.push(u), u === 'http://live')), 'http://live');
  assert.equal(asked.filter((u) => u === 'http://dead').length, 1);
});

test('a proxy that stops answering its health check is reported once', async () => {
  let up = true;
  const server = http.createServer((req, res) => {
    if (!up) return; // hangs, as a host that is cut off does
    res.writeHead(200).end('{"status":"ok"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    assert.equal(await proxyAnswers(url, 1000), true);
    const lost: string[] = [];
    const stop = watchProxy(url, (why) => lost.push(why), 100, 2);
    await new Promise((r) => setTimeout(r, 350));
    assert.deepEqual(lost, [], 'no report while it answers');
    up = false;
    await new Promise((r) => setTimeout(r, 800));
    stop();
    assert.equal(lost.length, 1);
    assert.match(lost[0]!, /missed 2 health checks/);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('the chosen proxy replaces the origin of a proxy_llm endpoint, keeping its path', () => {
  const resources = { main_llm: { resource_type: 'proxy_llm', endpoint: 'http://10.0.0.2:12306/v1', model: 'm', api_key: null, sampling_parameters: {} } };
  assert.equal(pickLlm(resources as never, 'ro-1', 'at-1', 'http://10.0.0.3:12306')!.endpoint, 'http://10.0.0.3:12306/rollout/ro-1/attempt/at-1/v1');
  assert.equal(pickLlm(resources as never, 'ro-1', 'at-1')!.endpoint, 'http://10.0.0.2:12306/rollout/ro-1/attempt/at-1/v1');
});

test('--proxy: a bad URL is named', () => {
  assert.deepEqual(parseProxyUrls('http://a:1/, http://b:2'), ['http://a:1', 'http://b:2']);
  assert.throws(() => parseProxyUrls('http://a:1,b:2'), /proxy URL "b:2" is not an http\(s\) URL/);
  assert.throws(() => parseProxyUrls(' , '), /no proxy URL given/);
});
