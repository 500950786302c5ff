// The trainer's disk use, for its health route: bytes under its data directory (states, samplers, checkpoint
// records and the base models it was given) and the room left on that volume. The walk is asynchronous, one at a
// time, and its answer reused for a while, so asking often never stalls training.
import { statfsSync } from 'node:fs';
import { lstat, readdir, statfs } from 'node:fs/promises';
import path from 'node:path';

export interface TrainerDiskUse {
  data_bytes: number;
  volume_free_bytes: number;
}

const REUSE_MS = 10_000;

async function bytesUnder(p: string): Promise<number> {
  const st = await lstat(p).catch(() => null); // removed while we walked (an expired state being swept)
  if (!st) return 0;
  if (!st.isDirectory()) return st.size;
  let total = 0;
  for (const name of await readdir(p).catch(() => [] as string[])) total += await bytesUnder(path.join(p, name));
  return total;
}

/** Reads the disk use at most once per REUSE_MS; undefined while the directory does not exist yet. */
export function diskUseReader(dataDir: string, now: () => number = Date.now): () => Promise<TrainerDiskUse | undefined> {
  let last: { at: number; use: Promise<TrainerDiskUse | undefined> } | undefined;
  const read = async (): Promise<TrainerDiskUse | undefined> => {
    const fs = await statfs(dataDir).catch(() => null);
    if (!fs) return undefined;
    return { data_bytes: await bytesUnder(dataDir), volume_free_bytes: Number(fs.bavail) * Number(fs.bsize) };
  };
  return () => {
    if (!last || now() - last.at >= REUSE_MS) last = { at: now(), use: read() };
    return last.use;
  };
}

/** Room below which the trainer counts its disk as still full after a failed write. */
const STILL_FULL_BYTES = 1 << 20;

/** A write that failed for lack of space (node's ENOSPC, or EDQUOT: over a quota). */
export function isNoSpace(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === 'ENOSPC' || e?.code === 'EDQUOT' || (typeof e?.message === 'string' && /\bENOSPC\b|no space left on device/i.test(e.message));
}

/**
 * A full disk under the trainer's data directory. A save that meets it fails at once, leaving nothing partial
 * (checkpoints are written aside and renamed into place), with category "user": the Tinker SDK never retries a
 * failed future, and our client and activities retry only category "server", so a full disk is said where the
 * run stops, naming the file and the bytes free, instead of being retried unseen. Health says disk_full from
 * then until a write succeeds again or the volume has room.
 */
export class TrainerDisk {
  full: { since: number; reason: string } | null = null;

  constructor(readonly dataDir: string) {}

  /** Bytes free on the data directory's volume (Infinity when it cannot be read). */
  freeBytes(): number {
    try {
      const s = statfsSync(this.dataDir);
      return Number(s.bavail) * Number(s.bsize);
    } catch {
      return Infinity;
    }
  }

  /** The one line a write that failed for lack of space gets; null when `err` is something else. */
  noted(err: unknown): string | null {
    if (!isNoSpace(err)) return null;
    const file = (err as { path?: unknown }).path;
    const where = typeof file === 'string' ? path.relative(this.dataDir, file) : '';
    const reason = `the trainer's disk is full: writing ${where && !where.startsWith('..') ? where : 'a file'} under its data directory failed ` +
      `(${(err as { code?: string }).code ?? 'ENOSPC'}); ${this.freeBytes()} bytes free. Free space on the trainer's volume, then run the request again`;
    if (!this.full) this.full = { since: Date.now(), reason };
    return reason;
  }

  /** A write went through: there is room again. */
  wrote(): void {
    this.full = null;
  }

  health(): { status: 'ok' } | { status: 'disk_full'; detail: string; since: string; volume_free_bytes: number } {
    if (this.full && this.freeBytes() > STILL_FULL_BYTES) this.full = null;
    if (!this.full) return { status: 'ok' };
    return { status: 'disk_full', detail: this.full.reason, since: new Date(this.full.since).toISOString(), volume_free_bytes: this.freeBytes() };
  }
}
