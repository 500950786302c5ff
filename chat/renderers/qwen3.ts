// qwen3 family, text models (cookbook renderers/qwen3.py): "<|im_start|>role\n" headers ("\n" before all but the
// first), content encoded with special tokens taken literally, then <|im_end|>; no BOS; stop <|im_end|>. Tool
// results are user turns wrapped in <tool_response>; tool calls <tool_call>\n{"name", "arguments"}\n</tool_call>.
// qwen3 / qwen3_disable_thinking frame the produced turn's reasoning as the HF template does
// (<think>\n...\n</think>\n\n, an empty block when it did not reason) and drop thinking parts from history;
// qwen3_disable_thinking's prompt ends with the empty block; qwen3_instruct (2507) never writes <think>.
import { hasThinking, removeThinking } from '../content';
import { pyJsonDumps } from '../../python';
import {
  RenderError,
  type ContentPart,
  type FunctionSpec,
  type Message,
  type ParsedResponse,
  type RenderContext,
  type RenderedMessage,
  type Tokenizer,
  type ToolCall,
  type UnparsedToolCall,
} from '../types';
import { BaseRenderer } from './base';
import { textChunk } from '../model-input';
import type { RendererTable } from './registry-types';
import { parseResponseForStopToken, requireTokenId } from './stop-token';
import { isToolCall, parseContentBlocks } from './think-blocks';
import { detectUnterminatedToolBlock, toolCallPayloadJson } from './tool-call-json';

const lstripNewlines = (s: string): string => s.replace(/^\n+/, '');
const stripNewlines = (s: string): string => s.replace(/^\n+|\n+$/g, '');

/** The template's frame around the produced turn's reasoning: padded, present even when empty. */
export function frameThinking(reasoning: string): string {
  return '<think>\n' + stripNewlines(reasoning) + '\n</think>\n\n';
}

/** Undoes frameThinking so render → parse is the identity: padding is framing, an empty block is no reasoning. */
export function unframeThinking(parts: readonly ContentPart[]): ContentPart[] {
  const out: ContentPart[] = [];
  let afterBlock = false;
  for (const p of parts) {
    if (p.type === 'thinking') {
      const reasoning = stripNewlines(p.thinking);
      if (reasoning) out.push({ type: 'thinking', thinking: reasoning });
      afterBlock = true;
    } else if (p.type === 'text') {
      out.push({ type: 'text', text: afterBlock ? lstripNewlines(p.text) : p.text });
      afterBlock = false;
    } else {
      out.push(p);
      afterBlock = false;
    }
  }
  return out;
}

/** Qwen's tool declaration system text (create_conversation_prefix_with_tools). */
export function qwenToolsText(tools: readonly FunctionSpec[]): string {
  if (tools.length === 0) return '';
  const lines = tools.map((t) => pyJsonDumps({ type: 'function', function: t })).join('\n');
  return (
    '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
    'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
    lines +
    '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
    '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
  );
}

export type Qwen3Variant = 'qwen3' | 'qwen3_instruct' | 'qwen3_disable_thinking';

export class Qwen3Renderer extends BaseRenderer {
  readonly name: string = 'qwen3';
  /** The 2507 instruct models never use <think>, so they get no frame. */
  protected readonly framesThinking: boolean = true;
  protected readonly imEnd: number;

  constructor(
    tokenizer: Tokenizer,
    readonly stripThinkingFromHistory = true,
  ) {
    super(tokenizer);
    this.imEnd = requireTokenId(tokenizer, '<|im_end|>', 'qwen3');
  }

  override get hasExtensionProperty(): boolean {
    return !this.stripThinkingFromHistory;
  }

  /** Content is encoded with special-token text taken literally (the cookbook's content tokenizer). */
  protected encodeContent(text: string): number[] {
    return this.tokenizer.encodeLiteralSpecials ? this.tokenizer.encodeLiteralSpecials(text) : this.tokenizer.encode(text);
  }

  /** The template frames only a turn after the last user message; with history kept, every assistant turn. */
  protected framesProducedTurn(message: Message, ctx: RenderContext): boolean {
    if (!this.framesThinking || message.role !== 'assistant') return false;
    if (ctx.lastUserIndex < 0) return false;
    return ctx.isLast || !this.stripThinkingFromHistory;
  }

  renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const role = message.role === 'tool' ? 'user' : message.role;
    const headerStr = `${ctx.idx > 0 ? '\n' : ''}<|im_start|>${role}\n`;
    const content = message.content;
    const frames = this.framesProducedTurn(message, ctx);
    const hasReasoning = hasThinking(content);

