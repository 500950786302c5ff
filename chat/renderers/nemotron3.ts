// Nemotron 3 (Nano, Super) and the Ultra format (3 Ultra, 3.5 Lightning, 3.5 Super), as tinker-cookbook 0.6.1
// renders them (renderers/nemotron3.py on top of qwen3_5.py / qwen3.py's Qwen3VLRenderer). The Qwen3.5 rules
// Nemotron inherits are written out here rather than shared, because Nemotron overrides most of them:
//
//   <|im_start|>system\n<|im_end|>\n<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\nR\n</think>\nA<|im_end|>
//
// - an (empty) system message is always there; user/system/tool text is stripped when it is a string;
// - assistant messages whose reasoning is not shown get `<think></think>` in the header; reasoning is shown from
//   the last user message on (and everywhere with *_preserve_thinking), as `<think>\nR\n</think>\n` (Ultra:
//   `<think>\nR</think>`);
// - tool calls are XML: `<tool_call>\n<function=NAME>\n<parameter=K>\nV\n</parameter>\n</function>\n</tool_call>\n`;
// - consecutive tool results share one user block of `<tool_response>\n...\n</tool_response>\n`;
// - generation prompts end with `<think>\n` (thinking) or `<think></think>` (disable_thinking); the low and medium
//   effort variants append `{reasoning effort: low}` / `{reasoning effort: efficient}` to the last user message.
import { hasThinking } from '../content';
import { textChunk } from '../model-input';
import { isPyDict, isPyList, pyGet, pyItems, pyJsonDumps, pyJsonLoads, PyJsonError, pyStr, pyStrip, type PyValue } from '../../python';
import {
  RenderError,
  type Content,
  type FunctionSpec,
  type GenerationOptions,
  type ImagePart,
  type Message,
  type ModelInput,
  type ModelInputChunk,
  type ParsedResponse,
  type RenderContext,
  type RenderedMessage,
  type SupervisedExample,
  type TextPart,
  type Tokenizer,
  type ToolCall,
  type TrainOnWhat,
  type UnparsedToolCall,
  type ContentPart,
} from '../types';
import { BaseRenderer } from './base';
import type { RendererOptions, RendererTable } from './registry-types';
import { parseResponseForStopToken, requireTokenId } from './stop-token';
import { isToolCall, parseContentBlocks } from './think-blocks';
import { detectUnterminatedToolBlock, UNTERMINATED_TOOL_BLOCK_ERROR } from './tool-call-json';

type Part = TextPart | ImagePart;

const S = '[\\t\\n\\x0b\\x0c\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const NON_SPACE = new RegExp(`[^${S.slice(1, -1)}]`, 'u');
const FUNCTION_RE = new RegExp(`^${S}*<tool_call>${S}*<function=([^>\\n]+)>${S}*([\\s\\S]*?)${S}*</function>${S}*</tool_call>${S}*$`, 'u');
const PARAM_RE = new RegExp(`<parameter=([^>\\n]+)>${S}*([\\s\\S]*?)${S}*</parameter>`, 'gu');

const stripNewlines = (s: string): string => s.replace(/^\n+|\n+$/g, '');

const TOOLS_TEXT = (declarations: string) =>
  '# Tools\n\nYou have access to the following functions:\n\n<tools>\n' +
  declarations +
  '\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n' +
  '<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n' +
  '<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n</parameter>\n' +
  '</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n' +
  '- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n' +
  '- Required parameters MUST be specified\n' +
  '- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n' +
  '- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls\n' +
  '</IMPORTANT>';

type Dict = Map<string, PyValue> | { [k: string]: PyValue };

/** Keys not otherwise rendered, as `<key>value</key>` (dicts/lists as JSON, the rest as Python str()). */
function extraKeys(obj: Dict, handled: readonly string[]): string[] {
  return pyItems(obj)
    .filter(([k]) => !handled.includes(k))
    .map(([k, v]) => `<${k}>${isPyDict(v) || isPyList(v) ? pyJsonDumps(v) : pyStr(v)}</${k}>`);
}

