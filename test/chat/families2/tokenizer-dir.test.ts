// loadTokenizerFromDir picks the loader by the files a model directory holds (tiktoken.model → Kimi's tiktoken
// tokenizer, tokenizer.json → BPE) and names what is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadTokenizerFromDir, TokenizerFilesError } from '../../../chat/tokenizer-dir';
import { TiktokenTokenizer } from '../../../chat/tiktoken-bpe';
import { BpeTokenizer } from '../../../chat/bpe';
import { buildTestTokenizers } from '../../helpers/test-tokenizers';
import { TEST_TOKENIZER_DIR, loadFamilyTestTokenizers } from './tokenizers';

const dirs = buildTestTokenizers(TEST_TOKENIZER_DIR);
const fams = loadFamilyTestTokenizers();
const sample = 'Hello <|im_end|> 你好 <think>x</think> [gMASK]<sop> 😀';

test('a directory with tiktoken.model loads as a Kimi tokenizer (specials after the ranks)', () => {
  const tok = loadTokenizerFromDir(dirs.kimi, 'moonshotai/Kimi-K2.5');
  assert.ok(tok instanceof TiktokenTokenizer);
  assert.equal(tok.name, 'moonshotai/Kimi-K2.5');
  assert.deepEqual([tok.bosToken, tok.eosToken], ['[BOS]', '[EOS]']);
  assert.deepEqual(tok.encode(sample), fams.kimi.encode(sample));
  const n = (tok as TiktokenTokenizer).vocabSize;
  assert.equal(tok.tokenId('<|im_end|>'), n + 2);
  assert.equal(tok.tokenId(`<|reserved_token_${n + 5}|>`), n + 5, 'unnamed ids get reserved names');
});

test('a directory with tokenizer.json loads as BPE with bos/eos from tokenizer_config.json', () => {
  const tok = loadTokenizerFromDir(dirs.glm5, 'zai-org/GLM-5.3');
  assert.ok(tok instanceof BpeTokenizer);
  assert.deepEqual([tok.bosToken, tok.eosToken], [null, '<|endoftext|>']);
  assert.deepEqual(tok.encode(sample), fams.glm5.encode(sample));
  assert.equal(tok.encode('[gMASK]<sop>').length, 2);
});

test('a directory without tokenizer files, or tiktoken.model without its config, is a one-line error', () => {
  const empty = mkdtempSync(path.join(tmpdir(), 'tokdir-'));
  assert.throws(() => loadTokenizerFromDir(empty, 'zai-org/GLM-5.3'), (e: Error) => e instanceof TokenizerFilesError && /no tokenizer\.json or tiktoken\.model for zai-org\/GLM-5\.3/.test(e.message));
  const half = mkdtempSync(path.join(tmpdir(), 'tokdir-'));
  copyFileSync(path.join(dirs.kimi, 'tiktoken.model'), path.join(half, 'tiktoken.model'));
  assert.throws(() => loadTokenizerFromDir(half, 'moonshotai/Kimi-K2.5'), /tiktoken\.model without tokenizer_config\.json/);
});
