// The prompt tokens of an internal call, rendered once for every API (pure): chat messages with the policy's
// renderer (tools declared as its template declares them), or a prompt given without chat template
// (Completions). What the renderer cannot express is refused with a 400, never left out.
import { toInts, type Renderer, type Tokenizer } from '../chat';
import { withToolDeclarations } from '../chat/tools';
import { badRequest } from './errors';
import type { InternalCall } from './internal-call';

export interface Prompt {
  tokens: number[];
  /** Stop sequences for the sampler: the renderer's end of turn, or the tokenizer's end of text for a raw prompt. */
  stop: string[] | number[];
  /** Rendered without chat template. */
  raw: boolean;
}

function rawPrompt(p: NonNullable<InternalCall['prompt']>, tok: Tokenizer): Prompt {
  let tokens: number[];
  if ('tokens' in p) {
    tokens = p.tokens;
    for (const id of tokens) {
      try {
        tok.tokenBytes(id);
      } catch {
        throw badRequest(`prompt: token id ${id} is not in the vocabulary of ${tok.name}`, 'prompt');
      }
    }
  } else {
    // As a tokenizer encodes a text by default (HF add_special_tokens): its BOS, if it has one, then the text.
    tokens = [...(tok.bosToken ? tok.encode(tok.bosToken) : []), ...tok.encode(p.text)];
  }
  if (tokens.length === 0) throw badRequest('prompt must not be empty', 'prompt');
  const eos = tok.eosToken ? tok.tokenId(tok.eosToken) : undefined;
  return { tokens, stop: eos === undefined ? [] : [eos], raw: true };
}

/** Whether the call shows tools to the model or replays tool calls. */
export function usesTools(call: Pick<InternalCall, 'tools' | 'messages'>): boolean {
  return call.tools.length > 0 || call.messages.some((m) => (m.tool_calls?.length ?? 0) > 0);
}

export function buildPrompt(call: InternalCall, renderer: Renderer): Prompt {
  if (call.prompt) return rawPrompt(call.prompt, renderer.tokenizer);
  if (usesTools(call) && !renderer.createConversationPrefixWithTools) {
    throw badRequest(
      `the policy's renderer ${renderer.name} cannot show tools or tool calls to the model (it has no tool format in tinker-cookbook); send the call without tools`,
      'tools',
      'tools_not_supported',
    );
  }
  try {
    const messages = withToolDeclarations(renderer, call.messages, call.tools);
    return { tokens: toInts(renderer.buildGenerationPrompt(messages)), stop: renderer.getStopSequences(), raw: false };
  } catch (err) {
    throw badRequest(`messages cannot be rendered with ${renderer.name}: ${(err as Error).message}`, 'messages');
  }
}
