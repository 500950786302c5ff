// Message content helpers (cookbook base.py: ensure_text, ensure_list, has_thinking, remove_thinking,
// get_text_content, format_content_as_string).
import { RenderError, type Content, type ContentPart, type Message } from './types';

/** The text of text-only content: a string, or a list of exactly one text part. */
export function ensureText(content: Content): string {
  if (typeof content === 'string') return content;
  if (content.length === 1 && content[0]!.type === 'text') return content[0]!.text;
  throw new RenderError(`Expected text content, got multimodal content with ${content.length} parts`);
}

export function ensureList(content: Content): ContentPart[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

/** A thinking part, or an opening <think> in a string (closed or not). */
export function hasThinking(content: Content): boolean {
  return typeof content === 'string' ? content.includes('<think>') : content.some((p) => p.type === 'thinking');
}

export function removeThinking(parts: readonly ContentPart[]): ContentPart[] {
  return parts.filter((p) => p.type !== 'thinking');
}

/** The text parts joined (thinking and images left out); a string as is. */
export function textContent(message: Pick<Message, 'content'>): string {
  const c = message.content;
  return typeof c === 'string' ? c : c.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

/** The thinking parts joined; '' without any. */
export function thinkingContent(message: Pick<Message, 'content'>): string {
  const c = message.content;
  return typeof c === 'string' ? '' : c.map((p) => (p.type === 'thinking' ? p.thinking : '')).join('');
}

/** Every part as text: thinking as <think>...</think>, images as <image>url</image>, joined by `separator`. */
export function formatContentAsString(content: Content, separator = '\n'): string {
  if (typeof content === 'string') return content;
  return content
    .map((p) => (p.type === 'thinking' ? `<think>${p.thinking}</think>` : p.type === 'text' ? p.text : `<image>${p.image}</image>`))
    .join(separator);
}
