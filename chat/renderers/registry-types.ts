// What a family file exports: a table from renderer name to factory.
import type { ImageChunk, Renderer, Tokenizer } from '../types';

/** Turns one image (a data URI) into the chunk a vision model is sent, with the tokens it takes. */
export interface ImageProcessor {
  imageChunk(image: string): ImageChunk;
}

export interface RendererOptions {
  /** Vision renderers need one to render image parts; without it an image is refused. */
  imageProcessor?: ImageProcessor;
  /** The model the renderer serves (for errors and logs). */
  modelName?: string;
}

export type RendererFactory = (tokenizer: Tokenizer, opts: RendererOptions) => Renderer;

/** Renderer name → factory, one table per family file. */
export type RendererTable = Readonly<Record<string, RendererFactory>>;
