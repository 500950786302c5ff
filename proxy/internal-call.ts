// One chat-completions call: plan (rollout-scoped calls: seed and the rollout's policy), sequence id, policy
// lease, render, sample with a deadline and retries, parse, span. Returns the completion or throws ApiError; the
// server writes it out.
import { randomUUID } from 'node:crypto';
import type { Message } from '../chat';
import { withToolDeclarations } from '../chat/tools';
import { buildCompletion } from './completion';
import type { ChatCompletion } from './completion';
import { HttpError } from '../common/http';
import { ApiError, badRequest } from './errors';
import type { ActivePolicy, PolicyManager } from './policy';
import { leasePolicy, rendererOf } from './policy-registry';
import type { PolicyRegistry } from './policy-registry';
import type { PolicySpec } from './policy-spec';
import type { ChatRequest } from './request';
import { SamplerError } from './sampler';
import type { Sampler, SampleParams, SampledSequence } from './sampler';
import { buildSpan } from './span';
import type { SpanSink } from './span-sink';
import type { CallPlan } from './rollout-seed';
import { completionFromSpan, requestFingerprint } from './replay';
import type { Span } from '../store/types';

export interface CallOptions {
  /** The current policy (unscoped calls, rollouts whose resources name none) and its switch. */
  policies: PolicyManager;
  /** Every other policy a rollout in flight was enqueued under. */
  registry: PolicyRegistry;
  sink: SpanSink | null;
  /** Deadline of one call, from arrival to the sampler's answer. */
  callTimeoutMs: number;
  /** Sampler retries after the first attempt (llmProxyRetryAttempts). */
  retryAttempts: number;
  /** How long a call waits for a policy (during a switch, or before the first one). */
  policyWaitMs: number;
  log: (line: string) => void;
}

export interface Scope {
  rolloutId: string;
  attemptId: string;
  /** The client says this request repeats one it sent before (`x-stainless-retry-count` > 0). */
  clientRetry?: boolean;
}

export interface CallResult {
  completion: ChatCompletion;
  policy: PolicySpec;
  sequenceId: number | null;
}

function effectiveSampling(req: ChatRequest, spec: PolicySpec) {
  return {
    temperature: req.sampling.temperature ?? spec.sampling.temperature,
    topP: req.sampling.topP ?? spec.sampling.topP,
    topK: req.sampling.topK ?? spec.sampling.topK,
    maxTokens: req.sampling.maxTokens ?? spec.sampling.maxTokens,
    seed: req.sampling.seed,
  };
}

async function sampleWithRetries(sampler: Sampler, prompt: number[], params: SampleParams, retries: number): Promise<SampledSequence[]> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await sampler.sample(prompt, params);
    } catch (err) {
      if (params.signal.aborted) throw err;
      const retryable = err instanceof SamplerError ? err.retryable : !(err instanceof ApiError);
      if (!retryable || attempt >= retries) throw err;
      await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 2000)));
    }
  }
}

function asApiError(err: unknown, signal: AbortSignal, timeoutSignal: AbortSignal): ApiError {
  if (err instanceof ApiError) return err;
  if (timeoutSignal.aborted) return new ApiError(504, 'the sampler did not answer before the call deadline', 'timeout', null, 'timeout');
  if (signal.aborted) return new ApiError(499, 'client closed the request', 'api_error', null, 'client_closed');
  if (err instanceof SamplerError) return new ApiError(err.status, `sampler: ${err.message}`, 'api_error', null, 'sampler_error');
  return new ApiError(502, `sampler: ${(err as Error)?.message ?? String(err)}`, 'api_error', null, 'sampler_error');
}

export async function runChatCall(req: ChatRequest, scope: Scope | null, clientSignal: AbortSignal, o: CallOptions): Promise<CallResult> {
  const startTime = Date.now() / 1000;
  const timeoutSignal = AbortSignal.timeout(o.callTimeoutMs);
  // A rollout-scoped call samples with a seed derived from the rollout, what it asks and how often the attempt
  // asked it before, never from time, so retries and reruns give the same tokens (the chaos tests compare final
  // weights bit for bit). The seed is held until the span is written, so a parallel twin gets another.
  const fingerprint = requestFingerprint(req);
  let plan: CallPlan | null = null;
  if (scope && o.sink?.planCall) {
    try {
      plan = await o.sink.planCall(scope.rolloutId, scope.attemptId, fingerprint, scope.clientRetry === true, AbortSignal.any([clientSignal, timeoutSignal]));
    } catch (err) {
      if (err instanceof ApiError) throw err; // the rollout's policy could not be read (rollout-policy.ts)
      throw new ApiError(503, `store: could not derive the call's sampling seed: ${(err as Error).message}`, 'api_error', null, 'store_unavailable');
    }
  }
  // The policy this call samples from: its rollout's, or (none named, or unscoped) the current one.
  const own = plan?.policy ?? null;
  try {
    const replayed = plan?.recorded ? replayRecorded(plan.recorded, own, o) : null;
    if (replayed) return replayed;
    let sequenceId: number | null = null;
    if (scope && o.sink) {
      try {
        sequenceId = await o.sink.nextSequenceId(scope.rolloutId, scope.attemptId);
      } catch (err) {
        throw new ApiError(503, `store: could not take a span sequence id: ${(err as Error).message}`, 'api_error', null, 'store_unavailable');
      }
    }
    return await sampleAndRecord(req, scope, { sequenceId, seed: plan?.seed ?? req.sampling.seed, fingerprint, startTime, timeoutSignal, policy: own }, clientSignal, o);
  } finally {
    plan?.release();
  }
}

