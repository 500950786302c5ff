// Qwen3.5's XML tool calls (cookbook renderers/qwen3_5.py): <tool_call>\n<function=NAME>\n<parameter=P>\nVALUE
// \n</parameter>...\n</function>\n</tool_call>. Written from a call's JSON arguments (scalars as the template's
// `|string` or `|tojson` writes them) and read back into a call whose arguments are JSON again.
import { PY_SPACE, pyJsonDumps, pyJsonLoads, pyStr, pyStrip, type PyJson } from '../../python';
import type { ToolCall, UnparsedToolCall } from '../types';

// Python's `\s` (str patterns).
const WS = `[${PY_SPACE}]`;
const FUNCTION_BLOCK = new RegExp(`^${WS}*<tool_call>${WS}*<function=([^>\\n]+)>${WS}*([\\s\\S]*?)${WS}*</function>${WS}*</tool_call>${WS}*$`);
const PARAM_BLOCK = new RegExp(`<parameter=([^>\\n]+)>${WS}*([\\s\\S]*?)${WS}*</parameter>`, 'g');
const WS_ONLY = new RegExp(`^${WS}*$`);

/** Qwen3.5 (`|string` for scalars, `|tojson` for mappings and lists) or Qwen3.6/3.8 (`|tojson` for all but strings). */
export type ArgumentStyle = 'qwen3_5' | 'qwen3_8';

export function formatArgument(v: PyJson, style: ArgumentStyle): string {
  if (style === 'qwen3_8') return typeof v === 'string' ? v : pyJsonDumps(v);
  if (Array.isArray(v) || v instanceof Map) return pyJsonDumps(v);
  return pyStr(v);
}

export function formatToolCallXml(call: ToolCall, style: ArgumentStyle): string {
  let args: PyJson = new Map();
  if (call.function.arguments) {
    try {
      args = pyJsonLoads(call.function.arguments);
    } catch {
      throw new Error(`tool call ${call.function.name}: arguments are not valid JSON`);
    }
  }
  if (!(args instanceof Map)) throw new Error(`tool call ${call.function.name}: arguments must be a JSON object`);
  const lines = [`<tool_call>\n<function=${call.function.name}>`];
  for (const [name, value] of args) lines.push(`<parameter=${name}>\n${formatArgument(value, style)}\n</parameter>`);
  lines.push('</function>\n</tool_call>');
  return lines.join('\n');
}

/** A raw <tool_call> block in Qwen3.5's XML as a call, or why it is not one. */
export function parseToolCallXml(raw: string): ToolCall | UnparsedToolCall {
  const m = FUNCTION_BLOCK.exec(raw);
  if (!m) return { raw_text: raw, error: 'Malformed Qwen3.5 tool call XML' };
  const name = pyStrip(m[1]!);
  const body = m[2]!;
  if (!name) return { raw_text: raw, error: 'Missing function name' };
  const args = new Map<string, PyJson>();
  let pos = 0;
  for (const p of body.matchAll(PARAM_BLOCK)) {
    if (!WS_ONLY.test(body.slice(pos, p.index))) {
      return { raw_text: raw, error: 'Unexpected non-parameter content inside <function> block' };
    }
    const paramName = pyStrip(p[1]!);
    const valueText = p[2]!.replace(/^\n+|\n+$/g, '');
    if (!paramName) return { raw_text: raw, error: 'Empty parameter name' };
    let value: PyJson;
    try {
      value = pyJsonLoads(valueText);
    } catch {
      value = valueText;
    }
    args.set(paramName, value);
    pos = p.index! + p[0].length;
  }
  if (!WS_ONLY.test(body.slice(pos))) return { raw_text: raw, error: 'Unexpected trailing content inside <function> block' };
  return { type: 'function', function: { name, arguments: pyJsonDumps(args) } };
}
