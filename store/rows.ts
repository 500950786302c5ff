// Conversions between SQLite rows and wire objects. Pure functions; JSON columns are parsed here.
import type { Attempt, Json, JsonObject, ResourcesUpdate, Rollout, RolloutConfig, Span, Worker } from './types';
import { DEFAULT_ROLLOUT_CONFIG } from './types';

export interface RolloutRow {
  seq: number;
  rollout_id: string;
  input: string;
  start_time: number;
  end_time: number | null;
  mode: string | null;
  resources_id: string | null;
  status: string;
  config: string;
  metadata: string | null;
  idempotency_key: string | null;
  span_counter: number;
  attempt_count: number;
  latest_attempt_id: string | null;
  /** Raised on every change of status (but into running) or of what attempts share (db.ts addRolloutRevision). */
  revision: number;
}

export interface AttemptRow {
  rollout_id: string;
  attempt_id: string;
  sequence_id: number;
  start_time: number;
  end_time: number | null;
  status: string;
  worker_id: string | null;
  last_heartbeat_time: number | null;
  metadata: string | null;
}

export interface WorkerRow {
  worker_id: string;
  status: string;
  heartbeat_stats: string | null;
  last_heartbeat_time: number | null;
  last_dequeue_time: number | null;
  last_busy_time: number | null;
  last_idle_time: number | null;
  current_rollout_id: string | null;
  current_attempt_id: string | null;
}

export interface ResourcesRow {
  resources_id: string;
  create_time: number;
  update_time: number;
  version: number;
  resources: string;
}

const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));
export const toJsonText = (value: unknown): string => JSON.stringify(value ?? null);
export const toNullableJsonText = (value: unknown): string | null =>
  value === null || value === undefined ? null : JSON.stringify(value);

export function rolloutFromRow(row: RolloutRow): Rollout {
  return {
    rollout_id: row.rollout_id,
    input: parse<Json>(row.input),
    start_time: row.start_time,
    end_time: row.end_time,
    mode: row.mode as Rollout['mode'],
    resources_id: row.resources_id,
    status: row.status as Rollout['status'],
    config: { ...DEFAULT_ROLLOUT_CONFIG, ...(parse<RolloutConfig>(row.config) ?? {}) },
    metadata: parse<JsonObject>(row.metadata),
  };
}

export function attemptFromRow(row: AttemptRow): Attempt {
  return {
    rollout_id: row.rollout_id,
    attempt_id: row.attempt_id,
    sequence_id: row.sequence_id,
    start_time: row.start_time,
    end_time: row.end_time,
    status: row.status as Attempt['status'],
    worker_id: row.worker_id,
    last_heartbeat_time: row.last_heartbeat_time,
    metadata: parse<JsonObject>(row.metadata),
  };
}

export function workerFromRow(row: WorkerRow): Worker {
  return {
    worker_id: row.worker_id,
    status: row.status as Worker['status'],
    heartbeat_stats: parse<JsonObject>(row.heartbeat_stats),
    last_heartbeat_time: row.last_heartbeat_time,
    last_dequeue_time: row.last_dequeue_time,
    last_busy_time: row.last_busy_time,
    last_idle_time: row.last_idle_time,
    current_rollout_id: row.current_rollout_id,
    current_attempt_id: row.current_attempt_id,
  };
}

export function resourcesFromRow(row: ResourcesRow): ResourcesUpdate {
  return {
    resources_id: row.resources_id,
    create_time: row.create_time,
    update_time: row.update_time,
    version: row.version,
    resources: JSON.parse(row.resources),
  };
}

export const spanFromBody = (body: string): Span => JSON.parse(body) as Span;
