// llama3: <|begin_of_text|> + <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|> per message.
import type { Message, ParsedResponse, Renderer, Tokenizer } from '../types';
import { requireTokenId, splitAtStopToken } from './stop-token';

export class Llama3Renderer implements Renderer {
  readonly name = 'llama3';
  private readonly eot: number;
  constructor(readonly tokenizer: Tokenizer) {
    this.eot = requireTokenId(tokenizer, '<|eot_id|>', this.name);
  }

  buildGenerationPrompt(messages: readonly Message[]): number[] {
    const t = this.tokenizer;
    const out = t.encode('<|begin_of_text|>');
    for (const m of messages) {
      out.push(...t.encode(`<|start_header_id|>${m.role}<|end_header_id|>\n\n`));
      out.push(...t.encode(`${m.content}<|eot_id|>`));
    }
    out.push(...t.encode('<|start_header_id|>assistant<|end_header_id|>\n\n'));
    return out;
  }

  stopSequences(): number[] {
    return [this.eot];
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    return splitAtStopToken(tokens, this.tokenizer, this.eot);
  }
}
