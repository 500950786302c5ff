// Byte-level tokenizer of the local models: ids 0..255 are the bytes of the UTF-8 text, then a few
// special tokens. Byte tokens make decoding exact (renderers split decoded text on "\n\nUser:") and
// need no vocabulary file.
import { UserError } from '../engine';

export const TOKENIZER_ID = 'local/bytes';
export const BOS_TOKEN = '<|bos|>';
export const EOS_TOKEN = '<|eos|>';
export const BOS_ID = 256;
export const EOS_ID = 257;
export const VOCAB_SIZE = 258;

const SPECIALS: ReadonlyArray<[string, number]> = [
  [BOS_TOKEN, BOS_ID],
  [EOS_TOKEN, EOS_ID],
];

export interface ByteTokenizer {
  readonly id: string;
  readonly vocabSize: number;
  readonly bosTokenId: number;
  readonly eosTokenId: number;
  readonly bosToken: string;
  readonly eosToken: string;
  /** UTF-8 bytes; the literal special-token strings become their ids (as HF tokenizers do). */
  encode(text: string): number[];
  /** Byte-exact inverse of encode (special ids become their strings). */
  decode(ids: ArrayLike<number>): string;
}

/** UTF-8 bytes of `text`, special-token strings mapped to their ids. */
export function encode(text: string): number[] {
  const out: number[] = [];
  let start = 0;
  while (start <= text.length) {
    // Find the earliest special token at or after `start`.
    let at = -1;
    let hit: [string, number] | undefined;
    for (const s of SPECIALS) {
      const i = text.indexOf(s[0], start);
      if (i >= 0 && (at < 0 || i < at)) {
        at = i;
        hit = s;
      }
    }
    const end = at < 0 ? text.length : at;
    for (const b of Buffer.from(text.slice(start, end), 'utf8')) out.push(b);
    if (!hit) break;
    out.push(hit[1]);
    start = end + hit[0].length;
  }
  return out;
}

/** Raw bytes of ids (special ids as their UTF-8 strings). */
export function decodeBytes(ids: ArrayLike<number>): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < ids.length; i++) {
    const t = ids[i];
    if (!Number.isInteger(t) || t < 0 || t >= VOCAB_SIZE) {
      throw new UserError(`token id ${t} is outside the vocabulary (0..${VOCAB_SIZE - 1})`);
    }
    if (t < 256) bytes.push(t);
    else for (const b of Buffer.from(t === BOS_ID ? BOS_TOKEN : EOS_TOKEN, 'utf8')) bytes.push(b);
  }
  return Buffer.from(bytes);
}

/** Text of ids; invalid UTF-8 (e.g. a cut multi-byte char) becomes U+FFFD, as HF decode does. */
export function decode(ids: ArrayLike<number>): string {
  return decodeBytes(ids).toString('utf8');
}

export const byteTokenizer: ByteTokenizer = {
  id: TOKENIZER_ID,
  vocabSize: VOCAB_SIZE,
  bosTokenId: BOS_ID,
  eosTokenId: EOS_ID,
  bosToken: BOS_TOKEN,
  eosToken: EOS_TOKEN,
  encode,
  decode,
};
