// Agent workflows as rollouts (issue 23): unchanged `@temporalio/ai-sdk` agent workflows (agents/examples/ai-sdk/)
// on their own worker process, whose only change is the training provider, are trained by real runs (Temporal,
// worker, store, proxy, the local trainer's bigram engine, whose context holds the tools' declarations). What is
// checked comes from where it happened: the agent workflows' own Temporal histories (each model call the plugin
// made is an activity there), the spans the proxy wrote, and the step the run trained.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { buildTrajectoryGroups } from '../../activities/trajectories';
import { readJsonl, runPaths } from '../../activities/run-files';
import { startOrAttach } from '../../cli/run-commands';
import { startProcess, type ManagedProcess } from '../../common/processes';
import type { RunConfig, RunConfigInput } from '../../config/run-config';
import type { Stack } from '../../dev/stack';
import { rolloutScopeOf } from '../../agents/temporal/rollout-ids';
import { prepareTrainingBatch, type Datum } from '../../rl';
import { StoreClient } from '../../store/client';
import type { Span } from '../../store/types';
import type { RunSettings } from '../../workflows/run-types';
import { localRunConfig, startTestStack } from '../helpers/local-run';
import { ROOT } from '../helpers/commands';

let stack: Stack;
let dataDir = '';
let taskQueue = '';
let temporal: Client;
let store: StoreClient;
const agentQueue = `ai-sdk-agent-${process.pid}`;
const workers: ManagedProcess[] = [];

async function startAgentWorker(env: NodeJS.ProcessEnv = {}): Promise<ManagedProcess> {
  const w = await startProcess({
    name: 'ai-sdk-agent-worker',
    command: process.execPath,
    args: ['--import', 'tsx', path.join(ROOT, 'agents/examples/ai-sdk/worker.ts'), '--address', stack.temporal.address, '--task-queue', agentQueue],
    cwd: ROOT,
    env: { ...process.env, ...env },
    readyLine: /agent worker polling task queue/,
    readyTimeoutMs: 180_000,
  });
  workers.push(w);
  return w;
}

