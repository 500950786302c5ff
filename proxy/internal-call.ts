// One call, whatever API it came through: every API parses its request into an InternalCall and prints the
// InternalAnswer back in its own format (apis/). Here, once for all of them: plan (rollout-scoped calls: seed
// and the rollout's policy), client-retry replay, policy lease, render, sample with a deadline and retries,
// parse, span (numbered by the store as it stores it; a sink that does not number spans gives a sequence id at
// request start instead). Returns the answer or throws ApiError; the server writes it out.
import { createHash } from 'node:crypto';
import { HttpError } from '../common/http';
import { buildAnswer, type InternalAnswer } from './answer';
import { checkReasoning } from './apis/reasoning';
import { ApiError } from './errors';
import type { PolicyManager } from './policy';
import { leasePolicy, rendererOf } from './policy-registry';
import type { PolicyRegistry } from './policy-registry';
import type { PolicySpec } from './policy-spec';
import { buildPrompt, promptImages } from './prompt';
import { answerFromSpan } from './recorded';
import { requestFingerprint } from './replay';
import type { ChatRequest } from './request';
import type { CallPlan } from './rollout-seed';
import { SamplerError } from './sampler';
import type { Sampler, SampleParams, SampledSequence } from './sampler';
import { buildSpan } from './span';
import { RolloutChangedError, type SpanSink } from './span-sink';
import type { Span } from '../store/types';
import type { ApiName, InternalCall } from './call-types';
import { retry } from '../common/retry';

export type { ApiName, InternalCall };

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
  answer: InternalAnswer;
  policy: PolicySpec;
  sequenceId: number | null;
}

/**
 * A stable digest of what was asked. A chat call's is replay.ts's requestFingerprint, unchanged (its seeds stay
 * what they were); another API's adds the API and a prompt given without chat template.
 */
export function callFingerprint(call: InternalCall): string {
  const { model, messages, tools, n, stop, sampling } = call;
  const asChat: ChatRequest = { model, messages, tools, n, stop, sampling, stream: false, includeUsage: false };
  const fp = requestFingerprint(asChat);
  if (call.api === 'chat') return fp;
  return createHash('sha256').update(JSON.stringify([call.api, fp, call.prompt])).digest('hex').slice(0, 32);
}

function effectiveSampling(call: InternalCall, spec: PolicySpec) {
  return {
    temperature: call.sampling.temperature ?? spec.sampling.temperature,
    topP: call.sampling.topP ?? spec.sampling.topP,
    topK: call.sampling.topK ?? spec.sampling.topK,
    maxTokens: call.sampling.maxTokens ?? spec.sampling.maxTokens,
    seed: call.sampling.seed,
  };
}

async function sampleWithRetries(sampler: Sampler, prompt: number[], params: SampleParams, retries: number): Promise<SampledSequence[]> {
  return retry(() => sampler.sample(prompt, params), {
    firstPauseMs: 100,
    maxPauseMs: 2000,
    retries,
    retryable: (err) => (err instanceof SamplerError ? err.retryable : !(err instanceof ApiError)),
    signal: params.signal,
  });
}

function asApiError(err: unknown, signal: AbortSignal, timeoutSignal: AbortSignal): ApiError {
  if (err instanceof ApiError) return err;
  if (timeoutSignal.aborted) return new ApiError(504, 'the sampler did not answer before the call deadline', 'timeout', null, 'timeout');
  if (signal.aborted) return new ApiError(499, 'client closed the request', 'api_error', null, 'client_closed');
  if (err instanceof SamplerError) return new ApiError(err.status, `sampler: ${err.message}`, 'api_error', null, 'sampler_error');
  return new ApiError(502, `sampler: ${(err as Error)?.message ?? String(err)}`, 'api_error', null, 'sampler_error');
}

/** How often a call is planned at most while its rollout keeps changing under it. */
const MAX_PLANS = 3;

