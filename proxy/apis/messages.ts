// Anthropic Messages (POST /v1/messages): `system`, content blocks (text, tool_use, tool_result), custom
// `tools` and `tool_choice`, `max_tokens` (required), `stop_sequences`, temperature (0..1), top_p, top_k,
// `stream` (Anthropic's SSE events). The answer is a `message` with text and tool_use blocks, plus
// prompt_token_ids, token_ids and token_logprobs; errors are in Anthropic's format.
import { randomBytes } from 'node:crypto';
import { withoutToolCallBlocks } from '../../chat/renderers/tool-call-json';
import type { InternalAnswer } from '../answer';
import { badRequest, type ApiError } from '../errors';
import type { AgentApi, ParsedRequest } from './api';
import { bool, definedOnly, int, isObj, num, onlyKnown, present, refuseUnless, requireObject, stopStrings, str, type Obj } from './fields';
import { conversation, messagesTools, systemMessages } from './messages-content';
import { messageEvents } from './messages-stream';
import { effortAsk, type ReasoningAsk } from './reasoning';

const KNOWN = [
  'model', 'messages', 'max_tokens', 'system', 'stop_sequences', 'stream', 'temperature', 'top_p', 'top_k', 'tools', 'tool_choice',
  'metadata', 'thinking', 'service_tier', 'cache_control', 'inference_geo', 'speed', 'user_profile_id', 'workspace_id',
  'container', 'mcp_servers', 'output_config', 'context_management', 'diagnostics',
];

/**
 * `thinking` (enabled with a budget, adaptive, or disabled) and `output_config.effort`, checked against the run's
 * renderer (reasoning.ts). The budget is not a setting any renderer renders: thinking on is what a thinking renderer
 * renders, and max_tokens bounds the whole answer.
 */
function reasoningAsks(body: Obj): ReasoningAsk[] {
  const asks: ReasoningAsk[] = [];
  if (present(body, 'thinking')) {
    const t = body.thinking;
    const shape = 'thinking must be {"type": "enabled", "budget_tokens": int >= 1024}, {"type": "adaptive"} or {"type": "disabled"}';
    if (!isObj(t) || !['enabled', 'adaptive', 'disabled'].includes(t.type as string)) throw badRequest(shape, 'thinking', 'invalid_type');
    for (const k of Object.keys(t)) {
      if (!['type', 'budget_tokens', 'display'].includes(k)) throw badRequest(`thinking.${k}: not a thinking setting this proxy serves (it serves: type, budget_tokens, display)`, `thinking.${k}`, 'unknown_parameter');
    }
    if (t.type === 'enabled') int(t, 'budget_tokens', 1024, 1_000_000);
    if (t.type === 'enabled' && !present(t, 'budget_tokens')) throw badRequest('thinking.budget_tokens: Field required', 'thinking.budget_tokens', 'missing_required_parameter');
    asks.push({ param: 'thinking', thinking: t.type !== 'disabled' });
  }
  if (present(body, 'output_config')) {
    const oc = body.output_config;
    if (!isObj(oc)) throw badRequest('output_config must be an object', 'output_config', 'invalid_type');
    for (const k of Object.keys(oc)) {
      if (k !== 'effort' && present(oc, k)) {
        throw badRequest(`output_config.${k}: not served by this proxy (of output_config it serves effort only); leave it out`, `output_config.${k}`, 'unsupported_parameter');
      }
    }
    const effort = effortAsk(oc.effort, 'output_config.effort');
    if (effort) asks.push(effort);
  }
  return asks;
}

function refuseUnserved(body: Obj): void {
  for (const k of ['container', 'mcp_servers', 'context_management', 'diagnostics']) {
    refuseUnless(body, k, () => false, 'not served by this proxy; leave it out');
  }
  if (present(body, 'metadata') && !isObj(body.metadata)) throw badRequest('metadata: must be an object', 'metadata', 'invalid_type');
  for (const k of ['service_tier', 'inference_geo', 'speed', 'user_profile_id', 'workspace_id']) str(body, k);
}

/** What Anthropic calls the stop reason of a choice. */
function stopReason(a: InternalAnswer): 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' {
  const c = a.choices[0]!;
  if (c.finishReason === 'tool_calls') return 'tool_use';
  if (c.finishReason === 'length') return 'max_tokens';
  return c.stopSequence !== null ? 'stop_sequence' : 'end_turn';
}

export function messageBody(a: InternalAnswer): Obj {
  const c = a.choices[0]!;
  const calls = c.message.tool_calls ?? [];
  const text = calls.length ? withoutToolCallBlocks(c.message.content) : c.message.content;
  const content: Obj[] = [];
  // The family's reasoning as a thinking block (no signature: nothing here can verify one).
  if (c.message.reasoning_content) content.push({ type: 'thinking', thinking: c.message.reasoning_content, signature: '' });
  if (text !== '' || calls.length === 0) content.push({ type: 'text', text });
  for (const call of calls) content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: JSON.parse(call.function.arguments) });
  return {
    id: a.id,
    type: 'message',
    role: 'assistant',
    model: a.model,
    content,
    stop_reason: stopReason(a),
    stop_sequence: c.stopSequence,
    usage: { input_tokens: a.promptTokenIds.length, output_tokens: c.tokenIds.length, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    prompt_token_ids: a.promptTokenIds,
    token_ids: c.tokenIds,
    token_logprobs: c.logprobs.map((e) => e.logprob),
  };
}

function parse(raw: unknown): ParsedRequest {
  const body = requireObject(raw);
  onlyKnown(body, KNOWN, 'Messages');
  refuseUnserved(body);
  const reasoning = reasoningAsks(body);
  const model = str(body, 'model');
  if (model === undefined) throw badRequest('model: Field required', 'model', 'missing_required_parameter');
  if (!present(body, 'max_tokens')) throw badRequest('max_tokens: Field required', 'max_tokens', 'missing_required_parameter');
  const topK = int(body, 'top_k', 0, 1_000_000);
  const sampling = definedOnly({
    temperature: num(body, 'temperature', 0, 1),
    topP: num(body, 'top_p', 0, 1, { minExclusive: true }),
    topK: topK === 0 ? -1 : topK,
    maxTokens: int(body, 'max_tokens', 1, 1_000_000),
  });
  const tools = messagesTools(body.tools, body.tool_choice);
  return {
    call: {
      api: 'messages',
      id: `msg_${randomBytes(12).toString('hex')}`,
      model,
      messages: [...systemMessages(body.system), ...conversation(body.messages)],
      tools,
      prompt: null,
      n: 1,
      stream: bool(body, 'stream') ?? false,
      stop: stopStrings(body.stop_sequences, 'stop_sequences', 64),
      sampling,
      reasoning,
      toolCallIdPrefix: 'toolu_',
    },
    body: messageBody,
    events: (a) => messageEvents(messageBody(a)),
  };
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** Anthropic's error body: {"type": "error", "error": {"type", "message"}}. */
export function anthropicError(err: ApiError): Obj {
  const status = err.status === 499 ? 400 : err.status;
  return { type: 'error', error: { type: ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'), message: err.message } };
}

export const messagesApi: AgentApi = { name: 'messages', parse, errorBody: anthropicError };
