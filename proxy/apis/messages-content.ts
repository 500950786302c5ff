// Anthropic Messages content as chat messages and chat tool definitions (pure): `system`, text blocks, assistant
// `tool_use` blocks (tool calls) and `thinking` blocks (its thinking part), user `tool_result` blocks (tool messages)
// and `image` blocks (image parts, for the models that see; in a tool result too). Blocks no renderer can show
// (documents, redacted thinking, server tools) and a
// final assistant message to continue (prefill, which renderers cannot express) are refused with a 400.
import { quote } from '../../common/front-door';
import type { ContentPart, Message, ToolCall, ToolSpec } from '../../chat';
import { badRequest } from '../errors';
import { anthropicImagePart, contentOf } from './image-parts';
import { isObj, unenforceableToolChoice, type Obj } from './fields';

function unsupported(where: string, what: string): never {
  throw badRequest(`${where}: ${what} cannot be rendered for the model (served: text, image, tool_use, tool_result, and thinking in assistant messages)`, where, 'unsupported_content');
}

/** Text and image blocks (a tool result's content) as message content. */
function partsOf(content: unknown, where: string): string | ContentPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw badRequest(`${where} must be a string or an array of text and image blocks`, where, 'invalid_type');
  return contentOf(
    content.map((b, j): ContentPart => {
      if (isObj(b) && b.type === 'text' && typeof b.text === 'string') return { type: 'text', text: b.text };
      if (isObj(b) && b.type === 'image') return anthropicImagePart(b, `${where}[${j}]`);
      return unsupported(`${where}[${j}]`, `a block of type ${quote(isObj(b) ? b.type : typeof b)}`);
    }),
  );
}

function textOf(content: unknown, where: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw badRequest(`${where} must be a string or an array of text blocks`, where, 'invalid_type');
  return content
    .map((b, j) => {
      if (isObj(b) && b.type === 'text' && typeof b.text === 'string') return b.text;
      return unsupported(`${where}[${j}]`, `a block of type ${quote(isObj(b) ? b.type : typeof b)}`);
    })
    .join('');
}

export function systemMessages(system: unknown): Message[] {
  if (system === undefined || system === null) return [];
  const content = textOf(system, 'system');
  return content === '' ? [] : [{ role: 'system', content }];
}

function userTurn(content: unknown, where: string): Message[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  if (!Array.isArray(content)) throw badRequest(`${where} must be a string or an array of content blocks`, where, 'invalid_type');
  const out: Message[] = [];
  // Text and image blocks in a row make one user message; a tool_result is a tool message of its own.
  let parts: ContentPart[] | null = null;
  const flush = () => {
    if (parts) out.push({ role: 'user', content: contentOf(parts) });
    parts = null;
  };
  content.forEach((b, j) => {
    const at = `${where}[${j}]`;
    if (isObj(b) && b.type === 'text' && typeof b.text === 'string') (parts ??= []).push({ type: 'text', text: b.text });
    else if (isObj(b) && b.type === 'image') (parts ??= []).push(anthropicImagePart(b, at));
    else if (isObj(b) && b.type === 'tool_result') {
      if (typeof b.tool_use_id !== 'string') throw badRequest(`${at}.tool_use_id must be a string`, at, 'invalid_type');
      flush();
      const result = b.content === undefined || b.content === null ? '' : partsOf(b.content, `${at}.content`);
      // The error flag has no place in a chat template: it is shown to the model in the result's text.
      const shown = b.is_error === true ? (typeof result === 'string' ? `Error: ${result}` : [{ type: 'text' as const, text: 'Error: ' }, ...result]) : result;
      out.push({ role: 'tool', content: typeof shown === 'string' ? shown : contentOf(shown), tool_call_id: b.tool_use_id });
    } else unsupported(at, `a block of type ${quote(isObj(b) ? b.type : typeof b)} in a user message`);
  });
  flush();
  return out;
}

