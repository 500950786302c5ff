// From sampled sequences to the internal answer every API prints (pure): user stop strings, parsing with the
// policy's renderer (or plain decoding for a prompt given without chat template), per-token logprob entries,
// token ids, and tool-call ids derived from what was sampled (a retried attempt that samples the same tokens
// gets the same ids, so the conversation it sends back, and the seed of its next call, are the same too).
import { createHash } from 'node:crypto';
import { textContent, thinkingContent, type ParsedResponse, type Renderer, type Tokenizer } from '../chat';
import { logprobEntries, type LogprobEntry, type OpenAiToolCall } from './completion';
import { reasoningTokenCount } from './reasoning-tokens';
import type { SampledSequence } from './sampler';

export interface AnswerChoice {
  index: number;
  /** The assistant message as the renderer parsed it: its text, tool calls, and reasoning (thinking parts, as vLLM's reasoning_content) apart. */
  message: { role: 'assistant'; content: string; tool_calls?: OpenAiToolCall[]; reasoning_content?: string };
  finishReason: 'stop' | 'length' | 'tool_calls';
  /** The user stop string that ended the sample, if one did. */
  stopSequence: string | null;
  /** Sampled tokens, including the stop token or the tokens of the stop string that ended them. */
  tokenIds: number[];
  logprobs: LogprobEntry[];
  /** How many of tokenIds are the reasoning (reasoning-tokens.ts); absent without reasoning. */
  reasoningTokens?: number;
}

export interface InternalAnswer {
  id: string;
  model: string;
  /** Unix seconds. */
  created: number;
  promptTokenIds: number[];
  /** The renderer that rendered the prompt (set once the call's policy is known). */
  renderer?: string;
  /**
   * A vision prompt's images at their positions in promptTokenIds (which hold placeholder ids there): recorded in
   * the span so training sends the images, not the placeholders.
   */
  promptImages?: { at: number; data: string; format: 'png' | 'jpeg'; expected_tokens: number }[];
  choices: AnswerChoice[];
}

/** Cuts a sequence after the first token that completes one of the user's stop strings. */
export function applyUserStops(
  tokenizer: Tokenizer,
  seq: SampledSequence,
  stops: readonly string[],
): { seq: SampledSequence; content: string; stop: string } | null {
  if (stops.length === 0) return null;
  const parts: Buffer[] = [];
  for (let k = 0; k < seq.tokens.length; k++) {
    parts.push(Buffer.from(tokenizer.tokenBytes(seq.tokens[k])));
    const text = Buffer.concat(parts).toString('utf8');
    let at = -1;
    let stop = '';
    for (const s of stops) {
      const i = text.indexOf(s);
      if (i >= 0 && (at < 0 || i < at)) [at, stop] = [i, s];
    }
    if (at >= 0) {
      return { seq: { tokens: seq.tokens.slice(0, k + 1), logprobs: seq.logprobs.slice(0, k + 1), stopReason: 'stop' }, content: text.slice(0, at), stop };
    }
  }
  return null;
}

/** A tool-call id from the prompt, the sampled tokens and the call's place: the same sample gives the same id. */
function toolCallId(prefix: string, promptDigest: string, tokens: readonly number[], choice: number, call: number): string {
  return prefix + createHash('sha256').update(`${promptDigest}/${tokens.join(',')}/${choice}/${call}`).digest('hex').slice(0, 24);
}

export interface AnswerArgs {
  id: string;
  model: string;
  created: number;
  promptTokens: number[];
  sequences: SampledSequence[];
  renderer: Renderer;
  userStops: readonly string[];
  /** The prompt was given without chat template (Completions): decode the text, drop a final stop token. */
  raw: boolean;
  /** Stop token ids of a raw prompt (the tokenizer's end of text). */
  rawStops?: readonly number[];
  toolCallIdPrefix: string;
}

