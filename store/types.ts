// Wire types of the Agent-lightning v0.3 LightningStore protocol (snake_case, as the Python side sends them).
// See shared/reference/agl-store-protocol.md §2. These are shared by the server, the client and the runners.
import type { AttributeValue } from '../spans/attributes';

export type RolloutStatus = 'queuing' | 'preparing' | 'running' | 'failed' | 'succeeded' | 'cancelled' | 'requeuing';
export type AttemptStatus = 'preparing' | 'running' | 'failed' | 'succeeded' | 'unresponsive' | 'timeout';
export type RolloutMode = 'train' | 'val' | 'test';
export type WorkerStatus = 'idle' | 'busy' | 'unknown';

export const ROLLOUT_STATUSES: readonly RolloutStatus[] = [
  'queuing', 'preparing', 'running', 'failed', 'succeeded', 'cancelled', 'requeuing',
];
export const ATTEMPT_STATUSES: readonly AttemptStatus[] = [
  'preparing', 'running', 'failed', 'succeeded', 'unresponsive', 'timeout',
];
export const TERMINAL_ROLLOUT_STATUSES: readonly RolloutStatus[] = ['succeeded', 'failed', 'cancelled'];

export function isTerminalRolloutStatus(s: RolloutStatus): boolean {
  return TERMINAL_ROLLOUT_STATUSES.includes(s);
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface RolloutConfig {
  timeout_seconds: number | null;
  unresponsive_seconds: number | null;
  max_attempts: number;
  retry_condition: AttemptStatus[];
}

export interface Rollout {
  rollout_id: string;
  input: Json;
  start_time: number;
  end_time: number | null;
  mode: RolloutMode | null;
  resources_id: string | null;
  status: RolloutStatus;
  config: RolloutConfig;
  metadata: JsonObject | null;
}

export interface Attempt {
  rollout_id: string;
  attempt_id: string;
  sequence_id: number;
  start_time: number;
  end_time: number | null;
  status: AttemptStatus;
  worker_id: string | null;
  last_heartbeat_time: number | null;
  metadata: JsonObject | null;
}

/** A rollout together with its latest attempt. The key `attempt` is present only when an attempt exists. */
export interface AttemptedRollout extends Rollout {
  attempt: Attempt;
}

export function isAttemptedRollout(r: Rollout | AttemptedRollout): r is AttemptedRollout {
  return 'attempt' in r;
}

export interface Worker {
  worker_id: string;
  status: WorkerStatus;
  heartbeat_stats: JsonObject | null;
  last_heartbeat_time: number | null;
  last_dequeue_time: number | null;
  last_busy_time: number | null;
  last_idle_time: number | null;
  current_rollout_id: string | null;
  current_attempt_id: string | null;
}

export interface LlmResource {
  resource_type: 'llm' | 'proxy_llm';
  endpoint: string;
  model: string;
  api_key: string | null;
  sampling_parameters: JsonObject;
  [extra: string]: Json;
}
export interface PromptTemplateResource {
  resource_type: 'prompt_template';
  template: string;
  engine: 'jinja' | 'f-string' | 'poml';
  [extra: string]: Json;
}
export type Resource = LlmResource | PromptTemplateResource;
export type NamedResources = Record<string, Resource>;

export interface ResourcesUpdate {
  resources_id: string;
  create_time: number;
  update_time: number;
  version: number;
  resources: NamedResources;
}

/** A span attribute's value (spans/attributes.ts, the span format the store and rl/ share). */
export type { AttributeValue };

export interface SpanContext {
  trace_id: string;
  span_id: string;
  is_remote: boolean;
  trace_state: Record<string, string>;
  [extra: string]: Json;
}

export interface Span {
  rollout_id: string;
  attempt_id: string;
  sequence_id: number;
  trace_id: string;
  span_id: string;
  parent_id: string | null;
  name: string;
  status: { status_code: 'UNSET' | 'OK' | 'ERROR'; description: string | null; [extra: string]: Json };
  attributes: Record<string, AttributeValue>;
  events: JsonObject[];
  links: JsonObject[];
  start_time: number | null;
  end_time: number | null;
  context: SpanContext | null;
  parent: SpanContext | null;
  resource: { attributes: JsonObject; schema_url: string };
  [extra: string]: Json;
}

export interface PaginatedResult<T> {
  items: T[];
  limit: number;
  offset: number;
  total: number;
}

export interface EnqueueRolloutRequest {
  input: Json;
  mode?: RolloutMode | null;
  resources_id?: string | null;
  config?: Partial<RolloutConfig> | null;
  metadata?: JsonObject | null;
}

export interface StartRolloutRequest extends EnqueueRolloutRequest {
  worker_id?: string | null;
}

export interface UpdateRolloutRequest {
  input?: Json;
  mode?: RolloutMode | null;
  resources_id?: string | null;
  status?: RolloutStatus;
  config?: Partial<RolloutConfig>;
  metadata?: JsonObject | null;
}

export interface UpdateAttemptRequest {
  status?: AttemptStatus;
  worker_id?: string;
  last_heartbeat_time?: number;
  metadata?: JsonObject;
}

export type SortOrder = 'asc' | 'desc';
export type FilterLogic = 'and' | 'or';

export interface Pagination {
  limit?: number;
  offset?: number;
  sort_by?: string | null;
  sort_order?: SortOrder;
}

export interface QueryRolloutsRequest extends Pagination {
  status_in?: RolloutStatus[] | null;
  rollout_id_in?: string[] | null;
  rollout_id_contains?: string | null;
  /** Ours: rollouts whose idempotency key starts with this prefix. */
  idempotency_key_prefix?: string | null;
  filter_logic?: FilterLogic;
}

export interface QuerySpansRequest extends Pagination {
  rollout_id: string;
  attempt_id?: string | null; // an attempt id, 'latest', or null for all attempts
  trace_id?: string | null;
  trace_id_contains?: string | null;
  span_id?: string | null;
  span_id_contains?: string | null;
  parent_id?: string | null;
  parent_id_contains?: string | null;
  name?: string | null;
  name_contains?: string | null;
  filter_logic?: FilterLogic;
}

export interface QueryWorkersRequest extends Pagination {
  status_in?: WorkerStatus[] | null;
  worker_id_contains?: string | null;
  filter_logic?: FilterLogic;
}

export interface QueryResourcesRequest extends Pagination {
  resources_id?: string | null;
  resources_id_contains?: string | null;
}

export interface StoreStatistics {
  name: string;
  total_rollouts: number;
  total_attempts: number;
  total_spans: number;
  total_resources: number;
  total_workers: number;
  uptime: number;
  [extra: string]: Json;
}

export const DEFAULT_ROLLOUT_CONFIG: RolloutConfig = {
  timeout_seconds: null,
  unresponsive_seconds: null,
  max_attempts: 1,
  retry_condition: [],
};

/**
 * Ours: a span with this string attribute and a status other than ERROR records an answered call; the store
 * indexes it, so a caller finds how often an attempt made the same call, and its last answer, without reading
 * the attempt's spans (`POST /v1/agl/spans/calls`; the proxy's request fingerprint).
 */
export const CALL_KEY_ATTR = 'agl.request.fingerprint';

/** A rollout's revision (ours, db.ts addRolloutRevision), on GET /rollouts/{id} and conditional span writes. */
export const REVISION_HEADER = 'x-agl-rollout-revision';
/** Sent with POST /spans: store the span only while its rollout is at this revision (else 412, nothing stored). */
export const IF_REVISION_HEADER = 'x-agl-if-rollout-revision';

/** Ours: the answer of `POST /v1/agl/spans/calls`. */
export interface CallRecord {
  /** Answered calls of the attempt with this key. */
  answered: number;
  /** The latest of them (highest sequence id), when asked for (`with_last`) and there is one. */
  last: Span | null;
}
