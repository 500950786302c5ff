import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crossEntropy, importanceSampling, lossFor, ppo } from '../../../trainer/model/losses';
import { adamwStep, newAdamState } from '../../../trainer/model/adamw';

const close = (a: number, b: number, tol = 1e-9) => assert.ok(Math.abs(a - b) < tol, `${a} != ${b}`);

test('cross_entropy is −Σ w·lp (a sum, weights may be any reals)', () => {
  const v = crossEntropy([-1, -2, -0.5], [1, 0, -2]);
  close(v.loss, 1 - 1);
  assert.deepEqual(Array.from(v.dlp), [-1, -0, 2]);
});

test('importance_sampling matches the worked example of tinker-protocol.md §A.4b', () => {
  const lp = [-2.1, -0.7, -0.12, -0.19, -1.3, -0.28];
  const q = [0, 0, -0.1, -0.2, 0, -0.3];
  const a = [0, 0, 0.5, 0.5, 0, 0.5];
  const v = importanceSampling(lp, q, a);
  close(v.loss, -0.5 * (Math.exp(-0.02) + Math.exp(0.01) + Math.exp(0.02)));
  close(v.dlp[2], -0.5 * Math.exp(-0.02));
  assert.equal(v.dlp[0], 0);
});

test('ppo clips the ratio to [lo, hi] pessimistically, with the 0.8 / 1.2 defaults', () => {
  const lp = [Math.log(1.5), Math.log(1.5), Math.log(0.5), Math.log(0.5), Math.log(1.1)];
  const q = [0, 0, 0, 0, 0];
  const a = [1, -1, 1, -1, 2];
  const v = lossFor('ppo', lp, { target_tokens: [0, 0, 0, 0, 0], logprobs: q, advantages: a }, undefined);
  // A>0, r=1.5 → clipped 1.2 (no grad); A<0, r=1.5 → unclipped −1.5; A>0, r=0.5 → unclipped 0.5;
  // A<0, r=0.5 → clipped −0.8 (no grad); inside the band → r·A.
  close(v.loss, -(1.2 - 1.5 + 0.5 - 0.8 + 2.2));
  close(v.dlp[0], 0);
  close(v.dlp[1], 1.5);
  close(v.dlp[2], -0.5);
  close(v.dlp[3], 0);
  close(v.dlp[4], -2.2);
  const wide = ppo(lp, q, a, 0.1, 10);
  close(wide.loss, importanceSampling(lp, q, a).loss);
  const cfg = lossFor('ppo', lp, { target_tokens: [0, 0, 0, 0, 0], logprobs: q, advantages: a }, { clip_low_threshold: 0.1, clip_high_threshold: 10 });
  close(cfg.loss, wide.loss);
});

test('AdamW: first step moves each weight by lr·sign(g) (bias-corrected), plus decoupled weight decay', () => {
  const P = new Float64Array([1, -1, 0.5]);
  const G = new Float64Array([0.3, -2, 0]);
  const st = newAdamState(3);
  adamwStep(P, G, st, { learningRate: 0.1, beta1: 0.9, beta2: 0.95, eps: 1e-12, weightDecay: 0.5, gradClipNorm: 0 });
  close(P[0], 1 * (1 - 0.05) - 0.1, 1e-9);
  close(P[1], -1 * (1 - 0.05) + 0.1, 1e-9);
  close(P[2], 0.5 * (1 - 0.05), 1e-9);
  assert.equal(st.step, 1);
});

test('AdamW: grad_clip_norm scales the gradient to the norm when it is larger', () => {
  const G = new Float64Array([3, 4]);
  const st = newAdamState(2);
  const out = adamwStep(new Float64Array(2), G, st, { learningRate: 0, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 });
  close(out.gradNorm, 5);
  close(Math.hypot(G[0], G[1]), 1, 1e-6);
});

