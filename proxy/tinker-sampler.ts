// Samplers backed by the Tinker API (hosted Tinker or the local trainer): one sampling session per policy.
import { RequestFailedError, ServiceClient, TinkerApiError, TinkerTimeoutError } from '../tinker';
import type { SamplingClient, TinkerClientOptions } from '../tinker';
import { SamplerError } from './sampler';
import type { SampledSequence, SampleParams, Sampler, SamplerFactory, SamplerTarget } from './sampler';

function classify(err: unknown): unknown {
  if (err instanceof SamplerError) return err;
  if (err instanceof TinkerApiError) return new SamplerError(err.message, !err.isUserError, err.isUserError ? 400 : 502);
  if (err instanceof RequestFailedError) return new SamplerError(err.message, !err.isUserError, err.isUserError ? 400 : 502);
  if (err instanceof TinkerTimeoutError) return new SamplerError(err.message, true, 504);
  return err;
}

export class TinkerSampler implements Sampler {
  /** Recreates the sampling session (the factory passes one), for when the trainer no longer knows ours. */
  private reopening: Promise<SamplingClient> | null = null;
  constructor(
    private client: SamplingClient,
    private readonly reopen?: () => Promise<SamplingClient>,
  ) {}

  async sample(prompt: number[], p: SampleParams): Promise<SampledSequence[]> {
    try {
      return await this.sampleOnce(prompt, p);
    } catch (err) {
      // A trainer that restarted (or expired the session) answers 404 for our sampling session: open it again
      // from the sampler path and sample once more, instead of failing every call until the next policy switch.
      if (!(this.reopen && err instanceof TinkerApiError && err.status === 404 && /sampling_session/.test(err.body))) throw classify(err);
      const stale = this.client;
      this.reopening ??= this.reopen().finally(() => (this.reopening = null));
      try {
        const fresh = await this.reopening;
        if (this.client === stale) this.client = fresh;
      } catch (e) {
        throw classify(e);
      }
      try {
        return await this.sampleOnce(prompt, p);
      } catch (e) {
        throw classify(e);
      }
    }
  }

  private async sampleOnce(prompt: number[], p: SampleParams): Promise<SampledSequence[]> {
    const res = await this.client.sample(
      p.promptChunks ?? prompt,
      p.numSamples,
      { maxTokens: p.maxTokens, temperature: p.temperature, topK: p.topK, topP: p.topP, stop: p.stop, seed: p.seed },
      { signal: p.signal },
    );
    return res.sequences.map((s) => {
      if (!s.logprobs || s.logprobs.length !== s.tokens.length) {
        throw new SamplerError(`the sampler returned ${s.logprobs?.length ?? 'no'} logprobs for ${s.tokens.length} tokens`, false);
      }
      return { tokens: s.tokens, logprobs: s.logprobs, stopReason: s.stopReason };
    });
  }
}

export class TinkerSamplerFactory implements SamplerFactory {
  readonly service: ServiceClient;
  constructor(options: TinkerClientOptions | string) {
    this.service = new ServiceClient(options);
  }

  async create(target: SamplerTarget): Promise<Sampler> {
    try {
      const open = () =>
        this.service.createSamplingClient(target.samplerPath ? { modelPath: target.samplerPath } : { baseModel: target.baseModel! }, { timeoutMs: 120_000 });
      return new TinkerSampler(await open(), open);
    } catch (err) {
      const e = classify(err);
      throw e instanceof SamplerError ? e : new SamplerError(`could not create a sampling session: ${(err as Error).message}`, true);
    }
  }

  /**
   * Finishes the Tinker session, waiting at most `waitMs`: ServiceClient.close waits for a session still being
   * created, which against a trainer that does not answer retries for minutes (the proxy took over 5 s to exit on
   * SIGTERM). The trainer ends a session whose heartbeats stop by itself.
   */
  async close(waitMs = 400): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    await Promise.race([this.service.close('success', undefined, { timeoutMs: waitMs }).catch(() => undefined), gaveUp]);
    clearTimeout(timer);
  }
}
