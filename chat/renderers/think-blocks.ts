// <think>...</think> and <tool_call>...</tool_call> blocks in a response (cookbook parse_think_blocks,
// parse_content_blocks): text between blocks kept byte for byte, so parse then render is the identity.
import type { ContentPart, ToolCall, UnparsedToolCall } from '../types';
import { parseToolCallJson } from './tool-call-json';

/** Thinking and text parts in order; null when the text has no `<think>`. Empty blocks and texts are dropped. */
export function parseThinkBlocks(content: string): ContentPart[] | null {
  if (!content.includes('<think>')) return null;
  const parts: ContentPart[] = [];
  let pos = 0;
  for (const m of content.matchAll(/<think>([\s\S]*?)<\/think>/g)) {
    if (m.index! > pos) parts.push({ type: 'text', text: content.slice(pos, m.index) });
    if (m[1]) parts.push({ type: 'thinking', thinking: m[1] });
    pos = m.index! + m[0].length;
  }
  if (pos < content.length) parts.push({ type: 'text', text: content.slice(pos) });
  return parts;
}

/**
 * Thinking/text parts and the tool calls (parsed or not) in order; null when the text has neither `<think>` nor
 * `<tool_call>`. Tool-call bodies are JSON {"name", "arguments"} (parseToolCallJson).
 */
export function parseContentBlocks(content: string): { parts: ContentPart[]; toolCalls: (ToolCall | UnparsedToolCall)[] } | null {
  if (!content.includes('<think>') && !content.includes('<tool_call>')) return null;
  const parts: ContentPart[] = [];
  const toolCalls: (ToolCall | UnparsedToolCall)[] = [];
  let pos = 0;
  for (const m of content.matchAll(/<think>([\s\S]*?)<\/think>|<tool_call>([\s\S]*?)<\/tool_call>/g)) {
    if (m.index! > pos) parts.push({ type: 'text', text: content.slice(pos, m.index) });
    if (m[1] !== undefined) {
      if (m[1]) parts.push({ type: 'thinking', thinking: m[1] });
    } else toolCalls.push(parseToolCallJson(m[2]!, m[0]));
    pos = m.index! + m[0].length;
  }
  if (pos < content.length) parts.push({ type: 'text', text: content.slice(pos) });
  return { parts, toolCalls };
}

export function isToolCall(c: ToolCall | UnparsedToolCall): c is ToolCall {
  return (c as ToolCall).function !== undefined;
}
