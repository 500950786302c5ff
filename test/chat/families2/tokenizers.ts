// The test tokenizers of the Kimi, GLM-5.3 and Nemotron 3 families (test/helpers/test-tokenizers.ts), built once
// under .data/test-tokenizers and loaded with the loaders users get (chat/kimi-tokenizer.ts, chat/bpe.ts).
import path from 'node:path';
import { BpeTokenizer } from '../../../chat/bpe';
import { loadKimiTokenizer } from '../../../chat/kimi-tokenizer';
import type { Tokenizer } from '../../../chat/types';
import { buildTestTokenizers } from '../../helpers/test-tokenizers';

export const TEST_TOKENIZER_DIR = path.resolve(__dirname, '..', '..', '..', '.data', 'test-tokenizers');

let cached: { kimi: Tokenizer; glm5: Tokenizer; nemotron3: Tokenizer } | null = null;

export function loadFamilyTestTokenizers(): { kimi: Tokenizer; glm5: Tokenizer; nemotron3: Tokenizer } {
  if (cached) return cached;
  const dirs = buildTestTokenizers(TEST_TOKENIZER_DIR);
  cached = {
    kimi: loadKimiTokenizer(dirs.kimi, 'test/kimi'),
    glm5: BpeTokenizer.fromFile(path.join(dirs.glm5, 'tokenizer.json'), { name: 'test/glm5', bosToken: null, eosToken: '<|endoftext|>' }),
    nemotron3: BpeTokenizer.fromFile(path.join(dirs.nemotron3, 'tokenizer.json'), { name: 'test/nemotron3', bosToken: null, eosToken: '<|im_end|>' }),
  };
  return cached;
}
