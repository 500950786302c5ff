// The LightningStore semantics of §3 over SQLite. Every public method is one transaction; methods are
// synchronous (better-sqlite3), so the HTTP layer needs no locking. Listeners hear about rollouts that
// reached a terminal status after the transaction that finished them committed.
import type Database from 'better-sqlite3';
import { BadRequestError, NotFoundError } from './errors';
import { newAttemptId, newResourcesId, newRolloutId } from './ids';
import {
  checkFilterLogic, checkPagination, combine, contains, equals, inList, limitClause, orderBy, type Condition,
} from './query';
import {
  attemptFromRow, resourcesFromRow, rolloutFromRow, spanFromBody, toJsonText, toNullableJsonText, workerFromRow,
  type AttemptRow, type ResourcesRow, type RolloutRow, type WorkerRow,
} from './rows';
import {
  DEFAULT_ROLLOUT_CONFIG, isTerminalRolloutStatus,
  type Attempt, type AttemptedRollout, type EnqueueRolloutRequest, type JsonObject,
  type NamedResources, type PaginatedResult, type Pagination, type QueryResourcesRequest, type QueryRolloutsRequest,
  type QuerySpansRequest, type QueryWorkersRequest, type ResourcesUpdate, type Rollout, type RolloutConfig,
  type RolloutStatus, type Span, type StartRolloutRequest, type StoreStatistics, type UpdateAttemptRequest,
  type UpdateRolloutRequest, type Worker,
} from './types';
import { findUnhealthy, rolloutStatusFromAttempt } from './watchdog';

const ROLLOUT_FIELDS = ['rollout_id', 'input', 'start_time', 'end_time', 'mode', 'resources_id', 'status', 'config', 'metadata'];
const ATTEMPT_FIELDS = ['rollout_id', 'attempt_id', 'sequence_id', 'start_time', 'end_time', 'status', 'worker_id', 'last_heartbeat_time', 'metadata'];
const WORKER_FIELDS = ['worker_id', 'status', 'heartbeat_stats', 'last_heartbeat_time', 'last_dequeue_time', 'last_busy_time', 'last_idle_time', 'current_rollout_id', 'current_attempt_id'];
const RESOURCES_FIELDS = ['resources_id', 'create_time', 'update_time', 'version', 'resources'];
const SPAN_FIELDS = ['rollout_id', 'attempt_id', 'sequence_id', 'trace_id', 'span_id', 'parent_id', 'name', 'start_time', 'end_time'];

export interface LightningStoreOptions {
  /** Seconds since the epoch; injectable for tests. */
  now?: () => number;
  name?: string;
}

type FinishedListener = (rollouts: Rollout[]) => void;

export class LightningStore {
  private readonly now: () => number;
  private readonly startedAt: number;
  private readonly name: string;
  private readonly listeners = new Set<FinishedListener>();
  private finishedInTx: string[] = [];
  /** Incremented by every committed durable write transaction (the server fsyncs before acknowledging those). */
  writeCount = 0;

  constructor(private readonly db: Database.Database, options: LightningStoreOptions = {}) {
    this.now = options.now ?? (() => Date.now() / 1000);
    this.startedAt = this.now();
    this.name = options.name ?? 'SqliteLightningStore';
    this.runInTransaction = this.db.transaction((fn: () => unknown) => fn());
  }

  private readonly statements = new Map<string, Database.Statement>();
  /** One transaction wrapper for all operations (creating one per call is costly in better-sqlite3). */
  private readonly runInTransaction: (fn: () => unknown) => unknown;

  /** Prepared statements are cached: compiling SQL on every call costs more than running it. */
  private stmt(sql: string): Database.Statement {
    let st = this.statements.get(sql);
    if (!st) {
      if (this.statements.size > 500) this.statements.clear(); // dynamic filters (IN lists) vary; stay bounded
      st = this.db.prepare(sql);
      this.statements.set(sql, st);
    }
    return st;
  }

