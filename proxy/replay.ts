// What makes a client's retry of a rollout-scoped call safe (pure). The OpenAI clients (Node and Python) resend
// the very same body and mark it with `x-stainless-retry-count`. When the proxy or the store died after the
// first try's span was stored but before the client got its answer, the answer is rebuilt from that span instead
// of sampling again, so the attempt keeps one answered call for one turn, and the agent sees what training sees.
import { createHash } from 'node:crypto';
import type { Tokenizer } from '../chat';
import { CALL_KEY_ATTR, type Span } from '../store/types';
import { logprobEntries, type ChatCompletion, type Choice } from './completion';
import type { ChatRequest } from './request';

/** The span attribute holding the fingerprint: the store indexes answered calls by it (its call key). */
export const FINGERPRINT_ATTRIBUTE = CALL_KEY_ATTR;

/** A stable digest of what was asked: the same request body gives the same fingerprint. */
export function requestFingerprint(req: ChatRequest): string {
  const asked = { model: req.model, messages: req.messages, tools: req.tools, n: req.n, stop: req.stop, sampling: req.sampling };
  return createHash('sha256').update(JSON.stringify(asked)).digest('hex').slice(0, 32);
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const nums = (v: unknown): number[] | undefined => (Array.isArray(v) && v.every((x) => typeof x === 'number') ? (v as number[]) : undefined);

/** The completion an answered span recorded, or null when the span lacks any part of it. */
export function completionFromSpan(span: Span, tokenizer: Tokenizer): ChatCompletion | null {
  const a = span.attributes;
  const id = str(a['gen_ai.response.id']);
  const model = str(a['gen_ai.response.model']);
  const prompt = nums(a['prompt_token_ids']);
  const n = a['gen_ai.request.n'];
  if (span.status.status_code !== 'OK' || !id || model === undefined || !prompt || typeof n !== 'number') return null;
  const choices: Choice[] = [];
  for (let i = 0; i < n; i++) {
    const tokens = nums(a[`agl.completion.${i}.token_ids`]);
    const logprobs = nums(a[`agl.completion.${i}.logprobs`]);
    const content = str(a[`gen_ai.completion.${i}.content`]);
    const finish = str(a[`gen_ai.completion.${i}.finish_reason`]);
    if (!tokens || !logprobs || content === undefined || (finish !== 'stop' && finish !== 'length' && finish !== 'tool_calls')) return null;
    const message: Choice['message'] = { role: 'assistant', content };
    const calls: NonNullable<Choice['message']['tool_calls']> = [];
    for (let j = 0; str(a[`gen_ai.completion.${i}.tool_calls.${j}.name`]) !== undefined; j++) {
      calls.push({
        id: str(a[`gen_ai.completion.${i}.tool_calls.${j}.id`]) ?? '',
        type: 'function',
        function: { name: str(a[`gen_ai.completion.${i}.tool_calls.${j}.name`])!, arguments: str(a[`gen_ai.completion.${i}.tool_calls.${j}.arguments`]) ?? '' },
      });
    }
    if (calls.length) message.tool_calls = calls;
    choices.push({ index: i, message, finish_reason: finish, logprobs: { content: logprobEntries(tokenizer, tokens, logprobs), refusal: null }, token_ids: tokens });
  }
  const completionTokens = choices.reduce((k, c) => k + c.token_ids.length, 0);
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(span.end_time ?? span.start_time ?? 0),
    model,
    choices,
    usage: { prompt_tokens: prompt.length, completion_tokens: completionTokens, total_tokens: prompt.length + completionTokens },
    prompt_token_ids: prompt,
  };
}
