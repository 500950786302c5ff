// OpenAI legacy completions (POST /v1/completions): one prompt, a string or token ids, rendered with no chat
// template (a text gets the tokenizer's BOS, as a tokenizer encodes by default; token ids are used as given),
// sampled until the tokenizer's end of text, `max_tokens` (default 16, as OpenAI documents), stop strings, n.
// The answer is a `text_completion` with prompt_token_ids and per choice token_ids and logprobs; or its SSE chunks.
import { randomUUID } from 'node:crypto';
import { openAiUsage, type AnswerChoice, type InternalAnswer } from '../answer';
import { badRequest, type ApiError } from '../errors';
import { MAX_N } from '../request';
import { pieces, sse, type AgentApi, type ParsedRequest } from './api';
import { bool, definedOnly, int, isObj, num, onlyKnown, present, refuseUnless, requireObject, stopStrings, str, type Obj } from './fields';

const KNOWN = [
  'model', 'prompt', 'max_tokens', 'temperature', 'top_p', 'top_k', 'n', 'stream', 'stream_options', 'stop', 'seed', 'logprobs', 'echo',
  'suffix', 'best_of', 'presence_penalty', 'frequency_penalty', 'logit_bias', 'user',
];
const DEFAULT_MAX_TOKENS = 16;

const isIds = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x) && x >= 0);

/** The one prompt of the request; a batch of prompts is refused (one call, one span, one turn). */
function onePrompt(v: unknown): { text: string } | { tokens: number[] } {
  if (typeof v === 'string') return { text: v };
  if (isIds(v)) return { tokens: v };
  if (Array.isArray(v) && v.length === 1) return onePrompt(v[0]);
  if (Array.isArray(v) && v.length > 1 && v.every((p) => typeof p === 'string' || isIds(p))) {
    throw badRequest(`prompt: a batch of ${v.length} prompts is not served; send one prompt per request`, 'prompt', 'unsupported_parameter');
  }
  throw badRequest('prompt must be a string, an array of token ids, or a one-element array of either', 'prompt', v === undefined ? 'missing_required_parameter' : 'invalid_type');
}

function refuseUnserved(body: Obj, n: number): void {
  refuseUnless(body, 'echo', (v) => v === false, 'echoing the prompt (with its logprobs) is not served');
  refuseUnless(body, 'suffix', (v) => v === '', 'insertion (suffix) cannot be rendered');
  refuseUnless(body, 'best_of', (v) => v === n, `best_of other than n (${n}) would need ranking the samples, which is not served`);
  refuseUnless(body, 'presence_penalty', (v) => v === 0, 'penalties are not applied by the sampler');
  refuseUnless(body, 'frequency_penalty', (v) => v === 0, 'penalties are not applied by the sampler');
  refuseUnless(body, 'logit_bias', (v) => isObj(v) && Object.keys(v).length === 0, 'logit biases are not applied by the sampler');
  if (present(body, 'stream_options') && !isObj(body.stream_options)) throw badRequest('stream_options must be an object', 'stream_options', 'invalid_type');
  int(body, 'logprobs', 0, 5);
  str(body, 'user');
}

/** OpenAI's completion logprobs (the sampled tokens only: alternatives are not sampled). */
function logprobsOf(c: AnswerChoice): Obj {
  let offset = 0;
  const text_offset = c.logprobs.map((e) => {
    const at = offset;
    offset += e.token.length;
    return at;
  });
  return {
    tokens: c.logprobs.map((e) => e.token),
    token_logprobs: c.logprobs.map((e) => e.logprob),
    top_logprobs: c.logprobs.map((e) => ({ [e.token]: e.logprob })),
    text_offset,
  };
}

const finish = (c: AnswerChoice) => (c.finishReason === 'length' ? 'length' : 'stop');

function completionBody(a: InternalAnswer): Obj {
  return {
    id: a.id,
    object: 'text_completion',
    created: a.created,
    model: a.model,
    choices: a.choices.map((c) => ({ text: c.message.content, index: c.index, logprobs: logprobsOf(c), finish_reason: finish(c), token_ids: c.tokenIds })),
    usage: openAiUsage(a),
    prompt_token_ids: a.promptTokenIds,
  };
}

function completionEvents(a: InternalAnswer, includeUsage: boolean): string[] {
  const full = completionBody(a);
  const base = { id: a.id, object: 'text_completion', created: a.created, model: a.model };
  const events: string[] = [];
  for (const c of a.choices) {
    for (const text of pieces(c.message.content)) events.push(sse({ ...base, choices: [{ text, index: c.index, logprobs: null, finish_reason: null }] }));
  }
  const last: Obj = { ...base, choices: (full.choices as Obj[]).map((c) => ({ ...c, text: '' })), prompt_token_ids: a.promptTokenIds };
  if (includeUsage) last.usage = full.usage;
  return [...events, sse(last), sse('[DONE]')];
}

function parse(raw: unknown): ParsedRequest {
  const body = requireObject(raw);
  onlyKnown(body, KNOWN, 'Completions');
  const n = int(body, 'n', 1, MAX_N) ?? 1;
  refuseUnserved(body, n);
  const topK = int(body, 'top_k', -1, 1_000_000);
  const stream = bool(body, 'stream') ?? false;
  const includeUsage = stream && isObj(body.stream_options) && body.stream_options.include_usage === true;
  return {
    call: {
      api: 'completions',
      id: `cmpl-${randomUUID()}`,
      model: str(body, 'model') ?? null,
      messages: [],
      tools: [],
      prompt: onePrompt(body.prompt),
      n,
      stream,
      stop: stopStrings(body.stop, 'stop', 4),
      sampling: definedOnly({
        temperature: num(body, 'temperature', 0, 2),
        topP: num(body, 'top_p', 0, 1, { minExclusive: true }),
        topK: topK === 0 ? -1 : topK,
        maxTokens: int(body, 'max_tokens', 1, 1_000_000) ?? DEFAULT_MAX_TOKENS,
        seed: int(body, 'seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
      }),
      toolCallIdPrefix: 'call_',
    },
    body: completionBody,
    events: (a) => completionEvents(a, includeUsage),
  };
}

export const completionsApi: AgentApi = { name: 'completions', parse, errorBody: (err: ApiError) => err.body() };
