// Opens the store's SQLite database and creates its tables.
// Durability: WAL journal with synchronous=NORMAL: a commit has written its WAL frames (write(), no fsync) before
// it returns, so it survives kill -9 of the server (the OS keeps the pages). For power loss the server adds a
// group fsync of the WAL before acknowledging writes (group-commit.ts), in mode 'full'.
import Database from 'better-sqlite3';
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { CALL_KEY_ATTR } from './types';
import { addFairShare } from './run-policy/fair-share';
import { isDamage, quickCheck, refuseDamaged } from './damage';

export type SyncMode = 'full' | 'normal';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS rollouts (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  rollout_id TEXT NOT NULL UNIQUE,
  input TEXT NOT NULL,
  start_time REAL NOT NULL,
  end_time REAL,
  mode TEXT,
  resources_id TEXT,
  status TEXT NOT NULL,
  config TEXT NOT NULL,
  metadata TEXT,
  idempotency_key TEXT UNIQUE,
  span_counter INTEGER NOT NULL DEFAULT 0,
  attempt_count INTEGER NOT NULL DEFAULT 0,
  latest_attempt_id TEXT
);
CREATE INDEX IF NOT EXISTS rollouts_by_status ON rollouts(status);
CREATE TABLE IF NOT EXISTS rollout_queue (
  pos INTEGER PRIMARY KEY AUTOINCREMENT,
  rollout_id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS rollout_queue_by_id ON rollout_queue(rollout_id);
CREATE TABLE IF NOT EXISTS attempts (
  rollout_id TEXT NOT NULL,
  attempt_id TEXT NOT NULL,
  sequence_id INTEGER NOT NULL,
  start_time REAL NOT NULL,
  end_time REAL,
  status TEXT NOT NULL,
  worker_id TEXT,
  last_heartbeat_time REAL,
  metadata TEXT,
  PRIMARY KEY (rollout_id, attempt_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS attempts_by_sequence ON attempts(rollout_id, sequence_id);
CREATE TABLE IF NOT EXISTS spans (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  rollout_id TEXT NOT NULL,
  attempt_id TEXT NOT NULL,
  span_id TEXT NOT NULL,
  sequence_id INTEGER NOT NULL,
  trace_id TEXT NOT NULL,
  parent_id TEXT,
  name TEXT NOT NULL,
  start_time REAL,
  end_time REAL,
  call_key TEXT,
  body TEXT NOT NULL,
  UNIQUE (rollout_id, attempt_id, span_id)
);
CREATE INDEX IF NOT EXISTS spans_by_rollout ON spans(rollout_id, attempt_id, sequence_id);
CREATE TABLE IF NOT EXISTS resources (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  resources_id TEXT NOT NULL UNIQUE,
  create_time REAL NOT NULL,
  update_time REAL NOT NULL,
  version INTEGER NOT NULL,
  resources TEXT NOT NULL,
  touched INTEGER NOT NULL,
  idempotency_key TEXT UNIQUE
);
CREATE INDEX IF NOT EXISTS resources_by_touched ON resources(touched);
CREATE TABLE IF NOT EXISTS workers (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  worker_id TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL,
  heartbeat_stats TEXT,
  last_heartbeat_time REAL,
  last_dequeue_time REAL,
  last_busy_time REAL,
  last_idle_time REAL,
  current_rollout_id TEXT,
  current_attempt_id TEXT
);
CREATE TABLE IF NOT EXISTS run_records (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run TEXT NOT NULL,
  kind TEXT NOT NULL,
  step INTEGER NOT NULL,
  key TEXT NOT NULL,
  body TEXT NOT NULL,
  create_time REAL NOT NULL,
  UNIQUE (run, kind, step, key)
);
CREATE INDEX IF NOT EXISTS run_records_by_seq ON run_records(run, kind, seq);
CREATE TABLE IF NOT EXISTS step_records (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run TEXT NOT NULL,
  step INTEGER NOT NULL,
  key TEXT NOT NULL,
  body TEXT NOT NULL,
  create_time REAL NOT NULL,
  UNIQUE (run, step, key)
);
`;

export function openStoreDatabase(path: string, sync: SyncMode = 'full'): Database.Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const existed = path !== ':memory:' && (statSync(path, { throwIfNoEntry: false })?.size ?? 0) > 0;
  const db = new Database(path);
  // A damaged file is refused before anything reads or writes it (damage.ts): SQLite's quick_check, one pass.
  if (existed) {
    let problem: string | null;
    try {
      problem = quickCheck(db);
    } catch (err) {
      if (!isDamage(err)) throw err;
      problem = (err as Error).message;
    }
    if (problem) refuseDamaged(db, path, problem);
  }
  // Takes effect on a new database only (so before WAL mode writes its header): pages retention frees can then be given back while the store runs
  // (retention.ts); an older database reuses them for later writes instead.
  db.pragma('auto_vacuum = INCREMENTAL');
  db.pragma('journal_mode = WAL');
  void sync; // both modes commit with NORMAL; 'full' differs only by the server's group fsync
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  // better-sqlite3 opens with a 16 MiB page cache: a long run's growing log filled it, +16 MiB of resident memory
  // over 6,000 steps (docs/benchmarks.md). The rows a run reads and writes are its recent ones; 4 MiB holds them.
  db.pragma('cache_size = -4000');
  db.pragma('foreign_keys = OFF');
  db.exec(SCHEMA);
  addCallKeys(db);
  addRolloutRevision(db);
  addFairShare(db);
  moveStepRecords(db);
  return db;
}

/**
 * The spans' call keys (span-ops.ts callRecord) and their index. A database made before they existed gets the
 * column, filled from the stored bodies once.
 */
function addCallKeys(db: Database.Database): void {
  const columns = db.prepare('PRAGMA table_info(spans)').all() as { name: string }[];
  if (!columns.some((c) => c.name === 'call_key')) {
    db.transaction(() => {
      db.exec('ALTER TABLE spans ADD COLUMN call_key TEXT');
      db.prepare(`UPDATE spans SET call_key = json_extract(body, '$.attributes."' || ? || '"')
        WHERE json_extract(body, '$.status.status_code') IS NOT 'ERROR'
          AND json_type(body, '$.attributes."' || ? || '"') = 'text'`).run(CALL_KEY_ATTR, CALL_KEY_ATTR);
    })();
  }
  db.exec('CREATE INDEX IF NOT EXISTS spans_by_call ON spans(rollout_id, attempt_id, call_key, sequence_id) WHERE call_key IS NOT NULL');
}

/**
 * A rollout's revision: raised by SQLite itself whenever the rollout's status or anything its attempts share (input,
 * mode, resources, config, metadata) changes, whichever operation changes it (update_rollout, a new attempt, status
 * propagation, the watchdog). Not by a change into `running`: that is an attempt at work (its first span's
 * heartbeat, its runner saying so), which changes nothing a writer read, and counting it would refuse the calls an
 * attempt makes in parallel at its start. Span counters and attempt bookkeeping leave it alone too. The proxy keeps
 * what it read of a rollout under its revision and writes a span only while the revision is still the one it read
 * (span-ops.ts addSpanIfRevision). A database made before starts every rollout at 0.
 */
function addRolloutRevision(db: Database.Database): void {
  const columns = db.prepare('PRAGMA table_info(rollouts)').all() as { name: string }[];
  if (!columns.some((c) => c.name === 'revision')) db.exec('ALTER TABLE rollouts ADD COLUMN revision INTEGER NOT NULL DEFAULT 0');
  // Made again at each open: a database keeps the trigger's definition of the code that made it otherwise.
  db.exec('DROP TRIGGER IF EXISTS rollouts_revision');
  db.exec(`CREATE TRIGGER rollouts_revision AFTER UPDATE OF status, input, mode, resources_id, config, metadata ON rollouts
    WHEN (OLD.status IS NOT NEW.status AND NEW.status IS NOT 'running') OR OLD.input IS NOT NEW.input OR OLD.mode IS NOT NEW.mode
      OR OLD.resources_id IS NOT NEW.resources_id OR OLD.config IS NOT NEW.config OR OLD.metadata IS NOT NEW.metadata
    BEGIN UPDATE rollouts SET revision = revision + 1 WHERE seq = NEW.seq; END`);
}

/**
 * Step commit records live in their own table (run-records.ts): retention removes them oldest first, which frees
 * whole pages there, where in run_records each page also held metrics rows that stay. A database made before
 * moves its step rows once (their seq is renumbered: it is only a cursor within one kind).
 */
function moveStepRecords(db: Database.Database): void {
  if (!db.prepare("SELECT 1 FROM run_records WHERE kind = 'step' LIMIT 1").get()) return;
  db.transaction(() => {
    db.exec(`INSERT OR IGNORE INTO step_records (run, step, key, body, create_time)
      SELECT run, step, key, body, create_time FROM run_records WHERE kind = 'step' ORDER BY seq`);
    db.exec("DELETE FROM run_records WHERE kind = 'step'");
  })();
}
