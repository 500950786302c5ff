// Responses conversations, for `previous_response_id`. An answered, stored response's conversation (its input
// messages without `instructions`, plus its output) is written into its span (`agl.responses.conversation`), and
// the response id names the span's trace, so any proxy, restarted or not, finds it again in the store: a
// retried or resumed agent gets the same conversation. Kept in memory too (bounded), which is all there is
// for calls on the plain URLs (no rollout, so no span): those do not outlive the proxy.
import { randomBytes } from 'node:crypto';
import type { Message } from '../../chat';
import { ApiError, badRequest } from '../errors';
import type { Scope } from '../internal-call';
import type { SpanSink } from '../span-sink';
import type { AttributeValue } from '../../store/types';
import { BoundedMap } from '../../common/bounded-map';

export const CONVERSATION_ATTRIBUTE = 'agl.responses.conversation';
export const STORE_ATTRIBUTE = 'agl.responses.store';

/** A fresh response id; its hex part is the trace id of the call's span. */
export function newResponseId(): { id: string; traceId: string } {
  const traceId = randomBytes(16).toString('hex');
  return { id: `resp_${traceId}`, traceId };
}

export function responseSpanAttributes(conversation: Message[], store: boolean): Record<string, AttributeValue> {
  return store ? { [STORE_ATTRIBUTE]: true, [CONVERSATION_ATTRIBUTE]: JSON.stringify(conversation) } : { [STORE_ATTRIBUTE]: false };
}

function notFound(id: string): ApiError {
  return badRequest(`Previous response with id '${id}' not found.`, 'previous_response_id', 'previous_response_not_found');
}

export class Conversations {
  private readonly memory: BoundedMap<string, Message[]>;
  constructor(
    private readonly sink: SpanSink | null,
    max = 10_000,
  ) {
    this.memory = new BoundedMap(max, { order: 'write' });
  }

  remember(id: string, conversation: Message[]): void {
    this.memory.set(id, conversation);
  }

  /** The conversation so far of a stored response; a 400 (OpenAI's `previous_response_not_found`) when there is none. */
  async resolve(id: string, scope: Scope | null, signal: AbortSignal): Promise<Message[]> {
    const known = this.memory.get(id);
    if (known) return known;
    const traceId = /^resp_([0-9a-f]{32})$/.exec(id)?.[1];
    if (!traceId || !scope || !this.sink?.spansOfTrace) throw notFound(id);
    let spans;
    try {
      spans = await this.sink.spansOfTrace(scope.rolloutId, traceId, signal);
    } catch (err) {
      throw new ApiError(503, `store: could not look up previous_response_id ${id}: ${(err as Error).message}`, 'api_error', null, 'store_unavailable');
    }
    const span = spans.find((s) => s.status?.status_code !== 'ERROR' && s.attributes['gen_ai.response.id'] === id);
    const text = span?.attributes[CONVERSATION_ATTRIBUTE];
    let conversation: unknown;
    try {
      conversation = typeof text === 'string' ? JSON.parse(text) : null;
    } catch {
      conversation = null;
    }
    if (!Array.isArray(conversation)) throw notFound(id);
    this.remember(id, conversation as Message[]);
    return conversation as Message[];
  }
}
