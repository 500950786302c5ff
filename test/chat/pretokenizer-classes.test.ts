// The pre-tokenizers' character classes are the Rust tokenizers': every Unicode whitespace and
// format character (General_Category Zs, Zl, Zp, Cf, and the controls \t \n \v \f \r \x85 \x1c-\x1f) in contexts
// where the split regexes' \s, \S and letter classes decide the pieces (beside spaces, letters, digits, newlines,
// apostrophes, each other), and contractions whose letter only case folding makes ASCII (ſ), encoded by every tokenizer of the repository as the models' own Python stacks encode
// them: HF `tokenizers` (Oniguruma) from the same tokenizer.json, tiktoken (fancy-regex) for Kimi's tiktoken.model,
// tml-renderers 0.2.1 for Inkling's o200k_base_chat; for tokenizer.json files also the pieces the pre-tokenizer
// cuts (pre_tokenize_str), which shows a class difference the merges happen to hide. The references are made here, at test time, by
// pretokenizer_reference.py in the cookbook venv (test/helpers/cookbook-venv.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { allModels } from '../../chat/models';
import { findTokenizerFiles, tokenizerJsonPath } from '../../chat/tokenizer-files';
import { getTokenizer } from '../../chat/tokenizers';
import { BpeTokenizer } from '../../chat/bpe';
import { KIMI_PATTERN } from '../../chat/kimi-tokenizer';
import type { Tokenizer } from '../../chat/types';
import { cookbookVenv } from '../helpers/cookbook-venv';
import { LIBTORCH_LIBS, libtorchCpuDir } from '../helpers/libtorch-cpu';
import { loadFamilyTestTokenizers, TEST_TOKENIZER_DIR } from './families2/tokenizers';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');

/** Every code point of the categories (Node's Unicode tables), and the whitespace controls. */
function characters(): string[] {
  const cats = /^[\p{gc=Zs}\p{gc=Zl}\p{gc=Zp}\p{gc=Cf}]$/u;
  const out = ['\t', '\n', '\v', '\f', '\r', '\x85', '\x1c', '\x1d', '\x1e', '\x1f'];
  for (let cp = 0; cp < 0x110000; cp++) {
    if (cp >= 0xd800 && cp < 0xe000) continue;
    const c = String.fromCodePoint(cp);
    if (cats.test(c) && !out.includes(c)) out.push(c);
  }
  return out;
}

/** Contexts for one character c: alone, beside one and two spaces, letters, digits, newlines, punctuation, itself. */
const CONTEXTS: ((c: string) => string)[] = [
  (c) => c,
  (c) => ' ' + c,
  (c) => '  ' + c,
  (c) => c + ' ',
  (c) => c + '  ',
  (c) => ' ' + c + ' ',
  (c) => ' ' + c + 'x',
  (c) => '  ' + c + 'x',
  (c) => c + 'x',
  (c) => 'x' + c,
  (c) => 'x' + c + 'y',
  (c) => 'x ' + c + ' y',
  (c) => 'x' + c + ' y',
  (c) => c + c,
  (c) => ' ' + c + c + ' x',
  (c) => c + '\n',
  (c) => '\n' + c + ' x',
  (c) => c + '\r\n\n',
  (c) => '1' + c + '2',
  (c) => ' ' + c + '12',
  (c) => '!' + c + '?',
  (c) => ' ' + c + '!!',
  (c) => "it's" + c,
  (c) => c + "'s x",
  (c) => 'Ab' + c + 'Cd',
  (c) => '日本' + c + '語',
];

/** The contraction letters under Unicode case folding (ſ folds to s): "(?i:'s|...)" as Oniguruma and fancy-regex read it. */
const CONTRACTIONS = ["it'ſ", "IT'ſ x", "don'T", "we'Re", "x'ſ'ſ", "'ſ", " 'ſ", "Mary'ſ book", "ǅ'ſ", "I'ſt"];

/** [start, end] of each piece in code points, as pre_tokenize_str gives offsets. */
function codePointSpans(pieces: string[]): [number, number][] {
  let at = 0;
  return pieces.map((p) => {
    const start = at;
    at += Array.from(p).length;
    return [start, at];
  });
}

interface Spec {
  kind: 'hf' | 'tiktoken' | 'tml';
  [field: string]: unknown;
}

