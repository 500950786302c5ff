// The state changes of §3 that several operations share, each run inside the caller's transaction: a rollout's
// status with its side effects, the queue, a new attempt, an attempt update driving its rollout, and the worker
// telemetry that follows attempts (§3.3).
import { clip } from '../common/front-door';
import { newAttemptId } from './ids';
import { attemptFromRow, rolloutFromRow, toNullableJsonText, type AttemptRow, type RolloutRow } from './rows';
import type { StoreDb } from './store-db';
import { NotFoundError } from './errors';
import {
  DEFAULT_ROLLOUT_CONFIG, isTerminalRolloutStatus, type Attempt, type AttemptedRollout, type Rollout, type RolloutConfig,
  type RolloutStatus, type UpdateAttemptRequest,
} from './types';
import { rolloutStatusFromAttempt } from './watchdog';
import { noteAttemptEnd } from './run-policy/runner-standing';
import { flowOf } from './run-policy/fair-share';

/** Sets a rollout's status with its side effects: end_time for terminal statuses, re-queue for (re)queuing. */
export function setRolloutStatus(s: StoreDb, rolloutId: string, status: RolloutStatus): void {
  if (isTerminalRolloutStatus(status)) {
    s.stmt('UPDATE rollouts SET status = ?, end_time = ? WHERE rollout_id = ?').run(status, s.now(), rolloutId);
    s.finished(rolloutId);
  } else {
    s.stmt('UPDATE rollouts SET status = ? WHERE rollout_id = ?').run(status, rolloutId);
  }
  if (status === 'queuing' || status === 'requeuing') pushToQueue(s, rolloutId);
}

export function pushToQueue(s: StoreDb, rolloutId: string): void {
  const queued = s.stmt('SELECT 1 FROM rollout_queue WHERE rollout_id = ?').get(rolloutId);
  // Queued under its run's flow, so the dequeue shares the fleet between runs (fair-share.ts).
  if (!queued) s.stmt('INSERT INTO rollout_queue (rollout_id, flow) VALUES (?, ?)').run(rolloutId, flowOf(s.rolloutRow(rolloutId)?.metadata ?? null).flow);
}

/** The rollout with its latest attempt, when it has one. */
export function withLatestAttempt(s: StoreDb, row: RolloutRow): Rollout | AttemptedRollout {
  const rollout = rolloutFromRow(row);
  if (!row.latest_attempt_id) return rollout;
  const attempt = s.attemptRow(row.rollout_id, row.latest_attempt_id);
  return attempt ? { ...rollout, attempt: attemptFromRow(attempt) } : rollout;
}

/** A new attempt (`preparing`) for the rollout, which becomes `preparing` too. */
export function createAttempt(s: StoreDb, rollout: RolloutRow, workerId: string | null): AttemptedRollout {
  const attempt: Attempt = {
    rollout_id: rollout.rollout_id,
    attempt_id: newAttemptId(),
    sequence_id: rollout.attempt_count + 1,
    start_time: s.now(),
    end_time: null,
    status: 'preparing',
    worker_id: workerId,
    last_heartbeat_time: null,
    metadata: null,
  };
  s.stmt(`INSERT INTO attempts (rollout_id, attempt_id, sequence_id, start_time, status, worker_id, metadata)
    VALUES (?, ?, ?, ?, ?, ?, ?)`).run(attempt.rollout_id, attempt.attempt_id, attempt.sequence_id, attempt.start_time,
    attempt.status, workerId, toNullableJsonText(attempt.metadata));
  s.stmt(`UPDATE rollouts SET attempt_count = ?, latest_attempt_id = ?, status = 'preparing' WHERE rollout_id = ?`)
    .run(attempt.sequence_id, attempt.attempt_id, rollout.rollout_id);
  // The row as it is now, without reading it back: only these three columns changed.
  const updated: RolloutRow = { ...rollout, attempt_count: attempt.sequence_id, latest_attempt_id: attempt.attempt_id, status: 'preparing' };
  return { ...rolloutFromRow(updated), attempt };
}

export function upsertWorker(s: StoreDb, workerId: string): void {
  s.stmt(`INSERT OR IGNORE INTO workers (worker_id, status) VALUES (?, 'unknown')`).run(workerId);
}

/** Worker telemetry that follows an attempt (§3.3 "worker sync"). */
export function syncWorker(s: StoreDb, attempt: Attempt, dequeued: boolean): void {
  if (!attempt.worker_id) return;
  const now = s.now();
  upsertWorker(s, attempt.worker_id);
  if (dequeued) s.stmt('UPDATE workers SET last_dequeue_time = ? WHERE worker_id = ?').run(now, attempt.worker_id);
  if (attempt.status === 'succeeded' || attempt.status === 'failed' || attempt.status === 'timeout' || attempt.status === 'unresponsive') {
    const status = attempt.status === 'succeeded' || attempt.status === 'failed' ? 'idle' : 'unknown';
    s.stmt(`UPDATE workers SET status = ?, last_idle_time = ?, current_rollout_id = NULL, current_attempt_id = NULL
      WHERE worker_id = ?`).run(status, now, attempt.worker_id);
  } else {
    s.stmt(`UPDATE workers SET status = 'busy', last_busy_time = ?, current_rollout_id = ?, current_attempt_id = ?
      WHERE worker_id = ?`).run(now, attempt.rollout_id, attempt.attempt_id, attempt.worker_id);
  }
}

