// Where an off-policy loss anchors its ratio. Tinker's losses take the ratio r = π/q against the `logprobs` a
// datum carries; the cookbook passes the sampler's, so a group sampled K steps ago is judged against a policy K
// steps old. Re-anchoring swaps in the logprobs of the policy the step starts from (the "proximal" policy, read
// with one forward pass) so the clip is a trust region around the policy being trained:
// - 'recompute' (verl's PPO, which recomputes old_log_prob with the actor): the ratio starts at 1 on every token;
//   the sampler's logprobs are not used;
// - 'decoupled' (AReaL's decoupled PPO objective): the same, and each action token's advantage is weighted by
//   the behaviour importance weight w = π_prox/q, so the gradient stays unbiased for the sampler's data; a token
//   with w above `weightCap` is left out (advantage 0), as AReaL masks it.
// With one substep the first loss evaluation is at π = π_prox, so 'decoupled' with no cap is exactly
// importance_sampling against the sampler; the difference shows in later substeps and in the cap.
import { actionMask } from './datums';
import type { Datum, Metrics } from './types';

export type LossAnchor = 'sampler' | 'recompute' | 'decoupled';

export interface AnchorOptions {
  anchor: Exclude<LossAnchor, 'sampler'>;
  /** 'decoupled': tokens whose behaviour weight π_prox/q exceeds this are left out. */
  weightCap: number;
}

export interface AnchoredBatch {
  data: Datum[];
  metrics: Metrics;
}

/**
 * The datums with `logprobs` replaced by the proximal policy's at action positions (and, for 'decoupled', the
 * advantages weighted). Prompt positions keep their placeholder logprob and zero advantage.
 *
 * @param proximal per datum, the proximal policy's logprob of each target token (forward's loss_fn_outputs)
 */
export function anchorAtProximal(data: readonly Datum[], proximal: readonly (readonly number[])[], o: AnchorOptions): AnchoredBatch {
  if (data.length !== proximal.length) throw new Error(`anchorAtProximal: ${data.length} datums but ${proximal.length} logprob lists`);
  let tokens = 0;
  let capped = 0;
  let sumW = 0;
  let maxW = 0;
  const out = data.map((datum, i) => {
    const mask = actionMask(datum);
    const prox = proximal[i]!;
    const { logprobs, advantages } = datum.lossFnInputs;
    if (prox.length !== logprobs.length) {
      throw new Error(`anchorAtProximal: datum ${i} has ${logprobs.length} target positions, the proximal policy scored ${prox.length}`);
    }
    const lp = [...logprobs];
    const adv = [...advantages];
    for (let t = 0; t < lp.length; t++) {
      if (!(mask[t]! > 0)) continue;
      tokens += 1;
      lp[t] = prox[t]!;
      if (o.anchor === 'decoupled') {
        const w = Math.exp(prox[t]! - logprobs[t]!);
        sumW += w;
        if (w > maxW) maxW = w;
        if (w > o.weightCap) {
          capped += 1;
          adv[t] = 0;
        } else adv[t] = advantages[t]! * w;
      }
    }
    return { ...datum, lossFnInputs: { ...datum.lossFnInputs, logprobs: lp, advantages: adv } };
  });
  const metrics: Metrics = { 'async/anchor_tokens': tokens };
  if (o.anchor === 'decoupled' && tokens > 0) {
    metrics['async/behaviour_weight_mean'] = sumW / tokens;
    metrics['async/behaviour_weight_max'] = maxW;
    metrics['async/behaviour_weight_capped_frac'] = capped / tokens;
  }
  return { data: out, metrics };
}
