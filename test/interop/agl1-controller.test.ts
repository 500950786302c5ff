// Agent-lightning 1.0.2's own `agl-controller`, unchanged (runner_type=local, from PyPI in a Python 3.12 venv),
// launches the agents of a real training run through the store's 1.0 gateway API: it lists the run's rollouts,
// starts one process per rollout (agents/examples/agl1_hello.py: the openai client on the gateway's proxy, the
// reward as an event) and PATCHes their status. The run trains on what those agents were answered and scored.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { readJsonl, runPaths } from '../../records/run-files';
import { startOrAttach } from '../../cli/run-commands';
import { startProcess, type ManagedProcess } from '../../common/processes';
import type { Stack } from '../../dev/stack';
import { StoreClient } from '../../store/client';
import { REWARD_VALUE_ATTR } from '../../spans/rewards';
import { localRunConfig, startTestStack } from '../helpers/local-run';
import { agl1Venv } from './agl1-python';
import { pythonEnv } from './store-python';

const EXAMPLES = path.resolve(__dirname, '..', '..', 'agents', 'examples');
const spawned = (out: string) => (out.match(/Spawned rollout subprocess/g) ?? []).length;
let stack: Stack | undefined;
let controller: ManagedProcess | undefined;
let dataDir = '';
let taskQueue = '';

before(async () => {
  const venv = await agl1Venv();
  ({ stack, dataDir, taskQueue } = await startTestStack('agl1', { runners: 0 }));
  controller = await startProcess({
    name: 'agl-controller',
    command: path.join(venv.binDir, 'agl-controller'),
    args: [
      'runner_type=local', `agl_server.url=${stack.storeUrl}`, 'local_runner.poll_interval=1', 'local_runner.maximum_size=8',
      `hydra.run.dir=${path.join(dataDir, 'hydra')}`, 'hydra.output_subdir=null',
    ],
    cwd: dataDir,
    env: { ...pythonEnv(), PYTHONPATH: [EXAMPLES, __dirname].join(path.delimiter) },
    readyLine: /LocalReconciler starting/,
    readyTimeoutMs: 120_000,
  });
});

after(async () => {
  await controller?.stop(5000);
  await stack?.stop();
});

const api = async (p: string) => {
  const res = await fetch(stack!.storeUrl + p, { signal: AbortSignal.timeout(30_000) });
  assert.equal(res.status, 200, `GET ${p}`);
  return res.json() as Promise<any>;
};