function toolDeclaration(tool: Dict): string {
  const lines = ['<function>', `<name>${pyStr(pyGet(tool, 'name') ?? null)}</name>`];
  const desc = pyGet(tool, 'description');
  if (typeof desc === 'string' && pyStrip(desc)) lines.push(`<description>${pyStrip(desc)}</description>`);
  lines.push('<parameters>');
  const params = pyGet(tool, 'parameters');
  const p = params !== undefined && params !== null && isPyDict(params) ? (params as Dict) : null;
  const props = p ? pyGet(p, 'properties') : undefined;
  if (p && props !== undefined) {
    for (const [name, fieldsV] of pyItems(props as Dict)) {
      const fields = fieldsV as Dict;
      lines.push('<parameter>', `<name>${name}</name>`);
      if (pyGet(fields, 'type') !== undefined) lines.push(`<type>${pyStr(pyGet(fields, 'type')!)}</type>`);
      if (pyGet(fields, 'description') !== undefined) lines.push(`<description>${pyStrip(String(pyGet(fields, 'description')))}</description>`);
      if (pyGet(fields, 'enum') !== undefined) lines.push(`<enum>${pyJsonDumps(pyGet(fields, 'enum')!)}</enum>`);
      lines.push(...extraKeys(fields, ['name', 'type', 'description', 'enum']), '</parameter>');
    }
  }
  if (p) lines.push(...extraKeys(p, ['type', 'properties', 'required']));
  if (p && pyGet(p, 'required') !== undefined) lines.push(`<required>${pyJsonDumps(pyGet(p, 'required')!)}</required>`);
  lines.push('</parameters>', ...extraKeys(tool, ['type', 'name', 'description', 'parameters']), '</function>');
  return lines.join('\n');
}

function toolCallXml(call: ToolCall): string {
  let args: PyValue = new Map();
  if (call.function.arguments) {
    try {
      args = pyJsonLoads(call.function.arguments);
    } catch {
      throw new RenderError(`tool call ${call.function.name}: arguments are not valid JSON`);
    }
  }
  if (!isPyDict(args)) throw new RenderError(`tool call ${call.function.name}: arguments are not a JSON object`);
  const lines = [`<tool_call>\n<function=${call.function.name}>`];
  for (const [k, v] of pyItems(args)) lines.push(`<parameter=${k}>\n${isPyDict(v) || isPyList(v) ? pyJsonDumps(v) : pyStr(v)}\n</parameter>`);
  lines.push('</function>\n</tool_call>');
  return lines.join('\n');
}

/** A `<tool_call><function=NAME><parameter=K>V</parameter>...` block (values as JSON when they parse). */
export function parseXmlToolCall(raw: string): ToolCall | UnparsedToolCall {
  const m = FUNCTION_RE.exec(raw);
  if (!m) return { raw_text: raw, error: 'Malformed Qwen3.5 tool call XML' };
  const name = pyStrip(m[1]!);
  if (!name) return { raw_text: raw, error: 'Missing function name' };
  const body = m[2]!;
  const args = new Map<string, PyValue>();
  let pos = 0;
  for (const p of body.matchAll(PARAM_RE)) {
    if (NON_SPACE.test(body.slice(pos, p.index))) return { raw_text: raw, error: 'Unexpected non-parameter content inside <function> block' };
    const key = pyStrip(p[1]!);
    const text = stripNewlines(p[2]!);
    if (!key) return { raw_text: raw, error: 'Empty parameter name' };
    let value: PyValue;
    try {
      value = pyJsonLoads(text);
    } catch (e) {
      if (!(e instanceof PyJsonError)) throw e;
      value = text;
    }
    args.set(key, value);
    pos = p.index! + p[0].length;
  }
  if (NON_SPACE.test(body.slice(pos))) return { raw_text: raw, error: 'Unexpected trailing content inside <function> block' };
  return { type: 'function', function: { name, arguments: pyJsonDumps(args) } };
}

