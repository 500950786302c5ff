// Done when of the agent APIs: each of Responses, Messages and Completions trains, in a short real run (Temporal,
// worker, store, proxy, the local trainer with its bigram engine: the only local model whose context holds an
// agent's tool declarations), on rollouts played by its real clients: the `openai` package (Python and Node) and
// the OpenAI Agents SDK on Responses, the `anthropic` package with and without streaming on Messages, the `openai`
// package (Python and Node) on Completions. The run trains a step (not skipped) whose datums hold exactly the
// clients' turns: each answer's token ids, after the prompt token ids the client was answered with.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { buildTrajectoryGroups } from '../../activities/trajectories';
import { readJsonl, runPaths } from '../../records/run-files';
import { startRunners, type RunnerGroup } from '../../agents/runner';
import { startOrAttach } from '../../cli/run-commands';
import type { RunConfig } from '../../config/run-config';
import type { Stack } from '../../dev/stack';
import { prepareTrainingBatch, type Datum } from '../../rl';
import { StoreClient } from '../../store/client';
import type { RunSettings } from '../../shared/run-types';
import { localRunConfig, startTestStack } from '../helpers/local-run';
import { agentApisVenv, PythonAgents, runNodeAgent, type ClientName, type ClientRun } from './agent-apis';

interface Task {
  client: ClientName;
  question: string;
}

let stack: Stack | undefined;
let dataDir = '';
let taskQueue = '';
let python: PythonAgents | undefined;
let runners: RunnerGroup<Task> | undefined;
let temporal: Client;
/** What each rollout's client was answered, by rollout id. */
const played = new Map<string, { task: Task; run: ClientRun }>();

before(async () => {
  python = await PythonAgents.start(await agentApisVenv());
  // The local trainer's bigram engine (context 512) instead of the tiny transformers (96 to 256 bytes of context).
  process.env.AGL_TRAINER_ENGINE = 'bigram';
  ({ stack, dataDir, taskQueue } = await startTestStack('apis', { runners: 0, initialModel: 'local/bigram' }));
  temporal = new Client({ connection: await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' }) });
  runners = startRunners<Task>(
    4,
    async (task, ctx) => {
      const url = ctx.llm!.endpoint;
      const run = task.client.startsWith('node-')
        ? await runNodeAgent(task.client as 'node-responses' | 'node-completions', url, task.question, ctx.signal)
        : await python!.run(task.client, url, task.question);
      played.set(ctx.rollout.rollout_id, { task, run });
      return run.reward;
    },
    { storeUrl: stack.storeUrl, pollIntervalMs: 100, log: () => {} },
  );
});

after(async () => {
  await runners?.stop();
  await python?.close();
  await stack?.stop();
});

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

async function trainOn(name: string, clients: ClientName[]): Promise<void> {
  played.clear();
  const tasks: Task[] = clients.map((client) => ({ client, question: 'What is 2+3?' }));
  const cfg: RunConfig = localRunConfig(stack!, dataDir, `apis-${name}`, {
    modelName: 'local/bigram',
    // The clients declare tools; role_colon as the cookbook has it shows none, so this project's tool format.
    rendererName: 'role_colon_tools',
    maxTokens: 40,
    evalEvery: 0,
    saveEvery: 0,
    datasetBuilder: { batchSize: tasks.length, groupSize: 2, shuffle: false, trainDataset: tasks, valDataset: [tasks[0]!] },
  });
  const run = await startOrAttach(temporal, taskQueue, cfg);
  assert.equal((await run.handle.result()).batchesCompleted, 1);

  // Every rollout was played by its client, and each was answered at least once.
  assert.equal(played.size, tasks.length * 2, `rollouts played: ${[...played.values()].map((p) => p.task.client).join(', ')}`);
  const byClient = new Map<ClientName, ClientRun[]>();
  for (const { task, run: r } of played.values()) byClient.set(task.client, [...(byClient.get(task.client) ?? []), r]);
  for (const client of clients) {
    assert.equal(byClient.get(client)?.length, 2, `${client} played its group`);
    for (const r of byClient.get(client)!) assert.ok(r.answers.length > 0, `${client} was answered: ${JSON.stringify(r.notes)}`);
  }
  const answers = [...played.values()].flatMap((p) => p.run.answers);

  // The step the run took trained on those turns.
  const [metrics] = readJsonl(runPaths(cfg.logPath).metrics) as Record<string, number>[];
  assert.equal(metrics!['train/skipped_empty_batch'], 0, 'a step was trained');
  assert.ok(Object.keys(metrics!).some((k) => k.startsWith('optim/')), 'forward_backward reported its metrics');
  assert.equal(metrics!['env/all/total_turns'], answers.length, 'one turn per answered call');
  assert.equal(metrics!['env/all/total_ac_tokens'], answers.reduce((n, a) => n + a.token_ids.length, 0), 'the tokens the clients were answered');

  // Its datums, rebuilt from the store as the train step builds them: exactly the clients' turns.
  const ids = [...played.entries()];
  const collected = tasks.map((task, taskIndex) => {
    const rolloutIds = ids.filter(([, p]) => p.task === task || JSON.stringify(p.task) === JSON.stringify(task)).map(([id]) => id);
    return { taskIndex, rolloutIds, statuses: rolloutIds.map(() => 'succeeded') };
  });
  const store = new StoreClient(stack!.storeUrl, { retryDelaysMs: [50], token: '' });
  const { groups } = await buildTrajectoryGroups(store, cfg as unknown as RunSettings, collected);
  const prepared = prepareTrainingBatch(groups);
  assert.equal(prepared.skip, false);
  const trained = prepared.skip ? [] : prepared.data.flatMap(trainedTurns);
  const expected = answers.map((a) => JSON.stringify({ prompt: a.prompt_token_ids, answer: a.token_ids }));
  assert.deepEqual([...trained].sort(), [...expected].sort(), 'the datums hold each answered turn, token for token');
}

test('Responses: the openai package (Python and Node) and an OpenAI Agents SDK agent train a step', { timeout: 600_000 }, async () => {
  await trainOn('responses', ['openai-responses', 'agents-sdk', 'node-responses']);
});

test('Messages: the anthropic package, with and without streaming, trains a step', { timeout: 600_000 }, async () => {
  await trainOn('messages', ['anthropic', 'anthropic-stream']);
});

test('Completions: the openai package (Python and Node) trains a step', { timeout: 600_000 }, async () => {
  await trainOn('completions', ['openai-completions', 'node-completions']);
});
