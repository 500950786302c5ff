// Checks on request bodies: every bad field becomes a RequestError (HTTP 400, category "user") that names it.
import { quote } from '../../common/front-door';
import { isLossFn, LOSS_FNS, LOSSES, lossFnConfigProblem } from '../engine';
import type { BaseModelInfo, EngineDatum, LossFn, SampleParams } from '../engine';
import type { WireAdamParams, WireSamplingParams } from '../../tinker/wire/types';
import type { AdamParams } from '../engine';
import { RequestError } from './futures';

export type Body = Record<string, unknown>;

export function asBody(v: unknown): Body {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new RequestError('request body must be a JSON object');
  return v as Body;
}

export function reqString(b: Body, key: string): string {
  const v = b[key];
  if (typeof v !== 'string' || v === '') throw new RequestError(`${key} must be a non-empty string`);
  return v;
}

export function optString(b: Body, key: string): string | undefined {
  const v = b[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new RequestError(`${key} must be a string`);
  return v;
}

export function optInt(b: Body, key: string, min = Number.MIN_SAFE_INTEGER): number | undefined {
  const v = b[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) throw new RequestError(`${key} must be an integer >= ${min}, got ${quote(v)}`);
  return v;
}

export function reqInt(b: Body, key: string, min = Number.MIN_SAFE_INTEGER): number {
  const v = optInt(b, key, min);
  if (v === undefined) throw new RequestError(`${key} is required`);
  return v;
}

export function optBool(b: Body, key: string): boolean | undefined {
  const v = b[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new RequestError(`${key} must be a boolean`);
  return v;
}

export function checkLossFn(name: unknown): LossFn {
  if (!isLossFn(name)) throw new RequestError(`loss_fn ${quote(name)} is not supported; use one of ${LOSS_FNS.join(', ')}`);
  return name;
}

function checkTokens(tokens: number[], info: BaseModelInfo, what: string): void {
  for (const t of tokens) {
    if (!Number.isInteger(t) || t < 0 || t >= info.vocabSize) {
      throw new RequestError(`${what}: token id ${t} is out of vocabulary (0..${info.vocabSize - 1})`);
    }
  }
}

export function checkData(data: EngineDatum[], lossFn: LossFn, info: BaseModelInfo): void {
  if (data.length === 0) throw new RequestError('data must hold at least one datum');
  data.forEach((d, i) => {
    const n = d.modelInput.length;
    if (n === 0) throw new RequestError(`data[${i}].model_input is empty`);
    if (n > info.maxContextLength) {
      throw new RequestError(`data[${i}].model_input has ${n} tokens, over the context length ${info.maxContextLength} of ${info.name}`);
    }
    checkTokens(d.modelInput, info, `data[${i}].model_input`);
    for (const key of LOSSES[lossFn].inputs) {
      if (!d.lossFnInputs[key]) throw new RequestError(`data[${i}].loss_fn_inputs.${key} is required by ${lossFn}`);
    }
    for (const [key, values] of Object.entries(d.lossFnInputs)) {
      if (values.length !== n) {
        throw new RequestError(`data[${i}].loss_fn_inputs.${key} has ${values.length} values; model_input has ${n} tokens`);
      }
    }
    checkTokens(d.lossFnInputs.target_tokens, info, `data[${i}].loss_fn_inputs.target_tokens`);
  });
}

/** loss_fn_config: an object of finite numbers; with `lossFn`, also only the keys that loss reads. */
export function checkLossFnConfig(v: unknown, lossFn?: LossFn): Record<string, number> | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw new RequestError('loss_fn_config must be an object of numbers');
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== 'number' || !Number.isFinite(x)) throw new RequestError(`loss_fn_config.${k} must be a finite number`);
  }
  if (lossFn) {
    const problem = lossFnConfigProblem(lossFn, v as Record<string, number>);
    if (problem) throw new RequestError(problem);
  }
  return Object.keys(v).length ? (v as Record<string, number>) : undefined;
}

