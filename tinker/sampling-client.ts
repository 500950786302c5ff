// Sampling from a frozen set of weights (a sampling session): sample() and computeLogprobs().
import type { CallOptions } from './config';
import { TinkerApiError } from './errors';
import { retrieveFuture } from './futures';
import type { TinkerHttp } from './http';
import type { ResolvedOptions } from './config';
import { modelInputToJson, sampleResultFromJson, sampleResultFromProto } from './wire/codec';
import type { SampleResult, SamplingParams, WireSampleResponse, WireSamplingParams } from './wire/types';

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

export class SamplingClient {
  private seq: number;

  /**
   * seq_ids must be unique within a sampling session (the server dedupes retries by them): a client made for a
   * new session starts at 0, one attached to an existing session id at a random multiple of 1e9, as the SDK's
   * unpickled copies do.
   */
  constructor(
    private readonly http: TinkerHttp,
    private readonly opts: ResolvedOptions,
    readonly samplingSessionId: string,
    freshSession = false,
  ) {
    this.seq = freshSession ? 0 : (1 + Math.floor(Math.random() * 1_000_000)) * 1_000_000_000;
  }

  async sample(prompt: number[], numSamples: number, params: SamplingParams, options: SampleOptions = {}): Promise<SampleResult> {
    const deadline = Date.now() + (options.timeoutMs ?? this.opts.futureTimeoutMs);
    // A 410 means the server dropped the promise: like the SDK, submit the sample again (a few times).
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.sampleOnce(prompt, numSamples, params, options, deadline);
      } catch (err) {
        if (!(err instanceof TinkerApiError && err.status === 410) || attempt >= 2) throw err;
      }
    }
  }

  private async sampleOnce(prompt: number[], numSamples: number, params: SamplingParams, options: SampleOptions, deadline: number): Promise<SampleResult> {
    const seqId = this.seq++;
    const submitted = await this.http.postJson<{ request_id: string }>(
      '/asample',
      {
        sampling_session_id: this.samplingSessionId,
        seq_id: seqId,
        num_samples: numSamples,
        prompt: modelInputToJson(prompt),
        sampling_params: samplingParamsToWire(params),
        prompt_logprobs: options.includePromptLogprobs ?? false,
        topk_prompt_logprobs: 0,
        type: 'sample',
      },
      { deadline, signal: options.signal, headers: { 'x-tinker-sampling-backpressure': '1' } },
    );
    const answer = await retrieveFuture(this.http, submitted.request_id, 'Sample', {
      deadline,
      signal: options.signal,
      acceptProto: this.opts.wire === 'proto',
    });
    return answer.kind === 'proto' ? sampleResultFromProto(answer.bytes) : sampleResultFromJson(answer.body as unknown as WireSampleResponse);
  }

  /** log p(tokens[i] | tokens[<i]) for every position; entry 0 is null. */
  async computeLogprobs(tokens: number[], options: CallOptions = {}): Promise<(number | null)[]> {
    const res = await this.sample(tokens, 1, { maxTokens: 1, temperature: 1 }, { ...options, includePromptLogprobs: true });
    if (!res.promptLogprobs) throw new Error('the service returned no prompt_logprobs');
    return res.promptLogprobs;
  }

  /** GET /samplers/{id}: the base model and checkpoint behind this session. */
  async getInfo(options: CallOptions = {}): Promise<{ samplerId: string; baseModel: string; modelPath: string | null }> {
    const r = await this.http.getJson<{ sampler_id: string; base_model: string; model_path?: string | null }>(
      `/samplers/${encodeURIComponent(this.samplingSessionId)}`,
      { deadline: Date.now() + (options.timeoutMs ?? this.opts.httpTimeoutMs), signal: options.signal },
    );
    return { samplerId: r.sampler_id, baseModel: r.base_model, modelPath: r.model_path ?? null };
  }
}
