// A finished chat completion re-emitted as an OpenAI SSE stream (pure). The sampler is not incremental, so the
// stream is synthetic: a role chunk, content and tool-call deltas, then one last chunk with every choice's
// finish_reason, logprobs and token_ids plus the top-level prompt_token_ids (and usage when asked).
import { pieces, sse } from './apis/api';
import type { ChatCompletion } from './completion';

export function sseEvents(c: ChatCompletion, includeUsage: boolean): string[] {
  const base = { id: c.id, object: 'chat.completion.chunk', created: c.created, model: c.model };
  const events: unknown[] = [];
  for (const choice of c.choices) {
    events.push({ ...base, choices: [{ index: choice.index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
    for (const piece of pieces(choice.message.content)) {
      events.push({ ...base, choices: [{ index: choice.index, delta: { content: piece }, logprobs: null, finish_reason: null }] });
    }
    (choice.message.tool_calls ?? []).forEach((call, j) => {
      events.push({
        ...base,
        choices: [{ index: choice.index, delta: { tool_calls: [{ index: j, id: call.id, type: 'function', function: call.function }] }, logprobs: null, finish_reason: null }],
      });
    });
  }
  const last: Record<string, unknown> = {
    ...base,
    choices: c.choices.map((choice) => ({
      index: choice.index,
      delta: {},
      logprobs: choice.logprobs,
      finish_reason: choice.finish_reason,
      token_ids: choice.token_ids,
    })),
    prompt_token_ids: c.prompt_token_ids,
  };
  if (includeUsage) last.usage = c.usage;
  events.push(last);
  return [...events.map((e) => sse(e)), sse('[DONE]')];
}
