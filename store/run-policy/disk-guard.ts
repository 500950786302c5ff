// The store on a full disk. SQLite then fails every write with "database or disk is full"; the store answers
// those requests 507 (Insufficient Storage) with the reason, keeps serving reads, and says so on its health route.
// It also keeps the WAL in check: SQLite checkpoints only once the WAL holds 1000 pages (4 MiB), and every commit
// appends the pages it touched (~28 KiB for one span), so on a small volume the WAL took every byte that came free
// and no write ever got through again until a restart. Here the WAL's checkpoint threshold (and the size it is
// cut back to) is at most a quarter of the room left, so the WAL cannot outgrow the volume, and while the disk
// is full the WAL is checkpointed and truncated; once a write succeeds again (or the volume has room), the store
// is back to normal by itself. On a disk with room (over 16 MiB free) SQLite's defaults stay as they are.
import type Database from 'better-sqlite3';
import { statfsSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';

/** Room on the volume below which the store counts itself full even without a failed write. */
const MIN_FREE_BYTES = 64 * 1024;
/** SQLite's default checkpoint threshold, in pages. */
const DEFAULT_AUTOCHECKPOINT = 1000;

export function isDiskFull(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === 'SQLITE_FULL' || e?.code === 'ENOSPC' || (typeof e?.message === 'string' && /database or disk is full|ENOSPC/.test(e.message));
}

export class DiskGuard {
  /** Set while writes fail for lack of space. */
  full: { since: number; reason: string } | null = null;

  private autocheckpoint = DEFAULT_AUTOCHECKPOINT;
  private readonly pageSize: number;

  constructor(
    private readonly db: Database.Database,
    private readonly dbPath: string,
    private readonly log: (line: string) => void,
  ) {
    this.pageSize = dbPath === ':memory:' ? 4096 : Number(db.pragma('page_size', { simple: true }));
    this.tick();
  }

  /** The message a refused write gets. */
  get message(): string {
    return `the store's disk is full (${basename(this.dbPath)} in the store's data directory, ${this.freeBytes()} bytes free` +
      `${this.full ? `, since ${new Date(this.full.since).toISOString()}` : ''}): ` +
      'writes are refused until space is freed, reads still work; the store serves writes again by itself once there is room';
  }

  /** A write failed: when for lack of space, remember it and give back what the WAL holds. */
  failed(err: unknown): boolean {
    if (!isDiskFull(err)) return false;
    if (!this.full) {
      this.full = { since: Date.now(), reason: String((err as Error).message ?? err) };
      this.log(`disk full: ${this.dbPath} (${this.freeBytes()} bytes free on ${dirname(this.dbPath)}): ${this.full.reason}; writes answered 507 until space comes back`);
    }
    this.checkpoint();
    return true;
  }

  /** A write went through: there is room again. */
  succeeded(): void {
    if (!this.full) return;
    this.log(`disk has room again after ${((Date.now() - this.full.since) / 1000).toFixed(1)} s: writes accepted`);
    this.full = null;
  }

  /** Every watchdog tick: truncate a WAL that outgrows the room left; while full, see whether room came back. */
  tick(): void {
    if (this.dbPath === ':memory:') return;
    const free = this.freeBytes();
    const wal = this.walBytes();
    if (this.full || (wal > 0 && wal >= free)) this.checkpoint();
    if (this.full && this.freeBytes() > MIN_FREE_BYTES) this.succeeded();
    this.boundWal(this.freeBytes() + this.walBytes());
  }

  /** The WAL's checkpoint threshold and truncation size: a quarter of the room it and the free space have. */
  private boundWal(room: number): void {
    const pages = Math.max(16, Math.min(DEFAULT_AUTOCHECKPOINT, Math.floor(room / 4 / this.pageSize)));
    if (pages === this.autocheckpoint) return;
    this.autocheckpoint = pages;
    this.db.pragma(`wal_autocheckpoint = ${pages}`);
    this.db.pragma(`journal_size_limit = ${pages === DEFAULT_AUTOCHECKPOINT ? -1 : pages * this.pageSize}`);
  }

  health(): { status: 'ok' } | { status: 'disk_full'; detail: string; since: string } {
    return this.full ? { status: 'disk_full', detail: this.message, since: new Date(this.full.since).toISOString() } : { status: 'ok' };
  }

  private checkpoint(): void {
    if (this.dbPath === ':memory:' || this.db.inTransaction) return;
    try {
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      /* no room to copy the WAL into the database yet: tried again next tick */
    }
  }

  private walBytes(): number {
    try {
      return statSync(`${this.dbPath}-wal`).size;
    } catch {
      return 0;
    }
  }

  private freeBytes(): number {
    try {
      const s = statfsSync(dirname(this.dbPath));
      return s.bavail * s.bsize;
    } catch {
      return Infinity;
    }
  }
}