function assistantTurn(content: unknown, where: string): Message {
  if (typeof content === 'string') return { role: 'assistant', content };
  if (!Array.isArray(content)) throw badRequest(`${where} must be a string or an array of content blocks`, where, 'invalid_type');
  const m: Message = { role: 'assistant', content: '' };
  let text = '';
  const thinking: ContentPart[] = [];
  content.forEach((b, j) => {
    const at = `${where}[${j}]`;
    if (isObj(b) && b.type === 'text' && typeof b.text === 'string') text += b.text;
    else if (isObj(b) && b.type === 'thinking' && typeof b.thinking === 'string') {
      // Thinking sent back (as Anthropic clients do in tool loops) is the turn's thinking part; the signature is not
      // checked (this proxy writes none) and each family keeps or drops the thinking as it does.
      thinking.push({ type: 'thinking', thinking: b.thinking });
    } else if (isObj(b) && b.type === 'tool_use') {
      if (typeof b.id !== 'string' || typeof b.name !== 'string' || !b.name || !isObj(b.input)) {
        throw badRequest(`${at} must be {"type": "tool_use", "id": str, "name": str, "input": object}`, at, 'invalid_type');
      }
      const call: ToolCall = { type: 'function', id: b.id, function: { name: b.name, arguments: JSON.stringify(b.input) } };
      (m.tool_calls ??= []).push(call);
    } else unsupported(at, `a block of type ${quote(isObj(b) ? b.type : typeof b)} in an assistant message`);
  });
  m.content = thinking.length ? [...thinking, { type: 'text', text }] : text;
  return m;
}

export function conversation(messages: unknown): Message[] {
  if (!Array.isArray(messages) || messages.length === 0) throw badRequest('messages: must be a non-empty array', 'messages', 'invalid_type');
  const out: Message[] = [];
  messages.forEach((m, i) => {
    const where = `messages.${i}`;
    if (!isObj(m)) throw badRequest(`${where}: must be an object`, where, 'invalid_type');
    if (m.role === 'user') out.push(...userTurn(m.content, `${where}.content`));
    else if (m.role === 'assistant') out.push(assistantTurn(m.content, `${where}.content`));
    else throw badRequest(`${where}.role: must be "user" or "assistant", got ${quote(m.role)}`, `${where}.role`);
  });
  if ((messages.at(-1) as Obj).role === 'assistant') {
    throw badRequest(
      'messages: the last message is an assistant message to continue (prefill); renderers start a fresh assistant turn and cannot continue one. End with a user message',
      'messages',
      'unsupported_content',
    );
  }
  return out;
}

const TOOL_FIELDS = new Set(['name', 'description', 'input_schema', 'type', 'cache_control', 'strict', 'eager_input_streaming']);

/** Custom tools as chat tool definitions; server tools and tool options a renderer cannot show are refused. */
export function messagesTools(tools: unknown, choice: unknown): ToolSpec[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw badRequest('tools: must be an array', 'tools', 'invalid_type');
  const out = tools.map((t: unknown, i) => {
    const at = `tools.${i}`;
    if (!isObj(t) || (t.type !== undefined && t.type !== null && t.type !== 'custom')) {
      throw badRequest(`${at}: only custom tools can be shown to the model, got ${quote(isObj(t) ? t.type : typeof t)}`, at, 'unsupported_tool');
    }
    if (typeof t.name !== 'string' || !t.name || !isObj(t.input_schema)) throw badRequest(`${at}: must have a name and an input_schema object`, at, 'invalid_type');
    for (const k of Object.keys(t)) if (!TOOL_FIELDS.has(k)) throw badRequest(`${at}.${k}: not served (cannot be shown to the model)`, `${at}.${k}`, 'unsupported_parameter');
    const fn: Obj = { name: t.name };
    if (typeof t.description === 'string') fn.description = t.description;
    fn.parameters = t.input_schema;
    return { type: 'function', function: fn };
  });
  if (choice === undefined || choice === null) return out;
  if (!isObj(choice)) throw badRequest('tool_choice: must be an object', 'tool_choice', 'invalid_type');
  if (choice.type === 'auto') return out;
  if (choice.type === 'none') return [];
  if (choice.type === 'any' || choice.type === 'tool') unenforceableToolChoice('tool_choice', `{"type": "${choice.type}"}`);
  throw badRequest('tool_choice.type: must be "auto", "none", "any" or "tool"', 'tool_choice');
}
