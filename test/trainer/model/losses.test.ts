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
