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
      // 'late' trains a straggler whatever its staleness (the bound holds only while sampling keeps up).
      if (cfg.staleRule !== 'late') assert.ok(st.max <= cfg.maxStepsOffPolicy, `staleness ${st.max} within ${cfg.maxStepsOffPolicy}`);
      maxStaleness = Math.max(maxStaleness, st.max);
      for (const g of batch) {
        trainedOnce.set(g.g, (trainedOnce.get(g.g) ?? 0) + 1);
        outcomes.set(g.g, 'trained');
      }
      stepSizes.push(batch.length);
      // While the step trains and its policy is published, groups finish and free slots are filled under the
      // policy still served (the async loop frees the step's slots only once the new policy is published).
      while (sched.state.inFlight.length > 0 && r() < 0.5) {
        const f = sched.state.inFlight[Math.floor(r() * sched.state.inFlight.length)]!;
        const failed = r() < failRate;
        sched.finish(f, { taskIndex: f.g, rolloutIds: [`r-${f.g}-${f.r}`], statuses: [failed ? 'failed' : 'succeeded'] }, step);
        if (failed) outcomes.set(f.g, 'failed');
        sched.startGroups(step, res(step));
        checkBound();
      }
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
  assert.equal(c.trained + c.droppedStale + c.failed + (c.constantReward ?? 0), totalGroups, 'every group is trained, dropped as stale or failed: none lost');
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
      fc.constantFrom('pace' as const, 'resample' as const, 'late' as const),
      fc.integer({ min: 0, max: 4 }),
      fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
      (k, gpb, total, seed, failRate, roundTrip, staleRule, depth, maxGroupsSampling) => {
        const pipelineDepth = staleRule === 'pace' ? Math.min(depth, k) : undefined;
        const sim = simulate({ maxStepsOffPolicy: k, groupsPerBatch: gpb, staleRule, pipelineDepth, maxGroupsSampling }, total, rng(seed), failRate, roundTrip);
        for (const [g, n] of sim.trainedOnce) assert.equal(n, 1, `group ${g} trained once`);
        // Only resample discards: under pace and late every group that did not fail is trained.
        if (staleRule !== 'resample') assert.ok(![...sim.outcomes.values()].includes('dropped'), `${staleRule} drops nothing`);
        // Only the last step may be smaller than groupsPerBatch.
        sim.stepSizes.slice(0, -1).forEach((n) => assert.equal(n, gpb));
      },
    ),
    { numRuns: 400 },
  );
});

test('maxStepsOffPolicy 0 is on-policy: every step trains groups of the policy it updates', () => {
  for (const staleRule of ['pace', 'resample', 'late'] as const) {
    const sim = simulate({ maxStepsOffPolicy: 0, groupsPerBatch: 3, staleRule }, 30, rng(7), 0, false);
    assert.equal(sim.maxStaleness, 0);
    assert.deepEqual(sim.stepSizes, Array(10).fill(3));
  }
});

test('pace: a slow group is trained within the bound; sampling pauses rather than start a group it could not train in time', () => {
  const sched = new AsyncScheduler({ maxStepsOffPolicy: 1, groupsPerBatch: 1, pipelineDepth: 1 }, initialSchedulerState(5));
  const [slow, a] = sched.startGroups(0, 'res-0');
  assert.deepEqual([slow!.g, a!.g], [0, 1], 'cap = 1 x (1 + 1)');
  sched.finish(a!, { taskIndex: 1, rolloutIds: ['a'], statuses: ['succeeded'] }, 0);
  // Step 0 may take group 1: the slow group 0 (policy 0) can still make step 1.
  assert.deepEqual(sched.takeBatch(0)!.map((g) => g.g), [1]);
  sched.trained(1);
  // Under policy 1 a new group would be due by step 2 and group 0 by step 1: one each, so it may start.
  const [b] = sched.startGroups(1, 'res-1');
  assert.equal(b!.g, 2);
  sched.finish(b!, { taskIndex: 2, rolloutIds: ['b'], statuses: ['succeeded'] }, 1);
  // Step 1 must train group 0 (due now): it waits for it rather than take the newer group 2.
  assert.equal(sched.batchReady(1), false, 'step 1 waits for the slow group');
  assert.deepEqual(sched.startGroups(1, 'res-1'), [], 'no slot free: 2 started and untrained');
  sched.finish(slow!, { taskIndex: 0, rolloutIds: ['s'], statuses: ['succeeded'] }, 1);
  assert.deepEqual(sched.takeBatch(1)!.map((g) => [g.g, g.policyStep]), [[0, 0]], 'the stalest first; staleness 1');
  sched.trained(2);
  assert.equal(sched.state.counts.resampled + sched.state.counts.droppedStale, 0, 'nothing discarded');
});

test('pace: with a slow group holding its deadline, sampling pauses though slots are free', () => {
  // K = 2, depth 2: 3 slots. Group 0 is slow; groups 1 and 2 train steps 0 and 1.
  const sched = new AsyncScheduler({ maxStepsOffPolicy: 2, groupsPerBatch: 1, pipelineDepth: 2 }, initialSchedulerState(10));
  const [slow, a, b] = sched.startGroups(0, 'res-0');
  sched.finish(a!, { taskIndex: 1, rolloutIds: ['a'], statuses: ['succeeded'] }, 0);
  sched.takeBatch(0);
  sched.trained(1);
  const [c] = sched.startGroups(1, 'res-1');
  sched.finish(b!, { taskIndex: 2, rolloutIds: ['b'], statuses: ['succeeded'] }, 1);
  sched.finish(c!, { taskIndex: 3, rolloutIds: ['c'], statuses: ['succeeded'] }, 1);
  // Step 1 takes group 2 (policy 0): group 0 can still make step 2, group 3 (policy 1) step 3.
  assert.deepEqual(sched.takeBatch(1)!.map((g) => g.g), [2]);
  sched.trained(2);
  // Under policy 2: group 0 is due at step 2, group 3 by 3; a new group (due by 4) fits, a second would too...
  const started = sched.startGroups(2, 'res-2');
  assert.equal(started.length, 1, 'only one slot is free (3 untrained: 0, 3 and the new one)');
  assert.equal(sched.batchReady(2), false, 'step 2 waits for group 0, due now');
  sched.finish(slow!, { taskIndex: 0, rolloutIds: ['s'], statuses: ['succeeded'] }, 2);
  assert.deepEqual(sched.takeBatch(2)!.map((g) => [g.g, 2 - g.policyStep]), [[0, 2]], 'trained at staleness K, not dropped');
});

