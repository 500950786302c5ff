// An agent that fails every time stops its run loudly: the AI SDK example's helloAgentWorkflow on
// a model too small for its prompts (local/tiny-hello, context 128 tokens) on the real local trainer. Before, each
// model call was refused with a 400 and retried for ever by Temporal's default activity retry, the run sat at
// "collecting rollouts" until the rollout timeout with no reason anywhere but the agent worker's log, and then went
// on training on nothing. Now: the refusal fails the model-call activity for good (training-provider.ts), the
// failed attempt carries the agent's error line, `status` shows it while the batch runs, and the run fails with it
// once a batch's rollouts have all failed. What is checked comes from Temporal (the run's status and failure, the
// agent workflows' own histories) and the store (the attempts' statuses and reasons).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startOrAttach, status } from '../../cli/run-commands';
import { startProcess, type ManagedProcess } from '../../common/processes';
import type { Stack } from '../../dev/stack';
import { StoreClient } from '../../store/client';
import { ATTEMPT_ERROR } from '../../activities/rollout-failures';
import { localRunConfig, startTestStack } from '../helpers/local-run';
import { ROOT } from '../helpers/commands';

let stack: Stack;
let dataDir = '';
let taskQueue = '';
let temporal: Client;
let worker: ManagedProcess | undefined;
const agentQueue = `ai-sdk-failing-${process.pid}`;

before(async () => {
  ({ stack, dataDir, taskQueue } = await startTestStack('failagent', { runners: 0, initialModel: 'local/tiny-hello' }));
  temporal = new Client({ connection: await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' }) });
  worker = await startProcess({
    name: 'ai-sdk-agent-worker',
    command: process.execPath,
    args: ['--import', 'tsx', path.join(ROOT, 'agents/examples/ai-sdk/worker.ts'), '--address', stack.temporal.address, '--task-queue', agentQueue],
    cwd: ROOT,
    readyLine: /agent worker polling task queue/,
    readyTimeoutMs: 180_000,
  });
});

after(async () => {
  await worker?.stop(2000);
  await stack?.stop();
});

const CONTEXT_REFUSAL = /the training proxy refused the model call \(HTTP 400\): .*prompt has \d+ tokens; the context length of local\/tiny-hello is 128/;

test('the AI SDK example on a too-small model: the reason in status within a minute, the run failed with it within two', { timeout: 300_000 }, async () => {
  const cfg = localRunConfig(stack, dataDir, 'failing-agent', {
    modelName: 'local/tiny-hello',
    // The agent declares a tool: role_colon_tools shows it, so what fails is the context, not the tools.
    rendererName: 'role_colon_tools',
    maxTokens: 16,
    evalEvery: 0,
    saveEvery: 0,
    rolloutMaxAttempts: 2,
    agentWorkflow: { type: 'helloAgentWorkflow', taskQueue: agentQueue },
    datasetBuilder: { batchSize: 2, groupSize: 2, shuffle: false, trainDataset: ['Ann', 'Bo', 'Cy', 'Di'], valDataset: ['Ann'] },
  });
  const started = Date.now();
  const run = await startOrAttach(temporal, taskQueue, cfg);

  // While the batch runs: status names the failures and the agent's own line.
  let waiting: string | undefined;
  let state = 'RUNNING';
  while (Date.now() - started < 60_000 && state === 'RUNNING' && !waiting) {
    const s = await status(run.handle);
    state = s.state;
    waiting = s.waiting;
    if (!waiting) await new Promise((r) => setTimeout(r, 300));
  }
  if (state === 'RUNNING') {
    assert.match(waiting ?? '', /^training rollouts keep failing: \d+ in a row, none succeeded; (each|\d+ of them): /, 'status says so within a minute');
    assert.match(waiting ?? '', CONTEXT_REFUSAL);
  }

  // The run ends, failed, with the same line, within two minutes of its start.
  await assert.rejects(run.handle.result());
  const tookS = (Date.now() - started) / 1000;
  assert.ok(tookS < 120, `the run ended after ${tookS.toFixed(0)} s`);
  const ended = await status(run.handle);
  assert.equal(ended.state, 'FAILED');
  assert.match(ended.ended ?? '', /4 training rollouts in a row failed and none succeeded \(stopAfterFailedRollouts 4\); (each|\d of them): /);
  assert.match(ended.ended ?? '', CONTEXT_REFUSAL);

  // From the store: every rollout failed after its two attempts, each attempt with the refusal as its reason.
  const store = new StoreClient(stack.storeUrl, { retryDelaysMs: [50], token: '' });
  const rollouts = (await store.queryRollouts({ idempotency_key_prefix: `${cfg.runName}@`, limit: 100 })).items;
  assert.equal(rollouts.length, 4);
  for (const r of rollouts) {
    assert.equal(r.status, 'failed');
    const attempts = (await store.queryAttempts(r.rollout_id)).items;
    assert.equal(attempts.length, 2, 'each rollout tried twice');
    for (const a of attempts) assert.match(String(a.metadata?.[ATTEMPT_ERROR] ?? ''), CONTEXT_REFUSAL);
  }

  // From the agent workflows' own histories: each model call was tried once (refused for good, not retried).
  const agents = temporal.workflow.list({ query: `TaskQueue = "${agentQueue}"` });
  let workflows = 0;
  for await (const wf of agents) {
    workflows++;
    const history = await temporal.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    const attempts = (history.events ?? []).filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt ?? 1);
    assert.ok(attempts.length >= 1 && attempts.every((n) => n === 1), `${wf.workflowId}: activity attempts ${attempts.join(',')}`);
  }
  assert.equal(workflows, 8, 'one agent workflow per attempt');
});
