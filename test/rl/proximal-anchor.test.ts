import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anchorAtProximal } from '../../rl/proximal-anchor';
import { ppo, importanceSampling } from '../../trainer/model/losses';
import type { Datum } from '../../rl/types';

// Prompt position 0, action positions 1..3; the sampler's logprobs q, the proximal policy's p.
const q = [0, -1, -2, -0.5];
const p = [-3.1, -0.5, -2.5, -0.5 + Math.log(6)];
const datum: Datum = {
  modelInput: [1, 2, 3, 4],
  lossFnInputs: { target_tokens: [2, 3, 4, 5], logprobs: q, advantages: [0, 1, -1, 2], mask: [0, 1, 1, 1] },
};
const near = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-12, `${what}: ${a} vs ${b}`);

test('recompute: action logprobs become the proximal policy\'s, advantages and the prompt position stay', () => {
  const { data, metrics } = anchorAtProximal([datum], [p], { anchor: 'recompute', weightCap: 5 });
  const out = data[0]!.lossFnInputs;
  assert.deepEqual(out.logprobs, [0, p[1], p[2], p[3]]);
  assert.deepEqual(out.advantages, [0, 1, -1, 2]);
  assert.deepEqual(out.mask, [0, 1, 1, 1]);
  assert.equal(metrics['async/anchor_tokens'], 3);
  assert.deepEqual(datum.lossFnInputs.logprobs, q, 'the input datum is not changed');
});

test('decoupled: advantages weighted by p/q, a token above the cap left out', () => {
  const { data, metrics } = anchorAtProximal([datum], [p], { anchor: 'decoupled', weightCap: 5 });
  const adv = data[0]!.lossFnInputs.advantages;
  near(adv[1]!, Math.exp(0.5), 'w = e^0.5');
  near(adv[2]!, -Math.exp(-0.5), 'w = e^-0.5, negative advantage');
  assert.equal(adv[3], 0, 'w = 6 > cap 5: left out');
  near(metrics['async/behaviour_weight_capped_frac']!, 1 / 3, 'capped share');
  near(metrics['async/behaviour_weight_max']!, 6, 'max weight');
});

test('decoupled ppo at the proximal policy has the gradient of importance sampling against the sampler', () => {
  // One substep: the learner's logprobs equal the proximal ones, so r = 1 and no clip is active; what is left is
  // w·A·∇lp, which is what unclipped importance sampling against q gives. A cap high enough keeps every token.
  const { data } = anchorAtProximal([datum], [p], { anchor: 'decoupled', weightCap: 100 });
  const anchored = data[0]!.lossFnInputs;
  const viaPpo = ppo(p, anchored.logprobs, anchored.advantages, 0.8, 1.2).dlp;
  const viaIs = importanceSampling(p, q, datum.lossFnInputs.advantages).dlp;
  for (let t = 1; t < 4; t++) near(viaPpo[t]!, viaIs[t]!, `token ${t}`);
  // Against the sampler, ppo clips token 3 (r = 6 > 1.2 with A > 0): its gradient is zero there.
  assert.equal(ppo(p, q, datum.lossFnInputs.advantages, 0.8, 1.2).dlp[3], 0);
});

test('a proximal score list of the wrong length is an error naming the datum', () => {
  assert.throws(() => anchorAtProximal([datum], [[0, 1]], { anchor: 'recompute', weightCap: 5 }), /datum 0 has 4 target positions, the proximal policy scored 2/);
});
