// role_colon (cookbook renderers/role_colon.py): "User: ...\n\nAssistant: ..." for base models; stop string
// "\n\nUser:", whose "User:" is the stop overlap added after a last assistant message in training.
// role_colon is the cookbook's exactly: no tool format (a tools list is refused, as the cookbook raises), an assistant
// turn's tool_calls are not rendered (the cookbook renders the content alone), and a <tool_call> the model writes
// stays text. role_colon_tools is this project's extension, named apart so a run opts into it: tools declared in
// the system turn, an assistant turn's tool calls after its text as <tool_call>{"name", "arguments"}</tool_call>,
// parsed back into tool_calls. Conversations without tools render and parse the same under both names.
import { ensureText } from '../content';
import { pyJsonDumps } from '../../python';
import type { FunctionSpec, Message, ParsedResponse, RenderContext, RenderedMessage, ToolCall, UnparsedToolCall } from '../types';
import { BaseRenderer } from './base';
import type { RendererTable } from './registry-types';
import { isToolCall } from './think-blocks';
import { parseToolCallJson, toolCallPayloadJson } from './tool-call-json';

/** Python str.capitalize(): first character upper-cased, the rest lower-cased. */
export function pyCapitalize(s: string): string {
  return s.length === 0 ? s : s[0]!.toUpperCase() + s.slice(1).toLowerCase();
}

const STOP = '\n\nUser:';
const CONTENT_PREFIX = ' ';
const CONTENT_SUFFIX = '\n\n';
export const ROLE_COLON_TOOLS_HEADER = 'Tools (call one as <tool_call>{"name": ..., "arguments": {...}}</tool_call>):';
const BLOCK = /<tool_call>([\s\S]*?)<\/tool_call>/g;

function turnTextWithCalls(m: Message): string {
  const text = ensureText(m.content);
  if (!m.tool_calls?.length) return text;
  const calls = m.tool_calls.map((c) => `<tool_call>${toolCallPayloadJson(c)}</tool_call>`);
  return [text, ...calls].filter((s) => s !== '').join('\n');
}

export class RoleColonRenderer extends BaseRenderer {
  readonly name: string = 'role_colon';

  override get hasExtensionProperty(): boolean {
    return true;
  }

  protected override bosTokens(): number[] {
    const bos = this.tokenizer.bosToken;
    return bos ? this.tokenizer.encode(bos) : [];
  }

  renderMessage(message: Message, _ctx: RenderContext): RenderedMessage {
    return {
      header: this.encodeChunk(pyCapitalize(message.role) + ':'),
      output: [this.encodeChunk(CONTENT_PREFIX + this.turnText(message) + CONTENT_SUFFIX)],
      // Added only after the last message; for other roles the cookbook's placeholder is what it adds.
      stopOverlap: this.encodeChunk(message.role === 'assistant' ? 'User:' : '<UNUSED>'),
    };
  }

  getStopSequences(): string[] {
    return [STOP];
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    let response = tokens;
    const eos = this.tokenizer.eosToken ? this.tokenizer.tokenId(this.tokenizer.eosToken) : undefined;
    const endedWithEos = eos !== undefined && response.length > 0 && response[response.length - 1] === eos;
    if (endedWithEos) response = response.slice(0, -1);
    const text = this.tokenizer.decode(response);
    const pieces = text.split(STOP);
    let content = pieces[0]!;
    if (content.startsWith(CONTENT_PREFIX)) content = content.slice(CONTENT_PREFIX.length);
    if (content.endsWith(CONTENT_SUFFIX)) content = content.slice(0, -CONTENT_SUFFIX.length);
    const message = this.responseMessage(content);
    if (pieces.length === 1) return { message, termination: endedWithEos ? 'eos' : 'malformed' };
    if (pieces.length === 2) return { message, termination: endedWithEos ? 'malformed' : 'stop_sequence' };
    return { message, termination: 'malformed' };
  }

  /** The cookbook's: the content alone (an assistant turn's tool_calls are not rendered). */
  protected turnText(m: Message): string {
    return ensureText(m.content);
  }

  /** The cookbook's: the text as it came, a <tool_call> in it left as text. */
  protected responseMessage(content: string): Message {
    return { role: 'assistant', content };
  }
}

/** role_colon_tools: role_colon plus this project's tool format (declarations, calls written and parsed). */
export class RoleColonToolsRenderer extends RoleColonRenderer {
  override readonly name: string = 'role_colon_tools';

  protected override turnText(m: Message): string {
    return turnTextWithCalls(m);
  }

  protected override responseMessage(content: string): Message {
    return withToolCalls(content);
  }

  override createConversationPrefixWithTools(tools: readonly FunctionSpec[], systemPrompt = ''): Message[] {
    const list = tools.map((t) => pyJsonDumps(t, { ensureAscii: false })).join('\n');
    const content = (systemPrompt ? systemPrompt + '\n\n' : '') + ROLE_COLON_TOOLS_HEADER + '\n' + list;
    return [{ role: 'system', content }];
  }
}

/** Our extension: <tool_call> blocks become tool_calls (or unparsed_tool_calls), the text keeps the rest. */
function withToolCalls(content: string): Message {
  if (!content.includes('<tool_call>')) return { role: 'assistant', content };
  const found = [...content.matchAll(BLOCK)].map((m) => parseToolCallJson(m[1]!, m[0]));
  if (found.length === 0) return { role: 'assistant', content };
  const message: Message = { role: 'assistant', content: content.replace(BLOCK, '').trim() };
  const calls = found.filter(isToolCall) as ToolCall[];
  const unparsed = found.filter((c) => !isToolCall(c)) as UnparsedToolCall[];
  if (calls.length) message.tool_calls = calls;
  if (unparsed.length) message.unparsed_tool_calls = unparsed;
  return message;
}

export const roleColonRenderers: RendererTable = {
  role_colon: (tokenizer) => new RoleColonRenderer(tokenizer),
  role_colon_tools: (tokenizer) => new RoleColonToolsRenderer(tokenizer),
};
