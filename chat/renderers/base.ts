// The cookbook's generic rendering algorithms (renderers/base.py `Renderer`), written once: a family renders
// one message (header / output / stop overlap) and says how it stops and parses; this class assembles
// generation prompts and supervised examples (tokens + weights per TrainOnWhat) from those pieces exactly as
// the cookbook does, including its special cases (empty chunks dropped from prompts, stop overlap after the
// last message, no loss on what the generation prompt already supplies).
import { chunkLength, isTextOnly, textChunk, toInts } from '../model-input';
import {
  RenderError,
  type EncodedTextChunk,
  type FunctionSpec,
  type GenerationOptions,
  type Message,
  type ModelInput,
  type ModelInputChunk,
  type ParsedResponse,
  type RenderContext,
  type RenderedMessage,
  type Renderer,
  type SupervisedExample,
  type Tokenizer,
  type TrainOnWhat,
} from '../types';

/** Index of the last user message, -1 without one. */
export function lastUserIndex(messages: readonly Message[]): number {
  let last = -1;
  messages.forEach((m, i) => {
    if (m.role === 'user') last = i;
  });
  return last;
}

function isEmptyText(c: ModelInputChunk | null | undefined): boolean {
  return !c || (c.type === 'encoded_text' && c.tokens.length === 0);
}

export abstract class BaseRenderer implements Renderer {
  /** The registry name this renderer was made under (set by the factory). */
  abstract readonly name: string;
  readonly disablesThinking: boolean = false;

  constructor(readonly tokenizer: Tokenizer) {}

  get hasExtensionProperty(): boolean {
    return false;
  }

  /** Tokens before the first message (BOS for some families). */
  protected bosTokens(): number[] {
    return [];
  }

  abstract getStopSequences(): string[] | number[];
  abstract renderMessage(message: Message, ctx: RenderContext): RenderedMessage;
  abstract parseResponse(tokens: readonly number[]): ParsedResponse;
  createConversationPrefixWithTools?(tools: readonly FunctionSpec[], systemPrompt?: string): Message[];

  /** Encodes text as HF `encode(text, add_special_tokens=False)` into one chunk. */
  protected encodeChunk(text: string): EncodedTextChunk {
    return textChunk(this.tokenizer.encode(text));
  }

  /** The header of the message to generate; default: the header of an empty message of that role. */
  protected generationSuffix(role: string, ctx: RenderContext): number[] {
    const rendered = this.renderMessage({ role, content: '' }, ctx);
    return rendered.header ? [...rendered.header.tokens] : [];
  }

  /** First message of the turn the model is asked to produce: the one after the last user message. */
  protected lastAssistantTurnStartIndex(messages: readonly Message[]): number {
    return lastUserIndex(messages) + 1;
  }

  protected contextFor(messages: readonly Message[], idx: number, lastUser: number, turnStart: number): RenderContext {
    return {
      idx,
      isLast: idx === messages.length - 1,
      prevMessage: idx > 0 ? messages[idx - 1]! : null,
      nextMessage: idx + 1 < messages.length ? messages[idx + 1]! : null,
      lastUserIndex: lastUser,
      inLastAssistantTurn: idx >= turnStart,
    };
  }

  buildGenerationPrompt(messages: readonly Message[], opts: GenerationOptions = {}): ModelInput {
    const chunks: ModelInputChunk[] = [];
    const bos = this.bosTokens();
    if (bos.length) chunks.push(textChunk(bos));
    const lastUser = lastUserIndex(messages);
    const turnStart = this.lastAssistantTurnStartIndex(messages);
    messages.forEach((m, idx) => {
      const r = this.renderMessage(m, this.contextFor(messages, idx, lastUser, turnStart));
      // Empty text chunks are dropped: the sampler refuses them ("Chunk N has empty tokens list").
      if (r.header && !isEmptyText(r.header)) chunks.push(r.header);
      for (const c of r.output) if (!isEmptyText(c)) chunks.push(c);
    });
    const suffixCtx: RenderContext = {
      idx: messages.length,
      isLast: true,
      prevMessage: messages.length ? messages[messages.length - 1]! : null,
      nextMessage: null,
      lastUserIndex: lastUser,
      inLastAssistantTurn: true,
    };
    const suffix = this.generationSuffix(opts.role ?? 'assistant', suffixCtx);
    if (suffix.length) chunks.push(textChunk(suffix));
    if (opts.prefill) chunks.push(this.encodeChunk(opts.prefill));
    return { chunks };
  }

