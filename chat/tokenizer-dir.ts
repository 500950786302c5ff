// A tokenizer from a model directory: a local copy of a Hugging Face repo or a snapshot folder of the HF cache
// (…/models--org--name/snapshots/<rev>/). Which loader depends on the files, as in the model repos:
//   tiktoken.model (+ tokenizer_config.json)   Kimi K2 / K2.5 / K2.6 → chat/kimi-tokenizer.ts
//   tokenizer.json (+ tokenizer_config.json)   every other family (GLM-5.3, Nemotron 3, ...) → chat/bpe.ts
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BpeTokenizer } from './bpe';
import { loadKimiTokenizer } from './kimi-tokenizer';
import type { Tokenizer } from './types';

export class TokenizerFilesError extends Error {
  override readonly name = 'TokenizerFilesError';
}

type TokenText = string | { content: string } | null | undefined;
const textOf = (t: TokenText): string | null => (t == null ? null : typeof t === 'string' ? t : t.content);

/** `name` labels the tokenizer (the model name) in errors and logs. */
export function loadTokenizerFromDir(dir: string, name: string): Tokenizer {
  if (existsSync(join(dir, 'tiktoken.model'))) {
    if (!existsSync(join(dir, 'tokenizer_config.json'))) {
      throw new TokenizerFilesError(`${dir}: tiktoken.model without tokenizer_config.json (it names ${name}'s special tokens)`);
    }
    return loadKimiTokenizer(dir, name);
  }
  const file = join(dir, 'tokenizer.json');
  if (!existsSync(file)) throw new TokenizerFilesError(`${dir}: no tokenizer.json or tiktoken.model for ${name}`);
  const configPath = join(dir, 'tokenizer_config.json');
  const config = existsSync(configPath) ? (JSON.parse(readFileSync(configPath, 'utf8')) as { bos_token?: TokenText; eos_token?: TokenText }) : {};
  return BpeTokenizer.fromFile(file, { name, bosToken: textOf(config.bos_token), eosToken: textOf(config.eos_token) });
}
