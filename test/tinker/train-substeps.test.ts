// trainStep's substep loop (activities/train-substeps.ts) submits as the cookbook's train_step does: both
// substeps' forward_backward and optim_step go out before any result is read. A proxy holds every
// retrieve_future until the four submits have arrived (at most 10 s): a loop that waited for a result before
// submitting the next request would be held to the timeout, which the test reports. The pipelined loop trains
// exactly as the same calls made one after another.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceClient } from '../../tinker';
import { trainSubsteps } from '../../activities/train-substeps';
import { forwardBackwardRequestFromProto } from '../../tinker/wire/codec';
import type { TrainerServer } from '../../trainer/server/server';
import { TEST_MODEL, startTestTrainer, tempDir, textDatum } from './helpers';
import { startRecordingProxy, type Recorded } from './recording-proxy';

const substeps = [[textDatum('Hello, world!\n'), textDatum('Hello there.\n')], [textDatum('One more line.\n')]];
const adam = { learningRate: 0.05, beta1: 0.9, beta2: 0.95, eps: 1e-8 };
const tmp = tempDir('tinker-substeps-');
let trainer: TrainerServer;

before(async () => {
  trainer = await startTestTrainer({ dataDir: tmp.dir });
});
after(async () => {
  await trainer.close();
  tmp.remove();
});

const isSubmit = (r: Recorded) => r.method === 'POST' && (r.path === '/forward_backward' || r.path === '/optim_step');

test('both substeps are submitted before any result is read, and train as sequential calls do', async () => {
  const proxy = await startRecordingProxy(trainer.url);
  const sc = new ServiceClient({ baseUrl: proxy.url, apiKey: 'tml-substeps' });
  const plain = new ServiceClient({ baseUrl: trainer.url, apiKey: 'tml-substeps' });
  try {
    const tc = await sc.createLoraTrainingClient(TEST_MODEL, { rank: 4, seed: 9 });
    const firstPoll = proxy.records.length;
    proxy.gate({ path: '/retrieve_future', open: (rs) => rs.filter(isSubmit).length >= 4, timeoutMs: 10_000 });
    let afterFb = 0;
    const piped = await trainSubsteps(tc, substeps, { lossFn: 'cross_entropy', adam, waitFor: (_w, p) => p, afterForwardBackward: () => afterFb++ });
    const polls = proxy.records.slice(firstPoll).filter((r) => r.path === '/retrieve_future');
    assert.ok(polls.length >= 4 && polls.every((r) => !r.gateTimedOut), 'no result was waited for before all four submits');
    const order = proxy.records.filter(isSubmit).map((r) => (r.path === '/optim_step' ? `optim#${JSON.parse(r.body.toString()).seq_id}` : `fb#${forwardBackwardRequestFromProto(r.body).seqId}`));
    assert.deepEqual(order, ['fb#1', 'optim#2', 'fb#3', 'optim#4']);
    assert.equal(afterFb, 2);

    // The same calls, one after another, on an identical model.
    const ref = await plain.createLoraTrainingClient(TEST_MODEL, { rank: 4, seed: 9 });
    const logprobs: number[][] = [];
    let optimMetrics = {};
    for (const chunk of substeps) {
      logprobs.push(...(await ref.forwardBackward(chunk, 'cross_entropy')).lossFnOutputs.map((o) => o.logprobs));
      optimMetrics = await ref.optimStep(adam);
    }
    assert.deepEqual(piped.trainingLogprobs, logprobs);
    assert.deepEqual(piped.optimMetrics, optimMetrics);
    assert.ok('grad_norm:mean' in piped.optimMetrics);
  } finally {
    await sc.close();
    await plain.close();
    await proxy.close();
  }
});

const isSave = (r: Recorded) => r.method === 'POST' && (r.path === '/save_weights' || r.path === '/save_weights_for_sampler');

test('saves submitted in afterLastSubmit go out before any result is read and save the updated weights', async () => {
  const proxy = await startRecordingProxy(trainer.url);
  const sc = new ServiceClient({ baseUrl: proxy.url, apiKey: 'tml-substeps' });
  try {
    const tc = await sc.createLoraTrainingClient(TEST_MODEL, { rank: 4, seed: 9 });
    const initial = (await tc.getInfo()).weightsHash;
    const firstPoll = proxy.records.length;
    proxy.gate({ path: '/retrieve_future', open: (rs) => rs.filter(isSubmit).length + rs.filter(isSave).length >= 4, timeoutMs: 10_000 });
    let saves: Promise<string>[] = [];
    await trainSubsteps(tc, [substeps[0]!], {
      lossFn: 'cross_entropy',
      adam,
      waitFor: (_w, p) => p,
      afterLastSubmit: () => (saves = [tc.saveState('step-1'), tc.saveWeightsForSampler('step-1')]),
    });
    const [statePath] = await Promise.all(saves);
    const polls = proxy.records.slice(firstPoll).filter((r) => r.path === '/retrieve_future');
    assert.ok(polls.length >= 4 && polls.every((r) => !r.gateTimedOut), 'no result was waited for before the saves were submitted');
    const order = proxy.records.filter((r) => isSubmit(r) || isSave(r)).map((r) => r.path);
    assert.deepEqual(order, ['/forward_backward', '/optim_step', '/save_weights', '/save_weights_for_sampler']);
    const after = (await tc.getInfo()).weightsHash;
    assert.notEqual(after, initial, 'the step changed the weights');
    assert.equal((await sc.weightsInfo(statePath!)).weightsHash, after, 'the state saved is the one after the optim_step');
  } finally {
    await sc.close();
    await proxy.close();
  }
});
