// publishPolicy with the run's proxy list (`proxyUrls`): the policy is posted to every proxy; one that does not
// answer is skipped, since rollouts read their policy from the store; a proxy that refuses the policy, or no proxy
// taking it, fails the step. Checked on the proxies themselves (GET /health names the current policy) and by a
// rollout-scoped call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startProxy } from '../../proxy/server';
import { StoreSpanSink } from '../../proxy/span-sink';
import { StoreClient } from '../../store/client';
import { fetchJson } from '../../common/http';
import { policy, startHarness, TargetSamplerFactory } from './helpers';
import { ask, enqueue, publish, runSettings, samplerPathOf } from './rollout-helpers';
import type { RunSettings } from '../../shared/run-types';

/** A URL where nothing listens (a port just freed). */
async function deadUrl(): Promise<string> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return `http://127.0.0.1:${port}`;
}

const currentPolicy = async (url: string) => (await fetchJson<{ policy: string | null }>(`${url}/health`)).policy;

test('a policy is posted to every proxy the run lists; a dead one is skipped; a refusing one, or none answering, fails the step', async () => {
  const h = await startHarness({ withStore: true, factory: new TargetSamplerFactory() });
  const storeUrl = h.store!.url;
  const start = (adminToken?: string) =>
    startProxy({ port: 0, log: () => {}, factory: new TargetSamplerFactory(), sink: new StoreSpanSink(storeUrl), initialPolicy: policy(), ...(adminToken ? { adminToken } : {}) });
  const second = await start();
  const locked = await start('not-the-workers-token');
  const dead = await deadUrl();
  const withList = (name: string, proxyUrls: string[] | null): RunSettings => ({ ...runSettings(h.proxy.url, storeUrl, name), proxyUrls });
  try {
    // Without a list: only the run's one proxy, as before.
    await publish(withList('solo', null), 1);
    assert.equal(await currentPolicy(h.proxy.url), 'solo/1/train/1');
    assert.equal(await currentPolicy(second.url), 'p0', 'a proxy the run does not name is left alone');

    // Two live proxies and a dead one: both live ones switch, the step succeeds.
    const many = withList('many', [h.proxy.url, dead, second.url]);
    const resourcesId = await publish(many, 3);
    assert.equal(await currentPolicy(h.proxy.url), 'many/3/train/3');
    assert.equal(await currentPolicy(second.url), 'many/3/train/3');
    const store = new StoreClient(storeUrl, { retryDelaysMs: [50], token: '' });
    const r = await enqueue(store, resourcesId);
    assert.equal((await ask(second.url, r)).from, samplerPathOf('many', 3), 'a rollout of that step samples from its policy');

    // No proxy answers: nothing took the policy, the step fails (and Temporal retries it).
    await assert.rejects(publish(withList('none', [dead, await deadUrl()]), 4), /ECONNREFUSED|connect|refused/i);
    // A proxy that answers and refuses the policy (here: its admin token) fails the step even though another took it.
    await assert.rejects(publish(withList('locked', [second.url, locked.url]), 5), /HTTP 401/);
  } finally {
    await Promise.all([second.close(), locked.close()]);
    await h.close();
  }
});
