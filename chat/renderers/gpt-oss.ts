// gpt-oss in OpenAI's Harmony format, as tinker-cookbook 0.6.1 renders it (renderers/gpt_oss.py):
//   <|start|>role<|channel|>channel<|message|>content<|end|>    (no newlines between messages)
// Assistant reasoning goes to the analysis channel, answers to final, tool calls to commentary addressed
// `to=functions.NAME` and ended by <|call|>; the last assistant message ends with <|return|>. Tools are declared
// in a developer message as a TypeScript-like `namespace functions`. The *_reasoning variants prepend OpenAI's
// system prompt with today's date and the reasoning effort; gpt_oss_no_sysprompt does not.
import { ensureList, ensureText } from '../content';
import type {
  ContentPart,
  FunctionSpec,
  GenerationOptions,
  Message,
  ModelInput,
  ParsedResponse,
  RenderContext,
  RenderedMessage,
  SupervisedExample,
  Tokenizer,
  ToolCall,
  TrainOnWhat,
  UnparsedToolCall,
} from '../types';
import { RenderError } from '../types';
import { BaseRenderer } from './base';
import type { RendererTable } from './registry-types';
import { requireTokenId } from './stop-token';
import { UNTERMINATED_TOOL_BLOCK_ERROR } from './tool-call-json';
import { harmonyToolDeclarations } from './harmony-tools';
import { PY_SPACE, pyIsBlank, pyJsonDumps, pyJsonLoads, pyStrip } from '../../python';

/** Renders as a real `system` message (user `system` messages become `developer`). */
const INTERNAL_SYSTEM_ROLE = '_gptoss_internal_system';

const SYSTEM_PROMPT =
  'You are ChatGPT, a large language model trained by OpenAI.\n' +
  'Knowledge cutoff: 2024-06\n' +
  'Current date: {current_date}\n\n' +
  'Reasoning: {reasoning_effort}\n\n' +
  '# Valid channels: analysis, commentary, final. Channel must be included for every message.';

