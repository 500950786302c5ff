// The OpenAI chat-completion object the chat API answers with (and replay.ts rebuilds from a span), and the
// per-token logprob entries every API uses.
import type { Tokenizer } from '../chat';

export interface LogprobEntry {
  token: string;
  bytes: number[];
  logprob: number;
  top_logprobs: { token: string; bytes: number[]; logprob: number }[];
}

export interface OpenAiToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface Choice {
  index: number;
  message: { role: 'assistant'; content: string; tool_calls?: OpenAiToolCall[] };
  finish_reason: 'stop' | 'length' | 'tool_calls';
  logprobs: { content: LogprobEntry[]; refusal: null };
  token_ids: number[];
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Choice[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; completion_tokens_details?: { reasoning_tokens: number } };
  prompt_token_ids: number[];
}

export function logprobEntries(tokenizer: Tokenizer, tokens: readonly number[], logprobs: readonly number[]): LogprobEntry[] {
  return tokens.map((id, i) => {
    const raw = tokenizer.tokenBytes(id);
    const bytes = Array.from(raw);
    const token = Buffer.from(raw).toString('utf8');
    const logprob = logprobs[i] ?? 0;
    return { token, bytes, logprob, top_logprobs: [{ token, bytes, logprob }] };
  });
}
