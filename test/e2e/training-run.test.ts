// The whole thing, for real: Temporal dev server, store, local trainer, proxy, worker and example runners as
// separate processes, a short hello run through the trainingRun workflow, and what it leaves on disk. The run is
// the hello example's (its model, LoRA rank, learning rate and 16 x 4 batches), three batches of it, and it must
// learn: the train reward of its later steps above its first step's by a margin (its metrics.jsonl). How far it gets
// in the example's 20 batches is a benchmark figure (npm run bench -- first-start), not asserted here.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import type { Stack } from '../../dev/stack';
import { localRunConfig, startTestStack } from '../helpers/local-run';
import { readJsonl, runPaths } from '../../records/run-files';
import { startOrAttach } from '../../cli/run-commands';
import { progressQuery } from '../../workflows/messages';

/** agents/examples/hello.run.json's model and training settings. */
const HELLO = { modelName: 'local/tiny-hello', loraRank: 8, learningRate: 3e-3 };
const BATCH_SIZE = 16;
const GROUP_SIZE = 4;
/** How far the later steps' mean train reward must be above the first step's (measured: see the test). */
const LEARNED_MARGIN = 0.1;

let stack: Stack | undefined;
let client: Client;
let dataDir = '';
let taskQueue = '';

before(async () => {
  ({ stack, dataDir, taskQueue } = await startTestStack('e2e', { initialModel: HELLO.modelName }));
  client = new Client({ connection: await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' }) });
});

after(async () => {
  await stack?.stop();
});

test('a short hello run trains through every phase and leaves the cookbook files', { timeout: 600_000 }, async () => {
  const cfg = localRunConfig(stack!, dataDir, 'e2e', {
    ...HELLO,
    evalEvery: 2,
    saveEvery: 2,
    datasetBuilder: { batchSize: BATCH_SIZE, groupSize: GROUP_SIZE, trainDataset: Array.from({ length: 3 * BATCH_SIZE }, (_, i) => String(i)), valDataset: ['500', '501'] },
  });
  const logPath = cfg.logPath;
  const run = await startOrAttach(client, taskQueue, cfg);
  const result = await run.handle.result();
  assert.equal(result.numBatches, 3);
  assert.equal(result.batchesCompleted, 3);
  assert.equal(result.finalCheckpoint, 'final');

  const metrics = readJsonl(runPaths(logPath).metrics);
  assert.deepEqual(metrics.map((m) => m.step), [0, 1, 2], 'one metrics row per batch');
  for (const m of metrics) {
    assert.equal(m['env/all/total_episodes'], BATCH_SIZE * GROUP_SIZE, 'batchSize x groupSize rollouts per batch');
    assert.ok((m['env/all/total_ac_tokens'] as number) > 0, 'the trainer saw sampled tokens from the proxy spans');
    assert.equal(m['train/skipped_empty_batch'], 0, 'every batch trained');
    assert.equal(typeof m['env/all/reward/total'], 'number');
    assert.equal(m['env/all/by_group/frac_status_succeeded'], 1);
  }
  assert.equal(typeof metrics[0]!['test/env/all/reward/total'], 'number', 'evaluation at batch 0');
  assert.equal(metrics[1]!['test/env/all/reward/total'], undefined, 'no evaluation at batch 1');
  assert.equal(typeof metrics[2]!['test/env/all/reward/total'], 'number', 'evaluation at batch 2');
  // It learns: the steps after the first sample from trained weights and say "I am N" more often.
  const rewards = metrics.map((m) => m['env/all/reward/total'] as number);
  const later = rewards.slice(1).reduce((a, b) => a + b, 0) / (rewards.length - 1);
  assert.ok(later > rewards[0]! + LEARNED_MARGIN, `train reward per step ${rewards.map((r) => r.toFixed(3)).join(' ')}: the later steps' mean ${later.toFixed(3)} is not above the first step's ${rewards[0]!.toFixed(3)} by ${LEARNED_MARGIN}`);

  const checkpoints = readJsonl(runPaths(logPath).checkpoints);
  assert.deepEqual(checkpoints.map((c) => c.name), ['000002', 'final']);
  assert.match(String(checkpoints[1]!.state_path), /^tinker:\/\/.+\/weights\/000003$/);
  assert.equal(checkpoints[1]!.batch, 3);

  const progress = await run.handle.query(progressQuery).catch(() => null);
  if (progress) assert.equal(progress.phase, 'done');
});