/** An empty dequeue: the worker is idle (telemetry only). */
export function markWorkerIdleAfterEmptyDequeue(s: StoreDb, workerId: string): void {
  const now = s.now();
  upsertWorker(s, workerId);
  const w = s.stmt('SELECT status FROM workers WHERE worker_id = ?').get(workerId) as { status: string };
  if (w.status === 'idle') {
    s.stmt('UPDATE workers SET last_dequeue_time = ? WHERE worker_id = ?').run(now, workerId);
  } else {
    s.stmt(`UPDATE workers SET status = 'idle', last_idle_time = ?, last_dequeue_time = ? WHERE worker_id = ?`).run(now, now, workerId);
  }
}

/** Updates an attempt ('latest' names the rollout's latest); only the latest attempt drives its rollout. */
export function applyAttemptUpdate(s: StoreDb, rolloutId: string, attemptId: string, update: UpdateAttemptRequest): Attempt {
  // Only what this needs of the rollout (its input and metadata can be large: not read, not parsed).
  const rollout = s.stmt('SELECT status, latest_attempt_id, config FROM rollouts WHERE rollout_id = ?').get(rolloutId) as
    Pick<RolloutRow, 'status' | 'latest_attempt_id' | 'config'> | undefined;
  if (!rollout) throw new NotFoundError(`Rollout ${clip(rolloutId)} not found`);
  if (!rollout.latest_attempt_id) throw new NotFoundError(`No attempts found for rollout ${clip(rolloutId)}`);
  const id = attemptId === 'latest' ? rollout.latest_attempt_id : attemptId;
  const row = s.attemptRow(rolloutId, id);
  if (!row) throw new NotFoundError(`Attempt ${clip(attemptId)} not found for rollout ${clip(rolloutId)}`);
  const attempt = attemptFromRow(row);
  if (update.worker_id !== undefined) attempt.worker_id = update.worker_id;
  if (update.status !== undefined) {
    attempt.status = update.status;
    if (update.status === 'failed' || update.status === 'succeeded') attempt.end_time = s.now();
  }
  if (update.last_heartbeat_time !== undefined) attempt.last_heartbeat_time = update.last_heartbeat_time;
  if (update.metadata !== undefined) attempt.metadata = update.metadata;
  s.stmt(`UPDATE attempts SET status = ?, end_time = ?, worker_id = ?, last_heartbeat_time = ?, metadata = ?
    WHERE rollout_id = ? AND attempt_id = ?`).run(attempt.status, attempt.end_time, attempt.worker_id,
    attempt.last_heartbeat_time, toNullableJsonText(attempt.metadata), rolloutId, id);

  // Only the latest attempt drives the rollout, and a finished rollout never changes again.
  const status = rollout.status as RolloutStatus;
  if (id === rollout.latest_attempt_id && !isTerminalRolloutStatus(status)) {
    const config: RolloutConfig = { ...DEFAULT_ROLLOUT_CONFIG, ...(JSON.parse(rollout.config) as Partial<RolloutConfig>) };
    const next = rolloutStatusFromAttempt(attempt.status, attempt.sequence_id, config);
    if (next !== status) setRolloutStatus(s, rolloutId, next);
  }
  if (update.status !== undefined || update.worker_id) syncWorker(s, attempt, false);
  if (update.status !== undefined && row.status !== update.status) noteAttemptEnd(s, attempt.worker_id, update.status);
  return attempt;
}

/** A span arrived for this attempt (§3.4): it is alive, and a preparing one is running. */
export function heartbeatFromSpan(s: StoreDb, attemptRow: AttemptRow): void {
  const status = attemptRow.status === 'preparing' || attemptRow.status === 'unresponsive' ? 'running' : attemptRow.status;
  s.stmt('UPDATE attempts SET last_heartbeat_time = ?, status = ? WHERE rollout_id = ? AND attempt_id = ?')
    .run(s.now(), status, attemptRow.rollout_id, attemptRow.attempt_id);
  // Re-read: the rollout may have changed earlier in this transaction.
  const rollout = s.stmt('SELECT status, latest_attempt_id FROM rollouts WHERE rollout_id = ?').get(attemptRow.rollout_id) as
    Pick<RolloutRow, 'status' | 'latest_attempt_id'> | undefined;
  if (!rollout) throw new NotFoundError(`Rollout ${attemptRow.rollout_id} not found`);
  // A late span of a finished attempt must not revive its rollout (the Python store's pitfall 9 in §10).
  if (rollout.latest_attempt_id === attemptRow.attempt_id && status === 'running'
    && (rollout.status === 'preparing' || rollout.status === 'requeuing')) {
    setRolloutStatus(s, attemptRow.rollout_id, 'running');
  }
}

/** A stored idempotency key's rollout, if any. */
export function byIdempotencyKey(s: StoreDb, key: string | null): RolloutRow | undefined {
  if (key === null) return undefined;
  return s.stmt('SELECT * FROM rollouts WHERE idempotency_key = ?').get(key) as RolloutRow | undefined;
}