/** The renderer's parse; a response it refuses (two stop tokens: a sampler bug) counts as malformed. */
function parseOrMalformed(renderer: Renderer, tokens: readonly number[]): ParsedResponse {
  try {
    return renderer.parseResponse(tokens);
  } catch {
    return { message: { role: 'assistant', content: '' }, termination: 'malformed' };
  }
}

function choiceOf(args: AnswerArgs, index: number, sampled: SampledSequence, promptDigest: string): AnswerChoice {
  const { renderer } = args;
  const cut = applyUserStops(renderer.tokenizer, sampled, args.userStops);
  const seq = cut ? cut.seq : sampled;
  let message: AnswerChoice['message'];
  let thinkingParts: string[] = [];
  if (cut) message = { role: 'assistant', content: cut.content };
  else if (args.raw) {
    const last = seq.tokens.at(-1);
    const body = seq.stopReason === 'stop' && last !== undefined && args.rawStops?.includes(last) ? seq.tokens.slice(0, -1) : seq.tokens;
    message = { role: 'assistant', content: renderer.tokenizer.decode(body) };
  } else {
    const parsed = parseOrMalformed(renderer, seq.tokens);
    const m = parsed.message;
    const clean = parsed.termination !== 'malformed';
    // A response cut short is shown as sampled; tool calls that did not parse stay in the text as written.
    const text = clean ? textContent(m) + (m.unparsed_tool_calls ?? []).map((u) => u.raw_text).join('') : renderer.tokenizer.decode(seq.tokens);
    message = { role: 'assistant', content: text };
    const reasoning = clean ? thinkingContent(m) : '';
    if (reasoning && Array.isArray(m.content)) thinkingParts = m.content.flatMap((p) => (p.type === 'thinking' ? [p.thinking] : []));
    if (reasoning) message.reasoning_content = reasoning;
    if (clean && m.tool_calls?.length) {
      message.tool_calls = m.tool_calls.map((c, j) => ({
        id: c.id ?? toolCallId(args.toolCallIdPrefix, promptDigest, seq.tokens, index, j),
        type: 'function',
        function: { name: c.function.name, arguments: c.function.arguments },
      }));
    }
  }
  const reasoningTokens = reasoningTokenCount(renderer.tokenizer, seq.tokens, thinkingParts);
  return {
    index,
    message,
    finishReason: message.tool_calls ? 'tool_calls' : seq.stopReason,
    stopSequence: cut ? cut.stop : null,
    tokenIds: seq.tokens,
    logprobs: logprobEntries(renderer.tokenizer, seq.tokens, seq.logprobs),
    ...(reasoningTokens > 0 ? { reasoningTokens } : {}),
  };
}

export function buildAnswer(args: AnswerArgs): InternalAnswer {
  const promptDigest = createHash('sha256').update(args.promptTokens.join(',')).digest('hex');
  return {
    id: args.id,
    model: args.model,
    created: args.created,
    promptTokenIds: args.promptTokens,
    choices: args.sequences.map((s, i) => choiceOf(args, i, s, promptDigest)),
  };
}

/** Output tokens of all choices together. */
export const outputTokens = (a: InternalAnswer): number => a.choices.reduce((n, c) => n + c.tokenIds.length, 0);

/** Reasoning tokens of all choices together. */
export const reasoningTokens = (a: InternalAnswer): number => a.choices.reduce((n, c) => n + (c.reasoningTokens ?? 0), 0);

export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  completion_tokens_details?: { reasoning_tokens: number };
}

/** OpenAI's usage object (chat and legacy completions); the reasoning token count when the answer reasoned. */
export function openAiUsage(a: InternalAnswer): OpenAiUsage {
  const out = outputTokens(a);
  const usage: OpenAiUsage = { prompt_tokens: a.promptTokenIds.length, completion_tokens: out, total_tokens: a.promptTokenIds.length + out };
  const reasoning = reasoningTokens(a);
  if (reasoning > 0) usage.completion_tokens_details = { reasoning_tokens: reasoning };
  return usage;
}
