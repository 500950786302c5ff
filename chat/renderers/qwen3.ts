// qwen3 family (Dec-2025, the Agent-lightning era): "<|im_start|>role\ncontent<|im_end|>" joined by "\n",
// no BOS, stop <|im_end|>. Tool calls are appended to assistant content as
// <tool_call>\n{"name": ..., "args": {...}}\n</tool_call> (joined by "\n"); parsing reads every block. Tools are
// declared as the Qwen3 chat template does (chat/tools.ts).
// `qwen3` (thinking) opens every assistant turn with "<think>\n" unless its content already has one, and
// drops the reasoning of past turns (everything up to the first "</think>").
import { withToolDeclarations } from '../tools';
import type { Message, ParsedResponse, Renderer, Tokenizer, ToolSpec } from '../types';
import { requireTokenId, splitAtStopToken } from './stop-token';
import { parseToolCallBlocks, toolCallPayload } from './tool-call';

/** Python's str.lstrip() for the whitespace a model writes. */
function lstrip(s: string): string {
  return s.replace(/^\s+/, '');
}

export type Qwen3Variant = 'qwen3' | 'qwen3_instruct' | 'qwen3_disable_thinking';

const EMPTY_THINK = '<think>\n\n</think>\n\n';

export class Qwen3Renderer implements Renderer {
  private readonly imEnd: number;
  constructor(
    readonly tokenizer: Tokenizer,
    readonly name: Qwen3Variant,
  ) {
    this.imEnd = requireTokenId(tokenizer, '<|im_end|>', name);
  }

  private renderMessage(idx: number, m: Message): { header: string; body: string | null } {
    let header = `${idx > 0 ? '\n' : ''}<|im_start|>${m.role}\n`;
    let body = m.content;
    // qwen3_disable_thinking: assistant turns carry an empty think block, which the thinking rule then drops.
    if (this.name === 'qwen3_disable_thinking' && m.role === 'assistant' && !body.includes('<think>')) body = EMPTY_THINK + body;
    if (this.name !== 'qwen3_instruct' && m.role === 'assistant') {
      if (body.includes('</think>')) body = lstrip(body.split('</think>')[1]);
      else if (!body.includes('<think>')) header += '<think>\n';
    }
    if (m.tool_calls && m.tool_calls.length > 0) {
      body += m.tool_calls.map((c) => `<tool_call>\n${toolCallPayload(c)}\n</tool_call>`).join('\n');
    }
    return { header, body: body + '<|im_end|>' };
  }

  buildGenerationPrompt(messages: readonly Message[]): number[] {
    const t = this.tokenizer;
    const out: number[] = [];
    messages.forEach((m, i) => {
      const r = this.renderMessage(i, m);
      out.push(...t.encode(r.header));
      if (r.body) out.push(...t.encode(r.body));
    });
    out.push(...t.encode(this.renderMessage(messages.length, { role: 'assistant', content: '' }).header));
    // The prefill is an empty reasoning block (its own chunk, as the cookbook encodes it).
    if (this.name === 'qwen3_disable_thinking') out.push(...t.encode(EMPTY_THINK));
    return out;
  }

  stopSequences(): number[] {
    return [this.imEnd];
  }

  withTools(messages: readonly Message[], tools: readonly ToolSpec[]): Message[] {
    return withToolDeclarations(messages, tools);
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const split = splitAtStopToken(tokens, this.tokenizer, this.imEnd);
    if (!split.ok) return split;
    const { calls, ok } = parseToolCallBlocks(split.message.content);
    if (!ok) return { message: split.message, ok: false };
    return calls.length ? { message: { ...split.message, tool_calls: calls }, ok: true } : split;
  }
}
