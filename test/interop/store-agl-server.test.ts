// Our TypeScript StoreClient and runner library against the real Python store (`agl store`, v0.3.0 in memory):
// compatibility in the other direction.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';
import { waitForHttp } from '../../common/http';
import { freePort } from '../../common/ports';
import { startProcess, type ManagedProcess } from '../../common/processes';
import { rewardOf } from '../../store/reward-span';
import { startRunners } from '../../agents/runner';
import { StoreClient } from '../../store/client';
import { aglVenv, pythonEnv } from './store-python';

let agl: ManagedProcess | undefined;
after(async () => { await agl?.stop(); });

test('TS client and runners against the Python agl store', { timeout: 20 * 60_000 }, async () => {
  const venv = await aglVenv();
  const port = await freePort();
  agl = await startProcess({
    name: 'agl-store', command: path.join(venv.binDir, 'agl'), args: ['store', '--host', '127.0.0.1', '--port', String(port)], env: pythonEnv(),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/v1/agl/health`, 120_000);
  const client = new StoreClient(url, { retryDelaysMs: [200] });

  const res = await client.addResources({ main_llm: { resource_type: 'proxy_llm', endpoint: 'http://127.0.0.1:9', model: 'tiny', api_key: null, sampling_parameters: {} } });
  assert.equal((await client.getLatestResources())?.resources_id, res.resources_id);
  assert.equal((await client.getResourcesById(res.resources_id))?.resources['main_llm']?.resource_type, 'proxy_llm');

  const rollouts = [];
  for (let n = 1; n <= 6; n++) rollouts.push(await client.enqueueRollout({ n }, { mode: 'train' }));
  assert.equal(rollouts[0]?.status, 'queuing');
  assert.equal(rollouts[0]?.resources_id, res.resources_id);

  const endpoints: string[] = [];
  const group = startRunners<{ n: number }>(3, (task, ctx) => {
    endpoints.push(ctx.llm!.endpoint);
    if (task.n === 6) throw new Error('planned failure');
    return task.n / 10;
  }, { storeUrl: url, client, pollIntervalMs: 100, log: () => {}, workerId: 'ts-on-python' });
  const finished = await client.waitForAllRollouts(rollouts.map((r) => r.rollout_id), 60, { pollSec: 2 });
  await group.stop();
  assert.equal(finished.length, 6);

  for (const r of finished) {
    const n = (r.input as { n: number }).n;
    assert.equal(r.status, n === 6 ? 'failed' : 'succeeded');
    const spans = (await client.querySpans(r.rollout_id, 'latest')).items;
    assert.deepEqual(spans.map(rewardOf).filter((x) => x !== null), n === 6 ? [] : [n / 10]);
    const got = await client.getRolloutById(r.rollout_id);
    assert.ok(got && 'attempt' in got);
    assert.ok(endpoints.includes(`http://127.0.0.1:9/rollout/${r.rollout_id}/attempt/${got.attempt.attempt_id}`));
    assert.equal((await client.queryAttempts(r.rollout_id)).total, 1);
  }
  const worker = await client.updateWorker('ts-on-python-x', { note: 'hi' });
  assert.deepEqual(worker.heartbeat_stats, { note: 'hi' });
  assert.equal((await client.queryWorkers({ worker_id_contains: 'ts-on-python' })).total, 4);
  assert.equal((await client.statistics()).total_rollouts, 6);
  assert.equal(await client.getLatestAttempt('ro-unknown'), null);
  assert.equal(await client.dequeueRollout('ts-on-python-0'), null);
});