export async function runCall(call: InternalCall, scope: Scope | null, clientSignal: AbortSignal, o: CallOptions): Promise<CallResult> {
  const startTime = Date.now() / 1000;
  const timeoutSignal = AbortSignal.timeout(o.callTimeoutMs);
  // A rollout-scoped call samples with a seed derived from the rollout, what it asks and how often the attempt
  // asked it before, never from time, so retries and reruns give the same tokens (the chaos tests compare final
  // weights bit for bit). The seed is held until the span is written, so a parallel twin gets another.
  const fingerprint = callFingerprint(call);
  // The plan comes from what the proxy holds of the rollout (its seed, its policy); the store writes the span only
  // while the rollout is as that was read. Changed since (its status, its resources): planned and sampled again
  // from the rollout as it is now, so no span is stored from a stale read.
  const storeTrouble = (err: unknown, what: string) =>
    err instanceof ApiError ? err : new ApiError(503, `store: could not ${what}: ${(err as Error).message}`, 'api_error', null, 'store_unavailable');
  let plan: CallPlan | null = null;
  if (scope && o.sink?.planCall) {
    try {
      plan = await o.sink.planCall(scope.rolloutId, scope.attemptId, fingerprint, scope.clientRetry === true, AbortSignal.any([clientSignal, timeoutSignal]));
    } catch (err) {
      throw storeTrouble(err, "derive the call's sampling seed"); // an ApiError: the rollout's policy could not be read (rollout-policy.ts)
    }
  }
  try {
    for (let planned = 1; ; planned++) {
      // The policy this call samples from: its rollout's, or (none named, or unscoped) the current one.
      const own = plan?.policy ?? null;
      const replayed = plan?.recorded ? replayRecorded(plan.recorded, own, o) : null;
      if (replayed) return replayed;
      let sequenceId: number | null = null;
      // A sink that numbers spans as it stores them (the store) gives the span its id at the write: no request here.
      if (scope && o.sink && o.sink.numbersSpans !== true) {
        try {
          sequenceId = await o.sink.nextSequenceId(scope.rolloutId, scope.attemptId);
        } catch (err) {
          throw new ApiError(503, `store: could not take a span sequence id: ${(err as Error).message}`, 'api_error', null, 'store_unavailable');
        }
      }
      try {
        return await sampleAndRecord(call, scope, { sequenceId, seed: plan?.seed ?? call.sampling.seed, fingerprint, startTime, timeoutSignal, policy: own, plan }, clientSignal, o);
      } catch (err) {
        if (!(err instanceof RolloutChangedError) || !plan?.again) throw err;
        if (planned >= MAX_PLANS || timeoutSignal.aborted || clientSignal.aborted) {
          throw new ApiError(503, `store: ${err.message}; it changed again on each of ${planned} tries`, 'api_error', null, 'rollout_changed');
        }
        o.log(`${err.message}: planned again`);
        try {
          plan = await plan.again();
        } catch (e) {
          throw storeTrouble(e, 'read the changed rollout again');
        }
      }
    }
  } finally {
    plan?.release();
  }
}

/** The answer recorded for a call the client is retrying, when it was given by the policy this call resolves to. */
function replayRecorded(span: Span, own: PolicySpec | null, o: CallOptions): CallResult | null {
  const spec = own ?? o.policies.current()?.spec;
  if (!spec || span.attributes['agl.policy.switch_id'] !== spec.switchId) return null;
  const answer = answerFromSpan(span, rendererOf(o.policies, o.registry, spec).tokenizer);
  if (answer) answer.renderer = spec.renderer;
  return answer ? { answer, policy: spec, sequenceId: span.sequence_id } : null;
}