function mergeText(parts: Part[]): Part[] {
  const out: Part[] = [];
  for (const p of parts) {
    const last = out[out.length - 1];
    if (p.type === 'text' && last?.type === 'text') out[out.length - 1] = { type: 'text', text: last.text + p.text };
    else out.push(p);
  }
  return out;
}

export interface NemotronVariant {
  /** Ultra format (3 Ultra, 3.5 Lightning, 3.5 Super): no newlines around `</think>`. */
  ultra: boolean;
  /** false for *_preserve_thinking (HF truncate_history_thinking=false). */
  stripThinkingFromHistory: boolean;
  /** Generation prompt ends `<think></think>`. */
  disableThinking: boolean;
  /** Appended to the last user message: '\n\n{reasoning effort: low}' or '...efficient}'. */
  effortSuffix?: string;
}

export class Nemotron3Renderer extends BaseRenderer {
  override readonly disablesThinking: boolean;
  private readonly imEnd: number;

  constructor(
    tokenizer: Tokenizer,
    readonly name: string,
    private readonly v: NemotronVariant,
    private readonly opts: RendererOptions = {},
  ) {
    super(tokenizer);
    this.disablesThinking = v.disableThinking;
    this.imEnd = requireTokenId(tokenizer, '<|im_end|>', name);
    requireTokenId(tokenizer, '</think>', name);
  }

  override get hasExtensionProperty(): boolean {
    return !this.v.stripThinkingFromHistory;
  }

  getStopSequences(): number[] {
    return [this.imEnd];
  }

  private withSystem(messages: readonly Message[]): Message[] {
    return messages.length && messages[0]!.role === 'system' ? [...messages] : [{ role: 'system', content: '' }, ...messages];
  }

  override buildGenerationPrompt(messages: readonly Message[], opts: GenerationOptions = {}): ModelInput {
    return super.buildGenerationPrompt(this.withSystem(messages), opts);
  }

  override buildSupervisedExample(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_message'): SupervisedExample {
    return super.buildSupervisedExample(this.withSystem(messages), trainOnWhat);
  }

  private thinkingText(thinking: string): string {
    return this.v.ultra ? `<think>\n${thinking}</think>` : `<think>\n${thinking}\n</think>\n`;
  }

  /** `<think></think>` in the header when the message's reasoning will not be in its output. */
  private assistantHeaderSuffix(message: Message, ctx: RenderContext): string {
    const historical = ctx.idx < ctx.lastUserIndex;
    const think = hasThinking(message.content);
    if (think && (!historical || !this.v.stripThinkingFromHistory)) return '';
    if (!this.v.ultra && historical && think) {
      const c = message.content;
      const text = typeof c !== 'string' && c.some((p) => p.type === 'text' && p.text);
      if (text && !message.tool_calls?.length) return '<think></think>\n';
    }
    return '<think></think>';
  }

  private wrapImages(parts: Part[]): Part[] {
    const count = parts.filter((p) => p.type === 'image').length;
    const out: Part[] = [];
    let index = 0;
    let textBefore = '';
    for (const p of parts) {
      if (p.type !== 'image') {
        out.push(p);
        textBefore = p.text || textBefore;
        continue;
      }
      index++;
      const nl = textBefore && !textBefore.endsWith('\n') ? '\n' : '';
      const label = count > 1 ? `<image ${index}>` : '';
      out.push({ type: 'text', text: `${nl}${label}<img>` }, p, { type: 'text', text: '</img>' });
      textBefore = '';
    }
    return out;
  }

  private toolCallsText(message: Message): string {
    const calls = message.tool_calls!.map((c) => toolCallXml(c) + '\n').join('');
    if (this.v.ultra) return '\n' + calls;
    const c = message.content;
    const thinkingPart = typeof c !== 'string' && c.some((p) => p.type === 'thinking');
    const text = typeof c !== 'string' && c.some((p) => p.type === 'text' && p.text);
    return (thinkingPart && !text ? '' : '\n') + calls;
  }

