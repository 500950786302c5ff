// DeepSeek V4.1 as tinker-cookbook 0.6.1 renders it (renderers/deepseek_v4_1.py, after the model's template):
//   <｜begin▁of▁sentence｜><｜System｜>Reasoning Effort: 75 (...)\n\n{system}
//   <｜User｜>{question}<｜Assistant｜><think>{reasoning}</think>{answer}<｜end▁of▁sentence｜>
// Thinking mode opens every prompt with the effort line (75 high = deepseekv4_1, 50 low, 100 max); chat mode
// (deepseekv4_1_disable_thinking) has none and ends the assistant marker with </think>. Tools follow the system
// text; calls are DSML blocks after the answer, one parameter per argument; tool results are <tool_result> blocks
// of a user turn, in call order, and consecutive tool/user messages form one turn joined by \n\n. Reasoning before
// the last user turn is dropped unless tools are declared or the variant is _preserve_thinking.
import { ensureText } from '../content';
import { textChunk } from '../model-input';
import type {
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
import { pyIsBlank, pyJsonDumps, pyJsonLoads, pyRepr, type PyJson } from '../../python';
import type { RendererTable } from './registry-types';
import { parseResponseForStopToken, requireTokenId } from './stop-token';
import { parseThinkBlocks } from './think-blocks';
import { detectUnterminatedToolBlock } from './tool-call-json';

const effortLine = (budget: number) =>
  `Reasoning Effort: ${budget} (range 1-100, the higher the value, the more thorough the reasoning)\n\n`;

const TOOLS_TEMPLATE =
  '## Tools\n\nYou have access to a set of tools to help answer the user\'s question. You can invoke tools by writing a "<｜DSML｜ calls>" block like the following:\n\n' +
  '<｜DSML｜ calls>\n<｜DSML｜ invoke name="$TOOL_NAME">\n<｜DSML｜ parameter name="$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE</｜DSML｜ parameter>\n...\n</｜DSML｜ invoke>\n' +
  '<｜DSML｜ invoke name="$TOOL_NAME2">\n...\n</｜DSML｜ invoke>\n</｜DSML｜ calls>\n\n' +
  'String parameters should be specified as is and set `string="true"`. For all other types (numbers, booleans, arrays, objects), pass the value in JSON format and set `string="false"`.\n\n' +
  'If thinking_mode is enabled (triggered by <think>), you MUST output your complete reasoning inside <think>...</think> BEFORE any tool calls or final response.\n\n' +
  'Otherwise, output directly after </think> with tool calls or final response.\n\n' +
  '### Available Tool Schemas\n\n{tool_schemas}\n\n' +
  'You MUST strictly follow the above defined tool name and parameter schemas to invoke tool calls.\n';

const CALLS_OPEN = '<｜DSML｜ calls>';
const CALLS_CLOSE = '</｜DSML｜ calls>';
const CALLS_BLOCK_RE = /(?:\n\n)?<｜DSML｜ calls>[\s\S]*?<\/｜DSML｜ calls>/u;
const INVOKE_RE = /<｜DSML｜ invoke name="([\s\S]*?)">\n([\s\S]*?)<\/｜DSML｜ invoke>/gu;
const PARAM_RE = /<｜DSML｜ parameter name="([\s\S]*?)" string="(true|false)">([\s\S]*?)<\/｜DSML｜ parameter>/gu;

/** Declared tools travel as a `tool_declare` message until the conversation is shaped (cookbook's own role). */
const TOOL_DECLARE = 'tool_declare';

const isUserTurn = (m: Message) => m.role === 'user' || m.role === 'tool';

function renderTools(declare: Message): string {
  const specs = pyJsonLoads(ensureText(declare.content));
  if (!Array.isArray(specs)) throw new RenderError('DeepSeek V4.1 tool declaration must be a JSON list');
  const schemas = specs.map((t) => pyJsonDumps(t instanceof Map ? t.get('function') : null, { ensureAscii: false })).join('\n');
  return TOOLS_TEMPLATE.replace('{tool_schemas}', schemas);
}

/** A call's arguments as a dict (JSON text, even encoded twice); anything else becomes {"arguments": text}. */
function argumentsDict(args: string): Map<string, PyJson> {
  let parsed: PyJson = args;
  for (let i = 0; i < 2 && typeof parsed === 'string'; i++) {
    try {
      parsed = pyJsonLoads(parsed);
    } catch {
      break;
    }
  }
  return parsed instanceof Map ? parsed : new Map([['arguments', args]]);
}

function renderToolCalls(calls: readonly ToolCall[]): string {
  const invokes = calls.map((c) => {
    const params = [...argumentsDict(c.function.arguments).entries()].map(([key, value]) =>
      typeof value === 'string'
        ? `<｜DSML｜ parameter name="${key}" string="true">${value}</｜DSML｜ parameter>`
        : `<｜DSML｜ parameter name="${key}" string="false">${pyJsonDumps(value, { ensureAscii: false })}</｜DSML｜ parameter>`,
    );
    return `<｜DSML｜ invoke name="${c.function.name}">\n${params.join('\n')}\n</｜DSML｜ invoke>`;
  });
  return `\n\n${CALLS_OPEN}\n${invokes.join('\n')}\n${CALLS_CLOSE}`;
}

/** [reasoning, answer] of an assistant message. */
function splitAssistantContent(message: Message): [string, string] {
  const c = message.content;
  if (typeof c === 'string') return ['', c];
  let reasoning = '';
  let text = '';
  for (const p of c) {
    if (p.type === 'thinking') reasoning += p.thinking;
    else if (p.type === 'text') text += p.text;
    else throw new RenderError(`DeepSeek V4.1 renderer does not support '${p.type}' content parts`);
  }
  return [reasoning, text];
}

/** A user turn's tool results sorted into call order (stable; an unknown id sorts as call 0), in the tool slots. */
function sortToolResults(turn: Message[], callOrder: Map<string, number>): Message[] {
  const tools = turn
    .map((m, i) => ({ m, i }))
    .filter(({ m }) => m.role === 'tool')
    .sort((a, b) => (callOrder.get(a.m.tool_call_id || '') ?? 0) - (callOrder.get(b.m.tool_call_id || '') ?? 0) || a.i - b.i)
    .map(({ m }) => m);
  let next = 0;
  return turn.map((m) => (m.role === 'tool' ? tools[next++]! : m));
}

/**
 * The conversation in the template's turns, every index kept: the tool declaration folded into the leading
 * system message, and each run of tool/user messages rendered by its first message (the rest empty), so the
 * turn is encoded as one string as the template encodes it.
 */
function normalizeMessages(messages: readonly Message[]): Message[] {
  const result = [...messages];
  result.forEach((message, idx) => {
    if (message.role !== TOOL_DECLARE) return;
    const tools = renderTools(message);
    if (idx === 0) result[0] = { ...message, role: 'system', content: '\n\n' + tools };
    else if (idx === 1 && result[0]!.role === 'system') {
      result[0] = { ...result[0]!, content: `${ensureText(result[0]!.content)}\n\n${tools}` };
      result[1] = { ...message, content: '' };
    } else {
      throw new RenderError(
        'DeepSeek V4.1 tool declarations must come first or right after the first system message; use create_conversation_prefix_with_tools',
      );
    }
  });
  let callOrder = new Map<string, number>();
  for (let idx = 0; idx < result.length; ) {
    const calls = result[idx]!.tool_calls;
    if (calls?.length) callOrder = new Map(calls.flatMap((c, order) => (c.id ? [[c.id, order] as [string, number]] : [])));
    if (!isUserTurn(result[idx]!)) {
      idx++;
      continue;
    }
    let end = idx;
    while (end + 1 < result.length && isUserTurn(result[end + 1]!)) end++;
    const blocks = sortToolResults(result.slice(idx, end + 1), callOrder).map((m) =>
      m.role === 'tool' ? `<tool_result>${ensureText(m.content)}</tool_result>` : ensureText(m.content),
    );
    result[idx] = { ...result[idx]!, content: blocks.join('\n\n') };
    for (let rest = idx + 1; rest <= end; rest++) result[rest] = { ...result[rest]!, content: '' };
    idx = end + 1;
  }
  return result;
}

/** The template's last user turn: user and tool messages, and system messages after the first. */
function dropReasoningThrough(messages: readonly Message[]): number {
  let last = -1;
  messages.forEach((m, i) => {
    if (isUserTurn(m) || (m.role === 'system' && i > 0)) last = i;
  });
  return last;
}

export class DeepSeekV4_1Renderer extends BaseRenderer {
  private readonly eos: number;
  private readonly bos: number[];
  /**
   * While a builder runs: assistant messages at or before this index render without reasoning (-1: none). The
   * template decides it from the whole conversation; the base class's re-entry (the generation prompt of a
   * prefix, to mask the prompt's tokens) keeps the whole conversation's value, as the cookbook's context var does.
   */
  private dropThrough: number | null = null;

  constructor(
    tokenizer: Tokenizer,
    readonly name: string,
    /** 1-100, or null for chat mode. */
    private readonly reasoningEffort: number | null,
    private readonly stripThinkingFromHistory = true,
  ) {
    super(tokenizer);
    this.eos = requireTokenId(tokenizer, '<｜end▁of▁sentence｜>', name);
    this.bos = tokenizer.encode('<｜begin▁of▁sentence｜>');
  }

  private get thinking(): boolean {
    return this.reasoningEffort !== null;
  }

  override get hasExtensionProperty(): boolean {
    return !(this.thinking && this.stripThinkingFromHistory);
  }

  protected override bosTokens(): number[] {
    return this.bos;
  }

  getStopSequences(): number[] {
    return [this.eos];
  }

  /**
   * Encode `prefix + text` as one string and split it into (prefix, text) tokens: BPE merges across the boundary
   * (the effort line's \n\n with a tools-only system message's leading \n\n), and a merged token goes with the prefix.
   */
  private encodeAfter(prefix: string, text: string): [number[], number[]] {
    const tokens = this.tokenizer.encode(prefix + text);
    const prefixLength = codePoints(prefix);
    let split = 0;
    while (split < tokens.length && codePoints(this.tokenizer.decode(tokens.slice(0, split))) < prefixLength) split++;
    return [tokens.slice(0, split), tokens.slice(split)];
  }

  /** Text before the first message: the system marker and, in thinking mode, the effort line. */
  private opening(role: string): string {
    if (this.thinking) return '<｜System｜>' + effortLine(this.reasoningEffort!);
    return role === 'system' ? '<｜System｜>' : '';
  }

  /** A later system message counts as a user turn, as in the template. */
  protected override lastAssistantTurnStartIndex(messages: readonly Message[]): number {
    let last = -1;
    messages.forEach((m, i) => {
      if (m.role === 'user' || (m.role === 'system' && i > 0)) last = i;
    });
    return last + 1;
  }

  renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const role = message.role;
    const opening = ctx.idx === 0 ? this.opening(role) : '';
    if (role === 'system') {
      const [header, output] = this.encodeAfter(ctx.idx === 0 ? opening : '<｜System｜>', ensureText(message.content));
      return { header: textChunk(header), output: output.length ? [textChunk(output)] : [] };
    }
    if (role === TOOL_DECLARE) return { output: [] };
    if (isUserTurn(message)) {
      if (ctx.prevMessage && isUserTurn(ctx.prevMessage)) return { output: [] };
      const text = this.tokenizer.encode(ensureText(message.content));
      return { header: this.encodeChunk(opening + '<｜User｜>'), output: text.length ? [textChunk(text)] : [] };
    }
    if (role !== 'assistant') throw new RenderError(`Unsupported role for DeepSeek V4.1: ${role}`);
    const keepsReasoning = this.thinking && ctx.idx > (this.dropThrough ?? -1);
    // The template ends a user turn with the assistant marker; after no such turn there is none.
    const prev = ctx.prevMessage;
    const followsUserTurn = prev !== null && (isUserTurn(prev) || (prev.role === 'system' && ctx.idx > 1));
    const marker = '<｜Assistant｜>' + (keepsReasoning ? '<think>' : '</think>');
    const headerText = opening + (followsUserTurn ? marker : '');
    const [reasoning, answer] = splitAssistantContent(message);
    let body = (keepsReasoning ? reasoning + '</think>' : '') + answer;
    if (message.tool_calls?.length) body += renderToolCalls(message.tool_calls);
    return {
      header: headerText ? this.encodeChunk(headerText) : null,
      output: [textChunk([...this.tokenizer.encode(body), this.eos])],
    };
  }

  /** Runs a builder over the conversation in the template's shape (once: a re-entry sees it shaped already). */
  private inConversation<T>(messages: readonly Message[], build: (shaped: readonly Message[]) => T): T {
    if (this.dropThrough !== null) return build(messages);
    const shaped = normalizeMessages(messages);
    const drops = this.stripThinkingFromHistory && !messages.some((m) => m.role === TOOL_DECLARE);
    this.dropThrough = drops ? dropReasoningThrough(shaped) : -1;
    try {
      return build(shaped);
    } finally {
      this.dropThrough = null;
    }
  }

  override buildGenerationPrompt(messages: readonly Message[], opts: GenerationOptions = {}): ModelInput {
    return this.inConversation(messages, (m) => super.buildGenerationPrompt(m, opts));
  }

  /** Tool and user messages that share a turn are trained or masked together, as one message. */
  override buildSupervisedExample(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_message'): SupervisedExample {
    return this.inConversation(messages, (m) => super.buildSupervisedExample(m, trainOnWhat));
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const parsed = parseResponseForStopToken(this.normalizeResponse(tokens), this.tokenizer, this.eos);
    if (parsed.termination === 'malformed') return parsed;
    const message = parsed.message;
    let content = message.content as string;
    const block = CALLS_BLOCK_RE.exec(content);
    const { calls, unparsed } = block ? parseToolCalls(block[0]) : { calls: [] as ToolCall[], unparsed: [] as UnparsedToolCall[] };
    if (block) {
      // The format ends the response with one calls block; anything after it is malformed.
      const after = content.slice(block.index + block[0].length);
      if (!pyIsBlank(after)) unparsed.push({ raw_text: after, error: 'Invalid DSML: output after calls block' });
      content = content.slice(0, block.index);
    }
    let dangling = detectUnterminatedToolBlock(content, CALLS_OPEN, CALLS_CLOSE);
    if (!dangling && content.includes('｜DSML｜')) {
      // The model writes this token only for tool calls, so any left over is a malformed call.
      dangling = { raw_text: content, error: 'Invalid DSML: marker outside a calls block' };
    }
    if (dangling) unparsed.push(dangling);
    if (calls.length) message.tool_calls = calls;
    if (unparsed.length) message.unparsed_tool_calls = unparsed;
    message.content = parseThinkBlocks(content) ?? content;
    return parsed;
  }

  /** Thinking mode: put back the prefilled <think> when the response closes a block it did not open. */
  private normalizeResponse(tokens: readonly number[]): readonly number[] {
    if (!this.thinking) return tokens;
    const open = requireTokenId(this.tokenizer, '<think>', this.name);
    const close = requireTokenId(this.tokenizer, '</think>', this.name);
    return tokens.includes(close) && tokens[0] !== open ? [open, ...tokens] : tokens;
  }

  /** The system prompt, then the tools as a `tool_declare` message (folded into the system turn when rendered). */
  override createConversationPrefixWithTools(tools: readonly FunctionSpec[], systemPrompt = ''): Message[] {
    const messages: Message[] = [];
    if (systemPrompt) messages.push({ role: 'system', content: systemPrompt });
    if (tools.length) messages.push({ role: TOOL_DECLARE, content: pyJsonDumps(tools.map((t) => ({ type: 'function', function: t }))) });
    return messages;
  }
}

