// role_colon: "System: ...\n\nUser: ...\n\nAssistant:" for base models; stop string "\n\nUser:".
// Tools are this project's extension (the cookbook's role_colon has none), in the qwen3 renderers' markup kept
// short for small contexts: the leading system turn declares them, one JSON object per function after a line
// saying how to call one; an assistant turn's tool calls follow its text as
// <tool_call>{"name": ..., "args": {...}}</tool_call>; tool results are "Tool: ..." turns, as any role renders.
// Conversations without tools render exactly as before.
import { pyJsonDumps } from '../py-json';
import type { Message, ParsedResponse, Renderer, Tokenizer, ToolSpec } from '../types';
import { parseToolCallBlocks, toolCallPayload } from './tool-call';

/** Python str.capitalize(): first character upper-cased, the rest lower-cased. */
export function pyCapitalize(s: string): string {
  return s.length === 0 ? s : s[0].toUpperCase() + s.slice(1).toLowerCase();
}

const STOP = '\n\nUser:';
export const ROLE_COLON_TOOLS_HEADER = 'Tools (call one as <tool_call>{"name": ..., "args": {...}}</tool_call>):';

function turnText(m: Message): string {
  if (!m.tool_calls?.length) return m.content;
  const calls = m.tool_calls.map((c) => `<tool_call>${toolCallPayload(c)}</tool_call>`);
  return [m.content, ...calls].filter((s) => s !== '').join('\n');
}

export class RoleColonRenderer implements Renderer {
  readonly name = 'role_colon';
  constructor(readonly tokenizer: Tokenizer) {}

  buildGenerationPrompt(messages: readonly Message[]): number[] {
    const t = this.tokenizer;
    const out: number[] = t.bosToken ? t.encode(t.bosToken) : [];
    for (const m of messages) {
      out.push(...t.encode(pyCapitalize(m.role) + ':'));
      out.push(...t.encode(' ' + turnText(m) + '\n\n'));
    }
    out.push(...t.encode('Assistant:'));
    return out;
  }

  stopSequences(): string[] {
    return [STOP];
  }

  withTools(messages: readonly Message[], tools: readonly ToolSpec[]): Message[] {
    if (tools.length === 0) return [...messages];
    const fn = (t: ToolSpec) => (typeof t.function === 'object' && t.function !== null ? t.function : t);
    const list = tools.map((t) => pyJsonDumps(fn(t), false)).join('\n');
    const first = messages[0];
    const hasSystem = first?.role === 'system';
    const content = (hasSystem ? first.content + '\n\n' : '') + ROLE_COLON_TOOLS_HEADER + '\n' + list;
    return [{ role: 'system', content }, ...(hasSystem ? messages.slice(1) : messages)];
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const text = this.tokenizer.decode(tokens);
    const pieces = text.split(STOP);
    // Python raises on more than one stop string; a server answers with the first piece, not ok.
    const message: Message = { role: 'assistant', content: pieces[0].trim() };
    const { calls, ok } = parseToolCallBlocks(message.content);
    if (calls.length) message.tool_calls = calls;
    return { message, ok: pieces.length === 2 && ok };
  }
}
