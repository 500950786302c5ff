// How many sampled tokens are reasoning (OpenAI's usage reasoning_tokens), found from the tokens themselves: the
// shortest prefix of the sample whose text holds the parsed reasoning up to its last non-space character. So the count covers the
// opening marker the model wrote (gpt-oss's analysis channel header) and the reasoning, not the closing marker;
// a prefilled <think> is in the prompt, not counted. Pure.
import type { Tokenizer } from '../chat';

function occurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** `thinking`: the parsed thinking parts, in order (several when the model wrote several blocks). */
export function reasoningTokenCount(tokenizer: Tokenizer, tokens: readonly number[], thinking: readonly string[]): number {
  // The parse may strip whitespace around a block and joins blocks without what was between them: the last block's
  // last characters are still written as one piece, and appear as often in the blocks as in the text up to their end.
  const last = [...thinking].reverse().find((t) => t.trim() !== '');
  if (last === undefined) return 0;
  const needle = last.trimEnd().slice(-32);
  const times = thinking.reduce((n, t) => n + occurrences(t, needle), 0);
  const holds = (k: number) => occurrences(tokenizer.decode(tokens.slice(0, k)), needle) >= times;
  if (!holds(tokens.length)) return 0;
  let lo = 1;
  let hi = tokens.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (holds(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
