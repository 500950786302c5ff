import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computeKlSampleTrain, computePostKl, discountedFutureSum, incorporateKlPenalty } from '../../rl/kl';
import type { Datum } from '../../rl/types';

const close = (actual: number[], expected: number[]) => {
  assert.equal(actual.length, expected.length);
  actual.forEach((a, i) => assert.ok(Math.abs(a - expected[i]!) < 1e-12, `[${i}] ${a} vs ${expected[i]}`));
};
const near = (a: number | undefined, b: number) => assert.ok(a !== undefined && Math.abs(a - b) < 1e-12, `${a} vs ${b}`);

const d1: Datum = {
  modelInput: [10, 11, 12],
  lossFnInputs: { target_tokens: [11, 12, 13], logprobs: [0, -1, -2], advantages: [0, 0.5, 0.5], mask: [0, 1, 1] },
};
const d2: Datum = {
  modelInput: [20, 21],
  lossFnInputs: { target_tokens: [21, 22], logprobs: [0, -0.2], advantages: [0, -0.5], mask: [0, 1] },
};
// compute_logprobs over the full sequences [10..13] and [20..22]; the first entry is null.
const reference = [
  [null, -0.5, -1.5, -1.0],
  [null, -3, -1],
];

// diffs (sampled - reference) * mask: d1 [0, 0.5, -1], d2 [0, 0.8]; avg = 0.3 / 3 = 0.1
test('KL penalty without discount: coef * mask * (avg - diff) added to advantages', () => {
  const { data, metrics } = incorporateKlPenalty([d1, d2], reference, 2, 0);
  near(metrics.kl_policy_base, 0.1);
  close(data[0]!.lossFnInputs.advantages, [0, 0.5 - 0.8, 0.5 + 2.2]);
  close(data[1]!.lossFnInputs.advantages, [0, -0.5 - 1.4]);
  assert.deepEqual(d1.lossFnInputs.advantages, [0, 0.5, 0.5], 'inputs are not mutated');
  assert.deepEqual(data[0]!.lossFnInputs.mask, [0, 1, 1]);
});

test('KL penalty with discount: discounted future sum, leaking into prompt positions', () => {
  const { data } = incorporateKlPenalty([d1, d2], reference, 2, 0.5);
  // d1 kl [0, -0.8, 2.2] -> [0.15, 0.3, 2.2]; d2 kl [0, -1.4] -> [-0.7, -1.4]
  close(data[0]!.lossFnInputs.advantages, [0.15, 0.8, 2.7]);
  close(data[1]!.lossFnInputs.advantages, [-0.7, -1.9]);
});

test('KL penalty checks logprob lengths', () => {
  assert.throws(() => incorporateKlPenalty([d1], [[null, -1, -1]], 1, 0), /expected 4 logprobs/);
  assert.throws(() => incorporateKlPenalty([d1, d2], [reference[0]!], 1, 0), /2 datums but 1/);
});

test('discountedFutureSum', () => {
  close(discountedFutureSum([1, 1, 1], 0.5), [1.75, 1.5, 1]);
  close(discountedFutureSum([1, 2, 3], 0), [1, 2, 3]);
  assert.deepEqual(discountedFutureSum([], 0.9), []);
});

test('computeKlSampleTrain over action tokens only', () => {
  // diffs: 0.5, -0.5, 0.2 ; sampled: -1, -2, -0.2 (position 0 of each datum is masked out)
  const m = computeKlSampleTrain([d1, d2], [[-9, -1.5, -1.5], [-9, -0.4]]);
  near(m['optim/kl_sample_train_v1'], 0.2 / 3);
  near(m['optim/kl_sample_train_v2'], (0.5 * 0.54) / 3);
  near(m['optim/entropy'], 3.2 / 3);
  assert.deepEqual(Object.keys(m).sort(), ['optim/entropy', 'optim/kl_sample_train_v1', 'optim/kl_sample_train_v2']);
});

test('computePostKl aligns compute_logprobs output and averages over action tokens', () => {
  const m = computePostKl([d1, d2], [[null, 5, -1.25, -2.5], [null, 7, -0.7]]);
  // diffs: 0.25, 0.5, 0.5
  near(m.kl_pre_post_v1, 1.25 / 3);
  near(m.kl_pre_post_v2, (0.5 * 0.5625) / 3);
});

test('no action token: KL metrics are empty instead of asserting', () => {
  const noAction: Datum = { modelInput: [1], lossFnInputs: { target_tokens: [2], logprobs: [0], advantages: [0], mask: [0] } };
  assert.deepEqual(computeKlSampleTrain([noAction], [[-1]]), {});
  assert.deepEqual(computePostKl([noAction], [[null, -1]]), {});
  assert.equal(incorporateKlPenalty([noAction], [[null, -1]], 1, 0).metrics.kl_policy_base, 0);
});

test('computeKlSampleTrain leaves out datums whose training logprobs are the wrong length, and counts them', () => {
  const m = computeKlSampleTrain([d1, d2], [[-9, -1.5, -1.5], [-9]]);
  // only d1: diffs 0.5, -0.5; sampled -1, -2
  near(m['optim/kl_sample_train_v1'], 0);
  near(m['optim/kl_sample_train_v2'], 0.125);
  near(m['optim/entropy'], 1.5);
  assert.equal(m['optim/kl_sample_train_mismatched_datums'], 1);
  assert.deepEqual(computeKlSampleTrain([d2], [[]]), { 'optim/kl_sample_train_mismatched_datums': 1 });
});

test('computePostKl counts datums whose scores are the wrong length instead of throwing', () => {
  const m = computePostKl([d1, d2], [[null, 5, -1.25, -2.5], [null, -0.7]]);
  near(m.kl_pre_post_v1, 0.375); // d1 only: 0.25, 0.5
  assert.equal(m.kl_pre_post_mismatched_datums, 1);
});
