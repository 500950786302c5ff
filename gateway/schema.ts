// The 1.0 gateway's tables, beside the store's own in the same SQLite file (so they share its transactions,
// group commit and durability). The rollouts, attempts and spans themselves are the store's; these keep only
// what the 1.0 API adds to them.
import type Database from 'better-sqlite3';

const SCHEMA = `
-- 1.0 rollouts the API created or changed: the 1.0 status fields the store has no place for, and once a rollout
-- is terminal its frozen state (terminal states are final in 1.0, whatever the store does with the rollout later).
CREATE TABLE IF NOT EXISTS agl1_rollouts (
  v1_id TEXT PRIMARY KEY,
  rollout_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  k8s_job_name TEXT,
  last_attempt_id TEXT,
  error_message TEXT,
  version INTEGER NOT NULL,
  created_at REAL NOT NULL,
  updated_at REAL NOT NULL,
  -- the terminal state once reached (and logged in agl1_terminal)
  final_state TEXT,
  -- started by an agent's first call or event before the controller's PATCH to running arrived
  started_by_agent INTEGER NOT NULL DEFAULT 0,
  -- hidden by DELETE (a run's rollout stays in the store for its run)
  deleted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS agl1_rollouts_open ON agl1_rollouts(final_state) WHERE final_state IS NULL;
CREATE INDEX IF NOT EXISTS agl1_rollouts_by_store_id ON agl1_rollouts(rollout_id, sequence);
-- The completion log: each 1.0 rollout appended once, when it first becomes terminal; the cursor indexes it.
CREATE TABLE IF NOT EXISTS agl1_terminal (
  pos INTEGER PRIMARY KEY AUTOINCREMENT,
  v1_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS agl1_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  rollout_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  attempt_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  timestamp REAL NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS agl1_events_by_rollout ON agl1_events(rollout_id, sequence, seq);
CREATE TABLE IF NOT EXISTS agl1_models (
  model TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (model, endpoint)
);
CREATE TABLE IF NOT EXISTS agl1_pause (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  paused INTEGER NOT NULL,
  retry_after_seconds INTEGER NOT NULL,
  reason TEXT
);
`;

export function createGatewayTables(db: Database.Database): void {
  db.exec(SCHEMA);
}
