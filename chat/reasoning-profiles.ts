// What each cookbook renderer renders about reasoning (pure data, from the cookbook's get_renderer docs and the
// family files): whether its generation prompt lets the model think, and the reasoning effort its prompt states.
// The effort is fixed by the renderer name (gpt-oss's system prompt line, DeepSeek V4.1's "Reasoning Effort: 75",
// GLM-5.3's "Reasoning Effort: Max", Qwen3.8's effort sentence, Nemotron's "{reasoning effort: low}"), so a request
// can only ask for what the run's renderer already renders: the proxy refuses any other (proxy/apis/reasoning.ts).

export interface ReasoningProfile {
  /** The family: renderers of one family differ only in their reasoning setting (used to suggest another name). */
  family: string;
  /** The generation prompt lets the model reason (an open think block, gpt-oss's analysis channel). */
  thinks: boolean;
  /** The effort the prompt states, in the family's own word (lower case); null when it states none. */
  effort: string | null;
  /** Effort words a request may use for this effort: the family's word and the API synonym (OpenAI has "xhigh", not "max"). */
  accepts: readonly string[];
  /** What the family calls this setting when it is not an effort word (tml_v0's numeric effort). */
  note?: string;
}

const off = (family: string): ReasoningProfile => ({ family, thinks: false, effort: null, accepts: [] });
const on = (family: string, note?: string): ReasoningProfile => ({ family, thinks: true, effort: null, accepts: [], ...(note ? { note } : {}) });
const at = (family: string, effort: string, ...synonyms: string[]): ReasoningProfile => ({ family, thinks: true, effort, accepts: [effort, ...synonyms] });

/** Every cookbook 0.6.1 renderer name (including ones this repo may not render yet). */
export const REASONING_PROFILES: Readonly<Record<string, ReasoningProfile>> = {
  role_colon: off('role_colon'),
  // This project's extension of role_colon (tools); not a cookbook name.
  role_colon_tools: off('role_colon'),
  llama3: off('llama3'),
  qwen3: on('qwen3'),
  qwen3_disable_thinking: off('qwen3'),
  qwen3_instruct: off('qwen3'),
  qwen3_vl: on('qwen3_vl'),
  qwen3_vl_instruct: off('qwen3_vl'),
  qwen3_5: on('qwen3_5'),
  qwen3_5_disable_thinking: off('qwen3_5'),
  qwen3_5_preserve_thinking: on('qwen3_5'),
  qwen3_8_xhigh_reasoning: at('qwen3_8', 'xhigh', 'max'),
  qwen3_8_medium_reasoning: at('qwen3_8', 'medium'),
  qwen3_8_low_reasoning: at('qwen3_8', 'low'),
  qwen3_8_disable_thinking: off('qwen3_8'),
  deepseekv3: off('deepseekv3'),
  deepseekv3_disable_thinking: off('deepseekv3'),
  deepseekv3_thinking: on('deepseekv3'),
  // DeepSeek V4.1 states a budget out of 100: 75 is the template's "high", 50 "low", 100 "max".
  deepseekv4_1: at('deepseekv4_1', 'high'),
  deepseekv4_1_low_reasoning: at('deepseekv4_1', 'low'),
  deepseekv4_1_max_reasoning: at('deepseekv4_1', 'max', 'xhigh'),
  deepseekv4_1_disable_thinking: off('deepseekv4_1'),
  deepseekv4_1_preserve_thinking: at('deepseekv4_1', 'high'),
  // GLM-5.3 cannot turn thinking off.
  glm5_3_max_reasoning: at('glm5_3', 'max', 'xhigh'),
  glm5_3_high_reasoning: at('glm5_3', 'high'),
  glm5_3_low_reasoning: at('glm5_3', 'low'),
  kimi_k2: on('kimi_k2'),
  kimi_k25: on('kimi_k25'),
  kimi_k25_disable_thinking: off('kimi_k25'),
  kimi_k26: on('kimi_k26'),
  kimi_k26_disable_thinking: off('kimi_k26'),
  kimi_k26_preserve_thinking: on('kimi_k26'),
  kimi_k31_pro_max_reasoning: at('kimi_k31_pro', 'max', 'xhigh'),
  kimi_k31_pro_high_reasoning: at('kimi_k31_pro', 'high'),
  kimi_k31_pro_low_reasoning: at('kimi_k31_pro', 'low'),
  kimi_k31_pro_disable_thinking: off('kimi_k31_pro'),
  kimi_k31_pro_no_reasoning_effort: on('kimi_k31_pro'),
  // Nemotron 3's plain variants reason fully (no effort marker); low and medium ("efficient") add a marker.
  nemotron3: on('nemotron3'),
  nemotron3_low_thinking: at('nemotron3', 'low'),
  nemotron3_disable_thinking: off('nemotron3'),
  nemotron3_preserve_thinking: on('nemotron3'),
  nemotron3_ultra: on('nemotron3_ultra'),
  nemotron3_ultra_disable_thinking: off('nemotron3_ultra'),
  nemotron3_ultra_medium_thinking: at('nemotron3_ultra', 'medium'),
  nemotron3_ultra_preserve_thinking: on('nemotron3_ultra'),
  gpt_oss_no_sysprompt: on('gpt_oss'),
  gpt_oss_low_reasoning: at('gpt_oss', 'low'),
  gpt_oss_medium_reasoning: at('gpt_oss', 'medium'),
  gpt_oss_high_reasoning: at('gpt_oss', 'high'),
  tml_v0: on('tml_v0', 'a numeric thinking effort of 0.9'),
};

export function reasoningProfile(renderer: string): ReasoningProfile | null {
  return Object.prototype.hasOwnProperty.call(REASONING_PROFILES, renderer) ? REASONING_PROFILES[renderer]! : null;
}

/** What a renderer renders, in words: "reasoning effort medium", "thinking with no stated effort", "no reasoning". */
export function describeReasoning(p: ReasoningProfile): string {
  if (!p.thinks) return 'no reasoning (thinking off)';
  if (p.effort) return `reasoning effort ${p.effort}`;
  return `thinking with ${p.note ?? 'no stated effort'}`;
}

/** The renderers of `family` whose setting satisfies `fits`, in table order. */
export function familyRenderers(family: string, fits: (p: ReasoningProfile) => boolean): string[] {
  return Object.entries(REASONING_PROFILES)
    .filter(([, p]) => p.family === family && fits(p))
    .map(([name]) => name);
}
