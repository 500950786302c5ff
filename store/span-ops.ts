// Spans (§3.4, §3.6): sequence ids, inserts with their heartbeat side effects, queries, and our call records.
import { clip } from '../common/front-door';
import { NotFoundError, StaleRevisionError } from './errors';
import { checkFilterLogic, checkPagination, combine, contains, equals, limitClause, orderBy, type Condition } from './query';
import { spanFromBody, type AttemptRow } from './rows';
import { stripUndefined } from './rollout-ops';
import type { StoreDb } from './store-db';
import { heartbeatFromSpan } from './transitions';
import { CALL_KEY_ATTR, type CallRecord, type PaginatedResult, type QuerySpansRequest, type Span } from './types';

const SPAN_FIELDS = ['rollout_id', 'attempt_id', 'sequence_id', 'trace_id', 'span_id', 'parent_id', 'name', 'start_time', 'end_time'];

/** Next span sequence ids, one per rollout id in order (per-rollout counter, §3.6; ids are not validated). */
export function nextSequenceIds(s: StoreDb, rolloutIds: string[]): number[] {
  return s.tx(() => rolloutIds.map((id) => {
    const row = s.stmt('UPDATE rollouts SET span_counter = span_counter + 1 WHERE rollout_id = ? RETURNING span_counter').get(id) as { span_counter: number } | undefined;
    return row ? row.span_counter : 1; // unknown rollout: Python hands out ids anyway
  }));
}

/** The key of an answered call this span records (CALL_KEY_ATTR), or null. */
function callKeyOf(span: Span): string | null {
  const key = span.attributes?.[CALL_KEY_ATTR];
  return typeof key === 'string' && span.status?.status_code !== 'ERROR' ? key : null;
}

/**
 * Inserts spans; returns those inserted (a duplicate `(rollout_id, attempt_id, span_id)` is skipped).
 * Spans with a negative sequence_id get a fresh one. Unknown rollout/attempt: NotFoundError, nothing stored.
 * Each (rollout, attempt) with a new span gets the heartbeat side effects of §3.4.
 */
export function addSpans(s: StoreDb, spans: Span[]): Span[] {
  return s.tx(() => insertSpans(s, spans, null));
}

/** A span written on the condition that its rollout is at `revision`, and the rollout's revision after the write. */
export interface ConditionalSpanWrite {
  /** The span as stored, or null: the store already held it (an earlier try of this write landed). */
  span: Span | null;
  revision: number;
}

/**
 * Inserts one span if its rollout is still at revision `expect` (db.ts addRolloutRevision), else StaleRevisionError
 * (412) and nothing stored: a writer that planned the span from what it read of the rollout (its policy, its seed)
 * never stores it once the rollout has changed. A span already held is answered as held (null) whatever the
 * revision: a retry of a write that landed must not be refused. Answers with the revision after the write, which
 * can differ from `expect` only by what this very write changed (its heartbeat: today a move into running, which the
 * revision does not count), so the writer may keep what it read under that revision.
 */
export function addSpanIfRevision(s: StoreDb, span: Span, expect: number): ConditionalSpanWrite {
  return s.tx(() => {
    const [stored] = insertSpans(s, [span], expect);
    return { span: stored ?? null, revision: rolloutRevision(s, span.rollout_id) };
  });
}

/** The rollout's revision (0 for an unknown rollout: nothing is written under it). */
export function rolloutRevision(s: StoreDb, rolloutId: string): number {
  const row = s.stmt('SELECT revision FROM rollouts WHERE rollout_id = ?').get(rolloutId) as { revision: number } | undefined;
  return row?.revision ?? 0;
}

