// Zero-latency samplers for tests and the overhead benchmark: they "generate" a scripted reply, encoded
// with the policy's tokenizer, followed by the renderer's stop sequence.
import { getRenderer, getTokenizer } from '../chat';
import type { SampledSequence, SampleParams, Sampler, SamplerFactory, SamplerTarget } from './sampler';

export type Script = (prompt: number[], params: SampleParams, sample: number) => string;

export class ScriptedSampler implements Sampler {
  calls = 0;
  private stopIds: number[] | undefined;
  constructor(
    private readonly modelName: string,
    private readonly rendererName: string,
    private readonly script: Script,
    private readonly delayMs = 0,
  ) {}

  async sample(prompt: number[], params: SampleParams): Promise<SampledSequence[]> {
    this.calls++;
    if (this.delayMs > 0) {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, this.delayMs);
        params.signal.addEventListener('abort', () => {
          clearTimeout(t);
          reject(params.signal.reason);
        });
      });
    }
    const tok = getTokenizer(this.modelName);
    this.stopIds ??= ((stop) => (typeof stop[0] === 'number' ? [stop[0] as number] : tok.encode(stop[0] as string)))(getRenderer(this.rendererName, tok).getStopSequences());
    const stopIds = this.stopIds;
    const out: SampledSequence[] = [];
    for (let i = 0; i < params.numSamples; i++) {
      const body = tok.encode(this.script(prompt, params, i));
      let tokens = [...body, ...stopIds];
      let stopReason: 'stop' | 'length' = 'stop';
      if (tokens.length > params.maxTokens) {
        tokens = tokens.slice(0, params.maxTokens);
        stopReason = 'length';
      }
      out.push({ tokens, logprobs: tokens.map((_, k) => -0.5 - k / 1000), stopReason });
    }
    return out;
  }
}

/** A factory whose samplers all follow one script; records the targets it was asked for. */
export class ScriptedSamplerFactory implements SamplerFactory {
  readonly created: SamplerTarget[] = [];
  constructor(
    private readonly rendererFor: (modelName: string) => string,
    private readonly script: Script,
    private readonly delayMs = 0,
  ) {}

  async create(target: SamplerTarget, modelName: string): Promise<Sampler> {
    this.created.push(target);
    return new ScriptedSampler(target.baseModel ?? modelName, this.rendererFor(modelName), this.script, this.delayMs);
  }
}
