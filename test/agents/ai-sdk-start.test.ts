// The AI SDK example trains with one command, as docs/agents-on-temporal.md gives it: `npm start -- --example ai-sdk`
// starts the agent's own Temporal worker (agents/examples/ai-sdk/worker.ts) beside the stack, a model its prompts fit
// (local/tiny-hello-tools with role_colon_tools: the prompt declares the workflow's tool) and a run whose rollouts are
// helloAgentWorkflow executions. Checked where it happened: the first batch's reward in metrics.jsonl, every rollout
// of it an agent workflow on the example's task queue that completed, and npm start stopping on Ctrl-C.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { readJsonl } from '../../records/run-files';
import { AI_SDK_AGENT } from '../../dev/examples';
import { npmStart, npmStartEnv } from '../helpers/npm-start';

test('npm start -- --example ai-sdk: the AI SDK agent workflows train, reward in the metrics after the first batch', { timeout: 300_000 }, async () => {
  const data = mkdtempSync(path.join(tmpdir(), 'agl-ai-sdk-start-'));
  const started = Date.now();
  const start = await npmStart(['--example', 'ai-sdk', '--data', data], await npmStartEnv());
  try {
    const [, temporal] = await start.waitFor(/Temporal (127\.0\.0\.1:\d+), store/, 120_000);
    await start.waitFor(/agent worker agents\/examples\/ai-sdk\/worker\.ts polling task queue ai-sdk-agent/);
    // The first batch trained: its reward is in the progress line and in metrics.jsonl.
    await start.waitFor(/ai-sdk \| batch [1-9]\d*\/20 \| .*reward -?\d\.\d{3}/, 240_000);
    const took = (Date.now() - started) / 1000;
    const metrics = readJsonl(path.join(data, 'runs', 'ai-sdk', 'metrics.jsonl'));
    const first = metrics.find((m) => m.step === 0)!;
    assert.ok(first, 'batch 0 in metrics.jsonl');
    assert.equal(typeof first['env/all/reward/total'], 'number', 'a train reward');
    assert.equal(first['env/all/total_episodes'], 32, '8 tasks x 4 rollouts');
    assert.equal(first['env/all/ob_tokens_per_turn'] as number >= 300, true, 'prompts with the tool declared');

    // Each rollout was an agent workflow on the example's queue; the first batch's all completed.
    const conn = await Connection.connect({ address: temporal!, connectTimeout: '30 seconds' });
    try {
      const client = new Client({ connection: conn });
      const statuses: Record<string, number> = {};
      for await (const wf of client.workflow.list({ query: `TaskQueue = "${AI_SDK_AGENT.taskQueue}" AND WorkflowType = "helloAgentWorkflow"` })) {
        statuses[wf.status.name] = (statuses[wf.status.name] ?? 0) + 1;
      }
      assert.ok((statuses.COMPLETED ?? 0) >= 32 + 12, `the eval's 12 and batch 0's 32 agent workflows completed: ${JSON.stringify(statuses)}`);
      assert.equal(statuses.FAILED ?? 0, 0, JSON.stringify(statuses));
    } finally {
      await conn.close();
    }
    process.stderr.write(`[ai-sdk-start] first batch trained ${took.toFixed(0)} s after npm start; reward ${first['env/all/reward/total']}\n`);
  } finally {
    start.proc.child.kill('SIGINT');
    await start.proc.exited;
  }
  assert.equal(start.proc.child.exitCode ?? 130, 130, 'Ctrl-C stops npm start');
});
