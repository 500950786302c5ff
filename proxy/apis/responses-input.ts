// The Responses API's input, instructions and tools as chat messages and chat tool definitions (pure). Input
// items: messages (text parts), function calls (joined to the assistant turn they follow) and their outputs.
// Image parts (input_image) become image parts for the models that see. Items no renderer can show (files,
// references, hosted tools) are refused with a 400.
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
  input.forEach((item, i) => {
    const where = `input[${i}]`;
    if (!isObj(item)) throw badRequest(`${where} must be an object`, where, 'invalid_type');
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    if (type === 'message') {
      const role = ROLES[item.role as string];
      if (!role) throw badRequest(`${where}.role must be one of user, assistant, system, developer; got ${JSON.stringify(item.role)}`, `${where}.role`);
      const m: Message = { role, content: partsContent(item.content, `${where}.content`) };
      out.push(m);
      turn = role === 'assistant' ? m : null;
    } else if (type === 'function_call') {
      if (typeof item.name !== 'string' || !item.name || typeof item.call_id !== 'string') {
        throw badRequest(`${where} must be {"type": "function_call", "call_id": str, "name": str, "arguments": str}`, where, 'invalid_type');
      }
      const call: ToolCall = { type: 'function', id: item.call_id, function: { name: item.name, arguments: argumentsJson(item.arguments, `${where}.arguments`, where) } };
      if (!turn) out.push((turn = { role: 'assistant', content: '' }));
      (turn.tool_calls ??= []).push(call);
    } else if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string') throw badRequest(`${where}.call_id must be a string`, `${where}.call_id`, 'invalid_type');
      out.push({ role: 'tool', content: partsContent(item.output, `${where}.output`), tool_call_id: item.call_id });
      turn = null;
    } else {
      throw badRequest(
        `${where}: items of type ${JSON.stringify(type)} cannot be rendered for the model (served: message, function_call, function_call_output)`,
        where,
        'unsupported_item',
      );
    }
  });
  return out;
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
  if (isObj(choice)) unenforceableToolChoice('tool_choice', `a tool choice of type ${JSON.stringify(choice.type)}`);
  throw badRequest('tool_choice must be "none", "auto", "required" or an object', 'tool_choice');
}
