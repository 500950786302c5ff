// qwen3_5, qwen3_5_disable_thinking, qwen3_5_preserve_thinking (cookbook renderers/qwen3_5.py): Qwen3-VL's
// format with Qwen3.5's template changes. Content is trimmed; an assistant message after the last user message
// that did not reason gets an empty "<think>\n\n</think>\n\n" block; thinking is written newline-padded; the
// generation prompt prefills "<think>\n" (or the closed empty block with thinking disabled), and that prefill is
// the header of the produced turn, so it carries no loss; runs of tool responses share one user block; tool calls
// and declarations are XML (qwen3-5-tool-xml.ts). Qwen3.6 models use this renderer too (cookbook model_info).
import { hasThinking } from '../content';
import { pyJsonDumps, pyLstrip, pyRstrip, pyStrip } from '../../python';
import type { Content, ContentPart, FunctionSpec, Message, ParsedResponse, RenderContext, RenderedMessage, TextPart, ToolCall, UnparsedToolCall } from '../types';
import type { RendererTable } from './registry-types';
import { formatToolCallXml, parseToolCallXml, type ArgumentStyle } from './qwen3-5-tool-xml';
import { Qwen3VLRenderer } from './qwen3-vl';
import { UNTERMINATED_TOOL_BLOCK_ERROR } from './tool-call-json';

const EMPTY_THINK = '<think>\n\n</think>\n\n';

/** The template's `content|trim` on a part list: text at both visible ends trimmed, thinking parts skipped. */
function trimVisible(content: readonly ContentPart[]): ContentPart[] {
  const parts = [...content];
  const visible = parts.map((p, i) => (p.type === 'thinking' ? -1 : i)).filter((i) => i >= 0);
  for (const [indices, strip] of [[visible, pyLstrip], [[...visible].reverse(), pyRstrip]] as const) {
    for (const i of indices) {
      const part = parts[i]!;
      if (part.type !== 'text') break;
      const t = strip(part.text);
      parts[i] = { type: 'text', text: t };
      if (t) break;
    }
  }
  return parts;
}

function trimContent(c: Content): Content {
  return typeof c === 'string' ? pyStrip(c) : trimVisible(c);
}

export class Qwen3_5Renderer extends Qwen3VLRenderer {
  protected override readonly groupsConsecutiveToolResponses: boolean = true;
  protected readonly argumentStyle: ArgumentStyle = 'qwen3_5';

  /** A turn that did not reason continues the prompt's open <think>\n differently than history writes it. */
  override get hasExtensionProperty(): boolean {
    return false;
  }

  override renderMessage(m: Message, ctx: RenderContext): RenderedMessage {
    return super.renderMessage({ ...m, content: trimContent(m.content) }, ctx);
  }

  /** hook: the header the generation prompt ends with, prefill included. */
  protected generationSuffixStr(role: string, ctx: RenderContext): string {
    return `${ctx.idx > 0 ? '\n' : ''}<|im_start|>${role}\n<think>\n`;
  }

  protected override generationSuffixInHeader(m: Message, ctx: RenderContext): string {
    if (m.role !== 'assistant' || !ctx.isLast) return '';
    return this.generationSuffixStr(this.qwenRole(m), ctx);
  }

  protected override generationSuffix(role: string, ctx: RenderContext): number[] {
    return this.tokenizer.encode(this.generationSuffixStr(role, ctx));
  }

  protected override assistantHeaderSuffix(m: Message, ctx: RenderContext): string {
    if (ctx.idx <= ctx.lastUserIndex) return '';
    return hasThinking(m.content ?? '') ? '' : EMPTY_THINK;
  }

  protected override formatThinkingText(thinking: string): string {
    return `<think>\n${thinking}\n</think>\n\n`;
  }

  protected override formatToolCalls(m: Message): string {
    const c = m.content;
    const visible = typeof c === 'string' ? pyStrip(c) !== '' : c.some((p) => (p.type === 'text' && pyStrip(p.text) !== '') || p.type === 'image');
    return (visible ? '\n\n' : '') + (m.tool_calls ?? []).map((call) => formatToolCallXml(call, this.argumentStyle)).join('\n');
  }

