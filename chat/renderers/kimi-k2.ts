// Kimi K2 (moonshotai/Kimi-K2-Thinking), as tinker-cookbook 0.6.1 renders it (renderers/kimi_k2.py):
//
//   <|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>
//   <|im_user|>user<|im_middle|>Hi<|im_end|><|im_assistant|>assistant<|im_middle|><think>...</think>Hello<|im_end|>
//
// A default system message is added when there is none (after a leading tool_declare message). Every assistant
// message opens with a think block; its reasoning is kept only in the turn being produced (from the last assistant
// message that called no tool onwards), else the block is empty. Tool calls follow the text:
//   <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>...<|tool_calls_section_end|>
// and a tool result is `<|im_system|>NAME<|im_middle|>## Return of ID\n...`. Tools are declared as sorted compact
// JSON in a `tool_declare` message before the system message.
import { ensureList, ensureText } from '../content';
import { textChunk } from '../model-input';
import { PY_SPACE, pyJsonDumps, pyJsonLoads, PyJsonError, pyStrip, type PyValue } from '../../python';
import {
  RenderError,
  type FunctionSpec,
  type GenerationOptions,
  type Message,
  type ModelInput,
  type ModelInputChunk,
  type ParsedResponse,
  type RenderContext,
  type RenderedMessage,
  type SupervisedExample,
  type Tokenizer,
  type ToolCall,
  type TrainOnWhat,
  type UnparsedToolCall,
  type ContentPart,
} from '../types';
import { BaseRenderer } from './base';
import type { RendererOptions, RendererTable } from './registry-types';
import { parseResponseForStopToken, requireTokenId } from './stop-token';
import { parseThinkBlocks } from './think-blocks';
import { detectUnterminatedToolBlock } from './tool-call-json';

export const KIMI_DEFAULT_SYSTEM_PROMPT = 'You are Kimi, an AI assistant created by Moonshot AI.';

// Python's `\s` on str patterns (Unicode whitespace) and `\d` (any decimal digit).
const S = `[${PY_SPACE}]`;
const SECTION_RE = /<\|tool_calls_section_begin\|>([\s\S]*?)<\|tool_calls_section_end\|>|<\|tool_call_section_begin\|>([\s\S]*?)<\|tool_call_section_end\|>/u;
const CALL_RE = new RegExp(
  `<\\|tool_call_begin\\|>${S}*([^<]+:\\p{Nd}+)${S}*<\\|tool_call_argument_begin\\|>${S}*([\\s\\S]*?)${S}*<\\|tool_call_end\\|>`,
  'gu',
);
const DANGLING_MARKERS: [string, string][] = [
  ['<|tool_calls_section_begin|>', '<|tool_calls_section_end|>'],
  ['<|tool_call_section_begin|>', '<|tool_call_section_end|>'],
  ['<|tool_call_begin|>', '<|tool_call_end|>'],
];

/** `functions.get_weather:0` → `get_weather`. */
function toolNameOf(id: string): string {
  if (!id) return '';
  let name = id.split(':')[0]!;
  const dot = name.indexOf('.');
  if (dot >= 0) name = name.slice(dot + 1);
  return name;
}

function parseSection(section: string): { calls: ToolCall[]; unparsed: UnparsedToolCall[] } {
  const calls: ToolCall[] = [];
  const unparsed: UnparsedToolCall[] = [];
  for (const m of section.matchAll(CALL_RE)) {
    const id = pyStrip(m[1]!);
    const args = pyStrip(m[2]!);
    try {
      pyJsonLoads(args);
      const call: ToolCall = { type: 'function', function: { name: toolNameOf(id), arguments: args } };
      if (id) call.id = id;
      calls.push(call);
    } catch (e) {
      if (!(e instanceof PyJsonError)) throw e;
      unparsed.push({ raw_text: m[0], error: `Invalid JSON: ${e.message}` });
    }
  }
  return { calls, unparsed };
}

export class KimiK2Renderer extends BaseRenderer {
  constructor(
    tokenizer: Tokenizer,
    readonly name: string,
    protected readonly stripThinkingFromHistory = true,
    protected readonly opts: RendererOptions = {},
  ) {
    super(tokenizer);
  }

  protected get endMessageToken(): number {
    return requireTokenId(this.tokenizer, '<|im_end|>', this.name);
  }

  getStopSequences(): number[] {
    return [this.endMessageToken];
  }

  /** The default system message where the HF template adds one (after a leading tool_declare). */
  protected ensureSystemMessage(messages: readonly Message[]): Message[] {
    const dflt: Message = { role: 'system', content: KIMI_DEFAULT_SYSTEM_PROMPT };
    if (!messages.length) return [dflt];
    const first = messages[0]!.role;
    if (first === 'tool_declare') {
      if (messages.length >= 2 && messages[1]!.role === 'system') return [...messages];
      return [messages[0]!, dflt, ...messages.slice(1)];
    }
    if (first !== 'system') return [dflt, ...messages];
    return [...messages];
  }

  renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const role = message.role;
    let header: string;
    if (role === 'user') header = `<|im_user|>${role}<|im_middle|>`;
    else if (role === 'assistant') header = `<|im_assistant|>${role}<|im_middle|>`;
    else if (role === 'tool') {
      header = `<|im_system|>${message.name || role}<|im_middle|>` + `## Return of ${message.tool_call_id ?? ''}\n`;
    } else header = `<|im_system|>${role}<|im_middle|>`;

    const content = message.content;
    let output: ModelInputChunk[];
    if (role === 'assistant') {
      const parts = ensureList(content);
      const thinking = parts.map((p) => (p.type === 'thinking' ? p.thinking : '')).join('');
      const text = parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
      let out = (ctx.inLastAssistantTurn || !this.stripThinkingFromHistory) && thinking ? `<think>${thinking}</think>` : '<think></think>';
      out += text;
      if (message.tool_calls?.length) {
        out += '<|tool_calls_section_begin|>';
        message.tool_calls.forEach((call, idx) => {
          const id = call.id || `functions.${call.function.name}:${idx}`;
          out += `<|tool_call_begin|>${id}<|tool_call_argument_begin|>${call.function.arguments}<|tool_call_end|>`;
        });
        out += '<|tool_calls_section_end|>';
      }
      out += '<|im_end|>';
      output = [textChunk(this.tokenizer.encode(out))];
    } else if (typeof content === 'string' || (content.length === 1 && content[0]!.type === 'text')) {
      output = [textChunk(this.tokenizer.encode(ensureText(content) + '<|im_end|>'))];
    } else {
      output = this.encodeMultipart([...content, { type: 'text', text: '<|im_end|>' }]);
    }
    return { header: textChunk(this.tokenizer.encode(header)), output };
  }

  protected encodeMultipart(_content: ContentPart[]): ModelInputChunk[] {
    throw new RenderError('Multipart/Image content encoding is not supported for Kimi K2 renderer');
  }

  override buildGenerationPrompt(messages: readonly Message[], opts: GenerationOptions = {}): ModelInput {
    return super.buildGenerationPrompt(this.ensureSystemMessage(messages), opts);
  }

  override buildSupervisedExample(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_message'): SupervisedExample {
    return super.buildSupervisedExample(this.ensureSystemMessage(messages), trainOnWhat);
  }

  /** One example per user turn (thinking is stripped from history, so one sequence cannot train every turn). */
  override buildSupervisedExamples(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_turn'): SupervisedExample[] {
    if (trainOnWhat === 'last_assistant_message' || trainOnWhat === 'last_assistant_turn') {
      return [this.buildSupervisedExample(messages, trainOnWhat)];
    }
    const userIdx = messages.flatMap((m, i) => (m.role === 'user' ? [i] : []));
    return [...userIdx.slice(1), messages.length].map((end) =>
      this.buildSupervisedExample(messages.slice(0, end), trainOnWhat === 'all_assistant_messages' ? 'last_assistant_turn' : trainOnWhat),
    );
  }

  /** The produced turn starts after the last assistant message that called no tool (Kimi keeps its reasoning). */
  protected override lastAssistantTurnStartIndex(messages: readonly Message[]): number {
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i]!;
      if (m.role === 'assistant' && !m.tool_calls?.length) return i + 1;
    }
    return 0;
  }

  /** Sampled tokens as they would read with the prompt's prefill (none for K2). */
  protected normalizeResponse(tokens: readonly number[]): number[] {
    return [...tokens];
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const parsed = parseResponseForStopToken(this.normalizeResponse(tokens), this.tokenizer, this.endMessageToken);
    if (parsed.termination === 'malformed') return parsed;
    const message = parsed.message;
    const content = message.content as string;
    const section = SECTION_RE.exec(content);
    let text = content;
    if (section) {
      text = content.slice(0, section.index);
      const { calls, unparsed } = parseSection(section[1] ?? section[2]!);
      if (calls.length) message.tool_calls = calls;
      if (unparsed.length) message.unparsed_tool_calls = unparsed;
    }
    for (const [open, close] of DANGLING_MARKERS) {
      const dangling = detectUnterminatedToolBlock(content, open, close);
      if (dangling) {
        message.unparsed_tool_calls = [...(message.unparsed_tool_calls ?? []), dangling];
        break;
      }
    }
    message.content = parseThinkBlocks(text) ?? text;
    return parsed;
  }

  /** A tool_declare message (sorted compact JSON of OpenAI-style tools) and the system message. */
  override createConversationPrefixWithTools(tools: readonly FunctionSpec[], systemPrompt = ''): Message[] {
    const out: Message[] = [];
    if (tools.length) {
      const payload = tools.map((t) => ({ type: 'function', function: t as unknown as PyValue }));
      out.push({ role: 'tool_declare', content: pyJsonDumps(payload, { separators: [',', ':'], sortKeys: true }) });
    }
    out.push({ role: 'system', content: systemPrompt || KIMI_DEFAULT_SYSTEM_PROMPT });
    return out;
  }
}

export const kimiK2Renderers: RendererTable = {
  kimi_k2: (tokenizer: Tokenizer) => new KimiK2Renderer(tokenizer, 'kimi_k2', true),
};