/** Python len(): code points, not UTF-16 units. */
function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** The calls of a DSML block; a malformed invoke is kept unparsed with why. */
function parseToolCalls(block: string): { calls: ToolCall[]; unparsed: UnparsedToolCall[] } {
  let body = block.startsWith('\n\n') ? block.slice(2) : block;
  if (body.startsWith(CALLS_OPEN)) body = body.slice(CALLS_OPEN.length);
  if (body.endsWith(CALLS_CLOSE)) body = body.slice(0, -CALLS_CLOSE.length);
  const invokes = [...body.matchAll(INVOKE_RE)];
  if (!invokes.length || !pyIsBlank(body.replace(INVOKE_RE, ''))) {
    return { calls: [], unparsed: [{ raw_text: block, error: 'Invalid DSML: malformed invoke' }] };
  }
  const calls: ToolCall[] = [];
  const unparsed: UnparsedToolCall[] = [];
  for (const invoke of invokes) {
    const [raw, name, paramsText] = [invoke[0], invoke[1]!, invoke[2]!];
    const args = new Map<string, PyJson>();
    try {
      if (pyIsBlank(name)) throw new Error('empty function name');
      if (!pyIsBlank(paramsText.replace(PARAM_RE, ''))) throw new Error('text outside parameters');
      for (const [, key, isString, value] of paramsText.matchAll(PARAM_RE)) {
        if (pyIsBlank(key!)) throw new Error('empty parameter name');
        if (args.has(key!)) throw new Error(`duplicate parameter ${pyRepr(key!)}`);
        args.set(key!, isString === 'true' ? value! : pyJsonLoads(value!));
      }
    } catch (e) {
      unparsed.push({ raw_text: raw, error: `Invalid DSML: ${(e as Error).message}` });
      continue;
    }
    calls.push({ type: 'function', function: { name, arguments: pyJsonDumps(args) } });
  }
  return { calls, unparsed };
}

const v41 = (name: string, effort: number | null, strip = true) => (tokenizer: Tokenizer) =>
  new DeepSeekV4_1Renderer(tokenizer, name, effort, strip);

export const deepseekV4_1Renderers: RendererTable = {
  deepseekv4_1: v41('deepseekv4_1', 75),
  deepseekv4_1_low_reasoning: v41('deepseekv4_1_low_reasoning', 50),
  deepseekv4_1_max_reasoning: v41('deepseekv4_1_max_reasoning', 100),
  deepseekv4_1_disable_thinking: v41('deepseekv4_1_disable_thinking', null),
  deepseekv4_1_preserve_thinking: v41('deepseekv4_1_preserve_thinking', 75, false),
};
