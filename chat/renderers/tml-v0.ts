// tml_v0: Thinking Machines' Inkling format (cookbook renderers/tml_v0.py, which hands whole conversations to the
// tml-renderers package). Learned by running tml-renderers 0.2.1 (PyPI) as a black box; the parity test checks it.
//
// The format, in short:
// - A conversation is a flat list of single-part messages. Each renders as
//   <|message_ROLE|> [author name, plain text] <|content_KIND|> body <|end_message|>
//   with ROLE user / model / system / tool and KIND text / thinking / tool_error / xml (tool declarations) /
//   invoke_tool_json (a tool call). A chat message with several parts (thinking, text, tool calls) becomes one such
//   message per part, each with its own header; no separators, no BOS, no chat-template whitespace.
// - A model turn ends with a lone <|content_model_end_sampling|> (no header, no end_message): it is the stop token,
//   and it is trained. Earlier turns keep their thinking; every message frames itself, so prompts extend.
// - A tool result: <|message_tool|> tool name <|content_text|> result. A tool call: <|message_model|> tool name
//   <|content_invoke_tool_json|> {"name":"f","args":{...}}, the arguments sorted by name, each value as serde_json
//   writes it (compact, unicode as is, 1e16 not 1e+16). Call ids are not rendered.
// - Tool declarations: a system message named tool_declare, <|content_xml|>, a JSON list of
//   {"description","name","parameters","type"} with every object's keys sorted.
// - Reasoning effort: a system message "Thinking effort level: X" right after the leading system messages, in
//   prompts and in training examples alike; X is the effort in thousandths rounded half-even to hundredths and
//   written short (0.9, 0.12, 0, 1). The cookbook's default effort is 0.9.
// - The generation prompt is the rendered conversation and nothing more: the model writes the <|message_model|>
//   headers itself. No prefill, only the assistant role.
// - Training: every token of a trained model turn (headers, body, end_message, the end token) has weight 1, all
//   else 0. The example stops after its last trained token; with nothing trained there is no example. Trained
//   turns: all assistant messages, the last one, those of the last turn, or those marked trainable (customized);
//   the other TrainOnWhat modes are refused, as tml-renderers trains only model messages.
// - Parsing a sample: the same framing read back; thinking and text parts in order, tool calls with ids
//   `functions.NAME:K`; a sample ending in the end token stopped, one without it was cut off (a last body cut
//   short is dropped); one that does not frame (text before any header, a header with nothing after it, nothing
//   but a cut message, a tool call
//   that does not parse) comes back as its decoded text, malformed.
// Images: tml-renderers sends them as image-asset pointers whose token count it computes itself; that rule is not
// reproduced here, so this renderer does not see images (the proxy refuses them with a 400).
import { textChunk } from '../model-input';
import { pyJsonDumps, pyJsonLoads, type PyJson } from '../../python';
import { byteOrder, serdeJson } from '../serde-json';
import {
  RenderError,
  type ContentPart,
  type FunctionSpec,
  type GenerationOptions,
  type Message,
  type ModelInput,
  type ParsedResponse,
  type RenderedMessage,
  type SupervisedExample,
  type Tokenizer,
  type ToolCall,
  type TrainOnWhat,
} from '../types';
import { BaseRenderer } from './base';
import type { RendererOptions, RendererTable } from './registry-types';

export const DEFAULT_EFFORT = 0.9;

export interface TmlV0GenerationOptions extends GenerationOptions {
  /** Reasoning effort in [0, 1); default 0.9 (the cookbook's). */
  effort?: number;
}

type Kind = 'user' | 'model' | 'system' | 'tool';
type Body =
  | { type: 'text' | 'thinking' | 'tool_error'; text: string }
  | { type: 'declare'; json: string }
  | { type: 'invoke'; name: string; args: [string, PyJson][]; id?: string }
  | { type: 'end' };
