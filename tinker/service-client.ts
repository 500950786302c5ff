// Entry point of the Tinker client: one session per ServiceClient, created on first use. Activities are
// stateless, so besides creating models it can reattach to one by model_id, or rebuild one from a
// tinker:// checkpoint. REST calls (capabilities, checkpoints, TTLs) need no session: like the SDK's RestClient
// they only read client/config for the credential.
import { isHostedTinkerUrl, resolveOptions, type CallOptions, type ResolvedOptions, type TinkerClientOptions } from './config';
import { retrieveFuture } from './futures';
import { TinkerHttp, pathSegment, type RequestSpec } from './http';
import { SamplingClient } from './sampling-client';
import type { ClientConfig } from './client-config';
import { Session, startClient, type FinishStatus } from './session';
import { SDK_038_PROFILE, profileFromOpenApi, type EngineProfile } from './engine-profile';
import { TinkerApiError } from './errors';
import { TrainingClient } from './training-client';

export interface BaseModelCapability {
  modelName: string;
  maxContextLength: number | null;
}

export interface LoraOptions {
  rank?: number;
  seed?: number;
  userMetadata?: Record<string, string>;
}

/** 1 hour to 10 years, as the service takes them. */
export const MIN_TTL_SECONDS = 3600;
export const MAX_TTL_SECONDS = 10 * 365 * 24 * 3600;

export function checkTtlSeconds(ttl: number | null, what = 'ttlSeconds'): void {
  if (ttl === null) return;
  if (!Number.isInteger(ttl) || ttl < MIN_TTL_SECONDS || ttl > MAX_TTL_SECONDS) {
    throw new RangeError(`${what} must be a whole number of seconds from ${MIN_TTL_SECONDS} (1 hour) to ${MAX_TTL_SECONDS} (10 years), or null; got ${ttl}`);
  }
}

/**
 * tinker://<run>/<weights|sampler_weights>/<name> → the run and the checkpoint id (`weights/<name>`). SkyRL's
 * save_weights_for_sampler answers `tinker://<run>/<name>` for the checkpoint it lists as `sampler_weights/<name>`.
 */
export function parseCheckpointPath(tinkerPath: string): { runId: string; checkpointId: string } {
  const m = /^tinker:\/\/([^/]+)\/((?:weights|sampler_weights)\/[^/]+)$/.exec(tinkerPath);
  if (m) return { runId: m[1], checkpointId: m[2] };
  const short = /^tinker:\/\/([^/]+)\/([^/]+)$/.exec(tinkerPath);
  if (short) return { runId: short[1], checkpointId: `sampler_weights/${short[2]}` };
  throw new Error(`not a tinker checkpoint path: ${tinkerPath}`);
}

export class ServiceClient {
  readonly options: ResolvedOptions;
  private readonly http: TinkerHttp;
  private sessionPromise: Promise<Session> | undefined;
  private configPromise: Promise<ClientConfig> | undefined;
  private profilePromise: Promise<EngineProfile> | undefined;

  constructor(options: TinkerClientOptions | string = {}) {
    this.options = resolveOptions(typeof options === 'string' ? { baseUrl: options } : options);
    this.http = new TinkerHttp(this.options);
  }

  /** The session, created on first use (client/config, credential, dynamic_config, create_session, heartbeats). */
  session(): Promise<Session> {
    this.sessionPromise ??= this.rest().then((config) => Session.create(this.http, this.options, config));
    this.sessionPromise.catch(() => (this.sessionPromise = undefined));
    return this.sessionPromise;
  }

  /** client/config read once and the credential set up from it; REST calls need no session (the SDK's RestClient). */
  private rest(): Promise<ClientConfig> {
    this.configPromise ??= startClient(this.http, this.options);
    this.configPromise.catch(() => (this.configPromise = undefined));
    return this.configPromise;
  }

  /**
   * What the engine serves, read once from its OpenAPI document (SDK-0.25-era servers such as SkyRL publish one);
   * a server that has none (hosted Tinker, the local trainer) speaks SDK 0.38. Unreachable: throws.
   */
  engineProfile(options: CallOptions = {}): Promise<EngineProfile> {
    const known = this.options.profile ?? (isHostedTinkerUrl(this.options.baseUrl) ? SDK_038_PROFILE : undefined);
    if (known) return Promise.resolve(known);
    this.profilePromise ??= this.http
      .getJson<Record<string, unknown>>('/openapi.json', { ...this.spec(options, ''), sdkMethod: undefined, retry: 'transport', fromRoot: true })
      .then((doc) => (doc && typeof doc === 'object' && 'paths' in doc ? profileFromOpenApi(doc) : SDK_038_PROFILE))
      .catch((err) => {
        if (err instanceof TinkerApiError || err instanceof SyntaxError) return SDK_038_PROFILE;
        throw err;
      });
    this.profilePromise.catch(() => (this.profilePromise = undefined));
    return this.profilePromise;
  }