/** Today as Python's `datetime.now().strftime("%Y-%m-%d")` (local time). */
function today(): string {
  const d = new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

export interface GptOssOptions {
  /** Prepend OpenAI's system prompt; requires reasoningEffort. */
  useSystemPrompt: boolean;
  reasoningEffort?: 'low' | 'medium' | 'high';
  /** Fixed date for the system prompt (default: today, as the cookbook does). */
  currentDate?: string;
}

export class GptOssRenderer extends BaseRenderer {
  private readonly returnToken: number;
  private readonly callToken: number;

  constructor(
    tokenizer: Tokenizer,
    readonly name: string,
    private readonly opts: GptOssOptions,
  ) {
    super(tokenizer);
    if (opts.useSystemPrompt !== (opts.reasoningEffort !== undefined)) {
      throw new Error(`${name}: reasoning effort must be set iff the system prompt is used`);
    }
    this.returnToken = requireTokenId(tokenizer, '<|return|>', name);
    this.callToken = requireTokenId(tokenizer, '<|call|>', name);
  }

  getStopSequences(): number[] {
    return [this.returnToken, this.callToken];
  }

  renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    if (message.role === 'tool') return this.renderToolResult(message);
    const role = message.role === INTERNAL_SYSTEM_ROLE ? 'system' : message.role === 'system' ? 'developer' : message.role;
    let output = '';
    let toolCalls: ToolCall[] = [];
    if (message.role === 'assistant') {
      const parts = ensureList(message.content);
      const text = parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
      const thinking = parts.map((p) => (p.type === 'thinking' ? p.thinking : '')).join('');
      toolCalls = message.tool_calls ?? [];
      if (thinking) output += `<|channel|>analysis<|message|>${thinking}<|end|><|start|>assistant`;
      if (toolCalls.length) {
        // Text beside tool calls is a commentary preamble.
        if (text) output += `<|channel|>commentary<|message|>${text}<|end|><|start|>assistant`;
        output += renderToolCalls(toolCalls);
      } else {
        output += `<|channel|>final<|message|>${text}`;
      }
    } else if (message.role === 'system') {
      output += `<|message|># Instructions\n\n${ensureText(message.content)}\n\n`;
    } else {
      output += `<|message|>${ensureText(message.content)}`;
    }
    // Tool calls already end in <|call|>; an answer ends the conversation with <|return|>, history with <|end|>.
    if (message.role === 'assistant') {
      if (!toolCalls.length) output += ctx.isLast ? '<|return|>' : '<|end|>';
    } else output += '<|end|>';
    return { header: this.encodeChunk(`<|start|>${role}`), output: [this.encodeChunk(output)] };
  }

  /** `<|start|>functions.NAME to=assistant<|channel|>commentary<|message|>RESULT<|end|>`: needs the tool's name. */
  private renderToolResult(message: Message): RenderedMessage {
    let toolName = message.name || 'unknown';
    if (!toolName.startsWith('functions.')) toolName = `functions.${toolName}`;
    return {
      header: this.encodeChunk(`<|start|>${toolName} to=assistant`),
      output: [this.encodeChunk(`<|channel|>commentary<|message|>${ensureText(message.content)}<|end|>`)],
    };
  }

  private systemMessage(): Message | null {
    if (!this.opts.useSystemPrompt) return null;
    const content = SYSTEM_PROMPT.replace('{current_date}', this.opts.currentDate ?? today()).replace(
      '{reasoning_effort}',
      this.opts.reasoningEffort!,
    );
    return { role: INTERNAL_SYSTEM_ROLE, content };
  }

  private withSystem(messages: readonly Message[]): Message[] {
    const system = this.systemMessage();
    return system ? [system, ...messages] : [...messages];
  }

  override buildGenerationPrompt(messages: readonly Message[], opts: GenerationOptions = {}): ModelInput {
    return super.buildGenerationPrompt(this.withSystem(messages), opts);
  }

  // Like the cookbook, the base class checks the example against buildGenerationPrompt of its (already
  // prefixed) messages, which prefixes the system prompt again: with a system prompt the weights stay as built.
  override buildSupervisedExample(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_message'): SupervisedExample {
    return super.buildSupervisedExample(this.withSystem(messages), trainOnWhat);
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const calls = tokens.filter((t) => t === this.callToken).length;
    const returns = tokens.filter((t) => t === this.returnToken).length;
    if (calls === 0 && returns === 0) {
      return { message: { role: 'assistant', content: this.tokenizer.decode(tokens) }, termination: 'malformed' };
    }
    for (const [count, what] of [
      [calls, '<|call|>'],
      [returns, '<|return|>'],
    ] as const) {
      if (count > 1) {
        throw new RenderError(
          `When parsing response, expected at most 1 ${what} token, but got ${count}. You probably are using the wrong stop tokens when sampling`,
        );
      }
    }
    const stops = [tokens.indexOf(this.callToken), tokens.indexOf(this.returnToken)].filter((i) => i >= 0);
    const text = this.tokenizer.decode(tokens.slice(0, Math.min(...stops)));
    const { parts, toolCalls, unparsed } = parseHarmonyOutput(text);
    const dangling = danglingToolHeader(text, toolCalls, unparsed);
    if (dangling) unparsed.push(dangling);
    const message: Message = { role: 'assistant', content: parts.length ? parts : text };
    if (toolCalls.length) message.tool_calls = toolCalls;
    if (unparsed.length) message.unparsed_tool_calls = unparsed;
    return { message, termination: 'stop_sequence' };
  }

  /**
   * With tools: a system message routing calls to the commentary channel, then a developer message with the
   * instructions and the tools as `namespace functions { ... }`.
   */
  override createConversationPrefixWithTools(tools: readonly FunctionSpec[], systemPrompt = ''): Message[] {
    const messages: Message[] = [];
    if (tools.length) {
      messages.push({ role: INTERNAL_SYSTEM_ROLE, content: "Calls to these tools must go to the commentary channel: 'functions'." });
    }
    const sections: string[] = [];
    if (systemPrompt) sections.push(`# Instructions\n\n${systemPrompt}`);
    if (tools.length) sections.push(harmonyToolDeclarations(tools));
    if (sections.length) messages.push({ role: 'developer', content: sections.join('\n\n') });
    return messages;
  }
}

/** Each call its own commentary message: ` to=functions.NAME<|channel|>commentary <|constrain|>json<|message|>ARGS<|call|>`. */
function renderToolCalls(calls: readonly ToolCall[]): string {
  return calls
    .map((c) => ` to=functions.${c.function.name}<|channel|>commentary <|constrain|>json<|message|>${c.function.arguments}<|call|>`)
    .join('<|start|>assistant');
}

