// The run configuration: every field of the seed's `Config` (agl_tinker_train.py) in camelCase with the seed's
// defaults, its `AGLDatasetBuilder` as `datasetBuilder`, and the few knobs a durable run adds (marked "ours").
// Unknown keys are errors, so a typo never falls back to a default silently.
import os from 'node:os';
import { z } from 'zod';
import { recommendedRenderer, UnknownModelError } from '../chat/models/model-info';
import { AglControllerSchema } from './agl-controller';
import { AgentName, AgentWorkflowSchema } from './agent-workflow';
import { EveryBatches, LearningRate, Temperature } from './run-changes';

const expandHome = (p: string) => (p === '~' ? os.homedir() : p.startsWith('~/') ? os.homedir() + p.slice(1) : p);

const probability = z.number().min(0).max(1);

export const DatasetBuilderSchema = z.strictObject({
  /** Tasks per batch (P groups per batch). */
  batchSize: z.number().int().min(1),
  nEpochs: z.number().int().min(1).default(1),
  /** .jsonl or .csv; read relative to the working directory of the process that validates the config. */
  trainFile: z.string().min(1).nullable().default(null),
  valFile: z.string().min(1).nullable().default(null),
  /** Inline tasks; any JSON values. */
  trainDataset: z.array(z.unknown()).nullable().default(null),
  valDataset: z.array(z.unknown()).nullable().default(null),
  /** Fraction kept for training when no validation set is given. */
  trainValSplit: probability.default(0.7),
  shuffle: z.boolean().default(true),
  /** Rollouts per task (G). */
  groupSize: z.number().int().min(1).default(4),
  seed: z.number().int().min(0).default(42),
});

/**
 * The losses a run may train with: those of the Tinker API (tinker-protocol.md §A.8) that the local trainer also
 * implements for RL, each with the `lossFnConfig` keys it reads (the Tinker SDK's `loss_fn_config` names).
 */
export const RL_LOSS_CONFIG_KEYS = {
  importance_sampling: [],
  ppo: ['clip_low_threshold', 'clip_high_threshold'],
  cispo: ['clip_low_threshold', 'clip_high_threshold'],
  dro: ['beta'],
} as const satisfies Record<string, readonly string[]>;
export type RlLossFn = keyof typeof RL_LOSS_CONFIG_KEYS;
const RL_LOSS_FNS = Object.keys(RL_LOSS_CONFIG_KEYS) as [RlLossFn, ...RlLossFn[]];

