// The prompt tokens of an internal call, rendered once for every API (pure): chat messages with the policy's
// renderer (tools declared as its template declares them), or a prompt given without chat template
// (Completions). What the renderer cannot express is refused with a 400, never left out.
import { isTextOnly, toInts, type Message, type ModelInputChunk, type Renderer, type Tokenizer } from '../chat';
import { IMAGE_PLACEHOLDER_TOKEN } from '../tinker/wire/types';
import { withToolDeclarations } from '../chat/tools';
import { badRequest } from './errors';
import type { InternalAnswer } from './answer';
import type { InternalCall } from './call-types';

export interface Prompt {
  /** Token ids; with images, the flat view (an image's positions hold IMAGE_PLACEHOLDER_TOKEN). */
  tokens: number[];
  /** The prompt as chunks when it holds images (what the sampler is sent). */
  chunks?: ModelInputChunk[];
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
      `the policy's renderer ${renderer.name} cannot show tools or tool calls to the model (it has no tool format in tinker-cookbook); send the call without tools${renderer.name === 'role_colon' ? ', or train with rendererName role_colon_tools (this project\'s tool format for role_colon)' : ''}`,
      'tools',
      'tools_not_supported',
    );
  }
  if (!renderer.seesImages && call.messages.some(hasImage)) {
    throw badRequest(
      `the policy's model cannot see: its renderer ${renderer.name} renders no images (vision renderers: qwen3_vl, qwen3_vl_instruct, qwen3_5*, qwen3_8*); send the call without images`,
      'messages',
      'images_not_supported',
    );
  }
  try {
    const messages = withToolDeclarations(renderer, withToolResultNames(call.messages), call.tools);
    const input = renderer.buildGenerationPrompt(messages);
    if (isTextOnly(input)) return { tokens: toInts(input), stop: renderer.getStopSequences(), raw: false };
    const chunks = input.chunks;
    const tokens = chunks.flatMap((c) => (c.type === 'encoded_text' ? c.tokens : new Array<number>(c.expected_tokens).fill(IMAGE_PLACEHOLDER_TOKEN)));
    return { tokens, chunks, stop: renderer.getStopSequences(), raw: false };
  } catch (err) {
    throw badRequest(`messages cannot be rendered with ${renderer.name}: ${(err as Error).message}`, 'messages');
  }
}

/**
 * Tool results without a `name` take it from the call they answer (by id), as the cookbook's proxy does: OpenAI,
 * Responses and Anthropic results carry only the call id, and gpt-oss renders a result by its function's name.
 */
export function withToolResultNames(messages: readonly Message[]): Message[] {
  const names = new Map<string, string>();
  return messages.map((m) => {
    for (const c of m.tool_calls ?? []) if (c.id) names.set(c.id, c.function.name);
    if (m.role !== 'tool' || m.name || !m.tool_call_id) return m;
    const name = names.get(m.tool_call_id);
    return name ? { ...m, name } : m;
  });
}

/** The images of a chunked prompt at their positions in its flat view. */
export function promptImages(chunks: readonly ModelInputChunk[]): NonNullable<InternalAnswer['promptImages']> {
  const out: NonNullable<InternalAnswer['promptImages']> = [];
  let at = 0;
  for (const c of chunks) {
    if (c.type === 'image') out.push({ at, data: c.data, format: c.format, expected_tokens: c.expected_tokens });
    at += c.type === 'image' ? c.expected_tokens : c.tokens.length;
  }
  return out;
}

function hasImage(m: Message): boolean {
  return typeof m.content !== 'string' && m.content.some((p) => p.type === 'image');
}
