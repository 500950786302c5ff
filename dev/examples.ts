// The example runs `npm start` trains on the local trainer (or, with --hosted, on hosted Tinker; with --engine, on
// an engine the stack runs, SkyRL). Each is an ordinary run config.
import path from 'node:path';
import type { RunConfigInput } from '../config/run-config';
import type { SkyrlBackend } from '../engines/skyrl/provision';

export interface ExampleUrls {
  storeUrl: string;
  trainerUrl: string;
  proxyPort: number;
  logPath: string;
}

export interface ExampleRun {
  agent: 'hello' | 'hello-longtail' | 'guess' | 'hello-responses' | 'hello-messages' | 'hello-completions';
  model: string;
  renderer: string;
  config(urls: ExampleUrls): RunConfigInput;
  /**
   * Set when the example's agent runs as Temporal workflows on a worker of its own (run config `agentWorkflow`):
   * `npm start` supervises that worker in the runners' place.
   */
  agentWorker?: { script: string; taskQueue: string };
}

/** The AI SDK example's agent worker and the task queue its workflows run on. */
export const AI_SDK_AGENT = { script: 'agents/examples/ai-sdk/worker.ts', taskQueue: 'ai-sdk-agent' } as const;

/** What `npm start` changes in an example: another base model, a renderer, hosted Tinker, an engine of its own. */
export interface ExampleChoice {
  model: string;
  renderer: string;
  hosted: boolean;
  engine?: ExampleEngine;
}

/** The run config's `engine` (config/run-config.ts), and what names the run: which weights it starts from. */
export interface ExampleEngine {
  name: 'skyrl';
  backend: SkyrlBackend;
  maxLoraRank: number;
  /** In the run's name: the model, or tiny-qwen3 for the tiny Qwen3 served under Qwen3-8B's name. */
  label: string;
  /** The tiny Qwen3 on CPU: the example's short answers and learning rate, not a real model's. */
  tiny: boolean;
}

/**
 * The example's run config for the chosen model, logging to <runsDir>/<runName>. Another model is another run (its
 * name says which, and which engine), so it never attaches to the example's run on the default model. On hosted
 * Tinker: LoRA rank 32, a learning rate for LoRA on billion-parameter models, room for a real model's answers.
 */
export function exampleConfig(name: string, choice: ExampleChoice, services: Omit<ExampleUrls, 'logPath'> & { runsDir: string }): RunConfigInput {
  const ex = EXAMPLES[name]!;
  const e = choice.engine;
  const same = choice.model === ex.model && choice.renderer === ex.renderer && !choice.hosted && !e;
  // An engine's run is named after it too: the same model on SkyRL and on hosted Tinker are two runs.
  const label = e ? `${e.name}-${e.label}` : choice.model;
  const runName = same ? name : `${name}-${label.replace(/[^A-Za-z0-9._-]+/g, '-').toLowerCase()}`.slice(0, 100);
  const base = ex.config({ ...services, logPath: path.join(services.runsDir, runName) });
  if (same) return base;
  return {
    ...base,
    runName,
    modelName: choice.model,
    rendererName: choice.renderer,
    ...(choice.hosted ? { loraRank: 32, learningRate: 1e-4, maxTokens: 256 } : {}),
    // SkyRL: LoRA within the server's max_lora_rank, and `engine` for what the server cannot say itself (its backend
    // and that rank: config/run-config.ts); a real model gets the hosted settings' learning rate and room to answer.
    ...(e
      ? {
          baseUrl: services.trainerUrl,
          loraRank: e.maxLoraRank,
          engine: { name: e.name, backend: e.backend, maxLoraRank: e.maxLoraRank },
          ...(e.tiny ? {} : { learningRate: 1e-4, maxTokens: 256 }),
        }
      : {}),
  };
}

function helloThrough(...names: ('hello-responses' | 'hello-messages' | 'hello-completions')[]): Record<string, ExampleRun> {
  return Object.fromEntries(
    names.map((name) => [name, { agent: name, model: 'local/tiny-hello', renderer: 'role_colon', config: (u: ExampleUrls) => ({ ...EXAMPLES.hello!.config(u), runName: name }) }]),
  );
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => String(from + i));

