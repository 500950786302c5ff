// Tinker's built-in losses (tinker-protocol.md §A.8) as pure functions of the learner log-probs lp_t:
// each returns the datum's summed loss and dL/dlp_t. Everything is a SUM over tokens, never a mean.
import { UserError } from '../engine';
import type { LossFn } from '../engine';

export interface LossValue {
  loss: number;
  dlp: Float64Array;
}

export const PPO_DEFAULT_CLIP_LOW = 0.8;
export const PPO_DEFAULT_CLIP_HIGH = 1.2;

export const REQUIRED_INPUTS: Record<LossFn, string[]> = {
  cross_entropy: ['target_tokens', 'weights'],
  importance_sampling: ['target_tokens', 'logprobs', 'advantages'],
  ppo: ['target_tokens', 'logprobs', 'advantages'],
};

export function isLossFn(x: string): x is LossFn {
  return Object.prototype.hasOwnProperty.call(REQUIRED_INPUTS, x);
}

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

/** Checks a datum's loss_fn_inputs against its model_input length and the vocabulary. */
export function validateInputs(lossFn: LossFn, modelInputLength: number, inputs: Record<string, ArrayLike<number>>,
  vocabSize: number, index: number): void {
  for (const k of REQUIRED_INPUTS[lossFn]) {
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
  }
}
