// The tool-call markup the tool-capable renderers share (qwen3 family, and role_colon's extension of it):
// <tool_call>{"name": ..., "args": {...}}</tool_call> in an assistant turn, JSON written as the Dec-2025
// renderer writes it. Parsing reads every block of a response; "arguments" is accepted for "args".
import { pyJsonDumps } from '../py-json';
import type { ToolCall } from '../types';

const BLOCK = /<tool_call>([\s\S]*?)<\/tool_call>/g;

/** The JSON inside a <tool_call> block, as the Dec-2025 renderer writes it. */
export function toolCallPayload(call: ToolCall): string {
  let args: unknown;
  try {
    args = JSON.parse(call.function.arguments);
  } catch {
    throw new Error(`tool call ${call.function.name}: arguments are not valid JSON`);
  }
  return pyJsonDumps({ name: call.function.name, args });
}

/** Reads one <tool_call> body: {"name": str, "args": object, "id"?: str}; "arguments" is accepted too. */
export function parseToolCall(body: string): ToolCall | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const obj = parsed as Record<string, unknown>;
  const args = obj.args !== undefined ? obj.args : obj.arguments;
  if (typeof obj.name !== 'string' || typeof args !== 'object' || args === null || Array.isArray(args)) return null;
  const call: ToolCall = { type: 'function', function: { name: obj.name, arguments: pyJsonDumps(args) } };
  if (typeof obj.id === 'string') call.id = obj.id;
  return call;
}

/**
 * Every <tool_call> block of a response's text, in order. `ok` is false when a block does not parse; then no
 * calls are returned and the text stays as the model wrote it (nothing is dropped).
 */
export function parseToolCallBlocks(text: string): { calls: ToolCall[]; ok: boolean } {
  const calls: ToolCall[] = [];
  for (const m of text.matchAll(BLOCK)) {
    const call = parseToolCall(m[1]!);
    if (!call) return { calls: [], ok: false };
    calls.push(call);
  }
  return { calls, ok: true };
}

/** The text with its <tool_call> blocks taken out (what an API shows beside the parsed calls). */
export function withoutToolCallBlocks(text: string): string {
  return text.replace(BLOCK, '').trim();
}
