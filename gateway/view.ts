// How a 1.0 rollout maps onto the store. A 1.0 rollout has one attempt; a store rollout may have several (the
// store's retries). So each *attempt* of a store rollout is one 1.0 rollout: the first is named by the rollout
// (its 1.0 id, or its store id for a run's rollout), the store's k-th retry by `<name>.retry<k>`. A controller
// that saw `<name>` fail then sees `<name>.retry1` queuing and launches it afresh, as it would any new rollout.
// Pure reads: nothing here writes.
import { attemptFromRow, type AttemptRow, type RolloutRow } from '../store/rows';
import type { StoreDb } from '../store/store-db';
import { byIdempotencyKey } from '../store/transitions';
import type { Json, JsonObject } from '../store/types';
import {
  AGL1_KEY, CONTROLLER_MARGIN_SECONDS, DEFAULT_TIMEOUT_SECONDS, idempotencyKeyOf, type Agl1Meta, type Rollout1, type State, type Status1,
} from './types';

/** The 1.0 API's row of a rollout: the status fields the store has no place for, and its own bookkeeping. */
export interface TrackedRow extends Omit<Status1, 'state'> {
  v1_id: string;
  rollout_id: string;
  sequence: number;
  final_state: State | null;
  started_by_agent: number;
  deleted: number;
}

/** A 1.0 rollout found in the store. */
export interface Located {
  v1Id: string;
  row: RolloutRow;
  meta: Agl1Meta;
  /** The attempt (sequence_id) of `row` this 1.0 rollout is. */
  sequence: number;
  /** That attempt, once started. */
  attempt: AttemptRow | undefined;
  /** The 1.0 API's own record of it, once it created or changed it. */
  tracked: TrackedRow | undefined;
}

const RETRY_SUFFIX = /^(.+)\.retry([1-9]\d{0,5})$/;

export function agl1Meta(row: RolloutRow): Agl1Meta | null {
  if (!row.metadata) return null;
  const meta = (JSON.parse(row.metadata) as JsonObject | null)?.[AGL1_KEY];
  return meta && typeof meta === 'object' && !Array.isArray(meta) ? (meta as unknown as Agl1Meta) : null;
}

export function v1IdOf(row: RolloutRow, meta: Agl1Meta, sequence: number): string {
  const base = meta.rollout_id ?? row.rollout_id;
  return sequence <= 1 ? base : `${base}.retry${sequence - 1}`;
}

export function trackedRow(s: StoreDb, v1Id: string): TrackedRow | undefined {
  return s.stmt('SELECT * FROM agl1_rollouts WHERE v1_id = ?').get(v1Id) as TrackedRow | undefined;
}

export function attemptBySequence(s: StoreDb, rolloutId: string, sequence: number): AttemptRow | undefined {
  return s.stmt('SELECT * FROM attempts WHERE rollout_id = ? AND sequence_id = ?').get(rolloutId, sequence) as AttemptRow | undefined;
}

/** Whether the not-yet-started attempt `sequence` of `row` is a 1.0 rollout (queuing, or ended before it started). */
function nextExists(s: StoreDb, row: RolloutRow, sequence: number): boolean {
  if (sequence !== row.attempt_count + 1) return false;
  if (row.status === 'queuing' || row.status === 'requeuing') return true;
  if (row.attempt_count === 0) return row.status !== 'preparing' && row.status !== 'running';
  if (row.status !== 'cancelled') return false;
  // Cancelled while waiting for its retry (the retry was listed as queuing), not while an attempt ran.
  const latest = attemptBySequence(s, row.rollout_id, row.attempt_count);
  return latest !== undefined && latest.status !== 'preparing' && latest.status !== 'running';
}

/** The 1.0 rollout named `v1Id`, or null (unknown, deleted, or a store rollout 1.0 agents do not serve). */
export function locate(s: StoreDb, v1Id: string): Located | null {
  const tracked = trackedRow(s, v1Id);
  if (tracked?.deleted) return null;
  let row: RolloutRow | undefined;
  let sequence = 1;
  if (tracked) {
    row = s.rolloutRow(tracked.rollout_id);
    sequence = tracked.sequence;
  } else {
    row = byIdempotencyKey(s, idempotencyKeyOf(v1Id));
    if (!row) {
      const byStoreId = s.rolloutRow(v1Id);
      const retry = byStoreId ? null : RETRY_SUFFIX.exec(v1Id);
      row = byStoreId ?? (retry ? s.rolloutRow(retry[1]!) : undefined);
      if (retry) sequence = Number(retry[2]) + 1;
      // A rollout made through the 1.0 API answers to its own id only.
      if (row && agl1Meta(row)?.rollout_id !== undefined) return null;
    }
  }
  if (!row) return null;
  const meta = agl1Meta(row);
  if (!meta) return null;
  const attempt = attemptBySequence(s, row.rollout_id, sequence);
  if (!attempt && !nextExists(s, row, sequence)) return null;
  return { v1Id, row, meta, sequence, attempt, tracked };
}

