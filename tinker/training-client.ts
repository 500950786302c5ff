// A LoRA training model on the service. Every call gets the next seq_id when it is made (so calls made
// back-to-back without awaiting, e.g. forwardBackward then optimStep, keep their order) and submissions go
// out one at a time in that order; results are then awaited independently (§A.6).
import type { CallOptions, ResolvedOptions } from './config';
import { TinkerApiError } from './errors';
import { retrieveFuture, type FutureAnswer, type RequestType } from './futures';
import type { TinkerHttp } from './http';
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
  ttlSeconds?: number;
}

export class TrainingClient {
  private nextSeq: number;
  private submissions: Promise<unknown> = Promise.resolve();
  private broken: Error | undefined;

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
      model_data?: { model_name?: string; tokenizer_id?: string };
      model_name?: string;
      lora_rank?: number;
      renderer_name?: string;
      next_seq_id?: number;
      weights_sha256?: string;
    }>('/get_info', { model_id: this.modelId, type: 'get_info' }, this.callSpec(options));
    const baseModel = r.model_data?.model_name ?? r.model_name ?? '';
    return {
      modelId: r.model_id,
      baseModel,
      tokenizerId: (r.model_data?.tokenizer_id ?? baseModel).split(':')[0],
      loraRank: r.lora_rank ?? null,
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
    const body = await this.queuedJson('/optim_step', 'OptimStep', options, (seq) => ({
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
    const body = await this.queuedJson('/save_weights', 'SaveWeights', options, (seq) => ({
      model_id: this.modelId,
      path: name,
      seq_id: seq,
      overwrite: options.overwrite ?? false,
      ...(options.ttlSeconds !== undefined ? { ttl_seconds: options.ttlSeconds } : {}),
      type: 'save_weights',
    }));
    return String(body.path);
  }

  /** Frozen weights for sampling → tinker://<model_id>/sampler_weights/<name>. */
  async saveWeightsForSampler(name: string, options: SaveOptions = {}): Promise<string> {
    const body = await this.queuedJson('/save_weights_for_sampler', 'SaveWeightsForSampler', options, (seq) => ({
      model_id: this.modelId,
      path: name,
      seq_id: seq,
      ...(options.ttlSeconds !== undefined ? { ttl_seconds: options.ttlSeconds } : {}),
      type: 'save_weights_for_sampler',
    }));
    return String(body.path);
  }

  /** An ephemeral sampler snapshot of the current weights (nothing named is saved). */
  async saveWeightsAndGetSamplingClient(options: CallOptions = {}): Promise<SamplingClient> {
    const samplingSeq = this.session.nextSamplingSeqId();
    const body = await this.queuedJson('/save_weights_for_sampler', 'SaveWeightsForSampler', options, (seq) => ({
      model_id: this.modelId,
      seq_id: seq,
      sampling_session_seq_id: samplingSeq,
      type: 'save_weights_for_sampler',
    }));
    if (typeof body.sampling_session_id !== 'string') throw new Error('save_weights_for_sampler answered without a sampling_session_id');
    return new SamplingClient(this.http, this.opts, body.sampling_session_id, true);
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
    await this.submissions;
    const deadline = Date.now() + (options.timeoutMs ?? this.opts.futureTimeoutMs);
    const { request_id } = await this.http.postJson<{ request_id: string }>('/unload_model', { model_id: this.modelId, type: 'unload_model' }, { deadline, signal: options.signal });
    await retrieveFuture(this.http, request_id, 'UnloadModel', { deadline, signal: options.signal, acceptProto: false });
    this.broken = new Error(`training client ${this.modelId} was unloaded`);
  }

  private async load(path: string, optimizer: boolean, options: CallOptions): Promise<void> {
    await this.queuedJson('/load_weights', 'LoadWeights', options, (seq) => ({
      model_id: this.modelId,
      path,
      seq_id: seq,
      optimizer,
      type: 'load_weights',
    }));
  }

  private async fwd(data: Datum[], lossFn: LossFn, cfg: Record<string, number> | undefined, forwardOnly: boolean, options: CallOptions) {
    const type: RequestType = forwardOnly ? 'Forward' : 'ForwardBackward';
    let answer: FutureAnswer;
    if (this.opts.wire === 'proto') {
      answer = await this.queued('/forward_backward', type, options, (seq) =>
        forwardBackwardRequestToProto({ modelId: this.modelId, seqId: seq, data, lossFn, lossFnConfig: cfg, forwardOnly }),
      );
    } else {
      const input = { data: data.map(datumToJson), loss_fn: lossFn, ...(cfg ? { loss_fn_config: cfg } : {}) };
      answer = await this.queued(forwardOnly ? '/forward' : '/forward_backward', type, options, (seq) => ({
        [forwardOnly ? 'forward_input' : 'forward_backward_input']: input,
        model_id: this.modelId,
        seq_id: seq,
      }));
    }
    return answer.kind === 'proto'
      ? forwardBackwardOutputFromProto(answer.bytes)
      : forwardBackwardOutputFromJson(answer.body as unknown as WireForwardBackwardOutput);
  }

  private async queuedJson(path: string, type: RequestType, options: CallOptions, build: (seq: number) => unknown) {
    const answer = await this.queued(path, type, options, build);
    if (answer.kind !== 'json') throw new Error(`${path}: unexpected protobuf result`);
    return answer.body;
  }

  /** Takes a seq_id now, submits after every earlier submission of this client, then polls the future. */
  private async queued(path: string, type: RequestType, options: CallOptions, build: (seq: number) => unknown): Promise<FutureAnswer> {
    if (this.broken) throw this.broken;
    const deadline = Date.now() + (options.timeoutMs ?? this.opts.futureTimeoutMs);
    const seq = this.nextSeq++;
    const submit = this.submissions.then(async () => {
      if (this.broken) throw this.broken;
      try {
        return await this.http.postJson<{ request_id: string }>(path, build(seq), { deadline, signal: options.signal });
      } catch (err) {
        // A rejected request still used up its seq_id on the server; anything else leaves the order unknown.
        if (!(err instanceof TinkerApiError && err.isUserError)) {
          this.broken = new Error(`training client ${this.modelId} lost track of seq_id ${seq} (${(err as Error).message}); reattach with ServiceClient.attachTrainingClient`);
        }
        throw err;
      }
    });
    this.submissions = submit.catch(() => undefined);
    const { request_id } = await submit;
    return retrieveFuture(this.http, request_id, type, { deadline, signal: options.signal, acceptProto: this.opts.wire === 'proto' });
  }

  private callSpec(options: CallOptions) {
    return { deadline: Date.now() + (options.timeoutMs ?? this.opts.httpTimeoutMs), signal: options.signal };
  }
}
