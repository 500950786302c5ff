// OpenAI Responses (POST /v1/responses): `input` (a string or items), `instructions`, function `tools` and
// `tool_choice`, `max_output_tokens`, sampling fields (plus top_k and seed, as vLLM takes them), `stream` (the
// Responses event stream), `store` and `previous_response_id` (responses-store.ts). The answer is a `response`
// object whose output is a message and/or function calls, plus prompt_token_ids, token_ids and token_logprobs.
import { quote } from '../../common/front-door';
import type { Message } from '../../chat';
import { withoutToolCallBlocks } from '../../chat/renderers/tool-call-json';
import type { AnswerChoice, InternalAnswer } from '../answer';
import { badRequest, type ApiError } from '../errors';
import type { InternalCall } from '../internal-call';
import type { AgentApi, ApiContext, ParsedRequest } from './api';
import { bool, definedOnly, int, isObj, num, onlyKnown, present, refuseUnless, requireObject, str, type Obj } from './fields';
import { responsesTools, inputMessages } from './responses-input';
import { responseSpanAttributes, newResponseId } from './responses-store';
import { responseEvents } from './responses-stream';
import { effortAsk, renderedEffort, type ReasoningAsk } from './reasoning';

const KNOWN = [
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'max_output_tokens', 'temperature', 'top_p',
  'top_k', 'seed', 'stream', 'stream_options', 'store', 'previous_response_id', 'include', 'metadata', 'user', 'safety_identifier',
  'prompt_cache_key', 'prompt_cache_retention', 'service_tier', 'text', 'reasoning', 'truncation', 'top_logprobs', 'background',
  'conversation', 'prompt', 'max_tool_calls',
];

const isNullish = (v: unknown) => v === null || v === undefined;

/** Fields that ask for something the proxy cannot do, refused with the reason. */
function refuseUnserved(body: Obj): void {
  refuseUnless(body, 'background', (v) => v === false, 'background responses are not served; send the request and wait for it');
  refuseUnless(body, 'conversation', () => false, 'the Conversations API is not served; use previous_response_id or send the items');
  refuseUnless(body, 'prompt', () => false, 'prompt templates are not served; send instructions and input');
  refuseUnless(body, 'truncation', (v) => v === 'disabled', 'only "disabled": the proxy never drops items to fit the context');
  refuseUnless(body, 'text', (v) => isObj(v) && (isNullish(v.format) || (isObj(v.format) && v.format.type === 'text')) && (isNullish(v.verbosity) || v.verbosity === 'medium'),
    'only plain text output ({"format": {"type": "text"}}): structured output cannot be enforced by the sampler');
  refuseUnless(body, 'include', (v) => Array.isArray(v) && v.every((x) => x === 'reasoning.encrypted_content'),
    'only [] or ["reasoning.encrypted_content"] (reasoning items carry their text; encrypted_content is null); token ids and logprobs are always in token_ids and token_logprobs');
  refuseUnless(body, 'top_logprobs', (v) => v === 0, 'alternatives are not sampled; token_logprobs has the sampled tokens\' logprobs');
  refuseUnless(body, 'max_tool_calls', () => false, 'not enforced by the sampler; leave it out');
  if (present(body, 'metadata') && !isObj(body.metadata)) throw badRequest('metadata must be an object', 'metadata', 'invalid_type');
  if (present(body, 'stream_options') && !isObj(body.stream_options)) throw badRequest('stream_options must be an object', 'stream_options', 'invalid_type');
  bool(body, 'parallel_tool_calls');
  for (const k of ['user', 'safety_identifier', 'prompt_cache_key', 'service_tier', 'prompt_cache_retention']) str(body, k);
}

const SUMMARIES = ['auto', 'concise', 'detailed'];

/**
 * `reasoning`: its effort is checked against the run's renderer (reasoning.ts); summary (and the older
 * generate_summary) only asks for a display text, which is accepted and not produced (reasoning items have summary []).
 */
function reasoningAsks(body: Obj): ReasoningAsk[] {
  if (!present(body, 'reasoning')) return [];
  const r = body.reasoning;
  if (!isObj(r)) throw badRequest('reasoning must be an object ({"effort": ..., "summary": ...})', 'reasoning', 'invalid_type');
  for (const k of Object.keys(r)) {
    if (!['effort', 'summary', 'generate_summary'].includes(k)) {
      throw badRequest(`reasoning.${k}: not a reasoning setting this proxy serves (it serves: effort, summary, generate_summary)`, `reasoning.${k}`, 'unknown_parameter');
    }
  }
  for (const k of ['summary', 'generate_summary']) {
    if (!isNullish(r[k]) && !SUMMARIES.includes(r[k] as string)) {
      throw badRequest(`reasoning.${k} must be one of ${SUMMARIES.join(', ')}, got ${quote(r[k])}`, `reasoning.${k}`);
    }
  }
  const ask = effortAsk(r.effort, 'reasoning.effort');
  return ask ? [ask] : [];
}

function visibleText(c: AnswerChoice): string {
  return c.message.tool_calls ? withoutToolCallBlocks(c.message.content) : c.message.content;
}

