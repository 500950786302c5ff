// A LoRA training model on the service. Every call reserves its seq_ids when it is made (so calls made
// back-to-back without awaiting, e.g. forwardBackward then optimStep, keep their order) and submissions go
// out one at a time in that order; results are then awaited independently (§A.6). As in SDK 0.38, a call whose
// submit fails still used its seq_ids (the next call does not wait for it, and the service counts a rejected
// request as done); forward_backward is split into chunks and zstd-compressed when client/config says so.
import type { CallOptions, ResolvedOptions } from './config';
import { chunkData, combineResults } from './fwdbwd-chunks';
import { retrieveFuture, type FutureAnswer, type RequestType } from './futures';
import type { RetryLayers, TinkerHttp } from './http';
import { SamplingClient } from './sampling-client';
import type { Session } from './session';
import {
  datumToJson,
  forwardBackwardOutputFromJson,
  forwardBackwardOutputFromProto,
  forwardBackwardRequestToProto,
} from './wire/codec';
import {
  DEFAULT_ADAM,
  type AdamParams,
  type Datum,
  type ForwardBackwardResult,
  type LossFn,
  type WireForwardBackwardOutput,
} from './wire/types';
import { zstdCompress } from './wire/zstd';

export interface TrainingInfo {
  modelId: string;
  baseModel: string;
  /** Tokenizer to use with this model (`model_data.tokenizer_id`, else the base model name). */
  tokenizerId: string;
  loraRank: number | null;
  /** Extension of the local trainer; undefined against the hosted service. */
  rendererName?: string;
  /** Extension of the local trainer: the seq_id a reattaching client must use next. */
  nextSeqId?: number;
  /** Extension of the local trainer: sha256 of the current weights (await pending calls first). */
  weightsHash?: string;
}

export interface SaveOptions extends CallOptions {
  overwrite?: boolean;
  /** Seconds until the service may delete the checkpoint (3600 s to 10 years); null or absent = kept. */
  ttlSeconds?: number | null;
}

interface Submit {
  path: string;
  type: RequestType;
  method: string;
  retry: RetryLayers;
}

const OP = {
  forwardBackward: { path: '/forward_backward', type: 'ForwardBackward', method: 'TrainingClient.forward_backward', retry: 'both' },
  forward: { path: '/forward_backward', type: 'Forward', method: 'TrainingClient.forward', retry: 'both' },
  optimStep: { path: '/optim_step', type: 'OptimStep', method: 'TrainingClient.optim_step', retry: 'both' },
  saveState: { path: '/save_weights', type: 'SaveWeights', method: 'TrainingClient.save_state', retry: 'holder' },
  saveForSampler: { path: '/save_weights_for_sampler', type: 'SaveWeightsForSampler', method: 'TrainingClient.save_weights_for_sampler', retry: 'holder' },
  saveAndGetSampler: { path: '/save_weights_for_sampler', type: 'SaveWeightsForSampler', method: 'TrainingClient.save_weights_and_get_sampling_client', retry: 'holder' },
  loadState: { path: '/load_weights', type: 'LoadWeights', method: 'TrainingClient.load_state', retry: 'both' },
  loadStateWithOptimizer: { path: '/load_weights', type: 'LoadWeights', method: 'TrainingClient.load_state_with_optimizer', retry: 'both' },
} as const satisfies Record<string, Submit>;

export class TrainingClient {
  private nextSeq: number;
  private submissions: Promise<unknown> = Promise.resolve();
  private unloaded: Error | undefined;

  constructor(
    private readonly http: TinkerHttp,
    private readonly opts: ResolvedOptions,
    private readonly session: Session,
    readonly modelId: string,
    nextSeqId = 1,
  ) {
    this.nextSeq = nextSeqId;
  }

  /** The seq_id the next call will use; persist it to reattach with ServiceClient.attachTrainingClient. */
  get nextSeqId(): number {
    return this.nextSeq;
  }

  async getInfo(options: CallOptions = {}): Promise<TrainingInfo> {
    const r = await this.http.postJson<{
      model_id: string;
      model_data?: { model_name?: string; tokenizer_id?: string; lora_config?: { rank?: number } | null };
      model_name?: string;
      lora_rank?: number;
      renderer_name?: string;
      next_seq_id?: number;
      weights_sha256?: string;
    }>('/get_info', { model_id: this.modelId, type: 'get_info' }, { ...this.callSpec(options), retry: 'both', sdkMethod: 'TrainingClient.get_info' });
    const baseModel = r.model_data?.model_name ?? r.model_name ?? '';
    return {
      modelId: r.model_id,
      baseModel,
      tokenizerId: (r.model_data?.tokenizer_id ?? baseModel).split(':')[0],
      // SDK-0.25-era servers (SkyRL) give the rank only inside model_data.lora_config.
      loraRank: r.lora_rank ?? r.model_data?.lora_config?.rank ?? null,
      rendererName: r.renderer_name,
      nextSeqId: r.next_seq_id,
      weightsHash: r.weights_sha256,
    };
  }

