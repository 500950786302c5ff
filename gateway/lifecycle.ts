// The 1.0 rollout lifecycle on the store: enqueue (idempotent by rollout_id), the status PATCH with upstream's
// transitions and 409s, the start an agent's first call implies, and DELETE. Each function is one transaction
// (StoreDb.tx); state changes go through the store's own transitions, so its retries, watchdog and listeners
// (a run waiting for its rollouts) see them as they see a runner's.
import { clip } from '../common/front-door';
import { randomUUID } from 'node:crypto';
import { NotFoundError, StoreError } from '../store/errors';
import { enqueueRollouts } from '../store/rollout-ops';
import type { StoreDb } from '../store/store-db';
import { applyAttemptUpdate, createAttempt, setRolloutStatus } from '../store/transitions';
import { isTerminalRolloutStatus, type Json, type JsonObject, type RolloutStatus } from '../store/types';
import {
  AGL1_KEY, CONTROLLER_MARGIN_SECONDS, DEFAULT_TIMEOUT_SECONDS, TERMINAL_STATES, VALID_TRANSITIONS, idempotencyKeyOf,
  type Agl1Meta, type LaunchConfig, type Rollout1, type State,
} from './types';
import { createdAt, locate, stateOf, toRollout1, type Located, type TrackedRow } from './view';

export interface Create1 {
  input: Json;
  is_train: boolean;
  config: (Partial<LaunchConfig> & { timeout_seconds?: number }) | null;
  metadata: JsonObject | null;
  rollout_id: string | null;
}

export interface StatusPatch {
  state?: State | null;
  k8s_job_name?: string | null;
  last_attempt_id?: string | null;
  error_message?: string | null;
}

type TrackedFields = Partial<Pick<TrackedRow, 'k8s_job_name' | 'last_attempt_id' | 'error_message' | 'started_by_agent' | 'deleted'>>;

export const notFound = (v1Id: string) => new NotFoundError(`Rollout not found: ${clip(v1Id)}`);

/** Records the 1.0 fields of a rollout (creating its row); `bump`: a PATCH (version + 1, updated now). */
export function track(s: StoreDb, loc: Located, fields: TrackedFields, bump: boolean): void {
  if (!loc.tracked) {
    const now = s.now();
    s.stmt(`INSERT INTO agl1_rollouts (v1_id, rollout_id, sequence, version, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)`)
      .run(loc.v1Id, loc.row.rollout_id, loc.sequence, createdAt(s, loc), now);
  }
  const sets = Object.keys(fields).map((k) => `${k} = ?`);
  if (bump) sets.push('version = version + 1', 'updated_at = ?');
  if (sets.length === 0) return;
  const params = [...Object.values(fields), ...(bump ? [s.now()] : [])];
  s.stmt(`UPDATE agl1_rollouts SET ${sets.join(', ')} WHERE v1_id = ?`).run(...params, loc.v1Id);
}

/** Freezes a terminal 1.0 rollout and appends it to the completion log, once. Returns whether it did. */
export function freeze(s: StoreDb, v1Id: string, state: State): boolean {
  if (!TERMINAL_STATES.includes(state)) return false;
  const changed = s.stmt('UPDATE agl1_rollouts SET final_state = ? WHERE v1_id = ? AND final_state IS NULL').run(state, v1Id).changes > 0;
  if (changed) s.stmt('INSERT INTO agl1_terminal (v1_id) VALUES (?)').run(v1Id);
  return changed;
}

export function enqueue(s: StoreDb, reqs: Create1[]): Rollout1[] {
  return s.tx(() => reqs.map((req) => {
    if (req.rollout_id) {
      const found = locate(s, req.rollout_id);
      if (found) return toRollout1(s, found); // idempotent: the existing rollout, unchanged
    }
    const v1Id = req.rollout_id || randomUUID().replace(/-/g, '');
    const timeout = req.config?.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS;
    const meta: Agl1Meta = {
      rollout_id: v1Id,
      config: { timeout_seconds: timeout, local: req.config?.local ?? null, k8s: req.config?.k8s ?? null },
    };
    // One attempt, as in 1.0 (retrying is the trainer's job); the store's timeout backs the controller's up.
    enqueueRollouts(s, [{
      input: req.input,
      mode: req.is_train ? 'train' : 'val',
      metadata: { ...(req.metadata ?? {}), [AGL1_KEY]: meta as unknown as JsonObject },
      config: { timeout_seconds: timeout + CONTROLLER_MARGIN_SECONDS, max_attempts: 1, retry_condition: [] },
    }], [idempotencyKeyOf(v1Id)]);
    const loc = locate(s, v1Id)!;
    track(s, loc, {}, false);
    return toRollout1(s, locate(s, v1Id)!);
  }));
}

