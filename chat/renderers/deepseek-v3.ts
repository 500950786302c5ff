// DeepSeek V3.1 as tinker-cookbook 0.6.1 renders it (renderers/deepseek_v3.py):
//   <｜begin▁of▁sentence｜>{system}<｜User｜>{question}<｜Assistant｜></think>{answer}<｜end▁of▁sentence｜>
// deepseekv3 / deepseekv3_disable_thinking answer without reasoning (</think> after the assistant marker, any
// reasoning dropped); deepseekv3_thinking prefills <think> and drops reasoning from earlier turns. Tool calls:
//   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
// Tool results: <｜tool▁output▁begin｜>RESULT<｜tool▁output▁end｜>; the assistant answers right after, with no marker.
import { ensureText, hasThinking } from '../content';
import type {
  FunctionSpec,
  GenerationOptions,
  Message,
  ModelInput,
  ParsedResponse,
  RenderContext,
  RenderedMessage,
  Tokenizer,
  ToolCall,
  UnparsedToolCall,
} from '../types';
import { RenderError } from '../types';
import { textChunk } from '../model-input';
import { BaseRenderer } from './base';
import { PY_SPACE, PY_WORD, pyJsonDumps, pyJsonLoads, pyStrip } from '../../python';
import type { RendererTable } from './registry-types';
import { parseResponseForStopToken, requireTokenId } from './stop-token';
import { parseThinkBlocks } from './think-blocks';
import { detectUnterminatedToolBlock } from './tool-call-json';

const CALLS_BEGIN = '<｜tool▁calls▁begin｜>';
const CALLS_END = '<｜tool▁calls▁end｜>';
const CALL_BEGIN = '<｜tool▁call▁begin｜>';
const CALL_END = '<｜tool▁call▁end｜>';
const SEP = '<｜tool▁sep｜>';

const CALLS_RE = /<｜tool▁calls▁begin｜>([\s\S]*?)<｜tool▁calls▁end｜>/u;
const CALL_RE = new RegExp(`<｜tool▁call▁begin｜>([${PY_WORD}]+)<｜tool▁sep｜>([\\s\\S]*?)<｜tool▁call▁end｜>`, 'gu');
const CALLS_SECTION_RE = new RegExp(`[${PY_SPACE}]*<｜tool▁calls▁begin｜>[\\s\\S]*?<｜tool▁calls▁end｜>`, 'gu');

export type DeepSeekV3Mode = 'thinking' | 'disable_thinking';

export class DeepSeekV3Renderer extends BaseRenderer {
  private readonly userToken: number;
  private readonly assistantToken: number;
  private readonly bos: number;
  private readonly eos: number;
  private readonly systemRoleAsUser = false;
  private readonly stripThinkingFromHistory = true;

  constructor(
    tokenizer: Tokenizer,
    readonly name: string,
    private readonly mode: DeepSeekV3Mode,
  ) {
    super(tokenizer);
    this.userToken = requireTokenId(tokenizer, '<｜User｜>', name);
    this.assistantToken = requireTokenId(tokenizer, '<｜Assistant｜>', name);
    this.bos = requireTokenId(tokenizer, '<｜begin▁of▁sentence｜>', name);
    this.eos = requireTokenId(tokenizer, '<｜end▁of▁sentence｜>', name);
  }

  override get hasExtensionProperty(): boolean {
    // Non-thinking mode has no reasoning to drop from history.
    return this.mode === 'disable_thinking' || !this.stripThinkingFromHistory;
  }

  protected override bosTokens(): number[] {
    return [this.bos];
  }

  getStopSequences(): number[] {
    return [this.eos];
  }

  renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const followsTool = ctx.prevMessage?.role === 'tool';
    const assistantTurn = message.role === 'assistant' && !followsTool;
    if (this.mode === 'disable_thinking') {
      if (assistantTurn) {
        const c = message.content;
        const text = typeof c === 'string' ? c.replace(/<think>[\s\S]*?<\/think>/g, '') : c.map((p) => (p.type === 'text' ? p.text : '')).join('');
        message = { ...message, content: text };
      }
      const r = this.renderBase(message, ctx);
      // </think> in the header (no loss) so the example's prompt matches the generation prompt.
      return assistantTurn ? { ...r, header: textChunk([...(r.header?.tokens ?? []), ...this.tokenizer.encode('</think>')]) } : r;
    }
    const r = this.renderBase(message, ctx);
    if (assistantTurn && this.stripThinkingFromHistory && !ctx.isLast) {
      // Earlier turns start with </think>: their reasoning is over (and was dropped).
      return { ...r, header: textChunk([...(r.header?.tokens ?? []), ...this.tokenizer.encode('</think>')]) };
    }
    if (assistantTurn && ctx.isLast && contentTruthy(message) && !hasThinking(message.content)) {
      // A trained turn that did not reason shows an empty block, as HF's template writes it.
      const [first, ...rest] = r.output;
      if (first?.type !== 'encoded_text') throw new RenderError(`${this.name}: expected text output`);
      return { ...r, output: [textChunk([...this.tokenizer.encode('<think></think>'), ...first.tokens]), ...rest] };
    }
    return r;
  }

  /** The rendering both modes share (cookbook _DeepSeekV3BaseRenderer.render_message). */
  private renderBase(message: Message, ctx: RenderContext): RenderedMessage {
    const followsTool = ctx.prevMessage?.role === 'tool';
    let header: number[];
    let output: string;
    const content = message.content;
    if (message.role === 'system') {
      const text = ensureText(content);
      if (ctx.idx === 0) header = [];
      else if (this.systemRoleAsUser) header = [this.userToken];
      else {
        throw new RenderError(
          'DeepSeek only supports system message at start. Use system_role_as_user=True to convert later system messages to user role.',
        );
      }
      output = text;
    } else if (message.role === 'user') {
      header = [this.userToken];
      output = ensureText(content);
    } else if (message.role === 'assistant') {
      const strip = this.stripThinkingFromHistory && !message.tool_calls?.length && !ctx.isLast;
      output =
        typeof content === 'string'
          ? content
          : content.map((p) => (p.type === 'thinking' ? (strip ? '' : `<think>${p.thinking}</think>`) : p.type === 'text' ? p.text : '')).join('');
      header = followsTool ? [] : [this.assistantToken];
    } else if (message.role === 'tool') {
      header = this.tokenizer.encode('<｜tool▁output▁begin｜>');
      output = ensureText(content) + '<｜tool▁output▁end｜>';
    } else {
      throw new RenderError(`Unsupported role: ${message.role}`);
    }
    if (message.tool_calls?.length) {
      output += CALLS_BEGIN;
      for (const c of message.tool_calls) output += `${CALL_BEGIN}${c.function.name}${SEP}${c.function.arguments}${CALL_END}`;
      output += CALLS_END;
    }
    const tokens = this.tokenizer.encode(output);
    // End of sentence only after an assistant message with content (not the generation prompt's empty one).
    if (message.role === 'assistant' && contentTruthy(message)) tokens.push(this.eos);
    return header.length ? { header: textChunk(header), output: [textChunk(tokens)] } : { output: [textChunk(tokens)] };
  }

  override buildGenerationPrompt(messages: readonly Message[], opts: GenerationOptions = {}): ModelInput {
    // Thinking mode prefills <think>, except after tool results (tool use runs without thinking).
    if (this.mode === 'disable_thinking' || messages[messages.length - 1]?.role === 'tool') return super.buildGenerationPrompt(messages, opts);
    return super.buildGenerationPrompt(messages, { ...opts, prefill: '<think>' + (opts.prefill ?? '') });
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const parsed = parseResponseForStopToken(this.normalizeResponse(tokens), this.tokenizer, this.eos);
    if (parsed.termination === 'malformed') return parsed;
    const message = parsed.message;
    let content = message.content as string;
    const { calls, unparsed } = parseToolCalls(content);
    const dangling = detectUnterminatedToolBlock(content, CALLS_BEGIN, CALLS_END) ?? detectUnterminatedToolBlock(content, CALL_BEGIN, CALL_END);
    if (dangling) unparsed.push(dangling);
    if (calls.length) message.tool_calls = calls;
    if (unparsed.length) message.unparsed_tool_calls = unparsed;
    if (calls.length || unparsed.length) content = pyStrip(content.replace(CALLS_SECTION_RE, ''));
    message.content = parseThinkBlocks(content) ?? content;
    return parsed;
  }

  /** Thinking mode: put back the prefilled <think> when the response closes a block it did not open. */
  private normalizeResponse(tokens: readonly number[]): readonly number[] {
    if (this.mode !== 'thinking') return tokens;
    const open = this.tokenizer.tokenId('<think>');
    const close = this.tokenizer.tokenId('</think>');
    if (open === undefined || close === undefined) return tokens;
    if (tokens[0] !== open && tokens.includes(close)) return [open, ...tokens];
    return tokens;
  }

  /** One system message: the system prompt, then the tools as `### name` sections and the call format. */
  override createConversationPrefixWithTools(tools: readonly FunctionSpec[], systemPrompt = ''): Message[] {
    let toolsText = '';
    if (tools.length) {
      const blocks = tools.map(
        (t) => `### ${t.name}\nDescription: ${t.description ?? ''}\n\nParameters: ${pyJsonDumps(t.parameters ?? null)}`,
      );
      toolsText =
        '\n\n## Tools\nYou have access to the following tools:\n\n' +
        blocks.join('\n') +
        '\n\nIMPORTANT: ALWAYS adhere to this exact format for tool use:\n' +
        `${CALLS_BEGIN}${CALL_BEGIN}tool_call_name${SEP}tool_call_arguments${CALL_END}${CALLS_END}\n\n` +
        'Where:\n' +
        '- `tool_call_name` must be an exact match to one of the available tools\n' +
        "- `tool_call_arguments` must be valid JSON that strictly follows the tool's Parameters Schema\n" +
        '- For multiple tool calls, chain them directly without separators or spaces';
    }
    return [{ role: 'system', content: systemPrompt + toolsText }];
  }
}

