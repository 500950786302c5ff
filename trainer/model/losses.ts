// Tinker's built-in losses (tinker-protocol.md §A.8) as pure functions of the learner log-probs lp_t:
// each returns the datum's summed loss and dL/dlp_t. Everything is a SUM over tokens, never a mean.
import { LOSSES, UserError } from '../engine';
import type { LossFn } from '../engine';

export interface LossValue {
  loss: number;
  dlp: Float64Array;
}

export const PPO_DEFAULT_CLIP_LOW = 0.8;
export const PPO_DEFAULT_CLIP_HIGH = 1.2;
/** The Tinker docs' CISPO defaults (tutorial 202). */
export const CISPO_DEFAULT_CLIP_LOW = 0.0;
export const CISPO_DEFAULT_CLIP_HIGH = 4.0;
/** The Tinker docs give beta = 0.05 as their DRO example and state no default; we use it as ours. */
export const DRO_DEFAULT_BETA = 0.05;

/** cross_entropy: −Σ w_t·lp_t. */
export function crossEntropy(lp: ArrayLike<number>, weights: ArrayLike<number>): LossValue {
  const dlp = new Float64Array(lp.length);
  let loss = 0;
  for (let t = 0; t < lp.length; t++) {
    loss -= weights[t] * lp[t];
    dlp[t] = -weights[t];
  }
  return { loss, dlp };
}

/** importance_sampling: −Σ r_t·A_t with r_t = exp(lp_t − q_t) (unclipped). */
export function importanceSampling(lp: ArrayLike<number>, q: ArrayLike<number>, adv: ArrayLike<number>): LossValue {
  const dlp = new Float64Array(lp.length);
  let loss = 0;
  for (let t = 0; t < lp.length; t++) {
    if (adv[t] === 0) continue; // prompt positions: q may be a placeholder 0.0, r would be meaningless
    const r = Math.exp(lp[t] - q[t]);
    loss -= r * adv[t];
    dlp[t] = -r * adv[t];
  }
  return { loss, dlp };
}

/**
 * ppo: −Σ min(r_t·A_t, clip(r_t, lo, hi)·A_t). Where the clipped term is the smaller one (and the
 * clip is active), the gradient is zero, as with torch.clamp.
 */
export function ppo(lp: ArrayLike<number>, q: ArrayLike<number>, adv: ArrayLike<number>,
  lo: number | ArrayLike<number>, hi: number | ArrayLike<number>): LossValue {
  const dlp = new Float64Array(lp.length);
  let loss = 0;
  for (let t = 0; t < lp.length; t++) {
    const a = adv[t];
    if (a === 0) continue;
    const l = typeof lo === 'number' ? lo : lo[t];
    const h = typeof hi === 'number' ? hi : hi[t];
    const r = Math.exp(lp[t] - q[t]);
    const rc = Math.min(Math.max(r, l), h);
    const unclipped = r * a;
    const clipped = rc * a;
    if (unclipped <= clipped) {
      loss -= unclipped;
      dlp[t] = -unclipped;
    } else {
      loss -= clipped;
      dlp[t] = rc === r ? -unclipped : 0;
    }
  }
  return { loss, dlp };
}

/**
 * cispo: −Σ sg(clip(r_t, lo, hi))·lp_t·A_t. The clipped ratio is a constant weight (stop-gradient), so
 * dL/dlp_t = −clip(r_t, lo, hi)·A_t: unlike ppo, a token whose ratio left the band still gets a gradient.
 */
export function cispo(lp: ArrayLike<number>, q: ArrayLike<number>, adv: ArrayLike<number>,
  lo: number | ArrayLike<number>, hi: number | ArrayLike<number>): LossValue {
  const dlp = new Float64Array(lp.length);
  let loss = 0;
  for (let t = 0; t < lp.length; t++) {
    const a = adv[t];
    if (a === 0) continue; // prompt positions, as in importance_sampling
    const l = typeof lo === 'number' ? lo : lo[t];
    const h = typeof hi === 'number' ? hi : hi[t];
    const rc = Math.min(Math.max(Math.exp(lp[t] - q[t]), l), h);
    loss -= rc * lp[t] * a;
    dlp[t] = -(rc * a);
  }
  return { loss, dlp };
}

