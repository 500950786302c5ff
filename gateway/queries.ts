// The 1.0 API's reads: listing by state, one rollout with its attempts, and the terminal cursor. Before answering
// they bring the completion log up to date (rollouts the store ended by itself, e.g. by its watchdog, are
// appended then), so each is a transaction that writes only when something became terminal.
import type { RolloutRow } from '../store/rows';
import type { StoreDb } from '../store/store-db';
import type { Json, JsonObject } from '../store/types';
import { freeze, notFound } from './lifecycle';
import type { Rollout1, State } from './types';
import { agl1Meta, locate, locateAttempt, stateOf, toRollout1, type Located } from './view';

/** Freezes and logs the tracked 1.0 rollouts that became terminal, in the order their attempts ended. */
function syncTerminal(s: StoreDb): number {
  const open = s.stmt('SELECT v1_id FROM agl1_rollouts WHERE final_state IS NULL AND deleted = 0').all() as { v1_id: string }[];
  const ended: { loc: Located; state: State; at: number }[] = [];
  for (const { v1_id } of open) {
    const loc = locate(s, v1_id);
    const state = loc ? stateOf(loc) : null;
    if (loc && (state === 'succeeded' || state === 'failed')) ended.push({ loc, state, at: loc.attempt?.end_time ?? loc.row.end_time ?? s.now() });
  }
  ended.sort((a, b) => a.at - b.at);
  for (const e of ended) freeze(s, e.loc.v1Id, e.state);
  return ended.length;
}

/** Runs `read` after syncing the completion log, in one transaction that counts as a write only if the log grew. */
function afterSync<T>(s: StoreDb, read: () => T): T {
  let grew = 0;
  return s.tx(() => {
    grew = syncTerminal(s);
    return read();
  }, () => grew > 0);
}

const STORE_STATUSES: Partial<Record<State, string[]>> = { queuing: ['queuing', 'requeuing'], running: ['preparing', 'running'] };

interface Listed { seq: number; sequence: number; rollout: Rollout1 }

/** Non-terminal 1.0 rollouts: one per unfinished store rollout served by 1.0 agents (its next or current attempt). */
function unfinished(s: StoreDb, states: State[], limit: number): Listed[] {
  const statuses = states.flatMap((st) => STORE_STATUSES[st] ?? []);
  if (statuses.length === 0 || limit <= 0) return [];
  const out: Listed[] = [];
  const page = s.stmt(`SELECT * FROM rollouts WHERE status IN (${statuses.map(() => '?').join(', ')})
    AND json_extract(metadata, '$.agl1') IS NOT NULL AND seq > ? ORDER BY seq LIMIT ?`);
  for (let after = 0; out.length < limit;) {
    const rows = page.all(...statuses, after, limit) as RolloutRow[];
    if (rows.length === 0) break;
    for (const row of rows) {
      after = row.seq;
      const sequence = row.status === 'queuing' || row.status === 'requeuing' ? row.attempt_count + 1 : row.attempt_count;
      const loc = locateAttempt(s, row, agl1Meta(row)!, sequence);
      if (loc && states.includes(stateOf(loc)) && out.length < limit) out.push({ seq: row.seq, sequence, rollout: toRollout1(s, loc) });
    }
  }
  return out;
}

/** Terminal 1.0 rollouts (those the API tracked), in creation order. */
function finished(s: StoreDb, states: State[], limit: number): Listed[] {
  const wanted = states.filter((st) => st === 'succeeded' || st === 'failed');
  if (wanted.length === 0 || limit <= 0) return [];
  const rows = s.stmt(`SELECT t.v1_id, r.seq, t.sequence FROM agl1_rollouts t JOIN rollouts r ON r.rollout_id = t.rollout_id
    WHERE t.deleted = 0 AND t.final_state IN (${wanted.map(() => '?').join(', ')}) ORDER BY r.seq, t.sequence LIMIT ?`)
    .all(...wanted, limit) as { v1_id: string; seq: number; sequence: number }[];
  return rows.flatMap((r) => {
    const loc = locate(s, r.v1_id);
    return loc ? [{ seq: r.seq, sequence: r.sequence, rollout: toRollout1(s, loc) }] : [];
  });
}

/** GET /api/rollouts: rollouts in any of `states`, in the order they were made, at most `limit`. */
export function listRollouts(s: StoreDb, states: State[], limit: number): Rollout1[] {
  return afterSync(s, () => [...unfinished(s, states, limit), ...finished(s, states, limit)]
    .sort((a, b) => a.seq - b.seq || a.sequence - b.sequence)
    .slice(0, Math.max(0, limit))
    .map((l) => l.rollout));
}

/** GET /api/rollouts/{id}: the rollout and the attempt ids that have events, in the order of their first event. */
export function getRollout(s: StoreDb, v1Id: string): { rollout: Rollout1; attempts: string[] } {
  return afterSync(s, () => {
    const loc = locate(s, v1Id);
    if (!loc) throw notFound(v1Id);
    const attempts = s.stmt(`SELECT attempt_id FROM agl1_events WHERE rollout_id = ? AND sequence = ?
      GROUP BY attempt_id ORDER BY MIN(seq)`).all(loc.row.rollout_id, loc.sequence) as { attempt_id: string }[];
    return { rollout: toRollout1(s, loc), attempts: attempts.map((a) => a.attempt_id) };
  });
}

/** Upstream's data_id: `input.data_id` or `input.instance_id`, as a string; "" when neither is set. */
function dataIdOf(input: Json): string {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return '';
  const v = (input as JsonObject).data_id || (input as JsonObject).instance_id;
  if (v === undefined || v === null || v === false || v === '' || v === 0) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export interface TerminalPage {
  items: { rollout_id: string; state: State; data_id: string; is_train: boolean }[];
  next_after: number;
  total_terminal: number;
}

/**
 * GET /api/rollouts/terminal: the completion log from position `after`. Deleted rollouts keep their place (and
 * count in total_terminal) but are left out of `items`, as upstream.
 */
export function terminalPage(s: StoreDb, after: number, limit: number): TerminalPage {
  const from = Math.max(0, after);
  const n = Math.max(1, limit);
  return afterSync(s, () => {
    const total = (s.stmt('SELECT COUNT(*) AS n FROM agl1_terminal').get() as { n: number }).n;
    const ids = s.stmt('SELECT v1_id FROM agl1_terminal ORDER BY pos LIMIT ? OFFSET ?').all(n, from) as { v1_id: string }[];
    const items = ids.flatMap(({ v1_id }) => {
      const loc = locate(s, v1_id);
      if (!loc) return [];
      return [{ rollout_id: v1_id, state: stateOf(loc), data_id: dataIdOf(JSON.parse(loc.row.input) as Json), is_train: loc.row.mode !== 'val' }];
    });
    return { items, next_after: from + ids.length, total_terminal: total };
  });
}