interface HarmonyMessage {
  channel: string | null;
  recipient: string | null;
  content: string;
  rawText: string;
}

const CHANNEL_RE = new RegExp(`<\\|channel\\|>([^<${PY_SPACE}]+)`, 'u');
const RECIPIENT_RE = new RegExp(`to=([^${PY_SPACE}<]+)`, 'u');

/** The messages in a response: for each <|message|>, its header back to <|start|> and its body up to an end token. */
function parseHarmonyMessages(content: string): HarmonyMessage[] {
  const out: HarmonyMessage[] = [];
  const ends = ['<|end|>', '<|call|>', '<|return|>'];
  let idx = 0;
  for (;;) {
    const messageIdx = content.indexOf('<|message|>', idx);
    if (messageIdx === -1) break;
    // Python's rfind(sub, start, end): the match must lie wholly inside [idx, messageIdx).
    let headerStart = content.lastIndexOf('<|start|>', messageIdx - '<|start|>'.length);
    if (headerStart < idx) headerStart = idx;
    const header = content.slice(headerStart, messageIdx);
    const bodyStart = messageIdx + '<|message|>'.length;
    let endIdx = content.length;
    let endToken = '';
    for (const t of ends) {
      const at = content.indexOf(t, bodyStart);
      if (at !== -1 && at < endIdx) {
        endIdx = at;
        endToken = t;
      }
    }
    out.push({
      channel: CHANNEL_RE.exec(header)?.[1] ?? null,
      recipient: RECIPIENT_RE.exec(header)?.[1] ?? null,
      content: content.slice(bodyStart, endIdx),
      rawText: endToken ? content.slice(headerStart, endIdx + endToken.length) : content.slice(headerStart),
    });
    idx = endIdx + endToken.length;
  }
  return out;
}

function parseHarmonyOutput(content: string): { parts: ContentPart[]; toolCalls: ToolCall[]; unparsed: UnparsedToolCall[] } {
  const parts: ContentPart[] = [];
  const toolCalls: ToolCall[] = [];
  const unparsed: UnparsedToolCall[] = [];
  for (const msg of parseHarmonyMessages(content)) {
    if (pyIsBlank(msg.content)) continue;
    if (msg.recipient?.startsWith('functions.')) {
      const name = msg.recipient.slice('functions.'.length);
      try {
        pyJsonLoads(msg.content);
        // Harmony has no call ids.
        toolCalls.push({ type: 'function', function: { name, arguments: pyStrip(msg.content) } });
      } catch (e) {
        unparsed.push({ raw_text: msg.rawText, error: `Invalid JSON: ${(e as Error).message}` });
      }
      continue;
    }
    if (msg.channel === 'analysis') parts.push({ type: 'thinking', thinking: msg.content });
    else if (msg.channel === 'final' || msg.channel === 'commentary') parts.push({ type: 'text', text: msg.content });
  }
  return { parts, toolCalls, unparsed };
}

/** A `to=functions.` header that produced neither a call nor an unparsed call (e.g. the body never came). */
function danglingToolHeader(content: string, calls: ToolCall[], unparsed: UnparsedToolCall[]): UnparsedToolCall | null {
  const intents = content.split('to=functions.').length - 1;
  if (intents <= calls.length + unparsed.length) return null;
  const start = content.lastIndexOf('<|start|>');
  return {
    raw_text: start !== -1 ? content.slice(start) : content,
    error: `${UNTERMINATED_TOOL_BLOCK_ERROR}: 'to=functions.' tool-call header without a parsable arguments payload`,
  };
}

const factory =
  (name: string, opts: GptOssOptions) =>
  (tokenizer: Tokenizer): GptOssRenderer =>
    new GptOssRenderer(tokenizer, name, opts);

export const gptOssRenderers: RendererTable = {
  gpt_oss_no_sysprompt: factory('gpt_oss_no_sysprompt', { useSystemPrompt: false }),
  gpt_oss_low_reasoning: factory('gpt_oss_low_reasoning', { useSystemPrompt: true, reasoningEffort: 'low' }),
  gpt_oss_medium_reasoning: factory('gpt_oss_medium_reasoning', { useSystemPrompt: true, reasoningEffort: 'medium' }),
  gpt_oss_high_reasoning: factory('gpt_oss_high_reasoning', { useSystemPrompt: true, reasoningEffort: 'high' }),
};