  async getServerCapabilities(options: CallOptions = {}): Promise<BaseModelCapability[]> {
    await this.rest();
    const r = await this.http.getJson<{ supported_models: { model_name?: string; max_context_length?: number }[] }>('/get_server_capabilities', this.spec(options, 'RestClient.get_server_capabilities'));
    return r.supported_models.map((m) => ({ modelName: m.model_name ?? '', maxContextLength: m.max_context_length ?? null }));
  }

  async createLoraTrainingClient(baseModel: string, lora: LoraOptions = {}, options: CallOptions = {}): Promise<TrainingClient> {
    const session = await this.session();
    const deadline = Date.now() + (options.timeoutMs ?? this.options.futureTimeoutMs);
    const method = 'ServiceClient.create_lora_training_client';
    const submittedAt = performance.now();
    const submitted = await this.http.postJson<{ request_id: string }>(
      '/create_model',
      {
        session_id: session.id,
        model_seq_id: session.nextModelSeqId(),
        base_model: baseModel,
        ...(lora.userMetadata ? { user_metadata: lora.userMetadata } : {}),
        // SDK style: unset optionals are left out, never sent as null.
        lora_config: { rank: lora.rank ?? 32, ...(lora.seed !== undefined ? { seed: lora.seed } : {}), train_mlp: true, train_attn: true, train_unembed: true },
        optimizer_config: { type: 'adamw' },
        type: 'create_model',
      },
      { deadline, signal: options.signal, sdkMethod: method },
    );
    const answer = await retrieveFuture(this.http, submitted.request_id, 'CreateModel', { deadline, signal: options.signal, acceptProto: false, submittedAt, sdkMethod: method });
    if (answer.kind !== 'json' || typeof answer.body.model_id !== 'string') throw new Error('create_model answered without a model_id');
    const tc = new TrainingClient(this.http, this.options, session, answer.body.model_id, 1);
    await tc.getInfo({ ...options, timeoutMs: Math.max(1, deadline - Date.now()) });
    return tc;
  }

  /**
   * A client for an existing model (e.g. after an activity retry). The next seq_id comes from `nextSeqId`,
   * else from the local trainer's get_info extension, else 1.
   */
  async attachTrainingClient(modelId: string, opts: { nextSeqId?: number } & CallOptions = {}): Promise<TrainingClient> {
    const session = await this.session();
    const probe = new TrainingClient(this.http, this.options, session, modelId, 1);
    const info = await probe.getInfo(opts);
    return new TrainingClient(this.http, this.options, session, modelId, opts.nextSeqId ?? info.nextSeqId ?? 1);
  }

  /** What a tinker://…/weights/<name> checkpoint holds (weightsHash: local trainer extension). */
  async weightsInfo(path: string, options: CallOptions = {}): Promise<{ baseModel: string; loraRank: number | null; weightsHash?: string }> {
    await this.rest();
    const r = await this.http.postJson<{ base_model: string; lora_rank?: number; weights_sha256?: string }>('/weights_info', { tinker_path: path }, this.spec(options, 'RestClient.get_weights_info_by_tinker_path'));
    return { baseModel: r.base_model, loraRank: r.lora_rank ?? null, weightsHash: r.weights_sha256 };
  }

  /** The saved checkpoints of a training run (model_id), oldest name first per kind. */
  async listCheckpoints(
    modelId: string,
    options: CallOptions = {},
  ): Promise<{ tinkerPath: string; type: 'training' | 'sampler'; time: string; expiresAt: string | null }[]> {
    await this.rest();
    const r = await this.http.getJson<{ checkpoints: { tinker_path: string; checkpoint_type: 'training' | 'sampler'; time: string; expires_at?: string | null }[] }>(
      `/training_runs/${pathSegment(modelId)}/checkpoints`,
      this.spec(options, 'RestClient.list_checkpoints'),
    );
    return r.checkpoints.map((c) => ({ tinkerPath: c.tinker_path, type: c.checkpoint_type, time: c.time, expiresAt: c.expires_at ?? null }));
  }

  /** Deletes a saved checkpoint by its tinker:// path (retention). */
  async deleteCheckpoint(tinkerPath: string, options: CallOptions = {}): Promise<void> {
    const { runId, checkpointId } = parseCheckpointPath(tinkerPath);
    await this.rest();
    await this.http.call({ method: 'DELETE', path: `/training_runs/${pathSegment(runId)}/checkpoints/${checkpointId}`, ...this.spec(options, 'RestClient.delete_checkpoint_from_tinker_path') });
  }

  /**
   * Sets (or with null removes) a checkpoint's expiry, counted from now: PUT …/checkpoints/{id}/ttl. False, and
   * nothing sent, where the engine serves no TTLs (SkyRL): its checkpoints stay until deleted.
   */
  async setCheckpointTtl(tinkerPath: string, ttlSeconds: number | null, options: CallOptions = {}): Promise<boolean> {
    const { runId, checkpointId } = parseCheckpointPath(tinkerPath);
    checkTtlSeconds(ttlSeconds);
    if (!(await this.engineProfile(options)).checkpointTtl) return false;
    await this.rest();
    await this.http.call({
      method: 'PUT',
      path: `/training_runs/${pathSegment(runId)}/checkpoints/${checkpointId}/ttl`,
      body: { ttl_seconds: ttlSeconds },
      ...this.spec(options, 'RestClient.set_checkpoint_ttl_from_tinker_path'),
    });
    return true;
  }