  buildSupervisedExamples(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_turn'): SupervisedExample[] {
    if (this.hasExtensionProperty) return [this.buildSupervisedExample(messages, trainOnWhat)];
    let from: number;
    if (trainOnWhat === 'last_assistant_message') from = messages.length - 1;
    else if (trainOnWhat === 'last_assistant_turn') from = this.lastAssistantTurnStartIndex(messages);
    else if (trainOnWhat === 'all_assistant_messages') from = 0;
    else {
      throw new RenderError(
        `buildSupervisedExamples cannot split ${trainOnWhat} for a renderer without the extension property: ` +
          'it weights messages that are not turns the model produces, so there is no prompt to end each example at.',
      );
    }
    const out: SupervisedExample[] = [];
    for (let idx = Math.max(from, 0); idx < messages.length; idx++) {
      if (messages[idx]!.role === 'assistant') out.push(this.buildSupervisedExample(messages.slice(0, idx + 1), 'last_assistant_message'));
    }
    return out;
  }

  buildSupervisedExample(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_message'): SupervisedExample {
    const pieces: [ModelInputChunk, number][] = [];
    const bos = this.bosTokens();
    if (bos.length) pieces.push([textChunk(bos), 0]);
    const lastUser = lastUserIndex(messages);
    const turnStart = this.lastAssistantTurnStartIndex(messages.slice(0, -1));
    messages.forEach((m, idx) => {
      if (trainOnWhat === 'customized' && m.trainable === undefined) {
        throw new RenderError(`messages[${idx}]: with train_on_what customized every message needs a trainable field`);
      }
      if (trainOnWhat !== 'customized' && m.trainable !== undefined) {
        throw new RenderError(`messages[${idx}]: a trainable field needs train_on_what customized (got ${trainOnWhat})`);
      }
      const ctx = this.contextFor(messages, idx, lastUser, turnStart);
      const r = this.renderMessage(m, ctx);
      if (r.header) pieces.push([r.header, trainOnWhat === 'all_tokens' ? 1 : 0]);
      const w = this.outputIsTrained(m, ctx, trainOnWhat) ? 1 : 0;
      for (const c of r.output) pieces.push([c, w]);
      if (ctx.isLast && r.stopOverlap) pieces.push([r.stopOverlap, w]);
    });
    const modelInput: ModelInput = { chunks: pieces.map(([c]) => c) };
    const weights: number[] = [];
    for (const [c, w] of pieces) for (let i = chunkLength(c); i > 0; i--) weights.push(w);
    return { modelInput, weights: this.trainAfterTheGenerationPrompt(messages, trainOnWhat, modelInput, weights) };
  }

  /**
   * No loss on what the generation prompt supplies (a prefilled `<think>`): when the example starts with the
   * prompt for the turn it trains, the prompt's positions get weight 0. A disables-thinking renderer given a turn
   * that reasoned is refused, as the cookbook refuses it; any other mismatch leaves the weights as they are.
   */
  protected trainAfterTheGenerationPrompt(messages: readonly Message[], trainOnWhat: TrainOnWhat, modelInput: ModelInput, weights: number[]): number[] {
    const boundary = this.firstTrainedMessageIndex(messages, trainOnWhat);
    if (boundary === null || !isTextOnly(modelInput)) return weights;
    const prompt = toInts(this.buildGenerationPrompt(messages.slice(0, boundary)));
    const tokens = toInts(modelInput);
    const isPrefix = prompt.length <= tokens.length && prompt.every((t, i) => tokens[i] === t);
    if (!isPrefix) {
      if (this.disablesThinking) {
        throw new RenderError(
          `${this.name} has thinking turned off: its generation prompt closes the think block, which tells the model not to reason. ` +
            'This turn contains reasoning, so training on it would teach the model to reason anyway. Use the thinking version of this renderer, or remove the reasoning from this turn.',
        );
      }
      return weights;
    }
    return weights.map((w, i) => (i < prompt.length ? 0 : w));
  }

  /** Whether a message's output carries loss (families override one mode, as Kimi K2 does). */
  protected outputIsTrained(message: Message, ctx: RenderContext, trainOnWhat: TrainOnWhat): boolean {
    const isAssistant = message.role === 'assistant';
    switch (trainOnWhat) {
      case 'last_assistant_message':
        return ctx.isLast && isAssistant;
      case 'last_assistant_turn':
        return isAssistant && ctx.inLastAssistantTurn;
      case 'all_assistant_messages':
        return isAssistant;
      case 'all_messages':
      case 'all_tokens':
        return true;
      case 'all_user_and_system_messages':
        return message.role === 'user' || message.role === 'system';
      case 'customized':
        return message.trainable === true;
      default:
        throw new RenderError(`Unknown train_on_what: ${String(trainOnWhat)}`);
    }
  }

  /** The message the generation prompt stops before, for the modes that train the produced turn; else null. */
  protected firstTrainedMessageIndex(messages: readonly Message[], trainOnWhat: TrainOnWhat): number | null {
    let boundary: number;
    if (trainOnWhat === 'last_assistant_message') boundary = messages.length - 1;
    else if (trainOnWhat === 'last_assistant_turn') boundary = lastUserIndex(messages) + 1;
    else return null;
    if (boundary < 0 || boundary >= messages.length) return null;
    return messages[boundary]!.role === 'assistant' ? boundary : null;
  }
}
