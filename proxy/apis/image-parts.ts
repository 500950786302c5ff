// Image inputs of every agent API as the chat model's image parts (pure): OpenAI chat `image_url`, Responses
// `input_image`, Anthropic `image` blocks. Images travel inline as data: URLs; the proxy works offline and
// fetches no URL, so a remote image is refused with a 400 saying how to send it. Whether the policy's model can
// see at all is decided when the prompt is rendered (prompt.ts).
import { quote } from '../../common/front-door';
import type { ContentPart, ImagePart } from '../../chat';
import { badRequest } from '../errors';
import { isObj } from './fields';

const REMOTE =
  'remote image URLs are not fetched (the proxy does not reach the network); send the image inline as a data: URL, e.g. "data:image/png;base64,..."';

/** A data: URL checked for its shape (the bytes are read when the prompt is rendered). */
export function imageFromUrl(url: unknown, where: string): ImagePart {
  if (typeof url !== 'string' || url === '') throw badRequest(`${where} must be a non-empty string URL`, where, 'invalid_type');
  if (/^data:/i.test(url)) {
    if (!url.includes(',')) throw badRequest(`${where}: a data: URL needs a "," before its payload`, where, 'invalid_image');
    return { type: 'image', image: url };
  }
  if (/^https?:/i.test(url)) throw badRequest(`${where}: ${REMOTE}`, where, 'remote_image_not_fetched');
  throw badRequest(`${where}: expected a data: URL (data:image/png;base64,...), got ${quote(url.slice(0, 40))}`, where, 'invalid_image');
}

/** OpenAI chat: {"type": "image_url", "image_url": {"url": ..., "detail"?}} (or "image_url": "<url>"). */
export function chatImagePart(part: Record<string, unknown>, where: string): ImagePart {
  const v = part.image_url;
  return imageFromUrl(isObj(v) ? v.url : v, `${where}.image_url${isObj(v) ? '.url' : ''}`);
}

/** Responses: {"type": "input_image", "image_url": ..., "detail"?}; uploaded files (file_id) are not served. */
export function responsesImagePart(part: Record<string, unknown>, where: string): ImagePart {
  if (part.file_id !== undefined && part.file_id !== null) {
    throw badRequest(`${where}.file_id: uploaded files are not served; send the image inline as image_url "data:image/...;base64,..."`, `${where}.file_id`, 'unsupported_content');
  }
  return imageFromUrl(part.image_url, `${where}.image_url`);
}

/** Anthropic: {"type": "image", "source": {"type": "base64", "media_type", "data"}} or source {"type": "url", "url"}. */
export function anthropicImagePart(block: Record<string, unknown>, where: string): ImagePart {
  const src = block.source;
  if (!isObj(src)) throw badRequest(`${where}.source must be an object`, `${where}.source`, 'invalid_type');
  if (src.type === 'base64') {
    if (typeof src.media_type !== 'string' || !/^image\//.test(src.media_type)) {
      throw badRequest(`${where}.source.media_type must be an image type such as "image/png"`, `${where}.source.media_type`, 'invalid_type');
    }
    if (typeof src.data !== 'string' || src.data === '') throw badRequest(`${where}.source.data must be base64 text`, `${where}.source.data`, 'invalid_type');
    return { type: 'image', image: `data:${src.media_type};base64,${src.data}` };
  }
  if (src.type === 'url') return imageFromUrl(src.url, `${where}.source.url`);
  throw badRequest(`${where}.source.type must be "base64" or "url", got ${quote(src.type)}`, `${where}.source.type`, 'invalid_type');
}

/** Content as the chat model keeps it: a string when it is only text, parts when it holds images. */
export function contentOf(parts: readonly ContentPart[]): string | ContentPart[] {
  if (parts.every((p) => p.type === 'text')) return parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
  const out: ContentPart[] = [];
  for (const p of parts) {
    const last = out[out.length - 1];
    if (p.type === 'text' && last?.type === 'text') out[out.length - 1] = { type: 'text', text: last.text + p.text };
    else out.push(p);
  }
  return out;
}

export function hasImages(content: string | readonly ContentPart[]): boolean {
  return typeof content !== 'string' && content.some((p) => p.type === 'image');
}
