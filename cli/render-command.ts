// `client render`: a conversation in OpenAI chat format ({"messages": [...], "tools": [...]}) rendered the way the
// proxy and the trainer render it for a model, as one JSON line. Two modes: the sampling prompt (every message,
// then the start of a new assistant turn: build_generation_prompt), or with --supervised the training example's
// tokens and loss weights (build_supervised_example); with --text also the decoded pieces (the cookbook's
// viz_sft_dataset, for debugging prompts). A conversation that ends with an assistant message, rendered as a
// prompt, gets a note saying so: that message is part of the prompt, not an answer trained on.
import { readFileSync } from 'node:fs';
import { getRenderer, getTokenizer, recommendedRenderer, rendererWarning, TRAIN_ON_WHAT, type ContentPart, type Message, type ModelInputChunk, type ToolCall, type TrainOnWhat } from '../chat';
import { withToolDeclarations } from '../chat/tools';
import { UsageError } from '../common/service-args';

export interface RenderArgs {
  model: string;
  renderer?: string;
  supervised?: boolean;
  trainOnWhat?: string;
  text?: boolean;
  file: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function contentOf(c: unknown, where: string): string | ContentPart[] {
  if (c === null || c === undefined) return '';
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) throw new UsageError(`render: ${where}.content must be a string or a list of parts`);
  return c.map((p, j): ContentPart => {
    if (isObj(p) && p.type === 'text' && typeof p.text === 'string') return { type: 'text', text: p.text };
    if (isObj(p) && p.type === 'image_url') {
      const url = isObj(p.image_url) ? p.image_url.url : p.image_url;
      if (typeof url === 'string') return { type: 'image', image: url };
    }
    throw new UsageError(`render: ${where}.content[${j}] must be {"type": "text", "text": ...} or {"type": "image_url", "image_url": {"url": ...}}`);
  });
}

/** OpenAI chat messages as the renderers take them (developer → system, reasoning_content → a thinking part). */
export function messagesOf(raw: unknown): Message[] {
  if (!Array.isArray(raw) || raw.length === 0) throw new UsageError('render: the file needs "messages": a non-empty list');
  return raw.map((m, i) => {
    const where = `messages[${i}]`;
    if (!isObj(m) || typeof m.role !== 'string') throw new UsageError(`render: ${where} needs a "role"`);
    let content = contentOf(m.content, where);
    if (typeof m.reasoning_content === 'string' && m.reasoning_content) {
      content = [{ type: 'thinking', thinking: m.reasoning_content }, ...(typeof content === 'string' ? (content ? [{ type: 'text' as const, text: content }] : []) : content)];
    }
    const msg: Message = { role: m.role === 'developer' ? 'system' : m.role, content };
    if (Array.isArray(m.tool_calls)) {
      msg.tool_calls = m.tool_calls.map((c, j): ToolCall => {
        if (!isObj(c) || !isObj(c.function) || typeof c.function.name !== 'string') throw new UsageError(`render: ${where}.tool_calls[${j}] needs function.name`);
        const args = c.function.arguments;
        const call: ToolCall = { type: 'function', function: { name: c.function.name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) } };
        if (typeof c.id === 'string') call.id = c.id;
        return call;
      });
    }
    if (typeof m.tool_call_id === 'string') msg.tool_call_id = m.tool_call_id;
    if (typeof m.name === 'string') msg.name = m.name;
    return msg;
  });
}

interface Rendered {
  line: Record<string, unknown>;
  warning: string | null;
  /** Which mode rendered what, where a reader could take it for the other one. */
  note?: string;
}

/** Runs of tokens with one weight, decoded (per chunk for a prompt); images as <image:N tokens>. */
function pieces(chunks: readonly ModelInputChunk[], weights: readonly number[] | null, decode: (ids: number[]) => string): { text: string; weight?: number }[] {
  const out: { text: string; weight?: number }[] = [];
  let pos = 0;
  for (const c of chunks) {
    if (c.type === 'image') {
      out.push({ text: `<image:${c.expected_tokens} tokens>`, ...(weights ? { weight: weights[pos]! } : {}) });
      pos += c.expected_tokens;
      continue;
    }
    let start = 0;
    for (let k = 1; k <= c.tokens.length; k++) {
      if (weights && k < c.tokens.length && weights[pos + k] === weights[pos + start]) continue;
      if (!weights && k < c.tokens.length) continue;
      out.push({ text: decode(c.tokens.slice(start, k)), ...(weights ? { weight: weights[pos + start]! } : {}) });
      start = k;
    }
    pos += c.tokens.length;
  }
  return out;
}

export function render(args: RenderArgs): Rendered {
  let body: unknown;
  try {
    body = JSON.parse(readFileSync(args.file, 'utf8'));
  } catch (err) {
    throw new UsageError(`render: ${args.file}: ${(err as Error).message}`);
  }
  if (!isObj(body)) throw new UsageError(`render: ${args.file} must hold {"messages": [...], "tools": [...]}`);
  const tools = body.tools === undefined ? [] : body.tools;
  if (!Array.isArray(tools)) throw new UsageError('render: "tools" must be a list of OpenAI tool definitions');
  const rendererName = args.renderer ?? recommendedRenderer(args.model);
  const tokenizer = getTokenizer(args.model);
  const renderer = getRenderer(rendererName, tokenizer, { modelName: args.model });
  const messages = withToolDeclarations(renderer, messagesOf(body.messages), tools as Obj[]);
  const decode = (ids: number[]) => tokenizer.decode(ids);
  const warning = args.renderer ? rendererWarning(args.model, args.renderer) : null;
  if (args.supervised) {
    const tow = args.trainOnWhat ?? 'last_assistant_message';
    if (!(TRAIN_ON_WHAT as readonly string[]).includes(tow)) throw new UsageError(`render: --train-on must be one of ${TRAIN_ON_WHAT.join(', ')}, got ${JSON.stringify(tow)}`);
    const ex = renderer.buildSupervisedExample(messages, tow as TrainOnWhat);
    const tokens = ex.modelInput.chunks.flatMap((c) => (c.type === 'encoded_text' ? c.tokens : []));
    const line: Record<string, unknown> = { tokens, weights: ex.weights };
    if (ex.modelInput.chunks.some((c) => c.type === 'image')) line.chunks = ex.modelInput.chunks;
    if (args.text) line.text = pieces(ex.modelInput.chunks, ex.weights, decode);
    return { line, warning };
  }
  const prompt = renderer.buildGenerationPrompt(messages);
  const line: Record<string, unknown> = { tokens: prompt.chunks.flatMap((c) => (c.type === 'encoded_text' ? c.tokens : [])) };
  if (prompt.chunks.some((c) => c.type === 'image')) line.chunks = prompt.chunks;
  if (args.text) line.text = pieces(prompt.chunks, null, decode);
  const note =
    messages.at(-1)?.role === 'assistant'
      ? 'rendered as a sampling prompt: every message, the last assistant one too, then the start of a new assistant turn; --supervised renders the conversation as a training example (tokens and weights)'
      : undefined;
  return { line, warning, ...(note ? { note } : {}) };
}
