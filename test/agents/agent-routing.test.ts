// Runners say which agent they run and take only rollouts of runs naming that agent. Without that, runners of a
// previous agent still polling the store serve half of the next run's first batch. Here the
// store's dequeue routes by agent (and by key prefix, for agent-workflow runs), and a real run naming an agent that
// only another agent's runners serve waits, says so in `status`, and is trained by its own runners alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { helloAgent } from '../../agents/examples/hello';
import { startRunners, type RunnerGroup } from '../../agents/runner';
import { unservedReason } from '../../activities/runner-presence';
import { startOrAttach, status } from '../../cli/run-commands';
import { localRunConfig, startTestStack } from '../helpers/local-run';
import { startTestStore } from '../store/helpers';

test('the store gives a routed rollout only to dequeues naming its agent, and unrouted ones only to runners naming none', async () => {
  const { client, close } = await startTestStore();
  try {
    const enqueue = (key: string, agent?: string) => client.enqueueRollout('t', { idempotencyKey: key, metadata: agent ? { agl_agent: agent } : {} });
    const a1 = await enqueue('run-a/train/0/0/0', 'agent-a');
    const b1 = await enqueue('run-b/train/0/0/0', 'agent-b');
    const plain = await enqueue('run-c/train/0/0/0');
    const a2 = await enqueue('run-a2/train/0/0/0', 'agent-a');

    assert.deepEqual((await client.dequeueRollouts(10, 'w-none')).map((r) => r.rollout_id), [plain.rollout_id], 'no agent: unrouted only');
    assert.deepEqual((await client.dequeueRollouts(10, 'w-a', { agent: 'agent-a', keyPrefix: 'run-a2/' })).map((r) => r.rollout_id), [a2.rollout_id], 'agent and key prefix');
    assert.deepEqual((await client.dequeueRollouts(10, 'w-c', { agent: 'agent-c' })).map((r) => r.rollout_id), [], 'an agent nobody routed to');
    assert.deepEqual((await client.dequeueRollouts(10, 'w-a', { agent: 'agent-a' })).map((r) => r.rollout_id), [a1.rollout_id]);
    assert.deepEqual((await client.dequeueRollouts(10, 'w-b', { agent: 'agent-b' })).map((r) => r.rollout_id), [b1.rollout_id]);
  } finally {
    await close();
  }
});

test('why no runner can take a run\'s rollouts, from the workers the store saw', () => {
  const now = 1000;
  const w = (agent: string | null, seen: number) => ({ worker_id: `w-${agent}`, heartbeat_stats: agent ? { agent } : {}, last_heartbeat_time: seen, last_dequeue_time: null, last_idle_time: null, last_busy_time: null }) as never;
  assert.equal(unservedReason([w('hello-v2', now - 5)], 'hello-v2', now), null);
  assert.equal(unservedReason([w(null, now - 5)], null, now), null);
  assert.match(unservedReason([w('hello-v1', now - 5)], 'hello-v2', now)!, /no runner can take these rollouts: the run wants runners of agent "hello-v2"; runners seen in the last 30 s: of agent hello-v1/);
  assert.match(unservedReason([w('hello-v2', now - 300)], 'hello-v2', now)!, /runners seen in the last 30 s: none/);
  assert.match(unservedReason([w('hello-v1', now - 1)], null, now)!, /wants runners that name no agent/);
});

test('a run naming its agent is not served by another agent\'s runners: status says so until its own poll, which train it alone', { timeout: 600_000 }, async () => {
  const { stack, dataDir, taskQueue } = await startTestStack('routing', { runners: 0 });
  const old = startRunners(2, helloAgent, { storeUrl: stack.storeUrl, agent: 'hello-v1', workerId: 'old', pollIntervalMs: 100, log: () => {} });
  let fresh: RunnerGroup<string> | undefined;
  try {
    const temporal = new Client({ connection: await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' }) });
    const cfg = localRunConfig(stack, dataDir, 'routing', {
      agent: 'hello-v2',
      evalEvery: 0,
      saveEvery: 0,
      datasetBuilder: { batchSize: 2, groupSize: 2, shuffle: false, trainDataset: ['Alice', 'Bob'], valDataset: ['Alice'] },
    });
    const run = await startOrAttach(temporal, taskQueue, cfg);
    let waiting: string | undefined;
    for (const deadline = Date.now() + 120_000; !waiting && Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
      waiting = (await status(run.handle)).waiting;
    }
    assert.match(waiting ?? '', /no runner can take these rollouts: the run wants runners of agent "hello-v2"; runners seen in the last 30 s: of agent hello-v1/);
    assert.deepEqual(old.stats(), { succeeded: 0, failed: 0 }, 'the other agent\'s runners took nothing');

    const own = startRunners(2, helloAgent, { storeUrl: stack.storeUrl, agent: 'hello-v2', workerId: 'fresh', pollIntervalMs: 100, log: () => {} });
    fresh = own;
    assert.equal((await run.handle.result()).batchesCompleted, 1);
    assert.equal(own.stats().succeeded, 4, 'its own runners played every rollout');
    assert.deepEqual(old.stats(), { succeeded: 0, failed: 0 });
  } finally {
    await old.stop();
    await fresh?.stop();
    await stack.stop();
  }
});
