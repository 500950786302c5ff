// A real Agent-lightning v0.3 LitAgentRunner runs a no-LLM agent against our store, with its default (AgentOps)
// tracer and with the OtelTracer: attempts, OTLP spans (protobuf) and the reward are recorded; a failing agent
// fails its attempt; the runner's worker heartbeats arrive.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { rewardOf } from '../../store/reward-span';
import { startTestStore, type TestStore } from '../store/helpers';
import { aglVenv, runPython } from './store-python';

let t: TestStore;
before(async () => { t = await startTestStore(); });
after(async () => { await t.close(); });

async function runWithTracer(tracer: 'agentops' | 'otel'): Promise<void> {
  const venv = await aglVenv();
  await t.client.addResources({ main_llm: { resource_type: 'proxy_llm', endpoint: 'http://127.0.0.1:9/v1', model: 'tiny', api_key: null, sampling_parameters: {} } });
  const rollouts = [
    await t.client.enqueueRollout({ n: 1 }, { mode: 'train' }),
    await t.client.enqueueRollout({ n: 2 }, { mode: 'val' }),
    await t.client.enqueueRollout({ n: 3, fail: true }, { mode: 'train' }),
  ];
  const { stdout } = await runPython(venv.python, 'store-py-runner.py', [t.server.url, '3', tracer]);
  assert.match(stdout, /runner finished/);

  for (const r of rollouts) {
    const task = r.input as { n: number; fail?: boolean };
    const got = await t.client.getRolloutById(r.rollout_id);
    assert.ok(got && 'attempt' in got, 'rollout has an attempt');
    assert.equal(got.status, task.fail ? 'failed' : 'succeeded');
    assert.equal(got.attempt.worker_id, 'Worker-0');
    assert.ok(got.attempt.end_time);
    const spans = (await t.client.querySpans(r.rollout_id, 'latest')).items;
    const names = spans.map((s) => s.name);
    if (tracer === 'agentops') assert.ok(names.includes(`${r.rollout_id}.session`), `AgentOps session span in ${names}`);
    else assert.ok(task.fail || names.length >= 2, `spans: ${names}`);
    // Server-allocated sequence ids: 1..n, distinct, in order.
    assert.deepEqual(spans.map((s) => s.sequence_id), spans.map((_, i) => i + 1));
    const rewards = spans.map(rewardOf).filter((x) => x !== null);
    if (task.fail) {
      assert.deepEqual(rewards, []);
    } else {
      assert.deepEqual(rewards, [task.n / 10]);
      const message = spans.find((s) => s.name === 'agentlightning.message');
      assert.equal(message?.attributes['agentlightning.message.body'],
        `endpoint=http://127.0.0.1:9/rollout/${r.rollout_id}/attempt/${got.attempt.attempt_id}/v1 model=tiny rollout=${r.rollout_id}`);
      assert.equal(spans[0]?.resource.attributes['agentlightning.rollout_id'], r.rollout_id);
    }
  }
  const worker = await t.client.getWorkerById('Worker-0');
  assert.ok(worker?.heartbeat_stats && 'cpu_cores' in worker.heartbeat_stats, 'heartbeat stats recorded');
  assert.equal(worker?.status, 'idle');
}

test('Python LitAgentRunner (v0.3, default AgentOps tracer) against our store', { timeout: 20 * 60_000 }, () => runWithTracer('agentops'));
test('Python LitAgentRunner (v0.3, OtelTracer: one OTLP export per span) against our store', { timeout: 20 * 60_000 }, () => runWithTracer('otel'));