/** The tinker-cookbook's `KLReferenceConfig`: the model the KL penalty compares against. */
export const KlReferenceSchema = z.strictObject({
  /** base_model: its base model. */
  baseModel: z.string().min(1),
  /** load_checkpoint_path: sampler weights to load on it (`tinker://…`); null = the base weights. */
  loadCheckpointPath: z.string().regex(/^tinker:\/\//, 'a tinker:// path').nullable().default(null),
});

/** Checkpoint lifetimes on the service: 1 hour to 10 years (what it accepts). */
/**
 * The engine behind `baseUrl`, where the server cannot say it itself: SkyRL's backend and the `max_lora_rank` it
 * was started with (`npm start -- --engine skyrl` fills this in). null: whatever answers, checked by what it serves.
 */
export const EngineSchema = z.strictObject({
  name: z.enum(['skyrl', 'tinker', 'local']),
  backend: z.enum(['jax', 'fsdp', 'megatron']).optional(),
  maxLoraRank: z.number().int().min(1).optional(),
});
export type EngineConfig = z.infer<typeof EngineSchema>;

const TtlSeconds = z.number().int().min(3600).max(10 * 365 * 24 * 3600);

/**
 * What `"async": {}` resolves to (docs/async.md, "Defaults"): chosen on the long-tail bench (npm run bench -- async),
 * where a straggler's rollout takes up to ~6 median steps. K wide enough that pacing rarely holds a step for one;
 * pipelineDepth (capped at K) how far sampling runs ahead, so the runners stay busy while stragglers hold slots.
 * groupsPerBatch unset = datasetBuilder.batchSize (the sync batch).
 */
export const ASYNC_DEFAULTS = { maxStepsOffPolicy: 6, pipelineDepth: 2 } as const;

/** The tinker-cookbook's `AsyncConfig` (rl/train.py), in camelCase; every field has a default. */
export const AsyncSchema = z.strictObject({
  /** max_steps_off_policy: how many optimizer steps a group's policy may be behind the one it trains (0 = on-policy). */
  maxStepsOffPolicy: z.number().int().min(0).default(ASYNC_DEFAULTS.maxStepsOffPolicy),
  /** groups_per_batch: groups each optimizer step trains on; unset = datasetBuilder.batchSize. */
  groupsPerBatch: z.number().int().min(1).optional(),
  /**
   * pipeline_depth (cookbook PR #822): how many steps sampling may run ahead of training, the typical staleness
   * when sampling outpaces training; unset or null = min(ASYNC_DEFAULTS.pipelineDepth, maxStepsOffPolicy), resolved
   * when the config is validated ('pace' only). At most maxStepsOffPolicy.
   */
  pipelineDepth: z.number().int().min(0).nullable().default(null),
  /**
   * 'pace' (default): no group is discarded for staleness; sampling and steps pace themselves so none exceeds
   * maxStepsOffPolicy. 'resample': a group finished too stale is sampled again (up to 3 times) then dropped; it
   * biases training toward fast tasks and is kept for comparison (docs/async-bench.md). 'late' (tinker-cookbook
   * 0.6.1): every group trained, stalest first, no step waits for a straggler; a group that comes in more than
   * maxStepsOffPolicy behind is trained anyway (its staleness is logged), so the bound holds only while sampling
   * keeps up.
   */
  staleRule: z.enum(['pace', 'resample', 'late']).default('pace'),
}).superRefine((a, ctx) => {
  if (a.pipelineDepth !== null && a.pipelineDepth > a.maxStepsOffPolicy) {
    ctx.addIssue({ code: 'custom', path: ['pipelineDepth'], message: `must not be above maxStepsOffPolicy (${a.maxStepsOffPolicy}): no group may be more steps behind than that` });
  }
  if (a.pipelineDepth !== null && a.staleRule !== 'pace') {
    ctx.addIssue({ code: 'custom', path: ['pipelineDepth'], message: `applies to staleRule 'pace' only; with '${a.staleRule}' sampling runs maxStepsOffPolicy steps ahead` });
  }
});

/** Where a fork starts: the parent run and the step whose state it takes (0 = the parent's initial state). */
export const ForkOfSchema = z.strictObject({
  run: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,200}$/, 'a run name, or <runName>@<instance>'),
  step: z.number().int().min(0),
});