/** The output items of an answer: its message (unless it only calls tools), then one item per function call. */
function outputItems(a: InternalAnswer): Obj[] {
  const c = a.choices[0]!;
  const hex = a.id.replace(/^resp_/, '');
  const items: Obj[] = [];
  // The family's reasoning (gpt-oss analysis channel, DeepSeek/Qwen <think>) as a reasoning item before the answer.
  if (c.message.reasoning_content) {
    items.push({ type: 'reasoning', id: `rs_${hex}`, summary: [], content: [{ type: 'reasoning_text', text: c.message.reasoning_content }], encrypted_content: null });
  }
  const text = visibleText(c);
  if (text !== '' || !c.message.tool_calls) {
    const status = c.finishReason === 'length' ? 'incomplete' : 'completed';
    items.push({ type: 'message', id: `msg_${hex}`, status, role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] });
  }
  for (const call of c.message.tool_calls ?? []) {
    items.push({ type: 'function_call', id: `fc_${call.id.replace(/^call_/, '')}`, call_id: call.id, name: call.function.name, arguments: call.function.arguments, status: 'completed' });
  }
  return items;
}

/** The assistant turn as a client sends it back (its text without the tool-call markup, and the calls). */
function assistantTurn(c: AnswerChoice): Message {
  // Reasoning stays in the stored turn as a thinking part: renderers that keep it in history (_preserve_thinking) show it.
  const reasoning = c.message.reasoning_content;
  const m: Message = {
    role: 'assistant',
    content: reasoning ? [{ type: 'thinking', thinking: reasoning }, { type: 'text', text: visibleText(c) }] : visibleText(c),
  };
  if (c.message.tool_calls) m.tool_calls = c.message.tool_calls;
  return m;
}

async function parse(raw: unknown, ctx: ApiContext): Promise<ParsedRequest> {
  const body = requireObject(raw);
  onlyKnown(body, KNOWN, 'Responses');
  refuseUnserved(body);
  const reasoning = reasoningAsks(body);
  const model = str(body, 'model') ?? null;
  const instructions = str(body, 'instructions');
  const previousId = str(body, 'previous_response_id');
  const stream = bool(body, 'stream') ?? false;
  const store = bool(body, 'store') ?? true;
  if (!present(body, 'input')) throw badRequest('input is required', 'input', 'missing_required_parameter');
  const input = inputMessages(body.input);
  const tools = responsesTools(body.tools, body.tool_choice);
  const topK = int(body, 'top_k', -1, 1_000_000);
  const sampling = definedOnly({
    temperature: num(body, 'temperature', 0, 2),
    topP: num(body, 'top_p', 0, 1, { minExclusive: true }),
    topK: topK === 0 ? -1 : topK,
    maxTokens: int(body, 'max_output_tokens', 1, 1_000_000),
    seed: int(body, 'seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
  });
  // What this response continues: the earlier response's conversation, without its instructions (as OpenAI does).
  const before = previousId ? await ctx.conversations.resolve(previousId, ctx.scope, ctx.signal) : [];
  const conversation = [...before, ...input];
  const { id, traceId } = newResponseId();
  const after = (a: InternalAnswer) => [...conversation, assistantTurn(a.choices[0]!)];
  const call: InternalCall = {
    api: 'responses',
    id,
    model,
    messages: instructions !== undefined ? [{ role: 'system', content: instructions }, ...conversation] : conversation,
    tools,
    prompt: null,
    n: 1,
    stream,
    stop: [],
    sampling,
    reasoning,
    toolCallIdPrefix: 'call_',
    traceId,
    spanAttributes: (a) => responseSpanAttributes(after(a), store),
  };
  const bodyOf = (a: InternalAnswer) => responseBody(a, body, { instructions, previousId, store });
  return {
    call,
    body: bodyOf,
    events: (a) => responseEvents(bodyOf(a)),
    answered: (a) => {
      if (store) ctx.conversations.remember(a.id, after(a));
    },
  };
}

function responseBody(a: InternalAnswer, req: Obj, echo: { instructions?: string; previousId?: string; store: boolean }): Obj {
  const c = a.choices[0]!;
  const incomplete = c.finishReason === 'length';
  const output = c.tokenIds.length;
  return {
    id: a.id,
    object: 'response',
    created_at: a.created,
    status: incomplete ? 'incomplete' : 'completed',
    background: false,
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: echo.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    max_tool_calls: null,
    model: a.model,
    output: outputItems(a),
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: echo.previousId ?? null,
    // The effort asked (only ever one the renderer renders), else the one the renderer states.
    reasoning: { effort: (isObj(req.reasoning) ? req.reasoning.effort : null) ?? renderedEffort(a.renderer), summary: isObj(req.reasoning) ? (req.reasoning.summary ?? null) : null },
    service_tier: 'default',
    store: echo.store,
    temperature: req.temperature ?? null,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: req.tool_choice ?? 'auto',
    tools: req.tools ?? [],
    top_logprobs: 0,
    top_p: req.top_p ?? null,
    truncation: 'disabled',
    usage: {
      input_tokens: a.promptTokenIds.length,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: output,
      output_tokens_details: { reasoning_tokens: c.reasoningTokens ?? 0 },
      total_tokens: a.promptTokenIds.length + output,
    },
    user: req.user ?? null,
    metadata: req.metadata ?? {},
    prompt_token_ids: a.promptTokenIds,
    token_ids: c.tokenIds,
    token_logprobs: c.logprobs.map((e) => e.logprob),
  };
}

export const responsesApi: AgentApi = { name: 'responses', parse, errorBody: (err: ApiError) => err.body() };