/** Starts the store attempt of a queuing 1.0 rollout (taking it off the store's queue), then ends it if asked. */
function startAttempt(s: StoreDb, loc: Located, end: 'failed' | null): void {
  s.stmt('DELETE FROM rollout_queue WHERE rollout_id = ?').run(loc.row.rollout_id);
  const { attempt } = createAttempt(s, s.requireRolloutRow(loc.row.rollout_id), null);
  if (attempt.sequence_id !== loc.sequence) throw new Error(`attempt ${attempt.sequence_id} started for 1.0 rollout ${loc.v1Id}, which is attempt ${loc.sequence}`);
  applyAttemptUpdate(s, loc.row.rollout_id, attempt.attempt_id, { status: 'running', last_heartbeat_time: s.now() });
  if (end) applyAttemptUpdate(s, loc.row.rollout_id, attempt.attempt_id, { status: end });
}

/** The store side of a 1.0 transition: attempts end as a runner's do, so the store's retry rules apply. */
function applyTransition(s: StoreDb, loc: Located, to: State): void {
  if (!loc.attempt) return startAttempt(s, loc, to === 'failed' ? 'failed' : null);
  applyAttemptUpdate(s, loc.row.rollout_id, loc.attempt.attempt_id, { status: to as 'succeeded' | 'failed' });
}

export function patch(s: StoreDb, v1Id: string, p: StatusPatch): Rollout1 {
  return s.tx(() => {
    const loc = locate(s, v1Id);
    if (!loc) throw notFound(v1Id);
    const from = stateOf(loc);
    if (loc.tracked) freeze(s, v1Id, from); // the store may have ended it since
    if (Object.keys(p).length === 0) return toRollout1(s, locate(s, v1Id)!);
    const fields: TrackedFields = {};
    for (const k of ['k8s_job_name', 'last_attempt_id', 'error_message'] as const) if (k in p) fields[k] = p[k] ?? null;
    if ('state' in p) {
      const to = p.state ?? null;
      // An agent's first call started it before the controller's PATCH to running arrived: that PATCH confirms.
      const confirms = from === 'running' && to === 'running' && loc.tracked?.started_by_agent === 1;
      if (!confirms && (to === null || !VALID_TRANSITIONS[from].includes(to))) {
        throw new StoreError(`Rollout ${clip(v1Id)}: cannot transition ${from} -> ${to ?? 'None'}`, 409);
      }
      if (!confirms) applyTransition(s, loc, to!);
      fields.started_by_agent = 0;
    }
    track(s, loc, fields, true);
    const after = locate(s, v1Id)!;
    freeze(s, v1Id, stateOf(after));
    return toRollout1(s, locate(s, v1Id)!);
  });
}

/**
 * An agent called the model or posted an event for its rollout: a queuing one is started (its calls and rewards
 * need a store attempt). Returns the rollout as it is then; throws 404 for an unknown one.
 */
export function startedByAgent(s: StoreDb, v1Id: string): Located {
  let started = false;
  return s.tx(() => {
    const loc = locate(s, v1Id);
    if (!loc) throw notFound(v1Id);
    if (stateOf(loc) !== 'queuing') return loc;
    startAttempt(s, loc, null);
    track(s, loc, { started_by_agent: 1 }, false);
    started = true;
    return locate(s, v1Id)!;
  }, () => started);
}

/**
 * DELETE: a rollout made through the 1.0 API is removed from the store with its attempts, spans and events (its
 * id may be enqueued again). A run's rollout is only hidden from the 1.0 API, and cancelled if it had not ended,
 * so the run counts it and goes on; the run's records of it stay.
 */
export function remove(s: StoreDb, v1Id: string): void {
  s.tx(() => {
    const loc = locate(s, v1Id);
    if (!loc) return;
    const rid = loc.row.rollout_id;
    if (loc.meta.rollout_id !== undefined) {
      for (const table of ['spans', 'attempts', 'rollout_queue', 'agl1_events', 'agl1_rollouts', 'rollouts']) {
        s.stmt(`DELETE FROM ${table} WHERE rollout_id = ?`).run(rid);
      }
      return;
    }
    if (!TERMINAL_STATES.includes(stateOf(loc)) && !isTerminalRolloutStatus(loc.row.status as RolloutStatus)) setRolloutStatus(s, rid, 'cancelled');
    track(s, loc, { deleted: 1 }, false);
  });
}
