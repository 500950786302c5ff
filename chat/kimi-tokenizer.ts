// Kimi K2 / K2.5 / K2.6 tokenizer from a model directory (a local copy or a Hugging Face cache snapshot):
// `tiktoken.model` holds the ranks, `tokenizer_config.json` names the special tokens. As Kimi's own
// TikTokenTokenizer (tokenization_kimi.py) does: 256 + 2 special ids follow the last rank, named by
// `added_tokens_decoder` or `<|reserved_token_N|>`; the split pattern is Kimi's; encode() allows every special.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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

interface KimiConfig {
  added_tokens_decoder?: Record<string, { content: string }>;
  bos_token?: string | { content: string };
  eos_token?: string | { content: string };
}

const tokenText = (t: string | { content: string } | undefined, dflt: string): string =>
  t === undefined ? dflt : typeof t === 'string' ? t : t.content;

/** Load the tokenizer of a Kimi K2* model directory (throws naming the file that is missing or bad). */
export function loadKimiTokenizer(dir: string, name: string): TiktokenTokenizer {
  const ranks = TiktokenTokenizer.readRanks(join(dir, 'tiktoken.model'));
  const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')) as KimiConfig;
  const named = config.added_tokens_decoder ?? {};
  const n = ranks.length;
  const specials = new Map<string, number>();
  for (let id = n; id < n + RESERVED; id++) specials.set(named[String(id)]?.content ?? `<|reserved_token_${id}|>`, id);
  return new TiktokenTokenizer(ranks, {
    name,
    pattern: KIMI_PATTERN,
    specialTokens: specials,
    bosToken: tokenText(config.bos_token, '[BOS]'),
    eosToken: tokenText(config.eos_token, '[EOS]'),
  });
}
