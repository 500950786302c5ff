// cispo and dro through the real engine (local/tiny-test): each loss's gradient is dL/dlp_t pushed back through
// the model, so a forward_backward with it must move the weights exactly as cross_entropy does with weights
// w_t = −dL/dlp_t (cispo: clip(r_t)·A_t, dro: A_t − β(lp_t − q_t)), computed here from the forward logprobs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { UserError } from '../../../trainer/engine';
import { createEngine } from '../../../trainer/model';
import type { EngineDatum, LossFn } from '../../../trainer/engine';
import { lossFor } from '../../../trainer/model/losses';
import { Rng } from '../../../trainer/model/rng';
import { adam, params, prompt } from './fixtures/rl-hash';

const BASE = 'local/tiny-test';
const engine = createEngine({ dataDir: mkdtempSync(path.join(tmpdir(), 'agl-rl-losses-')) });

/** Four sampled completions; sampler logprobs shifted by noise so ratios spread over and beyond a clip band. */
async function rlData(): Promise<EngineDatum[]> {
  const m = await engine.createModel(BASE, { loraRank: 4, seed: 0 });
  const rng = new Rng('rl-losses-engine');
  const ob = prompt.length - 1;
  return m.snapshot().sample(prompt, { ...params, seed: 5 }, 4).map((s) => {
    const full = [...prompt, ...s.tokens];
    const n = full.length - 1;
    const adv = rng.normal();
    return {
      modelInput: full.slice(0, -1),
      lossFnInputs: {
        target_tokens: full.slice(1),
        logprobs: Array.from({ length: n }, (_, t) => (t < ob ? 0 : s.logprobs[t - ob]! + 0.4 * rng.normal())),
        advantages: Array.from({ length: n }, (_, t) => (t < ob ? 0 : adv)),
      },
    };
  });
}

const cases: [LossFn, Record<string, number>, (lp: number, q: number, a: number, cfg: Record<string, number>) => number][] = [
  ['cispo', { clip_low_threshold: 0.8, clip_high_threshold: 1.2 }, (lp, q, a, cfg) => Math.min(Math.max(Math.exp(lp - q), cfg.clip_low_threshold), cfg.clip_high_threshold) * a],
  ['dro', { beta: 0.5 }, (lp, q, a, cfg) => a - cfg.beta * (lp - q)],
];

for (const [lossFn, cfg, weightOf] of cases) {
  test(`${lossFn} through the engine: loss:sum as the formula, and the same step as cross_entropy with weights −dL/dlp`, async () => {
    const data = await rlData();
    const a = await engine.createModel(BASE, { loraRank: 4, seed: 0 });
    const b = await engine.createModel(BASE, { loraRank: 4, seed: 0 });
    const out = a.forwardBackward(data, lossFn, cfg, false);
    const expected = data.reduce((acc, d, i) => acc + lossFor(lossFn, out.lossFnOutputs[i].logprobs, d.lossFnInputs, cfg).loss, 0);
    assert.equal(out.metrics['loss:sum'], expected);
    if (lossFn === 'cispo') {
      const r = data.flatMap((d, i) => out.lossFnOutputs[i].logprobs.flatMap((x, t) => (d.lossFnInputs.advantages[t] === 0 ? [] : [Math.exp(x - d.lossFnInputs.logprobs[t])])));
      assert.ok(r.some((x) => x < 0.8) && r.some((x) => x > 1.2), 'ratios on both sides of the band');
    }
    const ce = data.map((d, i): EngineDatum => {
      const { target_tokens, logprobs: q, advantages: adv } = d.lossFnInputs;
      const lp = out.lossFnOutputs[i].logprobs;
      return { modelInput: d.modelInput, lossFnInputs: { target_tokens, weights: lp.map((x, t) => (adv[t] === 0 ? 0 : weightOf(x, q[t], adv[t], cfg))) } };
    });
    b.forwardBackward(ce, 'cross_entropy', undefined, false);
    a.optimStep(adam);
    b.optimStep(adam);
    assert.equal(a.weightsHash(), b.weightsHash());
    // The setting matters: the default one gives another step.
    const c = await engine.createModel(BASE, { loraRank: 4, seed: 0 });
    c.forwardBackward(data, lossFn, undefined, false);
    c.optimStep(adam);
    assert.notEqual(c.weightsHash(), a.weightsHash());
  });
}

test('a loss_fn_config key the loss does not read is a UserError naming it, and changes nothing', async () => {
  const data = await rlData();
  const m = await engine.createModel(BASE, { loraRank: 4, seed: 0 });
  const h = m.weightsHash();
  const bad = (lossFn: LossFn, cfg: Record<string, number>, re: RegExp) =>
    assert.throws(() => m.forwardBackward(data, lossFn, cfg, false), (e: unknown) => e instanceof UserError && re.test(e.message));
  bad('dro', { clip_low_threshold: 0.5 }, /loss_fn_config\.clip_low_threshold is not a setting of dro; dro takes beta/);
  bad('cispo', { beta: 0.1 }, /loss_fn_config\.beta is not a setting of cispo; cispo takes clip_low_threshold, clip_high_threshold/);
  bad('importance_sampling', { beta: 0.1 }, /importance_sampling takes no loss_fn_config/);
  bad('ppo', { clip_high_threshold: Infinity }, /clip_high_threshold must be a finite number/);
  assert.throws(() => m.forwardBackward(data, 'gspo' as never, undefined, false), /supported: cross_entropy, importance_sampling, ppo, cispo, dro/);
  m.optimStep({ ...adam, learningRate: 0, weightDecay: 0 });
  assert.equal(m.weightsHash(), h);
});
