// Agent-lightning's Triplet (agentlightning/types/core.py) and the span shape the store returns (§2.4), read
// leniently: spans may come from a Python store or an older writer, so the fields our store always fills are optional.
import type { AttributeValue } from '../../spans/attributes';

/** One OpenAI-style logprob entry as recorded on client spans (`logprobs.content`). */
export interface TokenLogprob {
  token?: string;
  bytes?: number[] | null;
  logprob: number;
  top_logprobs?: unknown[];
}

export interface TripletPrompt {
  token_ids?: number[];
  raw_content?: unknown;
  image_urls?: string[];
  [key: string]: unknown;
}

export interface TripletResponse {
  token_ids?: number[];
  raw_content?: unknown;
  logprobs?: TokenLogprob[];
  [key: string]: unknown;
}

/** One LLM call turned into (prompt, response, reward). JSON field names as the Python model. */
export interface Triplet {
  prompt: TripletPrompt;
  response: TripletResponse;
  reward: number | null;
  metadata: Record<string, unknown>;
}

export interface SpanContext {
  trace_id: string;
  span_id: string;
  is_remote?: boolean;
  trace_state?: Record<string, string>;
  [key: string]: unknown;
}

/** A span as the LightningStore serves it (`query_spans`). */
export interface StoreSpan {
  rollout_id: string;
  attempt_id: string;
  sequence_id: number;
  trace_id: string;
  span_id: string;
  parent_id: string | null;
  name: string;
  status?: { status_code: string; description?: string | null; [key: string]: unknown };
  attributes: Record<string, AttributeValue>;
  events?: unknown[];
  links?: unknown[];
  start_time: number | null;
  end_time: number | null;
  context?: SpanContext | null;
  parent?: SpanContext | null;
  resource?: { attributes: Record<string, unknown>; schema_url: string };
  [key: string]: unknown;
}
