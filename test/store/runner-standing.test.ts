// A rollout's retry goes to another runner when one is free, and a runner that keeps failing is set aside for a
// while: by the rules on the store itself (a clock in hand), and with real runners as the issue met it, where a
// runner whose agent fails at once took all 6 attempts of a rollout while 4 good runners were idle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRunners } from '../../agents/runner';
import { openStoreDatabase } from '../../store/db';
import { LightningStore } from '../../store/lightning-store';
import { LLM_RESOURCES, startTestStore } from './helpers';

const RETRY = { max_attempts: 6, retry_condition: ['failed' as const] };

function storeAt(start: number) {
  const clock = { now: start };
  const store = new LightningStore(openStoreDatabase(':memory:'), { now: () => clock.now });
  return { store, clock };
}

test('a failed rollout waits for a free runner that has not tried it; alone, the same runner gets it again', () => {
  const { store, clock } = storeAt(1000);
  const r = store.enqueueRollouts([{ input: 'x', config: RETRY }])[0]!;
  const [first] = store.dequeue(1, 'bad');
  assert.equal(first?.rollout_id, r.rollout_id);
  assert.deepEqual(store.dequeue(1, 'good'), [], 'good polls while the rollout runs: it is free');
  store.updateAttempt(r.rollout_id, first!.attempt.attempt_id, { status: 'failed' });
  clock.now += 1;
  assert.deepEqual(store.dequeue(1, 'bad'), [], 'not back to the runner that failed it while good is free');
  assert.equal(store.dequeue(1, 'good')[0]?.rollout_id, r.rollout_id, 'good gets the retry');

  // No other runner seen lately: the one runner there is gets the retry (nothing else would run it).
  const solo = storeAt(5000);
  const s = solo.store.enqueueRollouts([{ input: 'y', config: RETRY }])[0]!;
  const a = solo.store.dequeue(1, 'only')[0]!;
  solo.store.updateAttempt(s.rollout_id, a.attempt.attempt_id, { status: 'failed' });
  assert.equal(solo.store.dequeue(1, 'only')[0]?.rollout_id, s.rollout_id);
});

test('three failures in a row set a runner aside while others are active; after a while it gets work again', () => {
  const { store, clock } = storeAt(1000);
  store.dequeue(1, 'good'); // good is around
  for (let i = 0; i < 3; i++) {
    const r = store.enqueueRollouts([{ input: i, config: { max_attempts: 1 } }])[0]!;
    const a = store.dequeue(1, 'bad')[0]!;
    assert.equal(a.rollout_id, r.rollout_id);
    store.updateAttempt(r.rollout_id, a.attempt.attempt_id, { status: 'failed' });
  }
  const fresh = store.enqueueRollouts([{ input: 'fresh', config: { max_attempts: 1 } }])[0]!;
  clock.now += 5;
  store.updateWorker('good', {}); // still active (a busy runner heartbeats)
  assert.deepEqual(store.dequeue(1, 'bad'), [], 'set aside');
  clock.now += 31;
  store.updateWorker('good', {});
  const back = store.dequeue(1, 'bad')[0];
  assert.equal(back?.rollout_id, fresh.rollout_id, 'back after 30 s');
  store.updateAttempt(fresh.rollout_id, back!.attempt.attempt_id, { status: 'succeeded' });
  const next = store.enqueueRollouts([{ input: 'next', config: { max_attempts: 1 } }])[0]!;
  assert.equal(store.dequeue(1, 'bad')[0]?.rollout_id, next.rollout_id, 'a success clears its record');
});

test('real runners: one that fails at once and polls fast no longer takes every attempt while four good ones idle', { timeout: 120_000 }, async () => {
  const t = await startTestStore();
  try {
    await t.client.addResources(LLM_RESOURCES);
    const bad = startRunners(1, () => {
      throw new Error('this runner\'s agent is broken');
    }, { storeUrl: t.server.url, pollIntervalMs: 10, log: () => {}, workerId: 'bad' });
    const good = startRunners(4, async () => 1, { storeUrl: t.server.url, pollIntervalMs: 400, log: () => {}, workerId: 'good' });
    // One rollout at a time, as in the issue: the broken runner is the first to poll it, and again after each failure.
    const statuses: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await t.client.enqueueRollout(i, { config: RETRY });
      const [done] = await t.client.waitForAllRollouts([r.rollout_id], 60);
      statuses.push(done!.status);
    }
    await Promise.all([bad.stop(), good.stop()]);
    assert.deepEqual(statuses, ['succeeded', 'succeeded', 'succeeded', 'succeeded', 'succeeded']);
  } finally {
    await t.close();
  }
});