interface Native {
  kind: Kind;
  name?: string;
  body: Body;
  weight: number;
}

const ROLE_KIND: Readonly<Record<string, Kind>> = { user: 'user', assistant: 'model', system: 'system', tool: 'tool' };
const KIND_ROLE: Readonly<Record<Kind, string>> = { user: 'user', model: 'assistant', system: 'system', tool: 'tool' };

function validateEffort(effort: number): void {
  if (!Number.isFinite(effort) || effort < 0 || effort >= 1) throw new RenderError(`thinking effort must be a finite number in [0, 1), got ${effort}`);
}

/** Round half to even (JavaScript's Math.round rounds halves up). */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The effort line's number: thousandths to hundredths, written without trailing zeros. */
export function effortText(milli: number): string {
  const hundredths = roundHalfEven((milli / 1000) * 100);
  if (hundredths >= 100) return String(hundredths / 100);
  if (hundredths === 0) return '0';
  return ('0.' + String(hundredths).padStart(2, '0')).replace(/0+$/, '');
}

/** A tool_declare message's tools (a JSON list of OpenAI tools) as the declaration body. */
function declareBody(content: Message['content']): string {
  let tools: PyJson = null;
  try {
    tools = typeof content === 'string' ? pyJsonLoads(content) : null;
  } catch {
    tools = null;
  }
  if (!Array.isArray(tools) || !tools.every((t) => t instanceof Map && t.get('function') instanceof Map)) {
    throw new RenderError('a tool_declare message must hold a JSON list of OpenAI tools, as create_conversation_prefix_with_tools writes it');
  }
  const specs = tools.map((tool) => {
    const t = tool as Map<string, PyJson>;
    const fn = t.get('function') as Map<string, PyJson>;
    const name = fn.get('name');
    if (typeof name !== 'string') throw new RenderError(`a declared tool name must be a string; got ${JSON.stringify(name ?? null)}`);
    const parameters = fn.has('parameters') ? fn.get('parameters')! : new Map<string, PyJson>();
    if (!(parameters instanceof Map)) throw new RenderError(`tool ${name}: its parameters must be a JSON object`);
    const type = t.get('type');
    const description = fn.get('description');
    return new Map<string, PyJson>([
      ['description', typeof description === 'string' ? description : ''],
      ['name', name],
      ['parameters', parameters],
      ['type', typeof type === 'string' ? type : 'function'],
    ]);
  });
  return serdeJson(specs, true);
}

function invokeOf(call: ToolCall): Body {
  let args: PyJson;
  try {
    args = pyJsonLoads(call.function.arguments ?? '{}');
  } catch (e) {
    throw new RenderError(`tool call ${call.function.name}: its arguments are not JSON (${(e as Error).message})`);
  }
  if (!(args instanceof Map)) throw new RenderError('tool call arguments must decode to a JSON object');
  return { type: 'invoke', name: call.function.name, args: [...args.entries()], id: call.id };
}

function partBody(part: ContentPart): Body {
  if (part.type === 'text') return { type: 'text', text: part.text };
  if (part.type === 'thinking') return { type: 'thinking', text: part.thinking };
  if (part.type === 'image') throw new RenderError('tml_v0 here does not render images (their token count is computed inside tml-renderers); send text only');
  throw new RenderError(`unsupported content part type: ${JSON.stringify((part as { type: unknown }).type)}`);
}