function insertSpans(s: StoreDb, spans: Span[], expectRevision: number | null): Span[] {
  const inserted: Span[] = [];
  const attempts = new Map<string, AttemptRow>();
  const touched = new Set<string>();
  const insert = s.stmt(`INSERT OR IGNORE INTO spans (rollout_id, attempt_id, span_id, sequence_id, trace_id, parent_id, name, start_time, end_time, call_key, body)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  for (const input of spans) {
    const key = `${input.rollout_id}\u0000${input.attempt_id}`;
    if (!attempts.has(key)) {
      const attempt = s.attemptRow(input.rollout_id, input.attempt_id);
      if (!attempt) {
        s.requireRolloutRow(input.rollout_id);
        throw new NotFoundError(`Attempt ${clip(input.attempt_id)} not found for rollout ${clip(input.rollout_id)}`);
      }
      attempts.set(key, attempt);
    }
    if (expectRevision !== null) {
      const held = s.stmt('SELECT 1 FROM spans WHERE rollout_id = ? AND attempt_id = ? AND span_id = ?').get(input.rollout_id, input.attempt_id, input.span_id);
      if (held) continue;
      const revision = rolloutRevision(s, input.rollout_id);
      if (revision !== expectRevision) {
        throw new StaleRevisionError(`Rollout ${clip(input.rollout_id)} is at revision ${revision}, not ${expectRevision}: it changed since it was read; read it again`, revision);
      }
    }
    let sequenceId = input.sequence_id;
    if (sequenceId < 0) {
      sequenceId = (s.stmt('UPDATE rollouts SET span_counter = span_counter + 1 WHERE rollout_id = ? RETURNING span_counter').get(input.rollout_id) as { span_counter: number }).span_counter;
    } else {
      s.stmt('UPDATE rollouts SET span_counter = MAX(span_counter, ?) WHERE rollout_id = ?').run(sequenceId, input.rollout_id);
    }
    const span: Span = { ...input, sequence_id: sequenceId };
    const result = insert.run(span.rollout_id, span.attempt_id, span.span_id, sequenceId, span.trace_id, span.parent_id,
      span.name, span.start_time, span.end_time, callKeyOf(span), JSON.stringify(span));
    if (result.changes > 0) {
      inserted.push(span);
      touched.add(key);
    }
  }
  for (const key of touched) heartbeatFromSpan(s, attempts.get(key)!);
  return inserted;
}

/** Whether spans can be recorded for this rollout/attempt. */
export function attemptExists(s: StoreDb, rolloutId: string, attemptId: string): boolean {
  return s.attemptRow(rolloutId, attemptId) !== undefined;
}

/** How many answered calls of an attempt carried `callKey`, and the latest of them; from an index, not the bodies. */
export function callRecord(s: StoreDb, rolloutId: string, attemptId: string, callKey: string, withLast: boolean): CallRecord {
  const { n } = s.stmt('SELECT COUNT(*) AS n FROM spans WHERE rollout_id = ? AND attempt_id = ? AND call_key = ?')
    .get(rolloutId, attemptId, callKey) as { n: number };
  if (!withLast || n === 0) return { answered: n, last: null };
  const row = s.stmt('SELECT body FROM spans WHERE rollout_id = ? AND attempt_id = ? AND call_key = ? ORDER BY sequence_id DESC LIMIT 1')
    .get(rolloutId, attemptId, callKey) as { body: string };
  return { answered: n, last: spanFromBody(row.body) };
}

export function querySpans(s: StoreDb, q: QuerySpansRequest): PaginatedResult<Span> {
  const p = checkPagination({ sort_by: 'sequence_id', ...stripUndefined(q) }, SPAN_FIELDS);
  const logic = checkFilterLogic(q.filter_logic);
  const must: Condition[] = [equals('rollout_id', q.rollout_id)];
  if (q.attempt_id === 'latest') {
    const latest = s.stmt('SELECT attempt_id FROM attempts WHERE rollout_id = ? ORDER BY sequence_id DESC LIMIT 1').get(q.rollout_id) as { attempt_id: string } | undefined;
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
  const total = (s.stmt(`SELECT COUNT(*) AS n FROM spans WHERE ${where.sql}`).get(...where.params) as { n: number }).n;
  const rows = s.stmt(`SELECT body FROM spans WHERE ${where.sql} ${orderBy(p.sortBy, p.sortOrder, 'seq')} ${limitClause(p.limit, p.offset)}`)
    .all(...where.params) as { body: string }[];
  return { items: rows.map((r) => spanFromBody(r.body)), limit: p.limit, offset: p.offset, total };
}
