// An image part as the chunk a vision model is sent (cookbook base.py `image_to_chunk`): the image's bytes, their
// format and the number of token positions the model's image processor gives it. The count is what the
// cookbook asks the Hugging Face processor for (`get_number_of_image_patches // merge_size**2`), computed here
// from the image's stored width and height (no decoding, no EXIF rotation: PIL's `size`).
//
// One difference from the cookbook, on purpose: the cookbook re-encodes every image as JPEG with PIL before
// sending it; we send PNG and JPEG bytes as they came (Tinker takes both), which loses nothing and cannot match
// PIL's encoder byte for byte anyway. Other formats are refused with the formats we take.
import { imageSize } from 'image-size';
import type { ImageChunk } from './types';

export class ImageInputError extends Error {
  override readonly name = 'ImageInputError';
}

/** An HF image processor as far as rendering needs it: the token positions an image of this size takes. */
export interface VisionProcessor {
  readonly name: string;
  imageTokens(width: number, height: number): number;
  /** The image (a data: URI) as the chunk the model is sent. */
  imageChunk(image: string): ImageChunk;
}

/** Python's round() on a float: halves go to the even neighbour. */
function pyRound(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

export interface QwenVlProcessorConfig {
  patchSize: number;
  mergeSize: number;
  /** preprocessor_config.json size.shortest_edge (a pixel count, despite its name). */
  minPixels: number;
  /** preprocessor_config.json size.longest_edge (a pixel count). */
  maxPixels: number;
}

/**
 * transformers' Qwen2-VL `smart_resize`: both sides a multiple of patch*merge, the pixel count inside
 * [minPixels, maxPixels], the aspect ratio kept as well as that allows. Float operations in Python's order.
 */
export function smartResize(height: number, width: number, factor: number, minPixels: number, maxPixels: number): [number, number] {
  if (Math.max(height, width) / Math.min(height, width) > 200) {
    throw new ImageInputError(`image ${width}x${height}: its aspect ratio must be at most 200 (the Qwen-VL image processor refuses it)`);
  }
  let h = pyRound(height / factor) * factor;
  let w = pyRound(width / factor) * factor;
  if (h * w > maxPixels) {
    const beta = Math.sqrt((height * width) / maxPixels);
    h = Math.max(factor, Math.floor(height / beta / factor) * factor);
    w = Math.max(factor, Math.floor(width / beta / factor) * factor);
  } else if (h * w < minPixels) {
    const beta = Math.sqrt(minPixels / (height * width));
    h = Math.ceil((height * beta) / factor) * factor;
    w = Math.ceil((width * beta) / factor) * factor;
  }
  return [h, w];
}

export function qwenVlImageProcessor(name: string, c: QwenVlProcessorConfig): VisionProcessor {
  const p: VisionProcessor = {
    name,
    imageTokens(width, height) {
      const [h, w] = smartResize(height, width, c.patchSize * c.mergeSize, c.minPixels, c.maxPixels);
      const patches = (h / c.patchSize) * (w / c.patchSize);
      return Math.floor(patches / (c.mergeSize * c.mergeSize));
    },
    imageChunk: (image) => imageToChunk(image, p),
  };
  return p;
}

/**
 * Qwen3-VL's and Qwen3.5's preprocessor_config.json (Qwen2VLImageProcessorFast): patch 16, merge 2,
 * size {shortest_edge: 65536, longest_edge: 16777216}. Qwen3.6 and Qwen3.8 keep Qwen3.5's preprocessor.
 */
export const QWEN3_VL_IMAGE_PROCESSOR = qwenVlImageProcessor('Qwen3-VL', { patchSize: 16, mergeSize: 2, minPixels: 65536, maxPixels: 16777216 });

export interface DecodedImage {
  bytes: Buffer;
  format: 'png' | 'jpeg';
  width: number;
  height: number;
}

const DATA_URI = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s;

/** The bytes of a `data:` URI (base64 or percent-encoded), with a one-line error naming what is wrong. */
export function dataUriBytes(uri: string): Buffer {
  const m = DATA_URI.exec(uri);
  if (!m) {
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1];
    if (scheme && /^https?$/i.test(scheme)) {
      throw new ImageInputError(`image URL ${uri.slice(0, 80)}: remote images are not fetched (the proxy works offline); send the image inline as a data: URL (data:image/png;base64,...)`);
    }
    throw new ImageInputError(`image ${JSON.stringify(uri.slice(0, 40))}: expected a data: URL (data:image/png;base64,...)`);
  }
  const isBase64 = m[2]!.split(';').includes('base64');
  if (!isBase64) return Buffer.from(decodeURIComponent(m[3]!), 'latin1');
  const b64 = m[3]!.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(b64)) throw new ImageInputError('image data: URL: its base64 payload is not valid base64');
  return Buffer.from(b64, 'base64');
}

/** Reads an image given as a data: URI: its bytes, format and stored size. */
export function decodeImage(image: string): DecodedImage {
  const bytes = dataUriBytes(image);
  if (bytes.length === 0) throw new ImageInputError('image data: URL holds no bytes');
  let info: { width?: number; height?: number; type?: string };
  try {
    info = imageSize(bytes);
  } catch {
    throw new ImageInputError('image data: URL does not hold a readable image (send PNG or JPEG)');
  }
  const type = info.type === 'jpg' ? 'jpeg' : info.type;
  if (type !== 'png' && type !== 'jpeg') throw new ImageInputError(`image format ${type ?? 'unknown'} is not served; send PNG or JPEG`);
  if (!info.width || !info.height) throw new ImageInputError('image has no width or height');
  return { bytes, format: type, width: info.width, height: info.height };
}

/** cookbook `image_to_chunk`: the image with the token count its processor gives it. */
export function imageToChunk(image: string, processor: Pick<VisionProcessor, 'imageTokens'>): ImageChunk {
  const img = decodeImage(image);
  return { type: 'image', data: img.bytes.toString('base64'), format: img.format, expected_tokens: processor.imageTokens(img.width, img.height) };
}

/**
 * The image processor of a vision model (cookbook `get_image_processor(model_name)`), by model name; undefined for
 * a model whose images we cannot count (text models, and vision families whose processor is not written here).
 */
export function imageProcessorFor(modelName: string): VisionProcessor | undefined {
  const name = modelName.split(':')[0]!;
  // Qwen3.6 and Qwen3.8 keep Qwen3.5's preprocessor (cookbook model_info), and Qwen3.5 Qwen3-VL's.
  if (/^Qwen\/Qwen3(-VL-|\.[568]-)/.test(name)) return QWEN3_VL_IMAGE_PROCESSOR;
  return undefined;
}