/** The answer recorded for a call the client is retrying, when it was given by the policy this call resolves to. */
function replayRecorded(span: Span, own: PolicySpec | null, o: CallOptions): CallResult | null {
  const spec = own ?? o.policies.current()?.spec;
  if (!spec || span.attributes['agl.policy.switch_id'] !== spec.switchId) return null;
  const completion = completionFromSpan(span, rendererOf(o.policies, o.registry, spec).tokenizer);
  return completion ? { completion, policy: spec, sequenceId: span.sequence_id } : null;
}

async function sampleAndRecord(
  req: ChatRequest,
  scope: Scope | null,
  call: { sequenceId: number | null; seed: number | undefined; fingerprint: string; startTime: number; timeoutSignal: AbortSignal; policy: PolicySpec | null },
  clientSignal: AbortSignal,
  o: CallOptions,
): Promise<CallResult> {
  const { sequenceId, seed, startTime, timeoutSignal } = call;
  const signal = AbortSignal.any([clientSignal, timeoutSignal]);
  const lease = await leasePolicy(o.policies, o.registry, call.policy, Math.min(o.policyWaitMs, o.callTimeoutMs), signal);
  const spec = lease.policy.spec;
  const sampling = { ...effectiveSampling(req, spec), seed };
  let completion: ChatCompletion | null = null;
  let failure: ApiError | null = null;
  try {
    try {
      completion = await sampleCompletion(req, lease.policy, sampling, signal, spec.retryAttempts ?? o.retryAttempts);
    } catch (err) {
      failure = asApiError(err, clientSignal, timeoutSignal);
    }
    if (scope && o.sink && sequenceId !== null) {
      const span = buildSpan({
        rolloutId: scope.rolloutId,
        attemptId: scope.attemptId,
        sequenceId,
        startTime,
        endTime: Date.now() / 1000,
        requestedModel: req.model,
        messages: req.messages,
        sampling: { ...sampling, n: req.n, stream: req.stream },
        fingerprint: call.fingerprint,
        policy: spec,
        completion,
        error: failure ? { status: failure.status, message: failure.message } : null,
      });
      // Written for failed calls too (an error span); only a call that was answered fails on it.
      const notRecorded = await recordSpan(span, timeoutSignal, o);
      failure ??= notRecorded;
    }
    if (failure) {
      failure.headers['x-agl-policy'] = spec.switchId;
      throw failure;
    }
    return { completion: completion!, policy: spec, sequenceId };
  } finally {
    lease.release();
  }
}

/** Writes a scoped call's span; an error for the caller when it could not be written. */
async function recordSpan(span: Span, deadline: AbortSignal, o: CallOptions): Promise<ApiError | null> {
  try {
    await o.sink!.addSpan(span, deadline);
    return null;
  } catch (err) {
    const message = `span for ${span.rollout_id}/${span.attempt_id} #${span.sequence_id} was not recorded: ${(err as Error).message}`;
    o.log(message);
    // An answered scoped call must leave its span, or training silently loses the turn: fail it so the
    // agent's client retries (a fresh sample, a fresh sequence id).
    // Except when the store says the rollout or attempt in the URL does not exist: retrying cannot help.
    return err instanceof HttpError && err.status === 404
      ? new ApiError(404, `unknown rollout or attempt in the URL: ${message}`, 'invalid_request_error', null, 'rollout_not_found')
      : new ApiError(503, `store: ${message}`, 'api_error', null, 'store_unavailable');
  }
}

async function sampleCompletion(
  req: ChatRequest,
  policy: ActivePolicy,
  sampling: ReturnType<typeof effectiveSampling>,
  signal: AbortSignal,
  retries: number,
): Promise<ChatCompletion> {
  const renderer = policy.renderer;
  let prompt: number[];
  try {
    // Only the qwen3 family has a tool-declaration format; other renderers render the messages alone.
    const messages: Message[] = renderer.name.startsWith('qwen3') ? withToolDeclarations(req.messages, req.tools) : req.messages;
    prompt = renderer.buildGenerationPrompt(messages);
  } catch (err) {
    throw badRequest(`messages cannot be rendered with ${renderer.name}: ${(err as Error).message}`, 'messages');
  }
  const sequences = await sampleWithRetries(policy.sampler, prompt, { numSamples: req.n, ...sampling, stop: renderer.stopSequences(), signal }, retries);
  if (sequences.length !== req.n) throw new ApiError(502, `sampler returned ${sequences.length} sequences for n=${req.n}`, 'api_error', null, 'sampler_error');
  return buildCompletion({
    id: `chatcmpl-${randomUUID()}`,
    model: req.model ?? policy.spec.modelName,
    created: Math.floor(Date.now() / 1000),
    promptTokens: prompt,
    sequences,
    renderer,
    userStops: req.stop,
  });
}
