// Agent workflows as rollouts: unchanged `@temporalio/ai-sdk` agent workflows (agents/examples/ai-sdk/)
// on their own worker process, whose only change is the training provider, are trained by real runs (Temporal,
// worker, store, proxy, the local trainer's bigram engine, whose context holds the tools' declarations). What is
// checked comes from where it happened: the agent workflows' own Temporal histories (each model call the plugin
// made is an activity there), the spans the proxy wrote, and the step the run trained.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { buildTrajectoryGroups } from '../../activities/trajectories';
import { readJsonl, runPaths } from '../../records/run-files';
import { startOrAttach, status } from '../../cli/run-commands';
import { startProcess, type ManagedProcess } from '../../common/processes';
import type { RunConfig, RunConfigInput } from '../../config/run-config';
import type { Stack } from '../../dev/stack';
import { rolloutScopeOf } from '../../agents/temporal/rollout-ids';
import { prepareTrainingBatch, type Datum } from '../../rl';
import { StoreClient } from '../../store/client';
import type { Span } from '../../store/types';
import { rewardOf } from '../../store/reward-span';
import { helloReward } from '../../agents/examples/hello-task';
import type { RunSettings } from '../../shared/run-types';
import { localRunConfig, startTestStack } from '../helpers/local-run';
import { ROOT } from '../helpers/commands';

let stack: Stack;
let dataDir = '';
let taskQueue = '';
let temporal: Client;
let store: StoreClient;
const agentQueue = `ai-sdk-agent-${process.pid}`;
const workers: ManagedProcess[] = [];

