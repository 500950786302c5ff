// Rollouts (§3.2, §3.3): enqueue, start, dequeue, look-ups and updates. Each public function is one transaction
// (StoreDb.tx) or a read.
import { BadRequestError } from './errors';
import { newRolloutId } from './ids';
import { checkFilterLogic, checkPagination, combine, contains, inList, limitClause, orderBy, type Condition } from './query';
import { rolloutFromRow, toJsonText, toNullableJsonText, type RolloutRow } from './rows';
import type { StoreDb } from './store-db';
import { leaveForAnother, setAside } from './run-policy/runner-standing';
import { FairClock, flowOf, inFlightByFlow, queuedFlows, type QueueItem } from './run-policy/fair-share';
import {
  byIdempotencyKey, createAttempt, markWorkerIdleAfterEmptyDequeue, pushToQueue, setRolloutStatus, syncWorker, withLatestAttempt,
} from './transitions';
import {
  DEFAULT_ROLLOUT_CONFIG, isTerminalRolloutStatus, type AttemptedRollout, type EnqueueRolloutRequest, type PaginatedResult,
  type QueryRolloutsRequest, type Rollout, type RolloutConfig, type RolloutStatus, type StartRolloutRequest, type UpdateRolloutRequest,
} from './types';

const ROLLOUT_FIELDS = ['rollout_id', 'input', 'start_time', 'end_time', 'mode', 'resources_id', 'status', 'config', 'metadata'];

export function stripUndefined<T extends object>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}

function latestResourcesId(s: StoreDb): string | null {
  const row = s.stmt('SELECT resources_id FROM resources ORDER BY touched DESC LIMIT 1').get() as { resources_id: string } | undefined;
  return row?.resources_id ?? null;
}

