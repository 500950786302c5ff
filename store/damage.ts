// A damaged database is refused, never served. At start, SQLite's own `PRAGMA quick_check` (it checks every page
// and the b-tree structure but skips the index-to-table cross-check of integrity_check, so it reads the file once:
// about a second per GiB) must say ok, or the store refuses to start with one line saying how to restore a backup.
// While it runs, a damaged page met by any request (SQLITE_CORRUPT, SQLITE_NOTADB) turns the store unhealthy: its
// health answers 503 {"status": "damaged"} and every other request the same one line, instead of 500s here and
// there and writes into a broken file. A page damaged under a running store may sit in its page cache unnoticed,
// so the same check also runs in the background, on its own read-only connection in a worker thread (never
// blocking requests), once a minute and never more than a tenth of the time.
import type Database from 'better-sqlite3';
import { basename } from 'node:path';
import { Worker } from 'node:worker_threads';
import { StartRefused } from '../common/service-args';

/** The error SQLite gives for a damaged file, by its code or its message. */
export function isDamage(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  return code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB' ||
    (typeof e?.message === 'string' && /database disk image is malformed|file is not a database/.test(e.message));
}

/** What an operator does about it, in one sentence. */
export function restoreHint(dbPath: string): string {
  const name = basename(dbPath);
  return `stop the store, put a backup copy (made with sqlite3 ${name} "VACUUM INTO '<copy>'", docs/several-hosts.md) in place of ${name}, ` +
    `remove ${name}-wal and ${name}-shm, and start it again`;
}

/** The store's database did not pass SQLite's check at start. Its message is the one line the store exits with. */
export class DatabaseDamagedError extends StartRefused {
  override readonly name = 'DatabaseDamagedError';
}

/** The first lines `PRAGMA quick_check` reports on `db`, or null when it says ok. */
export function quickCheck(db: Database.Database): string | null {
  const rows = db.pragma('quick_check(5)') as { quick_check: string }[];
  const lines = rows.map((r) => r.quick_check);
  return lines.length === 1 && lines[0] === 'ok' ? null : lines.join('; ');
}

/** Throws DatabaseDamagedError (one line: the file, SQLite's words, how to restore) when `db` is damaged. */
export function refuseDamaged(db: Database.Database, dbPath: string, problem: string): never {
  try {
    db.close();
  } catch {
    /* already unusable */
  }
  throw new DatabaseDamagedError(`store: the database ${dbPath} is damaged (${problem.replace(/\s+/g, ' ').slice(0, 300)}); ` +
    `it was not opened. To restore a backup: ${restoreHint(dbPath)}`);
}

/** The background check: one read-only quick_check of `file` in a worker thread (better-sqlite3 loaded there). */
const CHECK_IN_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
let answer;
try {
  const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const rows = db.pragma('quick_check(5)').map((r) => r.quick_check);
    answer = rows.length === 1 && rows[0] === 'ok' ? { ok: true } : { ok: false, problem: rows.join('; ') };
  } finally {
    db.close();
  }
} catch (err) {
  answer = { ok: false, error: true, code: err && err.code, problem: String((err && err.message) || err) };
}
parentPort.postMessage(answer);
`;

export interface DamageWatchOptions {
  dbPath: string;
  log: (line: string) => void;
  /** How often the background check runs (default 60 s); 0 turns it off. */
  intervalMs?: number;
}

/** Whether the running store's database is damaged, from what requests meet and from the background check. */
export class DamageWatch {
  damaged: { since: number; reason: string } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private worker: Worker | null = null;
  private closed = false;

  constructor(private readonly o: DamageWatchOptions) {
    const every = o.intervalMs ?? 60_000;
    if (every > 0 && o.dbPath !== ':memory:') this.schedule(every, every);
  }

  /** The one line every request gets while the database is damaged. */
  get message(): string {
    return `the store's database ${basename(this.o.dbPath)} is damaged (${this.damaged?.reason ?? 'unknown'}); it serves nothing until it is ` +
      `restored: ${restoreHint(this.o.dbPath)}`;
  }

  /** An error a request or the watchdog met: true (and the store unhealthy from now) when it says the file is damaged. */
  noticed(err: unknown): boolean {
    if (!isDamage(err)) return false;
    this.mark(String((err as Error)?.message ?? err));
    return true;
  }

  health(): { status: 'damaged'; detail: string; since: string } | null {
    return this.damaged ? { status: 'damaged', detail: this.message, since: new Date(this.damaged.since).toISOString() } : null;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    void this.worker?.terminate();
  }

  private mark(reason: string): void {
    if (this.damaged) return;
    this.damaged = { since: Date.now(), reason: reason.replace(/\s+/g, ' ').slice(0, 300) };
    this.o.log(`DATABASE DAMAGED: ${this.o.dbPath}: ${this.damaged.reason}; refusing every request until it is restored: ${restoreHint(this.o.dbPath)}`);
  }

  private schedule(inMs: number, every: number): void {
    if (this.closed || this.damaged) return;
    this.timer = setTimeout(() => {
      const started = Date.now();
      void this.checkOnce().then(() => {
        // Never more than a tenth of the time: a check that took 30 s (a very large file) waits 5 minutes.
        this.schedule(Math.max(every, 10 * (Date.now() - started)), every);
      });
    }, inMs);
    this.timer.unref();
  }

  /** One background quick_check; resolves when it has answered (or its thread died). */
  checkOnce(): Promise<void> {
    return new Promise((resolve) => {
      let worker: Worker;
      try {
        worker = new Worker(CHECK_IN_WORKER, { eval: true, workerData: { file: this.o.dbPath, module: require.resolve('better-sqlite3') } });
      } catch (err) {
        this.o.log(`database check could not start: ${(err as Error).message}`);
        return resolve();
      }
      this.worker = worker;
      worker.unref();
      worker.once('message', (a: { ok: boolean; error?: boolean; code?: string; problem?: string }) => {
        if (this.closed) return;
        if (!a.ok && (!a.error || isDamage({ code: a.code, message: a.problem }))) this.mark(`quick_check: ${a.problem}`);
        else if (!a.ok) this.o.log(`database check could not run: ${a.problem}`);
      });
      worker.once('error', (err) => this.o.log(`database check failed: ${err.message}`));
      worker.once('exit', () => {
        if (this.worker === worker) this.worker = null;
        resolve();
      });
    });
  }
}