  forwardBackward(data: Datum[], lossFn: LossFn, lossFnConfig?: Record<string, number>, options: CallOptions = {}): Promise<ForwardBackwardResult> {
    return this.fwd(data, lossFn, lossFnConfig, false, options);
  }

  /** The loss and logprobs without accumulating gradients. */
  forward(data: Datum[], lossFn: LossFn, lossFnConfig?: Record<string, number>, options: CallOptions = {}): Promise<ForwardBackwardResult> {
    return this.fwd(data, lossFn, lossFnConfig, true, options);
  }

  async optimStep(adam: Partial<AdamParams> = {}, options: CallOptions = {}): Promise<Record<string, number>> {
    const p = { ...DEFAULT_ADAM, ...adam };
    const body = await this.queuedJson(OP.optimStep, options, (seq) => ({
      adam_params: {
        learning_rate: p.learningRate,
        beta1: p.beta1,
        beta2: p.beta2,
        eps: p.eps,
        weight_decay: p.weightDecay,
        grad_clip_norm: p.gradClipNorm,
      },
      model_id: this.modelId,
      seq_id: seq,
      type: 'optim_step',
    }));
    return (body.metrics as Record<string, number> | null) ?? {};
  }

  /** save_weights: weights + optimizer state → tinker://<model_id>/weights/<name>. */
  async saveState(name: string, options: SaveOptions = {}): Promise<string> {
    const body = await this.queuedJson(OP.saveState, options, (seq) => ({
      model_id: this.modelId,
      path: name,
      seq_id: seq,
      ...ttl(options),
      overwrite: options.overwrite ?? false,
      type: 'save_weights',
    }));
    return String(body.path);
  }

  /** Frozen weights for sampling → tinker://<model_id>/sampler_weights/<name>. */
  async saveWeightsForSampler(name: string, options: SaveOptions = {}): Promise<string> {
    const body = await this.queuedJson(OP.saveForSampler, options, (seq) => ({
      model_id: this.modelId,
      path: name,
      kind: 'snapshot',
      seq_id: seq,
      ...ttl(options),
      type: 'save_weights_for_sampler',
    }));
    return String(body.path);
  }

  /** An ephemeral sampler snapshot of the current weights (nothing named is saved). */
  async saveWeightsAndGetSamplingClient(options: CallOptions = {}): Promise<SamplingClient> {
    const samplingSeq = this.session.nextSamplingSeqId();
    const body = await this.queuedJson(OP.saveAndGetSampler, options, (seq) => ({
      model_id: this.modelId,
      sampling_session_seq_id: samplingSeq,
      kind: 'snapshot',
      seq_id: seq,
      type: 'save_weights_for_sampler',
    }));
    if (typeof body.sampling_session_id !== 'string') throw new Error('save_weights_for_sampler answered without a sampling_session_id');
    return new SamplingClient(this.http, this.opts, this.session, body.sampling_session_id, true);
  }

  /** load_weights: weights only (optimizer state starts fresh). */
  loadState(path: string, options: CallOptions = {}): Promise<void> {
    return this.load(path, false, options);
  }

  /** load_weights with the optimizer's moments. */
  loadStateWithOptimizer(path: string, options: CallOptions = {}): Promise<void> {
    return this.load(path, true, options);
  }

  /** unload_model: frees the model on the service (its saved checkpoints stay). The client is done after. */
  async unload(options: CallOptions = {}): Promise<void> {
    const deadline = Date.now() + (options.timeoutMs ?? this.opts.futureTimeoutMs);
    // Earlier submissions go first, but a stuck one does not hold the unload past its deadline.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.submissions, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now())).unref()))]);
    clearTimeout(timer);
    const { request_id } = await this.http.postJson<{ request_id: string }>('/unload_model', { model_id: this.modelId, type: 'unload_model' }, { deadline, signal: options.signal, retry: 'both' });
    await retrieveFuture(this.http, request_id, 'UnloadModel', { deadline, signal: options.signal, acceptProto: false });
    this.unloaded = new Error(`training client ${this.modelId} was unloaded`);
  }

  private async load(path: string, optimizer: boolean, options: CallOptions): Promise<void> {
    await this.queuedJson(optimizer ? OP.loadStateWithOptimizer : OP.loadState, options, (seq) => ({
      model_id: this.modelId,
      path,
      seq_id: seq,
      optimizer,
      type: 'load_weights',
    }));
  }