async function sampleAndRecord(
  call: InternalCall,
  scope: Scope | null,
  c: { sequenceId: number | null; seed: number | undefined; fingerprint: string; startTime: number; timeoutSignal: AbortSignal; policy: PolicySpec | null; plan: CallPlan | null },
  clientSignal: AbortSignal,
  o: CallOptions,
): Promise<CallResult> {
  const { seed, startTime, timeoutSignal } = c;
  let sequenceId = c.sequenceId;
  const signal = AbortSignal.any([clientSignal, timeoutSignal]);
  const lease = await leasePolicy(o.policies, o.registry, c.policy, Math.min(o.policyWaitMs, o.callTimeoutMs), signal);
  const spec = lease.policy.spec;
  const sampling = { ...effectiveSampling(call, spec), seed };
  let answer: InternalAnswer | null = null;
  let failure: ApiError | null = null;
  try {
    try {
      const renderer = lease.policy.renderer;
      // A reasoning setting the renderer does not render is refused: the run trains what its renderer renders.
      if (call.reasoning?.length) checkReasoning(call.reasoning, spec.renderer, spec.baseModel ?? spec.modelName);
      const prompt = buildPrompt(call, renderer);
      const params = { numSamples: call.n, ...sampling, stop: prompt.stop, signal, ...(prompt.chunks ? { promptChunks: prompt.chunks } : {}) };
      const sequences = await sampleWithRetries(lease.policy.sampler, prompt.tokens, params, spec.retryAttempts ?? o.retryAttempts);
      if (sequences.length !== call.n) throw new ApiError(502, `sampler returned ${sequences.length} sequences for n=${call.n}`, 'api_error', null, 'sampler_error');
      answer = buildAnswer({
        id: call.id,
        model: call.model ?? spec.modelName,
        created: Math.floor(Date.now() / 1000),
        promptTokens: prompt.tokens,
        sequences,
        renderer,
        userStops: call.stop,
        raw: prompt.raw,
        rawStops: prompt.raw ? (prompt.stop as number[]) : undefined,
        toolCallIdPrefix: call.toolCallIdPrefix,
      });
      if (prompt.chunks) answer.promptImages = promptImages(prompt.chunks);
      answer.renderer = spec.renderer;
    } catch (err) {
      failure = asApiError(err, clientSignal, timeoutSignal);
    }
    if (scope && o.sink) {
      const span = buildSpan({
        rolloutId: scope.rolloutId,
        attemptId: scope.attemptId,
        sequenceId: sequenceId ?? -1, // -1: the store numbers it
        startTime,
        endTime: Date.now() / 1000,
        call,
        sampling: { ...sampling, n: call.n, stream: call.stream },
        fingerprint: c.fingerprint,
        policy: spec,
        policyAtEnd: o.policies.current()?.spec ?? null,
        answer,
        error: failure ? { status: failure.status, message: failure.message } : null,
      });
      // Written for failed calls too (an error span); only a call that was answered fails on it.
      const recorded = await recordSpan(span, timeoutSignal, o, c.plan);
      if (recorded instanceof RolloutChangedError) {
        c.plan?.written?.('refused');
        throw recorded; // nothing stored: runCall plans the call again
      }
      if (recorded instanceof ApiError) {
        c.plan?.written?.('failed');
        failure ??= recorded;
      } else {
        c.plan?.written?.(failure ? 'error' : 'answered');
        sequenceId = recorded;
      }
    }
    if (failure) {
      failure.headers['x-agl-policy'] = spec.switchId;
      throw failure;
    }
    return { answer: answer!, policy: spec, sequenceId };
  } finally {
    lease.release();
  }
}

/**
 * Writes a scoped call's span: its sequence id once stored, or an error for the caller when it could not be written,
 * or RolloutChangedError when the store refused it because the rollout is no longer as the plan read it.
 */
async function recordSpan(span: Span, deadline: AbortSignal, o: CallOptions, plan: CallPlan | null): Promise<number | ApiError | RolloutChangedError> {
  try {
    const numbered = await o.sink!.addSpan(span, deadline, plan?.facts);
    return typeof numbered === 'number' ? numbered : span.sequence_id;
  } catch (err) {
    if (err instanceof RolloutChangedError) return err;
    const message = `span for ${span.rollout_id}/${span.attempt_id}${span.sequence_id >= 0 ? ` #${span.sequence_id}` : ''} was not recorded: ${(err as Error).message}`;
    o.log(message);
    // An answered scoped call must leave its span, or training silently loses the turn: fail it so the
    // agent's client retries (a fresh sample, a fresh sequence id).
    // Except when the store says the rollout or attempt in the URL does not exist: retrying cannot help.
    return err instanceof HttpError && err.status === 404
      ? new ApiError(404, `unknown rollout or attempt in the URL: ${message}`, 'invalid_request_error', null, 'rollout_not_found')
      : new ApiError(503, `store: ${message}`, 'api_error', null, 'store_unavailable');
  }
}