/** One chat message as its single-part messages; an assistant turn ends with the end token. */
function nativesOf(m: Message, weight: number): Native[] {
  if (m.role === 'tool_declare') return [{ kind: 'system', name: 'tool_declare', body: { type: 'declare', json: declareBody(m.content) }, weight: 0 }];
  const kind = ROLE_KIND[m.role];
  if (!kind) throw new RenderError(`unsupported role: ${JSON.stringify(m.role)}`);
  let bodies: Body[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content.map(partBody);
  if (!bodies.length) bodies = [{ type: 'text', text: '' }];
  const calls = (m.tool_calls ?? []).map(invokeOf);
  if (calls.length) bodies = bodies.filter((b) => !(b.type === 'text' && b.text === ''));
  const name = kind === 'tool' ? m.name : undefined;
  const out: Native[] = [...bodies, ...calls].map((body) => ({ kind, name, body, weight: kind === 'model' ? weight : 0 }));
  if (kind === 'model') out.push({ kind, body: { type: 'end' }, weight });
  return out;
}

/** Which assistant messages a TrainOnWhat trains (tml-renderers trains model messages only). */
function trainedIndices(messages: readonly Message[], trainOnWhat: TrainOnWhat): Set<number> {
  const assistant = messages.flatMap((m, i) => (m.role === 'assistant' ? [i] : []));
  switch (trainOnWhat) {
    case 'all_assistant_messages':
      return new Set(assistant);
    case 'last_assistant_message':
      return new Set(assistant.length ? [assistant[assistant.length - 1]!] : []);
    case 'last_assistant_turn': {
      let turnStart = 0;
      messages.forEach((m, i) => {
        if (m.role === 'user') turnStart = i + 1;
      });
      return new Set(assistant.filter((i) => i >= turnStart));
    }
    case 'customized':
      return new Set(assistant.filter((i) => messages[i]!.trainable !== false));
    default:
      throw new RenderError(
        `tml_v0 trains model messages only: it supports all_assistant_messages, last_assistant_message, last_assistant_turn and customized; got ${JSON.stringify(trainOnWhat)}`,
      );
  }
}

export class TmlV0Renderer extends BaseRenderer {
  readonly seesImages = false;
  private readonly ids: Record<string, number> = {};

  constructor(
    tokenizer: Tokenizer,
    readonly name: string,
  ) {
    super(tokenizer);
    for (const s of ['message_user', 'message_model', 'message_system', 'message_tool', 'content_text', 'content_thinking', 'content_tool_error', 'content_xml', 'content_invoke_tool_json', 'content_model_end_sampling', 'end_message']) {
      const id = tokenizer.tokenId(`<|${s}|>`);
      if (id === undefined) throw new RenderError(`tml_v0 needs the o200k_base_chat tokenizer (Inkling); ${tokenizer.name} has no <|${s}|> token`);
      this.ids[s] = id;
    }
  }

  override get hasExtensionProperty(): boolean {
    return true;
  }

  getStopSequences(): number[] {
    return [this.ids.content_model_end_sampling!];
  }

  renderMessage(): RenderedMessage {
    throw new RenderError('tml_v0 renders whole conversations');
  }

  private effortNative(milli: number): Native {
    return { kind: 'system', body: { type: 'text', text: `Thinking effort level: ${effortText(milli)}` }, weight: 0 };
  }

  /** The effort message goes after the leading system messages (tool declarations are system messages too). */
  private withEffort(natives: Native[], milli: number): Native[] {
    let at = 0;
    while (at < natives.length && natives[at]!.kind === 'system') at++;
    return [...natives.slice(0, at), this.effortNative(milli), ...natives.slice(at)];
  }

  private tokensOf(n: Native): number[] {
    const enc = (s: string) => this.tokenizer.encode(s);
    if (n.body.type === 'end') return [this.ids.content_model_end_sampling!];
    const head = [this.ids[`message_${n.kind}`]!];
    const b = n.body;
    let content: number[];
    if (b.type === 'invoke') {
      const args = new Map([...b.args].sort(([x], [y]) => byteOrder(x, y)));
      head.push(...enc(b.name));
      content = [this.ids.content_invoke_tool_json!, ...enc(`{"name":${JSON.stringify(b.name)},"args":${serdeJson(args)}}`)];
    } else {
      if (n.name) head.push(...enc(n.name));
      if (b.type === 'declare') content = [this.ids.content_xml!, ...enc(b.json)];
      else content = [this.ids[b.type === 'text' ? 'content_text' : b.type === 'thinking' ? 'content_thinking' : 'content_tool_error']!, ...enc(b.text)];
    }
    return [...head, ...content, this.ids.end_message!];
  }

  override buildGenerationPrompt(messages: readonly Message[], opts: TmlV0GenerationOptions = {}): ModelInput {
    if ((opts.role ?? 'assistant') !== 'assistant') throw new RenderError('tml_v0 only supports assistant generation');
    if (opts.prefill !== undefined) throw new RenderError('tml_v0 sampling does not accept a prefill (partial assistant message); the model writes its own message headers');
    const effort = opts.effort ?? DEFAULT_EFFORT;
    validateEffort(effort);
    const natives = this.withEffort(
      messages.flatMap((m) => nativesOf(m, 0)),
      roundHalfEven(effort * 1000),
    );
    return { chunks: [textChunk(natives.flatMap((n) => this.tokensOf(n)))] };
  }

  override buildSupervisedExample(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'all_assistant_messages', effort = DEFAULT_EFFORT): SupervisedExample {
    const [example] = this.examples(messages, trainOnWhat, effort);
    if (!example) throw new RenderError(`tml_v0: no assistant message is trained under ${trainOnWhat}, so there is no training example (tml-renderers makes none)`);
    return example;
  }

  override buildSupervisedExamples(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'all_assistant_messages'): SupervisedExample[] {
    return this.examples(messages, trainOnWhat, DEFAULT_EFFORT);
  }

  /** tml-renderers' render_for_sft: one example ending with the last trained token, or none when nothing is trained. */
  private examples(messages: readonly Message[], trainOnWhat: TrainOnWhat, effort: number): SupervisedExample[] {
    validateEffort(effort);
    const trained = trainedIndices(messages, trainOnWhat);
    const natives = this.withEffort(
      messages.flatMap((m, i) => nativesOf(m, trained.has(i) ? 1 : 0)),
      roundHalfEven(effort * 1000),
    );
    const tokens: number[] = [];
    const weights: number[] = [];
    for (const n of natives) {
      for (const t of this.tokensOf(n)) {
        tokens.push(t);
        weights.push(n.weight);
      }
    }
    const end = weights.findLastIndex((w) => w > 0) + 1;
    if (end === 0) return [];
    return [{ modelInput: { chunks: [textChunk(tokens.slice(0, end))] }, weights: weights.slice(0, end) }];
  }

  override createConversationPrefixWithTools(tools: readonly FunctionSpec[], systemPrompt = ''): Message[] {
    const prefix: Message[] = systemPrompt ? [{ role: 'system', content: systemPrompt }] : [];
    if (tools.length) {
      const openai = tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description ?? '', parameters: t.parameters ?? {} } }));
      prefix.push({ role: 'tool_declare', content: pyJsonDumps(openai, { separators: [',', ':'] }) });
    }
    return prefix;
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const malformed = (): ParsedResponse => ({ message: { role: 'assistant', content: this.decodeOrEmpty(tokens) }, termination: 'malformed' });
    const parsed = this.readMessages(tokens);
    if (parsed === null) return malformed();
    const content = parsed.filter((n) => n.body.type !== 'end');
    const sawEnd = content.length !== parsed.length;
    const termination = sawEnd ? 'stop_sequence' : 'malformed';
    if (!content.length) return { message: { role: 'assistant', content: this.decodeOrEmpty(tokens) }, termination };
    // The last run of messages from one author is the turn the cookbook returns.
    let from = content.length - 1;
    const last = content[from]!;
    while (from > 0 && content[from - 1]!.kind === last.kind && content[from - 1]!.name === last.name) from--;
    const turn = content.slice(from);
    const parts: ContentPart[] = [];
    const calls: ToolCall[] = [];
    for (const n of turn) {
      const b = n.body;
      if (b.type === 'invoke') {
        calls.push({ type: 'function', id: b.id, function: { name: b.name, arguments: pyJsonDumps(new Map(b.args)) } });
      } else if (b.type === 'thinking') parts.push({ type: 'thinking', thinking: b.text });
      else if (b.type === 'text' || b.type === 'tool_error') parts.push({ type: 'text', text: b.text });
    }
    const message: Message = { role: KIND_ROLE[last.kind], content: parts.length === 1 && parts[0]!.type === 'text' ? parts[0]!.text : parts };
    if (calls.length) message.tool_calls = calls;
    if (last.kind === 'tool' && last.name !== undefined) message.name = last.name;
    return { message, termination };
  }

  private decodeOrEmpty(tokens: readonly number[]): string {
    try {
      return this.tokenizer.decode(tokens);
    } catch {
      return '';
    }
  }

  /** The sampled messages, or null where tml-renderers' parser raises. */
  private readMessages(tokens: readonly number[]): Native[] | null {
    const headers = new Map<number, Kind>((['user', 'model', 'system', 'tool'] as const).map((k) => [this.ids[`message_${k}`]!, k]));
    const contents = new Map<number, string>(['content_text', 'content_thinking', 'content_tool_error', 'content_xml', 'content_invoke_tool_json'].map((s) => [this.ids[s]!, s]));
    const end = this.ids.content_model_end_sampling!;
    const endMessage = this.ids.end_message!;
    const out: Native[] = [];
    let calls = 0;
    let i = 0;
    while (i < tokens.length) {
      const t = tokens[i]!;
      if (t === end) {
        out.push({ kind: 'model', body: { type: 'end' }, weight: 0 });
        i++;
        continue;
      }
      const kind = headers.get(t);
      if (kind === undefined) return null;
      let j = i + 1;
      while (j < tokens.length && !contents.has(tokens[j]!)) {
        if (headers.has(tokens[j]!) || tokens[j] === end || tokens[j] === endMessage) return null;
        j++;
      }
      if (j >= tokens.length) return null; // a header with no content token after it
      const name = j > i + 1 ? this.tokenizer.decode(tokens.slice(i + 1, j)) : undefined;
      const contentKind = contents.get(tokens[j]!)!;
      let k = j + 1;
      while (k < tokens.length && tokens[k] !== endMessage) {
        if (tokens[k] === end) return null;
        k++;
      }
      // A body cut short by the end of the sample: dropped after complete messages, an error when it is the first.
      if (k >= tokens.length) return out.length ? out : null;
      const text = this.tokenizer.decode(tokens.slice(j + 1, k));
      let body: Body;
      if (contentKind === 'content_invoke_tool_json') {
        const call = this.readCall(text, name, calls++);
        if (!call) return null;
        body = call;
      } else if (contentKind === 'content_text') body = { type: 'text', text };
      else if (contentKind === 'content_thinking') body = { type: 'thinking', text };
      else if (contentKind === 'content_tool_error') body = { type: 'tool_error', text };
      else return null;
      out.push({ kind, name: contentKind === 'content_invoke_tool_json' ? undefined : name, body, weight: 0 });
      i = k + 1;
    }
    if (out.length && out.every((n) => n.body.type === 'end')) return null;
    return out;
  }

  private readCall(text: string, author: string | undefined, index: number): Body | null {
    let v: PyJson;
    try {
      v = pyJsonLoads(text);
    } catch {
      return null;
    }
    if (!(v instanceof Map)) return null;
    const name = v.get('name');
    const args = v.get('args');
    if (typeof name !== 'string' || !(args instanceof Map)) return null;
    if (author !== undefined && author !== name) return null;
    return { type: 'invoke', name, args: [...args.entries()], id: `functions.${name}:${index}` };
  }
}

export const tmlV0Renderers: RendererTable = {
  tml_v0: (t: Tokenizer, _o: RendererOptions) => new TmlV0Renderer(t, 'tml_v0'),
};

