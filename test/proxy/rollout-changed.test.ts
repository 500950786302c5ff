// What a rollout's attempts share (its seed, the resources naming its policy) is read once and held by the proxy
// under the rollout's revision; a span is stored only while the rollout is still at it. So a change of the
// rollout (its status, its resources: requeued under a newer policy, say) is seen by the next call, and even by
// a call already sampling when it happened: the store refuses that call's span, the proxy plans it again from the
// rollout as it is now and samples it again, and no span from the stale read is ever stored.
// Real store, real HTTP, the real publishPolicy activity; samplers answer with the name of their target.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StoreClient } from '../../store/client';
import { startHarness, TargetSamplerFactory } from './helpers';
import { ask, enqueue, publish, runSettings, samplerPathOf, sleep, spansOf } from './rollout-helpers';

async function harness() {
  const factory = new TargetSamplerFactory();
  const logs: string[] = [];
  const h = await startHarness({ withStore: true, factory, drainTimeoutMs: 10_000, log: (line: string) => logs.push(line) });
  const store = new StoreClient(h.store!.url, { retryDelaysMs: [50], token: '' });
  return { h, factory, store, logs };
}

const refusals = (logs: string[]) => logs.filter((l) => /changed since the call was planned/.test(l)).length;

test('a rollout requeued under newer resources: the call on its new attempt samples from their policy, and so does its old attempt', async () => {
  const { h, store, logs } = await harness();
  try {
    const run = runSettings(h.proxy.url, h.store!.url, 'gamma', true);
    const first = await enqueue(store, await publish(run, 1));
    for (let turn = 0; turn < 2; turn++) {
      assert.deepEqual(await ask(h.proxy.url, first, `turn ${turn}`), { from: samplerPathOf('gamma', 1), policy: 'gamma/1/train/1', sequenceId: turn + 1 });
    }
    assert.equal(refusals(logs), 0, 'calls of an unchanged rollout are never refused (the first one\'s heartbeat included)');

    // The algorithm requeues the rollout under the resources of a newer policy; a runner takes the new attempt.
    const newer = await publish(run, 2);
    await store.updateRollout(first.rid, { resources_id: newer, status: 'requeuing' });
    const taken = await store.dequeueRollout('runner-2');
    assert.equal(taken?.rollout_id, first.rid);
    const second = { rid: first.rid, aid: taken!.attempt.attempt_id };
    assert.deepEqual(await ask(h.proxy.url, second, 'turn 0'), { from: samplerPathOf('gamma', 2), policy: 'gamma/2/train/2', sequenceId: 3 });
    assert.equal(refusals(logs), 1, 'the one call after the change was planned twice');
    // The old attempt's runner still calling: the rollout's resources are the newer ones for it too.
    assert.equal((await ask(h.proxy.url, first, 'turn 2')).policy, 'gamma/2/train/2');
    assert.deepEqual((await spansOf(store, second)).map((s) => s.attributes['agl.policy.switch_id']), ['gamma/2/train/2']);
    assert.deepEqual((await spansOf(store, first)).map((s) => s.attributes['agl.policy.switch_id']), ['gamma/1/train/1', 'gamma/1/train/1', 'gamma/2/train/2']);
    assert.equal(refusals(logs), 1, 'read again once, then held again');
  } finally {
    await h.close();
  }
});

test('a rollout changed while its call samples: the call is sampled again from the rollout as it is now, and only that span is stored', async () => {
  const { h, factory, store, logs } = await harness();
  try {
    const run = runSettings(h.proxy.url, h.store!.url, 'delta', true);
    const r = await enqueue(store, await publish(run, 1));
    assert.equal((await ask(h.proxy.url, r, 'turn 0')).policy, 'delta/1/train/1');
    const newer = await publish(run, 2);
    const open = factory.gate(samplerPathOf('delta', 1));
    const pending = ask(h.proxy.url, r, 'turn 1');
    const deadline = Date.now() + 5000;
    while (factory.calls.filter((c) => c === samplerPathOf('delta', 1)).length < 2) {
      if (Date.now() > deadline) throw new Error('the call did not reach the sampler');
      await sleep(10);
    }
    await store.updateRollout(r.rid, { resources_id: newer });
    open();
    assert.deepEqual(await pending, { from: samplerPathOf('delta', 2), policy: 'delta/2/train/2', sequenceId: 2 });
    assert.equal(refusals(logs), 1);
    const spans = await spansOf(store, r);
    assert.deepEqual(spans.map((s) => [s.sequence_id, s.attributes['agl.policy.switch_id']]), [[1, 'delta/1/train/1'], [2, 'delta/2/train/2']],
      'the sample from the stale read left no span');
  } finally {
    await h.close();
  }
});
