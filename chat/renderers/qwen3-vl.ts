// qwen3_vl and qwen3_vl_instruct (cookbook renderers/qwen3.py Qwen3VLRenderer, Qwen3VLInstructRenderer): the
// Qwen3 chat format with images. A message's content is a list of text and image parts; each image is sent as an
// image chunk between <|vision_start|> and <|vision_end|>, text runs are merged and encoded as one string (with
// special tokens read as special, unlike qwen3's content), thinking parts are written <think>...</think> and
// dropped from every assistant message but the last. Tool calls and their declarations are Qwen3's JSON ones;
// parsing is Qwen3's. Qwen3.5 and Qwen3.8 subclass this and change the hooks marked "hook".
import { textChunk } from '../model-input';
import { RenderError, type ImagePart, type Message, type ModelInputChunk, type RenderContext, type RenderedMessage, type TextPart, type Tokenizer } from '../types';
import { Qwen3Renderer } from './qwen3';
import type { ImageProcessor, RendererTable } from './registry-types';
import { toolCallPayloadJson } from './tool-call-json';

type Piece = TextPart | ImagePart;

/** Consecutive text pieces as one, so a text run is tokenized at once as HF's template does. */
function mergeText(pieces: readonly Piece[]): Piece[] {
  const out: Piece[] = [];
  for (const p of pieces) {
    const last = out[out.length - 1];
    if (p.type === 'text' && last?.type === 'text') out[out.length - 1] = { type: 'text', text: last.text + p.text };
    else out.push(p);
  }
  return out;
}

const text = (t: string): TextPart => ({ type: 'text', text: t });

export interface Qwen3VlOptions {
  /** Without one, image parts are refused (cookbook: "image_processor is required to render image content"). */
  imageProcessor?: ImageProcessor | null;
  stripThinkingFromHistory?: boolean;
  mergeTextChunks?: boolean;
}

export class Qwen3VLRenderer extends Qwen3Renderer {
  override readonly name: string;
  readonly imageProcessor: ImageProcessor | null;
  readonly mergeTextChunks: boolean;
  /** Qwen3.5-family templates keep one user block open around a run of tool responses; Qwen3-VL closes each. */
  protected readonly groupsConsecutiveToolResponses: boolean = false;

  constructor(tokenizer: Tokenizer, name: string, opts: Qwen3VlOptions = {}) {
    super(tokenizer, opts.stripThinkingFromHistory ?? true);
    this.name = name;
    this.imageProcessor = opts.imageProcessor ?? null;
    this.mergeTextChunks = opts.mergeTextChunks ?? true;
  }

  get seesImages(): boolean {
    return this.imageProcessor !== null;
  }

  protected qwenRole(m: Message): string {
    return m.role === 'tool' ? 'user' : m.role;
  }

  /** hook: how a thinking part is written. */
  protected formatThinkingText(thinking: string): string {
    return `<think>${thinking}</think>`;
  }

  /** hook: text after the assistant header, before the content. */
  protected assistantHeaderSuffix(_m: Message, _ctx: RenderContext): string {
    return '';
  }

  /** hook: the separator before a tool response that continues an open user block. */
  protected toolResponseContinuationHeader(): string {
    return '\n';
  }

  /**
   * hook: whether this message's thinking is left out: every assistant message but the last. (The HF template
   * keeps it after the last user message; the cookbook keeps this rule for checkpoints trained with it.)
   */
  protected stripsThinkingFor(m: Message, ctx: RenderContext): boolean {
    return this.stripThinkingFromHistory && m.role === 'assistant' && !ctx.isLast;
  }

  /** hook: how much of this message's header the generation prompt already wrote (none for Qwen3-VL). */
  protected generationSuffixInHeader(_m: Message, _ctx: RenderContext): string {
    return '';
  }

  /** hook: the message's tool calls as text after its content. */
  protected formatToolCalls(m: Message): string {
    return '\n' + (m.tool_calls ?? []).map((c) => `<tool_call>\n${toolCallPayloadJson(c)}\n</tool_call>`).join('\n');
  }

  private contentPieces(m: Message, stripThinking: boolean): Piece[] {
    const base: Piece[] = [];
    if (typeof m.content === 'string') base.push(text(m.content));
    else {
      for (const p of m.content) {
        if (p.type === 'text' || p.type === 'image') base.push(p);
        else if (p.type === 'thinking' && !stripThinking) base.push(text(this.formatThinkingText(p.thinking)));
      }
    }
    const out: Piece[] = [];
    for (const p of base) {
      if (p.type === 'image') out.push(text('<|vision_start|>'), p, text('<|vision_end|>'));
      else out.push(p);
    }
    return out;
  }

  private encodePiece(p: Piece): ModelInputChunk {
    if (p.type === 'text') return textChunk(this.tokenizer.encode(p.text));
    if (!this.imageProcessor) throw new RenderError(`${this.name} was made without an image processor, so it cannot render image content`);
    return this.imageProcessor.imageChunk(p.image);
  }

  override renderMessage(m: Message, ctx: RenderContext): RenderedMessage {
    const nl = ctx.idx > 0 ? '\n' : '';
    const grouping = this.groupsConsecutiveToolResponses;
    const isTool = m.role === 'tool';
    let header: string;
    if (isTool && grouping && ctx.prevMessage?.role === 'tool') header = this.toolResponseContinuationHeader();
    else {
      header = `${nl}<|im_start|>${this.qwenRole(m)}\n`;
      if (m.role === 'assistant') header += this.assistantHeaderSuffix(m, ctx);
    }
    let pieces = this.contentPieces(m, this.stripsThinkingFor(m, ctx));
    if (isTool) pieces = [text('<tool_response>\n'), ...pieces, text('\n</tool_response>')];
    if (m.tool_calls !== undefined) pieces.push(text(this.formatToolCalls(m)));
    // A grouped tool response followed by another leaves the shared user block open; the last one closes it.
    if (!(isTool && grouping && ctx.nextMessage?.role === 'tool')) pieces.push(text('<|im_end|>'));
    if (this.mergeTextChunks) pieces = mergeText(pieces);
    // Content is encoded with special tokens read as special (the cookbook's VL path uses the shared tokenizer).
    const output = pieces.map((p) => this.encodePiece(p));
    const prefix = this.generationSuffixInHeader(m, ctx);
    if (prefix && header.startsWith(prefix)) {
      const rest = header.slice(prefix.length);
      if (rest) output.unshift(textChunk(this.tokenizer.encode(rest)));
      header = prefix;
    }
    return { header: textChunk(this.tokenizer.encode(header)), output };
  }
}

/** qwen3_vl_instruct: the instruct models do not use <think>, so a response's think block is not a frame. */
export class Qwen3VLInstructRenderer extends Qwen3VLRenderer {
  protected override readonly framesThinking: boolean = false;
}

export const qwen3VlRenderers: RendererTable = {
  qwen3_vl: (tok, o) => new Qwen3VLRenderer(tok, 'qwen3_vl', { imageProcessor: o.imageProcessor }),
  qwen3_vl_instruct: (tok, o) => new Qwen3VLInstructRenderer(tok, 'qwen3_vl_instruct', { imageProcessor: o.imageProcessor }),
};