/** Python truthiness of a message's content ('' and [] are false). */
function contentTruthy(message: Message): boolean {
  return message.content.length > 0;
}

/** The calls in the first tool-calls section; a call whose arguments are not JSON is kept unparsed. */
function parseToolCalls(content: string): { calls: ToolCall[]; unparsed: UnparsedToolCall[] } {
  const calls: ToolCall[] = [];
  const unparsed: UnparsedToolCall[] = [];
  const section = CALLS_RE.exec(content);
  if (!section) return { calls, unparsed };
  for (const m of section[1]!.matchAll(CALL_RE)) {
    const args = pyStrip(m[2]!);
    try {
      pyJsonLoads(args);
      calls.push({ type: 'function', function: { name: m[1]!, arguments: args } });
    } catch (e) {
      unparsed.push({ raw_text: m[0], error: `Invalid JSON: ${(e as Error).message}` });
    }
  }
  return { calls, unparsed };
}

export const deepseekV3Renderers: RendererTable = {
  // The cookbook's deepseekv3 is the non-thinking renderer (HF's default); the _disable_thinking name is its alias.
  deepseekv3: (tokenizer) => new DeepSeekV3Renderer(tokenizer, 'deepseekv3', 'disable_thinking'),
  deepseekv3_disable_thinking: (tokenizer) => new DeepSeekV3Renderer(tokenizer, 'deepseekv3_disable_thinking', 'disable_thinking'),
  deepseekv3_thinking: (tokenizer) => new DeepSeekV3Renderer(tokenizer, 'deepseekv3_thinking', 'thinking'),
};
