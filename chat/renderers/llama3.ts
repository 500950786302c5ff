// llama3 (cookbook renderers/llama3.py): <|begin_of_text|>, then per message
// <|start_header_id|>role<|end_header_id|>\n\n + content<|eot_id|>; stop <|eot_id|>. No tools (the cookbook has none:
// Llama 3's bare-JSON calls cannot be told from JSON answers).
import { ensureText } from '../content';
import type { Message, ParsedResponse, RenderContext, RenderedMessage, Tokenizer } from '../types';
import { BaseRenderer } from './base';
import type { RendererTable } from './registry-types';
import { parseResponseForStopToken, requireTokenId } from './stop-token';

export class Llama3Renderer extends BaseRenderer {
  readonly name = 'llama3';
  private readonly eot: number;

  constructor(tokenizer: Tokenizer) {
    super(tokenizer);
    this.eot = requireTokenId(tokenizer, '<|eot_id|>', this.name);
  }

  override get hasExtensionProperty(): boolean {
    return true;
  }

  protected override bosTokens(): number[] {
    return this.tokenizer.encode('<|begin_of_text|>');
  }

  renderMessage(message: Message, _ctx: RenderContext): RenderedMessage {
    return {
      header: this.encodeChunk(`<|start_header_id|>${message.role}<|end_header_id|>\n\n`),
      output: [this.encodeChunk(ensureText(message.content) + '<|eot_id|>')],
    };
  }

  getStopSequences(): number[] {
    return [this.eot];
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    return parseResponseForStopToken(tokens, this.tokenizer, this.eot);
  }
}

export const llama3Renderers: RendererTable = {
  llama3: (tokenizer) => new Llama3Renderer(tokenizer),
};
