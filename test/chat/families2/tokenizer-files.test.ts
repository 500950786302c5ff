// Kimi's tiktoken tokenizer and the GLM/Nemotron tokenizer.json found by model name through AGL_TOKENIZER_DIR
// (<dir>/<org>/<Model>/), as users give them: the loader follows the files, and a directory with tiktoken.model but
// no tokenizer_config.json is a one-line error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { getTokenizer } from '../../../chat/tokenizers';
import { TiktokenTokenizer } from '../../../chat/tiktoken-bpe';
import { BpeTokenizer } from '../../../chat/bpe';
import { buildTestTokenizers } from '../../helpers/test-tokenizers';
import { TEST_TOKENIZER_DIR, loadFamilyTestTokenizers } from './tokenizers';

const dirs = buildTestTokenizers(TEST_TOKENIZER_DIR);
const fams = loadFamilyTestTokenizers();
const sample = 'Hello <|im_end|> 你好 <think>x</think> [gMASK]<sop> 😀';
const root = mkdtempSync(path.join(tmpdir(), 'tokdir-'));
for (const [model, dir] of [['moonshotai/Kimi-K2.5', dirs.kimi], ['zai-org/GLM-5.3', dirs.glm5]] as const) {
  mkdirSync(path.join(root, model), { recursive: true });
  cpSync(dir, path.join(root, model), { recursive: true });
}
mkdirSync(path.join(root, 'moonshotai', 'Kimi-K2-Thinking'), { recursive: true });
copyFileSync(path.join(dirs.kimi, 'tiktoken.model'), path.join(root, 'moonshotai', 'Kimi-K2-Thinking', 'tiktoken.model'));
process.env.AGL_TOKENIZER_DIR = root;

test('a model directory with tiktoken.model loads as a Kimi tokenizer (specials after the ranks)', () => {
  const tok = getTokenizer('moonshotai/Kimi-K2.5');
  assert.ok(tok instanceof TiktokenTokenizer);
  assert.deepEqual([tok.bosToken, tok.eosToken], ['[BOS]', '[EOS]']);
  assert.deepEqual(tok.encode(sample), fams.kimi.encode(sample));
  const n = (tok as TiktokenTokenizer).vocabSize;
  assert.equal(tok.tokenId('<|im_end|>'), n + 2);
  assert.equal(tok.tokenId(`<|reserved_token_${n + 5}|>`), n + 5, 'unnamed ids get reserved names');
});

test('a model directory with tokenizer.json loads as BPE with the eos of tokenizer_config.json', () => {
  const tok = getTokenizer('zai-org/GLM-5.3');
  assert.ok(tok instanceof BpeTokenizer);
  assert.equal(tok.eosToken, '<|endoftext|>');
  assert.deepEqual(tok.encode(sample), fams.glm5.encode(sample));
  assert.equal(tok.encode('[gMASK]<sop>').length, 2);
});

test('tiktoken.model without tokenizer_config.json is a one-line error naming the model and the missing file', () => {
  assert.throws(() => getTokenizer('moonshotai/Kimi-K2-Thinking'), (e: Error) => /Kimi-K2-Thinking/.test(e.message) && /no tokenizer_config\.json/.test(e.message) && !e.message.includes('\n'));
});