  renderMessage(original: Message, ctxIn: RenderContext): RenderedMessage {
    let message = original;
    if (this.v.effortSuffix && message.role === 'user' && ctxIn.idx === ctxIn.lastUserIndex) {
      const c = message.content;
      if (typeof c === 'string') message = { ...message, content: c + this.v.effortSuffix };
      else if (this.v.effortSuffix.includes('low')) throw new RenderError('Nemotron-3 low-thinking mode is text-only; list content not supported');
      else message = { ...message, content: [...c, { type: 'text', text: this.v.effortSuffix }] };
    }
    // Reasoning is shown from the last user message on, not only in the last message.
    const ctx = message.role === 'assistant' && ctxIn.idx >= ctxIn.lastUserIndex && !ctxIn.isLast ? { ...ctxIn, isLast: true } : ctxIn;
    if (typeof message.content === 'string') message = { ...message, content: pyStrip(message.content) };

    const nl = ctx.idx > 0 ? '\n' : '';
    const isTool = message.role === 'tool';
    const role = isTool ? 'user' : message.role;
    let header: string;
    if (isTool && ctx.prevMessage?.role === 'tool') header = '';
    else {
      header = `${nl}<|im_start|>${role}\n`;
      if (message.role === 'assistant') header += this.assistantHeaderSuffix(message, ctx);
    }

    const strip = this.v.stripThinkingFromHistory && message.role === 'assistant' && !ctx.isLast;
    let parts: Part[] = [];
    const content: Content = message.content;
    if (typeof content === 'string') parts.push({ type: 'text', text: content });
    else {
      for (const p of content as ContentPart[]) {
        if (p.type === 'text' || p.type === 'image') parts.push(p);
        else if (p.type === 'thinking' && !strip) parts.push({ type: 'text', text: this.thinkingText(p.thinking) });
      }
    }
    parts = this.wrapImages(parts);
    if (isTool) parts = [{ type: 'text', text: '<tool_response>\n' }, ...parts, { type: 'text', text: '\n</tool_response>\n' }];
    if (message.tool_calls !== undefined) parts.push({ type: 'text', text: this.toolCallsText(message) });
    if (!(isTool && ctx.nextMessage?.role === 'tool')) parts.push({ type: 'text', text: '<|im_end|>' });
    const output: ModelInputChunk[] = mergeText(parts).map((p) => {
      if (p.type === 'text') return textChunk(this.tokenizer.encode(p.text));
      const processor = this.opts.imageProcessor;
      if (!processor) throw new RenderError(`${this.name} needs an image processor to render image content parts`);
      return processor.imageChunk(p.image);
    });
    return { header: textChunk(this.tokenizer.encode(header)), output };
  }

  protected override generationSuffix(role: string, ctx: RenderContext): number[] {
    const nl = ctx.idx > 0 ? '\n' : '';
    return this.tokenizer.encode(`${nl}<|im_start|>${role}\n${this.v.disableThinking ? '<think></think>' : '<think>\n'}`);
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const prefix = this.tokenizer.encode('<think>\n');
    const close = this.tokenizer.encode('</think>')[0]!;
    let response = [...tokens];
    const startsWithThink = response.length >= prefix.length && prefix.every((t, i) => response[i] === t);
    if (!startsWithThink && response.includes(close)) response = [...prefix, ...response];

    const parsed = parseResponseForStopToken(response, this.tokenizer, this.imEnd);
    if (parsed.termination === 'malformed') return parsed;
    const message = parsed.message;
    const content = message.content as string;
    const blocks = parseContentBlocks(content);
    if (blocks) {
      message.content = unframeThinking(blocks.parts);
      const calls = blocks.toolCalls.filter(isToolCall);
      const unparsed = blocks.toolCalls.filter((c): c is UnparsedToolCall => !isToolCall(c));
      if (calls.length) message.tool_calls = calls;
      if (unparsed.length) message.unparsed_tool_calls = unparsed;
    }
    const dangling = detectUnterminatedToolBlock(content, '<tool_call>', '</tool_call>');
    if (dangling) message.unparsed_tool_calls = [...(message.unparsed_tool_calls ?? []), dangling];
    this.postprocess(message);
    return parsed;
  }

