// What an agent API is to the proxy: it parses its request into the internal call and prints the internal
// answer (and its errors) back in its own format. Everything between is internal-call.ts, once for all.
import type { InternalAnswer } from '../answer';
import type { ApiError } from '../errors';
import type { ApiName, InternalCall, Scope } from '../internal-call';
import type { Conversations } from './responses-store';

export interface ApiContext {
  scope: Scope | null;
  /** Responses conversations (previous_response_id). */
  conversations: Conversations;
  signal: AbortSignal;
}

export interface ParsedRequest {
  call: InternalCall;
  /** The answer as this API's JSON body. */
  body(answer: InternalAnswer): unknown;
  /** The answer as this API's event stream (each string one SSE event). */
  events(answer: InternalAnswer): string[];
  /** Called once the call is answered (Responses remembers the conversation). */
  answered?(answer: InternalAnswer): void;
}

export interface AgentApi {
  name: ApiName;
  parse(body: unknown, ctx: ApiContext): ParsedRequest | Promise<ParsedRequest>;
  /** An error as this API's JSON body. */
  errorBody(err: ApiError): unknown;
}

/** One SSE event: `data: <json>` (OpenAI chat and completions), with `event: <type>` when given (Responses, Messages). */
export function sse(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

/** Text in pieces of at most `size` UTF-16 units, never splitting a surrogate pair (synthetic stream deltas). */
export function pieces(text: string, size = 64): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    let end = Math.min(i + size, text.length);
    const code = text.charCodeAt(end - 1);
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end++;
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}
