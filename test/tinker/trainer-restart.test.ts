// A trainer killed with SIGKILL and restarted on the same data dir still serves what was saved: training
// checkpoints load into new models, saved sampler weights open as sampling sessions, and sampling sessions
// created from a path keep their ids. Live models are gone and say so as a user error.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startProcess, type ManagedProcess } from '../../common/processes';
import { ServiceClient, TinkerApiError } from '../../tinker';
import { TEST_MODEL, tempDir, textDatum } from './helpers';

const ROOT = path.resolve(__dirname, '..', '..');
const tmp = tempDir('tinker-restart-');
const procs: ManagedProcess[] = [];

async function startTrainer(): Promise<string> {
  const p = await startProcess({
    name: 'trainer',
    command: process.execPath,
    args: ['--import', 'tsx', 'trainer/main.ts', '--port', '0', '--data', tmp.dir],
    cwd: ROOT,
    readyLine: /trainer listening on (http:\/\/\S+)/,
  });
  procs.push(p);
  return p.match![1];
}

after(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  tmp.remove();
});

test('checkpoints and sampler weights survive kill -9 of the trainer', { timeout: 120_000 }, async () => {
  const batch = [textDatum('Hello, world!\n')];
  const first = new ServiceClient({ baseUrl: await startTrainer(), apiKey: 'tml-local', futureTimeoutMs: 30_000 });
  const tc = await first.createLoraTrainingClient(TEST_MODEL, { seed: 4 });
  await tc.forwardBackward(batch, 'cross_entropy');
  await tc.optimStep({ learningRate: 0.1 });
  const statePath = await tc.saveState('step-1');
  const samplerPath = await tc.saveWeightsForSampler('step-1');
  const loss = (await tc.forward(batch, 'cross_entropy')).metrics['loss:sum'];
  const sampler = await first.createSamplingClient({ modelPath: samplerPath });
  const prompt = [...Buffer.from('Hi')];
  const params = { maxTokens: 5, seed: 3 };
  const sampled = await sampler.sample(prompt, 2, params);
  await first.close();

  procs[0].kill9();
  await procs[0].exited;

  const second = new ServiceClient({ baseUrl: await startTrainer(), apiKey: 'tml-local', futureTimeoutMs: 30_000 });
  const resumed = await second.createTrainingClientFromState(statePath, { withOptimizer: true });
  assert.equal((await resumed.forward(batch, 'cross_entropy')).metrics['loss:sum'], loss);

  const reopened = await second.createSamplingClient({ modelPath: samplerPath });
  assert.deepEqual(await reopened.sample(prompt, 2, params), sampled);
  // The sampling session id from before the crash still works.
  assert.deepEqual(await second.samplingClient(sampler.samplingSessionId).sample(prompt, 2, params), sampled);

  const gone = await second.attachTrainingClient(tc.modelId).then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.ok(gone instanceof TinkerApiError && gone.status === 404 && /do not survive a trainer restart/.test(gone.body), String(gone));
  await second.close();
});
