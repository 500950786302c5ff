// What one call through the proxy is, whichever API it came in by: the front doors (apis/) parse their requests
// into it, and prompt.ts, span.ts and internal-call.ts work from it. Types only, so every one of them can import it
// without importing each other.
import type { Message, ToolSpec } from '../chat';
import type { AttributeValue } from '../store/types';
import type { InternalAnswer } from './answer';
import type { ReasoningAsk } from './apis/reasoning';
import type { SamplingOverrides } from './request';

export type ApiName = 'chat' | 'responses' | 'messages' | 'completions';

export interface InternalCall {
  api: ApiName;
  /** The answer's id, in the API's own form. */
  id: string;
  model: string | null;
  /** The conversation, rendered with the policy's renderer ([] when `prompt` is given). */
  messages: Message[];
  /** OpenAI chat tool definitions shown to the model ([] for none, also for tool_choice "none"). */
  tools: ToolSpec[];
  /** A prompt rendered without chat template (Completions): a text, or token ids as given. */
  prompt: { text: string } | { tokens: number[] } | null;
  n: number;
  stream: boolean;
  /** User stop strings, cut after sampling. */
  stop: string[];
  /** Unset fields take the policy's defaults. */
  sampling: SamplingOverrides;
  /** Reasoning settings the request asked for, checked against the policy's renderer before rendering. */
  reasoning?: ReasoningAsk[];
  /** How this API writes tool-call ids ("call_", "toolu_", ...). */
  toolCallIdPrefix: string;
  /** The span's trace id (32 hex digits), when the API finds its spans by it; else random. */
  traceId?: string;
  /** Attributes the API adds to the span of an answered call. */
  spanAttributes?(answer: InternalAnswer): Record<string, AttributeValue>;
}
