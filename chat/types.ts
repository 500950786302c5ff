// Chat messages and the two interfaces the renderers are built on: Tokenizer and Renderer.

export interface ToolCall {
  type: 'function';
  id?: string;
  function: { name: string; arguments: string };
}

export interface Message {
  role: string;
  content: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
}

/** An OpenAI chat tool definition: {"type": "function", "function": {"name", "description"?, "parameters"?}}. */
export type ToolSpec = Record<string, unknown>;

export interface Tokenizer {
  /** e.g. "Qwen/Qwen3-4B-Instruct-2507" or "local/bytes". */
  readonly name: string;
  readonly bosToken: string | null;
  readonly eosToken: string | null;
  /** Like HF `encode(text, add_special_tokens=False)`: special-token strings become their single ids. */
  encode(text: string): number[];
  /** Byte-exact decode: the bytes of all tokens joined, then read as UTF-8 (invalid sequences → U+FFFD). */
  decode(ids: readonly number[]): string;
  /** The raw bytes one token stands for (partial UTF-8 sequences stay partial). */
  tokenBytes(id: number): Uint8Array;
  /** The id of a token given by its text, if it is a single token (special tokens included). */
  tokenId(text: string): number | undefined;
}

export interface ParsedResponse {
  message: Message;
  /** Dec-2025 contract: false when the response did not end cleanly (no stop token, bad tool call). */
  ok: boolean;
}

export interface Renderer {
  readonly name: string;
  readonly tokenizer: Tokenizer;
  /** BOS + rendered messages + header of an empty assistant message (+ variant prefill). */
  buildGenerationPrompt(messages: readonly Message[]): number[];
  /** Strings (role_colon) or token ids (llama3, qwen3*) that end a turn. */
  stopSequences(): string[] | number[];
  parseResponse(tokens: readonly number[]): ParsedResponse;
  /**
   * The messages with the tools declared as this renderer's template declares them; assistant `tool_calls` and
   * `tool` messages are then rendered by buildGenerationPrompt and calls parsed by parseResponse. Absent: the
   * renderer cannot show tools or tool calls to the model, and a call that needs them is refused.
   */
  withTools?(messages: readonly Message[], tools: readonly ToolSpec[]): Message[];
}

export class RenderError extends Error {
  override readonly name = 'RenderError';
}
