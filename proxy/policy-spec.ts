// The policy the proxy serves and the admin request that sets it (validation is pure).
import { quote } from '../common/front-door';
import { isRendererName, recommendedRenderer, RENDERER_NAMES } from '../chat';
import type { RendererName } from '../chat';
import { badRequest } from './errors';

export interface SamplingDefaults {
  temperature: number;
  topK: number;
  topP: number;
  maxTokens: number;
}

export interface PolicySpec {
  /** Idempotency key: the same switchId twice is one switch. */
  switchId: string;
  /** Public model name (what /v1/models lists); also picks the tokenizer unless baseModel is given. */
  modelName: string;
  samplerPath?: string;
  baseModel?: string;
  renderer: RendererName;
  sampling: SamplingDefaults;
  /** Sampler retries for calls on this policy (the run's llmProxyRetryAttempts); default: the proxy's --retries. */
  retryAttempts?: number;
  /** The optimizer steps the policy's weights include (a run's policy step): recorded in each span it serves. */
  policyStep?: number;
}

/** TinkerLLM's defaults in the seed. */
export const DEFAULT_SAMPLING: SamplingDefaults = { temperature: 1.0, topK: -1, topP: 1.0, maxTokens: 2048 };

/** The model whose tokenizer the policy uses. */
export function tokenizerModel(spec: PolicySpec): string {
  return spec.baseModel ?? spec.modelName;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function str(body: Obj, key: string, required: boolean): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) {
    if (required) throw badRequest(`${key} is required`, key, 'missing_required_parameter');
    return undefined;
  }
  if (typeof v !== 'string' || v.length === 0 || v.length > 1000) throw badRequest(`${key} must be a non-empty string`, key, 'invalid_type');
  return v;
}

function numIn(obj: Obj, key: string, min: number, max: number, integer: boolean, fallback: number): number {
  const v = obj[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max || (integer && !Number.isInteger(v))) {
    throw badRequest(`sampling.${key} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got ${quote(v)}`, `sampling.${key}`);
  }
  return v;
}

/** Body of POST /admin/policy: {switchId, modelName, samplerPath | baseModel, renderer?, sampling?, retryAttempts?, policyStep?}. */
export function parsePolicySpec(body: unknown): PolicySpec {
  if (!isObj(body)) throw badRequest('the request body must be a JSON object', null, 'invalid_type');
  const switchId = str(body, 'switchId', true)!;
  const modelName = str(body, 'modelName', true)!;
  const samplerPath = str(body, 'samplerPath', false);
  const baseModel = str(body, 'baseModel', false);
  if (!samplerPath && !baseModel) throw badRequest('one of samplerPath or baseModel is required', 'samplerPath', 'missing_required_parameter');
  let renderer = str(body, 'renderer', false);
  if (renderer === undefined) {
    try {
      renderer = recommendedRenderer(baseModel ?? modelName);
    } catch (err) {
      throw badRequest(`renderer: ${(err as Error).message}`, 'renderer');
    }
  }
  if (!isRendererName(renderer)) throw badRequest(`renderer must be one of ${RENDERER_NAMES.join(', ')}, got ${quote(renderer)}`, 'renderer');
  const s = body.sampling ?? {};
  if (!isObj(s)) throw badRequest('sampling must be an object', 'sampling', 'invalid_type');
  const topK = numIn(s, 'topK', -1, 1_000_000, true, DEFAULT_SAMPLING.topK);
  const sampling: SamplingDefaults = {
    temperature: numIn(s, 'temperature', 0, 2, false, DEFAULT_SAMPLING.temperature),
    topK: topK === 0 ? -1 : topK,
    topP: numIn(s, 'topP', Number.MIN_VALUE, 1, false, DEFAULT_SAMPLING.topP),
    maxTokens: numIn(s, 'maxTokens', 1, 1_000_000, true, DEFAULT_SAMPLING.maxTokens),
  };
  const spec: PolicySpec = { switchId, modelName, renderer, sampling };
  if (body.retryAttempts !== undefined && body.retryAttempts !== null) {
    const r = body.retryAttempts;
    if (typeof r !== 'number' || !Number.isInteger(r) || r < 0 || r > 10) throw badRequest(`retryAttempts must be an integer from 0 to 10, got ${quote(r)}`, 'retryAttempts');
    spec.retryAttempts = r;
  }
  if (body.policyStep !== undefined && body.policyStep !== null) {
    const p = body.policyStep;
    if (typeof p !== 'number' || !Number.isInteger(p) || p < 0) throw badRequest(`policyStep must be a non-negative integer, got ${quote(p)}`, 'policyStep');
    spec.policyStep = p;
  }
  if (samplerPath) spec.samplerPath = samplerPath;
  else spec.baseModel = baseModel;
  if (samplerPath && baseModel) spec.baseModel = baseModel;
  return spec;
}

/**
 * The optional `drain` of POST /admin/policy (default true): false makes the switch change the current policy at
 * once, without holding or draining calls (async runs: rollouts in flight keep sampling from their own policy).
 */
export function parseDrain(body: unknown): boolean {
  const v = isObj(body) ? body.drain : undefined;
  if (v === undefined || v === null) return true;
  if (typeof v !== 'boolean') throw badRequest(`drain must be a boolean, got ${quote(v)}`, 'drain', 'invalid_type');
  return v;
}

/** Everything but the switchId (and drain, which says how to switch, not what to serve), to tell a retried switch from a conflicting one. */
export function fingerprint(spec: PolicySpec): string {
  const { modelName, samplerPath, baseModel, renderer, sampling: x, retryAttempts, policyStep } = spec;
  return JSON.stringify([modelName, samplerPath ?? null, baseModel ?? null, renderer, x.temperature, x.topK, x.topP, x.maxTokens, retryAttempts ?? null, policyStep ?? null]);
}
