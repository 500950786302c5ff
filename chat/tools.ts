// Tools in a conversation, as cookbook users declare them: the renderer's
// create_conversation_prefix_with_tools(tools, system_prompt) in place of the conversation's own system message.
import { ensureText } from './content';
import type { FunctionSpec, Message, Renderer, ToolSpec } from './types';

export type { ToolSpec } from './types';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const has = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/**
 * The function of an OpenAI tool definition ({"type": "function", "function": {...}}) as tinker-cookbook's OpenAI
 * layer makes it (openai_compat.openai_tools_to_tinker): rebuilt as {name, description, parameters} in that key
 * order, description "" and parameters {} when missing, other fields (`strict`) dropped; the renderers that declare
 * the JSON (qwen3, kimi_k2, ...) then write those keys in that order. A bare function (the cookbook's ToolSpec, as
 * its renderers take it) is kept as it is; null where the cookbook's layer leaves the tool out (another type).
 */
export function functionSpecOf(tool: ToolSpec): FunctionSpec | null {
  if (tool.type === 'function' && isObj(tool.function)) {
    const fn = tool.function;
    if (typeof fn.name !== 'string') throw new Error(`tool ${JSON.stringify(tool).slice(0, 200)}: function.name must be a string`);
    return { name: fn.name, description: has(fn, 'description') ? fn.description : '', parameters: has(fn, 'parameters') ? fn.parameters : {} } as FunctionSpec;
  }
  if (tool.type === 'function') throw new Error(`tool ${JSON.stringify(tool).slice(0, 200)}: a "function" tool needs a "function" object`);
  if (has(tool, 'type')) return null;
  return tool as FunctionSpec;
}

/** Tools as the renderers take them: each through functionSpecOf, those the cookbook's layer leaves out left out. */
export function functionSpecsOf(tools: readonly ToolSpec[]): FunctionSpec[] {
  return tools.map(functionSpecOf).filter((f): f is FunctionSpec => f !== null);
}

/**
 * The messages with the tools declared as the renderer's family declares them (OpenAI definitions converted as the
 * cookbook's OpenAI layer converts them, functionSpecOf), the leading system message's text becoming the system
 * prompt; unchanged when there are no tools. A renderer without a tool format throws.
 */
export function withToolDeclarations(renderer: Renderer, messages: readonly Message[], tools: readonly ToolSpec[]): Message[] {
  if (tools.length === 0) return [...messages];
  if (!renderer.createConversationPrefixWithTools) throw new Error(`renderer ${renderer.name} has no tool format`);
  const first = messages[0];
  const hasSystem = first?.role === 'system';
  const prefix = renderer.createConversationPrefixWithTools(functionSpecsOf(tools), hasSystem ? ensureText(first.content) : '');
  return [...prefix, ...(hasSystem ? messages.slice(1) : messages)];
}
