// Entry point of the Tinker client: one session per ServiceClient, created on first use. Activities are
// stateless, so besides creating models it can reattach to one by model_id, or rebuild one from a
// tinker:// checkpoint.
import { resolveOptions, type CallOptions, type ResolvedOptions, type TinkerClientOptions } from './config';
import { retrieveFuture } from './futures';
import { TinkerHttp } from './http';
import { SamplingClient } from './sampling-client';
import { Session } from './session';
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

export class ServiceClient {
  readonly options: ResolvedOptions;
  private readonly http: TinkerHttp;
  private sessionPromise: Promise<Session> | undefined;

  constructor(options: TinkerClientOptions | string = {}) {
    this.options = resolveOptions(typeof options === 'string' ? { baseUrl: options } : options);
    this.http = new TinkerHttp(this.options);
  }

  /** The session, created on first use (client/config + create_session + heartbeats). */
  session(): Promise<Session> {
    this.sessionPromise ??= Session.create(this.http, this.options);
    this.sessionPromise.catch(() => (this.sessionPromise = undefined));
    return this.sessionPromise;
  }

  async getServerCapabilities(options: CallOptions = {}): Promise<BaseModelCapability[]> {
    const r = await this.http.getJson<{ supported_models: { model_name?: string; max_context_length?: number }[] }>(
      '/get_server_capabilities',
      this.spec(options),
    );
    return r.supported_models.map((m) => ({ modelName: m.model_name ?? '', maxContextLength: m.max_context_length ?? null }));
  }

  async createLoraTrainingClient(baseModel: string, lora: LoraOptions = {}, options: CallOptions = {}): Promise<TrainingClient> {
    const session = await this.session();
    const deadline = Date.now() + (options.timeoutMs ?? this.options.futureTimeoutMs);
    const submitted = await this.http.postJson<{ request_id: string }>(
      '/create_model',
      {
        session_id: session.id,
        model_seq_id: session.nextModelSeqId(),
        base_model: baseModel,
        user_metadata: lora.userMetadata ?? {},
        // HEAD SDK style: unset optionals are left out, never sent as null.
        lora_config: { rank: lora.rank ?? 32, ...(lora.seed !== undefined ? { seed: lora.seed } : {}), train_unembed: true, train_mlp: true, train_attn: true },
        type: 'create_model',
      },
      { deadline, signal: options.signal },
    );
    const answer = await retrieveFuture(this.http, submitted.request_id, 'CreateModel', { deadline, signal: options.signal, acceptProto: false });
    if (answer.kind !== 'json' || typeof answer.body.model_id !== 'string') throw new Error('create_model answered without a model_id');
    return new TrainingClient(this.http, this.options, session, answer.body.model_id, 1);
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
    const r = await this.http.postJson<{ base_model: string; lora_rank?: number; weights_sha256?: string }>('/weights_info', { tinker_path: path }, this.spec(options));
    return { baseModel: r.base_model, loraRank: r.lora_rank ?? null, weightsHash: r.weights_sha256 };
  }

  /** The saved checkpoints of a training run (model_id), oldest name first per kind. */
  async listCheckpoints(modelId: string, options: CallOptions = {}): Promise<{ tinkerPath: string; type: 'training' | 'sampler'; time: string }[]> {
    const r = await this.http.getJson<{ checkpoints: { tinker_path: string; checkpoint_type: 'training' | 'sampler'; time: string }[] }>(
      `/training_runs/${encodeURIComponent(modelId)}/checkpoints`,
      this.spec(options),
    );
    return r.checkpoints.map((c) => ({ tinkerPath: c.tinker_path, type: c.checkpoint_type, time: c.time }));
  }

  /** Deletes a saved checkpoint by its tinker:// path (retention). */
  async deleteCheckpoint(tinkerPath: string, options: CallOptions = {}): Promise<void> {
    const m = /^tinker:\/\/([^/]+)\/((?:weights|sampler_weights)\/[^/]+)$/.exec(tinkerPath);
    if (!m) throw new Error(`not a tinker checkpoint path: ${tinkerPath}`);
    await this.http.call({ method: 'DELETE', path: `/training_runs/${encodeURIComponent(m[1])}/checkpoints/${m[2]}`, ...this.spec(options) });
  }

  /** weights_info + create_model + load_weights: a fresh model holding a saved checkpoint. */
  async createTrainingClientFromState(path: string, opts: { withOptimizer?: boolean; seed?: number } & CallOptions = {}): Promise<TrainingClient> {
    const info = await this.http.postJson<{ base_model: string; lora_rank?: number }>('/weights_info', { tinker_path: path }, this.spec(opts));
    const tc = await this.createLoraTrainingClient(info.base_model, { rank: info.lora_rank ?? 32, seed: opts.seed }, opts);
    if (opts.withOptimizer) await tc.loadStateWithOptimizer(path, opts);
    else await tc.loadState(path, opts);
    return tc;
  }

  /** A sampling session on saved sampler (or training) weights, or on a base model. */
  async createSamplingClient(target: { modelPath: string } | { baseModel: string }, options: CallOptions = {}): Promise<SamplingClient> {
    const session = await this.session();
    const r = await this.http.postJson<{ sampling_session_id: string }>(
      '/create_sampling_session',
      {
        session_id: session.id,
        sampling_session_seq_id: session.nextSamplingSeqId(),
        ...('modelPath' in target ? { model_path: target.modelPath } : { base_model: target.baseModel }),
        type: 'create_sampling_session',
      },
      this.spec(options),
    );
    return new SamplingClient(this.http, this.options, r.sampling_session_id, true);
  }

  /** A client for an existing sampling session id (no request is made). */
  samplingClient(samplingSessionId: string): SamplingClient {
    return new SamplingClient(this.http, this.options, samplingSessionId);
  }

  /** Stops the heartbeat. */
  async close(): Promise<void> {
    const s = this.sessionPromise;
    this.sessionPromise = undefined;
    if (s) (await s.catch(() => undefined))?.close();
  }

  private spec(options: CallOptions) {
    return { deadline: Date.now() + (options.timeoutMs ?? this.options.httpTimeoutMs), signal: options.signal };
  }
}
