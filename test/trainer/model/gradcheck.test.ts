// Numerical (central difference) vs analytic gradients of every loss through the whole model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { layoutOf, ModelConfig } from '../../../trainer/model/config';
import { backward, forward, initParams, targetLogprobs } from '../../../trainer/model/gpt';
import { lossFor } from '../../../trainer/model/losses';
import { Rng } from '../../../trainer/model/rng';
import { runBatch } from '../../../trainer/model/batch';
import { groupForPacking } from '../../../trainer/model/pack';
import type { LossFn } from '../../../trainer/engine';

const c: ModelConfig = { vocabSize: 258, contextLength: 12, dModel: 8, nLayers: 2, nHeads: 2, dFF: 12, dCopy: 4 };
const L = layoutOf(c);

/** Settings that put the RL losses' extra terms to work: a narrow cispo band (ratios on both sides), a large dro β. */
const CONFIG: Partial<Record<LossFn, Record<string, number>>> = {
  cispo: { clip_low_threshold: 0.8, clip_high_threshold: 1.2 },
  dro: { beta: 0.7 },
};

function setup(lossFn: LossFn) {
  const rng = new Rng('gradcheck', lossFn);
  const P = initParams(c, 'gc');
  // Larger weights than the init so every path (attention, copy head, LayerNorm) carries real signal.
  for (let i = 0; i < P.length; i++) P[i] += 0.3 * rng.normal();
  const T = 9;
  // Repeated tokens make the copy head's one-hot scatter hit the same logit from several positions.
  const input = Array.from({ length: T }, () => [65, 66, 67, 10, 256][rng.int(5)]);
  const target = Array.from({ length: T }, () => [65, 66, 67, 10, 257][rng.int(5)]);
  const inputs: Record<string, number[]> = { target_tokens: target };
  const cache0 = forward(c, L, P, input);
  const lp0 = targetLogprobs(c, cache0, target).lp;
  if (lossFn === 'cross_entropy') inputs.weights = target.map(() => rng.normal());
  else {
    // q around lp so ratios fall both inside and outside ppo's [0.8, 1.2] band.
    inputs.logprobs = Array.from(lp0, (x) => x + 0.5 * rng.normal());
    inputs.advantages = target.map((_, i) => (i < 2 ? 0 : rng.normal()));
  }
  const config = CONFIG[lossFn];
  // cispo's clipped ratio is under a stop-gradient, so its numerical gradient is that of −Σ w_t·lp_t·A_t with
  // w_t = clip(r_t) frozen at P (computed here independently of losses.ts).
  const frozen = lossFn === 'cispo'
    ? Array.from(lp0, (x, t) => Math.min(Math.max(Math.exp(x - inputs.logprobs[t]), 0.8), 1.2) * inputs.advantages[t])
    : null;
  const loss = (Q: Float64Array) => {
    const lp = targetLogprobs(c, forward(c, L, Q, input), target).lp;
    if (frozen) return -frozen.reduce((acc, w, t) => acc + w * lp[t], 0);
    return lossFor(lossFn, lp, inputs, config).loss;
  };
  return { P, input, target, inputs, config, lp0, loss };
}

for (const lossFn of ['cross_entropy', 'importance_sampling', 'ppo', 'cispo', 'dro'] as LossFn[]) {
  test(`gradient check: ${lossFn}`, () => {
    const { P, input, target, inputs, config, lp0, loss } = setup(lossFn);
    if (lossFn === 'cispo') {
      // Both sides of the band are exercised (at positions with an advantage).
      const r = Array.from(lp0, (x, t) => Math.exp(x - inputs.logprobs[t])).filter((_, t) => inputs.advantages[t] !== 0);
      assert.ok(r.some((x) => x < 0.8) && r.some((x) => x > 1.2) && r.some((x) => x > 0.8 && x < 1.2), `ratios ${r}`);
    }
    const G = new Float64Array(L.size);
    const cache = forward(c, L, P, input);
    const { lp, logp } = targetLogprobs(c, cache, target);
    const lv = lossFor(lossFn, lp, inputs, config);
    backward(c, L, P, cache, target, logp, lv.dlp, G);
    // Check a few coordinates of every tensor (embedding rows of tokens actually used).
    const idx: number[] = [];
    const rng = new Rng('pick', lossFn);
    const d = c.dModel;
    for (const tok of [65, 10, 256]) idx.push(L.wte + tok * d + rng.int(d), L.wprev + tok * d + rng.int(d));
    idx.push(L.wpe + 3 * d + 1, L.lnfg + 2, L.lnfb + 5, L.wout + 65 * d + 3, L.wcq + 7, L.wck + 11, L.cgain);
    for (const l of L.layers) {
      for (const [off, n] of [[l.ln1g, d], [l.ln1b, d], [l.wqkv, 3 * d * d], [l.wo, d * d], [l.ln2g, d], [l.ln2b, d],
        [l.w1, d * c.dFF], [l.b1, c.dFF], [l.w2, c.dFF * d], [l.b2, d]] as Array<[number, number]>) {
        idx.push(off + rng.int(n), off + rng.int(n));
      }
    }
    const h = 1e-5;
    let worst = 0;
    let nonzero = 0;
    for (const i of idx) {
      const Q = P.slice();
      Q[i] = P[i] + h;
      const up = loss(Q);
      Q[i] = P[i] - h;
      const down = loss(Q);
      const num = (up - down) / (2 * h);
      const err = Math.abs(num - G[i]) / Math.max(1e-3, Math.abs(num) + Math.abs(G[i]));
      worst = Math.max(worst, err);
      if (Math.abs(G[i]) > 1e-6) nonzero++;
    }
    assert.ok(worst < 1e-4, `${lossFn}: worst relative error ${worst}`);
    assert.ok(nonzero > idx.length / 2, `${lossFn}: only ${nonzero}/${idx.length} gradients are non-zero`);
  });
}

test('shared-prefix packing gives the same log-probs and gradients as separate sequences', () => {
  const P = initParams(c, 'pack');
  const rng = new Rng('pack');
  for (let i = 0; i < P.length; i++) P[i] += 0.3 * rng.normal();
  const prefix = [256, 65, 66, 10, 67];
  const seqs = [[68, 69, 70], [68, 65], [71, 71, 71, 65, 66], [68, 69, 70]].map((tail) => [...prefix, ...tail]);
  const items = seqs.map((s) => {
    const weights = s.slice(1).map(() => rng.normal());
    return { input: s.slice(0, -1), target: s.slice(1), loss: (lp: Float64Array) => lossFor('cross_entropy', lp, { weights }, undefined) };
  });
  const Gp = new Float64Array(L.size);
  const packed = runBatch(c, L, P, items, Gp);
  const Gs = new Float64Array(L.size);
  items.forEach((it, k) => {
    const cache = forward(c, L, P, it.input);
    const { lp, logp } = targetLogprobs(c, cache, it.target);
    assert.deepEqual(Array.from(packed.lps[k]), Array.from(lp)); // bit-identical forward
    backward(c, L, P, cache, it.target, logp, it.loss(lp).dlp, Gs);
  });
  let worst = 0;
  for (let i = 0; i < L.size; i++) worst = Math.max(worst, Math.abs(Gp[i] - Gs[i]) / (1e-6 + Math.abs(Gs[i])));
  assert.ok(worst < 1e-8, `worst relative gradient difference ${worst}`);
  assert.ok(groupForPacking(items.map((x) => x.input), items.map((x) => x.target), 4, 512).length === 1);
});
