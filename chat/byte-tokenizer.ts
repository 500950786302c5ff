// The local trainer's tokenizer (`local/bytes`, trainer/model/tokenizer.ts), restated here so chat/ does not
// load the trainer: ids 0..255 are UTF-8 bytes, 256 = <|bos|>, 257 = <|eos|>; the special strings in text
// become their ids, as HF tokenizers do.
import type { Tokenizer } from './types';

export const BYTE_SPECIALS: ReadonlyArray<readonly [string, number]> = [
  ['<|bos|>', 256],
  ['<|eos|>', 257],
];

const SPECIAL_RE = /<\|bos\|>|<\|eos\|>/g;

function tokenBytes(id: number): Uint8Array {
  if (Number.isInteger(id) && id >= 0 && id < 256) return Uint8Array.of(id);
  const special = BYTE_SPECIALS.find((s) => s[1] === id);
  if (!special) throw new RangeError(`token id ${id} is not in the vocabulary of local/bytes (0..257)`);
  return new Uint8Array(Buffer.from(special[0], 'utf8'));
}

export const byteTokenizer: Tokenizer = {
  name: 'local/bytes',
  bosToken: '<|bos|>',
  eosToken: '<|eos|>',
  encode(text: string): number[] {
    const out: number[] = [];
    let last = 0;
    for (const m of text.matchAll(SPECIAL_RE)) {
      for (const b of Buffer.from(text.slice(last, m.index), 'utf8')) out.push(b);
      out.push(m[0] === '<|bos|>' ? 256 : 257);
      last = m.index! + m[0].length;
    }
    for (const b of Buffer.from(text.slice(last), 'utf8')) out.push(b);
    return out;
  },
  decode(ids: readonly number[]): string {
    return Buffer.concat(ids.map((id) => tokenBytes(id))).toString('utf8');
  },
  tokenBytes,
  tokenId(text: string): number | undefined {
    const special = BYTE_SPECIALS.find((s) => s[0] === text);
    if (special) return special[1];
    const b = Buffer.from(text, 'utf8');
    return b.length === 1 ? b[0] : undefined;
  },
};