export const RunConfigSchema = z
  .strictObject({
    learningRate: LearningRate,
    datasetBuilder: DatasetBuilderSchema,
    modelName: z.string().min(1),
    /** Default: the model's recommended renderer (the cookbook's get_recommended_renderer_name; docs/models.md). */
    rendererName: z.string().min(1).optional(),
    computePostKl: z.boolean().default(false),
    loraRank: z.number().int().min(1).default(32),
    llmProxyPort: z.number().int().min(1).max(65535).default(12306),
    klPenaltyCoef: z.number().min(0).default(0),
    klDiscountFactor: probability.default(0),
    /** The KL penalty's reference (cookbook `kl_reference_config`); null = the base model `modelName`. */
    klReferenceModel: KlReferenceSchema.nullable().default(null),
    maxTokens: z.number().int().min(1).default(2048),
    trainTemperature: Temperature.default(1),
    evalTemperature: Temperature.default(1),
    topK: z.number().int().min(-1).default(-1),
    topP: z.number().gt(0).max(1).default(1),
    storeAddress: z.url().default('http://localhost:4747'),
    adapterFromLlmProxy: z.boolean().default(false),
    adapterAgentMatch: z.string().min(1).nullable().default(null),
    llmProxyRetryAttempts: z.number().int().min(0).max(10).default(0),
    concurrency: z.number().int().min(1).default(16),
    /** Default: 'ppo' when `async` is set (a clipped loss, as the cookbook advises off-policy), else 'importance_sampling'. */
    lossFn: z.enum(RL_LOSS_FNS).optional(),
    /** Passed to the service as `loss_fn_config`; keys as the Tinker SDK names them, checked against lossFn. */
    lossFnConfig: z.record(z.string(), z.number()).nullable().default(null),
    numSubsteps: z.number().int().min(1).default(1),
    /** W&B project: each step is logged to W&B too (WANDB_MODE=offline: a local run for `wandb sync`). */
    wandbProject: z.string().min(1).nullable().default(null),
    /** The W&B run's display name (default: runName). */
    wandbName: z.string().min(1).nullable().default(null),
    logPath: z.string().min(1).transform(expandHome),
    /** The Tinker service; null = the hosted service. */
    baseUrl: z.url().nullable().default(null),
    engine: EngineSchema.nullable().default(null),
    enableTrace: z.boolean().default(false),
    /** Ours: TensorBoard event files of every step under <tensorboardDir>/<runName>/ (null = none). */
    tensorboardDir: z.string().min(1).transform(expandHome).nullable().default(null),
    removeConstantRewardGroups: z.boolean().default(false),
    evalEvery: EveryBatches.default(20),
    saveEvery: EveryBatches.default(20),
    loadCheckpointPath: z.string().min(1).nullable().default(null),
    /** Cookbook `ttl_seconds`: lifetime of the checkpoints a run saves (the final one is kept); null = never expire. */
    checkpointTtlSeconds: TtlSeconds.nullable().default(604800),
    /** Cookbook `rolling_save_every`: every N steps a resume-only `rolling` row, the previous rolling one deleted (0 = off). */
    rollingSaveEvery: z.number().int().min(0).default(0),
    /** Cookbook `rolling_ttl_seconds`: lifetime of a rolling checkpoint, in case deleting it fails. */
    rollingTtlSeconds: TtlSeconds.default(7200),
    /**
     * Ours: how many recent steps of spans and rollouts the store keeps once trained ("all" = keep everything);
     * superseded per-step states and samplers no checkpoint names are deleted that many steps later, or an hour
     * after they were superseded, whichever comes first (kept with "all").
     */
    retainSteps: z.union([z.number().int().min(1), z.literal('all')]).default(1000),

    // ours
    /** Names the run (workflow id `agl-run-<runName>`); defaults to the last part of logPath. */
    runName: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'letters, digits, ".", "_" and "-" only, at most 100 characters')
      .nullable()
      .default(null),
    /** Where the LLM proxy listens; null = http://127.0.0.1:<llmProxyPort>. */
    proxyUrl: z.url().nullable().default(null),
    /**
     * Every proxy serving this run (runners spread over them): each new policy is posted to all of them, so a
     * call that names no rollout finds it current anywhere; one that does not answer is skipped (null = proxyUrl).
     */
    proxyUrls: z.array(z.url()).min(1).nullable().default(null),
    /** A rollout still unfinished after this many seconds is timed out by the store (null = never). */
    rolloutTimeoutSeconds: z.number().positive().nullable().default(600),
    /** Attempts per rollout before it counts as failed (the seed's store default is 1). */
    rolloutMaxAttempts: z.number().int().min(1).default(1),
    /**
     * Rollouts failed in a row, none succeeding, after which the run fails with their reason instead of training on
     * nothing (activities/rollout-failures.ts). null = a whole batch's (or evaluation's) rollouts; 0 = never.
     */
    stopAfterFailedRollouts: z.number().int().min(0).nullable().default(null),
    /**
     * An attempt whose runner sent no heartbeat or span for this long is marked unresponsive by the store and,
     * with rolloutMaxAttempts > 1, retried (null = only rolloutTimeoutSeconds ends it). A killed runner needs it.
     */
    rolloutUnresponsiveSeconds: z.number().positive().nullable().default(null),
    /**
     * Heartbeat timeout of the worker's activities: how soon Temporal retries an activity whose worker died
     * (null = 2 min for trainer calls, 1 min for rollouts, start-to-close only for bookkeeping).
     */
    activityHeartbeatTimeoutSeconds: z.number().min(5).nullable().default(null),
    /** Off-policy training (the cookbook's AsyncConfig); null = the synchronous loop. */
    async: AsyncSchema.nullable().default(null),
    /**
     * Pause the run (with the reason, resumable) after this many batches in a row whose succeeded rollouts carried
     * no reward: such a run learns nothing while looking fine. 0 = never pause (the warning stays).
     */
    pauseAfterBatchesWithoutReward: z.number().int().min(0).default(3),
    /** Agent-lightning 1.0 agents serve the rollouts, launched by `agl-controller` (config/agl-controller.ts). */
    aglController: AglControllerSchema.nullable().default(null),
    /** The agent whose runners serve the rollouts: only runners naming it take them (null = runners naming none). */
    agent: AgentName.nullable().default(null),
    /** An agent workflow serves each rollout instead of runners (config/agent-workflow.ts). */
    agentWorkflow: AgentWorkflowSchema.nullable().default(null),
    /**
     * Start from another run's state after one of its steps (docs/many-runs.md): weights and optimizer state from
     * that step's record, and the same batches, seeds and sampling from there on. `run` is the parent's run name,
     * or `<runName>@<instance>` when the store holds several runs of that name.
     */
    forkOf: ForkOfSchema.nullable().default(null),
    /** This run's share of a runner fleet shared with other runs: the store hands out rollouts in proportion (ours). */
    fleetWeight: z.number().positive().max(1000).default(1),
    /** At most this many of the run's rollouts are handed to runners at once (null = no cap). */
    maxRolloutsInFlight: z.number().int().min(1).nullable().default(null),
    /**
     * The run pauses itself before each of these batches, until `resume` (a sweep holds its children at its
     * milestones this way: workflows/sweep.ts). Synchronous runs only.
     */
    pauseBeforeBatches: z.array(z.number().int().min(1)).optional(),
  })
  .superRefine((cfg, ctx) => {
    if (cfg.rendererName === undefined && defaultRenderer(cfg.modelName) === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['rendererName'],
        message: `not given, and ${JSON.stringify(cfg.modelName)} is not a model of tinker-cookbook's registry, so it has no recommended renderer: name one (docs/models.md)`,
      });
    }
    if (cfg.adapterFromLlmProxy && cfg.adapterAgentMatch !== null) {
      ctx.addIssue({
        code: 'custom',
        path: ['adapterAgentMatch'],
        message: 'adapterAgentMatch is not supported when adapterFromLlmProxy is true',
      });
    }
    const d = cfg.datasetBuilder;
    if (d.trainFile === null && d.trainDataset === null) {
      ctx.addIssue({ code: 'custom', path: ['datasetBuilder', 'trainFile'], message: 'give trainFile or trainDataset' });
    }
    if (d.trainFile !== null && d.trainDataset !== null) {
      ctx.addIssue({ code: 'custom', path: ['datasetBuilder', 'trainDataset'], message: 'give trainFile or trainDataset, not both' });
    }
    if (d.valFile !== null && d.valDataset !== null) {
      ctx.addIssue({ code: 'custom', path: ['datasetBuilder', 'valDataset'], message: 'give valFile or valDataset, not both' });
    }
    const lossFn = lossFnOf(cfg);
    const allowed: readonly string[] = RL_LOSS_CONFIG_KEYS[lossFn];
    for (const key of Object.keys(cfg.lossFnConfig ?? {})) {
      if (allowed.includes(key)) continue;
      ctx.addIssue({
        code: 'custom',
        path: ['lossFnConfig', key],
        message: allowed.length ? `not a setting of ${lossFn}; it takes ${allowed.join(', ')}` : `${lossFn} takes no lossFnConfig`,
      });
    }
    const lo = cfg.lossFnConfig?.clip_low_threshold;
    const hi = cfg.lossFnConfig?.clip_high_threshold;
    if (lo !== undefined && hi !== undefined && lo > hi && allowed.includes('clip_low_threshold')) {
      ctx.addIssue({ code: 'custom', path: ['lossFnConfig', 'clip_low_threshold'], message: `must not be above clip_high_threshold (${hi})` });
    }
    if (cfg.agentWorkflow !== null && (cfg.agent !== null || cfg.aglController !== null)) {
      ctx.addIssue({ code: 'custom', path: ['agentWorkflow'], message: 'an agent workflow serves the rollouts: give agentWorkflow, agent or aglController, not several' });
    }
    if (cfg.agentWorkflow !== null && cfg.rolloutTimeoutSeconds === null) {
      ctx.addIssue({ code: 'custom', path: ['rolloutTimeoutSeconds'], message: 'agent workflows need a rollout timeout: it is their execution timeout, so that one never finishing cannot stall the run' });
    }
    if (cfg.forkOf !== null && cfg.async !== null) {
      ctx.addIssue({ code: 'custom', path: ['forkOf'], message: 'forking an async run is not supported yet (a fork starts at a synchronous batch)' });
    }
    if (cfg.async !== null && cfg.pauseBeforeBatches?.length) {
      ctx.addIssue({ code: 'custom', path: ['pauseBeforeBatches'], message: 'an async run has no batch boundaries to pause at (sweeps with --early-stop need synchronous runs)' });
    }
    if (cfg.async !== null && cfg.rolloutTimeoutSeconds === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['rolloutTimeoutSeconds'],
        message: 'an async run needs a rollout timeout, so that a rollout that never finishes cannot stall it',
      });
    }
  })
  .transform((cfg) => {
    const lossFn = lossFnOf(cfg);
    const rendererName = cfg.rendererName ?? defaultRenderer(cfg.modelName)!; // checked above
    return { ...cfg, rendererName, lossFn, lossFnConfig: cfg.lossFnConfig ?? DEFAULT_LOSS_FN_CONFIG[lossFn] ?? null, async: cfg.async && resolveAsync(cfg.async, cfg.datasetBuilder.batchSize) };
  });

