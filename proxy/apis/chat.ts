// OpenAI chat completions (POST /v1/chat/completions): request.ts validates the body, the answer is printed as a
// `chat.completion` (plus prompt_token_ids, token_ids and logprobs) or its SSE chunks (stream.ts).
import { randomUUID } from 'node:crypto';
import { openAiUsage, type InternalAnswer } from '../answer';
import type { ChatCompletion } from '../completion';
import type { ApiError } from '../errors';
import { parseChatRequest } from '../request';
import { sseEvents } from '../stream';
import type { AgentApi } from './api';

export function chatCompletionOf(a: InternalAnswer): ChatCompletion {
  return {
    id: a.id,
    object: 'chat.completion',
    created: a.created,
    model: a.model,
    choices: a.choices.map((c) => ({
      index: c.index,
      message: c.message,
      finish_reason: c.finishReason,
      logprobs: { content: c.logprobs, refusal: null },
      token_ids: c.tokenIds,
    })),
    usage: openAiUsage(a),
    prompt_token_ids: a.promptTokenIds,
  };
}

export const chatApi: AgentApi = {
  name: 'chat',
  parse(body) {
    const req = parseChatRequest(body);
    return {
      call: {
        api: 'chat',
        id: `chatcmpl-${randomUUID()}`,
        model: req.model,
        messages: req.messages,
        tools: req.tools,
        prompt: null,
        n: req.n,
        stream: req.stream,
        stop: req.stop,
        sampling: req.sampling,
        reasoning: req.reasoning,
        toolCallIdPrefix: 'tinker-tool-call-',
      },
      body: chatCompletionOf,
      events: (a) => sseEvents(chatCompletionOf(a), req.includeUsage),
    };
  },
  errorBody: (err: ApiError) => err.body(),
};
