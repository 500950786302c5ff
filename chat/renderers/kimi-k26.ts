// Kimi K2.6 (cookbook renderers/kimi_k26.py): the K2.5 format. kimi_k26 and kimi_k26_disable_thinking are the
// K2.5 renderers under K2.6 names (same tokens); kimi_k26_preserve_thinking keeps the reasoning of every earlier
// assistant message instead of emptying its think block (HF `preserve_thinking=true`).
import type { Tokenizer } from '../types';
import { KimiK25DisableThinkingRenderer, KimiK25Renderer } from './kimi-k25';
import type { RendererOptions, RendererTable } from './registry-types';

export const kimiK26Renderers: RendererTable = {
  kimi_k26: (t: Tokenizer, o: RendererOptions) => new KimiK25Renderer(t, 'kimi_k26', true, o),
  kimi_k26_disable_thinking: (t: Tokenizer, o: RendererOptions) => new KimiK25DisableThinkingRenderer(t, 'kimi_k26_disable_thinking', true, o),
  kimi_k26_preserve_thinking: (t: Tokenizer, o: RendererOptions) => new KimiK25Renderer(t, 'kimi_k26_preserve_thinking', false, o),
};
