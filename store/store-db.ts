// The store's connection: cached statements, the row look-ups every part uses, and transactions.
//
// Write batching (the server turns it on): the writes of all requests handled in one turn of the event loop share
// one SQLite transaction, each request's own work a savepoint inside it (a request that fails rolls back alone).
// The batch commits on setImmediate, once per turn instead of once per request: a commit rewrites every page
// the transaction touched (rollouts, their indexes, the queue, attempts, workers), so per-request commits wrote
// the same pages many times over. `settled()` resolves when the batch a request ran in has committed; the server
// answers no request (reads included: they may have seen the batch) before that, and no write before the group
// fsync after it (group-commit.ts). Listeners hear of finished rollouts after the commit.
import { clip } from '../common/front-door';
import type Database from 'better-sqlite3';
import { NotFoundError } from './errors';
import { rolloutFromRow, type AttemptRow, type RolloutRow } from './rows';
import type { Rollout } from './types';

type FinishedListener = (rollouts: Rollout[]) => void;

interface Batch {
  committed: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
  finished: string[];
}

export class StoreDb {
  private readonly statements = new Map<string, Database.Statement>();
  private readonly runInTransaction: (fn: () => unknown) => unknown;
  private readonly listeners = new Set<FinishedListener>();
  /** Rollouts finished inside the transaction running now. */
  private finishedInTx: string[] = [];
  private batch: Batch | null = null;
  /** Incremented by every durable write (the server fsyncs before acknowledging those). */
  writeCount = 0;
  /** Incremented by every commit; what a group fsync must cover (group-commit.ts). */
  commitCount = 0;
  readonly startedAt: number;

  constructor(
    readonly db: Database.Database,
    readonly now: () => number,
    private readonly batching: boolean,
  ) {
    this.startedAt = now();
    this.runInTransaction = db.transaction((fn: () => unknown) => fn());
  }

  /** Prepared statements are cached: compiling SQL on every call costs more than running it. */
  stmt(sql: string): Database.Statement {
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

  /** Records that `rolloutId` reached a terminal status in the transaction running now. */
  finished(rolloutId: string): void {
    this.finishedInTx.push(rolloutId);
  }

  /**
   * Runs fn atomically (its own transaction, or a savepoint of the open batch). `durable(result)` false marks a
   * telemetry-only write (an empty dequeue) that the server need not fsync before answering.
   */
  tx<T>(fn: () => T, durable: (result: T) => boolean = () => true): T {
    if (this.batching) this.openBatch();
    this.finishedInTx = [];
    let result: T;
    try {
      result = this.runInTransaction(fn) as T;
    } catch (err) {
      this.finishedInTx = [];
      throw err;
    }
    if (durable(result)) this.writeCount++;
    const ids = this.finishedInTx;
    this.finishedInTx = [];
    if (this.batch) this.batch.finished.push(...ids);
    else {
      this.commitCount++;
      this.notify(ids);
    }
    return result;
  }

  /** Resolves once the batch open now (if any) is committed; rejects when its commit failed. */
  settled(): Promise<void> {
    return this.batch?.committed ?? Promise.resolve();
  }

  private openBatch(): void {
    if (this.batch && this.db.inTransaction) return;
    if (this.batch) this.failBatch(new Error('the batch transaction was rolled back by SQLite'));
    this.db.exec('BEGIN IMMEDIATE');
    let resolve!: () => void;
    let reject!: (err: unknown) => void;
    const committed = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    committed.catch(() => {}); // a failure reaches the requests that await it
    const batch: Batch = { committed, resolve, reject, finished: [] };
    this.batch = batch;
    setImmediate(() => this.commitBatch(batch));
  }

  private commitBatch(batch: Batch): void {
    if (this.batch !== batch) return;
    this.batch = null;
    if (!this.db.open) return batch.reject(new Error('the store database was closed before the batch committed'));
    try {
      if (!this.db.inTransaction) throw new Error('the batch transaction was rolled back by SQLite');
      this.db.exec('COMMIT');
    } catch (err) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      batch.reject(err);
      return;
    }
    this.commitCount++;
    batch.resolve();
    this.notify(batch.finished);
  }

  private failBatch(err: unknown): void {
    const batch = this.batch!;
    this.batch = null;
    batch.reject(err);
  }

  private notify(ids: string[]): void {
    if (ids.length === 0 || this.listeners.size === 0) return;
    const rollouts = ids.map((id) => this.rolloutOrNull(id)).filter((r): r is Rollout => r !== null);
    for (const listener of this.listeners) listener(rollouts);
  }

  /** Commits an open batch now (closing the store). */
  flushBatch(): void {
    if (this.batch) this.commitBatch(this.batch);
  }

  // ---------------------------------------------------------------- rows every part reads

  rolloutRow(id: string): RolloutRow | undefined {
    return this.stmt('SELECT * FROM rollouts WHERE rollout_id = ?').get(id) as RolloutRow | undefined;
  }

  requireRolloutRow(id: string): RolloutRow {
    const row = this.rolloutRow(id);
    if (!row) throw new NotFoundError(`Rollout ${clip(id)} not found`);
    return row;
  }

  rolloutOrNull(id: string): Rollout | null {
    const row = this.rolloutRow(id);
    return row ? rolloutFromRow(row) : null;
  }

  attemptRow(rolloutId: string, attemptId: string): AttemptRow | undefined {
    return this.stmt('SELECT * FROM attempts WHERE rollout_id = ? AND attempt_id = ?').get(rolloutId, attemptId) as AttemptRow | undefined;
  }
}
