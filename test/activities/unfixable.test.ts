// Which errors end an activity for good: the real trainer's refusal of a datum (what wedged trainStep for ever on
// a reward of 1e308), refused credentials, a store's 4xx and a config error are non-retryable ApplicationFailures
// naming their cause; a trainer that lost a model (404), a conflict (409), 5xx and timeouts stay retryable.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { failingUnfixably, refusedByTrainer, unfixableCause } from '../../activities/unfixable';
import { ConfigError } from '../../config/errors';
import { StoreHttpError } from '../../store/client';
import { ServiceClient } from '../../tinker';
import { TinkerApiError } from '../../tinker/errors';
import type { TrainerServer } from '../../trainer/server/server';
import { startTestTrainer, TEST_MODEL } from '../tinker/helpers';

let trainer: TrainerServer;
before(async () => {
  trainer = await startTestTrainer({ dataDir: mkdtempSync(path.join(process.env.AGL_TEST_SCRATCH ?? os.tmpdir(), 'agl-unfixable-')), port: 0 });
});
after(async () => {
  await trainer?.close();
});

test('the real trainer refusing an advantage beyond float32 is recognised as a refusal of the data', async () => {
  const sc = new ServiceClient({ baseUrl: trainer.url });
  try {
    const tc = await sc.createLoraTrainingClient(TEST_MODEL, { rank: 4, seed: 1 });
    const tokens = [...Buffer.from('hello there')];
    const datum = {
      modelInput: tokens.slice(0, -1),
      lossFnInputs: { target_tokens: tokens.slice(1), logprobs: tokens.slice(1).map(() => -1), advantages: tokens.slice(1).map(() => 7.5e307) },
    };
    const err = await tc.forwardBackward([datum], 'importance_sampling').then(() => null, (e: unknown) => e);
    assert.ok(err, 'the trainer refuses the datum');
    assert.match(refusedByTrainer(err) ?? '', /finite/, String(err));
    assert.equal(unfixableCause(err)?.type, 'TrainerRefused');
  } finally {
    await sc.close();
  }
});

test('refusals and config errors are unfixable; lost models, conflicts, 5xx and timeouts are not', () => {
  assert.equal(unfixableCause(new TinkerApiError(401, '/x', 'invalid key'))?.type, 'TrainerCredentials');
  assert.equal(unfixableCause(new StoreHttpError(422, 'http://s/v1/agl/spans', 'reward beyond'))?.type, 'StoreRefused');
  assert.equal(unfixableCause(new ConfigError('run config', ['modelName: nope']))?.type, 'InvalidRunConfig');
  for (const retryable of [new TinkerApiError(404, '/x', 'unknown model_id'), new TinkerApiError(409, '/x', 'seq'), new TinkerApiError(503, '/x', ''),
    new StoreHttpError(507, 'http://s', 'disk full'), new Error('socket hang up')]) {
    assert.equal(unfixableCause(retryable), null, retryable.message);
  }
});

test('an activity wrapped by failingUnfixably throws a non-retryable failure that names the activity and the cause', async () => {
  const env = new MockActivityEnvironment();
  const refused = failingUnfixably('trainStep', async () => {
    throw new TinkerApiError(400, '/forward_backward', 'loss_fn_inputs.advantages[3] is not a finite number');
  });
  const err = await env.run(refused).then(() => null, (e: unknown) => e);
  assert.ok(err instanceof ApplicationFailure && err.nonRetryable);
  assert.equal(err.type, 'TrainerRefused');
  assert.match(err.message, /^trainStep: Tinker \/forward_backward answered HTTP 400: loss_fn_inputs\.advantages\[3\] is not a finite number/);
  const flaky = failingUnfixably('collectRollouts', async () => {
    throw new StoreHttpError(503, 'http://s', 'restarting');
  });
  assert.ok((await env.run(flaky).then(() => null, (e: unknown) => e)) instanceof StoreHttpError, 'left for Temporal to retry');
});