/** Every tokenizer the repository loads: one model per tokenizer file (and patch) found, Kimi's, Inkling's. */
async function tokenizers(python: string): Promise<{ key: string; ours: Tokenizer; spec: Spec }[]> {
  const out: { key: string; ours: Tokenizer; spec: Spec }[] = [];
  const seen = new Set<string>();
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'pretok-'));
  for (const m of allModels()) {
    if (m.tokenizer.kind !== 'hf') continue;
    const files = findTokenizerFiles(m.name);
    if (!files || seen.has(files.origin)) continue;
    seen.add(files.origin);
    out.push({ key: `${m.name} (${files.origin})`, ours: getTokenizer(m.name), spec: { kind: 'hf', file: tokenizerJsonPath(files, scratch) } });
  }
  // Kimi K2*'s loader on the test tokenizer.model (Qwen3's ranks, Kimi's pattern; test/helpers/test-tokenizers.ts).
  const kimi = loadFamilyTestTokenizers().kimi;
  out.push({ key: 'Kimi K2 loader (test tiktoken.model)', ours: kimi, spec: { kind: 'tiktoken', dir: path.join(TEST_TOKENIZER_DIR, 'kimi'), pattern: KIMI_PATTERN } });
  const libs = await libtorchCpuDir(python);
  out.push({ key: 'thinkingmachines/Inkling (o200k_base_chat)', ours: getTokenizer('thinkingmachines/Inkling'), spec: { kind: 'tml', name: 'thinkingmachines/Inkling', libs: LIBTORCH_LIBS.map((l) => path.join(libs, l)) } });
  return out;
}

test('every tokenizer encodes whitespace and format characters as the Rust tokenizers do', { timeout: 20 * 60_000 }, async (t) => {
  const venv = await cookbookVenv();
  const toks = await tokenizers(venv.python);
  const chars = characters();
  const texts = [...chars.flatMap((c) => CONTEXTS.map((f) => f(c))), chars.join(''), chars.join(' '), chars.join('x '), ...CONTRACTIONS];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pretok-ref-'));
  const input = path.join(dir, 'in.json');
  const output = path.join(dir, 'out.json');
  writeFileSync(input, JSON.stringify({ tokenizers: Object.fromEntries(toks.map((x) => [x.key, x.spec])), texts }));
  await run(venv.python, [path.join(__dirname, 'pretokenizer_reference.py'), input, output], { cwd: ROOT, maxBuffer: 64 << 20, timeout: 15 * 60_000 });
  const want = JSON.parse(readFileSync(output, 'utf8')) as Record<string, { ids: number[][]; pieces: [number, number][][] | null }>;

  const report: string[] = [];
  let compared = 0;
  for (const { key, ours } of toks) {
    const diffs: string[] = [];
    const ref = want[key]!;
    texts.forEach((text, i) => {
      const got = ours.encode(text);
      compared++;
      if (JSON.stringify(got) !== JSON.stringify(ref.ids[i])) diffs.push(`${JSON.stringify(text).slice(0, 60)}: ours ${JSON.stringify(got).slice(0, 80)}, reference ${JSON.stringify(ref.ids[i]).slice(0, 80)}`);
      // The pieces too (pre_tokenize_str does not normalize: only texts NFC leaves as they are).
      if (ref.pieces && ours instanceof BpeTokenizer && text.normalize('NFC') === text) {
        compared++;
        const spans = codePointSpans(ours.preTokenize(text));
        if (JSON.stringify(spans) !== JSON.stringify(ref.pieces[i])) diffs.push(`${JSON.stringify(text).slice(0, 60)}: our pieces ${JSON.stringify(spans)}, reference ${JSON.stringify(ref.pieces[i])}`);
      }
    });
    t.diagnostic(`${key}: ${texts.length} texts${ref.pieces ? ' (ids and pieces)' : ' (ids)'}, ${diffs.length} differences`);
    if (diffs.length) report.push(`${key}: ${diffs.length} differences over ${texts.length} texts, first ones:\n    ${diffs.slice(0, 6).join('\n    ')}`);
  }
  t.diagnostic(`${chars.length} characters x ${CONTEXTS.length} contexts + 3 joined + ${CONTRACTIONS.length} contractions = ${texts.length} texts, ${toks.length} tokenizers, ${compared} comparisons`);
  assert.equal(report.length, 0, report.join('\n\n'));
});
