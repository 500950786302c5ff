// GLM-5.3 / GLM-5.3-Flash (zai-org), as tinker-cookbook 0.6.1 renders it (renderers/glm5_3.py):
//
//   [gMASK]<sop><|system|>Reasoning Effort: Max<|system|>SYSTEM<|user|>Q<|assistant|><think>R</think>A<|user|>...
//
// No end-of-message token: a turn ends with the next role token (<|user|>, or <|observation|> after tool calls),
// and the assistant message owns that token (it is trained), the next message's header leaving it out; the last
// assistant message gets it as its stop overlap. Every assistant message opens with `<think>`, which sampling
// always prefills, so it sits in the untrained header. Reasoning is kept in history (HF clear_thinking=False).
// Tool calls: `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>` (strings raw, other
// values JSON); results share one <|observation|> as `<tool_response>...</tool_response>`, re-sorted into call order
// when the ids allow. Tools are declared as JSON lines in a system message before the conversation's own.
import { textChunk } from '../model-input';
import { isPyDict, pyItems, pyJsonDumps, pyJsonLoads, PyJsonError, pyStrip, type PyValue } from '../../python';
import {
  RenderError,
  type Content,
  type FunctionSpec,
  type GenerationOptions,
  type Message,
  type ModelInput,
  type ParsedResponse,
  type RenderContext,
  type RenderedMessage,
  type SupervisedExample,
  type Tokenizer,
  type ToolCall,
  type TrainOnWhat,
  type UnparsedToolCall,
} from '../types';
import { BaseRenderer } from './base';
import type { RendererOptions, RendererTable } from './registry-types';
import { requireTokenId } from './stop-token';
import { isToolCall, parseContentBlocks } from './think-blocks';

const THINK_PREFILL = '<think>';
const S = '[\\t\\n\\x0b\\x0c\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const CALL_RE = new RegExp(`^${S}*<tool_call>${S}*([\\p{L}\\p{N}_\\-.]+)${S}*([\\s\\S]*?)${S}*</tool_call>${S}*$`, 'u');
const ARG_RE = new RegExp(`<arg_key>([\\s\\S]*?)</arg_key>${S}*<arg_value>([\\s\\S]*?)</arg_value>`, 'gu');
const NON_SPACE = new RegExp(`[^${S.slice(1, -1)}]`, 'u');

const TOOLS_SYSTEM = (lines: string) =>
  '\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
  'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
  lines +
  '</tools>\n\nFor each function call, output the function name and arguments within the following XML format:\n' +
  '<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key><arg_value>{arg-value-1}</arg_value><arg_key>{arg-key-2}</arg_key><arg_value>{arg-value-2}</arg_value>...</tool_call>';

function argumentsOf(call: ToolCall): [string, PyValue][] {
  if (!call.function.arguments) return [];
  let v: PyValue;
  try {
    v = pyJsonLoads(call.function.arguments);
  } catch {
    throw new RenderError(`tool call ${call.function.name}: arguments are not valid JSON`);
  }
  if (!isPyDict(v)) throw new RenderError(`tool call ${call.function.name}: arguments are not a JSON object`);
  return pyItems(v);
}

function formatToolCall(call: ToolCall): string {
  const args = argumentsOf(call).map(
    ([k, v]) => `<arg_key>${k}</arg_key><arg_value>${typeof v === 'string' ? v : pyJsonDumps(v, { ensureAscii: false })}</arg_value>`,
  );
  return `<tool_call>${call.function.name}${args.join('')}</tool_call>`;
}

/** A `<tool_call>NAME<arg_key>...` block; values parse as JSON when they can, else stay strings. */
export function parseGlmToolCall(raw: string): ToolCall | UnparsedToolCall {
  const m = CALL_RE.exec(raw);
  if (!m) return { raw_text: raw, error: 'Malformed GLM tool call' };
  const body = m[2]!;
  const args = new Map<string, PyValue>();
  let pos = 0;
  for (const pair of body.matchAll(ARG_RE)) {
    if (NON_SPACE.test(body.slice(pos, pair.index))) return { raw_text: raw, error: 'Unexpected content between tool call arguments' };
    const key = pyStrip(pair[1]!);
    if (!key) return { raw_text: raw, error: 'Empty tool call argument key' };
    let value: PyValue;
    try {
      value = pyJsonLoads(pair[2]!);
    } catch (e) {
      if (!(e instanceof PyJsonError)) throw e;
      value = pair[2]!;
    }
    args.set(key, value);
    pos = pair.index! + pair[0].length;
  }
  if (NON_SPACE.test(body.slice(pos))) return { raw_text: raw, error: 'Unexpected trailing content inside tool call' };
  return { type: 'function', function: { name: m[1]!, arguments: pyJsonDumps(args) } };
}

