export { getRenderer, isRendererName, RENDERER_NAMES, RENDERERS, UNAVAILABLE_RENDERERS } from './registry';
export type { RendererName } from './registry';
export type { ImageProcessor, RendererFactory, RendererOptions, RendererTable } from './registry-types';
export { BaseRenderer } from './base';
