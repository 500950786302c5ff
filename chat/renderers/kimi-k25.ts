// Kimi K2.5 and K2.6 (cookbook renderers/kimi_k25.py, kimi_k26.py): Kimi K2's format, plus
// - the generation prompt ends with an open `<think>` (thinking on) or `<think></think>` (thinking off);
// - tools are declared in TypeScript style (kimi-tool-declaration-ts.ts) instead of JSON;
// - images: `<|media_begin|>image<|media_content|>` IMAGE `<|media_end|>\n`, each text part encoded on its own.
import { textChunk } from '../model-input';
import type { PyValue } from '../../python';
import {
  RenderError,
  type ContentPart,
  type FunctionSpec,
  type GenerationOptions,
  type Message,
  type ModelInput,
  type ModelInputChunk,
  type Tokenizer,
} from '../types';
import { KIMI_DEFAULT_SYSTEM_PROMPT, KimiK2Renderer } from './kimi-k2';
import { encodeToolsToTypescript } from './kimi-tool-declaration-ts';
import type { RendererOptions, RendererTable } from './registry-types';
import { requireTokenId } from './stop-token';

const IMAGE_PREFIX = '<|media_begin|>image<|media_content|>';
const IMAGE_SUFFIX = '<|media_end|>\n';

export class KimiK25Renderer extends KimiK2Renderer {
  protected readonly thinkOpen: number;
  protected readonly thinkClose: number;

  constructor(tokenizer: Tokenizer, name: string, stripThinkingFromHistory = true, opts: RendererOptions = {}) {
    super(tokenizer, name, stripThinkingFromHistory, opts);
    this.thinkOpen = requireTokenId(tokenizer, '<think>', name);
    this.thinkClose = requireTokenId(tokenizer, '</think>', name);
  }

  /** What the generation prompt ends with before any caller prefill. */
  protected thinkPrefill(): string {
    return '<think>';
  }

  override buildGenerationPrompt(messages: readonly Message[], opts: GenerationOptions = {}): ModelInput {
    return super.buildGenerationPrompt(messages, { ...opts, prefill: this.thinkPrefill() + (opts.prefill ?? '') });
  }

  protected override encodeMultipart(content: ContentPart[]): ModelInputChunk[] {
    const chunks: ModelInputChunk[] = [];
    for (const part of content) {
      if (part.type === 'text') chunks.push(textChunk(this.tokenizer.encode(part.text)));
      else if (part.type === 'image') {
        const processor = this.opts.imageProcessor;
        if (!processor) throw new RenderError(`${this.name} needs an image processor to render image content parts`);
        chunks.push(textChunk(this.tokenizer.encode(IMAGE_PREFIX)));
        chunks.push(processor.imageChunk(part.image));
        chunks.push(textChunk(this.tokenizer.encode(IMAGE_SUFFIX)));
      } else throw new RenderError(`Unsupported content type: ${part.type}`);
    }
    return chunks;
  }

  /** The prompt's `<think>` is not in the sampled tokens: put it back when the reply closes a think block. */
  protected override normalizeResponse(tokens: readonly number[]): number[] {
    if (tokens.length && tokens[0] !== this.thinkOpen && tokens.includes(this.thinkClose)) return [this.thinkOpen, ...tokens];
    return [...tokens];
  }

  override createConversationPrefixWithTools(tools: readonly FunctionSpec[], systemPrompt = ''): Message[] {
    const out: Message[] = [];
    if (tools.length) {
      const payload = tools.map((t) => new Map<string, PyValue>([['type', 'function'], ['function', t as unknown as PyValue]]));
      out.push({ role: 'tool_declare', content: encodeToolsToTypescript(payload) });
    }
    out.push({ role: 'system', content: systemPrompt || KIMI_DEFAULT_SYSTEM_PROMPT });
    return out;
  }
}

/** Thinking off: the prompt ends with a closed, empty think block. */
export class KimiK25DisableThinkingRenderer extends KimiK25Renderer {
  override readonly disablesThinking = true;

  protected override thinkPrefill(): string {
    return '<think></think>';
  }
}

export const kimiK25Renderers: RendererTable = {
  kimi_k25: (t: Tokenizer, o: RendererOptions) => new KimiK25Renderer(t, 'kimi_k25', true, o),
  kimi_k25_disable_thinking: (t: Tokenizer, o: RendererOptions) => new KimiK25DisableThinkingRenderer(t, 'kimi_k25_disable_thinking', true, o),
};
