// Bad agents and bad requests against the real services. Agents that throw, hang past the rollout timeout,
// return NaN, an infinite reward or 1e308 (refused by the store), or report nothing: the batch still finishes, the train step trains on what is
// usable and reports the rest as metrics; a batch with nothing usable is skipped with a metric, weights unchanged.
// And the proxy on the real trainer answers a clear 400 for a bad role, a prompt over the model's context
// length and invalid sampling parameters.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Stack } from '../../dev/stack';
import { localRunInput } from '../helpers/local-run';
import { prepareRun } from '../../activities/prepare-run';
import { initPolicy } from '../../activities/init-policy';
import { publishPolicy } from '../../activities/publish-policy';
import { collectRollouts } from '../../activities/collect-rollouts';
import { groupsOf } from '../../activities/batch-ref';
import { trainStep } from '../../activities/train-step';
import { logMetrics } from '../../activities/record-run';
import { storeClient, tinkerService } from '../../activities/services';
import { readJsonl, runPaths } from '../../records/run-files';
import type { AgentFunction } from '../../agents/runner';
import { helloAgent } from '../../agents/examples/hello';
import type { RunConfigInput } from '../../config/run-config';
import { makeSecrets } from '../helpers/secure-stack';
import { runActivity, startActivityBench, type ActivityBench } from '../helpers/activity-bench';

let stack: Stack;
let dataDir: string;

/** What each task makes the agent do (after calling the policy, so there are spans to train on). */
const badAgent: AgentFunction<string> = async (task, ctx) => {
  if (task.startsWith('hang')) {
    // Never returns, never reports: only the rollout timeout ends it (the runner's stop releases it at the end).
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
    return null;
  }
  if (task.startsWith('crash')) throw new Error('agent crashed before its first LLM call');
  await helloAgent(task, ctx);
  if (task.startsWith('throw')) throw new Error('agent bug');
  if (task.startsWith('nan')) return NaN;
  if (task.startsWith('inf')) return Infinity;
  // Finite, but its group's advantage overflows float32: the store refuses it where it enters.
  if (task.startsWith('huge')) return 1e308;
  if (task.startsWith('none')) return null;
  return Number(ctx.rollout.metadata?.member ?? 0) === 1 ? 1 : 0;
};

let bench: ActivityBench | undefined;

before(async () => {
  bench = await startActivityBench('bad', makeSecrets(), 10, badAgent);
  ({ stack, dataDir } = bench);
});

after(async () => {
  await bench?.stop();
});


test('bad agents become failed rollouts and metrics; a batch with nothing usable is skipped', { timeout: 240_000 }, async () => {
  const logPath = `${dataDir}/runs/bad`;
  const raw = {
    // datasetBuilder below replaces this placeholder
    ...localRunInput(stack, dataDir, 'bad', { logPath, datasetBuilder: { batchSize: 1 } }),
    maxTokens: 16,
    rolloutTimeoutSeconds: 4,
    rolloutMaxAttempts: 1,
    // Batch 1 fails whole; by default that ends the run (test/agents/failing-agent.test.ts): here it is skipped.
    stopAfterFailedRollouts: 0,
    datasetBuilder: {
      batchSize: 7,
      groupSize: 2,
      shuffle: false,
      // Batch 0: one task of each kind. Batch 1: nothing usable (no rollout got as far as an LLM call).
      trainDataset: ['ok', 'throw', 'hang', 'nan', 'inf', 'none', 'huge', 'crash1', 'hang2', 'crash2', 'crash3', 'hang3', 'crash4', 'crash5'],
      valDataset: ['500'],
    },
  } as RunConfigInput;
  const prepared = await runActivity(prepareRun, raw);
  const settings = prepared.settings;
  assert.equal(prepared.numBatches, 2);
  const s0 = await runActivity(initPolicy, settings, 0);
  const rid = await runActivity(publishPolicy, settings, 0, 'train', s0);

  const t0 = Date.now();
  const c0 = await runActivity(collectRollouts, settings, 0, rid, prepared.datasetSha256);
  const took = Date.now() - t0;
  assert.ok(took < 60_000, `the batch waited ${took} ms; the hung agents must end at the rollout timeout`);
  const statuses = Object.fromEntries((await groupsOf(storeClient(stack.storeUrl), c0)).map((g, i) => [raw.datasetBuilder!.trainDataset![i] as string, g.statuses]));
  assert.deepEqual(statuses.ok, ['succeeded', 'succeeded']);
  assert.deepEqual(statuses.none, ['succeeded', 'succeeded'], 'no reward is a rollout with reward 0, not a failure');
  for (const k of ['throw', 'nan', 'inf', 'huge']) assert.deepEqual(statuses[k], ['failed', 'failed'], `${k}: ${statuses[k]}`);
  for (const s of statuses.hang!) assert.ok(['failed', 'timeout'].includes(s), `hang: ${s}`);

  const r0 = await runActivity(trainStep, settings, 0, c0, s0);
  assert.equal(r0.skipped, false, 'the usable group trains');
  for (const [k, v] of Object.entries(r0.metrics)) assert.ok(Number.isFinite(v), `metric ${k} = ${v}`);
  assert.ok(r0.metrics['env/all/by_group/frac_status_succeeded']! < 1, 'failed rollouts show in the metrics');
  await runActivity(logMetrics, settings, 0, r0.metrics, []);

  const rid1 = await runActivity(publishPolicy, settings, 1, 'train', r0.state);
  const c1 = await runActivity(collectRollouts, settings, 1, rid1, prepared.datasetSha256);
  assert.equal(c1.counts.succeeded, 0);
  const r1 = await runActivity(trainStep, settings, 1, c1, r0.state);
  assert.equal(r1.skipped, true, 'nothing usable: the step is skipped');
  assert.equal(r1.metrics['train/skipped_empty_batch'], 1);
  assert.equal(r1.state.statePath, r0.state.statePath, 'weights unchanged');
  assert.equal(r1.state.step, 2, 'the run moves on');
  await runActivity(logMetrics, settings, 1, r1.metrics, []);
  assert.deepEqual(readJsonl(runPaths(logPath).metrics).map((m) => m.step), [0, 1]);
});

test('proxy on the real trainer: bad role, prompt over the context length, bad sampling → clear 400s', { timeout: 60_000 }, async () => {
  const post = async (body: unknown) => {
    const res = await fetch(`${stack.proxyUrl}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
    return { status: res.status, json: (await res.json()) as { error?: { message: string; type: string } } };
  };
  const info = await tinkerService(stack.trainerUrl).getServerCapabilities();
  assert.ok(info.length > 0);
  const okAnswer = await post({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
  assert.equal(okAnswer.status, 200, JSON.stringify(okAnswer.json));

  const role = await post({ messages: [{ role: 'wizard', content: 'hi' }] });
  assert.equal(role.status, 400);
  assert.match(role.json.error!.message, /role must be one of/);

  const long = await post({ messages: [{ role: 'user', content: 'x'.repeat(5000) }], max_tokens: 4 });
  assert.equal(long.status, 400, JSON.stringify(long.json));
  assert.match(long.json.error!.message, /context length/);

  for (const bad of [{ temperature: -1 }, { top_p: 0 }, { top_k: 1.5 }, { max_tokens: 0 }, { n: 1000 }, { temperature: 'hot' }]) {
    const a = await post({ messages: [{ role: 'user', content: 'hi' }], ...bad });
    assert.equal(a.status, 400, `${JSON.stringify(bad)}: ${JSON.stringify(a.json)}`);
    assert.equal(a.json.error!.type, 'invalid_request_error');
  }
});
