// The whole pure pipeline on rollouts recorded with a real Python Agent-lightning runner: spans ->
// triplets (the run's adapter) -> transitions -> groups -> metrics, advantages, datums.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { makeTripletAdapter } from '../../rl/adapters';
import type { StoreSpan } from '../../rl/adapters';
import { makeTrajectoryGroup, prepareTrainingBatch, reconstructTransitions } from '../../rl';
import type { RolloutStatus } from '../../rl';

const recorded = JSON.parse(readFileSync(path.join(__dirname, 'adapters', 'fixtures', 'agl030_rollouts.json'), 'utf8')) as {
  rollouts: { task: { kind: string }; status: RolloutStatus; spans: StoreSpan[] }[];
};
const adapt = makeTripletAdapter({ adapterFromLlmProxy: false });
const rollout = (kind: string) => recorded.rollouts.find((r) => r.task.kind === kind)!;

function group(...kinds: string[]) {
  const rs = kinds.map(rollout);
  return makeTrajectoryGroup(rs.map((r) => reconstructTransitions(adapt(r.spans)).trajectory), rs.map((r) => r.status));
}

test('a batch of recorded rollouts: metrics, advantages and datums', () => {
  // Returns: single 1, no_reward 0 | multi 0.25 + 0.75, return_reward 0.5 | untokenised 1, error (failed) 0
  const groups = [group('single', 'no_reward'), group('multi', 'return_reward'), group('untokenised', 'error')];
  const out = prepareTrainingBatch(groups);
  assert.equal(out.skip, false);
  if (out.skip) return;
  const m = out.metrics;
  assert.equal(m['env/all/total_episodes'], 6);
  assert.equal(m['env/all/total_turns'], 9); // 1 + 1 | 3 + 2 | 1 + 1
  assert.ok(Math.abs(m['env/all/reward/total']! - 3.5 / 6) < 1e-12);
  assert.ok(Math.abs(m['env/all/reward/not_null']! - 5 / 9) < 1e-12);
  assert.equal(m['env/all/reward/final_step'], (1 + 0.75 + 0.5 + 1) / 4);
  assert.equal(m['env/all/by_group/frac_mixed'], 1);
  assert.ok(Math.abs(m['env/all/by_group/frac_status_failed']! - 1 / 6) < 1e-12);
  assert.equal(m['env/all/by_group/frac_empty_traj'], 0);
  assert.equal(m['train/dropped_missing_logprobs'], 0);

  // Every multi-turn episode extends its prompts, so one datum per rollout.
  assert.deepEqual(out.origins.map((o) => [o.groupIdx, o.trajIdx]), [[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1]]);
  const advantageOf = (i: number) => Math.max(...out.data[i]!.lossFnInputs.advantages.map(Math.abs)) * Math.sign(out.data[i]!.lossFnInputs.advantages.find((a) => a !== 0)!);
  assert.deepEqual([0, 1, 2, 3, 4, 5].map(advantageOf), [0.5, -0.5, 0.25, -0.25, 0.5, -0.5]);
  for (const d of out.data) {
    const n = d.modelInput.length;
    for (const k of ['target_tokens', 'logprobs', 'advantages', 'mask'] as const) assert.equal(d.lossFnInputs[k]!.length, n);
    assert.deepEqual(d.modelInput.slice(1), d.lossFnInputs.target_tokens.slice(0, -1));
  }
});
