// Retention (ours): a long run's old rollouts, with their attempts, spans and queue entries, removed once trained,
// with the resources rows its old steps published and the commit records of its old steps, and the database's freed
// pages given back to the disk while the store runs. The run's metrics, checkpoint and trace records are kept: they
// are its log (its files are exported from them), about 1.5 KiB a step.
import type Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { batchOfPolicyResourcesId, policyResourcesPrefix } from '../../common/policy-resources-id';
import { quote } from '../../common/front-door';
import { BadRequestError } from '../errors';
import type { StoreDb } from '../store-db';

/** Rollouts removed per transaction: short enough that other writers wait milliseconds, not seconds. */
const CHUNK = 200;
/** Pages (4 KiB) an incremental vacuum gives back per watchdog tick. */
const VACUUM_PAGES = 2048;

export interface PruneResult {
  rollouts: number;
  spans: number;
  resources: number;
  stepRecords: number;
}

/**
 * Removes the finished rollouts whose idempotency key starts with `<run>/` and whose metadata.batch is below
 * `beforeBatch`, their attempts, spans and queue entries; in chunks, each its own transaction.
 */
export function pruneRun(s: StoreDb, run: string, beforeBatch: number): PruneResult {
  if (!run || run.includes('\u0000')) throw new BadRequestError('Invalid run: a non-empty name is required');
  if (!Number.isInteger(beforeBatch) || beforeBatch < 0) throw new BadRequestError(`Invalid before_batch: a whole number >= 0 is required, got ${quote(beforeBatch)}`);
  const lo = `${run}/`;
  const hi = `${run}0`; // '0' follows '/': every key with the prefix sorts between lo and hi
  const out: PruneResult = { rollouts: 0, spans: 0, resources: 0, stepRecords: 0 };
  for (;;) {
    const n = s.tx(() => {
      const ids = (s
        .stmt(`SELECT rollout_id FROM rollouts WHERE idempotency_key >= ? AND idempotency_key < ?
          AND status IN ('succeeded', 'failed', 'cancelled') AND CAST(json_extract(metadata, '$.batch') AS INTEGER) < ? LIMIT ${CHUNK}`)
        .all(lo, hi, beforeBatch) as { rollout_id: string }[]).map((r) => r.rollout_id);
      for (const id of ids) {
        out.spans += s.stmt('DELETE FROM spans WHERE rollout_id = ?').run(id).changes;
        s.stmt('DELETE FROM attempts WHERE rollout_id = ?').run(id);
        s.stmt('DELETE FROM rollout_queue WHERE rollout_id = ?').run(id);
        s.stmt('DELETE FROM rollouts WHERE rollout_id = ?').run(id);
      }
      return ids.length;
    });
    out.rollouts += n;
    if (n < CHUNK) break;
  }
  out.resources = pruneResources(s, run, beforeBatch);
  out.stepRecords = pruneStepRecords(s, run, beforeBatch);
  return out;
}

/**
 * The commit records (kind 'step') of steps before the cut: a retried step only ever looks up its own, so old ones
 * serve only a fork from that step, whose state the trainer has dropped by then unless a checkpoint row names it;
 * those named stay. (Each record is 1.7 KiB, a copy of its step's metrics; in their own table, removing the oldest
 * frees whole pages.)
 */
function pruneStepRecords(s: StoreDb, run: string, beforeBatch: number): number {
  return s.tx(() => s.stmt(`DELETE FROM step_records WHERE run = ? AND step < ?
      AND (CASE WHEN json_valid(body) THEN json_extract(body, '$.result.state.statePath') END) NOT IN (
        SELECT json_extract(body, '$.state_path') FROM run_records
        WHERE run = ? AND kind = 'checkpoint' AND (CASE WHEN json_valid(body) THEN json_extract(body, '$.state_path') END) IS NOT NULL)`)
    .run(run, beforeBatch, run).changes);
}

/**
 * The run's policy resources rows (common/policy-resources-id.ts) of batches before the cut, except the latest
 * row (what runners read when they name none) and any row a rollout still in the store names.
 */
function pruneResources(s: StoreDb, run: string, beforeBatch: number): number {
  return s.tx(() => {
    const latest = (s.stmt('SELECT resources_id FROM resources ORDER BY touched DESC LIMIT 1').get() as { resources_id: string } | undefined)?.resources_id;
    const prefix = policyResourcesPrefix(run);
    // The batch number follows the prefix: ids between `<prefix>0` and `<prefix>:` (':' sorts after '9').
    const rows = s.stmt('SELECT resources_id FROM resources WHERE resources_id >= ? AND resources_id < ?').all(`${prefix}0`, `${prefix}:`) as { resources_id: string }[];
    let removed = 0;
    for (const { resources_id: id } of rows) {
      const batch = batchOfPolicyResourcesId(run, id);
      if (batch === null || batch >= beforeBatch || id === latest) continue;
      if (s.stmt('SELECT 1 FROM rollouts WHERE resources_id = ? LIMIT 1').get(id)) continue;
      removed += s.stmt('DELETE FROM resources WHERE resources_id = ?').run(id).changes;
    }
    return removed;
  });
}

/** Gives back up to VACUUM_PAGES free pages to the file system (databases made with auto_vacuum = INCREMENTAL). */
export function vacuumSome(db: Database.Database): void {
  if (db.inTransaction) return;
  if (Number(db.pragma('freelist_count', { simple: true })) === 0) return;
  db.pragma(`incremental_vacuum(${VACUUM_PAGES})`);
  // In WAL mode the file is cut only when the WAL is copied back: do it now rather than at the next 4 MiB.
  db.pragma('wal_checkpoint(PASSIVE)');
}

export interface DiskUse {
  db_bytes: number;
  wal_bytes: number;
  /** Pages freed by retention, not yet given back (reused by later writes either way). */
  free_bytes: number;
  auto_vacuum: 'none' | 'full' | 'incremental';
}

export function diskUse(db: Database.Database, dbPath: string): DiskUse {
  const size = (p: string) => {
    try {
      return statSync(p).size;
    } catch {
      return 0;
    }
  };
  const pageSize = Number(db.pragma('page_size', { simple: true }));
  const mode = Number(db.pragma('auto_vacuum', { simple: true }));
  return {
    db_bytes: dbPath === ':memory:' ? 0 : size(dbPath),
    wal_bytes: dbPath === ':memory:' ? 0 : size(`${dbPath}-wal`),
    free_bytes: Number(db.pragma('freelist_count', { simple: true })) * pageSize,
    auto_vacuum: mode === 2 ? 'incremental' : mode === 1 ? 'full' : 'none',
  };
}