test('a run trains on the rollouts of Agent-lightning 1.0 agents that the unchanged agl-controller launched', { timeout: 600_000 }, async () => {
  const client = new Client({ connection: await Connection.connect({ address: stack!.temporal.address, connectTimeout: '60 seconds' }) });
  const cfg = localRunConfig(stack!, dataDir, 'agl1', {
    maxTokens: 16,
    evalEvery: 0,
    saveEvery: 0,
    datasetBuilder: { batchSize: 2, groupSize: 2, trainDataset: ['1', '2', '3', '4'], valDataset: ['9'] },
    aglController: { agentClass: 'agl1_hello:HelloAgent', envMap: { AGL_TASK: 'input' } },
  });
  const run = await startOrAttach(client, taskQueue, cfg);
  const result = await run.handle.result();
  const out = () => controller!.output().slice(-4000);
  assert.equal(result.batchesCompleted, 2);
  const metrics = readJsonl(runPaths(cfg.logPath).metrics);
  assert.equal(metrics.length, 2);

  const store = new StoreClient(stack!.storeUrl);
  const all = (await store.queryRollouts({ limit: 100 })).items.filter((r) => r.mode === 'train' && r.metadata?.agl_run === 'agl1');
  assert.equal(all.length, 8, 'two batches of 2 tasks x 2');
  for (const [batch, m] of metrics.entries()) {
    const rollouts = all.filter((r) => r.metadata?.batch === batch);
    assert.equal(m['env/all/by_group/frac_status_succeeded'], 1, `every rollout succeeded; the controller said:\n${out()}`);
    const rewards: number[] = [];
    let responseTokens = 0;
    for (const r of rollouts) {
      // The controller launched it: its PATCHes to running and to succeeded, on attempt "0".
      const { rollout } = await api(`/api/rollouts/${r.rollout_id}`);
      assert.deepEqual([rollout.status.state, rollout.status.last_attempt_id, rollout.status.version], ['succeeded', '0', 3]);
      assert.deepEqual(rollout.config.local, { agent_class: 'agl1_hello:HelloAgent', env_map: { AGL_TASK: 'input' } });
      // What its agent was answered and scored, as the 1.0 triplet view shows it ...
      const events = await api(`/api/rollouts/${r.rollout_id}/events?format=triplet`);
      const call = events.find((e: any) => e.event_type === 'model_request');
      const reward = events.find((e: any) => e.event_type === 'reward');
      assert.ok(call && reward, JSON.stringify(events));
      assert.equal(call.data.status, 'ok');
      assert.ok(call.data.response_token_ids.length > 0);
      assert.equal(call.data.response_log_probs.length, call.data.response_token_ids.length);
      // ... is what the store holds for training: the proxy's span of that call and the reward span.
      const spans = (await store.querySpans(r.rollout_id, 'latest')).items;
      const callSpan = spans.find((s) => Array.isArray(s.attributes.response_token_ids));
      assert.deepEqual(callSpan?.attributes.prompt_token_ids, call.data.prompt_token_ids);
      assert.deepEqual(callSpan?.attributes.response_token_ids, call.data.response_token_ids);
      assert.equal(spans.find((s) => REWARD_VALUE_ATTR in s.attributes)?.attributes[REWARD_VALUE_ATTR], reward.data.value);
      rewards.push(reward.data.value);
      responseTokens += call.data.response_token_ids.length;
    }
    // The step trained on exactly these: their answer tokens, and their mean reward.
    assert.equal(m['env/all/total_ac_tokens'], responseTokens, `batch ${batch}`);
    assert.ok(Math.abs((m['env/all/reward/total'] as number) - rewards.reduce((a, b) => a + b, 0) / rewards.length) < 1e-9, `batch ${batch}`);
    assert.equal(m['train/skipped_empty_batch'], 0);
  }
  assert.equal(spawned(controller!.output()), 8, 'one agent process per rollout');
  assert.doesNotMatch(controller!.output(), /Traceback|Failed to patch/, 'no agent failed and every PATCH was accepted');
});

test("the store's retries with the unchanged controller: a failed agent's rollout comes back as <id>.retry1 and is launched afresh", { timeout: 120_000 }, async () => {
  const marks = path.join(dataDir, 'marks');
  mkdirSync(marks, { recursive: true });
  const store = new StoreClient(stack!.storeUrl);
  const before = spawned(controller!.output());
  const rollout = await store.enqueueRollout('5', {
    mode: 'train',
    resourcesId: (await store.getLatestResources())!.resources_id,
    config: { max_attempts: 2, retry_condition: ['failed'], timeout_seconds: 120 },
    metadata: { agl1: { config: { local: { agent_class: 'agl1_flaky:FlakyHelloAgent', env_map: { AGL_TASK: 'input', AGL_MARKS: marks } }, k8s: null } } },
  });
  const [done] = await store.waitForAllRollouts([rollout.rollout_id], 90);
  assert.equal(done?.status, 'succeeded', controller!.output().slice(-3000));
  assert.equal((await store.getLatestAttempt(rollout.rollout_id))?.sequence_id, 2);
  const first = (await api(`/api/rollouts/${rollout.rollout_id}`)).rollout;
  assert.deepEqual([first.status.state, first.status.error_message], ['failed', 'subprocess exited with code 1']);
  const retry = (await api(`/api/rollouts/${rollout.rollout_id}.retry1`)).rollout;
  assert.equal(retry.status.state, 'succeeded');
  assert.equal(spawned(controller!.output()) - before, 2, 'the first try and the retry');
  const reward = (await api(`/api/rollouts/${rollout.rollout_id}.retry1/events?event_type=reward`))[0];
  assert.equal(typeof reward?.data.value, 'number');
});
