// Workers (§3.5): queries and the heartbeat upsert.
import { BadRequestError } from './errors';
import { checkFilterLogic, checkPagination, combine, contains, inList, limitClause, orderBy, type Condition } from './query';
import { workerFromRow, type WorkerRow } from './rows';
import type { StoreDb } from './store-db';
import { upsertWorker } from './transitions';
import type { JsonObject, PaginatedResult, QueryWorkersRequest, Worker } from './types';

const WORKER_FIELDS = ['worker_id', 'status', 'heartbeat_stats', 'last_heartbeat_time', 'last_dequeue_time', 'last_busy_time', 'last_idle_time', 'current_rollout_id', 'current_attempt_id'];

export function queryWorkers(s: StoreDb, q: QueryWorkersRequest): PaginatedResult<Worker> {
  const p = checkPagination(q, WORKER_FIELDS);
  const logic = checkFilterLogic(q.filter_logic);
  const conditions: Condition[] = [];
  if (q.status_in) conditions.push(inList('status', q.status_in));
  if (q.worker_id_contains) conditions.push(contains('worker_id', q.worker_id_contains));
  const where = combine(conditions, logic);
  const total = (s.stmt(`SELECT COUNT(*) AS n FROM workers WHERE ${where.sql}`).get(...where.params) as { n: number }).n;
  const rows = s.stmt(`SELECT * FROM workers WHERE ${where.sql} ${orderBy(p.sortBy, p.sortOrder, 'seq')} ${limitClause(p.limit, p.offset)}`)
    .all(...where.params) as WorkerRow[];
  return { items: rows.map(workerFromRow), limit: p.limit, offset: p.offset, total };
}

export function getWorkerById(s: StoreDb, workerId: string): Worker | null {
  const row = s.stmt('SELECT * FROM workers WHERE worker_id = ?').get(workerId) as WorkerRow | undefined;
  return row ? workerFromRow(row) : null;
}

/** Heartbeat: upserts the worker with last_heartbeat_time = now and the stats if given. */
export function updateWorker(s: StoreDb, workerId: string, heartbeatStats?: JsonObject | null): Worker {
  if (heartbeatStats === null) throw new BadRequestError('heartbeat_stats is invalid; it cannot be a null value.');
  return s.tx(() => {
    upsertWorker(s, workerId);
    s.stmt('UPDATE workers SET last_heartbeat_time = ? WHERE worker_id = ?').run(s.now(), workerId);
    if (heartbeatStats !== undefined) {
      s.stmt('UPDATE workers SET heartbeat_stats = ? WHERE worker_id = ?').run(JSON.stringify(heartbeatStats), workerId);
    }
    return getWorkerById(s, workerId) as Worker;
  });
}
