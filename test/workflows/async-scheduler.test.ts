// The async scheduler driven by random orders of events (groups finishing in any order, succeeding or failing,
// steps taken whenever ready, the state serialized as continue-as-new would): the in-flight bound holds, every
// trained group is within the staleness bound, no group is trained twice or lost, and the run always ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AsyncScheduler, capacity, initialSchedulerState, MAX_RESAMPLES, stalenessOf, type AsyncSettings } from '../../workflows/async-scheduler';

interface SimResult {
  trainedOnce: Map<number, number>;
  outcomes: Map<number, 'trained' | 'dropped' | 'failed'>;
  stepSizes: number[];
  maxStaleness: number;
  events: number;
}

/**
 * Runs a whole dataset through the scheduler as the async loop does: after each event, free slots are filled under
 * the newest policy; a ready step is taken when `r()` says so (or when nothing else can happen).
 */
function simulate(cfg: AsyncSettings, totalGroups: number, r: () => number, failRate: number, roundTrip: boolean): SimResult {
  let sched = new AsyncScheduler(cfg, initialSchedulerState(totalGroups));
  let step = 0;
  const res = (s: number) => `res-${s}`;
  const trainedOnce = new Map<number, number>();
  const outcomes = new Map<number, 'trained' | 'dropped' | 'failed'>();
  const stepSizes: number[] = [];
  let maxStaleness = 0;
  let events = 0;
  const bound = capacity(cfg);
  const checkBound = () => {
    const s = sched.state;
    assert.ok(s.inFlight.length + s.finished.length + s.training.length <= bound, 'never more groups started and untrained than the cap');
  };
  sched.startGroups(step, res(step));
  while (!sched.exhausted()) {
    if (++events > 100_000) throw new Error('the run did not end');
    checkBound();
    const ready = sched.batchReady(step);
    const s = sched.state;
    if (ready && (s.inFlight.length === 0 || r() < 0.3)) {
      const batch = sched.takeBatch(step)!;
      assert.ok(batch.length > 0 && batch.length <= cfg.groupsPerBatch);
      const st = stalenessOf(batch, step);
      assert.ok(st.max <= cfg.maxStepsOffPolicy, `staleness ${st.max} within ${cfg.maxStepsOffPolicy}`);
      maxStaleness = Math.max(maxStaleness, st.max);
      for (const g of batch) {
        trainedOnce.set(g.g, (trainedOnce.get(g.g) ?? 0) + 1);
        outcomes.set(g.g, 'trained');
      }
      stepSizes.push(batch.length);
      step++;
      sched.trained(step);
    } else {
      assert.ok(s.inFlight.length > 0, `no deadlock: nothing in flight, no step ready, not exhausted (state ${JSON.stringify(s)})`);
      const i = Math.floor(r() * s.inFlight.length);
      const group = s.inFlight[i]!;
      const failed = r() < failRate;
      assert.ok(sched.finish(group, { taskIndex: group.g, rolloutIds: [`r-${group.g}-${group.r}`], statuses: [failed ? 'failed' : 'succeeded'] }, step));
      assert.equal(sched.finish(group, { taskIndex: 0, rolloutIds: [], statuses: ['succeeded'] }, step), false, 'a duplicate result is ignored');
      if (failed) outcomes.set(group.g, 'failed');
    }
    sched.startGroups(step, res(step));
    if (roundTrip && r() < 0.2) sched = new AsyncScheduler(cfg, JSON.parse(JSON.stringify(sched.state)));
  }
  const c = sched.state.counts;
  for (let g = 0; g < totalGroups; g++) if (!outcomes.has(g)) outcomes.set(g, 'dropped');
  assert.equal(c.trained + c.droppedStale + c.failed, totalGroups, 'every group is trained, dropped as stale or failed: none lost');
  assert.equal([...outcomes.values()].filter((o) => o === 'dropped').length, c.droppedStale);
  return { trainedOnce, outcomes, stepSizes, maxStaleness, events };
}

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('random event orders: bound, staleness, at most once, none lost, the run ends', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 4 }),
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 0, max: 40 }),
      fc.integer(),
      fc.constantFrom(0, 0.05, 0.3),
      fc.boolean(),
      (k, gpb, total, seed, failRate, roundTrip) => {
        const sim = simulate({ maxStepsOffPolicy: k, groupsPerBatch: gpb }, total, rng(seed), failRate, roundTrip);
        for (const [g, n] of sim.trainedOnce) assert.equal(n, 1, `group ${g} trained once`);
        // Only the last step may be smaller than groupsPerBatch.
        sim.stepSizes.slice(0, -1).forEach((n) => assert.equal(n, gpb));
      },
    ),
    { numRuns: 400 },
  );
});