  private postprocess(message: Message): void {
    const c = message.content;
    if (typeof c !== 'string') {
      let seen = false;
      let firstText: TextPart | null = null;
      for (const p of c) {
        if (p.type === 'thinking') {
          p.thinking = pyStrip(p.thinking);
          seen = true;
        } else if (seen && p.type === 'text') {
          firstText = p;
          break;
        }
      }
      // Nano/Super write one newline after </think>, the Qwen3.5 base two; each strips its own.
      if (firstText && !this.v.ultra && firstText.text.startsWith('\n')) firstText.text = firstText.text.slice(1);
      if (firstText && firstText.text.startsWith('\n\n')) firstText.text = firstText.text.slice(2);
    }
    const converted: ToolCall[] = [];
    const remaining: UnparsedToolCall[] = [];
    for (const u of message.unparsed_tool_calls ?? []) {
      if (u.error.startsWith(UNTERMINATED_TOOL_BLOCK_ERROR) || !u.raw_text.includes('<function=')) {
        remaining.push(u);
        continue;
      }
      const again = parseXmlToolCall(u.raw_text);
      if (isToolCall(again)) converted.push(again);
      else remaining.push(again);
    }
    if (converted.length) message.tool_calls = [...(message.tool_calls ?? []), ...converted];
    if (remaining.length) message.unparsed_tool_calls = remaining;
    else delete message.unparsed_tool_calls;
  }

  /** One system message: the system prompt, then the XML tool declarations (Nemotron puts the prompt first). */
  override createConversationPrefixWithTools(tools: readonly FunctionSpec[], systemPrompt = ''): Message[] {
    if (!tools.length) return [{ role: 'system', content: systemPrompt }];
    const text = TOOLS_TEXT(tools.map((t) => toolDeclaration(t as unknown as Dict)).join('\n'));
    return [{ role: 'system', content: systemPrompt ? systemPrompt + '\n\n' + text : text }];
  }
}

/** Qwen3's `_unframe_thinking`: the newlines framing a think block are not content; an empty block is dropped. */
function unframeThinking(parts: ContentPart[]): ContentPart[] {
  const out: ContentPart[] = [];
  let afterBlock = false;
  for (const p of parts) {
    if (p.type === 'thinking') {
      const r = stripNewlines(p.thinking);
      if (r) out.push({ type: 'thinking', thinking: r });
      afterBlock = true;
    } else if (p.type === 'text') {
      out.push({ type: 'text', text: afterBlock ? p.text.replace(/^\n+/, '') : p.text });
      afterBlock = false;
    } else {
      out.push(p);
      afterBlock = false;
    }
  }
  return out;
}

const LOW = '\n\n{reasoning effort: low}';
const MEDIUM = '\n\n{reasoning effort: efficient}';
// As the cookbook's get_renderer: only the Ultra-format renderers are given the image processor (3.5 Super-VL sees).
const make = (name: string, v: NemotronVariant) => (t: Tokenizer, o: RendererOptions) => new Nemotron3Renderer(t, name, v, v.ultra ? o : {});
const base = { ultra: false, stripThinkingFromHistory: true, disableThinking: false };

export const nemotron3Renderers: RendererTable = {
  nemotron3: make('nemotron3', base),
  nemotron3_low_thinking: make('nemotron3_low_thinking', { ...base, effortSuffix: LOW }),
  nemotron3_disable_thinking: make('nemotron3_disable_thinking', { ...base, disableThinking: true }),
  nemotron3_preserve_thinking: make('nemotron3_preserve_thinking', { ...base, stripThinkingFromHistory: false }),
  nemotron3_ultra: make('nemotron3_ultra', { ...base, ultra: true }),
  nemotron3_ultra_disable_thinking: make('nemotron3_ultra_disable_thinking', { ...base, ultra: true, disableThinking: true }),
  nemotron3_ultra_medium_thinking: make('nemotron3_ultra_medium_thinking', { ...base, ultra: true, effortSuffix: MEDIUM }),
  nemotron3_ultra_preserve_thinking: make('nemotron3_ultra_preserve_thinking', { ...base, ultra: true, stripThinkingFromHistory: false }),
};