  /** The prompt prefilled <think>\n: a response that closes a think block it did not open gets it back. */
  protected normalizeResponseTokens(tokens: readonly number[]): readonly number[] {
    const prefix = this.tokenizer.encode('<think>\n');
    const close = this.tokenizer.encode('</think>');
    if (close.length !== 1) throw new Error(`${this.name}: </think> is not one token in ${this.tokenizer.name}`);
    const startsWith = tokens.length >= prefix.length && prefix.every((t, i) => tokens[i] === t);
    return !startsWith && tokens.includes(close[0]!) ? [...prefix, ...tokens] : tokens;
  }

  override parseResponse(tokens: readonly number[]): ParsedResponse {
    const parsed = super.parseResponse(this.normalizeResponseTokens(tokens));
    if (parsed.termination === 'malformed') return parsed;
    const message = parsed.message;
    if (Array.isArray(message.content)) {
      let seenThinking = false;
      let firstText: TextPart | null = null;
      for (const p of message.content) {
        if (p.type === 'thinking') {
          p.thinking = pyStrip(p.thinking);
          seenThinking = true;
        } else if (seenThinking && p.type === 'text') {
          firstText = p;
          break;
        }
      }
      // The template writes exactly two newlines between </think> and the text.
      if (firstText && firstText.text.startsWith('\n\n')) firstText.text = firstText.text.slice(2);
    }
    // Qwen3's parser expects JSON inside <tool_call>; Qwen3.5's blocks are XML.
    const converted: ToolCall[] = [];
    const remaining: UnparsedToolCall[] = [];
    for (const u of message.unparsed_tool_calls ?? []) {
      if (u.error.startsWith(UNTERMINATED_TOOL_BLOCK_ERROR) || !u.raw_text.includes('<function=')) {
        remaining.push(u);
        continue;
      }
      const call = parseToolCallXml(u.raw_text);
      if ('function' in call) converted.push(call);
      else remaining.push(call);
    }
    if (converted.length) message.tool_calls = [...(message.tool_calls ?? []), ...converted];
    if (remaining.length) message.unparsed_tool_calls = remaining;
    else delete message.unparsed_tool_calls;
    return parsed;
  }

  override createConversationPrefixWithTools(tools: readonly FunctionSpec[], systemPrompt = ''): Message[] {
    let toolsText = '';
    if (tools.length) {
      const lines = tools.map((t) => pyJsonDumps(t)).join('\n');
      toolsText =
        '# Tools\n\nYou have access to the following functions:\n\n' +
        `<tools>\n${lines}\n</tools>\n\n` +
        'If you choose to call a function ONLY reply in the following format with NO suffix:\n\n' +
        '<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n' +
        '<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n' +
        '</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n' +
        '- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n' +
        '- Required parameters MUST be specified\n' +
        '- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n' +
        '- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls\n' +
        '</IMPORTANT>';
    }
    const content = toolsText ? (systemPrompt ? `${toolsText}\n\n${systemPrompt}` : toolsText) : systemPrompt;
    return [{ role: 'system', content }];
  }
}

/** qwen3_5_disable_thinking: the prompt closes the think block, telling the model not to reason. */
export class Qwen3_5DisableThinkingRenderer extends Qwen3_5Renderer {
  override readonly disablesThinking: boolean = true;

  protected override generationSuffixStr(role: string, ctx: RenderContext): string {
    return `${ctx.idx > 0 ? '\n' : ''}<|im_start|>${role}\n${EMPTY_THINK}`;
  }
}

export const qwen3_5Renderers: RendererTable = {
  qwen3_5: (tok, o) => new Qwen3_5Renderer(tok, 'qwen3_5', { imageProcessor: o.imageProcessor }),
  qwen3_5_disable_thinking: (tok, o) => new Qwen3_5DisableThinkingRenderer(tok, 'qwen3_5_disable_thinking', { imageProcessor: o.imageProcessor }),
  qwen3_5_preserve_thinking: (tok, o) =>
    new Qwen3_5Renderer(tok, 'qwen3_5_preserve_thinking', { imageProcessor: o.imageProcessor, stripThinkingFromHistory: false }),
};
