// The RL losses and their loss_fn_config over the wire, both formats: the client's config reaches the loss (the
// server's loss:sum is the formula with it, not with the defaults), and a key the loss does not read is a 400
// naming it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceClient, TinkerApiError, type Datum, type LossFn, type TrainingClient } from '../../tinker';
import type { TrainerServer } from '../../trainer/server/server';
import { lossFor } from '../../trainer/model/losses';
import { TEST_MODEL, startTestTrainer, tempDir } from './helpers';

const tokens = [...Buffer.from('Hello there, tinker. I am 42.\n')];
const n = tokens.length - 1;
const datum: Datum = {
  modelInput: tokens.slice(0, -1),
  lossFnInputs: {
    target_tokens: tokens.slice(1),
    // Far from the model's log-probs, so ratios leave every clip band and dro's β term is large.
    logprobs: Array.from({ length: n }, (_, t) => (t < 6 ? 0 : -1 - 0.2 * (t % 7))),
    advantages: Array.from({ length: n }, (_, t) => (t < 6 ? 0 : t % 2 ? 0.5 : -1)),
  },
};

const configured: [LossFn, Record<string, number>][] = [
  ['ppo', { clip_low_threshold: 0.5, clip_high_threshold: 1.5 }],
  ['cispo', { clip_low_threshold: 0.9, clip_high_threshold: 1.1 }],
  ['dro', { beta: 0.5 }],
];

for (const wire of ['proto', 'json'] as const) {
  describe(`RL losses over ${wire}`, () => {
    const tmp = tempDir('tinker-rl-losses-');
    let server: TrainerServer;
    let service: ServiceClient;
    let tc: TrainingClient;

    before(async () => {
      server = await startTestTrainer({ dataDir: tmp.dir });
      service = new ServiceClient({ baseUrl: server.url, apiKey: 'tml-local', wire, futureTimeoutMs: 60_000 });
      tc = await service.createLoraTrainingClient(TEST_MODEL, { rank: 4, seed: 1 });
    });
    after(async () => {
      await service.close();
      await server.close();
      tmp.remove();
    });

    for (const [lossFn, cfg] of configured) {
      test(`${lossFn}: loss_fn_config reaches the loss`, async () => {
        const withCfg = await tc.forward([datum], lossFn, cfg);
        const lp = withCfg.lossFnOutputs[0].logprobs;
        const expected = lossFor(lossFn, lp, datum.lossFnInputs, cfg).loss;
        // float32 on the wire (logprobs, advantages): compare loosely.
        assert.ok(Math.abs(withCfg.metrics['loss:sum'] - expected) < 1e-4 * (1 + Math.abs(expected)), `${withCfg.metrics['loss:sum']} vs ${expected}`);
        const plain = await tc.forward([datum], lossFn);
        assert.ok(Math.abs(plain.metrics['loss:sum'] - withCfg.metrics['loss:sum']) > 1e-3, 'the config changes the loss');
        const fb = await tc.forwardBackward([datum], lossFn, cfg);
        assert.equal(fb.metrics['loss:sum'], withCfg.metrics['loss:sum']);
        await tc.optimStep({ learningRate: 0 });
      });
    }

    test('a loss_fn_config key the loss does not read is a 400 naming the key and the ones it takes', async () => {
      const rejects = (lossFn: LossFn, cfg: Record<string, number>, re: RegExp) =>
        assert.rejects(tc.forwardBackward([datum], lossFn, cfg), (err: unknown) => err instanceof TinkerApiError && err.status === 400 && re.test(err.message));
      await rejects('dro', { clip_high_threshold: 2 }, /loss_fn_config\.clip_high_threshold is not a setting of dro; dro takes beta/);
      await rejects('ppo', { beta: 0.1 }, /loss_fn_config\.beta is not a setting of ppo; ppo takes clip_low_threshold, clip_high_threshold/);
      await rejects('importance_sampling', { clip_low_threshold: 0.9 }, /importance_sampling takes no loss_fn_config/);
      // The model goes on.
      assert.equal(typeof (await tc.forward([datum], 'dro', { beta: 0.1 })).metrics['loss:sum'], 'number');
    });
  });
}
