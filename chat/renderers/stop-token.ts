// Shared parse rule of the stop-token renderers (llama3, qwen3*): split the response at its stop token.
import type { Message, Tokenizer } from '../types';

export interface StopSplit {
  message: Message;
  ok: boolean;
}

/**
 * 0 stop tokens → the whole text, not ok (ran out of tokens); 1 → the text before it, ok.
 * More than one is a sampler bug; the Python renderer raises, we answer with the text before the first, not ok.
 */
export function splitAtStopToken(tokens: readonly number[], tokenizer: Tokenizer, stop: number): StopSplit {
  const first = tokens.indexOf(stop);
  if (first < 0) return { message: { role: 'assistant', content: tokenizer.decode(tokens) }, ok: false };
  const count = tokens.filter((t) => t === stop).length;
  return { message: { role: 'assistant', content: tokenizer.decode(tokens.slice(0, first)) }, ok: count === 1 };
}

/** The single id of a special token, or an error naming the tokenizer that lacks it. */
export function requireTokenId(tokenizer: Tokenizer, text: string, renderer: string): number {
  const id = tokenizer.tokenId(text);
  if (id === undefined) throw new Error(`renderer ${renderer} needs ${text} as one token; tokenizer ${tokenizer.name} has none`);
  return id;
}
