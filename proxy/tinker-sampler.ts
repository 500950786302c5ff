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
  constructor(private readonly client: SamplingClient) {}

  async sample(prompt: number[], p: SampleParams): Promise<SampledSequence[]> {
    try {
      const res = await this.client.sample(
        prompt,
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
    } catch (err) {
      throw classify(err);
    }
  }
}

export class TinkerSamplerFactory implements SamplerFactory {
  readonly service: ServiceClient;
  constructor(options: TinkerClientOptions | string) {
    this.service = new ServiceClient(options);
  }

  async create(target: SamplerTarget): Promise<Sampler> {
    try {
      const client = await this.service.createSamplingClient(
        target.samplerPath ? { modelPath: target.samplerPath } : { baseModel: target.baseModel! },
        { timeoutMs: 120_000 },
      );
      return new TinkerSampler(client);
    } catch (err) {
      const e = classify(err);
      throw e instanceof SamplerError ? e : new SamplerError(`could not create a sampling session: ${(err as Error).message}`, true);
    }
  }

  close(): Promise<void> {
    return this.service.close();
  }
}
