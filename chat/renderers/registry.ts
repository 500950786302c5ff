// Every renderer by name: the family tables joined. Adding a family = one file exporting
// `export const <family>Renderers: RendererTable` + one import line and one entry below.
import type { Renderer, Tokenizer } from '../types';
import { deepseekV3Renderers } from './deepseek-v3';
import { deepseekV4_1Renderers } from './deepseek-v4-1';
import { glm53Renderers } from './glm5-3';
import { gptOssRenderers } from './gpt-oss';
import { kimiK2Renderers } from './kimi-k2';
import { kimiK25Renderers } from './kimi-k25';
import { kimiK26Renderers } from './kimi-k26';
import { llama3Renderers } from './llama3';
import { nemotron3Renderers } from './nemotron3';
import { qwen3Renderers } from './qwen3';
import { qwen3_5Renderers } from './qwen3-5';
import { qwen3_8Renderers } from './qwen3-8';
import { qwen3VlRenderers } from './qwen3-vl';
import type { RendererOptions, RendererTable } from './registry-types';
import { roleColonRenderers } from './role-colon';
import { tmlV0Renderers } from './tml-v0';

const TABLES: readonly RendererTable[] = [
  roleColonRenderers,
  llama3Renderers,
  qwen3Renderers,
  gptOssRenderers,
  deepseekV3Renderers,
  deepseekV4_1Renderers,
  glm53Renderers,
  kimiK2Renderers,
  kimiK25Renderers,
  kimiK26Renderers,
  nemotron3Renderers,
  qwen3VlRenderers,
  qwen3_5Renderers,
  qwen3_8Renderers,
  tmlV0Renderers,
];

function join(tables: readonly RendererTable[]): RendererTable {
  const out: Record<string, RendererTable[string]> = {};
  for (const t of tables) {
    for (const [name, factory] of Object.entries(t)) {
      if (out[name]) throw new Error(`renderer ${name} is registered twice`);
      out[name] = factory;
    }
  }
  return out;
}

export const RENDERERS: RendererTable = join(TABLES);

/** Every renderer name, in table order. */
export const RENDERER_NAMES: readonly string[] = Object.keys(RENDERERS);

/** Renderer names as strings (the registry is open: families add names). */
export type RendererName = string;

export function isRendererName(name: string): boolean {
  return Object.prototype.hasOwnProperty.call(RENDERERS, name);
}

/** The renderer `name` over `tokenizer` (cookbook get_renderer); an unknown name is an error listing the known. */
const K31 = 'tinker-cookbook renders Kimi K3.1 Pro through tml-renderers >= 0.4.1 (its KimiK31Pro renderer and Kimi K3 tokenizer), which PyPI does not have (0.2.1 has neither); a PyPI release of it would unblock this renderer';

/** Cookbook 0.6.1 renderer names this project cannot render, each with why and what would unblock it. */
export const UNAVAILABLE_RENDERERS: Readonly<Record<string, string>> = Object.fromEntries(
  ['kimi_k31_pro_max_reasoning', 'kimi_k31_pro_high_reasoning', 'kimi_k31_pro_low_reasoning', 'kimi_k31_pro_disable_thinking', 'kimi_k31_pro_no_reasoning_effort'].map((n) => [n, K31]),
);

export function getRenderer(name: string, tokenizer: Tokenizer, opts: RendererOptions = {}): Renderer {
  const factory = isRendererName(name) ? RENDERERS[name] : undefined;
  const why = UNAVAILABLE_RENDERERS[name];
  if (!factory && why) throw new Error(`renderer ${JSON.stringify(name)} is not available here: ${why}`);
  if (!factory) throw new Error(`unknown renderer ${JSON.stringify(name)} (known: ${RENDERER_NAMES.join(', ')})`);
  return factory(tokenizer, opts);
}
