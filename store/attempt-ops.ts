// Attempts (§3.3) and the watchdog's scan (§3.7).
import { BadRequestError } from './errors';
import { checkPagination, limitClause, orderBy } from './query';
import { attemptFromRow, type AttemptRow } from './rows';
import { stripUndefined } from './rollout-ops';
import type { StoreDb } from './store-db';
import { applyAttemptUpdate } from './transitions';
import { DEFAULT_ROLLOUT_CONFIG, type Attempt, type PaginatedResult, type Pagination, type RolloutConfig, type UpdateAttemptRequest } from './types';
import { findUnhealthy } from './watchdog';

const ATTEMPT_FIELDS = ['rollout_id', 'attempt_id', 'sequence_id', 'start_time', 'end_time', 'status', 'worker_id', 'last_heartbeat_time', 'metadata'];

export function queryAttempts(s: StoreDb, rolloutId: string, p: Pagination): PaginatedResult<Attempt> {
  const checked = checkPagination({ sort_by: 'sequence_id', ...stripUndefined(p) }, ATTEMPT_FIELDS);
  const total = (s.stmt('SELECT COUNT(*) AS n FROM attempts WHERE rollout_id = ?').get(rolloutId) as { n: number }).n;
  const rows = s.stmt(`SELECT * FROM attempts WHERE rollout_id = ? ${orderBy(checked.sortBy, checked.sortOrder, 'sequence_id')} ${limitClause(checked.limit, checked.offset)}`)
    .all(rolloutId) as AttemptRow[];
  return { items: rows.map(attemptFromRow), limit: checked.limit, offset: checked.offset, total };
}

export function getLatestAttempt(s: StoreDb, rolloutId: string): Attempt | null {
  const row = s.stmt('SELECT * FROM attempts WHERE rollout_id = ? ORDER BY sequence_id DESC LIMIT 1').get(rolloutId) as AttemptRow | undefined;
  return row ? attemptFromRow(row) : null;
}

export function updateAttempt(s: StoreDb, rolloutId: string, attemptId: string, update: UpdateAttemptRequest): Attempt {
  for (const field of ['status', 'worker_id', 'last_heartbeat_time', 'metadata'] as const) {
    if (field in update && update[field] === null) throw new BadRequestError(`${field} is invalid; it cannot be a null value.`);
  }
  return s.tx(() => applyAttemptUpdate(s, rolloutId, attemptId, update));
}

/**
 * Marks attempts that exceeded their timeout or went silent (§3.7); returns how many were changed. Silence counts
 * from `servingSince` at the earliest: the store's start, or the end of its own last stall (stall-clock.ts).
 */
export function scanUnhealthy(s: StoreDb, servingSince = s.startedAt): number {
  const rows = s.stmt(`SELECT r.rollout_id, r.config, a.* FROM rollouts r
    JOIN attempts a ON a.rollout_id = r.rollout_id AND a.attempt_id = r.latest_attempt_id
    WHERE r.status IN ('preparing', 'running')
      AND (json_extract(r.config, '$.timeout_seconds') IS NOT NULL OR json_extract(r.config, '$.unresponsive_seconds') IS NOT NULL)`)
    .all() as (AttemptRow & { config: string })[];
  if (rows.length === 0) return 0;
  const running = rows.map((row) => ({
    rollout_id: row.rollout_id,
    config: { ...DEFAULT_ROLLOUT_CONFIG, ...JSON.parse(row.config) } as RolloutConfig,
    attempt: attemptFromRow(row),
  }));
  const unhealthy = findUnhealthy(running, s.now(), Math.max(s.startedAt, servingSince));
  if (unhealthy.length === 0) return 0;
  s.tx(() => {
    for (const u of unhealthy) applyAttemptUpdate(s, u.rollout_id, u.attempt_id, { status: u.status });
  });
  return unhealthy.length;
}
