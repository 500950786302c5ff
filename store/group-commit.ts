// Group commit: SQLite commits with synchronous=NORMAL (WAL appended with write(), no fsync), and the server
// fsyncs the WAL file itself before acknowledging a write, one fsync for every write that committed meanwhile.
// A write acknowledged this way survives kill -9 (already true without the fsync: the OS holds the WAL pages)
// and also power loss, at the cost of one fsync per batch instead of one per transaction.
import { closeSync, fsync, openSync } from 'node:fs';

export class GroupCommit {
  private fd: number | null = null;
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  constructor(private readonly walPath: string) {}

  /** Resolves once everything committed before this call is on disk. */
  flush(): Promise<void> {
    if (this.queued) return this.queued; // the queued fsync starts after our commit: it covers us
    if (this.running) {
      this.queued = this.running.then(() => { this.queued = null; return this.start(); });
      return this.queued;
    }
    return this.start();
  }

  private start(): Promise<void> {
    this.fd ??= openSync(this.walPath, 'r');
    const fd = this.fd;
    const p = new Promise<void>((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())))
      .finally(() => { if (this.running === p) this.running = null; });
    this.running = p;
    return p;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
