// AdamW as torch.optim.AdamW computes it (decoupled weight decay, bias-corrected moments), with
// optional global-norm gradient clipping first (torch.nn.utils.clip_grad_norm_).
import type { AdamParams } from '../engine';

export interface AdamState {
  m: Float64Array;
  v: Float64Array;
  step: number;
}

export function newAdamState(n: number): AdamState {
  return { m: new Float64Array(n), v: new Float64Array(n), step: 0 };
}

export function gradNorm(G: Float64Array): number {
  let s = 0;
  for (let i = 0; i < G.length; i++) s += G[i] * G[i];
  return Math.sqrt(s);
}

/** Updates P and state in place from gradients G (G is clipped in place when clipping is on). */
export function adamwStep(P: Float64Array, G: Float64Array, st: AdamState, hp: AdamParams): { gradNorm: number } {
  const norm = gradNorm(G);
  if (hp.gradClipNorm > 0 && norm > hp.gradClipNorm) {
    const k = hp.gradClipNorm / (norm + 1e-6);
    for (let i = 0; i < G.length; i++) G[i] *= k;
  }
  st.step += 1;
  const { learningRate: lr, beta1: b1, beta2: b2, eps, weightDecay: wd } = hp;
  const bc1 = 1 - Math.pow(b1, st.step);
  const bc2 = 1 - Math.pow(b2, st.step);
  const decay = 1 - lr * wd;
  const { m, v } = st;
  for (let i = 0; i < P.length; i++) {
    const g = G[i];
    m[i] = b1 * m[i] + (1 - b1) * g;
    v[i] = b2 * v[i] + (1 - b2) * g * g;
    const denom = Math.sqrt(v[i] / bc2) + eps;
    P[i] = P[i] * decay - lr * (m[i] / bc1) / denom;
  }
  return { gradNorm: norm };
}