    let out: string;
    if (Array.isArray(content)) {
      const parts = this.stripThinkingFromHistory && message.role === 'assistant' && !ctx.isLast ? removeThinking(content) : content;
      const rendered: string[] = [];
      let afterBlock = false;
      for (const p of parts) {
        if (p.type === 'thinking') {
          rendered.push(frames ? frameThinking(p.thinking) : `<think>${p.thinking}</think>`);
          afterBlock = frames;
        } else if (p.type === 'text') {
          rendered.push(afterBlock ? lstripNewlines(p.text) : p.text);
          afterBlock = false;
        }
      }
      out = rendered.join('');
    } else if (frames && content.includes('</think>')) {
      const cut = content.indexOf('</think>');
      const reasoning = content.slice(0, cut);
      const rest = content.slice(cut + '</think>'.length);
      const open = reasoning.lastIndexOf('<think>');
      out = frameThinking(open >= 0 ? reasoning.slice(open + '<think>'.length) : reasoning) + lstripNewlines(rest);
    } else out = content;

    const hasText = out.length > 0;
    if (frames && !hasReasoning) out = frameThinking('') + lstripNewlines(out);
    if (message.role === 'tool') out = `<tool_response>\n${out}\n</tool_response>`;
    if (message.tool_calls !== undefined) {
      const calls = message.tool_calls.map((c) => `<tool_call>\n${toolCallPayloadJson(c)}\n</tool_call>`).join('\n');
      out += (hasText ? '\n' : '') + calls;
    }
    return {
      header: this.encodeChunk(headerStr),
      output: [textChunk(this.encodeContent(out)), textChunk([this.imEnd])],
    };
  }

  getStopSequences(): number[] {
    return [this.imEnd];
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const parsed = parseResponseForStopToken(tokens, this.tokenizer, this.imEnd);
    if (parsed.termination === 'malformed') return parsed;
    const text = parsed.message.content as string;
    const message: Message = { role: 'assistant', content: text };
    const blocks = parseContentBlocks(text);
    if (blocks) {
      message.content = this.framesThinking ? unframeThinking(blocks.parts) : blocks.parts;
      const calls = blocks.toolCalls.filter(isToolCall) as ToolCall[];
      const unparsed = blocks.toolCalls.filter((c) => !isToolCall(c)) as UnparsedToolCall[];
      if (calls.length) message.tool_calls = calls;
      if (unparsed.length) message.unparsed_tool_calls = unparsed;
    }
    const dangling = detectUnterminatedToolBlock(text, '<tool_call>', '</tool_call>');
    if (dangling) message.unparsed_tool_calls = [...(message.unparsed_tool_calls ?? []), dangling];
    return { message, termination: parsed.termination };
  }

  override createConversationPrefixWithTools(tools: readonly FunctionSpec[], systemPrompt = ''): Message[] {
    const toolsText = qwenToolsText(tools);
    return [{ role: 'system', content: systemPrompt ? systemPrompt + '\n\n' + toolsText : toolsText }];
  }
}

export class Qwen3DisableThinkingRenderer extends Qwen3Renderer {
  override readonly name: string = 'qwen3_disable_thinking';
  override readonly disablesThinking: boolean = true;

  override renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    if (message.role === 'assistant' && ctx.isLast && message.content.length > 0 && ctx.lastUserIndex < 0) {
      throw new RenderError(
        "this conversation has no user message, so Qwen3's template writes no empty think block on the produced turn -- but the generation prompt always opens one. Add a user message, or render with thinking enabled.",
      );
    }
    return super.renderMessage(message, ctx);
  }

  /** The empty block is part of the prompt, so sampling starts after it. */
  protected override generationSuffix(role: string, ctx: RenderContext): number[] {
    return this.tokenizer.encode(`${ctx.idx > 0 ? '\n' : ''}<|im_start|>${role}\n<think>\n\n</think>\n\n`);
  }
}

export class Qwen3InstructRenderer extends Qwen3Renderer {
  override readonly name: string = 'qwen3_instruct';
  protected override readonly framesThinking: boolean = false;

  override get hasExtensionProperty(): boolean {
    return true;
  }
}

export const qwen3Renderers: RendererTable = {
  qwen3: (tokenizer) => new Qwen3Renderer(tokenizer),
  qwen3_disable_thinking: (tokenizer) => new Qwen3DisableThinkingRenderer(tokenizer),
  qwen3_instruct: (tokenizer) => new Qwen3InstructRenderer(tokenizer),
};