/**
 * dro: −Σ [lp_t·A_t − ½·β·(lp_t − q_t)²], so dL/dlp_t = −A_t + β·(lp_t − q_t).
 * Positions with A_t = 0 are skipped although the β term is not zero there: they are the prompt positions,
 * whose q_t is a placeholder 0.0 (the cookbook strips the mask), and ½β·lp_t² would pull prompt log-probs
 * towards 0. A completion token with an advantage of exactly 0 is skipped with them (it has no signal of its own).
 */
export function dro(lp: ArrayLike<number>, q: ArrayLike<number>, adv: ArrayLike<number>, beta: number): LossValue {
  const dlp = new Float64Array(lp.length);
  let loss = 0;
  for (let t = 0; t < lp.length; t++) {
    const a = adv[t];
    if (a === 0) continue;
    const d = lp[t] - q[t];
    loss -= lp[t] * a - 0.5 * beta * d * d;
    dlp[t] = -a + beta * d;
  }
  return { loss, dlp };
}

/** Checks a datum's loss_fn_inputs against its model_input length and the vocabulary. */
export function validateInputs(lossFn: LossFn, modelInputLength: number, inputs: Record<string, ArrayLike<number>>,
  vocabSize: number, index: number): void {
  for (const k of LOSSES[lossFn].inputs) {
    if (!inputs[k]) throw new UserError(`datum ${index}: loss_fn ${lossFn} needs loss_fn_inputs.${k}`);
  }
  for (const [k, v] of Object.entries(inputs)) {
    if (!v || v.length !== modelInputLength) {
      throw new UserError(`datum ${index}: loss_fn_inputs.${k} has length ${v?.length}, model_input has ${modelInputLength}`);
    }
    for (let i = 0; i < v.length; i++) {
      if (!Number.isFinite(v[i])) throw new UserError(`datum ${index}: loss_fn_inputs.${k}[${i}] is not a finite number`);
    }
  }
  const tt = inputs.target_tokens;
  for (let i = 0; i < tt.length; i++) {
    if (!Number.isInteger(tt[i]) || tt[i] < 0 || tt[i] >= vocabSize) {
      throw new UserError(`datum ${index}: target_tokens[${i}] = ${tt[i]} is outside the vocabulary (0..${vocabSize - 1})`);
    }
  }
}

/** The datum's loss and gradient for `lossFn`. Inputs must have passed validateInputs. */
export function lossFor(lossFn: LossFn, lp: ArrayLike<number>, inputs: Record<string, ArrayLike<number>>,
  config: Record<string, number> | undefined): LossValue {
  switch (lossFn) {
    case 'cross_entropy':
      return crossEntropy(lp, inputs.weights);
    case 'importance_sampling':
      return importanceSampling(lp, inputs.logprobs, inputs.advantages);
    case 'ppo': {
      const lo = inputs.clip_low_threshold ?? config?.clip_low_threshold ?? PPO_DEFAULT_CLIP_LOW;
      const hi = inputs.clip_high_threshold ?? config?.clip_high_threshold ?? PPO_DEFAULT_CLIP_HIGH;
      return ppo(lp, inputs.logprobs, inputs.advantages, lo, hi);
    }
    case 'cispo': {
      const lo = inputs.clip_low_threshold ?? config?.clip_low_threshold ?? CISPO_DEFAULT_CLIP_LOW;
      const hi = inputs.clip_high_threshold ?? config?.clip_high_threshold ?? CISPO_DEFAULT_CLIP_HIGH;
      return cispo(lp, inputs.logprobs, inputs.advantages, lo, hi);
    }
    case 'dro':
      return dro(lp, inputs.logprobs, inputs.advantages, config?.beta ?? DRO_DEFAULT_BETA);
  }
}
