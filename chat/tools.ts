// Tool declarations for the qwen3 family, as the Qwen3 chat template writes them (HF template, and the
// cookbook's later create_conversation_prefix_with_tools): a system message listing each tool as JSON inside
// <tools></tools>, merged with the conversation's own leading system message.
import { pyJsonDumps } from './py-json';
import type { Message, ToolSpec } from './types';

export type { ToolSpec } from './types';

const HEADER =
  '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
  'You are provided with function signatures within <tools></tools> XML tags:\n<tools>';
const FOOTER =
  '\n</tools>\n\nFor each function call, return a json object with function name and arguments within ' +
  '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';

/** The messages with the tool declarations in the first (system) message; unchanged when there are no tools. */
export function withToolDeclarations(messages: readonly Message[], tools: readonly ToolSpec[]): Message[] {
  if (tools.length === 0) return [...messages];
  const list = tools.map((t) => '\n' + pyJsonDumps(t, false)).join('');
  const first = messages[0];
  const hasSystem = first?.role === 'system';
  const content = (hasSystem ? first.content + '\n\n' : '') + HEADER + list + FOOTER;
  return [{ role: 'system', content }, ...(hasSystem ? messages.slice(1) : messages)];
}
