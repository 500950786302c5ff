// Kimi K2 / K2.5 / K2.6 tokenizer from a model directory (a local copy or a Hugging Face cache snapshot):
// `tiktoken.model` holds the ranks, `tokenizer_config.json` names the special tokens. As Kimi's own
// TikTokenTokenizer (tokenization_kimi.py) does: 256 + 2 special ids follow the last rank, named by
// `added_tokens_decoder` or `<|reserved_token_N|>`; the split pattern is Kimi's; encode() allows every special.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isPySpace } from '../python';
import { TiktokenTokenizer } from './tiktoken-bpe';

/** Kimi's pre-tokenizer pattern (Python/fancy-regex syntax, as its tokenizer declares it). */
export const KIMI_PATTERN = [
  '[\\p{Han}]+',
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
  '\\p{N}{1,3}',
  ' ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*',
  '\\s*[\\r\\n]+',
  '\\s+(?!\\S)',
  '\\s+',
].join('|');

const RESERVED = 256 + 2;
// Kimi's encode cuts long texts before the regex sees them (tiktoken's limits): into 400,000-character pieces, and
// those where a run of whitespace or of non-whitespace passes 25,000 characters.
const MAX_ENCODE_CHARS = 400_000;
const MAX_RUN = 25_000;

/** Kimi's `_split_whitespaces_or_nonwhitespaces`, over code points as Python indexes strings. */
function splitRuns(cps: string[], max: number): string[] {
  const out: string[] = [];
  let len = 0;
  let isSpace = cps.length > 0 && isPySpace(cps[0]!);
  let start = 0;
  for (let i = 0; i < cps.length; i++) {
    const now = isPySpace(cps[i]!);
    if (isSpace !== now) {
      len = 1;
      isSpace = now;
    } else if (++len > max) {
      out.push(cps.slice(start, i).join(''));
      start = i;
      len = 1;
    }
  }
  out.push(cps.slice(start).join(''));
  return out;
}

/** Kimi's TikTokenTokenizer: tiktoken with every special allowed, long texts cut as Kimi cuts them. */
export class KimiTokenizer extends TiktokenTokenizer {
  override encode(text: string): number[] {
    if (text.length <= MAX_RUN) return super.encode(text);
    const cps = Array.from(text);
    const out: number[] = [];
    for (let i = 0; i < cps.length; i += MAX_ENCODE_CHARS) {
      for (const piece of splitRuns(cps.slice(i, i + MAX_ENCODE_CHARS), MAX_RUN)) for (const id of super.encode(piece)) out.push(id);
    }
    return out;
  }
}

interface KimiConfig {
  added_tokens_decoder?: Record<string, { content: string }>;
  bos_token?: string | { content: string };
  eos_token?: string | { content: string };
}

const tokenText = (t: string | { content: string } | undefined, dflt: string): string =>
  t === undefined ? dflt : typeof t === 'string' ? t : t.content;

/** Load the tokenizer of a Kimi K2* model directory (throws naming the file that is missing or bad). */
export function loadKimiTokenizer(dir: string, name: string): KimiTokenizer {
  const ranks = TiktokenTokenizer.readRanks(join(dir, 'tiktoken.model'));
  const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')) as KimiConfig;
  const named = config.added_tokens_decoder ?? {};
  const n = ranks.length;
  const specials = new Map<string, number>();
  for (let id = n; id < n + RESERVED; id++) specials.set(named[String(id)]?.content ?? `<|reserved_token_${id}|>`, id);
  return new KimiTokenizer(ranks, {
    name,
    pattern: KIMI_PATTERN,
    specialTokens: specials,
    bosToken: tokenText(config.bos_token, '[BOS]'),
    eosToken: tokenText(config.eos_token, '[EOS]'),
  });
}