export function adamFromWire(v: unknown): AdamParams {
  const w = (v ?? {}) as WireAdamParams;
  if (typeof w !== 'object') throw new RequestError('adam_params must be an object');
  const num = (x: unknown, key: string, dflt: number, ok: (n: number) => boolean): number => {
    if (x === undefined || x === null) return dflt;
    if (typeof x !== 'number' || !Number.isFinite(x) || !ok(x)) throw new RequestError(`adam_params.${key} is out of range: ${quote(x)}`);
    return x;
  };
  return {
    learningRate: num(w.learning_rate, 'learning_rate', 1e-4, (n) => n >= 0),
    beta1: num(w.beta1, 'beta1', 0.9, (n) => n >= 0 && n < 1),
    beta2: num(w.beta2, 'beta2', 0.95, (n) => n >= 0 && n < 1),
    eps: num(w.eps, 'eps', 1e-12, (n) => n >= 0),
    weightDecay: num(w.weight_decay, 'weight_decay', 0, (n) => n >= 0),
    gradClipNorm: num(w.grad_clip_norm, 'grad_clip_norm', 0, (n) => n >= 0),
  };
}

export function samplingParamsFromWire(v: unknown, promptLength: number, info: BaseModelInfo): SampleParams {
  if (!v || typeof v !== 'object') throw new RequestError('sampling_params must be an object');
  const w = v as WireSamplingParams;
  const room = info.maxContextLength - promptLength;
  if (room < 1) throw new RequestError(`prompt has ${promptLength} tokens; the context length of ${info.name} is ${info.maxContextLength}`);
  let maxTokens = Math.min(room, 256);
  if (w.max_tokens !== undefined && w.max_tokens !== null) {
    if (!Number.isInteger(w.max_tokens) || w.max_tokens < 1) throw new RequestError(`sampling_params.max_tokens must be an integer >= 1, got ${quote(w.max_tokens)}`);
    maxTokens = Math.min(w.max_tokens, room);
  }
  const temperature = w.temperature ?? 1;
  if (typeof temperature !== 'number' || !Number.isFinite(temperature) || temperature < 0) {
    throw new RequestError(`sampling_params.temperature must be a number >= 0, got ${quote(w.temperature)}`);
  }
  const topK = w.top_k ?? -1;
  if (!Number.isInteger(topK) || (topK < 1 && topK !== -1 && topK !== 0)) throw new RequestError(`sampling_params.top_k must be -1 (off) or >= 1, got ${quote(w.top_k)}`);
  const topP = w.top_p ?? 1;
  if (typeof topP !== 'number' || !(topP > 0 && topP <= 1)) throw new RequestError(`sampling_params.top_p must be in (0, 1], got ${quote(w.top_p)}`);
  let stop: number[] | string[] = [];
  if (typeof w.stop === 'string') stop = [w.stop];
  else if (Array.isArray(w.stop)) {
    if (w.stop.every((s) => typeof s === 'string')) stop = w.stop as string[];
    else if (w.stop.every((s) => Number.isInteger(s))) {
      stop = w.stop as number[];
      checkTokens(stop, info, 'sampling_params.stop');
    } else throw new RequestError('sampling_params.stop must be a string, a list of strings or a list of token ids');
  } else if (w.stop !== undefined && w.stop !== null) throw new RequestError('sampling_params.stop must be a string, a list of strings or a list of token ids');
  let seed: number | undefined;
  if (w.seed !== undefined && w.seed !== null) {
    if (!Number.isInteger(w.seed) || w.seed < 0) throw new RequestError(`sampling_params.seed must be a non-negative integer, got ${quote(w.seed)}`);
    seed = w.seed;
  }
  return { maxTokens, temperature, topK: topK === 0 ? -1 : topK, topP, stop, seed };
}

export function checkPrompt(tokens: number[], info: BaseModelInfo): void {
  if (tokens.length === 0) throw new RequestError('prompt is empty');
  checkTokens(tokens, info, 'prompt');
}