test('late: a step never waits for a straggler, which is trained when it comes in, stalest first, past K', () => {
  // K = 1, 1 group a step: 2 slots. Group 0 is slow; the others finish at once.
  const sched = new AsyncScheduler({ maxStepsOffPolicy: 1, groupsPerBatch: 1, staleRule: 'late' }, initialSchedulerState(10));
  const [slow, a] = sched.startGroups(0, 'res-0');
  assert.equal(sched.startGroups(0, 'res-0').length, 0, 'cap = 1 x (1 + 1)');
  const done = (g: typeof a, step: number) => sched.finish(g!, { taskIndex: g!.g, rolloutIds: [`r${g!.g}`], statuses: ['succeeded'] }, step);
  done(a, 0);
  let step = 0;
  for (; step < 3; step++) {
    // Pace would hold step 1 for group 0 (due at step 1); 'late' trains whatever has finished.
    assert.equal(sched.batchReady(step), true, `step ${step} does not wait for the straggler`);
    assert.notEqual(sched.takeBatch(step)![0]!.g, slow!.g);
    sched.trained(step + 1);
    done(sched.startGroups(step + 1, `res-${step + 1}`)[0], step + 1);
  }
  done(slow, step);
  const batch = sched.takeBatch(step)!;
  assert.deepEqual(batch.map((g) => [g.g, step - g.policyStep]), [[0, 3]], 'the straggler first, at staleness 3 > K');
  assert.equal(sched.state.counts.resampled + sched.state.counts.droppedStale, 0, 'nothing discarded');
});

test('maxGroupsSampling caps the groups sampling at once', () => {
  const sched = new AsyncScheduler({ maxStepsOffPolicy: 2, groupsPerBatch: 4, pipelineDepth: 2, maxGroupsSampling: 3 }, initialSchedulerState(20));
  assert.equal(sched.startGroups(0, 'res-0').length, 3);
  const g = sched.state.inFlight[0]!;
  sched.finish(g, { taskIndex: 0, rolloutIds: ['x'], statuses: ['succeeded'] }, 0);
  assert.equal(sched.startGroups(0, 'res-0').length, 1, 'one finished: one more starts');
});

test('a constant-reward group frees its slot at once and is counted', () => {
  const sched = new AsyncScheduler({ maxStepsOffPolicy: 0, groupsPerBatch: 1 }, initialSchedulerState(3));
  const [g0] = sched.startGroups(0, 'res-0');
  assert.deepEqual(sched.startGroups(0, 'res-0'), []);
  sched.finish(g0!, { taskIndex: 0, rolloutIds: ['x'], statuses: ['succeeded'], constantReward: true }, 0);
  assert.equal(sched.state.counts.constantReward, 1);
  assert.equal(sched.batchReady(0), false, 'not trained');
  assert.equal(sched.startGroups(0, 'res-0').length, 1, 'its slot is free');
});

test('resample: a group that finishes too stale is sampled again under the newest policy, then dropped after MAX_RESAMPLES', () => {
  const sched = new AsyncScheduler({ maxStepsOffPolicy: 1, groupsPerBatch: 1, staleRule: 'resample' }, initialSchedulerState(3));
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

test('oldest policy first when more groups are ready than a step takes, whatever order they finished in', () => {
  const done = { rolloutIds: ['x'], statuses: ['succeeded'] };
  const sched = new AsyncScheduler({ maxStepsOffPolicy: 2, groupsPerBatch: 1, pipelineDepth: 2 }, initialSchedulerState(8));
  const p0 = sched.startGroups(0, 'res-0');
  assert.equal(p0.length, 3, 'cap = 1 x (2 + 1)');
  sched.finish(p0[0]!, { taskIndex: 0, ...done }, 0);
  assert.deepEqual(sched.takeBatch(0)!.map((g) => g.g), [0]);
  sched.trained(1);
  const p1 = sched.startGroups(1, 'res-1');
  assert.deepEqual(p1.map((g) => [g.g, g.policyStep]), [[3, 1]], 'the freed slot goes to policy 1');
  // The policy-1 group finishes first, then two of policy 0, newest finisher first.
  sched.finish(p1[0]!, { taskIndex: 3, ...done }, 1);
  sched.finish(p0[2]!, { taskIndex: 2, ...done }, 1);
  sched.finish(p0[1]!, { taskIndex: 1, ...done }, 1);
  // Stalest first: policy 0 before policy 1, and within a policy the one that finished first.
  assert.deepEqual(sched.takeBatch(1)!.map((g) => [g.g, g.policyStep]), [[2, 0]]);
  sched.trained(2);
  assert.deepEqual(sched.takeBatch(2)!.map((g) => [g.g, g.policyStep]), [[1, 0]]);
  sched.trained(3);
  assert.deepEqual(sched.takeBatch(3)!.map((g) => [g.g, g.policyStep]), [[3, 1]]);
});
