// The span one rollout-scoped call writes to the store (pure). Named "litellm_request" with flat
// `prompt_token_ids` / `response_token_ids` int lists and `gen_ai.response.id`, which is what Agent-lightning's
// LlmProxyTraceToTriplet reads; the gen_ai.* prompt/completion/request attributes and the JSON string
// `logprobs.content` are what TracerTraceToTriplet reads (match the span with llm_call_match "litellm_request").
// The same span for every API (`agl.api` names it), so training treats their calls alike.
import { randomBytes } from 'node:crypto';
import type { InternalAnswer } from './answer';
import type { InternalCall } from './call-types';
import type { PolicySpec } from './policy-spec';
import { stopSequenceAttribute } from './recorded';
import type { AttributeValue, Span } from '../store/types';
import { formatContentAsString } from '../chat/content';
import type { Content } from '../chat';
import { FINGERPRINT_ATTRIBUTE } from './replay';

export const PROXY_SPAN_NAME = 'litellm_request';
/** The policy step that served the call (its first token on), when the policy names one. */
export const POLICY_STEP_ATTRIBUTE = 'agl.policy.step';
/** The policy step the proxy served by default when the call finished. */
export const POLICY_STEP_AT_END_ATTRIBUTE = 'agl.policy.step_at_end';

export interface SpanInput {
  rolloutId: string;
  attemptId: string;
  sequenceId: number;
  startTime: number;
  endTime: number;
  /** What was asked: model, messages (or a prompt without chat template), the API and its extra attributes. */
  call: Pick<InternalCall, 'api' | 'model' | 'messages' | 'prompt' | 'traceId' | 'spanAttributes'>;
  sampling: { temperature: number; topP: number; topK: number; maxTokens: number; seed?: number; n: number; stream: boolean };
  /** The policy that served the call (from its first token: a call is sampled from one policy). */
  policy: PolicySpec | null;
  /** The proxy's current policy when the call finished (a newer one may have been published meanwhile). */
  policyAtEnd?: PolicySpec | null;
  answer: InternalAnswer | null;
  error: { status: number; message: string } | null;
  /** requestFingerprint of the request (replay.ts). */
  fingerprint?: string;
}

function flattenMessages(prefix: string, messages: { role: string; content: Content; tool_calls?: { id?: string; function: { name: string; arguments: string } }[]; tool_call_id?: string }[], attrs: Record<string, AttributeValue>): void {
  messages.forEach((m, i) => {
    attrs[`${prefix}.${i}.role`] = m.role;
    attrs[`${prefix}.${i}.content`] = formatContentAsString(m.content, '');
    if (m.tool_call_id) attrs[`${prefix}.${i}.tool_call_id`] = m.tool_call_id;
    (m.tool_calls ?? []).forEach((c, j) => {
      if (c.id) attrs[`${prefix}.${i}.tool_calls.${j}.id`] = c.id;
      attrs[`${prefix}.${i}.tool_calls.${j}.name`] = c.function.name;
      attrs[`${prefix}.${i}.tool_calls.${j}.arguments`] = c.function.arguments;
    });
  });
}

/** A vision prompt's images (JSON: [{at, data, format, expected_tokens}], positions in prompt_token_ids). */
export const PROMPT_IMAGES_ATTRIBUTE = 'agl.prompt.images';

