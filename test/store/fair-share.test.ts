// The store's dequeue shares one runner fleet between runs (store/run-policy/fair-share.ts): rollouts by run weight, FIFO
// within a run, no credit saved up by an idle run, and a run's cap of rollouts in flight. Over HTTP, on a real
// store, reading what each dequeue handed out.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestStore, type TestStore } from './helpers';

let store: TestStore;
before(async () => {
  store = await startTestStore();
});
after(async () => {
  await store.close();
});

/** Enqueues `n` rollouts of `run` (input = their index), as a training run marks them. */
async function enqueue(run: string, n: number, extra: Record<string, number> = {}): Promise<void> {
  await store.client.enqueueRollouts(Array.from({ length: n }, (_, i) => ({ input: { run, i }, metadata: { agl_run: run, ...extra } })));
}

/** Takes `n` rollouts one dequeue at a time; returns `run:i` of each. */
async function take(n: number): Promise<string[]> {
  const out: string[] = [];
  for (let k = 0; k < n; k++) {
    const [r] = await store.client.dequeueRollouts(1, 'runner-1');
    if (!r) break;
    const input = r.input as { run: string; i: number };
    out.push(`${input.run}:${input.i}`);
  }
  return out;
}

const count = (xs: string[], run: string) => xs.filter((x) => x.startsWith(`${run}:`)).length;

test('two runs queued one after the other share the fleet 1:3 by weight, each in its own order', async () => {
  await enqueue('big', 40); // weight 1, queued first: FIFO would hand out only these
  await enqueue('small', 40, { agl_fleet_weight: 3 });
  const got = await take(20);
  assert.equal(count(got, 'big'), 5, `big (weight 1) gets a quarter: ${got.join(' ')}`);
  assert.equal(count(got, 'small'), 15, 'small (weight 3) three quarters although queued behind 40 of big');
  const order = (run: string) => got.filter((x) => x.startsWith(`${run}:`)).map((x) => Number(x.split(':')[1]));
  assert.deepEqual(order('big'), [0, 1, 2, 3, 4], 'FIFO within a run');
  assert.deepEqual(order('small'), Array.from({ length: 15 }, (_, i) => i));
  // Drain the rest so the next test starts with an empty queue.
  await take(60);
});

test('a run that was idle saves up no turns; one at its cap of rollouts in flight is passed over', async () => {
  await enqueue('steady', 30);
  assert.equal(count(await take(10), 'steady'), 10, 'alone, a run gets every rollout');
  await enqueue('late', 30);
  const got = await take(10);
  assert.equal(count(got, 'late'), 5, `the late run gets its share from now on, not the turns it missed: ${got.join(' ')}`);
  await take(50);

  await enqueue('capped', 5, { agl_max_in_flight: 2 });
  const first = await store.client.dequeueRollouts(5, 'runner-2');
  assert.equal(first.length, 2, 'only 2 of its rollouts in flight at once');
  assert.deepEqual(await store.client.dequeueRollouts(5, 'runner-2'), [], 'none more while 2 are in flight');
  await store.client.updateAttempt(first[0]!.rollout_id, first[0]!.attempt.attempt_id, { status: 'succeeded' });
  assert.equal((await store.client.dequeueRollouts(5, 'runner-2')).length, 1, 'one finished: one more handed out');
});
