// The agent clients a new user would reach for, each playing rollouts through the proxy on the
// plain runner path, trained by one real run (one stack for all of them: Temporal, worker, store, proxy, the local
// trainer's bigram engine, whose context holds tool declarations). Per client: the Vercel AI SDK outside Temporal
// (`ai` + `@ai-sdk/openai`: its default model on the Responses API, `.chat()`, generateText, streamText, a tool),
// `@ai-sdk/anthropic`, the Anthropic TypeScript SDK, LangChain's ChatOpenAI, a LangGraph JS ReAct agent with a tool,
// and the OpenAI Agents SDK for JavaScript with a tool. The step the run trained holds exactly the calls the proxy
// recorded (its spans in the store, token for token), every client's rollouts among them, and each client got the
// text the proxy answered.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import Anthropic from '@anthropic-ai/sdk';
import { tool as lcTool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { Agent, OpenAIProvider, Runner, tool as agentsTool } from '@openai/agents';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { z } from 'zod';
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

const CLIENTS = [
  'ai-responses-generate', 'ai-responses-stream', 'ai-chat-generate', 'ai-chat-stream', 'ai-chat-tool',
  'ai-anthropic', 'anthropic-sdk', 'langchain-chat', 'langgraph-agent', 'openai-agents',
] as const;
type ClientName = (typeof CLIENTS)[number];

interface Task {
  client: ClientName;
  question: string;
}

let stack: Stack;
let dataDir = '';
let taskQueue = '';
let runners: RunnerGroup<Task> | undefined;
let temporal: Client;
/** What each rollout's client returned as its final text, by rollout id. */
const played = new Map<string, { task: Task; text: string; attemptId: string }>();
const KEY = 'agl-test';
// Its `prebuilt` entry point is an `exports` subpath, which this project's module resolution does not type.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { createReactAgent } = require('@langchain/langgraph/prebuilt') as {
  createReactAgent(p: { llm: ChatOpenAI; tools: unknown[] }): { invoke(input: unknown, opts: unknown): Promise<{ messages: { content: unknown }[] }> };
};

/** The proxy's scoped base, with or without the `/v1` the client appends itself. */
const base = (endpoint: string, v1: boolean) => endpoint.replace(/\/+$/, '').replace(/\/v1$/, '') + (v1 ? '/v1' : '');

const weather = {
  description: 'The weather in a city.',
  inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
  execute: async ({ city }: { city: string }) => `sunny in ${city}`,
};

/** Plays one rollout with `client`, as a user of that library writes it; returns the final text. */
async function play(client: ClientName, endpoint: string, model: string, question: string, signal: AbortSignal): Promise<string> {
  const openai = createOpenAI({ baseURL: base(endpoint, true), apiKey: KEY });
  switch (client) {
    case 'ai-responses-generate':
      return (await generateText({ model: openai(model), prompt: question, abortSignal: signal })).text;
    case 'ai-responses-stream': {
      const s = streamText({ model: openai(model), prompt: question, abortSignal: signal });
      let text = '';
      for await (const part of s.textStream) text += part;
      return text;
    }
    case 'ai-chat-generate':
      return (await generateText({ model: openai.chat(model), prompt: question, abortSignal: signal })).text;
    case 'ai-chat-stream': {
      const s = streamText({ model: openai.chat(model), prompt: question, abortSignal: signal });
      let text = '';
      for await (const part of s.textStream) text += part;
      return text;
    }
    case 'ai-chat-tool':
      return (await generateText({ model: openai.chat(model), prompt: question, tools: { weather: tool(weather) }, stopWhen: stepCountIs(3), abortSignal: signal })).text;
    case 'ai-anthropic': {
      const anthropic = createAnthropic({ baseURL: base(endpoint, true), apiKey: KEY });
      return (await generateText({ model: anthropic(model), prompt: question, abortSignal: signal })).text;
    }
    case 'anthropic-sdk': {
      const anthropic = new Anthropic({ baseURL: base(endpoint, false), apiKey: KEY, maxRetries: 2 });
      const msg = await anthropic.messages.create({ model, max_tokens: 40, messages: [{ role: 'user', content: question }] }, { signal });
      return msg.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    }
    case 'langchain-chat': {
      const chat = new ChatOpenAI({ model, apiKey: KEY, configuration: { baseURL: base(endpoint, true) } });
      const res = await chat.invoke(question, { signal });
      return typeof res.content === 'string' ? res.content : JSON.stringify(res.content);
    }
    case 'langgraph-agent': {
      const chat = new ChatOpenAI({ model, apiKey: KEY, configuration: { baseURL: base(endpoint, true) } });
      const getWeather = lcTool(async ({ city }: { city: string }) => `sunny in ${city}`, { name: 'weather', description: 'The weather in a city.', schema: z.object({ city: z.string() }) });
      const agent = createReactAgent({ llm: chat, tools: [getWeather] });
      const out = await agent.invoke({ messages: [{ role: 'user', content: question }] }, { signal, recursionLimit: 6 });
      const last = out.messages[out.messages.length - 1]!;
      return typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
    }
    case 'openai-agents': {
      // On Chat Completions: on Responses the JS Agents SDK fails every answer the run's maxTokens cuts short
      // (status "incomplete", as OpenAI reports it), and the test model's answers always run to that limit.
      const provider = new OpenAIProvider({ openAIClient: new OpenAI({ baseURL: base(endpoint, true), apiKey: KEY }) as never, useResponses: false });
      const getWeather = agentsTool({ name: 'weather', description: 'The weather in a city.', parameters: z.object({ city: z.string() }), execute: async ({ city }) => `sunny in ${city}` });
      const agent = new Agent({ name: 'assistant', instructions: 'Answer briefly.', model, tools: [getWeather] });
      const res = await new Runner({ modelProvider: provider, tracingDisabled: true }).run(agent, question, { maxTurns: 3, signal });
      return String(res.finalOutput ?? '');
    }
  }
}

