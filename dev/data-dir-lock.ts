// One stack per data directory: Temporal's SQLite file, the store's database and the trainer's checkpoints under
// it must not be opened by two stacks at once (a second `npm start` with other ports would). The stack takes a
// lock on the directory (proper-lockfile: a lock directory whose mtime it refreshes, so a lock left by a killed
// stack goes stale after STALE_MS) and writes who holds it beside, for the refusal to name.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { lock } from 'proper-lockfile';
import { UsageError } from '../common/service-args';
import { pidAlive } from '../common/processes';

const STALE_MS = 15_000;

export interface Holder {
  pid: number;
  host: string;
  since: string;
  /** What holds it, e.g. "npm start (store :4747, Temporal 127.0.0.1:7233)". */
  what: string;
}

const lockPath = (dir: string) => path.join(dir, 'stack.lock');
const holderPath = (dir: string) => path.join(dir, 'stack.holder.json');

function readHolder(dir: string): Holder | null {
  try {
    return JSON.parse(readFileSync(holderPath(dir), 'utf8')) as Holder;
  } catch {
    return null;
  }
}

/** Locks `dir` for this process; resolves with the release. Throws a one-line UsageError when another holds it. */
export async function lockDataDir(dir: string, what: string): Promise<() => Promise<void>> {
  mkdirSync(dir, { recursive: true });
  let release: () => Promise<void>;
  try {
    release = await takeLock(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    const h = readHolder(dir);
    // Its holder on this machine is gone (killed): the lock is stale now, not in STALE_MS.
    if (h && h.host === os.hostname() && !pidAlive(h.pid)) {
      rmSync(lockPath(dir), { recursive: true, force: true });
      return lockDataDir(dir, what);
    }
    const who = h ? `${h.what}, pid ${h.pid} on ${h.host}, since ${h.since}` : 'another stack';
    throw new UsageError(
      `the data directory ${dir} is in use by ${who}: two stacks on one directory would open the same Temporal and store databases. ` +
        `Stop that one, or give this one another --data directory`,
    );
  }
  const holder: Holder = { pid: process.pid, host: os.hostname(), since: new Date().toISOString(), what };
  writeFileSync(holderPath(dir), JSON.stringify(holder));
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    rmSync(holderPath(dir), { force: true });
    await release().catch(() => undefined);
  };
}

function takeLock(dir: string): Promise<() => Promise<void>> {
  return lock(dir, {
    lockfilePath: lockPath(dir),
    realpath: false,
    stale: STALE_MS,
    update: STALE_MS / 3,
    // A lock we could not refresh (the machine stalled past STALE_MS): say so, keep going; never crash the stack.
    onCompromised: (err) => process.stderr.write(`[data-dir-lock] the lock on ${dir} was lost: ${err.message}\n`),
  });
}
