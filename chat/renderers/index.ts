// getRenderer(name, tokenizer) and the recommended renderer per model (cookbook model_info).
import type { Renderer, Tokenizer } from '../types';
import { Llama3Renderer } from './llama3';
import { Qwen3Renderer } from './qwen3';
import { RoleColonRenderer } from './role-colon';

export const RENDERER_NAMES = ['role_colon', 'llama3', 'qwen3', 'qwen3_instruct', 'qwen3_disable_thinking'] as const;
export type RendererName = (typeof RENDERER_NAMES)[number];

export function isRendererName(name: string): name is RendererName {
  return (RENDERER_NAMES as readonly string[]).includes(name);
}

export function getRenderer(name: string, tokenizer: Tokenizer): Renderer {
  switch (name) {
    case 'role_colon':
      return new RoleColonRenderer(tokenizer);
    case 'llama3':
      return new Llama3Renderer(tokenizer);
    case 'qwen3':
    case 'qwen3_instruct':
    case 'qwen3_disable_thinking':
      return new Qwen3Renderer(tokenizer, name);
    default:
      throw new Error(`unknown renderer ${JSON.stringify(name)} (known: ${RENDERER_NAMES.join(', ')})`);
  }
}

/** The renderer the cookbook recommends for a model; base models and local models use role_colon. */
export function recommendedRenderer(modelName: string): RendererName {
  const name = modelName.split(':')[0];
  if (name.startsWith('local/')) return 'role_colon';
  if (/^meta-llama\/Llama-3\.[0-9]+-[0-9]+B-Instruct$/i.test(name)) return 'llama3';
  if (/^meta-llama\//i.test(name)) return 'role_colon';
  if (/^Qwen\/Qwen3-.*-Base$/i.test(name)) return 'role_colon';
  if (/^Qwen\/Qwen3-.*Instruct/i.test(name)) return 'qwen3_instruct';
  if (/^Qwen\/Qwen3/i.test(name)) return 'qwen3';
  return 'role_colon';
}
