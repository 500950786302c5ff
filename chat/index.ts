export * from './types';
export { getTokenizer, tokenizerFamily, UnknownModelError } from './tokenizers';
export { getRenderer, recommendedRenderer, isRendererName, RENDERER_NAMES } from './renderers';
export type { RendererName } from './renderers';