before(async () => {
  process.env.AGL_TRAINER_ENGINE = 'bigram';
  ({ stack, dataDir, taskQueue } = await startTestStack('agentwf', { runners: 0, initialModel: 'local/bigram' }));
  temporal = new Client({ connection: await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' }) });
  store = new StoreClient(stack.storeUrl, { retryDelaysMs: [50], token: '' });
});

after(async () => {
  for (const w of workers) await w.stop(2000);
  await stack?.stop();
});

function config(name: string, agentWorkflow: RunConfigInput['agentWorkflow'], tasks: unknown[], over: Partial<RunConfigInput> = {}): RunConfig {
  return localRunConfig(stack, dataDir, `agentwf-${name}`, {
    modelName: 'local/bigram',
    maxTokens: 16,
    evalEvery: 0,
    saveEvery: 0,
    rolloutMaxAttempts: 2,
    agentWorkflow,
    datasetBuilder: { batchSize: tasks.length, groupSize: 2, shuffle: false, trainDataset: tasks, valDataset: [tasks[0]] },
    ...over,
  });
}

/** Each action run of a datum (mask 1) with the tokens before it: the turns the step trained on. */
function trainedTurns(d: Datum): string[] {
  const seq = [d.modelInput[0]!, ...d.lossFnInputs.target_tokens!];
  const mask = [0, ...d.lossFnInputs.mask!];
  const turns: string[] = [];
  for (let i = 0; i < seq.length; ) {
    if (mask[i] !== 1) {
      i++;
      continue;
    }
    let j = i;
    while (j < seq.length && mask[j] === 1) j++;
    turns.push(JSON.stringify({ prompt: seq.slice(0, i), answer: seq.slice(i, j) }));
    i = j;
  }
  return turns;
}

interface AgentRun {
  workflowId: string;
  rolloutId: string;
  attemptId: string;
  status: string;
  /** Model calls the plugin completed, as the agent workflow's own history has them (invokeModel activities). */
  modelCalls: number;
  /** The answers' raw bodies as the agent got them (the proxy's extra fields: prompt_token_ids, token_ids). */
  answers: { prompt_token_ids: number[]; token_ids: number[] }[];
  memo: Record<string, unknown>;
}

/** The agent workflows a run started, read from Temporal (the agent's own histories). */
async function agentRuns(runName: string): Promise<AgentRun[]> {
  const out: AgentRun[] = [];
  for await (const wf of temporal.workflow.list({ query: `TaskQueue="${agentQueue}" AND AglRunName="${runName}"` })) {
    const scope = rolloutScopeOf(wf.workflowId);
    assert.ok(scope, `the agent workflow ${wf.workflowId} names its rollout`);
    const history = await temporal.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    const scheduled = new Map<string, string>();
    let modelCalls = 0;
    const answers: AgentRun['answers'] = [];
    for (const e of history.events ?? []) {
      if (e.activityTaskScheduledEventAttributes) scheduled.set(String(e.eventId), e.activityTaskScheduledEventAttributes.activityType?.name ?? '');
      const done = e.activityTaskCompletedEventAttributes;
      if (done && scheduled.get(String(done.scheduledEventId)) === 'invokeModel') {
        modelCalls++;
        const payload = done.result?.payloads?.[0]?.data;
        const result = payload ? JSON.parse(Buffer.from(payload).toString('utf8')) : null;
        const body = result?.response?.body;
        if (body?.prompt_token_ids) answers.push({ prompt_token_ids: body.prompt_token_ids, token_ids: body.choices[0].token_ids });
      }
    }
    out.push({ workflowId: wf.workflowId, ...scope, status: wf.status.name, modelCalls, answers, memo: (wf.memo ?? {}) as Record<string, unknown> });
  }
  return out;
}

async function proxySpans(rolloutId: string, attemptId: string): Promise<Span[]> {
  return (await store.querySpans(rolloutId, attemptId)).items.filter((s) => s.name === 'litellm_request');
}

/** The datums the run's step trained on, rebuilt from the store as the train step builds them. */
async function datumsOf(cfg: RunConfig, rolloutIds: string[][]): Promise<string[]> {
  const collected = rolloutIds.map((ids, taskIndex) => ({ taskIndex, rolloutIds: ids, statuses: ids.map(() => 'succeeded') }));
  const { groups } = await buildTrajectoryGroups(store, cfg as unknown as RunSettings, collected);
  const prepared = prepareTrainingBatch(groups);
  assert.equal(prepared.skip, false, 'the batch is trainable');
  return prepared.skip ? [] : prepared.data.flatMap(trainedTurns);
}

test('an unchanged AI SDK agent workflow with a tool trains: one workflow per rollout, linked to the run, its model calls are the datums', { timeout: 600_000 }, async () => {
  await startAgentWorker();
  const tasks = ['Alice', 'Bob'];
  const cfg = config('hello', { type: 'helloAgentWorkflow', taskQueue: agentQueue }, tasks);
  const run = await startOrAttach(temporal, taskQueue, cfg);
  const result = await run.handle.result();
  assert.equal(result.batchesCompleted, 1);

  const runs = await agentRuns(cfg.runName!);
  assert.equal(runs.length, tasks.length * 2, 'one agent workflow per rollout');
  const [metrics] = readJsonl(runPaths(cfg.logPath).metrics) as Record<string, number>[];
  assert.equal(metrics!['train/skipped_empty_batch'], 0, 'a step was trained');
  assert.equal(metrics!['env/all/by_group/frac_status_succeeded'], 1, 'every rollout succeeded');

  const expected: string[] = [];
  const byTask = new Map<string, string[]>();
  for (const r of runs) {
    assert.equal(r.status, 'COMPLETED');
    const memo = r.memo.agl as Record<string, unknown>;
    assert.equal(memo.trainingWorkflowId, run.handle.workflowId, 'the agent workflow names its training run');
    const spans = await proxySpans(r.rolloutId, r.attemptId);
    assert.ok(r.modelCalls > 0);
    assert.equal(spans.length, r.modelCalls, `${r.workflowId}: one proxy span per model call in its history`);
    assert.equal(r.answers.length, r.modelCalls, 'the agent got the token ids of each answer');
    for (const a of r.answers) expected.push(JSON.stringify({ prompt: a.prompt_token_ids, answer: a.token_ids }));
    const rollout = await store.getRolloutById(r.rolloutId);
    const task = JSON.stringify(rollout!.input);
    byTask.set(task, [...(byTask.get(task) ?? []), r.rolloutId]);
  }
  assert.equal(metrics!['env/all/total_turns'], expected.length, 'one trained turn per model call');
  const trained = await datumsOf(cfg, tasks.map((t) => byTask.get(JSON.stringify(t))!));
  assert.deepEqual([...trained].sort(), [...expected].sort(), 'the datums hold exactly the agent workflows\' turns, token for token');
});
