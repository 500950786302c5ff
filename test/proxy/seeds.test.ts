// Sampling seeds of rollout-scoped calls: taken from the rollout's metadata and the call's place in its attempt,
// so a retried attempt samples exactly what the first one did, while calls an agent makes in parallel each get a
// seed of their own (otherwise n parallel calls with one prompt would return n copies of one answer).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { StoreClient } from '../../store/client';
import { startHarness, post } from './helpers';
import type { Harness } from './helpers';

let h: Harness;
let store: StoreClient;
before(async () => {
  // The sampler answers with the seed it was given, after a pause long enough for parallel calls to overlap.
  h = await startHarness({ withStore: true, delayMs: 400, script: (_prompt, params) => `seed ${params.seed}` });
  store = new StoreClient(h.store!.url, { retryDelaysMs: [50], token: '' });
});
after(() => h.close());

async function seedOf(rid: string, aid: string, content: string): Promise<number> {
  const r = await post(`${h.proxy.url}/rollout/${rid}/attempt/${aid}/v1/chat/completions`, { messages: [{ role: 'user', content }] });
  assert.equal(r.status, 200, r.text);
  const m = /^seed (\d+)$/.exec(r.json.choices[0].message.content);
  assert.ok(m, `the scripted reply names a seed: ${r.json.choices[0].message.content}`);
  return Number(m[1]);
}

async function sequential(rid: string, aid: string): Promise<number[]> {
  const seeds: number[] = [];
  for (const turn of ['one', 'two', 'three']) seeds.push(await seedOf(rid, aid, turn));
  return seeds;
}

test('a retried attempt gets the seeds of the first, call by call; another rollout seed gives others', async () => {
  const rollout = await store.startRollout({ task: 'a' }, { metadata: { sampling_seed: 7 } });
  const first = await sequential(rollout.rollout_id, rollout.attempt.attempt_id);
  assert.equal(new Set(first).size, 3, `each call of an attempt has its own seed: ${first}`);
  const retry = await store.startAttempt(rollout.rollout_id);
  assert.notEqual(retry.attempt.attempt_id, rollout.attempt.attempt_id);
  assert.deepEqual(await sequential(rollout.rollout_id, retry.attempt.attempt_id), first);

  const other = await store.startRollout({ task: 'a' }, { metadata: { sampling_seed: 8 } });
  const otherSeeds = await sequential(other.rollout_id, other.attempt.attempt_id);
  assert.equal(otherSeeds.filter((s) => first.includes(s)).length, 0, 'sampling_seed 8 shares no seed with 7');
});

test('calls of one attempt made in parallel, with the same prompt, get different seeds', async () => {
  const rollout = await store.startRollout({ task: 'b' }, { metadata: { sampling_seed: 9 } });
  const { rollout_id: rid } = rollout;
  const aid = rollout.attempt.attempt_id;
  const seeds = await Promise.all([0, 1, 2, 3].map(() => seedOf(rid, aid, 'same prompt')));
  assert.equal(new Set(seeds).size, 4, `parallel seeds: ${seeds}`);
  // Nothing stays held: the next sequential call follows the four recorded ones.
  const next = await seedOf(rid, aid, 'after');
  assert.ok(!seeds.includes(next), 'the call after them gets a fifth seed');
});

test('what a call samples does not depend on the order of calls with other prompts', async () => {
  const seedsIn = async (order: string[]) => {
    const rollout = await store.startRollout({ task: 'c' }, { metadata: { sampling_seed: 11 } });
    const seeds = await Promise.all(order.map((p) => seedOf(rollout.rollout_id, rollout.attempt.attempt_id, p)));
    return Object.fromEntries(order.map((p, i) => [p, seeds[i]]));
  };
  const forward = await seedsIn(['alpha', 'beta', 'gamma']);
  const backward = await seedsIn(['gamma', 'beta', 'alpha']);
  assert.deepEqual(backward, forward);
});