before(async () => {
  process.env.AGL_TRAINER_ENGINE = 'bigram';
  ({ stack, dataDir, taskQueue } = await startTestStack('clients', { runners: 0, initialModel: 'local/bigram' }));
  temporal = new Client({ connection: await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' }) });
  runners = startRunners<Task>(
    4,
    async (task, ctx) => {
      const text = await play(task.client, ctx.llm!.endpoint, ctx.llm!.model, task.question, ctx.signal);
      played.set(ctx.rollout.rollout_id, { task, text, attemptId: ctx.rollout.attempt.attempt_id });
      return text.length > 0 ? 1 : 0;
    },
    { storeUrl: stack.storeUrl, pollIntervalMs: 100, log: (l) => process.stderr.write(`${l}\n`) },
  );
});

after(async () => {
  await runners?.stop();
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

test('every agent client trains a step through the proxy, its calls the datums', { timeout: 900_000 }, async () => {
  const tasks: Task[] = CLIENTS.map((client) => ({ client, question: 'What is the weather in Paris?' }));
  const cfg: RunConfig = localRunConfig(stack, dataDir, 'clients', {
    modelName: 'local/bigram',
    // Several clients send tools: role_colon_tools shows them (the cookbook's role_colon has no tool format).
    rendererName: 'role_colon_tools',
    maxTokens: 40,
    evalEvery: 0,
    saveEvery: 0,
    datasetBuilder: { batchSize: tasks.length, groupSize: 2, shuffle: false, trainDataset: tasks, valDataset: [tasks[0]!] },
  });
  const run = await startOrAttach(temporal, taskQueue, cfg);
  assert.equal((await run.handle.result()).batchesCompleted, 1);

  const store = new StoreClient(stack.storeUrl, { retryDelaysMs: [50], token: '' });
  const expected: string[] = [];
  const failedClients: string[] = [];
  const textMismatches: string[] = [];
  for (const task of tasks) {
    const mine = [...played.entries()].filter(([, p]) => p.task.client === task.client);
    if (mine.length !== 2) failedClients.push(`${task.client} (${mine.length}/2 rollouts played)`);
    for (const [rolloutId, p] of mine) {
      const spans = (await store.querySpans(rolloutId, p.attemptId)).items.filter((s) => s.name === 'litellm_request');
      assert.ok(spans.length > 0, `${task.client}: its calls were recorded`);
      for (const s of spans) expected.push(JSON.stringify({ prompt: s.attributes.prompt_token_ids, answer: s.attributes.response_token_ids }));
      // The client parsed the proxy's answer: its final text is, character for character, the text the proxy's
      // last call answered as its span recorded it (empty where that call answered only a tool call).
      const last = spans.reduce((a, b) => (Number(b.sequence_id) > Number(a.sequence_id) ? b : a));
      const lastText = String(last.attributes['gen_ai.completion.0.content'] ?? '');
      if (p.text !== lastText) textMismatches.push(`${task.client}: got ${JSON.stringify(p.text)}, the proxy answered ${JSON.stringify(lastText)}`);
    }
  }
  assert.deepEqual(failedClients, [], 'every client played its rollouts');
  assert.deepEqual(textMismatches, [], "each client's final text is the proxy's last answer");

  const [metrics] = readJsonl(runPaths(cfg.logPath).metrics) as Record<string, number>[];
  assert.equal(metrics!['train/skipped_empty_batch'], 0, 'a step was trained');
  assert.equal(metrics!['env/all/total_turns'], expected.length, 'one trained turn per recorded call');
  const collected = tasks.map((task, taskIndex) => {
    const rolloutIds = [...played.entries()].filter(([, p]) => p.task.client === task.client).map(([id]) => id);
    return { taskIndex, rolloutIds, statuses: rolloutIds.map(() => 'succeeded') };
  });
  const { groups } = await buildTrajectoryGroups(store, cfg as unknown as RunSettings, collected);
  const prepared = prepareTrainingBatch(groups);
  assert.equal(prepared.skip, false);
  const trained = prepared.skip ? [] : prepared.data.flatMap(trainedTurns);
  assert.deepEqual([...trained].sort(), [...expected].sort(), 'the datums hold each recorded call, token for token');
});