export function buildSpan(x: SpanInput): Span {
  const traceId = x.call.traceId ?? randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  const a: Record<string, AttributeValue> = {
    'agentlightning.rollout_id': x.rolloutId,
    'agentlightning.attempt_id': x.attemptId,
    // Known only once stored when the store numbers the span (sequenceId -1): the span's sequence_id then says it.
    ...(x.sequenceId >= 0 ? { 'agentlightning.span_sequence_id': x.sequenceId } : {}),
    'gen_ai.system': 'agl-temporal',
    'agl.api': x.call.api,
    'gen_ai.request.model': x.call.model ?? x.policy?.modelName ?? '',
    'gen_ai.request.temperature': x.sampling.temperature,
    'gen_ai.request.top_p': x.sampling.topP,
    'gen_ai.request.top_k': x.sampling.topK,
    'gen_ai.request.max_tokens': x.sampling.maxTokens,
    'gen_ai.request.n': x.sampling.n,
    'gen_ai.request.stream': x.sampling.stream,
  };
  if (x.sampling.seed !== undefined) a['gen_ai.request.seed'] = x.sampling.seed;
  if (x.fingerprint) a[FINGERPRINT_ATTRIBUTE] = x.fingerprint;
  flattenMessages('gen_ai.prompt', x.call.messages, a);
  if (x.call.prompt && 'text' in x.call.prompt) a['agl.prompt.text'] = x.call.prompt.text;
  if (x.policy) {
    a['agl.policy.switch_id'] = x.policy.switchId;
    a['agl.policy.model_name'] = x.policy.modelName;
    a['agl.policy.renderer'] = x.policy.renderer;
    if (x.policy.samplerPath) a['agl.policy.sampler_path'] = x.policy.samplerPath;
    if (x.policy.baseModel) a['agl.policy.base_model'] = x.policy.baseModel;
    if (x.policy.policyStep !== undefined) a[POLICY_STEP_ATTRIBUTE] = x.policy.policyStep;
  }
  // As Stitch records the policy version at a request's start and end: staleness is read from the first.
  if (x.policyAtEnd) {
    a['agl.policy.switch_id_at_end'] = x.policyAtEnd.switchId;
    if (x.policyAtEnd.policyStep !== undefined) a[POLICY_STEP_AT_END_ATTRIBUTE] = x.policyAtEnd.policyStep;
  }
  const c = x.answer;
  if (c) {
    const completionTokens = c.choices.reduce((n, ch) => n + ch.tokenIds.length, 0);
    a['gen_ai.response.id'] = c.id;
    a['gen_ai.response.model'] = c.model;
    a['gen_ai.usage.prompt_tokens'] = c.promptTokenIds.length;
    a['gen_ai.usage.completion_tokens'] = completionTokens;
    a['gen_ai.usage.total_tokens'] = c.promptTokenIds.length + completionTokens;
    a['prompt_token_ids'] = c.promptTokenIds;
    if (c.promptImages?.length) a[PROMPT_IMAGES_ATTRIBUTE] = JSON.stringify(c.promptImages);
    flattenMessages('gen_ai.completion', c.choices.map((ch) => ch.message), a);
    c.choices.forEach((ch, i) => {
      a[`gen_ai.completion.${i}.finish_reason`] = ch.finishReason;
      a[`agl.completion.${i}.token_ids`] = ch.tokenIds;
      a[`agl.completion.${i}.logprobs`] = ch.logprobs.map((e) => e.logprob);
      if (ch.stopSequence !== null) a[stopSequenceAttribute(i)] = ch.stopSequence;
    });
    const first = c.choices[0];
    if (first) {
      a['response_token_ids'] = first.tokenIds;
      a['response_logprobs'] = first.logprobs.map((e) => e.logprob);
      a['logprobs.content'] = JSON.stringify(first.logprobs);
    }
    Object.assign(a, x.call.spanAttributes?.(c));
  }
  if (x.error) {
    a['error.status'] = x.error.status;
    a['error.message'] = x.error.message;
  }
  return {
    rollout_id: x.rolloutId,
    attempt_id: x.attemptId,
    sequence_id: x.sequenceId,
    trace_id: traceId,
    span_id: spanId,
    parent_id: null,
    name: PROXY_SPAN_NAME,
    status: x.error ? { status_code: 'ERROR', description: x.error.message } : { status_code: 'OK', description: null },
    attributes: a,
    events: [],
    links: [],
    start_time: x.startTime,
    end_time: x.endTime,
    context: { trace_id: traceId, span_id: spanId, is_remote: false, trace_state: {} },
    parent: null,
    resource: {
      attributes: {
        'service.name': 'agl-temporal-proxy',
        'agentlightning.rollout_id': x.rolloutId,
        'agentlightning.attempt_id': x.attemptId,
        ...(x.sequenceId >= 0 ? { 'agentlightning.span_sequence_id': x.sequenceId } : {}),
      },
      schema_url: '',
    },
  };
}