/** The 1.0 rollout of store rollout `row`'s attempt `sequence` (for listings: the row is known to be visible). */
export function locateAttempt(s: StoreDb, row: RolloutRow, meta: Agl1Meta, sequence: number): Located | null {
  const v1Id = v1IdOf(row, meta, sequence);
  const tracked = trackedRow(s, v1Id);
  if (tracked?.deleted) return null;
  const attempt = attemptBySequence(s, row.rollout_id, sequence);
  if (!attempt && !nextExists(s, row, sequence)) return null;
  return { v1Id, row, meta, sequence, attempt, tracked };
}

/** The 1.0 state: frozen once terminal; else from the store's attempt and rollout. */
export function stateOf(loc: Located): State {
  if (loc.tracked?.final_state) return loc.tracked.final_state;
  const { row, attempt } = loc;
  if (!attempt) {
    if (row.status === 'queuing' || row.status === 'requeuing') return 'queuing';
    return row.status === 'succeeded' ? 'succeeded' : 'failed';
  }
  switch (attempt.status) {
    case 'succeeded':
      return 'succeeded';
    case 'failed':
    case 'timeout':
    case 'unresponsive':
      return 'failed';
    default: {
      const latest = attempt.sequence_id === row.attempt_count;
      if (latest && (row.status === 'preparing' || row.status === 'running')) return 'running';
      return latest && row.status === 'succeeded' ? 'succeeded' : 'failed';
    }
  }
}

/** Why a rollout the store ended is failed, when no controller said. */
function storeReason(loc: Located, state: State): string | null {
  if (state !== 'failed') return null;
  const a = loc.attempt;
  const config = JSON.parse(loc.row.config) as { timeout_seconds?: number | null; unresponsive_seconds?: number | null };
  if (a?.status === 'timeout') return `the store timed the attempt out after ${config.timeout_seconds} s`;
  if (a?.status === 'unresponsive') return `the store heard no call or event of the attempt for ${config.unresponsive_seconds} s`;
  if (loc.row.status === 'cancelled') return 'cancelled in the store';
  return null;
}

/** The controller's timeout: the store's, less the margin (see CONTROLLER_MARGIN_SECONDS), else upstream's default. */
function timeoutOf(loc: Located): number {
  if (typeof loc.meta.config.timeout_seconds === 'number') return loc.meta.config.timeout_seconds;
  const storeTimeout = (JSON.parse(loc.row.config) as { timeout_seconds?: number | null }).timeout_seconds;
  if (typeof storeTimeout !== 'number') return DEFAULT_TIMEOUT_SECONDS;
  return Math.max(1, Math.floor(storeTimeout) - CONTROLLER_MARGIN_SECONDS);
}

export function createdAt(s: StoreDb, loc: Located): number {
  if (loc.tracked) return loc.tracked.created_at;
  if (loc.sequence === 1) return loc.row.start_time;
  // A retry exists from when the attempt before it ended.
  const before = attemptBySequence(s, loc.row.rollout_id, loc.sequence - 1);
  return before?.end_time ?? before?.start_time ?? loc.row.start_time;
}

export function toRollout1(s: StoreDb, loc: Located): Rollout1 {
  const state = stateOf(loc);
  const created = createdAt(s, loc);
  const attempt = loc.attempt ? attemptFromRow(loc.attempt) : null;
  const metadata = { ...((JSON.parse(loc.row.metadata ?? '{}') as JsonObject | null) ?? {}) };
  delete metadata[AGL1_KEY];
  const t = loc.tracked;
  return {
    rollout_id: loc.v1Id,
    input: JSON.parse(loc.row.input) as Json,
    is_train: loc.row.mode !== 'val',
    config: { timeout_seconds: timeoutOf(loc), local: loc.meta.config.local ?? null, k8s: loc.meta.config.k8s ?? null },
    metadata: { batch_idx: metadata.batch_idx ?? null, sample_idx_in_batch: metadata.sample_idx_in_batch ?? null, ...metadata },
    status: {
      state,
      k8s_job_name: t?.k8s_job_name ?? null,
      last_attempt_id: t?.last_attempt_id ?? null,
      error_message: t?.error_message ?? storeReason(loc, state),
      version: t?.version ?? 1,
      created_at: created,
      updated_at: t?.updated_at ?? Math.max(created, attempt?.end_time ?? attempt?.start_time ?? created),
    },
  };
}
