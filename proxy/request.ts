// Validation of an OpenAI chat-completions request body (pure). Integers and floats are both accepted
// where a number is expected (JSON has one number type); integer fields reject fractions.
import { quote } from '../common/front-door';
import type { ContentPart, Message, ToolCall } from '../chat';
import { badRequest } from './errors';
import { chatImagePart, contentOf } from './apis/image-parts';
import { effortAsk, type ReasoningAsk } from './apis/reasoning';
import { argumentsJson, definedOnly, int, isObj, num, present, stopStrings, unenforceableToolChoice, type Obj } from './apis/fields';

export interface SamplingOverrides {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxTokens?: number;
  seed?: number;
}

export interface ChatRequest {
  model: string | null;
  messages: Message[];
  n: number;
  stream: boolean;
  includeUsage: boolean;
  stop: string[];
  /** OpenAI tool definitions ({"type": "function", "function": {...}}), in request order; [] with tool_choice "none". */
  tools: Record<string, unknown>[];
  sampling: SamplingOverrides;
  /** reasoning_effort and the chat template's thinking switches, checked against the policy's renderer. */
  reasoning?: ReasoningAsk[];
}

export const MAX_N = 64;
const ROLES = new Set(['system', 'user', 'assistant', 'tool', 'developer']);

/** Text parts joined into a string; with image_url parts, a list of text and image parts (vision models). */
function messageContent(content: unknown, where: string): string | ContentPart[] {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const parts = content.map((part, j): ContentPart => {
      if (isObj(part) && part.type === 'text' && typeof part.text === 'string') return { type: 'text', text: part.text };
      if (isObj(part) && part.type === 'image_url') return chatImagePart(part, `${where}.content[${j}]`);
      const kind = isObj(part) ? JSON.stringify(part.type) : typeof part;
      throw badRequest(`${where}.content[${j}]: only text and image_url parts are supported, got ${kind}`, `${where}.content`);
    });
    return contentOf(parts);
  }
  throw badRequest(`${where}.content must be a string, an array of text and image_url parts, or null`, `${where}.content`, 'invalid_type');
}

function toolCalls(v: unknown, where: string): ToolCall[] {
  if (!Array.isArray(v)) throw badRequest(`${where}.tool_calls must be an array`, `${where}.tool_calls`, 'invalid_type');
  return v.map((c, j) => {
    const at = `${where}.tool_calls[${j}]`;
    if (!isObj(c) || !isObj(c.function) || typeof c.function.name !== 'string') {
      throw badRequest(`${at} must be {"type": "function", "function": {"name": str, "arguments": str}}`, at, 'invalid_type');
    }
    const args = argumentsJson(c.function.arguments ?? '{}', `${at}.function.arguments`, at);
    const call: ToolCall = { type: 'function', function: { name: c.function.name, arguments: args } };
    if (typeof c.id === 'string') call.id = c.id;
    return call;
  });
}

function messages(v: unknown): Message[] {
  if (!Array.isArray(v) || v.length === 0) throw badRequest('messages must be a non-empty array', 'messages', v === undefined ? 'missing_required_parameter' : 'invalid_type');
  return v.map((m, i) => {
    const where = `messages[${i}]`;
    if (!isObj(m)) throw badRequest(`${where} must be an object`, where, 'invalid_type');
    if (typeof m.role !== 'string' || !ROLES.has(m.role)) {
      throw badRequest(`${where}.role must be one of system, user, assistant, tool, developer; got ${quote(m.role)}`, `${where}.role`);
    }
    const msg: Message = { role: m.role === 'developer' ? 'system' : m.role, content: messageContent(m.content, where) };
    if (m.role === 'assistant' && typeof m.reasoning_content === 'string' && m.reasoning_content !== '') {
      // Reasoning sent back (vLLM's reasoning_content) is a thinking part: each family keeps or drops it as it does.
      const rest = typeof msg.content === 'string' ? [{ type: 'text' as const, text: msg.content }] : msg.content;
      msg.content = [{ type: 'thinking', thinking: m.reasoning_content }, ...rest];
    }
    if (m.tool_calls !== undefined && m.tool_calls !== null) {
      if (m.role !== 'assistant') throw badRequest(`${where}: only assistant messages have tool_calls`, `${where}.tool_calls`);
      const calls = toolCalls(m.tool_calls, where);
      if (calls.length) msg.tool_calls = calls;
    }
    if (typeof m.tool_call_id === 'string') msg.tool_call_id = m.tool_call_id;
    if (typeof m.name === 'string') msg.name = m.name;
    return msg;
  });
}

