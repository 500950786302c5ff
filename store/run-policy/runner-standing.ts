// Which runner gets a rollout's retry. A runner whose agent fails fast is back at the queue first, so it took
// every attempt of the rollout it had just failed (all 6, while 4 good runners idled) and the rollout failed for
// good. Two rules, kept in this store process's memory (a restart forgets them, which only costs a retry):
//  - a retried rollout is not given to a runner that already attempted it while another free runner (idle and
//    polling in the last FREE_S seconds) has not;
//  - a runner whose last SET_ASIDE_AFTER attempts all failed is set aside: it gets no rollout for a while (30 s,
//    doubling with each further failure up to 5 minutes) as long as another runner is active. One success clears it.
import type { RolloutRow } from '../rows';
import type { StoreDb } from '../store-db';

const FREE_S = 10;
const ACTIVE_S = 30;
const SET_ASIDE_AFTER = 3;
const SET_ASIDE_S = 30;
const SET_ASIDE_MAX_S = 300;

interface Standing {
  failedInARow: number;
  /** Seconds since the epoch until which the runner gets nothing (while others are active). */
  asideUntil: number;
}

const byStore = new WeakMap<StoreDb, Map<string, Standing>>();
const standings = (s: StoreDb) => {
  let m = byStore.get(s);
  if (!m) byStore.set(s, (m = new Map()));
  return m;
};

/** An attempt of `workerId` ended: failures in a row set it aside, a success clears its record. */
export function noteAttemptEnd(s: StoreDb, workerId: string | null, status: string): void {
  if (!workerId || (status !== 'failed' && status !== 'succeeded')) return;
  const m = standings(s);
  if (status === 'succeeded') {
    m.delete(workerId);
    return;
  }
  const st = m.get(workerId) ?? { failedInARow: 0, asideUntil: 0 };
  st.failedInARow++;
  if (st.failedInARow >= SET_ASIDE_AFTER) {
    st.asideUntil = s.now() + Math.min(SET_ASIDE_MAX_S, SET_ASIDE_S * 2 ** (st.failedInARow - SET_ASIDE_AFTER));
  }
  m.set(workerId, st);
}

const isAside = (s: StoreDb, workerId: string, now: number) => (standings(s).get(workerId)?.asideUntil ?? 0) > now;

/** Runners other than `workerId` seen since `since` (polling, or heartbeating while busy), not set aside. */
function otherRunners(s: StoreDb, workerId: string, since: number, idleOnly: boolean): string[] {
  const now = s.now();
  const rows = s.stmt(`SELECT worker_id FROM workers WHERE worker_id != ? AND (last_dequeue_time >= ? ${idleOnly ? '' : 'OR last_heartbeat_time >= ?'})
    ${idleOnly ? "AND status = 'idle'" : ''}`).all(...(idleOnly ? [workerId, since] : [workerId, since, since])) as { worker_id: string }[];
  return rows.map((r) => r.worker_id).filter((id) => !isAside(s, id, now));
}

/** True when `workerId` is set aside and another runner can do the work meanwhile. */
export function setAside(s: StoreDb, workerId: string | null): boolean {
  if (!workerId || !isAside(s, workerId, s.now())) return false;
  return otherRunners(s, workerId, s.now() - ACTIVE_S, false).length > 0;
}

/** True when `row`'s retry should wait for another free runner instead of going to `workerId`. */
export function leaveForAnother(s: StoreDb, workerId: string | null, row: RolloutRow): boolean {
  if (!workerId || row.status !== 'requeuing' || row.attempt_count === 0) return false;
  const tried = new Set((s.stmt('SELECT worker_id FROM attempts WHERE rollout_id = ?').all(row.rollout_id) as { worker_id: string | null }[]).map((a) => a.worker_id));
  if (!tried.has(workerId)) return false;
  return otherRunners(s, workerId, s.now() - FREE_S, true).some((id) => !tried.has(id));
}
