// A training run's records (ours, not part of the LightningStore protocol): the step records that make optimizer
// steps exactly-once, and the metrics, checkpoint, trace and configured rows the run's files are exported from.
// Each record is keyed by (run, kind, step, key); a write of a key that exists keeps the first one and answers
// it, so an activity retried on any host finds what its earlier attempt wrote. `seq` orders every record of the
// store: an export appends the records after the last one its file holds. Step records are kept in a table of
// their own (db.ts): retention removes them oldest first and so frees whole pages; their seq orders them alone.
import { BadRequestError } from './errors';
import type { StoreDb } from './store-db';

export const RUN_RECORD_KINDS = ['step', 'metrics', 'checkpoint', 'trace', 'configured', 'file'] as const;
export type RunRecordKind = (typeof RUN_RECORD_KINDS)[number];

export interface RunRecordInput {
  kind: RunRecordKind;
  step: number;
  /** What tells records of one kind and step apart (the parent state of a step record, a checkpoint's name). */
  key?: string;
  /** The record as text (JSON as Python writes it: NaN stays NaN), exported as it is. */
  body: string;
}

export interface RunRecord {
  seq: number;
  kind: RunRecordKind;
  step: number;
  key: string;
  body: string;
  create_time: number;
}

export interface RunRecordQuery {
  /** One kind, or (`kinds`) several: an export of a run's files reads them all in one request. */
  kind?: RunRecordKind;
  kinds?: RunRecordKind[];
  /** Only records after this seq (an export's cursor). */
  after_seq?: number;
  step?: number;
  key?: string;
  /** At most this many, by seq (default and cap 1,000). */
  limit?: number;
}

const MAX_PAGE = 1000;
const COLUMNS = 'seq, kind, step, key, body, create_time';
const STEP_COLUMNS = "seq, 'step' AS kind, step, key, body, create_time";

/** Writes each record unless its key exists; returns, in order, the record that stands for each. */
export function putRunRecords(s: StoreDb, run: string, records: RunRecordInput[]): RunRecord[] {
  checkRun(run);
  return s.tx(() => records.map((r) => {
    const key = r.key ?? '';
    if (r.kind === 'step') {
      s.stmt('INSERT OR IGNORE INTO step_records (run, step, key, body, create_time) VALUES (?, ?, ?, ?, ?)').run(run, r.step, key, r.body, s.now());
      return s.stmt(`SELECT ${STEP_COLUMNS} FROM step_records WHERE run = ? AND step = ? AND key = ?`).get(run, r.step, key) as RunRecord;
    }
    s.stmt('INSERT OR IGNORE INTO run_records (run, kind, step, key, body, create_time) VALUES (?, ?, ?, ?, ?, ?)')
      .run(run, r.kind, r.step, key, r.body, s.now());
    return s.stmt(`SELECT ${COLUMNS} FROM run_records WHERE run = ? AND kind = ? AND step = ? AND key = ?`)
      .get(run, r.kind, r.step, key) as RunRecord;
  }));
}

export function queryRunRecords(s: StoreDb, run: string, q: RunRecordQuery): RunRecord[] {
  checkRun(run);
  const kinds = q.kinds ?? (q.kind ? [q.kind] : []);
  if (kinds.length === 0) throw new BadRequestError('Invalid query: name a kind (or kinds)');
  const steps = kinds.includes('step');
  if (steps && kinds.length > 1) throw new BadRequestError("Invalid query: kind 'step' is queried on its own (its seq orders step records only)");
  const where = steps ? ['run = ?'] : ['run = ?', `kind IN (${kinds.map(() => '?').join(', ')})`];
  const params: (string | number)[] = steps ? [run] : [run, ...kinds];
  if (q.after_seq !== undefined) (where.push('seq > ?'), params.push(q.after_seq));
  if (q.step !== undefined) (where.push('step = ?'), params.push(q.step));
  if (q.key !== undefined) (where.push('key = ?'), params.push(q.key));
  const limit = Math.min(q.limit ?? MAX_PAGE, MAX_PAGE);
  const from = steps ? `${STEP_COLUMNS} FROM step_records` : `${COLUMNS} FROM run_records`;
  return s.stmt(`SELECT ${from} WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ${limit}`).all(...params) as RunRecord[];
}

/** The runs that have records, with how many of each kind (for `client export` and operators). */
export function runRecordRuns(s: StoreDb): { run: string; kind: string; count: number; last_step: number }[] {
  return s.stmt(`SELECT run, kind, COUNT(*) AS count, MAX(step) AS last_step FROM run_records GROUP BY run, kind
      UNION ALL SELECT run, 'step', COUNT(*), MAX(step) FROM step_records GROUP BY run ORDER BY run, kind`)
    .all() as { run: string; kind: string; count: number; last_step: number }[];
}

function checkRun(run: string): void {
  if (run === '' || run.length > 500) throw new BadRequestError(`Invalid run: ${JSON.stringify(run.slice(0, 80))}, must be 1-500 characters`);
}