function tools(body: Obj): Record<string, unknown>[] {
  const v = body.tools;
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw badRequest('tools must be an array', 'tools', 'invalid_type');
  v.forEach((t, i) => {
    if (!isObj(t) || t.type !== 'function' || !isObj(t.function) || typeof t.function.name !== 'string' || !t.function.name) {
      throw badRequest(`tools[${i}] must be {"type": "function", "function": {"name": str, "description"?: str, "parameters"?: object}}`, `tools[${i}]`, 'invalid_type');
    }
  });
  const choice = body.tool_choice;
  if (choice !== undefined && choice !== null && choice !== 'none' && choice !== 'auto' && choice !== 'required' && !isObj(choice)) {
    throw badRequest('tool_choice must be "none", "auto", "required" or an object', 'tool_choice');
  }
  if (choice === 'required' || isObj(choice)) unenforceableToolChoice('tool_choice', choice === 'required' ? '"required"' : 'a named function');
  return choice === 'none' ? [] : (v as Record<string, unknown>[]);
}

/**
 * The reasoning settings of a chat request: OpenAI's reasoning_effort, and the switches vLLM passes to a model's chat
 * template (chat_template_kwargs: enable_thinking for Qwen/Kimi/Nemotron, thinking for DeepSeek, reasoning_effort
 * for gpt-oss/GLM/Qwen3.8). Other template kwargs are left as they were.
 */
function reasoningAsks(body: Obj): ReasoningAsk[] {
  const asks: ReasoningAsk[] = [];
  const effort = effortAsk(body.reasoning_effort, 'reasoning_effort');
  if (effort) asks.push(effort);
  if (!present(body, 'chat_template_kwargs')) return asks;
  const kw = body.chat_template_kwargs;
  if (!isObj(kw)) throw badRequest('chat_template_kwargs must be an object', 'chat_template_kwargs', 'invalid_type');
  for (const k of ['enable_thinking', 'thinking']) {
    if (!present(kw, k)) continue;
    const param = `chat_template_kwargs.${k}`;
    if (typeof kw[k] !== 'boolean') throw badRequest(`${param} must be a boolean`, param, 'invalid_type');
    asks.push({ param, thinking: kw[k] as boolean });
  }
  const kwEffort = effortAsk(kw.reasoning_effort, 'chat_template_kwargs.reasoning_effort');
  if (kwEffort) asks.push(kwEffort);
  return asks;
}

/** Validates a parsed JSON body; throws ApiError(400) naming the offending parameter. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (!isObj(body)) throw badRequest('the request body must be a JSON object', null, 'invalid_type');
  if (body.model !== undefined && body.model !== null && typeof body.model !== 'string') throw badRequest('model must be a string', 'model', 'invalid_type');
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') throw badRequest('stream must be a boolean', 'stream', 'invalid_type');
  if (present(body, 'stream_options') && !isObj(body.stream_options)) throw badRequest('stream_options must be an object', 'stream_options', 'invalid_type');
  if (present(body, 'logprobs') && typeof body.logprobs !== 'boolean') throw badRequest('logprobs must be a boolean', 'logprobs', 'invalid_type');
  int(body, 'top_logprobs', 0, 20);
  const maxCompletion = int(body, 'max_completion_tokens', 1, 1_000_000);
  const maxTokens = int(body, 'max_tokens', 1, 1_000_000);
  const topK = int(body, 'top_k', -1, 1_000_000);
  const sampling: SamplingOverrides = {
    temperature: num(body, 'temperature', 0, 2),
    topP: num(body, 'top_p', 0, 1, { minExclusive: true }),
    topK: topK === 0 ? -1 : topK,
    maxTokens: maxCompletion ?? maxTokens,
    seed: int(body, 'seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
  };
  definedOnly(sampling);
  const stream = body.stream === true;
  const streamOptions = isObj(body.stream_options) ? body.stream_options : {};
  return {
    model: typeof body.model === 'string' ? body.model : null,
    messages: messages(body.messages),
    n: int(body, 'n', 1, MAX_N) ?? 1,
    stream,
    includeUsage: stream && streamOptions.include_usage === true,
    stop: stopStrings(body.stop, 'stop'),
    tools: tools(body),
    sampling,
    reasoning: reasoningAsks(body),
  };
}
