// The parse rule of stop-token renderers (cookbook parse_response_for_stop_token): split at the stop token.
import { RenderError, type ParsedResponse, type Tokenizer } from '../types';

/**
 * 0 stop tokens → the whole text, malformed (ran out of tokens); 1 → the text before it, stop_sequence.
 * More than one is a sampler bug, which the cookbook raises on; so do we.
 */
export function parseResponseForStopToken(tokens: readonly number[], tokenizer: Tokenizer, stop: number): ParsedResponse {
  const count = tokens.filter((t) => t === stop).length;
  if (count === 0) return { message: { role: 'assistant', content: tokenizer.decode(tokens) }, termination: 'malformed' };
  if (count === 1) {
    return { message: { role: 'assistant', content: tokenizer.decode(tokens.slice(0, tokens.indexOf(stop))) }, termination: 'stop_sequence' };
  }
  throw new RenderError(
    `When parsing response, expected to split into 1 or 2 pieces using stop tokens, but got ${count}. You probably are using the wrong stop tokens when sampling`,
  );
}

/** The single id of a special token, or an error naming the tokenizer that lacks it. */
export function requireTokenId(tokenizer: Tokenizer, text: string, renderer: string): number {
  const id = tokenizer.tokenId(text);
  if (id === undefined) throw new Error(`renderer ${renderer} needs ${text} as one token; tokenizer ${tokenizer.name} has none`);
  return id;
}
