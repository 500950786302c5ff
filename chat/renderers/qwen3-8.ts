// qwen3_8_{xhigh,medium,low}_reasoning and qwen3_8_disable_thinking (cookbook renderers/qwen3_8.py): Qwen3.5's
// format with the Qwen3.8 template's changes. A reasoning-effort sentence opens the system message (a system
// message is made for it when there is none; medium has none); an empty system message is dropped; thinking is
// kept in history by default, so every assistant message that did not reason gets the empty think block wherever
// it sits; tool-call scalars are written as JSON (true, null), not Python (True, None).
import type { GenerationOptions, Message, ModelInput, RenderContext, SupervisedExample, Tokenizer, TrainOnWhat } from '../types';
import { RenderError } from '../types';
import type { ArgumentStyle } from './qwen3-5-tool-xml';
import { pyStrip } from '../../python';
import { Qwen3_5Renderer } from './qwen3-5';
import type { Qwen3VlOptions } from './qwen3-vl';
import type { RendererTable } from './registry-types';

export const REASONING_EFFORT_INSTRUCTIONS = {
  xhigh:
    'Reasoning effort is set to xhigh. Please think carefully through the task, validate key assumptions, consider ' +
    'plausible alternatives, and prioritize correctness, consistency, and clarity in the final answer.',
  medium: '',
  low: 'Reasoning effort is set to low. Keep your thinking brief and focused, moving directly to the conclusion without unnecessary elaboration.',
} as const;
export type ReasoningEffort = keyof typeof REASONING_EFFORT_INSTRUCTIONS;

const EMPTY_THINK = '<think>\n\n</think>\n\n';

export class Qwen3_8Renderer extends Qwen3_5Renderer {
  protected override readonly argumentStyle: ArgumentStyle = 'qwen3_8';
  readonly reasoningEffort: ReasoningEffort;

  constructor(tokenizer: Tokenizer, name: string, opts: Qwen3VlOptions & { reasoningEffort?: string } = {}) {
    // The HF template's preserve_thinking defaults to true: history keeps its thinking.
    super(tokenizer, name, { ...opts, stripThinkingFromHistory: opts.stripThinkingFromHistory ?? false });
    const effort = opts.reasoningEffort ?? 'xhigh';
    if (!(effort in REASONING_EFFORT_INSTRUCTIONS)) {
      throw new RenderError(`Unexpected reasoning effort ${effort}. Supported types are xhigh (default), medium, and low.`);
    }
    this.reasoningEffort = effort as ReasoningEffort;
  }

  private get instructions(): string {
    return this.disablesThinking ? '' : REASONING_EFFORT_INSTRUCTIONS[this.reasoningEffort];
  }

  /** The template's system-message handling (idempotent, as the supervised path renders its prompt again). */
  normalizeMessages(messages: readonly Message[]): Message[] {
    const ins = this.instructions;
    if (messages.length && messages[0]!.role === 'system') {
      const first = messages[0]!;
      const rest = messages.slice(1);
      let content = first.content;
      if (Array.isArray(content)) {
        const texts = content.flatMap((p) => (p.type === 'text' ? [p.text] : []));
        if (texts.length === content.length) content = texts.join('');
        else {
          // Non-text parts in a system message (the HF template rejects them): the sentence is put before them.
          if (!ins) return [...messages];
          const p0 = content[0]!;
          if (p0.type === 'text' && p0.text.startsWith(ins)) return [...messages];
          return [{ ...first, content: [{ type: 'text', text: `${ins}\n\n` }, ...content] }, ...rest];
        }
      }
      let text = pyStrip(content as string);
      if (!text && !ins) return rest;
      if (ins && !(text === ins || text.startsWith(`${ins}\n\n`))) text = text ? `${ins}\n\n${text}` : ins;
      return [{ ...first, content: text }, ...rest];
    }
    if (ins) {
      const synthetic: Message = { role: 'system', content: ins };
      // customized training needs a trainable field on every message, every other mode none.
      if (messages.some((m) => m.trainable !== undefined)) synthetic.trainable = false;
      return [synthetic, ...messages];
    }
    return [...messages];
  }

  override buildGenerationPrompt(messages: readonly Message[], opts?: GenerationOptions): ModelInput {
    return super.buildGenerationPrompt(this.normalizeMessages(messages), opts);
  }

  override buildSupervisedExample(messages: readonly Message[], trainOnWhat?: TrainOnWhat): SupervisedExample {
    return super.buildSupervisedExample(this.normalizeMessages(messages), trainOnWhat);
  }

  /** Thinking is left out only at or before the last user message (the template's rule with preserve off). */
  protected override stripsThinkingFor(m: Message, ctx: RenderContext): boolean {
    return this.stripThinkingFromHistory && m.role === 'assistant' && ctx.idx <= ctx.lastUserIndex;
  }

  /** Every assistant message that did not reason gets the empty block (thinking parts only: inline tags are text). */
  protected override assistantHeaderSuffix(m: Message, ctx: RenderContext): string {
    if (this.stripThinkingFromHistory && ctx.idx <= ctx.lastUserIndex) return '';
    const reasoned = Array.isArray(m.content) && m.content.some((p) => p.type === 'thinking');
    return reasoned ? '' : EMPTY_THINK;
  }
}

/** qwen3_8_disable_thinking: no effort sentence, and the prompt closes the think block. */
export class Qwen3_8DisableThinkingRenderer extends Qwen3_8Renderer {
  override readonly disablesThinking: boolean = true;

  protected override generationSuffixStr(role: string, ctx: RenderContext): string {
    return `${ctx.idx > 0 ? '\n' : ''}<|im_start|>${role}\n${EMPTY_THINK}`;
  }
}

export const qwen3_8Renderers: RendererTable = {
  qwen3_8_xhigh_reasoning: (tok, o) => new Qwen3_8Renderer(tok, 'qwen3_8_xhigh_reasoning', { imageProcessor: o.imageProcessor }),
  qwen3_8_medium_reasoning: (tok, o) => new Qwen3_8Renderer(tok, 'qwen3_8_medium_reasoning', { imageProcessor: o.imageProcessor, reasoningEffort: 'medium' }),
  qwen3_8_low_reasoning: (tok, o) => new Qwen3_8Renderer(tok, 'qwen3_8_low_reasoning', { imageProcessor: o.imageProcessor, reasoningEffort: 'low' }),
  qwen3_8_disable_thinking: (tok, o) => new Qwen3_8DisableThinkingRenderer(tok, 'qwen3_8_disable_thinking', { imageProcessor: o.imageProcessor }),
};