  private async fwd(data: Datum[], lossFn: LossFn, cfg: Record<string, number> | undefined, forwardOnly: boolean, options: CallOptions) {
    const op = forwardOnly ? OP.forward : OP.forwardBackward;
    if (data.length === 0) throw new Error(`${op.method}: no data provided`);
    if (this.opts.wire === 'json') {
      // The JSON era's wire (SDK <= 0.24): one request, never chunked or compressed.
      const input = { data: data.map(datumToJson), loss_fn: lossFn, ...(cfg ? { loss_fn_config: cfg } : {}) };
      const [answer] = await this.queued({ ...op, path: forwardOnly ? '/forward' : '/forward_backward' }, options, [
        (seq) => ({ [forwardOnly ? 'forward_input' : 'forward_backward_input']: input, model_id: this.modelId, seq_id: seq }),
      ]);
      if (answer.kind !== 'json') throw new Error(`${op.path}: unexpected protobuf result`);
      return forwardBackwardOutputFromJson(answer.body as unknown as WireForwardBackwardOutput);
    }
    const compressed = this.session.config.protoCompressFwdbwd;
    const builds = chunkData(data, this.session.config).map((chunk) => async (seq: number) => {
      const body = forwardBackwardRequestToProto({ modelId: this.modelId, seqId: seq, data: chunk, lossFn, lossFnConfig: cfg, forwardOnly });
      return compressed ? { body: await zstdCompress(body), headers: { 'content-encoding': 'zstd' } } : { body };
    });
    const answers = await this.queued(op, options, builds, this.session.config.parallelFwdbwdChunks);
    return withLossSum(
      combineResults(
        answers.map((a) => (a.kind === 'proto' ? forwardBackwardOutputFromProto(a.bytes) : forwardBackwardOutputFromJson(a.body as unknown as WireForwardBackwardOutput))),
      ),
    );
  }

  private async queuedJson(op: Submit, options: CallOptions, build: (seq: number) => unknown) {
    const [answer] = await this.queued(op, options, [build]);
    if (answer.kind !== 'json') throw new Error(`${op.path}: unexpected protobuf result`);
    return answer.body;
  }

  /**
   * Reserves one seq_id per request now, submits them after every earlier submission of this client (all at once,
   * the first one last, when `parallel`), then polls the futures. A build returning {body, headers} sends raw bytes.
   */
  private async queued(op: Submit, options: CallOptions, builds: ((seq: number) => unknown)[], parallel = false): Promise<FutureAnswer[]> {
    if (this.unloaded) throw this.unloaded;
    const deadline = Date.now() + (options.timeoutMs ?? this.opts.futureTimeoutMs);
    const seqs = builds.map(() => this.nextSeq++);
    const submitOne = async (i: number) => {
      const built = await builds[i](seqs[i]);
      const raw = built && typeof built === 'object' && 'body' in built && (built as { body: unknown }).body instanceof Uint8Array;
      const { body, headers } = raw ? (built as { body: Uint8Array; headers?: Record<string, string> }) : { body: built, headers: undefined };
      const submittedAt = performance.now();
      const r = await this.http.postJson<{ request_id: string }>(op.path, body, { deadline, signal: options.signal, retry: op.retry, sdkMethod: op.method, headers });
      return { requestId: r.request_id, submittedAt };
    };
    const submit = this.submissions.then(async () => {
      if (this.unloaded) throw this.unloaded;
      if (!parallel || builds.length === 1) {
        const out = [];
        for (let i = 0; i < builds.length; i++) out.push(await submitOne(i));
        return out;
      }
      // The service holds later chunks until the first arrives, so the whole batch is queued together.
      const rest = await Promise.all(builds.slice(1).map((_, i) => submitOne(i + 1)));
      return [await submitOne(0), ...rest];
    });
    // The turn passes on whatever became of this submit: its seq_ids are spent either way.
    this.submissions = submit.catch(() => undefined);
    const submitted = await submit;
    return Promise.all(
      submitted.map((s) =>
        retrieveFuture(this.http, s.requestId, op.type, {
          deadline,
          signal: options.signal,
          acceptProto: this.opts.wire === 'proto' && (op.type === 'ForwardBackward' || op.type === 'Forward'),
          submittedAt: s.submittedAt,
          sdkMethod: op.method,
        }),
      ),
    );
  }

  private callSpec(options: CallOptions) {
    return { deadline: Date.now() + (options.timeoutMs ?? this.opts.httpTimeoutMs), signal: options.signal };
  }
}

/**
 * `loss:sum` as the service reports it; SDK-0.25-era servers (SkyRL) report no metrics, so it is the sum of the
 * per-token `elementwise_loss` they return (already weighted by the mask), which is what loss:sum sums.
 */
export function withLossSum(r: ForwardBackwardResult): ForwardBackwardResult {
  if ('loss:sum' in r.metrics || !r.lossFnOutputs.length || !r.lossFnOutputs.every((o) => Array.isArray(o.elementwise_loss))) return r;
  const sum = r.lossFnOutputs.reduce((a, o) => a + o.elementwise_loss.reduce((x, y) => x + y, 0), 0);
  return { ...r, metrics: { ...r.metrics, 'loss:sum': sum } };
}

const ttl = (o: SaveOptions) => (o.ttlSeconds !== undefined && o.ttlSeconds !== null ? { ttl_seconds: o.ttlSeconds } : {});