test('maxStepsOffPolicy 0 is on-policy: every step trains groups of the policy it updates', () => {
  const sim = simulate({ maxStepsOffPolicy: 0, groupsPerBatch: 3 }, 30, rng(7), 0, false);
  assert.equal(sim.maxStaleness, 0);
  assert.deepEqual(sim.stepSizes, Array(10).fill(3));
});

test('a group that finishes too stale is sampled again under the newest policy, then dropped after MAX_RESAMPLES', () => {
  const sched = new AsyncScheduler({ maxStepsOffPolicy: 1, groupsPerBatch: 1 }, initialSchedulerState(3));
  const [slow, a] = sched.startGroups(0, 'res-0');
  assert.deepEqual([slow!.g, a!.g], [0, 1]);
  // Group 1 trains step 0; group 2 starts under policy 1 and trains step 1: the slow group 0 (policy 0) is now 2 behind.
  sched.finish(a!, { taskIndex: 1, rolloutIds: ['a'], statuses: ['succeeded'] }, 0);
  assert.deepEqual(sched.takeBatch(0)!.map((g) => g.g), [1]);
  sched.trained(1);
  const [b] = sched.startGroups(1, 'res-1');
  sched.finish(b!, { taskIndex: 2, rolloutIds: ['b'], statuses: ['succeeded'] }, 1);
  assert.deepEqual(sched.takeBatch(1)!.map((g) => g.g), [2]);
  sched.trained(2);
  sched.finish(slow!, { taskIndex: 0, rolloutIds: ['s'], statuses: ['succeeded'] }, 2);
  assert.equal(sched.state.counts.resampled, 1);
  assert.deepEqual(sched.state.requeued, [{ g: 0, r: 1 }]);
  const [again] = sched.startGroups(2, 'res-2');
  assert.deepEqual([again!.g, again!.r, again!.policyStep, again!.resourcesId], [0, 1, 2, 'res-2'], 'resampled under the newest policy');
  // Too stale every time: dropped after MAX_RESAMPLES resamples, and counted.
  let current = again!;
  let step = 2;
  for (let i = 0; i < MAX_RESAMPLES; i++) {
    step += 2;
    sched.finish(current, { taskIndex: 0, rolloutIds: ['s'], statuses: ['succeeded'] }, step);
    const next = sched.startGroups(step, `res-${step}`);
    if (i < MAX_RESAMPLES - 1) current = next[0]!;
    else assert.deepEqual(next, []);
  }
  assert.equal(sched.state.counts.droppedStale, 1);
  assert.ok(sched.exhausted());
});

test('oldest policy first when more groups are ready than a step takes', () => {
  const sched = new AsyncScheduler({ maxStepsOffPolicy: 2, groupsPerBatch: 2 }, initialSchedulerState(6));
  const first = sched.startGroups(0, 'res-0');
  assert.equal(first.length, 6, 'cap = 2 x (2 + 1)');
  sched.finish(first[5]!, { taskIndex: 5, rolloutIds: ['x'], statuses: ['succeeded'] }, 0);
  sched.finish(first[4]!, { taskIndex: 4, rolloutIds: ['x'], statuses: ['succeeded'] }, 0);
  sched.finish(first[3]!, { taskIndex: 3, rolloutIds: ['x'], statuses: ['succeeded'] }, 0);
  // All of policy 0: the first two to finish.
  assert.deepEqual(sched.takeBatch(0)!.map((g) => g.g), [5, 4]);
});
