// Tools in a conversation, as cookbook users declare them: the renderer's
// create_conversation_prefix_with_tools(tools, system_prompt) in place of the conversation's own system message.
import { ensureText } from './content';
import type { FunctionSpec, Message, Renderer, ToolSpec } from './types';

export type { ToolSpec } from './types';

/** The function of an OpenAI tool definition ({"type": "function", "function": {...}}); a bare function as is. */
export function functionSpecOf(tool: ToolSpec): FunctionSpec {
  const fn = tool.type === 'function' && typeof tool.function === 'object' && tool.function !== null ? tool.function : tool;
  return fn as FunctionSpec;
}

/**
 * The messages with the tools declared as the renderer's family declares them, the leading system message's text
 * becoming the system prompt; unchanged when there are no tools. A renderer without a tool format throws.
 */
export function withToolDeclarations(renderer: Renderer, messages: readonly Message[], tools: readonly ToolSpec[]): Message[] {
  if (tools.length === 0) return [...messages];
  if (!renderer.createConversationPrefixWithTools) throw new Error(`renderer ${renderer.name} has no tool format`);
  const first = messages[0];
  const hasSystem = first?.role === 'system';
  const prefix = renderer.createConversationPrefixWithTools(tools.map(functionSpecOf), hasSystem ? ensureText(first.content) : '');
  return [...prefix, ...(hasSystem ? messages.slice(1) : messages)];
}
