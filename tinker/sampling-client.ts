// Sampling from a frozen set of weights (a sampling session): sample() and computeLogprobs(), as SDK 0.38's
// SamplingClient sends them. A 429 (or a 402 inside the billing window) on asample pauses 1 s (5 s for prompts
// over 128 KiB) and submits the same seq_id again, without limit until the call's deadline; an expired promise
// (410) is sampled again under a new seq_id unless client/config says `sample_no_retries`. A client attached to
// an existing session takes its seq_ids from a clone id (`join_sampling_session` when the service offers it).
import type { CallOptions, ResolvedOptions } from './config';
import { TinkerApiError } from './errors';
import { retrieveFuture } from './futures';
import { pathSegment, sleep, type TinkerHttp } from './http';
import { transportDelayMs } from './retry-rules';
import type { Session } from './session';
import { chunkLength, modelInputToJson, sampleResultFromJson, sampleResultFromProto } from './wire/codec';
import type { ModelInputChunk, PromptInput } from './wire/types';

/** Positions of a prompt (an image counts its expected tokens). */
function promptLength(p: PromptInput): number {
  return p.length === 0 || typeof p[0] === 'number' ? p.length : (p as ModelInputChunk[]).reduce((n, c) => n + chunkLength(c), 0);
}
import type { SampleResult, SamplingParams, WireSampleResponse, WireSamplingParams } from './wire/types';

/**
 * Prompt logprobs with entry 0 null, as SDK 0.38 gives them; SDK-0.25-era servers (SkyRL) leave the first
 * position out, one value short of the prompt.
 */
export function withLeadingNull(r: SampleResult, promptTokens: number): SampleResult {
  if (!r.promptLogprobs || r.promptLogprobs.length !== promptTokens - 1) return r;
  return { ...r, promptLogprobs: [null, ...r.promptLogprobs] };
}

export interface SampleOptions extends CallOptions {
  /** Also return log p(prompt[i] | prompt[<i]) (entry 0 null). */
  includePromptLogprobs?: boolean;
}

export function samplingParamsToWire(p: SamplingParams): WireSamplingParams {
  const w: WireSamplingParams = { temperature: p.temperature ?? 1, top_k: p.topK ?? -1, top_p: p.topP ?? 1 };
  if (p.maxTokens !== undefined) w.max_tokens = p.maxTokens;
  if (p.stop !== undefined) w.stop = p.stop;
  if (p.seed !== undefined) w.seed = p.seed;
  return w;
}

const CLONE_BLOCK = 1_000_000_000;
/** Clone ids are drawn below 1e6 (the SDK: below 1e9) so that clone * 1e9 stays an exact JS number. */
const MAX_RANDOM_CLONE = 1_000_000;

export class SamplingClient {
  private seq: number | undefined;
  private joining: Promise<void> | undefined;

  /**
   * seq_ids must be unique within a sampling session (the server dedupes retries by them): a client made for a
   * new session starts at 0, one attached to an existing session id at a clone's block of 1e9.
   */
  constructor(
    private readonly http: TinkerHttp,
    private readonly opts: ResolvedOptions,
    private readonly session: Session | (() => Promise<Session>),
    readonly samplingSessionId: string,
    freshSession = false,
  ) {
    if (freshSession) this.seq = 0;
  }

  private async getSession(): Promise<Session> {
    return typeof this.session === 'function' ? this.session() : this.session;
  }

  private async nextSeq(session: Session): Promise<number> {
    if (this.seq === undefined) {
      this.joining ??= (async () => {
        if (session.config.sampleJoinSamplingSession) {
          const r = await this.http.postJson<{ client_counter?: unknown }>(
            '/join_sampling_session',
            { sampling_session_id: this.samplingSessionId, type: 'join_sampling_session' },
            { retry: 'both', sdkMethod: 'SamplingClient.sample' },
          );
          if (typeof r.client_counter !== 'number') throw new Error('join_sampling_session answered without a client_counter');
          this.seq = CLONE_BLOCK * r.client_counter;
        } else {
          this.seq = CLONE_BLOCK * (1 + Math.floor(Math.random() * MAX_RANDOM_CLONE));
        }
      })().finally(() => (this.joining = undefined));
      await this.joining;
    }
    return this.seq!++;
  }

  async sample(prompt: PromptInput, numSamples: number, params: SamplingParams, options: SampleOptions = {}): Promise<SampleResult> {
    return this.sampleAs('SamplingClient.sample', prompt, numSamples, params, options);
  }

