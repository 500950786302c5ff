// A finished completion re-emitted as an OpenAI SSE stream (pure). The sampler is not incremental, so the
// stream is synthetic: a role chunk, content and tool-call deltas, then one last chunk with every choice's
// finish_reason, logprobs and token_ids plus the top-level prompt_token_ids (and usage when asked).
import type { ChatCompletion } from './completion';

const CONTENT_PIECE = 64;

export function sseEvents(c: ChatCompletion, includeUsage: boolean): string[] {
  const base = { id: c.id, object: 'chat.completion.chunk', created: c.created, model: c.model };
  const events: unknown[] = [];
  for (const choice of c.choices) {
    events.push({ ...base, choices: [{ index: choice.index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
    const text = choice.message.content;
    for (let i = 0; i < text.length; ) {
      // Do not split a surrogate pair across chunks.
      let end = Math.min(i + CONTENT_PIECE, text.length);
      const code = text.charCodeAt(end - 1);
      if (end < text.length && code >= 0xd800 && code <= 0xdbff) end++;
      events.push({ ...base, choices: [{ index: choice.index, delta: { content: text.slice(i, end) }, logprobs: null, finish_reason: null }] });
      i = end;
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
  return [...events.map((e) => `data: ${JSON.stringify(e)}\n\n`), 'data: [DONE]\n\n'];
}
