// The TS runner library against our store: rollouts run, rewards land as annotation spans, throwing agents fail
// their attempt without stopping the runner, the LLM endpoint is scoped to rollout/attempt, workers heartbeat.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rewardOf } from '../../store/reward-span';
import { scopedProxyEndpoint } from '../../store/llm-resource';
import { startRunners } from '../../agents/runner';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { startStoreServer } from '../../store/server';
import { LLM_RESOURCES, sleep, startTestStore, type TestStore } from './helpers';

describe('runner library', () => {
  let t: TestStore;
  before(async () => { t = await startTestStore(); });
  after(async () => { await t.close(); });

  test('scoped proxy endpoints follow ProxyLLM.get_base_url', () => {
    assert.equal(scopedProxyEndpoint('http://h:1', 'ro-1', 'at-1'), 'http://h:1/rollout/ro-1/attempt/at-1');
    assert.equal(scopedProxyEndpoint('http://h:1/v1/', 'ro-1', 'at-1'), 'http://h:1/rollout/ro-1/attempt/at-1/v1');
  });

  test('runs rollouts with rewards; a throwing agent fails only its attempt', async () => {
    await t.client.addResources(LLM_RESOURCES);
    const rollouts = [];
    for (let i = 1; i <= 20; i++) rollouts.push(await t.client.enqueueRollout(i, { mode: 'train' }));
    const seenEndpoints: string[] = [];
    const group = startRunners<number>(4, async (task, ctx) => {
      assert.equal(ctx.llm?.model, 'test-model');
      seenEndpoints.push(ctx.llm!.endpoint);
      assert.equal(ctx.llm!.endpoint, `http://127.0.0.1:9/rollout/${ctx.rollout.rollout_id}/attempt/${ctx.rollout.attempt.attempt_id}/v1`);
      if (task % 5 === 0) throw new Error(`agent refuses ${task}`);
      return task / 10;
    }, { storeUrl: t.server.url, pollIntervalMs: 50, log: () => {}, workerId: 'test-runner' });
    const finished = await t.client.waitForAllRollouts(rollouts.map((r) => r.rollout_id), 30);
    await group.stop();
    assert.equal(finished.length, 20);
    assert.equal(seenEndpoints.length, 20);
    for (const r of finished) {
      const task = r.input as number;
      assert.equal(r.status, task % 5 === 0 ? 'failed' : 'succeeded', `rollout for ${task}`);
      const spans = (await t.client.querySpans(r.rollout_id, 'latest')).items;
      const rewards = spans.map(rewardOf).filter((x) => x !== null);
      assert.deepEqual(rewards, task % 5 === 0 ? [] : [task / 10]);
      if (task % 5 !== 0) assert.equal(spans[0]?.name, 'agentlightning.annotation');
    }
    assert.deepEqual(group.stats(), { succeeded: 16, failed: 4 });
    const workers = await t.client.queryWorkers({ worker_id_contains: 'test-runner' });
    assert.equal(workers.total, 4);
    for (const w of workers.items) assert.ok(w.last_heartbeat_time, `${w.worker_id} heartbeat`);
    assert.equal(await t.client.dequeueRollout('check'), null);
  });

  test('an agent result that is not a number fails the attempt with a log line saying what it returned', async () => {
    const results: unknown[] = ['0.8', Number.NaN, { reward: 1 }, 1e13];
    const rollouts = [];
    for (let i = 0; i < results.length; i++) rollouts.push(await t.client.enqueueRollout(i, { mode: 'train' }));
    const lines: string[] = [];
    const group = startRunners<number>(1, ((task: number) => results[task]) as never, { storeUrl: t.server.url, pollIntervalMs: 50, log: (l) => lines.push(l), maxRollouts: results.length });
    await group.done;
    for (const r of rollouts) {
      assert.equal((await t.client.getRolloutById(r.rollout_id))?.status, 'failed');
      assert.equal((await t.client.querySpans(r.rollout_id, 'latest')).total, 0, 'no reward recorded');
    }
    assert.match(lines.join('\n'), new RegExp(`rollout ${rollouts[0]!.rollout_id} attempt \\S+ failed: the agent returned "0\\.8"; an agent returns its reward as a finite number`));
    assert.match(lines.join('\n'), /the agent returned NaN/);
    assert.match(lines.join('\n'), /the agent returned object/);
    assert.match(lines.join('\n'), /the agent returned 10000000000000; an agent returns its reward as a finite number within ±1000000000000/);
  });

  test('missing resources fail the attempt instead of leaving it preparing', async () => {
    const r = await t.client.enqueueRollout('x', { resourcesId: 'rs-missing' });
    const group = startRunners(1, () => 1, { storeUrl: t.server.url, pollIntervalMs: 50, log: () => {}, maxRollouts: 1 });
    await group.done;
    assert.equal((await t.client.getRolloutById(r.rollout_id))?.status, 'failed');
  });
});

describe('runner across a store outage', () => {
  test('a reward and status that finish while the store is down land once it is back; no attempt is wasted', { timeout: 60_000 }, async () => {
    const t = await startTestStore();
    const port = Number(new URL(t.server.url).port);
    const dbPath = path.join(t.dir, 'store.sqlite');
    let server = t.server;
    try {
      await t.client.addResources(LLM_RESOURCES);
      const rollout = await t.client.enqueueRollout('outage', { config: { max_attempts: 3, retry_condition: ['failed', 'unresponsive'] } });
      let started!: () => void;
      const agentStarted = new Promise<void>((r) => (started = r));
      let finish!: () => void;
      const agentMayFinish = new Promise<void>((r) => (finish = r));
      const group = startRunners<string>(1, async () => {
        started();
        await agentMayFinish;
        return 0.7;
      }, { storeUrl: t.server.url, pollIntervalMs: 50, log: () => {}, workerId: 'outage-runner' });
      await agentStarted;
      await server.close();
      finish(); // the agent is done while the store is away
      await sleep(6_000); // longer than the store client's own retries (about 4 s)
      server = await startStoreServer({ dbPath, port, log: () => {} });
      const [done] = await t.client.waitForAllRollouts([rollout.rollout_id], 30);
      await group.stop();
      assert.equal(done?.status, 'succeeded');
      const spans = (await t.client.querySpans(rollout.rollout_id, 'latest')).items;
      assert.deepEqual(spans.map(rewardOf).filter((x) => x !== null), [0.7]);
      assert.equal((await t.client.queryAttempts(rollout.rollout_id)).total, 1, 'the first attempt finished it');
    } finally {
      await server.close();
      rmSync(t.dir, { recursive: true, force: true });
    }
  });
});
