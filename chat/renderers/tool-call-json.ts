// Tool calls as JSON (cookbook _parse_tool_call_json, _tool_call_payload, detect_unterminated_tool_block).
// JSON is read and written as Python's json module does (python/), so the tokens match.
import { pyJsonDumps, pyJsonLoads, PyJsonError, pyStrip, type PyJson } from '../../python';
import type { ToolCall, UnparsedToolCall } from '../types';

/** Error prefix of an unterminated tool block, as the cookbook writes it. */
export const UNTERMINATED_TOOL_BLOCK_ERROR = 'unterminated tool block';
const DETAIL_MAX_CHARS = 16384;

/** A tool-call body {"name": str, "arguments": object, "id"?: str}; anything else is an UnparsedToolCall. */
export function parseToolCallJson(body: string, rawText: string): ToolCall | UnparsedToolCall {
  let v: unknown;
  try {
    v = pyJsonLoads(pyStrip(body));
  } catch (e) {
    return { raw_text: rawText, error: `Invalid JSON: ${e instanceof PyJsonError ? e.message : String(e)}` };
  }
  if (!(v instanceof Map)) return { raw_text: rawText, error: 'Tool call is not a JSON object' };
  const name = v.get('name');
  const args = v.get('arguments');
  const id = v.get('id');
  if (typeof name !== 'string') return { raw_text: rawText, error: "Missing or invalid 'name' field" };
  if (!(args instanceof Map)) return { raw_text: rawText, error: "Missing or invalid 'arguments' field" };
  const call: ToolCall = { type: 'function', function: { name, arguments: pyJsonDumps(args) } };
  if (typeof id === 'string') call.id = id;
  return call;
}

/** `json.dumps({"name": ..., "arguments": json.loads(arguments)})`, the body the qwen family writes. */
export function toolCallPayloadJson(call: ToolCall): string {
  return pyJsonDumps({ name: call.function.name, arguments: parseArguments(call) });
}

/** A call's arguments as Python's json.loads reads them (an error names the call). */
export function parseArguments(call: ToolCall): PyJson {
  try {
    return pyJsonLoads(call.function.arguments);
  } catch {
    throw new Error(`tool call ${call.function.name}: arguments are not valid JSON`);
  }
}

/** A tool block opened and never closed, as an UnparsedToolCall; null when every opening is closed. */
export function detectUnterminatedToolBlock(content: string, open: string, close: string): UnparsedToolCall | null {
  const opens = content.split(open).length - 1;
  if (opens === 0 || opens <= content.split(close).length - 1) return null;
  return {
    raw_text: content.slice(content.lastIndexOf(open)).slice(0, DETAIL_MAX_CHARS),
    error: `${UNTERMINATED_TOOL_BLOCK_ERROR}: '${open}' opened without a matching '${close}'`,
  };
}

/** The text with its <tool_call> blocks taken out (what an API shows beside the parsed calls). */
export function withoutToolCallBlocks(text: string): string {
  return text.replace(/<tool_call>[\s\S]*?<\/tool_call>/g, '').trim();
}