  /**
   * A fresh model holding a saved checkpoint, as SDK 0.38 makes one: a single load_weights that creates the model
   * (`session_id` + `model_seq_id`, with the optimizer state or without), then get_info.
   */
  async createTrainingClientFromState(path: string, opts: { withOptimizer?: boolean } & CallOptions = {}): Promise<TrainingClient> {
    if ((await this.engineProfile(opts)).loadNeedsModel) return this.createThenLoad(path, opts);
    const session = await this.session();
    const deadline = Date.now() + (opts.timeoutMs ?? this.options.futureTimeoutMs);
    const method = opts.withOptimizer ? 'ServiceClient.create_training_client_from_state_with_optimizer' : 'ServiceClient.create_training_client_from_state';
    const modelSeq = session.nextModelSeqId();
    const submittedAt = performance.now();
    const submitted = await this.http.postJson<{ request_id: string }>(
      '/load_weights',
      { session_id: session.id, model_seq_id: modelSeq, path, optimizer: opts.withOptimizer ?? false, type: 'load_weights' },
      { deadline, signal: opts.signal, retry: 'both', sdkMethod: method },
    );
    await retrieveFuture(this.http, submitted.request_id, 'LoadWeights', { deadline, signal: opts.signal, acceptProto: false, submittedAt, sdkMethod: method });
    const tc = new TrainingClient(this.http, this.options, session, `${session.id}:train:${modelSeq}`, 1);
    await tc.getInfo({ ...opts, timeoutMs: Math.max(1, deadline - Date.now()) });
    return tc;
  }

  /**
   * The SDK 0.25 way to the same fresh model: the checkpoint's base model and rank (weights_info), create_model,
   * then load_weights as that model's first request (the only place such a server allows it).
   */
  private async createThenLoad(path: string, opts: { withOptimizer?: boolean } & CallOptions): Promise<TrainingClient> {
    const deadline = Date.now() + (opts.timeoutMs ?? this.options.futureTimeoutMs);
    const left = () => ({ ...opts, timeoutMs: Math.max(1, deadline - Date.now()) });
    const info = await this.weightsInfo(path, left());
    const tc = await this.createLoraTrainingClient(info.baseModel, info.loraRank !== null ? { rank: info.loraRank } : {}, left());
    await (opts.withOptimizer ? tc.loadStateWithOptimizer(path, left()) : tc.loadState(path, left()));
    return tc;
  }

  /** A sampling session on saved sampler (or training) weights, or on a base model (both: the cookbook's KL reference). */
  async createSamplingClient(target: { modelPath: string; baseModel?: string } | { baseModel: string; modelPath?: string }, options: CallOptions = {}): Promise<SamplingClient> {
    if (target.modelPath !== undefined && !target.modelPath.startsWith('tinker://')) throw new Error(`model_path must start with 'tinker://', got ${JSON.stringify(target.modelPath)}`);
    const session = await this.session();
    const r = await this.http.postJson<{ sampling_session_id: string }>(
      '/create_sampling_session',
      {
        session_id: session.id,
        sampling_session_seq_id: session.nextSamplingSeqId(),
        ...(target.baseModel !== undefined ? { base_model: target.baseModel } : {}),
        ...(target.modelPath !== undefined ? { model_path: target.modelPath } : {}),
        type: 'create_sampling_session',
      },
      // A plain call in the SDK (transport retries only, so `x-should-retry: false` ends it).
      { ...this.spec(options, 'ServiceClient.create_sampling_client'), retry: 'transport' },
    );
    return new SamplingClient(this.http, this.options, session, r.sampling_session_id, true);
  }

  /** A client for an existing sampling session id (no request is made until it samples). */
  samplingClient(samplingSessionId: string): SamplingClient {
    return new SamplingClient(this.http, this.options, () => this.session(), samplingSessionId);
  }

  /**
   * Finishes the session on the service (`status`: success, errored or interrupted; the first reason given wins),
   * then stops the heartbeat. A ServiceClient that never made a session only forgets its state. Retries of the
   * finish call stop at `timeoutMs` (default 10 s), so a process shutting down is never held for long.
   */
  async close(status: FinishStatus = 'success', detail?: string, options: CallOptions = {}): Promise<void> {
    const s = this.sessionPromise;
    this.sessionPromise = undefined;
    this.configPromise = undefined;
    const session = await s?.catch(() => undefined);
    // An engine without the finish call (SkyRL) ends the session when its heartbeats stop.
    const finishServed = session ? await this.engineProfile(options).then((p) => p.sessionFinish, () => true) : true;
    if (session && !finishServed) session.stopTimers();
    else if (session) await session.finish(status, detail, Date.now() + (options.timeoutMs ?? 10_000));
    else this.http.auth.close?.();
  }

  private spec(options: CallOptions, sdkMethod: string): Partial<RequestSpec> {
    return { deadline: Date.now() + (options.timeoutMs ?? this.options.httpTimeoutMs), signal: options.signal, retry: 'both', sdkMethod };
  }
}
