// The chat model every renderer shares, as tinker-cookbook 0.6.1 has it (renderers/base.py): messages whose
// content is a string or a list of parts (text, image, thinking), tool calls parsed and unparsed, prompts as a
// ModelInput of chunks (encoded text, images), loss weights per TrainOnWhat, and parse results with a
// ParseTermination. Field names follow the cookbook's (snake_case) so JSON corpora cross the language line as is.

export interface ToolCall {
  type: 'function';
  id?: string;
  /** `arguments` is a JSON text, as OpenAI and the cookbook keep it. */
  function: { name: string; arguments: string };
}

/** A tool call the model wrote that did not parse: its raw text and why (cookbook UnparsedToolCall). */
export interface UnparsedToolCall {
  raw_text: string;
  error: string;
}

export interface TextPart {
  type: 'text';
  text: string;
}

/** An image as a data URI (`data:image/png;base64,...`) or a URL the caller has fetched into one. */
export interface ImagePart {
  type: 'image';
  image: string;
}

/** The model's reasoning, kept apart from the text it shows. */
export interface ThinkingPart {
  type: 'thinking';
  thinking: string;
}

export type ContentPart = TextPart | ImagePart | ThinkingPart;
export type Content = string | ContentPart[];

export interface Message {
  role: string;
  content: Content;
  tool_calls?: ToolCall[];
  unparsed_tool_calls?: UnparsedToolCall[];
  /** Only with TrainOnWhat 'customized': whether this message carries loss. */
  trainable?: boolean;
  /** Tool results: the id of the call they answer (Kimi renders it). */
  tool_call_id?: string;
  /** Tool results: the function's name (gpt-oss renders it). */
  name?: string;
}

/** An OpenAI chat tool definition as requests carry it: {"type": "function", "function": {...}}. */
export type ToolSpec = Record<string, unknown>;

/** The cookbook's ToolSpec: the function itself (what `create_conversation_prefix_with_tools` takes). */
export interface FunctionSpec {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
  [key: string]: unknown;
}

// ---- prompts: a ModelInput of chunks (tinker.ModelInput) ----

export interface EncodedTextChunk {
  type: 'encoded_text';
  tokens: number[];
}

/** An image for a vision model (tinker.types.ImageChunk): base64 bytes, their format, the tokens it takes. */
export interface ImageChunk {
  type: 'image';
  data: string;
  format: 'jpeg' | 'png';
  expected_tokens: number;
}

export type ModelInputChunk = EncodedTextChunk | ImageChunk;

export interface ModelInput {
  chunks: ModelInputChunk[];
}

// ---- training: which tokens carry loss ----

export const TRAIN_ON_WHAT = [
  'last_assistant_message',
  'last_assistant_turn',
  'all_assistant_messages',
  'all_messages',
  'all_tokens',
  'all_user_and_system_messages',
  'customized',
] as const;
export type TrainOnWhat = (typeof TRAIN_ON_WHAT)[number];

/** Tokens and one loss weight per token position (image chunks count expected_tokens positions). */
export interface SupervisedExample {
  modelInput: ModelInput;
  weights: number[];
}

// ---- parsing ----

/** How a sampled response ended (cookbook ParseTermination). */
export type ParseTermination = 'stop_sequence' | 'eos' | 'malformed';

export interface ParsedResponse {
  /** Best effort even when malformed. */
  message: Message;
  termination: ParseTermination;
}

// ---- tokenizer ----

export interface Tokenizer {
  /** e.g. "Qwen/Qwen3-4B-Instruct-2507" or "local/bytes". */
  readonly name: string;
  readonly bosToken: string | null;
  readonly eosToken: string | null;
  /** Like HF `encode(text, add_special_tokens=False)`: added-token strings (special or not) become their ids. */
  encode(text: string): number[];
  /**
   * Like HF with `encode_special_tokens=True` (the cookbook's qwen3 content tokenizer): special tokens written in
   * text are encoded as ordinary text; added tokens that are not special (`<think>`) still become their ids.
   * Absent: the tokenizer has no such distinction, and `encode` is used.
   */
  encodeLiteralSpecials?(text: string): number[];
  /** Byte-exact decode: the bytes of all tokens joined, then read as UTF-8 (invalid sequences → U+FFFD). */
  decode(ids: readonly number[]): string;
  /** The raw bytes one token stands for (partial UTF-8 sequences stay partial). */
  tokenBytes(id: number): Uint8Array;
  /** The id of a token given by its text, if it is a single token (special tokens included). */
  tokenId(text: string): number | undefined;
}

// ---- renderer ----

/** Where a message sits in the conversation (cookbook RenderContext). */
export interface RenderContext {
  idx: number;
  isLast: boolean;
  prevMessage: Message | null;
  nextMessage: Message | null;
  /** Index of the last user message; -1 without one. */
  lastUserIndex: number;
  /** The message belongs to the turn the model is asked to produce (after the last user message). */
  inLastAssistantTurn: boolean;
}

/** One message split for loss masking (cookbook RenderedMessage). */
export interface RenderedMessage {
  /** What the model generates: content and end-of-turn tokens (trainable). */
  output: ModelInputChunk[];
  /** Role and delimiters introducing the turn (weight 0 unless all_tokens). */
  header?: EncodedTextChunk | null;
  /** role_colon only: the part of the stop string that is the next header, added after the last message. */
  stopOverlap?: EncodedTextChunk | null;
}

export interface GenerationOptions {
  /** The role of the message to complete; default assistant. */
  role?: string;
  /** Text the model's answer starts with. */
  prefill?: string;
}

export interface Renderer {
  readonly name: string;
  readonly tokenizer: Tokenizer;
  /** Whether each turn's prompt is a prefix of the next one's (see cookbook `has_extension_property`). */
  readonly hasExtensionProperty: boolean;
  /** The generation prompt closes the think block (thinking turned off). */
  readonly disablesThinking: boolean;
  /**
   * Renders image parts as image chunks (a vision renderer given an image processor). Absent or false: the
   * renderer cannot show images (the cookbook's text renderers drop them silently), so calls with images are refused.
   */
  readonly seesImages?: boolean;
  /** BOS + rendered messages + the header of the message to generate (+ the variant's prefill). */
  buildGenerationPrompt(messages: readonly Message[], opts?: GenerationOptions): ModelInput;
  /** Tokens and weights of one training sequence (cookbook default: last_assistant_message). */
  buildSupervisedExample(messages: readonly Message[], trainOnWhat?: TrainOnWhat): SupervisedExample;
  /** One example per trained turn when the renderer lacks the extension property (default: last_assistant_turn). */
  buildSupervisedExamples(messages: readonly Message[], trainOnWhat?: TrainOnWhat): SupervisedExample[];
  /** Strings (role_colon) or token ids that end a turn. */
  getStopSequences(): string[] | number[];
  parseResponse(tokens: readonly number[]): ParsedResponse;
  /**
   * The messages to put before a conversation to declare tools (and the system prompt), as the family's template
   * does. Absent: the renderer has no tool format (cookbook raises NotImplementedError), and calls with tools are
   * refused.
   */
  createConversationPrefixWithTools?(tools: readonly FunctionSpec[], systemPrompt?: string): Message[];
}

export class RenderError extends Error {
  override readonly name = 'RenderError';
}
