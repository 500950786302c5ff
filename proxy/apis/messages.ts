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

const KNOWN = [
  'model', 'messages', 'max_tokens', 'system', 'stop_sequences', 'stream', 'temperature', 'top_p', 'top_k', 'tools', 'tool_choice',
  'metadata', 'thinking', 'service_tier', 'cache_control', 'inference_geo', 'speed', 'user_profile_id', 'workspace_id',
  'container', 'mcp_servers', 'output_config', 'context_management', 'diagnostics',
];

function refuseUnserved(body: Obj): void {
  refuseUnless(body, 'thinking', (v) => isObj(v) && v.type === 'disabled', 'extended thinking cannot be honoured by the policy renderer; leave it out');
  for (const k of ['container', 'mcp_servers', 'output_config', 'context_management', 'diagnostics']) {
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