/** The example's agent worker, or (`fixtures`) the test one, which has the examples' workflows and a few more. */
async function startAgentWorker(env: NodeJS.ProcessEnv = {}, fixtures = false): Promise<ManagedProcess> {
  const args = fixtures
    ? [path.join(__dirname, 'fixtures/agent-worker.ts'), stack.temporal.address, agentQueue]
    : [path.join(ROOT, 'agents/examples/ai-sdk/worker.ts'), '--address', stack.temporal.address, '--task-queue', agentQueue];
  const w = await startProcess({
    name: 'ai-sdk-agent-worker',
    command: process.execPath,
    args: ['--import', 'tsx', ...args],
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
    // The hello agent declares a tool: role_colon_tools shows it (the cookbook's role_colon has no tool format).
    rendererName: 'role_colon_tools',
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
  /** Activities started more than once (a worker died under them). */
  retriedActivities: string[];
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
    const retriedActivities: string[] = [];
    for (const e of history.events ?? []) {
      const started = e.activityTaskStartedEventAttributes;
      if (started && (started.attempt ?? 1) > 1) retriedActivities.push(scheduled.get(String(started.scheduledEventId)) ?? '?');
      if (e.activityTaskScheduledEventAttributes) scheduled.set(String(e.eventId), e.activityTaskScheduledEventAttributes.activityType?.name ?? '');
      const done = e.activityTaskCompletedEventAttributes;
      if (done && scheduled.get(String(done.scheduledEventId)) === 'invokeModel') {
        modelCalls++;
        const payload = done.result?.payloads?.[0]?.data;
        const result = payload?.length ? JSON.parse(Buffer.from(payload).toString('utf8')) : null;
        const body = result?.response?.body;
        if (body?.prompt_token_ids) answers.push({ prompt_token_ids: body.prompt_token_ids, token_ids: body.choices[0].token_ids });
      }
    }
    out.push({ workflowId: wf.workflowId, ...scope, status: wf.status.name, modelCalls, answers, memo: (wf.memo ?? {}) as Record<string, unknown>, retriedActivities });
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

test('kill -9 of the agent worker mid-episode, after one model call: the episode resumes without repeating the call, the rollout is trained once', { timeout: 600_000 }, async () => {
  for (const w of workers.splice(0)) await w.stop(2000);
  // The judge (an activity) takes 4 s in this worker, so the episode is caught waiting on it after its first call.
  const doomed = await startAgentWorker({ AGL_EXAMPLE_JUDGE_DELAY_MS: '4000' });
  const tasks = [{ secret: 7, maxTurns: 3 }];
  const cfg = config('guess-kill', { type: 'guessAgentWorkflow', taskQueue: agentQueue }, tasks);
  const run = await startOrAttach(temporal, taskQueue, cfg);

  // Wait until an episode has completed one model call and waits on the judge, then kill its worker.
  let victim: string | null = null;
  for (const deadline = Date.now() + 120_000; !victim && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    for await (const wf of temporal.workflow.list({ query: `TaskQueue="${agentQueue}" AND AglRunName="${cfg.runName}"` })) {
      const events = (await temporal.workflow.getHandle(wf.workflowId).fetchHistory()).events ?? [];
      const names = new Map(events.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes!.activityType?.name]));
      const modelDone = events.filter((e) => e.activityTaskCompletedEventAttributes && names.get(String(e.activityTaskCompletedEventAttributes.scheduledEventId)) === 'invokeModel').length;
      const judging = events.some((e) => e.activityTaskStartedEventAttributes && names.get(String(e.activityTaskStartedEventAttributes.scheduledEventId)) === 'judgeGuess')
        || [...names.values()].filter((n) => n === 'judgeGuess').length > 0;
      if (modelDone === 1 && judging) {
        victim = wf.workflowId;
        break;
      }
    }
  }
  assert.ok(victim, 'an episode reached its first judge call');
  doomed.kill9();
  await doomed.exited;
  await startAgentWorker();

  const result = await run.handle.result();
  assert.equal(result.batchesCompleted, 1);
  const runs = await agentRuns(cfg.runName!);
  assert.equal(runs.length, 2, 'one agent workflow per rollout, none started again');
  assert.ok(victim);
  const killed = runs.find((r) => r.workflowId === victim)!;
  assert.equal(killed.status, 'COMPLETED', 'the killed episode finished on the new worker');
  assert.ok(killed.retriedActivities.includes('judgeGuess'), `the kill interrupted the episode's judge call (retried: ${killed.retriedActivities.join(', ') || 'none'})`);
  const attempts = await store.queryAttempts(killed.rolloutId);
  assert.equal(attempts.items.length, 1, 'the rollout was not retried: its one attempt finished');
  assert.equal(attempts.items[0]!.status, 'succeeded');
  let turns = 0;
  const expected: string[] = [];
  for (const r of runs) {
    const spans = await proxySpans(r.rolloutId, r.attemptId);
    // The proxy saw each model call once: the first call was not made again after the kill.
    assert.equal(spans.length, r.modelCalls, `${r.workflowId}: proxy spans = model calls in its history`);
    turns += spans.length;
    for (const a of r.answers) expected.push(JSON.stringify({ prompt: a.prompt_token_ids, answer: a.token_ids }));
  }
  const [metrics] = readJsonl(runPaths(cfg.logPath).metrics) as Record<string, number>[];
  assert.equal(metrics!['train/skipped_empty_batch'], 0, 'a step was trained');
  assert.equal(metrics!['env/all/total_turns'], turns, 'every turn trained once');
  const trained = await datumsOf(cfg, [runs.map((r) => r.rolloutId)]);
  // Multi-turn episodes merge their turns into one sequence: each answer still appears after its prompt.
  assert.deepEqual([...trained].sort(), [...expected].sort(), 'the datums hold exactly the episodes\' turns, token for token');
});

/** The rewards recorded under an attempt (reward spans), as the trainer reads them. */
async function rewardsOf(rolloutId: string, attemptId: string): Promise<number[]> {
  return (await store.querySpans(rolloutId, attemptId)).items.map(rewardOf).filter((r): r is number => r !== null);
}

/** The text each agent workflow's model calls answered (from its history). */
async function answersOf(workflowId: string): Promise<string[]> {
  const events = (await temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  return events.flatMap((e) => {
    const data = e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
    const result = data?.length ? JSON.parse(Buffer.from(data).toString('utf8')) : null;
    return result?.response?.body?.choices ? [result.response.body.choices[0].message.content ?? ''] : [];
  });
}

test('rewards: a grader activity the run config names, and a reward reported mid-episode', { timeout: 600_000 }, async () => {
  for (const w of workers.splice(0)) await w.stop(2000);
  await startAgentWorker({}, true);
  const graded = config('graded', { type: 'helloAnswerWorkflow', taskQueue: agentQueue, grader: 'gradeHello' }, ['Carol']);
  const reported = config('reported', { type: 'reportingAgentWorkflow', taskQueue: agentQueue }, ['Dave']);
  const runs = await Promise.all([graded, reported].map((c) => startOrAttach(temporal, taskQueue, c)));
  for (const r of runs) assert.equal((await r.handle.result()).batchesCompleted, 1);

  for (const r of await agentRuns(graded.runName!)) {
    const [text] = await answersOf(r.workflowId);
    assert.deepEqual(await rewardsOf(r.rolloutId, r.attemptId), [helloReward('Carol', text!)], 'the grader scored the workflow\'s answer');
  }
  for (const r of await agentRuns(reported.runName!)) {
    const [text] = await answersOf(r.workflowId);
    assert.deepEqual(await rewardsOf(r.rolloutId, r.attemptId), [0.25 + helloReward('Dave', text!)], 'the reward the workflow reported');
  }
  const [metrics] = readJsonl(runPaths(reported.logPath).metrics) as Record<string, number>[];
  assert.equal(metrics!['train/skipped_empty_batch'], 0, 'the reported rewards were trained on');
});

test('a failed agent workflow is a failed attempt, retried as a new attempt and a new workflow', { timeout: 600_000 }, async () => {
  const cfg = config('flaky', { type: 'flakyAgentWorkflow', taskQueue: agentQueue }, ['Erin']);
  const run = await startOrAttach(temporal, taskQueue, cfg);
  assert.equal((await run.handle.result()).batchesCompleted, 1);
  const runs = await agentRuns(cfg.runName!);
  assert.equal(runs.length, 4, 'two workflows per rollout');
  const byRollout = new Map<string, AgentRun[]>();
  for (const r of runs) byRollout.set(r.rolloutId, [...(byRollout.get(r.rolloutId) ?? []), r]);
  let trainedTurns = 0;
  for (const [rolloutId, played] of byRollout) {
    const attempts = (await store.queryAttempts(rolloutId)).items;
    assert.deepEqual(attempts.map((a) => a.status), ['failed', 'succeeded'], 'the first attempt failed, the retry succeeded');
    assert.deepEqual(played.map((p) => `${p.attemptId}:${p.status}`).sort(), [`${attempts[0]!.attempt_id}:FAILED`, `${attempts[1]!.attempt_id}:COMPLETED`].sort());
    trainedTurns += (await proxySpans(rolloutId, attempts[1]!.attempt_id)).length;
  }
  const [metrics] = readJsonl(runPaths(cfg.logPath).metrics) as Record<string, number>[];
  assert.equal(metrics!['env/all/total_turns'], trainedTurns, 'only the succeeded attempts\' calls are trained');
});

test('an agent workflow that outlives the rollout timeout is a timed-out attempt, retried as a new workflow', { timeout: 600_000 }, async () => {
  // The rollout timeout is the agent workflow's execution timeout: the first workflow of each rollout times out.
  const cfg = config('hanging', { type: 'hangingFirstTimeAgentWorkflow', taskQueue: agentQueue }, ['Gina'], { rolloutTimeoutSeconds: 8 });
  const run = await startOrAttach(temporal, taskQueue, cfg);
  assert.equal((await run.handle.result()).batchesCompleted, 1);
  const runs = await agentRuns(cfg.runName!);
  assert.equal(runs.length, 4, 'two workflows per rollout');
  for (const rolloutId of new Set(runs.map((r) => r.rolloutId))) {
    const attempts = (await store.queryAttempts(rolloutId)).items;
    assert.equal(attempts.length, 2, 'one retry');
    assert.ok(['timeout', 'failed'].includes(attempts[0]!.status), `the first attempt ended unsucceeded (${attempts[0]!.status})`);
    assert.equal(attempts[1]!.status, 'succeeded');
    const played = runs.filter((r) => r.rolloutId === rolloutId);
    assert.deepEqual(played.map((p) => `${p.attemptId}:${p.status}`).sort(), [`${attempts[0]!.attempt_id}:TIMED_OUT`, `${attempts[1]!.attempt_id}:COMPLETED`].sort());
  }
});

test('cancelling a training run cancels its agent workflows', { timeout: 300_000 }, async () => {
  const cfg = config('cancelled', { type: 'slowAgentWorkflow', taskQueue: agentQueue }, ['Frank']);
  const run = await startOrAttach(temporal, taskQueue, cfg);
  const list = () => agentRuns(cfg.runName!);
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    const runs = await list();
    if (runs.length === 2 && runs.every((r) => r.modelCalls === 1)) break;
  }
  assert.deepEqual((await list()).map((r) => r.status), ['RUNNING', 'RUNNING']);
  await run.handle.cancel();
  let statuses: string[] = [];
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    statuses = (await list()).map((r) => r.status);
    if (statuses.every((s) => s === 'CANCELLED')) break;
  }
  assert.deepEqual(statuses, ['CANCELLED', 'CANCELLED'], 'the agent workflows were cancelled with their run');
});

test('a run whose agent task queue no worker polls says so in status', { timeout: 300_000 }, async () => {
  const cfg = config('unpolled', { type: 'helloAgentWorkflow', taskQueue: `nobody-polls-${process.pid}` }, ['Gina']);
  const run = await startOrAttach(temporal, taskQueue, cfg);
  try {
    let waiting: string | undefined;
    for (const deadline = Date.now() + 120_000; !waiting && Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
      waiting = (await status(run.handle)).waiting;
    }
    assert.match(waiting ?? '', new RegExp(`no worker polls the agent's task queue "nobody-polls-${process.pid}" \\(namespace default\\): its helloAgentWorkflow workflows wait for one`));
  } finally {
    await run.handle.cancel();
  }
});
