import { test } from 'node:test';
import assert from 'node:assert/strict';
import { byteTokenizer, decode, decodeBytes, encode, BOS_ID, EOS_ID, VOCAB_SIZE } from '../../../trainer/model/tokenizer';
import { UserError } from '../../../trainer/engine';

test('encode/decode round-trips text byte-exactly, including multi-byte UTF-8', () => {
  for (const s of ['', 'User: Say you are 42.\n\nAssistant: I am 42.\n\nUser:', 'héllo — 日本 🎉', '\u0000\t\r\n']) {
    const ids = encode(s);
    assert.equal(ids.length, Buffer.byteLength(s, 'utf8'));
    assert.ok(ids.every((t) => t >= 0 && t < 256));
    assert.equal(decode(ids), s);
  }
});

test('special-token strings map to their ids and back', () => {
  const ids = encode('<|bos|>User: hi<|eos|>');
  assert.equal(ids[0], BOS_ID);
  assert.equal(ids[ids.length - 1], EOS_ID);
  assert.equal(decode(ids), '<|bos|>User: hi<|eos|>');
  assert.equal(byteTokenizer.vocabSize, VOCAB_SIZE);
});

test('decoding pieces concatenates to the decoded whole (bytes)', () => {
  const ids = encode('naïve 🎉 text');
  const a = decodeBytes(ids.slice(0, 4));
  const b = decodeBytes(ids.slice(4));
  assert.equal(Buffer.concat([a, b]).toString('utf8'), 'naïve 🎉 text');
});

test('ids outside the vocabulary are a UserError', () => {
  assert.throws(() => decode([65, VOCAB_SIZE]), UserError);
  assert.throws(() => decode([-1]), UserError);
});