/** Consecutive tool results in the order of the calls before them, when every id is there and unique. */
function sortToolBlock(block: Message[], prev: Message | null): Message[] {
  const calls = prev?.role === 'assistant' ? prev.tool_calls : undefined;
  if (!calls?.length) return block;
  const callIds = calls.map((c) => c.id);
  if (callIds.some((id) => !id) || new Set(callIds).size !== callIds.length) return block;
  const resIds = block.map((m) => m.tool_call_id);
  if (resIds.some((id) => !id) || new Set(resIds).size !== resIds.length) return block;
  if (!resIds.every((id) => callIds.includes(id))) return block;
  const byId = new Map(block.map((m) => [m.tool_call_id!, m]));
  return callIds.filter((id) => byId.has(id!)).map((id) => byId.get(id!)!);
}

function reorderToolResults(messages: readonly Message[]): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < messages.length; ) {
    if (messages[i]!.role !== 'tool') {
      out.push(messages[i++]!);
      continue;
    }
    let end = i;
    while (end + 1 < messages.length && messages[end + 1]!.role === 'tool') end++;
    out.push(...sortToolBlock(messages.slice(i, end + 1), i > 0 ? messages[i - 1]! : null));
    i = end + 1;
  }
  return out;
}

export class Glm53Renderer extends BaseRenderer {
  private readonly system: number;
  private readonly user: number;
  private readonly assistant: number;
  private readonly observation: number;
  private readonly endOfText: number;
  private readonly thinkOpen: number;
  private readonly thinkClose: number;

  constructor(
    tokenizer: Tokenizer,
    readonly name: string,
    private readonly reasoningEffort: 'Max' | 'High' | 'Low',
    private readonly stripThinkingFromHistory = false,
  ) {
    super(tokenizer);
    const id = (t: string) => requireTokenId(tokenizer, t, name);
    this.system = id('<|system|>');
    this.user = id('<|user|>');
    this.assistant = id('<|assistant|>');
    this.observation = id('<|observation|>');
    this.endOfText = id('<|endoftext|>');
    this.thinkOpen = id('<think>');
    this.thinkClose = id('</think>');
  }

  override get hasExtensionProperty(): boolean {
    return !this.stripThinkingFromHistory;
  }

  protected override bosTokens(): number[] {
    return this.tokenizer.encode(`[gMASK]<sop><|system|>Reasoning Effort: ${this.reasoningEffort}`);
  }

  getStopSequences(): number[] {
    return [this.user, this.observation, this.endOfText];
  }

  private visibleText(content: Content): string {
    if (typeof content === 'string') return content;
    return content
      .map((p) => {
        if (p.type !== 'text') throw new RenderError(`GLM-5.3 renderer does not support '${p.type}' content parts here`);
        return p.text;
      })
      .join('');
  }

  private splitReasoning(message: Message): [string | null, string] {
    const c = message.content;
    if (typeof c !== 'string') {
      const reasoning: string[] = [];
      const text: string[] = [];
      for (const p of c) {
        if (p.type === 'thinking') reasoning.push(p.thinking);
        else if (p.type === 'text') text.push(p.text);
        else throw new RenderError(`GLM-5.3 renderer does not support '${p.type}' content parts`);
      }
      return [reasoning.length ? reasoning.join('') : null, text.join('')];
    }
    if (c.includes('</think>')) {
      const pieces = c.split('</think>');
      return [pieces[0]!.split('<think>').pop()!, pieces[pieces.length - 1]!];
    }
    return [null, c];
  }

  /** The token that ends this assistant turn, or null when the next message's header is not that token. */
  private terminator(message: Message, next: Message | null): number | null {
    const expected = message.tool_calls?.length ? this.observation : this.user;
    if (!next) return expected;
    const nextHeader = next.role === 'user' ? this.user : next.role === 'tool' ? this.observation : undefined;
    return nextHeader === expected ? expected : null;
  }

  private headerSuppliedByPreviousTurn(ctx: RenderContext, message: Message): boolean {
    const prev = ctx.prevMessage;
    if (!prev || prev.role !== 'assistant') return false;
    return this.terminator(prev, message) !== null;
  }

  renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const role = message.role;
    let header: number[];
    let out: string;
    let trailing: number[] = [];
    let stopOverlap: RenderedMessage['stopOverlap'] = null;
    if (role === 'system') {
      header = [this.system];
      out = this.visibleText(message.content);
    } else if (role === 'user') {
      header = this.headerSuppliedByPreviousTurn(ctx, message) ? [] : [this.user];
      out = this.visibleText(message.content);
    } else if (role === 'assistant') {
      const [reasoning, text] = this.splitReasoning(message);
      const keep = !this.stripThinkingFromHistory || ctx.idx > ctx.lastUserIndex;
      out = (keep && reasoning !== null ? `<think>${reasoning}</think>` : '<think></think>') + pyStrip(text);
      if (message.tool_calls?.length) out += message.tool_calls.map(formatToolCall).join('');
      header = [this.assistant];
      if (out.startsWith(THINK_PREFILL)) {
        header.push(...this.tokenizer.encode(THINK_PREFILL));
        out = out.slice(THINK_PREFILL.length);
      }
      const term = this.terminator(message, ctx.nextMessage);
      if (ctx.isLast) stopOverlap = term !== null ? textChunk([term]) : null;
      else if (term !== null) trailing = [term];
    } else if (role === 'tool') {
      const followsTool = ctx.prevMessage?.role === 'tool';
      header = followsTool || this.headerSuppliedByPreviousTurn(ctx, message) ? [] : [this.observation];
      out = '<tool_response>' + this.visibleText(message.content) + '</tool_response>';
    } else {
      throw new RenderError(`Unsupported role: ${role}`);
    }
    const tokens = [...this.tokenizer.encode(out), ...trailing];
    return { header: header.length ? textChunk(header) : null, output: tokens.length ? [textChunk(tokens)] : [], stopOverlap };
  }

  protected override generationSuffix(role: string): number[] {
    const roles: Record<string, number> = { system: this.system, user: this.user, assistant: this.assistant, tool: this.observation };
    const token = roles[role];
    if (token === undefined) throw new RenderError(`Unsupported generation role: ${role}`);
    return role === 'assistant' ? [token, ...this.tokenizer.encode(THINK_PREFILL)] : [token];
  }

  override buildGenerationPrompt(messages: readonly Message[], opts: GenerationOptions = {}): ModelInput {
    return super.buildGenerationPrompt(reorderToolResults(messages), opts);
  }

  override buildSupervisedExample(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_message'): SupervisedExample {
    return super.buildSupervisedExample(reorderToolResults(messages), trainOnWhat);
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    let response = [...tokens];
    if (response.length && response[0] !== this.thinkOpen && response.includes(this.thinkClose)) response = [this.thinkOpen, ...response];
    const stops = new Set(this.getStopSequences());
    const at = response.flatMap((t, i) => (stops.has(t) ? [i] : []));
    if (at.length === 0) return { message: { role: 'assistant', content: this.tokenizer.decode(response) }, termination: 'malformed' };
    if (at.length > 1) {
      throw new RenderError(
        `When parsing response, expected to split into 1 or 2 pieces using stop tokens, but got ${at.length}. You probably are using the wrong stop tokens when sampling`,
      );
    }
    const content = this.tokenizer.decode(response.slice(0, at[0]));
    const message: Message = { role: 'assistant', content };
    const blocks = parseContentBlocks(content);
    if (blocks) {
      message.content = blocks.parts;
      const calls: ToolCall[] = blocks.toolCalls.filter(isToolCall);
      const unparsed: UnparsedToolCall[] = [];
      for (const r of blocks.toolCalls) {
        if (isToolCall(r)) continue;
        const again = parseGlmToolCall(r.raw_text);
        if (isToolCall(again)) calls.push(again);
        else unparsed.push(again);
      }
      if (calls.length) message.tool_calls = calls;
      if (unparsed.length) message.unparsed_tool_calls = unparsed;
    }
    return { message, termination: response[at[0]!] === this.endOfText ? 'eos' : 'stop_sequence' };
  }

  /** A system message declaring the tools (JSON lines; defer_loading tools left out), then the system prompt. */
  override createConversationPrefixWithTools(tools: readonly FunctionSpec[], systemPrompt = ''): Message[] {
    const out: Message[] = [];
    if (tools.length) {
      const lines = tools
        .map((t) => pyItems(t as unknown as Map<string, PyValue>))
        .filter((items) => !truthyValue(items.find(([k]) => k === 'defer_loading')?.[1]))
        .map((items) => pyJsonDumps(new Map(items.filter(([k]) => k !== 'defer_loading' && k !== 'strict')), { ensureAscii: false }) + '\n')
        .join('');
      out.push({ role: 'system', content: TOOLS_SYSTEM(lines) });
    }
    if (systemPrompt) out.push({ role: 'system', content: systemPrompt });
    return out;
  }
}

function truthyValue(v: PyValue | undefined): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isPyDict(v)) return pyItems(v).length > 0;
  return true;
}

export const glm53Renderers: RendererTable = {
  glm5_3_max_reasoning: (t: Tokenizer, _o: RendererOptions) => new Glm53Renderer(t, 'glm5_3_max_reasoning', 'Max'),
  glm5_3_high_reasoning: (t: Tokenizer, _o: RendererOptions) => new Glm53Renderer(t, 'glm5_3_high_reasoning', 'High'),
  glm5_3_low_reasoning: (t: Tokenizer, _o: RendererOptions) => new Glm53Renderer(t, 'glm5_3_low_reasoning', 'Low'),
};
