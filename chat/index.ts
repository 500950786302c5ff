export * from './types';
export { getTokenizer, tokenizerFamily, UnknownModelError } from './tokenizers';
export { getRenderer, isRendererName, RENDERER_NAMES, RENDERERS } from './renderers';
export type { RendererName, RendererOptions, RendererTable, ImageProcessor } from './renderers';
export { allModels, getModelInfo, recommendedRenderer, recommendedRenderers, rendererWarning } from './models';
export type { ModelInfo, TokenizerSource } from './models';
export { toInts, modelInputLength, fromInts, isTextOnly } from './model-input';
export { textContent, thinkingContent, ensureText } from './content';