/** What both examples share: the local services, 16 tasks x 4 rollouts per batch, evals and checkpoints every 5. */
function localExample(u: ExampleUrls, runName: string, modelName: string, maxTokens: number, datasetBuilder: RunConfigInput['datasetBuilder']): RunConfigInput {
  return {
    runName,
    learningRate: 3e-3,
    modelName,
    rendererName: 'role_colon',
    baseUrl: u.trainerUrl,
    storeAddress: u.storeUrl,
    llmProxyPort: u.proxyPort,
    logPath: u.logPath,
    maxTokens,
    loraRank: 8,
    concurrency: 64,
    evalEvery: 5,
    saveEvery: 5,
    rolloutTimeoutSeconds: 120,
    // A runner killed mid-rollout: its attempt goes silent, is declared unresponsive and retried elsewhere.
    rolloutUnresponsiveSeconds: 30,
    rolloutMaxAttempts: 3,
    datasetBuilder,
  };
}

export const EXAMPLES: Record<string, ExampleRun> = {
  // The seed's hello task on a tiny local model that knows the answer's format but not which answer pays.
  hello: {
    agent: 'hello',
    model: 'local/tiny-hello',
    renderer: 'role_colon',
    config: (u) =>
      localExample(u, 'hello', 'local/tiny-hello', 24, { batchSize: 16, groupSize: 4, seed: 42, trainDataset: range(0, 320), valDataset: range(500, 524) }),
  },
  // hello with a seeded long-tail delay before each answer (median AGL_LONGTAIL_MEDIAN_MS, default 300 ms, p99 10x):
  // what async training is for (`npm run bench -- async`).
  'hello-longtail': {
    agent: 'hello-longtail',
    model: 'local/tiny-hello',
    renderer: 'role_colon',
    config: (u) => ({ ...EXAMPLES.hello!.config(u), runName: 'hello-longtail' }),
  },
  // hello-longtail trained by the async loop (agents/examples/hello-async.run.json is the same run for the client):
  // the trainer waits for no batch's slowest rollout. A killed worker costs seconds: its activities are retried
  // once their heartbeats stop for 10 s (Temporal's default waits 1-2 minutes).
  'hello-async': {
    agent: 'hello-longtail',
    model: 'local/tiny-hello',
    renderer: 'role_colon',
    config: (u) => ({
      ...EXAMPLES.hello!.config(u),
      runName: 'hello-async',
      activityHeartbeatTimeoutSeconds: 10,
      // The run config's async defaults (K 6, pipelineDepth 2, groupsPerBatch = the batch size: docs/async.md).
      async: {},
    }),
  },
  // hello asked through the proxy's other agent APIs (agents/examples/hello-apis.ts): OpenAI Responses, Anthropic
  // Messages, legacy Completions. Same task, model and prompt tokens as hello, so the same run otherwise.
  ...helloThrough('hello-responses', 'hello-messages', 'hello-completions'),
  // The hello agent as an AI SDK workflow with a tool (agents/examples/ai-sdk/workflows.ts, docs/agents-on-temporal.md),
  // on its own Temporal worker: each rollout is one helloAgentWorkflow. Its prompt declares the tool (~316 tokens),
  // so it trains local/tiny-hello-tools (context 512, the hello forms after that declaration) with role_colon_tools,
  // the renderer that shows tools to a role_colon model. 8 tasks x 4 a batch: each rollout is a workflow and its
  // activities, so a batch takes about as long as hello's 16 x 4.
  'ai-sdk': {
    agent: 'hello',
    model: 'local/tiny-hello-tools',
    renderer: 'role_colon_tools',
    agentWorker: AI_SDK_AGENT,
    config: (u) => ({
      ...localExample(u, 'ai-sdk', 'local/tiny-hello-tools', 24, { batchSize: 8, groupSize: 4, seed: 42, trainDataset: range(0, 160), valDataset: range(500, 512) }),
      rendererName: 'role_colon_tools',
      agentWorkflow: { type: 'helloAgentWorkflow', taskQueue: AI_SDK_AGENT.taskQueue },
    }),
  },
  // Multi-turn: guess a number from 1 to 10 with higher/lower feedback.
  guess: {
    agent: 'guess',
    model: 'local/tiny-guess',
    renderer: 'role_colon',
    config: (u) =>
      localExample(u, 'guess', 'local/tiny-guess', 12, {
        batchSize: 16,
        groupSize: 4,
        seed: 42,
        trainDataset: Array.from({ length: 320 }, (_, i) => ({ secret: (i % 10) + 1 })),
        valDataset: Array.from({ length: 10 }, (_, i) => ({ secret: i + 1 })),
      }),
  },
};