  onRolloutsFinished(listener: FinishedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Runs fn in a transaction, then tells listeners about rollouts that finished inside it. `durable(result)` false
   * marks a telemetry-only write (an empty dequeue) that the server need not fsync before answering.
   */
  private tx<T>(fn: () => T, durable: (result: T) => boolean = () => true): T {
    this.finishedInTx = [];
    let result: T;
    try {
      result = this.runInTransaction(fn) as T;
      if (durable(result)) this.writeCount++;
    } catch (err) {
      this.finishedInTx = [];
      throw err;
    }
    const ids = this.finishedInTx;
    this.finishedInTx = [];
    if (ids.length > 0 && this.listeners.size > 0) {
      const rollouts = ids.map((id) => this.rolloutOrNull(id)).filter((r): r is Rollout => r !== null);
      for (const listener of this.listeners) listener(rollouts);
    }
    return result;
  }

  // ---------------------------------------------------------------- rows

  private rolloutRow(id: string): RolloutRow | undefined {
    return this.stmt('SELECT * FROM rollouts WHERE rollout_id = ?').get(id) as RolloutRow | undefined;
  }

  private requireRolloutRow(id: string): RolloutRow {
    const row = this.rolloutRow(id);
    if (!row) throw new NotFoundError(`Rollout ${id} not found`);
    return row;
  }

  private rolloutOrNull(id: string): Rollout | null {
    const row = this.rolloutRow(id);
    return row ? rolloutFromRow(row) : null;
  }

  private attemptRow(rolloutId: string, attemptId: string): AttemptRow | undefined {
    return this.stmt('SELECT * FROM attempts WHERE rollout_id = ? AND attempt_id = ?').get(rolloutId, attemptId) as AttemptRow | undefined;
  }

  private withLatestAttempt(row: RolloutRow): Rollout | AttemptedRollout {
    const rollout = rolloutFromRow(row);
    if (!row.latest_attempt_id) return rollout;
    const attempt = this.attemptRow(row.rollout_id, row.latest_attempt_id);
    return attempt ? { ...rollout, attempt: attemptFromRow(attempt) } : rollout;
  }

  private latestResourcesId(): string | null {
    const row = this.stmt('SELECT resources_id FROM resources ORDER BY touched DESC LIMIT 1').get() as { resources_id: string } | undefined;
    return row?.resources_id ?? null;
  }

  // ---------------------------------------------------------------- status changes

  /** Sets a rollout's status with its side effects: end_time for terminal statuses, re-queue for (re)queuing. */
  private setRolloutStatus(rolloutId: string, status: RolloutStatus): void {
    const endTime = isTerminalRolloutStatus(status) ? this.now() : undefined;
    if (endTime !== undefined) {
      this.stmt('UPDATE rollouts SET status = ?, end_time = ? WHERE rollout_id = ?').run(status, endTime, rolloutId);
      this.finishedInTx.push(rolloutId);
    } else {
      this.stmt('UPDATE rollouts SET status = ? WHERE rollout_id = ?').run(status, rolloutId);
    }
    if (status === 'queuing' || status === 'requeuing') this.pushToQueue(rolloutId);
  }

  private pushToQueue(rolloutId: string): void {
    const queued = this.stmt('SELECT 1 FROM rollout_queue WHERE rollout_id = ?').get(rolloutId);
    if (!queued) this.stmt('INSERT INTO rollout_queue (rollout_id) VALUES (?)').run(rolloutId);
  }

  /** Worker telemetry that follows an attempt (§3.3 "worker sync"). */
  private syncWorker(attempt: Attempt, dequeued: boolean): void {
    if (!attempt.worker_id) return;
    const now = this.now();
    this.upsertWorker(attempt.worker_id);
    if (dequeued) this.stmt('UPDATE workers SET last_dequeue_time = ? WHERE worker_id = ?').run(now, attempt.worker_id);
    if (attempt.status === 'succeeded' || attempt.status === 'failed' || attempt.status === 'timeout' || attempt.status === 'unresponsive') {
      const status = attempt.status === 'succeeded' || attempt.status === 'failed' ? 'idle' : 'unknown';
      this.stmt(`UPDATE workers SET status = ?, last_idle_time = ?, current_rollout_id = NULL, current_attempt_id = NULL
        WHERE worker_id = ?`).run(status, now, attempt.worker_id);
    } else {
      this.stmt(`UPDATE workers SET status = 'busy', last_busy_time = ?, current_rollout_id = ?, current_attempt_id = ?
        WHERE worker_id = ?`).run(now, attempt.rollout_id, attempt.attempt_id, attempt.worker_id);
    }
  }

  private upsertWorker(workerId: string): void {
    this.stmt(`INSERT OR IGNORE INTO workers (worker_id, status) VALUES (?, 'unknown')`).run(workerId);
  }

  private createAttempt(rollout: RolloutRow, workerId: string | null): AttemptedRollout {
    const attempt: Attempt = {
      rollout_id: rollout.rollout_id,
      attempt_id: newAttemptId(),
      sequence_id: rollout.attempt_count + 1,
      start_time: this.now(),
      end_time: null,
      status: 'preparing',
      worker_id: workerId,
      last_heartbeat_time: null,
      metadata: null,
    };
    this.stmt(`INSERT INTO attempts (rollout_id, attempt_id, sequence_id, start_time, status, worker_id, metadata)
      VALUES (?, ?, ?, ?, ?, ?, ?)`).run(attempt.rollout_id, attempt.attempt_id, attempt.sequence_id, attempt.start_time,
      attempt.status, workerId, toNullableJsonText(attempt.metadata));
    this.stmt('UPDATE rollouts SET attempt_count = ?, latest_attempt_id = ? WHERE rollout_id = ?')
      .run(attempt.sequence_id, attempt.attempt_id, rollout.rollout_id);
    this.setRolloutStatus(rollout.rollout_id, 'preparing');
    return { ...rolloutFromRow(this.requireRolloutRow(rollout.rollout_id)), attempt };
  }

  // ---------------------------------------------------------------- rollouts

  private insertRollout(req: EnqueueRolloutRequest, status: RolloutStatus, idempotencyKey: string | null, latest: string | null): RolloutRow {
    const config: RolloutConfig = { ...DEFAULT_ROLLOUT_CONFIG, ...stripUndefined(req.config ?? {}) };
    const id = newRolloutId();
    this.stmt(`INSERT INTO rollouts (rollout_id, input, start_time, mode, resources_id, status, config, metadata, idempotency_key)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(id, toJsonText(req.input), this.now(), req.mode ?? null,
      req.resources_id ?? latest, status, JSON.stringify(config), JSON.stringify(req.metadata ?? {}), idempotencyKey);
    return this.requireRolloutRow(id);
  }

  private byIdempotencyKey(key: string | null): RolloutRow | undefined {
    if (key === null) return undefined;
    return this.stmt('SELECT * FROM rollouts WHERE idempotency_key = ?').get(key) as RolloutRow | undefined;
  }

  /**
   * Enqueues rollouts (status `queuing`, FIFO). A rollout whose idempotency key was seen before is not created
   * again: the rollout made the first time is returned, in its current state.
   */
  enqueueRollouts(reqs: EnqueueRolloutRequest[], idempotencyKeys: (string | null)[] = []): Rollout[] {
    return this.tx(() => {
      const latest = this.latestResourcesId();
      return reqs.map((req, i) => {
        const key = idempotencyKeys[i] ?? null;
        const existing = this.byIdempotencyKey(key);
        if (existing) return rolloutFromRow(existing);
        const row = this.insertRollout(req, 'queuing', key, latest);
        this.pushToQueue(row.rollout_id);
        return rolloutFromRow(row);
      });
    });
  }

  /** Creates a rollout with its first attempt already running on `worker_id`; not queued. */
  startRollout(req: StartRolloutRequest, idempotencyKey: string | null = null): AttemptedRollout {
    return this.tx(() => {
      const existing = this.byIdempotencyKey(idempotencyKey);
      if (existing) {
        const current = this.withLatestAttempt(existing);
        if ('attempt' in current) return current;
      }
      const row = this.insertRollout(req, 'preparing', idempotencyKey, this.latestResourcesId());
      const attempted = this.createAttempt(row, req.worker_id ?? null);
      this.syncWorker(attempted.attempt, false);
      return attempted;
    });
  }

  dequeue(limit: number, workerId: string | null): AttemptedRollout[] {
    return this.tx(() => {
      const out: AttemptedRollout[] = [];
      const head = this.stmt('SELECT pos, rollout_id FROM rollout_queue ORDER BY pos LIMIT 1');
      const drop = this.stmt('DELETE FROM rollout_queue WHERE pos = ?');
      while (out.length < limit) {
        const item = head.get() as { pos: number; rollout_id: string } | undefined;
        if (!item) break;
        drop.run(item.pos);
        const row = this.rolloutRow(item.rollout_id);
        if (!row || (row.status !== 'queuing' && row.status !== 'requeuing')) continue; // cancelled or taken
        out.push(this.createAttempt(row, workerId));
      }
      if (workerId !== null) {
        const last = out[out.length - 1];
        if (last) this.syncWorker(last.attempt, true);
        else this.markWorkerIdleAfterEmptyDequeue(workerId);
      }
      return out;
    }, (out) => out.length > 0);
  }

  private markWorkerIdleAfterEmptyDequeue(workerId: string): void {
    const now = this.now();
    this.upsertWorker(workerId);
    const w = this.stmt('SELECT status FROM workers WHERE worker_id = ?').get(workerId) as { status: string };
    if (w.status === 'idle') {
      this.stmt('UPDATE workers SET last_dequeue_time = ? WHERE worker_id = ?').run(now, workerId);
    } else {
      this.stmt(`UPDATE workers SET status = 'idle', last_idle_time = ?, last_dequeue_time = ? WHERE worker_id = ?`)
        .run(now, now, workerId);
    }
  }

  /** A manual retry: a new attempt regardless of max_attempts. */
  startAttempt(rolloutId: string, workerId: string | null): AttemptedRollout {
    return this.tx(() => {
      const attempted = this.createAttempt(this.requireRolloutRow(rolloutId), workerId);
      this.syncWorker(attempted.attempt, false);
      return attempted;
    });
  }

  getRolloutById(rolloutId: string): Rollout | AttemptedRollout | null {
    const row = this.rolloutRow(rolloutId);
    return row ? this.withLatestAttempt(row) : null;
  }

  queryRollouts(q: QueryRolloutsRequest & { status?: RolloutStatus[] | null; rollout_ids?: string[] | null }): PaginatedResult<Rollout | AttemptedRollout> {
    const p = checkPagination(q, ROLLOUT_FIELDS);
    const logic = checkFilterLogic(q.filter_logic);
    const conditions: Condition[] = [];
    const statusIn = q.status_in ?? q.status;
    const idIn = q.rollout_id_in ?? q.rollout_ids;
    if (statusIn) conditions.push(inList('status', statusIn));
    if (idIn) conditions.push(inList('rollout_id', idIn));
    if (q.rollout_id_contains) conditions.push(contains('rollout_id', q.rollout_id_contains));
    const where = combine(conditions, logic);
    const total = (this.stmt(`SELECT COUNT(*) AS n FROM rollouts WHERE ${where.sql}`).get(...where.params) as { n: number }).n;
    const rows = this.stmt(`SELECT * FROM rollouts WHERE ${where.sql} ${orderBy(p.sortBy, p.sortOrder, 'seq')} ${limitClause(p.limit, p.offset)}`)
      .all(...where.params) as RolloutRow[];
    return { items: rows.map((r) => this.withLatestAttempt(r)), limit: p.limit, offset: p.offset, total };
  }

  updateRollout(rolloutId: string, update: UpdateRolloutRequest): Rollout {
    for (const field of ['status', 'config'] as const) {
      if (field in update && update[field] === null) throw new BadRequestError(`${field} is invalid; it cannot be a null value.`);
    }
    return this.tx(() => {
      const row = this.requireRolloutRow(rolloutId);
      const sets: string[] = [];
      const params: unknown[] = [];
      const set = (column: string, value: unknown) => { sets.push(`${column} = ?`); params.push(value); };
      if ('input' in update) set('input', toJsonText(update.input));
      if ('mode' in update) set('mode', update.mode ?? null);
      if ('resources_id' in update) set('resources_id', update.resources_id ?? null);
      if ('metadata' in update) set('metadata', toNullableJsonText(update.metadata));
      if (update.config) set('config', JSON.stringify({ ...DEFAULT_ROLLOUT_CONFIG, ...stripUndefined(update.config) }));
      if (sets.length > 0) this.stmt(`UPDATE rollouts SET ${sets.join(', ')} WHERE rollout_id = ?`).run(...params, rolloutId);
      if (update.status) this.setRolloutStatus(row.rollout_id, update.status);
      return rolloutFromRow(this.requireRolloutRow(rolloutId));
    });
  }

  /** Rollouts among `ids` that are terminal now, in input order; unknown ids are left out. */
  finishedRollouts(ids: string[]): Rollout[] {
    const out: Rollout[] = [];
    for (const id of ids) {
      const r = this.rolloutOrNull(id);
      if (r && isTerminalRolloutStatus(r.status)) out.push(r);
    }
    return out;
  }

  /** Ids among `ids` that exist and are not finished yet (what a waiter still waits for). */
  unfinishedRolloutIds(ids: string[]): Set<string> {
    const out = new Set<string>();
    const get = this.stmt('SELECT status FROM rollouts WHERE rollout_id = ?');
    for (const id of ids) {
      const row = get.get(id) as { status: RolloutStatus } | undefined;
      if (row && !isTerminalRolloutStatus(row.status)) out.add(id);
    }
    return out;
  }

  // ---------------------------------------------------------------- attempts

  queryAttempts(rolloutId: string, p: Pagination): PaginatedResult<Attempt> {
    const checked = checkPagination({ sort_by: 'sequence_id', ...stripUndefined(p) }, ATTEMPT_FIELDS);
    const total = (this.stmt('SELECT COUNT(*) AS n FROM attempts WHERE rollout_id = ?').get(rolloutId) as { n: number }).n;
    const rows = this.stmt(`SELECT * FROM attempts WHERE rollout_id = ? ${orderBy(checked.sortBy, checked.sortOrder, 'sequence_id')} ${limitClause(checked.limit, checked.offset)}`)
      .all(rolloutId) as AttemptRow[];
    return { items: rows.map(attemptFromRow), limit: checked.limit, offset: checked.offset, total };
  }

  getLatestAttempt(rolloutId: string): Attempt | null {
    const row = this.stmt('SELECT * FROM attempts WHERE rollout_id = ? ORDER BY sequence_id DESC LIMIT 1').get(rolloutId) as AttemptRow | undefined;
    return row ? attemptFromRow(row) : null;
  }

  updateAttempt(rolloutId: string, attemptId: string, update: UpdateAttemptRequest): Attempt {
    for (const field of ['status', 'worker_id', 'last_heartbeat_time', 'metadata'] as const) {
      if (field in update && update[field] === null) throw new BadRequestError(`${field} is invalid; it cannot be a null value.`);
    }
    return this.tx(() => this.applyAttemptUpdate(rolloutId, attemptId, update));
  }

  private applyAttemptUpdate(rolloutId: string, attemptId: string, update: UpdateAttemptRequest): Attempt {
    const rollout = this.requireRolloutRow(rolloutId);
    if (!rollout.latest_attempt_id) throw new NotFoundError(`No attempts found for rollout ${rolloutId}`);
    const id = attemptId === 'latest' ? rollout.latest_attempt_id : attemptId;
    const row = this.attemptRow(rolloutId, id);
    if (!row) throw new NotFoundError(`Attempt ${attemptId} not found for rollout ${rolloutId}`);
    const attempt = attemptFromRow(row);
    if (update.worker_id !== undefined) attempt.worker_id = update.worker_id;
    if (update.status !== undefined) {
      attempt.status = update.status;
      if (update.status === 'failed' || update.status === 'succeeded') attempt.end_time = this.now();
    }
    if (update.last_heartbeat_time !== undefined) attempt.last_heartbeat_time = update.last_heartbeat_time;
    if (update.metadata !== undefined) attempt.metadata = update.metadata;
    this.stmt(`UPDATE attempts SET status = ?, end_time = ?, worker_id = ?, last_heartbeat_time = ?, metadata = ?
      WHERE rollout_id = ? AND attempt_id = ?`).run(attempt.status, attempt.end_time, attempt.worker_id,
      attempt.last_heartbeat_time, toNullableJsonText(attempt.metadata), rolloutId, id);

    // Only the latest attempt drives the rollout, and a finished rollout never changes again.
    const status = rollout.status as RolloutStatus;
    if (id === rollout.latest_attempt_id && !isTerminalRolloutStatus(status)) {
      const next = rolloutStatusFromAttempt(attempt.status, attempt.sequence_id, rolloutFromRow(rollout).config);
      if (next !== status) this.setRolloutStatus(rolloutId, next);
    }
    if (update.status !== undefined || update.worker_id) this.syncWorker(attempt, false);
    return attempt;
  }

  // ---------------------------------------------------------------- watchdog

  /** Marks attempts that exceeded their timeout or went silent (§3.7); returns how many were changed. */
  scanUnhealthy(): number {
    const rows = this.stmt(`SELECT r.rollout_id, r.config, a.* FROM rollouts r
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
    const unhealthy = findUnhealthy(running, this.now(), this.startedAt);
    if (unhealthy.length === 0) return 0;
    this.tx(() => {
      for (const u of unhealthy) this.applyAttemptUpdate(u.rollout_id, u.attempt_id, { status: u.status });
    });
    return unhealthy.length;
  }

  // ---------------------------------------------------------------- workers

  queryWorkers(q: QueryWorkersRequest): PaginatedResult<Worker> {
    const p = checkPagination(q, WORKER_FIELDS);
    const logic = checkFilterLogic(q.filter_logic);
    const conditions: Condition[] = [];
    if (q.status_in) conditions.push(inList('status', q.status_in));
    if (q.worker_id_contains) conditions.push(contains('worker_id', q.worker_id_contains));
    const where = combine(conditions, logic);
    const total = (this.stmt(`SELECT COUNT(*) AS n FROM workers WHERE ${where.sql}`).get(...where.params) as { n: number }).n;
    const rows = this.stmt(`SELECT * FROM workers WHERE ${where.sql} ${orderBy(p.sortBy, p.sortOrder, 'seq')} ${limitClause(p.limit, p.offset)}`)
      .all(...where.params) as WorkerRow[];
    return { items: rows.map(workerFromRow), limit: p.limit, offset: p.offset, total };
  }

  getWorkerById(workerId: string): Worker | null {
    const row = this.stmt('SELECT * FROM workers WHERE worker_id = ?').get(workerId) as WorkerRow | undefined;
    return row ? workerFromRow(row) : null;
  }

  /** Heartbeat: upserts the worker with last_heartbeat_time = now and the stats if given. */
  updateWorker(workerId: string, heartbeatStats?: JsonObject | null): Worker {
    if (heartbeatStats === null) throw new BadRequestError('heartbeat_stats is invalid; it cannot be a null value.');
    return this.tx(() => {
      this.upsertWorker(workerId);
      this.stmt('UPDATE workers SET last_heartbeat_time = ? WHERE worker_id = ?').run(this.now(), workerId);
      if (heartbeatStats !== undefined) {
        this.stmt('UPDATE workers SET heartbeat_stats = ? WHERE worker_id = ?').run(JSON.stringify(heartbeatStats), workerId);
      }
      return this.getWorkerById(workerId) as Worker;
    });
  }

  // ---------------------------------------------------------------- resources

  addResources(resources: NamedResources, idempotencyKey: string | null = null): ResourcesUpdate {
    return this.tx(() => {
      if (idempotencyKey !== null) {
        const seen = this.stmt('SELECT * FROM resources WHERE idempotency_key = ?').get(idempotencyKey) as ResourcesRow | undefined;
        if (seen) return resourcesFromRow(seen);
      }
      const now = this.now();
      const id = newResourcesId();
      this.stmt(`INSERT INTO resources (resources_id, create_time, update_time, version, resources, touched, idempotency_key)
        VALUES (?, ?, ?, 1, ?, (SELECT COALESCE(MAX(touched), 0) + 1 FROM resources), ?)`)
        .run(id, now, now, JSON.stringify(resources), idempotencyKey);
      return this.getResourcesById(id) as ResourcesUpdate;
    });
  }

  /** Upsert: a missing id is created with version 1; an existing one is replaced with version + 1. Becomes latest. */
  updateResources(resourcesId: string, resources: NamedResources): ResourcesUpdate {
    return this.tx(() => {
      const now = this.now();
      const existing = this.getResourcesById(resourcesId);
      if (existing) {
        this.stmt(`UPDATE resources SET resources = ?, update_time = ?, version = version + 1,
          touched = (SELECT COALESCE(MAX(touched), 0) + 1 FROM resources) WHERE resources_id = ?`)
          .run(JSON.stringify(resources), now, resourcesId);
      } else {
        this.stmt(`INSERT INTO resources (resources_id, create_time, update_time, version, resources, touched)
          VALUES (?, ?, ?, 1, ?, (SELECT COALESCE(MAX(touched), 0) + 1 FROM resources))`)
          .run(resourcesId, now, now, JSON.stringify(resources));
      }
      return this.getResourcesById(resourcesId) as ResourcesUpdate;
    });
  }

  getResourcesById(resourcesId: string): ResourcesUpdate | null {
    const row = this.stmt('SELECT * FROM resources WHERE resources_id = ?').get(resourcesId) as ResourcesRow | undefined;
    return row ? resourcesFromRow(row) : null;
  }

  getLatestResources(): ResourcesUpdate | null {
    const row = this.stmt('SELECT * FROM resources ORDER BY touched DESC LIMIT 1').get() as ResourcesRow | undefined;
    return row ? resourcesFromRow(row) : null;
  }

  queryResources(q: QueryResourcesRequest): PaginatedResult<ResourcesUpdate> {
    const p = checkPagination(q, RESOURCES_FIELDS);
    const conditions: Condition[] = [];
    if (q.resources_id) conditions.push(equals('resources_id', q.resources_id));
    if (q.resources_id_contains) conditions.push(contains('resources_id', q.resources_id_contains));
    const where = combine(conditions, 'and');
    const total = (this.stmt(`SELECT COUNT(*) AS n FROM resources WHERE ${where.sql}`).get(...where.params) as { n: number }).n;
    const rows = this.stmt(`SELECT * FROM resources WHERE ${where.sql} ${orderBy(p.sortBy, p.sortOrder, 'seq')} ${limitClause(p.limit, p.offset)}`)
      .all(...where.params) as ResourcesRow[];
    return { items: rows.map(resourcesFromRow), limit: p.limit, offset: p.offset, total };
  }

  // ---------------------------------------------------------------- spans

  /** Next span sequence ids, one per rollout id in order (per-rollout counter, §3.6; ids are not validated). */
  nextSequenceIds(rolloutIds: string[]): number[] {
    return this.tx(() => rolloutIds.map((id) => {
      const row = this.stmt('UPDATE rollouts SET span_counter = span_counter + 1 WHERE rollout_id = ? RETURNING span_counter').get(id) as { span_counter: number } | undefined;
      return row ? row.span_counter : 1; // unknown rollout: Python hands out ids anyway
    }));
  }

  /**
   * Inserts spans; returns those inserted (a duplicate `(rollout_id, attempt_id, span_id)` is skipped).
   * Spans with a negative sequence_id get a fresh one. Unknown rollout/attempt: NotFoundError, nothing stored.
   * Each (rollout, attempt) with a new span gets the heartbeat side effects of §3.4.
   */
  addSpans(spans: Span[]): Span[] {
    return this.tx(() => {
      const inserted: Span[] = [];
      const touched = new Map<string, { rollout: RolloutRow; attempt: AttemptRow }>();
      const insert = this.stmt(`INSERT OR IGNORE INTO spans (rollout_id, attempt_id, span_id, sequence_id, trace_id, parent_id, name, start_time, end_time, body)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
      for (const input of spans) {
        const key = `${input.rollout_id}\u0000${input.attempt_id}`;
        let target = touched.get(key);
        if (!target) {
          const rollout = this.requireRolloutRow(input.rollout_id);
          const attempt = this.attemptRow(input.rollout_id, input.attempt_id);
          if (!attempt) throw new NotFoundError(`Attempt ${input.attempt_id} not found for rollout ${input.rollout_id}`);
          target = { rollout, attempt };
        }
        let sequenceId = input.sequence_id;
        if (sequenceId < 0) {
          sequenceId = this.nextSequenceIdInTx(input.rollout_id);
        } else {
          this.stmt('UPDATE rollouts SET span_counter = MAX(span_counter, ?) WHERE rollout_id = ?').run(sequenceId, input.rollout_id);
        }
        const span: Span = { ...input, sequence_id: sequenceId };
        const result = insert.run(span.rollout_id, span.attempt_id, span.span_id, sequenceId, span.trace_id, span.parent_id,
          span.name, span.start_time, span.end_time, JSON.stringify(span));
        if (result.changes > 0) {
          inserted.push(span);
          touched.set(key, target);
        }
      }
      for (const { attempt } of touched.values()) this.heartbeatFromSpan(attempt);
      return inserted;
    });
  }

  /** Whether spans can be recorded for this rollout/attempt. */
  attemptExists(rolloutId: string, attemptId: string): boolean {
    return this.attemptRow(rolloutId, attemptId) !== undefined;
  }

  private nextSequenceIdInTx(rolloutId: string): number {
    const row = this.stmt('UPDATE rollouts SET span_counter = span_counter + 1 WHERE rollout_id = ? RETURNING span_counter').get(rolloutId) as { span_counter: number };
    return row.span_counter;
  }

  private heartbeatFromSpan(attemptRow: AttemptRow): void {
    const now = this.now();
    const status = attemptRow.status === 'preparing' || attemptRow.status === 'unresponsive' ? 'running' : attemptRow.status;
    this.stmt('UPDATE attempts SET last_heartbeat_time = ?, status = ? WHERE rollout_id = ? AND attempt_id = ?')
      .run(now, status, attemptRow.rollout_id, attemptRow.attempt_id);
    // Re-read: the rollout may have changed earlier in this transaction.
    const rollout = this.requireRolloutRow(attemptRow.rollout_id);
    // A late span of a finished attempt must not revive its rollout (the Python store's pitfall 9 in §10).
    if (rollout.latest_attempt_id === attemptRow.attempt_id && status === 'running'
      && (rollout.status === 'preparing' || rollout.status === 'requeuing')) {
      this.setRolloutStatus(rollout.rollout_id, 'running');
    }
  }

  querySpans(q: QuerySpansRequest): PaginatedResult<Span> {
    const p = checkPagination({ sort_by: 'sequence_id', ...stripUndefined(q) }, SPAN_FIELDS);
    const logic = checkFilterLogic(q.filter_logic);
    const must: Condition[] = [equals('rollout_id', q.rollout_id)];
    if (q.attempt_id === 'latest') {
      const latest = this.getLatestAttempt(q.rollout_id);
      if (!latest) return { items: [], limit: p.limit, offset: p.offset, total: 0 };
      must.push(equals('attempt_id', latest.attempt_id));
    } else if (q.attempt_id) {
      must.push(equals('attempt_id', q.attempt_id));
    }
    const optional: Condition[] = [];
    for (const field of ['trace_id', 'span_id', 'parent_id', 'name'] as const) {
      const exact = q[field];
      const part = q[`${field}_contains`];
      if (exact) optional.push(equals(field, exact));
      if (part) optional.push(contains(field, part));
    }
    const where = combine([...must, ...(optional.length ? [combine(optional, logic)] : [])], 'and');
    const total = (this.stmt(`SELECT COUNT(*) AS n FROM spans WHERE ${where.sql}`).get(...where.params) as { n: number }).n;
    const rows = this.stmt(`SELECT body FROM spans WHERE ${where.sql} ${orderBy(p.sortBy, p.sortOrder, 'seq')} ${limitClause(p.limit, p.offset)}`)
      .all(...where.params) as { body: string }[];
    return { items: rows.map((r) => spanFromBody(r.body)), limit: p.limit, offset: p.offset, total };
  }

  // ---------------------------------------------------------------- statistics

  statistics(): StoreStatistics {
    const count = (table: string) => (this.stmt(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    return {
      name: this.name,
      total_rollouts: count('rollouts'),
      total_attempts: count('attempts'),
      total_spans: count('spans'),
      total_resources: count('resources'),
      total_workers: count('workers'),
      uptime: this.now() - this.startedAt,
    };
  }
}

function stripUndefined<T extends object>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}

