// From sampled sequences to OpenAI chat-completion choices (pure): user stop strings, parsing with the
// policy's renderer, per-token logprob entries, token ids.
import { randomUUID } from 'node:crypto';
import type { Message, Renderer, Tokenizer } from '../chat';
import type { SampledSequence } from './sampler';

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
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
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

/** Cuts a sequence after the first token that completes one of the user's stop strings. */
export function applyUserStops(
  tokenizer: Tokenizer,
  seq: SampledSequence,
  stops: readonly string[],
): { seq: SampledSequence; content: string } | null {
  if (stops.length === 0) return null;
  const parts: Buffer[] = [];
  for (let k = 0; k < seq.tokens.length; k++) {
    parts.push(Buffer.from(tokenizer.tokenBytes(seq.tokens[k])));
    const text = Buffer.concat(parts).toString('utf8');
    let at = -1;
    for (const s of stops) {
      const i = text.indexOf(s);
      if (i >= 0 && (at < 0 || i < at)) at = i;
    }
    if (at >= 0) {
      return {
        seq: { tokens: seq.tokens.slice(0, k + 1), logprobs: seq.logprobs.slice(0, k + 1), stopReason: 'stop' },
        content: text.slice(0, at),
      };
    }
  }
  return null;
}

export function buildChoice(index: number, sampled: SampledSequence, renderer: Renderer, userStops: readonly string[]): Choice {
  const cut = applyUserStops(renderer.tokenizer, sampled, userStops);
  const seq = cut ? cut.seq : sampled;
  let message: Message;
  if (cut) message = { role: 'assistant', content: cut.content };
  else {
    const parsed = renderer.parseResponse(seq.tokens);
    message = parsed.ok ? parsed.message : { role: 'assistant', content: renderer.tokenizer.decode(seq.tokens) };
  }
  const out: Choice['message'] = { role: 'assistant', content: message.content };
  if (message.tool_calls?.length) {
    out.tool_calls = message.tool_calls.map((c) => ({
      id: c.id ?? `tinker-tool-call-${randomUUID()}`,
      type: 'function',
      function: { name: c.function.name, arguments: c.function.arguments },
    }));
  }
  return {
    index,
    message: out,
    finish_reason: out.tool_calls ? 'tool_calls' : seq.stopReason,
    logprobs: { content: logprobEntries(renderer.tokenizer, seq.tokens, seq.logprobs), refusal: null },
    token_ids: seq.tokens,
  };
}

export function buildCompletion(args: {
  id: string;
  model: string;
  created: number;
  promptTokens: number[];
  sequences: SampledSequence[];
  renderer: Renderer;
  userStops: readonly string[];
}): ChatCompletion {
  const choices = args.sequences.map((s, i) => buildChoice(i, s, args.renderer, args.userStops));
  const completionTokens = choices.reduce((n, c) => n + c.token_ids.length, 0);
  return {
    id: args.id,
    object: 'chat.completion',
    created: args.created,
    model: args.model,
    choices,
    usage: { prompt_tokens: args.promptTokens.length, completion_tokens: completionTokens, total_tokens: args.promptTokens.length + completionTokens },
    prompt_token_ids: args.promptTokens,
  };
}