function insertRollout(s: StoreDb, req: EnqueueRolloutRequest, status: RolloutStatus, idempotencyKey: string | null, latest: string | null): RolloutRow {
  const config: RolloutConfig = { ...DEFAULT_ROLLOUT_CONFIG, ...stripUndefined(req.config ?? {}) };
  const row = {
    rollout_id: newRolloutId(), input: toJsonText(req.input), start_time: s.now(), mode: req.mode ?? null,
    resources_id: req.resources_id ?? latest, status, config: JSON.stringify(config), metadata: JSON.stringify(req.metadata ?? {}),
    idempotency_key: idempotencyKey,
  };
  const { lastInsertRowid } = s.stmt(`INSERT INTO rollouts (rollout_id, input, start_time, mode, resources_id, status, config, metadata, idempotency_key)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(row.rollout_id, row.input, row.start_time, row.mode, row.resources_id, row.status,
    row.config, row.metadata, row.idempotency_key);
  return { ...row, seq: Number(lastInsertRowid), end_time: null, span_counter: 0, attempt_count: 0, latest_attempt_id: null, revision: 0 };
}

/**
 * Enqueues rollouts (status `queuing`, FIFO). A rollout whose idempotency key was seen before is not created
 * again: the rollout made the first time is returned, in its current state.
 */
export function enqueueRollouts(s: StoreDb, reqs: EnqueueRolloutRequest[], idempotencyKeys: (string | null)[]): Rollout[] {
  return s.tx(() => {
    const latest = latestResourcesId(s);
    return reqs.map((req, i) => {
      const key = idempotencyKeys[i] ?? null;
      const existing = byIdempotencyKey(s, key);
      if (existing) return rolloutFromRow(existing);
      const row = insertRollout(s, req, 'queuing', key, latest);
      pushToQueue(s, row.rollout_id);
      return rolloutFromRow(row);
    });
  });
}

/** Creates a rollout with its first attempt already running on `worker_id`; not queued. */
export function startRollout(s: StoreDb, req: StartRolloutRequest, idempotencyKey: string | null): AttemptedRollout {
  return s.tx(() => {
    const existing = byIdempotencyKey(s, idempotencyKey);
    if (existing) {
      const current = withLatestAttempt(s, existing);
      if ('attempt' in current) return current;
    }
    const row = insertRollout(s, req, 'preparing', idempotencyKey, latestResourcesId(s));
    const attempted = createAttempt(s, row, req.worker_id ?? null);
    syncWorker(s, attempted.attempt, false);
    return attempted;
  });
}

/**
 * Which queued rollouts a dequeue may take (routing, our extension): a rollout whose metadata names an agent
 * (`agl_agent`) goes only to dequeues naming the same agent, and a dequeue naming an agent takes only its rollouts;
 * `key_prefix` narrows it to rollouts whose idempotency key starts with it (one batch of one run).
 */
export interface DequeueFilter {
  agent?: string | null;
  keyPrefix?: string | null;
}

/** The agent a rollout is routed to (its metadata's `agl_agent`), or null for any runner that names none. */
export function rolloutAgent(row: Pick<RolloutRow, 'metadata'>): string | null {
  if (!row.metadata || !row.metadata.includes('agl_agent')) return null;
  const agent = (JSON.parse(row.metadata) as Record<string, unknown> | null)?.agl_agent;
  return typeof agent === 'string' ? agent : null;
}

function routedTo(row: RolloutRow, filter: DequeueFilter): boolean {
  if (rolloutAgent(row) !== (filter.agent ?? null)) return false;
  return !filter.keyPrefix || (row.idempotency_key ?? '').startsWith(filter.keyPrefix);
}

/**
 * Hands out up to `limit` queued rollouts: FIFO within a run, and across runs by weighted fair queuing
 * (fair-share.ts), skipping runs at their cap of rollouts in flight.
 */
export function dequeue(s: StoreDb, limit: number, workerId: string | null, filter: DequeueFilter = {}): AttemptedRollout[] {
  return s.tx(() => {
    const out: AttemptedRollout[] = [];
    // A runner that keeps failing gets nothing for a while; a retry waits for a runner that has not tried it yet
    // when one is free (runner-standing.ts). Skipped rollouts stay queued, in their place.
    const aside = setAside(s, workerId);
    const next = s.stmt('SELECT pos, rollout_id FROM rollout_queue WHERE flow = ? AND pos > ? ORDER BY pos LIMIT 1');
    const drop = s.stmt('DELETE FROM rollout_queue WHERE pos = ?');
    /** The flow's first rollout after `after` this dequeue may take; gone or taken ones leave the queue. */
    const headOf = (flow: string, after: number): QueueItem | undefined => {
      for (;;) {
        const item = next.get(flow, after) as { pos: number; rollout_id: string } | undefined;
        if (!item) return undefined;
        after = item.pos;
        const row = s.rolloutRow(item.rollout_id);
        if (!row || (row.status !== 'queuing' && row.status !== 'requeuing')) {
          drop.run(item.pos); // cancelled or taken
          continue;
        }
        if (!routedTo(row, filter) || leaveForAnother(s, workerId, row)) continue;
        return { pos: item.pos, row, facts: flowOf(row.metadata) };
      }
    };
    if (!aside && limit > 0) {
      const inFlight = inFlightByFlow(s);
      const capped = (h: QueueItem) => h.facts.maxInFlight !== null && (inFlight.get(h.facts.flow) ?? 0) >= h.facts.maxInFlight;
      const heads = new Map<string, QueueItem>();
      for (const flow of queuedFlows(s)) {
        const h = headOf(flow, -1);
        if (h && !capped(h)) heads.set(flow, h);
      }
      const clock = new FairClock(s);
      while (out.length < limit && heads.size > 0) {
        let pick: QueueItem | undefined;
        for (const h of heads.values()) {
          if (!pick) pick = h;
          else {
            const a = clock.startTag(h.facts.flow);
            const b = clock.startTag(pick.facts.flow);
            if (a < b || (a === b && h.pos < pick.pos)) pick = h;
          }
        }
        const flow = pick!.facts.flow;
        drop.run(pick!.pos);
        out.push(createAttempt(s, pick!.row, workerId));
        clock.served(flow, pick!.facts.weight);
        inFlight.set(flow, (inFlight.get(flow) ?? 0) + 1);
        const h = headOf(flow, pick!.pos);
        if (h && !capped(h)) heads.set(flow, h);
        else heads.delete(flow);
      }
    }
    if (workerId !== null) {
      const last = out[out.length - 1];
      if (last) syncWorker(s, last.attempt, true);
      else markWorkerIdleAfterEmptyDequeue(s, workerId);
    }
    return out;
  }, (out) => out.length > 0);
}

/** A manual retry: a new attempt regardless of max_attempts. */
export function startAttempt(s: StoreDb, rolloutId: string, workerId: string | null): AttemptedRollout {
  return s.tx(() => {
    const attempted = createAttempt(s, s.requireRolloutRow(rolloutId), workerId);
    syncWorker(s, attempted.attempt, false);
    return attempted;
  });
}

export function getRolloutById(s: StoreDb, rolloutId: string): Rollout | AttemptedRollout | null {
  const row = s.rolloutRow(rolloutId);
  return row ? withLatestAttempt(s, row) : null;
}

export type RolloutQuery = QueryRolloutsRequest & { status?: RolloutStatus[] | null; rollout_ids?: string[] | null };

export function queryRollouts(s: StoreDb, q: RolloutQuery): PaginatedResult<Rollout | AttemptedRollout> {
  const p = checkPagination(q, ROLLOUT_FIELDS);
  const logic = checkFilterLogic(q.filter_logic);
  const conditions: Condition[] = [];
  const statusIn = q.status_in ?? q.status;
  const idIn = q.rollout_id_in ?? q.rollout_ids;
  if (statusIn) conditions.push(inList('status', statusIn));
  if (idIn) conditions.push(inList('rollout_id', idIn));
  if (q.rollout_id_contains) conditions.push(contains('rollout_id', q.rollout_id_contains));
  let where = combine(conditions, logic);
  // Our extension: the rollouts whose idempotency key starts with a prefix (e.g. one batch of a run), through
  // the key's unique index (a range, not a scan). Always ANDed with the other filters.
  const prefix = q.idempotency_key_prefix;
  if (prefix) where = combine([where, { sql: '(idempotency_key >= ? AND idempotency_key < ?)', params: [prefix, prefixEnd(prefix)] }], 'and');
  const total = (s.stmt(`SELECT COUNT(*) AS n FROM rollouts WHERE ${where.sql}`).get(...where.params) as { n: number }).n;
  const rows = s.stmt(`SELECT * FROM rollouts WHERE ${where.sql} ${orderBy(p.sortBy, p.sortOrder, 'seq')} ${limitClause(p.limit, p.offset)}`)
    .all(...where.params) as RolloutRow[];
  return { items: rows.map((r) => withLatestAttempt(s, r)), limit: p.limit, offset: p.offset, total };
}

/** The smallest string greater than every string starting with `prefix` (SQLite compares TEXT by code points). */
function prefixEnd(prefix: string): string {
  return prefix + '\u{10FFFF}';
}

export function updateRollout(s: StoreDb, rolloutId: string, update: UpdateRolloutRequest): Rollout {
  for (const field of ['status', 'config'] as const) {
    if (field in update && update[field] === null) throw new BadRequestError(`${field} is invalid; it cannot be a null value.`);
  }
  return s.tx(() => {
    const row = s.requireRolloutRow(rolloutId);
    const sets: string[] = [];
    const params: unknown[] = [];
    const set = (column: string, value: unknown) => { sets.push(`${column} = ?`); params.push(value); };
    if ('input' in update) set('input', toJsonText(update.input));
    if ('mode' in update) set('mode', update.mode ?? null);
    if ('resources_id' in update) set('resources_id', update.resources_id ?? null);
    if ('metadata' in update) set('metadata', toNullableJsonText(update.metadata));
    if (update.config) set('config', JSON.stringify({ ...DEFAULT_ROLLOUT_CONFIG, ...stripUndefined(update.config) }));
    if (sets.length > 0) s.stmt(`UPDATE rollouts SET ${sets.join(', ')} WHERE rollout_id = ?`).run(...params, rolloutId);
    if (update.status) setRolloutStatus(s, row.rollout_id, update.status);
    return rolloutFromRow(s.requireRolloutRow(rolloutId));
  });
}

/** Rollouts among `ids` that are terminal now, in input order; unknown ids are left out. */
export function finishedRollouts(s: StoreDb, ids: string[]): Rollout[] {
  const out: Rollout[] = [];
  for (const id of ids) {
    const r = s.rolloutOrNull(id);
    if (r && isTerminalRolloutStatus(r.status)) out.push(r);
  }
  return out;
}

/** Ids among `ids` that exist and are not finished yet (what a waiter still waits for). */
export function unfinishedRolloutIds(s: StoreDb, ids: string[]): Set<string> {
  const out = new Set<string>();
  const get = s.stmt('SELECT status FROM rollouts WHERE rollout_id = ?');
  for (const id of ids) {
    const row = get.get(id) as { status: RolloutStatus } | undefined;
    if (row && !isTerminalRolloutStatus(row.status)) out.add(id);
  }
  return out;
}
