// KL terms of the cookbook (rl/metrics.py): the penalty against a reference policy folded into
// advantages, and the sample-vs-train and pre-vs-post update diagnostics. The logprobs come from
// the trainer (forward_backward, compute_logprobs); these functions only do the arithmetic.
import { actionMask } from './datums';
import type { Datum, Metrics } from './types';

/**
 * out[t] = x[t] + gamma * out[t+1], right to left (scipy lfilter on the reversed array in the cookbook).
 */
export function discountedFutureSum(x: readonly number[], gamma: number): number[] {
  const out = new Array<number>(x.length);
  let running = 0;
  for (let t = x.length - 1; t >= 0; t--) {
    running = x[t]! + gamma * running;
    out[t] = running;
  }
  return out;
}

/**
 * compute_logprobs scores the full sequence and returns one entry per token, the first being
 * null (nothing predicts it). Dropping it aligns the scores with target_tokens.
 */
function alignedScores(datum: Datum, scores: readonly (number | null)[], what: string): number[] {
  const n = datum.lossFnInputs.target_tokens.length;
  if (scores.length !== n + 1) {
    throw new Error(`${what}: expected ${n + 1} logprobs (full sequence), got ${scores.length}`);
  }
  return scores.slice(1).map((v) => v ?? 0);
}

export interface KlPenaltyResult {
  data: Datum[];
  metrics: Metrics;
}

/**
 * incorporate_kl_penalty: with d_t = (sampled_t - reference_t) * mask_t and avg = sum(d) / sum(mask)
 * over the whole batch, add coef * mask_t * (avg - d_t) to each advantage, first turned into its
 * discounted future sum when klDiscountFactor > 0. As in the cookbook, that sum runs over the whole
 * datum, so it leaks into observation positions before an action. Returns new datums.
 *
 * @param referenceLogprobsD per datum, compute_logprobs(fullSequence(datum)) from the reference sampler
 */
export function incorporateKlPenalty(
  data: readonly Datum[],
  referenceLogprobsD: readonly (readonly (number | null)[])[],
  klPenaltyCoef: number,
  klDiscountFactor: number,
): KlPenaltyResult {
  if (data.length !== referenceLogprobsD.length) {
    throw new Error(`incorporateKlPenalty: ${data.length} datums but ${referenceLogprobsD.length} logprob lists`);
  }
  const masks = data.map(actionMask);
  const diffs = data.map((datum, i) => {
    const ref = alignedScores(datum, referenceLogprobsD[i]!, 'incorporateKlPenalty');
    return datum.lossFnInputs.logprobs.map((lp, t) => (lp - ref[t]!) * masks[i]![t]!);
  });
  const sumDiff = diffs.reduce((acc, d) => acc + d.reduce((a, b) => a + b, 0), 0);
  const sumMask = masks.reduce((acc, m) => acc + m.reduce((a, b) => a + b, 0), 0);
  // No action token anywhere: the reference divides by zero; there is nothing to penalise.
  const avg = sumMask > 0 ? sumDiff / sumMask : 0;

  const out = data.map((datum, i) => {
    let klAdv = diffs[i]!.map((d, t) => klPenaltyCoef * masks[i]![t]! * (avg - d));
    if (klDiscountFactor > 0) klAdv = discountedFutureSum(klAdv, klDiscountFactor);
    const advantages = datum.lossFnInputs.advantages.map((a, t) => a + klAdv[t]!);
    return { ...datum, lossFnInputs: { ...datum.lossFnInputs, advantages } };
  });
  return { data: out, metrics: { kl_policy_base: avg } };
}

/**
 * Differences sampled - other at action positions, plus the sampled logprobs there. A datum whose
 * other logprobs do not cover every target position is left out and counted (a trainer bug shows
 * up as a metric instead of NaN, and never fails a step whose update is already applied).
 */
function actionDiffs(
  data: readonly Datum[],
  otherD: readonly (readonly number[])[],
): { diffs: number[]; sampled: number[]; mismatched: number } {
  const diffs: number[] = [];
  const sampled: number[] = [];
  let mismatched = 0;
  data.forEach((datum, i) => {
    const mask = actionMask(datum);
    const other = otherD[i]!;
    if (other.length !== datum.lossFnInputs.logprobs.length) {
      mismatched += 1;
      return;
    }
    datum.lossFnInputs.logprobs.forEach((lp, t) => {
      if (mask[t]! > 0) {
        diffs.push(lp - other[t]!);
        sampled.push(lp);
      }
    });
  });
  return { diffs, sampled, mismatched };
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * compute_kl_sample_train: how far the trainer's logprobs (forward_backward outputs, one per
 * target position) are from the sampler's, over action tokens. Empty when there is no action
 * token (the reference asserts); `optim/kl_sample_train_mismatched_datums` counts datums left out.
 */
export function computeKlSampleTrain(
  data: readonly Datum[],
  trainingLogprobsD: readonly (readonly number[])[],
): Metrics {
  if (data.length !== trainingLogprobsD.length) {
    throw new Error(`computeKlSampleTrain: ${data.length} datums but ${trainingLogprobsD.length} logprob lists`);
  }
  const { diffs, sampled, mismatched } = actionDiffs(data, trainingLogprobsD);
  const out: Metrics = mismatched > 0 ? { 'optim/kl_sample_train_mismatched_datums': mismatched } : {};
  if (diffs.length === 0) return out;
  return {
    ...out,
    'optim/kl_sample_train_v1': mean(diffs),
    'optim/kl_sample_train_v2': 0.5 * mean(diffs.map((d) => d * d)),
    'optim/entropy': -mean(sampled),
  };
}

/**
 * compute_post_kl: sampled logprobs vs the updated policy's, over action tokens.
 *
 * @param newLogprobsD per datum, compute_logprobs(fullSequence(datum)) from the post-update sampler
 */
export function computePostKl(
  data: readonly Datum[],
  newLogprobsD: readonly (readonly (number | null)[])[],
): Metrics {
  if (data.length !== newLogprobsD.length) {
    throw new Error(`computePostKl: ${data.length} datums but ${newLogprobsD.length} logprob lists`);
  }
  // A wrong-length score list becomes [] so actionDiffs leaves that datum out and counts it.
  const aligned = data.map((d, i) => {
    const scores = newLogprobsD[i]!;
    return scores.length === d.lossFnInputs.target_tokens.length + 1 ? scores.slice(1).map((v) => v ?? 0) : [];
  });
  const { diffs, mismatched } = actionDiffs(data, aligned);
  const out: Metrics = mismatched > 0 ? { kl_pre_post_mismatched_datums: mismatched } : {};
  if (diffs.length === 0) return out;
  return {
    ...out,
    kl_pre_post_v1: mean(diffs),
    kl_pre_post_v2: 0.5 * mean(diffs.map((d) => d * d)),
  };
}
