// The registry's truth is in the store: a restarted proxy (or any other proxy) serves each rollout the policy it
// was enqueued under, and two runs publishing to one proxy each sample only from their own policies
// (never from whichever run switched last).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startProxy } from '../../proxy/server';
import { StoreSpanSink } from '../../proxy/span-sink';
import { StoreClient } from '../../store/client';
import { startStoreServer } from '../../store/server';
import { policy, post, startHarness, TargetSamplerFactory } from './helpers';
import { ask, enqueue, MSG, publish, runSettings, samplerPathOf, spansOf } from './rollout-helpers';
import type { Bound } from './rollout-helpers';

test('a proxy restarted mid-run serves a rollout the policy it was enqueued under, read from the store', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-proxy-restart-'));
  const storeServer = await startStoreServer({ dbPath: path.join(dir, 'store.sqlite'), port: 0, log: () => {} });
  const store = new StoreClient(storeServer.url, { retryDelaysMs: [50], token: '' });
  const start = (factory: TargetSamplerFactory) =>
    startProxy({ port: 0, log: () => {}, factory, sink: new StoreSpanSink(storeServer.url), initialPolicy: policy() });
  try {
    const first = await start(new TargetSamplerFactory());
    const run = runSettings(first.url, storeServer.url, 'epsilon', true);
    const r = await enqueue(store, await publish(run, 4));
    assert.deepEqual(await ask(first.url, r, 'turn 1'), { from: samplerPathOf('epsilon', 4), policy: 'epsilon/4/train/4', sequenceId: 1 });
    await first.close();

    // A fresh process: its current policy is the base model (no saved policy), its memory empty.
    const factory = new TargetSamplerFactory();
    const second = await start(factory);
    try {
      assert.deepEqual(await ask(second.url, r, 'turn 2'), { from: samplerPathOf('epsilon', 4), policy: 'epsilon/4/train/4', sequenceId: 2 });
      assert.deepEqual(factory.created.map((t) => t.samplerPath ?? t.baseModel), ['local/tiny-hello', samplerPathOf('epsilon', 4)]);
      assert.equal((await post(`${second.url}/v1/chat/completions`, MSG())).headers.get('x-agl-policy'), 'p0');
      const spans = await spansOf(store, r);
      assert.deepEqual(spans.map((s) => s.attributes['agl.policy.sampler_path']), [samplerPathOf('epsilon', 4), samplerPathOf('epsilon', 4)]);
    } finally {
      await second.close();
    }
  } finally {
    await storeServer.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('two runs publishing to one proxy, calls interleaved: each rollout only ever samples from its own run and step', async () => {
  const factory = new TargetSamplerFactory();
  const h = await startHarness({ withStore: true, factory });
  const store = new StoreClient(h.store!.url, { retryDelaysMs: [50], token: '' });
  try {
    // One synchronous run and one async run, as `npm start` and `npm run client -- start` would share a stack.
    const runs = [runSettings(h.proxy.url, h.store!.url, 'alpha'), runSettings(h.proxy.url, h.store!.url, 'beta', true)];
    const live: { r: Bound; run: string; step: number }[] = [];
    for (let step = 1; step <= 3; step++) {
      for (const s of runs) {
        const resourcesId = await publish(s, step);
        if (step === 1) {
          // What publishPolicy writes: the proxy LLM for Python and TypeScript runners, plus the policy itself.
          const res = await store.getResourcesById(resourcesId);
          assert.deepEqual(res?.resources.main_llm, {
            resource_type: 'proxy_llm', endpoint: h.proxy.url, model: 'local/tiny-hello', api_key: null, sampling_parameters: {},
            agl_policy: {
              switchId: `${s.runName}/1/train/1`, policyStep: 1, modelName: 'local/tiny-hello', samplerPath: samplerPathOf(s.runName, 1), baseModel: 'local/tiny-hello',
              renderer: 'role_colon', retryAttempts: 0, sampling: { temperature: 1, topK: -1, topP: 1, maxTokens: 64 },
            },
          });
        }
        for (let k = 0; k < 2; k++) live.push({ r: await enqueue(store, resourcesId, `${s.runName}-${step}-${k}`), run: s.runName, step });
      }
      // Every rollout still in flight, of both runs and all steps so far, takes a turn at once.
      const answers = await Promise.all(live.map((x) => ask(h.proxy.url, x.r, `step ${step}`)));
      answers.forEach((a, i) => {
        const { run, step: own } = live[i];
        assert.equal(a.from, samplerPathOf(run, own), `a ${run} rollout of step ${own} was answered by ${a.from}`);
        assert.equal(a.policy, `${run}/${own}/train/${own}`);
      });
    }
    for (const x of live) {
      for (const s of await spansOf(store, x.r)) assert.equal(s.attributes['agl.policy.sampler_path'], samplerPathOf(x.run, x.step));
    }
    const used = new Set(factory.calls);
    assert.deepEqual([...used].sort(), [1, 2, 3].flatMap((k) => [samplerPathOf('alpha', k), samplerPathOf('beta', k)]).sort());
  } finally {
    await h.close();
  }
});
