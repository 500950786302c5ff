// ModelInput helpers (tinker.ModelInput): lengths, flattening to token ids, building from tokens.
import type { EncodedTextChunk, ModelInput, ModelInputChunk } from './types';

export function textChunk(tokens: number[]): EncodedTextChunk {
  return { type: 'encoded_text', tokens };
}

/** Positions a chunk takes in the sequence: its tokens, or an image's expected tokens. */
export function chunkLength(c: ModelInputChunk): number {
  return c.type === 'encoded_text' ? c.tokens.length : c.expected_tokens;
}

export function modelInputLength(m: ModelInput): number {
  return m.chunks.reduce((n, c) => n + chunkLength(c), 0);
}

export function isTextOnly(m: ModelInput): boolean {
  return m.chunks.every((c) => c.type === 'encoded_text');
}

/** All token ids (tinker `to_ints`); an image chunk has none, so a prompt with images is refused here. */
export function toInts(m: ModelInput): number[] {
  const out: number[] = [];
  for (const c of m.chunks) {
    if (c.type !== 'encoded_text') throw new Error('this prompt holds an image chunk, which has no token ids; send it as chunks');
    for (const t of c.tokens) out.push(t);
  }
  return out;
}

export function fromInts(tokens: number[]): ModelInput {
  return { chunks: [textChunk(tokens)] };
}