test('cispo weights lp·A by the clipped ratio, held constant: every token keeps a gradient', () => {
  const lp = [-0.3, Math.log(5), Math.log(0.5), Math.log(2), -1];
  const q = [0, 0, 0, 0, -1];
  const a = [1, 1, -1, -2, 0];
  const inputs = { target_tokens: [0, 0, 0, 0, 0], logprobs: q, advantages: a };
  // Defaults lo 0, hi 4: r = 5 is clipped to 4 (still a gradient, unlike ppo); the rest are inside.
  const v = lossFor('cispo', lp, inputs, undefined);
  const w = [Math.exp(-0.3), 4, 0.5, 2, 0];
  close(v.loss, -(w[0] * lp[0] * 1 + w[1] * lp[1] * 1 + w[2] * lp[2] * -1 + w[3] * lp[3] * -2));
  for (let t = 0; t < 4; t++) close(v.dlp[t], -w[t] * a[t]);
  assert.equal(v.dlp[4], 0, 'A = 0: a prompt position, skipped');
  // loss_fn_config moves the band; per-token inputs win over it.
  const cfg = lossFor('cispo', lp, inputs, { clip_low_threshold: 0.8, clip_high_threshold: 1.2 });
  [-0.8, -1.2, 0.8, 2.4].forEach((g, t) => close(cfg.dlp[t], g)); // r: 0.74 → 0.8, 5 → 1.2, 0.5 → 0.8, 2 → 1.2
  const perToken = lossFor('cispo', lp, { ...inputs, clip_low_threshold: [0, 0, 0.9, 0, 0], clip_high_threshold: [9, 9, 9, 1.5, 9] },
    { clip_low_threshold: 0.8, clip_high_threshold: 1.2 });
  close(perToken.dlp[1], -5);
  close(perToken.dlp[2], 0.9);
  close(perToken.dlp[3], 3);
});

test('dro is −Σ [lp·A − ½β(lp − q)²] with β from loss_fn_config (default 0.05)', () => {
  const lp = [-0.5, -1.5, -2, -0.1];
  const q = [-0.7, -1.0, 0, -0.1];
  const a = [1, -0.5, 0, 2];
  const inputs = { target_tokens: [0, 0, 0, 0], logprobs: q, advantages: a };
  const term = (t: number, beta: number) => lp[t] * a[t] - 0.5 * beta * (lp[t] - q[t]) ** 2;
  const v = lossFor('dro', lp, inputs, undefined);
  close(v.loss, -(term(0, 0.05) + term(1, 0.05) + term(3, 0.05)));
  close(v.dlp[0], -1 + 0.05 * 0.2);
  close(v.dlp[1], 0.5 + 0.05 * -0.5);
  assert.equal(v.dlp[2], 0, 'A = 0 (prompt, q a 0.0 placeholder): no β pull towards lp = 0');
  close(v.dlp[3], -2);
  const b = lossFor('dro', lp, inputs, { beta: 2 });
  close(b.loss, -(term(0, 2) + term(1, 2) + term(3, 2)));
  close(b.dlp[1], 0.5 + 2 * -0.5);
});

test('cispo and dro: dL/dlp matches central differences of the loss (cispo with its ratio weight held, as sg does)', () => {
  const lp = [-0.4, -1.2, -0.05, -2.5, -0.9];
  const q = [-0.9, -0.2, -0.1, -0.6, -0.9];
  const a = [0.7, -1.3, 2, 0.4, -0.2];
  const inputs = { target_tokens: [0, 0, 0, 0, 0], logprobs: q, advantages: a };
  const h = 1e-6;
  for (const [lossFn, config] of [['dro', { beta: 0.3 }], ['cispo', { clip_low_threshold: 0.8, clip_high_threshold: 1.2 }]] as const) {
    const v = lossFor(lossFn, lp, inputs, config);
    for (let t = 0; t < lp.length; t++) {
      const at = (x: number) => {
        const moved = lp.slice();
        moved[t] = x;
        if (lossFn === 'dro') return lossFor('dro', moved, inputs, config).loss;
        // sg(clip(r)) is a constant: evaluate the loss with the ratio of the unmoved lp.
        const w = Math.min(Math.max(Math.exp(lp[t] - q[t]), 0.8), 1.2);
        return -w * x * a[t];
      };
      close(v.dlp[t], (at(lp[t] + h) - at(lp[t] - h)) / (2 * h), 1e-6);
    }
  }
});
