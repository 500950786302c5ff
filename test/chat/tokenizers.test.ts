// The BPE tokenizers against ids from the Hugging Face `tokenizers` package (fixtures/make_corpus.py).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { getTokenizer } from '../../chat';

const corpus = JSON.parse(readFileSync(path.join(__dirname, 'fixtures', 'corpus-ids.json'), 'utf8')) as Record<string, unknown> & {
  texts: string[];
};

for (const [family, model] of [['qwen3', 'Qwen/Qwen3-8B'], ['llama3', 'meta-llama/Llama-3.1-8B-Instruct']] as const) {
  test(`${family}: encode matches HF tokenizers on ${corpus.texts.length} texts; decode matches HF decode`, () => {
    const tok = getTokenizer(model);
    const want = corpus[family] as number[][];
    const decoded = corpus[`${family}_decoded`] as string[];
    corpus.texts.forEach((text, i) => {
      assert.deepEqual(tok.encode(text), want[i], `text ${i}: ${JSON.stringify(text)}`);
      const raw = Buffer.concat(want[i]!.map((id) => Buffer.from(tok.tokenBytes(id)))).toString('utf8');
      assert.equal(raw, decoded[i], `raw decode ${i}`);
      assert.equal(tok.decode(want[i]!), decoded[i], `decode ${i}`);
    });
  });
}

test('tokenizer chosen by model name: the model’s own eos; a checkpoint suffix ignored', () => {
  assert.equal(getTokenizer('Qwen/Qwen3-4B-Instruct-2507').eosToken, '<|im_end|>');
  assert.equal(getTokenizer('Qwen/Qwen3-8B:peft:1').eosToken, '<|im_end|>');
  assert.equal(getTokenizer('Qwen/Qwen3-8B-Base').eosToken, '<|endoftext|>');
  assert.equal(getTokenizer('meta-llama/Llama-3.2-1B').bosToken, '<|begin_of_text|>');
  const bytes = getTokenizer('local/tiny-hello');
  assert.deepEqual(bytes.encode('<|bos|>hé<|eos|>'), [256, 104, 0xc3, 0xa9, 257]);
  assert.equal(bytes.decode([256, 104, 0xc3, 0xa9, 257]), '<|bos|>hé<|eos|>');
  assert.deepEqual([bytes.tokenId('<|eos|>'), bytes.tokenId('a'), bytes.tokenId('ab')], [257, 97, undefined]);
  assert.throws(() => bytes.decode([258]), /not in the vocabulary/);
});