/**
 * An async config with its defaults filled in, so that the workflow gets numbers, never a default of its own to
 * apply (a run started before a default changed replays with what it was given).
 */
function resolveAsync(a: z.output<typeof AsyncSchema>, batchSize: number) {
  const staleRule = a.staleRule;
  const pipelineDepth = staleRule === 'pace' ? (a.pipelineDepth ?? Math.min(ASYNC_DEFAULTS.pipelineDepth, a.maxStepsOffPolicy)) : a.pipelineDepth;
  return { ...a, groupsPerBatch: a.groupsPerBatch ?? batchSize, pipelineDepth, staleRule };
}

/** The model's recommended renderer, as a run without `rendererName` gets it; undefined for a model the registry lacks. */
function defaultRenderer(modelName: string): string | undefined {
  try {
    return recommendedRenderer(modelName);
  } catch (err) {
    if (err instanceof UnknownModelError) return undefined;
    throw err;
  }
}

/**
 * What a loss gets when the config gives no lossFnConfig, sent to the service as loss_fn_config: cispo's one-sided
 * clip (tinker-cookbook PR #763: the ratio only capped above, at 4).
 */
export const DEFAULT_LOSS_FN_CONFIG: Partial<Record<RlLossFn, Record<string, number>>> = {
  cispo: { clip_low_threshold: 0, clip_high_threshold: 4 },
};

/** The loss a run trains with: as configured, else 'ppo' for async runs and 'importance_sampling' otherwise. */
function lossFnOf(cfg: { lossFn?: RlLossFn; async: unknown }): RlLossFn {
  return cfg.lossFn ?? (cfg.async !== null ? 'ppo' : 'importance_sampling');
}

/** What a user writes (defaults optional). */
export type RunConfigInput = z.input<typeof RunConfigSchema>;
/** What the run uses (defaults applied, logPath expanded). */
export type RunConfig = z.output<typeof RunConfigSchema>;
export type DatasetBuilderConfig = RunConfig['datasetBuilder'];

export function runNameOf(cfg: RunConfig): string {
  if (cfg.runName) return cfg.runName;
  const base = cfg.logPath.replace(/\/+$/, '').split('/').pop() ?? 'run';
  return base.replace(/[^A-Za-z0-9._-]/g, '-') || 'run';
}

export function proxyUrlOf(cfg: Pick<RunConfig, 'proxyUrl' | 'llmProxyPort'>): string {
  return cfg.proxyUrl ?? `http://127.0.0.1:${cfg.llmProxyPort}`;
}
