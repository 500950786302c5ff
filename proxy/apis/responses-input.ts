// The Responses API's input, instructions and tools as chat messages and chat tool definitions (pure). Input
// items: messages (text parts), function calls (joined to the assistant turn they follow) and their outputs, and
// reasoning items (the thinking of the assistant turn they precede).
// Image parts (input_image) become image parts for the models that see. Items no renderer can show (files,
// references, hosted tools) are refused with a 400.
import { quote } from '../../common/front-door';
import type { ContentPart, Message, ToolCall, ToolSpec } from '../../chat';
import { badRequest } from '../errors';
import { contentOf, responsesImagePart } from './image-parts';
import { argumentsJson, isObj, unenforceableToolChoice, type Obj } from './fields';

const TEXT_PARTS = new Set(['input_text', 'output_text', 'text']);

function partsContent(content: unknown, where: string): string | ContentPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw badRequest(`${where} must be a string or an array of content parts`, where, 'invalid_type');
  return contentOf(
    content.map((part, j): ContentPart => {
      if (isObj(part) && TEXT_PARTS.has(part.type as string) && typeof part.text === 'string') return { type: 'text', text: part.text };
      if (isObj(part) && part.type === 'refusal' && typeof part.refusal === 'string') return { type: 'text', text: part.refusal };
      if (isObj(part) && part.type === 'input_image') return responsesImagePart(part, `${where}[${j}]`);
      const kind = isObj(part) ? JSON.stringify(part.type) : typeof part;
      throw badRequest(`${where}[${j}]: only text parts (input_text, output_text) and input_image can be rendered for the model, got ${kind}`, where, 'unsupported_content');
    }),
  );
}

const ROLES: Record<string, string> = { user: 'user', assistant: 'assistant', system: 'system', developer: 'system' };

/** `input` (a string or a list of items) as chat messages. */
export function inputMessages(input: unknown): Message[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input)) throw badRequest('input must be a string or an array of input items', 'input', 'invalid_type');
  const out: Message[] = [];
  // Function calls join the assistant turn right before them (one model output: text, then its calls).
  let turn: Message | null = null;
  // A reasoning item opens a model output: its text goes, as a thinking part, to the assistant message or function
  // call that follows (as the proxy's own stored turns hold it), and each family keeps or drops it as it does.
  let reasoning: { text: string; where: string } | null = null;
  const withReasoning = (content: string | ContentPart[]): string | ContentPart[] => {
    if (!reasoning) return content;
    const parts: ContentPart[] = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
    const out: ContentPart[] = [{ type: 'thinking', thinking: reasoning.text }, ...parts];
    reasoning = null;
    return out;
  };
  const unanswered = () => {
    if (reasoning) throw badRequest(`${reasoning.where}: a reasoning item must be followed by the assistant message or function call it came with`, reasoning.where, 'invalid_value');
  };
  input.forEach((item, i) => {
    const where = `input[${i}]`;
    if (!isObj(item)) throw badRequest(`${where} must be an object`, where, 'invalid_type');
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    if (type === 'message') {
      const role = ROLES[item.role as string];
      if (!role) throw badRequest(`${where}.role must be one of user, assistant, system, developer; got ${quote(item.role)}`, `${where}.role`);
      if (role !== 'assistant') unanswered();
      const content = partsContent(item.content, `${where}.content`);
      const m: Message = { role, content: role === 'assistant' ? withReasoning(content) : content };
      out.push(m);
      turn = role === 'assistant' ? m : null;
    } else if (type === 'function_call') {
      if (typeof item.name !== 'string' || !item.name || typeof item.call_id !== 'string') {
        throw badRequest(`${where} must be {"type": "function_call", "call_id": str, "name": str, "arguments": str}`, where, 'invalid_type');
      }
      const call: ToolCall = { type: 'function', id: item.call_id, function: { name: item.name, arguments: argumentsJson(item.arguments, `${where}.arguments`, where) } };
      if (!turn) out.push((turn = { role: 'assistant', content: withReasoning('') }));
      (turn.tool_calls ??= []).push(call);
    } else if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string') throw badRequest(`${where}.call_id must be a string`, `${where}.call_id`, 'invalid_type');
      unanswered();
      out.push({ role: 'tool', content: partsContent(item.output, `${where}.output`), tool_call_id: item.call_id });
      turn = null;
    } else if (type === 'reasoning') {
      unanswered();
      reasoning = { text: reasoningText(item, where), where };
      turn = null;
    } else {
      throw badRequest(
        `${where}: items of type ${quote(type)} cannot be rendered for the model (served: message, function_call, function_call_output, reasoning)`,
        where,
        'unsupported_item',
      );
    }
  });
  unanswered();
  return out;
}

/** A reasoning item's text: its reasoning_text parts (summaries are display text, not what the model wrote). */
function reasoningText(item: Obj, where: string): string {
  if (item.encrypted_content !== undefined && item.encrypted_content !== null) {
    throw badRequest(`${where}.encrypted_content: encrypted reasoning cannot be rendered (this proxy writes its reasoning in content)`, `${where}.encrypted_content`, 'unsupported_content');
  }
  const content = item.content ?? [];
  if (!Array.isArray(content) || !content.every((p) => isObj(p) && p.type === 'reasoning_text' && typeof p.text === 'string')) {
    throw badRequest(`${where}.content must be an array of {"type": "reasoning_text", "text": str}`, `${where}.content`, 'invalid_type');
  }
  return content.map((p) => p.text as string).join('');
}

/** Responses function tools as chat tool definitions (the form renderers declare); other tool types are refused. */
export function responsesTools(tools: unknown, choice: unknown): ToolSpec[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw badRequest('tools must be an array', 'tools', 'invalid_type');
  const out = tools.map((t: unknown, i) => {
    if (!isObj(t) || t.type !== 'function') {
      const kind = isObj(t) ? JSON.stringify(t.type) : typeof t;
      throw badRequest(`tools[${i}]: only function tools can be shown to the model, got ${kind}`, `tools[${i}]`, 'unsupported_tool');
    }
    if (typeof t.name !== 'string' || !t.name) throw badRequest(`tools[${i}].name must be a non-empty string`, `tools[${i}].name`, 'invalid_type');
    if (t.parameters !== undefined && t.parameters !== null && !isObj(t.parameters)) throw badRequest(`tools[${i}].parameters must be an object`, `tools[${i}].parameters`, 'invalid_type');
    const fn: Obj = { name: t.name };
    if (typeof t.description === 'string') fn.description = t.description;
    if (isObj(t.parameters)) fn.parameters = t.parameters;
    if (typeof t.strict === 'boolean') fn.strict = t.strict;
    return { type: 'function', function: fn };
  });
  if (choice === undefined || choice === null || choice === 'auto') return out;
  if (choice === 'none') return [];
  if (choice === 'required') unenforceableToolChoice('tool_choice', '"required"');
  if (isObj(choice)) unenforceableToolChoice('tool_choice', `a tool choice of type ${quote(choice.type)}`);
  throw badRequest('tool_choice must be "none", "auto", "required" or an object', 'tool_choice');
}
