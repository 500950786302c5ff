// Group commit: SQLite commits with synchronous=NORMAL (WAL appended with write(), no fsync), and the server
// fsyncs the WAL file itself before acknowledging a write, one fsync for every write that committed meanwhile.
// A write acknowledged this way survives kill -9 (already true without the fsync: the OS holds the WAL pages)
// and also power loss, at the cost of one fsync per batch instead of one per transaction.
import { closeSync, fsync, openSync } from 'node:fs';

export class GroupCommit {
  private fd: number | null = null;
  private running: Promise<void> | null = null;
  /** The highest commit number the running fsync covers (it started after that commit). */
  private runningCovers = -1;
  private queued: Promise<void> | null = null;
  /** The highest commit number a caller has named. */
  private latestCommit = -1;

  /** `sync` is node's fsync; tests pass one they complete by hand, to see when each flush resolves. */
  constructor(
    private readonly walPath: string,
    private readonly dbPath: string,
    private readonly sync: (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void = fsync,
  ) {}

  /**
   * Resolves once everything committed before this call is on disk. `commit` (the caller's commit number, growing)
   * lets callers whose commit an fsync already running covers join it instead of queueing another.
   */
  flush(commit?: number): Promise<void> {
    if (commit !== undefined) {
      this.latestCommit = Math.max(this.latestCommit, commit);
      if (this.running && this.runningCovers >= commit) return this.running;
    }
    if (this.queued) return this.queued; // the queued fsync starts after our commit: it covers us
    if (this.running) {
      const next = () => { this.queued = null; return this.start(); };
      this.queued = this.running.then(next, next); // runs after the current fsync whether it worked or not
      return this.queued;
    }
    return this.start();
  }

  private start(): Promise<void> {
    this.runningCovers = this.latestCommit;
    const fd = this.fd ?? this.open();
    const p = new Promise<void>((resolve, reject) => this.sync(fd, (err) => (err ? reject(err) : resolve())))
      .finally(() => {
        if (fd !== this.fd) closeSync(fd); // a fallback descriptor, not kept
        if (this.running === p) this.running = null;
      });
    this.running = p;
    return p;
  }

  /**
   * The WAL file exists once the database has been used in WAL mode; until it does, nothing can be in it and the
   * database file itself is synced (that descriptor is not kept, so the WAL is tried again next time).
   */
  private open(): number {
    try {
      this.fd = openSync(this.walPath, 'r');
      return this.fd;
    } catch {
      return openSync(this.dbPath, 'r');
    }
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
