// A synchronous batch by reference: collectRollouts returns the same few hundred bytes for 4 rollouts as for 128
// (what the workflow keeps in history), trainStep's reading of the reference gives every rollout in task and
// member order, and a retried collection picks its rollouts up by their key prefix instead of making more.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { collectRollouts } from '../../activities/collect-rollouts';
import { groupsOf } from '../../activities/batch-ref';
import { prepareRun } from '../../activities/prepare-run';
import { startRunners, type RunnerGroup } from '../../agents/runner';
import type { RunConfigInput } from '../../config/run-config';
import { startTestStore, type TestStore } from '../store/helpers';
import { runActivity } from '../helpers/activity-bench';

let store: TestStore;
let runners: RunnerGroup<{ n: number }>;
let dir: string;
before(async () => {
  store = await startTestStore();
  runners = startRunners(16, (task) => task.n % 3, { storeUrl: store.server.url, client: store.client, pollIntervalMs: 20, log: () => {} });
  dir = mkdtempSync(path.join(tmpdir(), 'agl-batch-ref-'));
});
after(async () => {
  await runners.stop();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function collect(runName: string, batchSize: number, groupSize: number) {
  const raw = {
    runName, learningRate: 1e-3, modelName: 'local/tiny-test', rendererName: 'role_colon', storeAddress: store.server.url, logPath: path.join(dir, runName),
    datasetBuilder: { batchSize, groupSize, trainDataset: Array.from({ length: batchSize }, (_, n) => ({ n })), valDataset: [{ n: -1 }] },
  } as RunConfigInput;
  const prepared = await runActivity(prepareRun, raw);
  const settings = { ...prepared.settings, instanceId: 'i1' };
  await store.client.addResources({ main_llm: { resource_type: 'proxy_llm', endpoint: 'http://127.0.0.1:9/v1', model: 'm', api_key: null, sampling_parameters: {} } });
  const resourcesId = (await store.client.getLatestResources())!.resources_id;
  return { settings, collected: await runActivity(collectRollouts, settings, 0, resourcesId, prepared.datasetSha256), again: () => runActivity(collectRollouts, settings, 0, resourcesId, prepared.datasetSha256) };
}

test('the collected batch is the same size for 4 rollouts as for 128, and reads back whole and in order', async () => {
  const small = await collect('refsmall', 2, 2);
  const big = await collect('refbig00', 16, 8);
  const bytes = (x: unknown) => Buffer.byteLength(JSON.stringify(x));
  assert.deepEqual(big.collected.counts, { succeeded: 128, failed: 0, cancelled: 0, other: 0 });
  assert.ok(Math.abs(bytes(big.collected) - bytes(small.collected)) <= 8, `result bytes: ${bytes(small.collected)} for 4 rollouts, ${bytes(big.collected)} for 128`);
  assert.ok(bytes(big.collected) < 300);

  const groups = await groupsOf(store.client, big.collected);
  assert.equal(groups.length, 16);
  assert.ok(groups.every((g) => g.rolloutIds.length === 8 && g.statuses.every((s) => s === 'succeeded')));
  assert.equal(new Set(groups.flatMap((g) => g.rolloutIds)).size, 128);
  assert.deepEqual(groups.map((g) => g.taskIndex).sort((a, b) => a - b), [...Array(16).keys()], 'every task of the batch once');
  for (const [g, group] of groups.entries()) {
    for (const [m, id] of group.rolloutIds.entries()) {
      const r = await store.client.getRolloutById(id);
      assert.deepEqual([r?.metadata?.group, r?.metadata?.member, r?.metadata?.task_index], [g, m, group.taskIndex], 'task order, then member order');
    }
  }

  // A retry of the collection (its first attempt's rollouts all in the store) makes none and says the same.
  const before = (await store.client.statistics()).total_rollouts;
  assert.deepEqual(await big.again(), big.collected);
  assert.equal((await store.client.statistics()).total_rollouts, before, 'found by the key prefix, not enqueued again');
});