  private async sampleAs(method: string, prompt: PromptInput, numSamples: number, params: SamplingParams, options: SampleOptions): Promise<SampleResult> {
    const deadline = Date.now() + (options.timeoutMs ?? this.opts.futureTimeoutMs);
    const session = await this.getSession();
    for (let attempt = 0; ; attempt++) {
      try {
        return withLeadingNull(await this.sampleOnce(session, method, prompt, numSamples, params, options, deadline), promptLength(prompt));
      } catch (err) {
        // The service dropped the promise: sample again (a new submission, a new seq_id).
        const expired = err instanceof TinkerApiError && err.status === 410;
        const wait = transportDelayMs(attempt, undefined);
        if (!expired || session.config.sampleNoRetries || Date.now() + wait > deadline) throw err;
        await sleep(wait, options.signal);
      }
    }
  }

  private async sampleOnce(
    session: Session,
    method: string,
    prompt: PromptInput,
    numSamples: number,
    params: SamplingParams,
    options: SampleOptions,
    deadline: number,
  ): Promise<SampleResult> {
    const seqId = await this.nextSeq(session);
    const body = {
      sampling_session_id: this.samplingSessionId,
      seq_id: seqId,
      num_samples: numSamples,
      prompt: modelInputToJson(prompt),
      sampling_params: samplingParamsToWire(params),
      prompt_logprobs: options.includePromptLogprobs ?? false,
      topk_prompt_logprobs: 0,
      topk_sample_logprobs: 0,
      prompt_alt_tokens_k: 0,
      record_stability_info: false,
      type: 'sample',
    };
    let requestId: string;
    for (;;) {
      try {
        const submittedAt = performance.now();
        const r = await this.http.postJson<{ request_id: string }>('/asample', body, {
          deadline,
          signal: options.signal,
          headers: { 'x-tinker-sampling-backpressure': '1' },
          retry: 'holder',
          noRetry: [402, 429],
          sdkMethod: method,
        });
        requestId = r.request_id;
        return await this.result(requestId, method, submittedAt, deadline, options);
      } catch (err) {
        const status = err instanceof TinkerApiError ? err.status : 0;
        if (!(status === 429 || (status === 402 && this.http.billing.shouldPause(err instanceof Error ? err.message : '')))) throw err;
        // Back-pressure: the same request again after a pause sized by the prompt (10 bytes a token estimated).
        const wait = status === 402 ? this.http.billingPauseMs : promptLength(prompt) * 10 <= 128 * 1024 ? 1000 : 5000;
        if (Date.now() + wait > deadline) throw err;
        await sleep(wait, options.signal);
      }
    }
  }

  private async result(requestId: string, method: string, submittedAt: number, deadline: number, options: CallOptions): Promise<SampleResult> {
    try {
      const proto = this.opts.wire === 'proto';
      const answer = await retrieveFuture(this.http, requestId, 'Sample', { deadline, signal: options.signal, acceptProto: proto, submittedAt, sdkMethod: method });
      return answer.kind === 'proto' ? sampleResultFromProto(answer.bytes) : sampleResultFromJson(answer.body as unknown as WireSampleResponse);
    } catch (err) {
      if (options.signal?.aborted) void this.cancel(requestId);
      throw err;
    }
  }

  /** An abandoned sample is cancelled on the service when client/dynamic_config enables it. */
  private async cancel(requestId: string): Promise<void> {
    const session = await this.getSession();
    if (!session.dynamic.sampleCancelEnabled) return;
    await this.http.postJson('/cancel_future', { request_id: requestId }, { timeoutMs: 30_000, retry: 'holder' }).catch((err: Error) => {
      this.opts.log(`tinker: failed to cancel sampling request ${requestId}: ${err.message}`);
    });
  }

  /** log p(tokens[i] | tokens[<i]) for every position; entry 0 is null. */
  async computeLogprobs(tokens: number[], options: CallOptions = {}): Promise<(number | null)[]> {
    const res = await this.sampleAs('SamplingClient.compute_logprobs', tokens, 1, { maxTokens: 1, temperature: 1 }, { ...options, includePromptLogprobs: true });
    if (!res.promptLogprobs) throw new Error('the service returned no prompt_logprobs');
    return res.promptLogprobs;
  }

  /** GET /samplers/{id}: the base model and checkpoint behind this session. */
  async getInfo(options: CallOptions = {}): Promise<{ samplerId: string; baseModel: string; modelPath: string | null }> {
    const r = await this.http.getJson<{ sampler_id: string; base_model: string; model_path?: string | null }>(`/samplers/${pathSegment(this.samplingSessionId)}`, {
      deadline: Date.now() + (options.timeoutMs ?? this.opts.httpTimeoutMs),
      signal: options.signal,
      retry: 'both',
      sdkMethod: 'SamplingClient.get_base_model',
    });
    return { samplerId: r.sampler_id, baseModel: r.base_model, modelPath: r.model_path ?? null };
  }
}
