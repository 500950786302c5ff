// Tokenizer by model name, loaded once per process: `local/*` → the local trainer's byte tokenizer; otherwise the
// model's tokenizer files wherever tokenizer-files.ts finds them offline (npm package, AGL_TOKENIZER_DIR, HF
// cache), read as a byte-level BPE tokenizer.json with the bos/eos of its tokenizer_config.json, or as Kimi's
// tiktoken.model (chat/kimi-tokenizer.ts).
import path from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { BpeTokenizer, type TokenizerJson } from './bpe';
import { byteTokenizer } from './byte-tokenizer';
import { loadKimiTokenizer } from './kimi-tokenizer';
import { O200kChatTokenizer } from './o200k-chat-tokenizer';
import { baseModelName, tokenizerSourceOf, UnknownModelError } from './models/model-info';
import { findTokenizerFiles, missingTokenizerMessage, type TokenizerConfig, type TokenizerFiles } from './tokenizer-files';
import type { Tokenizer } from './types';

export { UnknownModelError } from './models/model-info';

/** A model whose tokenizer is not on this machine (or cannot be read here); the message says what to do. */
export class TokenizerUnavailableError extends UnknownModelError {
  override readonly name = 'UnknownModelError';
}

const cache = new Map<string, Tokenizer>();

/** Why a tml_renderers tokenizer other than o200k_base_chat is not here, and what would bring it. */
export const TML_UNAVAILABLE: Readonly<Record<'h200k_base_chat' | 'kimi_k3', string>> = {
  h200k_base_chat:
    'its tokenizer (h200k_base_chat) ships only in tml-renderers >= 0.4.1, the version tinker-cookbook pins, which PyPI does not have (PyPI has 0.2.1, with o200k_base_chat only); a PyPI release of it would unblock this model',
  kimi_k3:
    'its tokenizer (Kimi K3) and renderer ship only in tml-renderers >= 0.4.1, the version tinker-cookbook pins, which PyPI does not have (PyPI has 0.2.1, without them); a PyPI release of it would unblock this model',
};

const tokenText = (t: TokenizerConfig['bos_token']): string | null => (t === null || t === undefined ? null : typeof t === 'string' ? t : t.content);

/** A tokenizer from files found or given: tokenizer.json, or Kimi's tiktoken.model (+ tokenizer_config.json). */
export function tokenizerFromFiles(files: TokenizerFiles, name: string): Tokenizer {
  const json = path.join(files.dir, 'tokenizer.json');
  if (!existsSync(json) && existsSync(path.join(files.dir, 'tiktoken.model'))) {
    if (!existsSync(path.join(files.dir, 'tokenizer_config.json'))) {
      throw new TokenizerUnavailableError(`model ${name}: ${files.dir} has tiktoken.model but no tokenizer_config.json (it names the special tokens)`);
    }
    return loadKimiTokenizer(files.dir, name);
  }
  if (!existsSync(json)) throw new TokenizerUnavailableError(`model ${name}: ${files.dir} has no tokenizer.json or tiktoken.model`);
  const raw = JSON.parse(readFileSync(json, 'utf8')) as TokenizerJson;
  return new BpeTokenizer(files.patch ? files.patch(raw) : raw, {
    name,
    bosToken: tokenText(files.config.bos_token),
    eosToken: tokenText(files.config.eos_token),
  });
}

/** Which tokenizer a model name uses (kept for callers that only need to know it is at hand). */
export function tokenizerFamily(modelName: string): string {
  const name = baseModelName(modelName);
  if (name.startsWith('local/')) return 'bytes';
  const source = tokenizerSourceOf(name);
  if (source.kind === 'tml') {
    if (source.family === 'o200k_base_chat') return 'o200k_base_chat';
    throw new TokenizerUnavailableError(`model ${JSON.stringify(modelName)}: ${TML_UNAVAILABLE[source.family]}`);
  }
  const files = findTokenizerFiles(name);
  if (!files) throw new TokenizerUnavailableError(missingTokenizerMessage(modelName));
  return files.origin + ':' + files.dir;
}

export function getTokenizer(modelName: string): Tokenizer {
  const name = baseModelName(modelName);
  if (name.startsWith('local/')) return byteTokenizer;
  const source = tokenizerSourceOf(name);
  if (source.kind === 'tml') {
    if (source.family === 'o200k_base_chat') return new O200kChatTokenizer(name);
    throw new TokenizerUnavailableError(`model ${JSON.stringify(modelName)}: ${TML_UNAVAILABLE[source.family]}`);
  }
  const files = findTokenizerFiles(name);
  if (!files) throw new TokenizerUnavailableError(missingTokenizerMessage(modelName));
  // The origin too: one npm file serves several releases when patched (DeepSeek V3.1, V4).
  const key = files.origin + files.dir + JSON.stringify(files.config);
  let tok = cache.get(key);
  if (!tok) {
    tok = tokenizerFromFiles(files, name);
    cache.set(key, tok);
  }
  return tok;
}
